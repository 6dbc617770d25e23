// SPDX-License-Identifier: MIT
/*
 * Unit tests for tools/pprof/convert.c: perf.data files written record by
 * record with the perfdata writer, converted, and the profile decoded back.
 * Covers time ordering, fork/exec maps, leaf vs. return-address lookups,
 * kernel frames (with a kallsyms file of our own, also relocated), JIT
 * maps, labels, filters, several events, unknown ids and pids, build-ids
 * and sample aggregation. User frames are symbolized against the pp_shares
 * fixture (env FIXTURES), mapped at a made-up address. DWARF-mode samples
 * carry a real stack of this test process (test_capture.h).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdata/reader.h"
#include "perfdata/writer.h"
#include "symbolize/buildid.h"
#include "tools/pprof/convert.h"
#include "tools/pprof/labels.h"
#include "tools/pprof/profile.h"
#include "tools/pprof/ustack.h"
#include "test_pprof_decode.h"
#include "test_capture.h"
#include "tests/unit/test_roundtrip.h"

#define BASE 0x555555554000ULL	/* where the fixture is "mapped" */
#define PID 4242
#define TID 4243
#define EV_CPU 100		/* sample ids */
#define EV_OFF 200

static const uint64_t sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				    PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
				    PERF_SAMPLE_CALLCHAIN;

static char tmpdir[64];
static char fixture[512];

/* ---- the fixture's layout ---- */

struct segment {
	uint64_t vaddr, offset, memsz;
};

static Elf *open_elf(const char *path, int *fd)
{
	Elf *e;

	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY);
	cr_assert_geq(*fd, 0, "cannot open %s (set FIXTURES)", path);
	e = elf_begin(*fd, ELF_C_READ, NULL);
	cr_assert_not_null(e);
	return e;
}

static struct segment exec_segment(const char *path)
{
	struct segment s = { 0 };
	size_t n;
	int fd;
	Elf *e = open_elf(path, &fd);

	cr_assert_eq(elf_getphdrnum(e, &n), 0);
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		gelf_getphdr(e, i, &ph);
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			s = (struct segment){ ph.p_vaddr, ph.p_offset, ph.p_memsz };
			break;
		}
	}
	elf_end(e);
	close(fd);
	cr_assert_neq(s.memsz, 0, "no executable segment in %s", path);
	return s;
}

/* st_value and st_size of a function symbol. */
static uint64_t elf_sym(const char *path, const char *name, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	uint64_t v = 0;
	int fd;
	Elf *e = open_elf(path, &fd);

	while (!v && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			gelf_getsym(d, i, &sym);
			if (!strcmp(elf_strptr(e, sh.sh_link, sym.st_name), name)) {
				v = sym.st_value;
				if (size)
					*size = sym.st_size;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	cr_assert_neq(v, 0, "no symbol %s in %s", name, path);
	return v;
}

static struct segment seg;

/* Runtime address of fixture function `name` + off. */
static uint64_t rt(const char *name, uint64_t off)
{
	return BASE + (elf_sym(fixture, name, NULL) - (seg.vaddr & ~0xfffULL)) + off;
}

static struct perfdata_mmap fixture_mmap(uint32_t pid, bool with_build_id)
{
	struct perfdata_mmap m = {
		.misc = PERF_RECORD_MISC_USER,
		.pid = pid, .tid = pid,
		.start = BASE,
		.len = ((seg.vaddr & 0xfff) + seg.memsz + 0xfff) & ~0xfffULL,
		.pgoff = seg.offset & ~0xfffULL,
		.prot = 5, .flags = 2,
		.filename = fixture,
	};

	if (with_build_id) {
		size_t n = 0;

		cr_assert_eq(buildid_read_file(fixture, m.build_id, &n), 0);
		m.build_id_size = n;
	}
	return m;
}

static void setup(void)
{
	const char *dir = getenv("FIXTURES");

	snprintf(fixture, sizeof(fixture), "%s/pp_shares", dir ? dir : "build/fixtures");
	seg = exec_segment(fixture);
	strcpy(tmpdir, "/tmp/test_pprof_convert.XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(convert, .init = setup, .fini = teardown);

/* ---- writing test files ---- */

struct file {
	char path[128];
	int fd;
	struct perfdata_writer *w;
};

static struct perf_event_attr attr(uint64_t type, uint64_t config)
{
	return (struct perf_event_attr){
		.type = type, .config = config, .sample_period = 1000000,
		.sample_type = sample_type, .sample_id_all = 1, .mmap = 1, .comm = 1,
		.mmap2 = 1,
	};
}

/* A new file with the cpu-clock event; more events may follow until start. */
static void file_begin(struct file *f)
{
	struct perfdata_writer_opts o = { 0 };
	struct perf_event_attr a = attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	uint64_t id = EV_CPU;

	snprintf(f->path, sizeof(f->path), "%s/perf.data", tmpdir);
	f->fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	cr_assert_geq(f->fd, 0);
	f->w = trip_writer_new(f->fd, &o, "cpu-clock", &a, &id, 1);
}

static void file_open(struct file *f, bool two_events)
{
	uint64_t id2 = EV_OFF;

	file_begin(f);
	if (two_events) {
		struct perf_event_attr b = attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT);

		cr_assert_eq(perfdata_writer_add_event(f->w, "offcpu-time", &b, &id2, 1), 0);
	}
	cr_assert_eq(perfdata_writer_start(f->w), 0);
}

static void file_close(struct file *f)
{
	trip_finish(f->w, f->fd);
	close(f->fd);
}

static struct perfdata_sample_id sid_at(uint32_t pid, uint32_t tid, uint64_t time)
{
	return (struct perfdata_sample_id){ .pid = pid, .tid = tid, .time = time, .id = EV_CPU };
}

static void comm(struct file *f, uint32_t pid, uint32_t tid, const char *name, bool exec,
		 uint64_t time)
{
	struct perfdata_comm c = { .pid = pid, .tid = tid, .exec = exec, .comm = name };
	struct perfdata_sample_id sid = sid_at(pid, tid, time);

	cr_assert_eq(perfdata_write_comm(f->w, &c, &sid), 0);
}

static void mmap2(struct file *f, const struct perfdata_mmap *m, uint64_t time)
{
	struct perfdata_sample_id sid = sid_at(m->pid, m->tid, time);

	cr_assert_eq(perfdata_write_mmap2(f->w, m, &sid), 0);
}

static void sample(struct file *f, uint64_t id, uint32_t pid, uint32_t tid, uint32_t cpu,
		   uint64_t time, uint64_t period, uint16_t misc, const uint64_t *chain, size_t n)
{
	struct perfdata_sample s = {
		.misc = misc, .id = id, .pid = pid, .tid = tid, .cpu = cpu, .time = time,
		.period = period, .nr_callchain = n, .callchain = chain,
	};

	for (size_t i = 0; i < n; i++)
		if (!perfdata_is_context_marker(chain[i])) {
			s.ip = chain[i];
			break;
		}
	cr_assert_eq(perfdata_write_sample(f->w, &s), 0);
}

/* A user stack pp_shares really has: leaf <- work <- main (return addresses inside). */
static void leaf_chain(uint64_t chain[4], const char *leaf, uint64_t off)
{
	chain[0] = PERF_CONTEXT_USER;
	chain[1] = rt(leaf, off);
	chain[2] = rt("work", 0x20);
	chain[3] = rt("main", 0x30);
}

static void shares_chain(uint64_t chain[4])
{
	leaf_chain(chain, "leaf_a", 8);
}

/* A file (file_open()) that begins with pp_shares's COMM at comm_time; its stack in chain. */
static void shares_open(struct file *f, bool two_events, uint64_t chain[4], uint64_t comm_time)
{
	file_open(f, two_events);
	shares_chain(chain);
	comm(f, PID, PID, "pp_shares", true, comm_time);
}

/* ---- converting ---- */

struct result {
	struct tp_profile *p[4];
	char name[4][64];
	char group[4][64];		/* "" = none */
	uint64_t samples[4];
	size_t n;
	struct pp_convert_stats st;
	char warning[512];
};

static void convert(const char *path, struct pp_convert_opts *o, struct result *res)
{
	struct perfdata_reader *r;
	struct pp_convert *c;
	int fd = open(path, O_RDONLY);

	memset(res, 0, sizeof(*res));
	cr_assert_geq(fd, 0);
	r = trip_reader(fd, path);
	o->input_name = path;
	cr_assert_eq(pp_convert_new(o, r, &c), 0);
	cr_assert_eq(pp_convert_read(c), 0, "%s", pp_convert_error(c));
	res->n = pp_convert_nr_profiles(c);
	cr_assert_leq(res->n, 4);
	for (size_t i = 0; i < res->n; i++) {
		struct pprof_builder *b;
		struct tpb_buf m = { 0 };

		cr_assert_eq(pp_convert_build(c, i, &b), 0, "%s", pp_convert_error(c));
		cr_assert_eq(pprof_serialize(b, tpb_sink, &m), 0);
		res->p[i] = tp_decode(m.data, m.len);
		snprintf(res->name[i], sizeof(res->name[i]), "%s", pp_convert_profile_name(c, i));
		snprintf(res->group[i], sizeof(res->group[i]), "%s",
			 pp_convert_profile_group(c, i) ? pp_convert_profile_group(c, i) : "");
		res->samples[i] = pp_convert_profile_samples(c, i);
		free(m.data);
		pprof_builder_free(b);
	}
	res->st = *pp_convert_stats(c);
	if (pp_convert_warning(c))
		snprintf(res->warning, sizeof(res->warning), "%s", pp_convert_warning(c));
	pp_convert_free(c);
	perfdata_reader_free(r);
	close(fd);
}

static void free_result(struct result *res)
{
	for (size_t i = 0; i < res->n; i++)
		tp_free(res->p[i]);
}

/* Name of the outermost Line of location `id` (a function or the 0x fallback). */
static const char *name_of(const struct tp_profile *p, uint64_t id)
{
	const char *n = tp_loc_name(p, id);

	return n ? n : "(no lines)";
}

static int64_t total(const struct tp_profile *p, size_t value)
{
	int64_t t = 0;

	for (size_t i = 0; i < p->nr_samples; i++)
		t += p->samples[i].values[value];
	return t;
}

/* ---- tests ---- */

Test(convert, symbolized_stack_types_and_mapping)
{
	struct file f;
	struct pp_convert_opts o = { 0 };
	struct result res;
	uint64_t chain[4];

	file_open(&f, false);
	comm(&f, PID, PID, "pp_shares", true, 1000);
	struct perfdata_mmap m = fixture_mmap(PID, true);

	mmap2(&f, &m, 1000);
	shares_chain(chain);
	for (int i = 0; i < 3; i++)
		sample(&f, EV_CPU, PID, PID, 0, 2000 + i * 1000, 250000, PERF_RECORD_MISC_USER,
		       chain, 4);
	perfdata_write_finished_round(f.w);
	file_close(&f);

	convert(f.path, &o, &res);
	cr_assert_eq(res.n, 1);
	cr_assert_str_eq(res.name[0], "cpu-clock");
	const struct tp_profile *p = res.p[0];

	cr_assert_str_eq(p->types[0][0], "samples");
	cr_assert_str_eq(p->types[1][0], "cpu");
	cr_assert_str_eq(p->types[1][1], "nanoseconds");
	cr_assert_str_eq(p->period_type[0], "cpu");
	cr_assert_eq(p->period, 1000000);
	cr_assert_eq(p->duration_nanos, 2000, "first to last sample");
	cr_assert_eq(p->nr_samples, 1, "identical samples are aggregated");
	cr_assert_eq(p->samples[0].values[0], 3);
	cr_assert_eq(p->samples[0].values[1], 750000, "weighted by each sample's period");
	cr_assert_eq(p->samples[0].nr_locs, 3, "the context marker is not a frame");
	cr_assert_str_eq(name_of(p, p->samples[0].locs[0]), "leaf_a");
	cr_assert_str_eq(name_of(p, p->samples[0].locs[1]), "work");
	cr_assert_str_eq(name_of(p, p->samples[0].locs[2]), "main");
	const struct tp_location *l = tp_location(p, p->samples[0].locs[1]);

	cr_assert_eq(l->address, rt("work", 0x20), "Location.address is the runtime address");
	const struct tp_mapping *mp = tp_mapping(p, l->mapping_id);
	char hex[41];

	cr_assert_eq(mp->id, 1, "the executable is mapping 1");
	cr_assert_str_eq(mp->filename, fixture);
	cr_assert_eq(mp->start, BASE);
	cr_assert_eq(mp->limit, BASE + m.len);
	cr_assert_eq(mp->offset, m.pgoff);
	cr_assert_str_eq(mp->build_id, buildid_to_hex(m.build_id, m.build_id_size, hex));
	cr_assert(mp->has_functions && mp->has_filenames && mp->has_line_numbers);
	cr_assert(strstr(tp_function(p, l->lines[0].function_id)->filename, "pp_shares.c"),
		  "file names from DWARF");
	cr_assert_eq(res.st.unknown_pid, 0);
	free_result(&res);
}

/* A return address right at the start of a function belongs to the call
 * before it: looked up at address - 1. As a leaf it is that function. */
Test(convert, leaf_and_return_address_lookups)
{
	struct file f;
	struct pp_convert_opts o = { 0 };
	struct result res;
	uint64_t a_size, b = rt("leaf_b", 0);
	uint64_t leaf[] = { PERF_CONTEXT_USER, b, rt("work", 0x20) };
	uint64_t caller[] = { PERF_CONTEXT_USER, rt("leaf_c", 4), b };

	elf_sym(fixture, "leaf_a", &a_size);
	cr_assert_eq(rt("leaf_a", a_size), b, "the fixture must have leaf_b right after leaf_a");
	file_open(&f, false);
	comm(&f, PID, PID, "pp_shares", true, 10);
	struct perfdata_mmap m = fixture_mmap(PID, false);

	mmap2(&f, &m, 10);
	sample(&f, EV_CPU, PID, PID, 0, 20, 1, PERF_RECORD_MISC_USER, leaf, 3);
	sample(&f, EV_CPU, PID, PID, 0, 30, 1, PERF_RECORD_MISC_USER, caller, 3);
	file_close(&f);

	convert(f.path, &o, &res);
	const struct tp_profile *p = res.p[0];

	cr_assert_eq(p->nr_samples, 2);
	cr_assert_str_eq(name_of(p, p->samples[0].locs[0]), "leaf_b");
	cr_assert_str_eq(name_of(p, p->samples[1].locs[1]), "leaf_a");
	cr_assert_eq(tp_location(p, p->samples[0].locs[0])->address, b);
	cr_assert_eq(tp_location(p, p->samples[1].locs[1])->address, b,
		     "both report the real address");
	free_result(&res);
}

/* An MMAP that the file holds after a sample but stamped before it: perf's
 * round rule puts it first, so the sample's frames are mapped. */
Test(convert, records_replayed_in_time_order)
{
	struct file f;
	struct pp_convert_opts o = { .no_symbolize = true };
	struct result res;
	uint64_t chain[4];

	shares_open(&f, false, chain, 100);
	perfdata_write_finished_round(f.w);
	sample(&f, EV_CPU, PID, PID, 1, 300, 1, PERF_RECORD_MISC_USER, chain, 4);
	struct perfdata_mmap m = fixture_mmap(PID, false);

	mmap2(&f, &m, 200);	/* written later, happened earlier (another CPU's buffer) */
	perfdata_write_finished_round(f.w);
	perfdata_write_finished_round(f.w);
	file_close(&f);

	convert(f.path, &o, &res);
	const struct tp_profile *p = res.p[0];

	for (size_t i = 0; i < p->samples[0].nr_locs; i++) {
		const struct tp_location *l = tp_location(p, p->samples[0].locs[i]);

		cr_assert_neq(l->mapping_id, 0, "frame %zu is not mapped", i);
		cr_assert_eq(l->nr_lines, 0, "--no-symbolize: no lines");
	}
	cr_assert(!tp_mapping(p, 1)->has_functions, "--no-symbolize: honest flags");
	free_result(&res);
}

Test(convert, fork_inherits_maps_exec_clears_them)
{
	struct file f;
	struct pp_convert_opts o = { .no_symbolize = true };
	struct result res;
	uint64_t chain[4];
	struct perfdata_task fork = { .pid = 300, .ppid = PID, .tid = 300, .ptid = PID, .time = 200 };
	struct perfdata_sample_id sid = sid_at(300, 300, 200);

	file_open(&f, false);
	shares_chain(chain);
	comm(&f, PID, PID, "parent", false, 100);
	struct perfdata_mmap m = fixture_mmap(PID, false);

	mmap2(&f, &m, 100);
	cr_assert_eq(perfdata_write_fork(f.w, &fork, &sid), 0);
	sample(&f, EV_CPU, 300, 300, 0, 300, 1, PERF_RECORD_MISC_USER, chain, 4);
	comm(&f, 300, 300, "child", true, 400);
	sample(&f, EV_CPU, 300, 300, 0, 500, 1, PERF_RECORD_MISC_USER, chain, 4);
	file_close(&f);

	struct pp_label_spec labels[] = { { PP_LABEL_COMM, NULL } };

	o.labels = labels;
	o.nr_labels = 1;
	convert(f.path, &o, &res);
	cr_assert_eq(res.st.unknown_pid, 0, "FORK and COMM make the child known");
	const struct tp_profile *p = res.p[0];

	cr_assert_eq(p->nr_samples, 2);
	cr_assert_str_eq(p->samples[0].labels[0].str, "parent", "a child starts with its parent's comm");
	cr_assert_neq(tp_location(p, p->samples[0].locs[0])->mapping_id, 0, "the parent's maps");
	cr_assert_str_eq(p->samples[1].labels[0].str, "child");
	const struct tp_location *l = tp_location(p, p->samples[1].locs[0]);

	cr_assert_eq(l->mapping_id, 0, "exec dropped the old maps");
	cr_assert_eq(l->address, chain[1], "the frame is kept, unmapped");
	free_result(&res);
}

Test(convert, unknown_pid_keeps_frames_as_addresses)
{
	struct file f;
	struct pp_convert_opts o = { 0 };
	struct result res;
	uint64_t chain[] = { PERF_CONTEXT_USER, 0x401234, 0x405678 };
	char want[32];

	file_open(&f, false);
	sample(&f, EV_CPU, 777, 777, 0, 100, 1, PERF_RECORD_MISC_USER, chain, 3);
	file_close(&f);

	convert(f.path, &o, &res);
	const struct tp_profile *p = res.p[0];

	cr_assert_eq(res.st.unknown_pid, 1);
	cr_assert_eq(p->samples[0].nr_locs, 2, "never drop a frame");
	snprintf(want, sizeof(want), "0x%x", 0x401234);
	cr_assert_str_eq(name_of(p, p->samples[0].locs[0]), want);
	cr_assert_eq(tp_location(p, p->samples[0].locs[1])->address, 0x405678);
	free_result(&res);
}

static void write_kallsyms(const char *path)
{
	FILE *k = fopen(path, "w");

	cr_assert_not_null(k);
	fputs("ffffffff81000000 T _text\n"
	      "ffffffff81001000 T fake_syscall_entry\n"
	      "ffffffff81002000 T fake_ksys_write\n"
	      "ffffffff81003000 T _etext\n", k);
	fclose(k);
}

static void write_kernel_file(struct file *f, uint64_t text)
{
	struct perfdata_mmap km = {
		.misc = PERF_RECORD_MISC_KERNEL, .pid = UINT32_MAX, .tid = 0,
		.start = text, .len = 0x3000, .pgoff = text,
		.filename = "[kernel.kallsyms]_text",
	};
	struct perfdata_sample_id sid = sid_at(UINT32_MAX, 0, 0);
	uint64_t delta = text - 0xffffffff81000000ULL;
	uint64_t chain[] = { PERF_CONTEXT_KERNEL, 0xffffffff81002010ULL + delta,
			     0xffffffff81001020ULL + delta, PERF_CONTEXT_USER, 0 };

	file_open(f, false);
	cr_assert_eq(perfdata_write_mmap(f->w, &km, &sid), 0);
	comm(f, PID, PID, "pp_shares", true, 10);
	struct perfdata_mmap m = fixture_mmap(PID, false);

	mmap2(f, &m, 10);
	chain[4] = rt("main", 0x10);
	sample(f, EV_CPU, PID, PID, 0, 20, 1, PERF_RECORD_MISC_KERNEL, chain, 5);
	file_close(f);
}

/* The fake kallsyms (write_kallsyms()) in tmpdir, named in ks, for o to symbolize with. */
static void use_fake_kallsyms(struct pp_convert_opts *o, char *ks, size_t size)
{
	snprintf(ks, size, "%s/kallsyms", tmpdir);
	write_kallsyms(ks);
	o->sym.kallsyms = ks;
}

/* write_kernel_file()'s samples, _text at text, converted with the fake kallsyms into res. */
static void convert_kernel_file(uint64_t text, struct result *res)
{
	struct file f;
	struct pp_convert_opts o = { 0 };
	char ks[128];

	use_fake_kallsyms(&o, ks, sizeof(ks));
	write_kernel_file(&f, text);
	convert(f.path, &o, res);
}

Test(convert, kernel_frames_from_kallsyms)
{
	struct result res;

	convert_kernel_file(0xffffffff81000000ULL, &res);
	const struct tp_profile *p = res.p[0];
	const struct tp_sample *s = &p->samples[0];

	cr_assert_eq(s->nr_locs, 3);
	cr_assert_str_eq(name_of(p, s->locs[0]), "fake_ksys_write");
	cr_assert_str_eq(name_of(p, s->locs[1]), "fake_syscall_entry");
	cr_assert_str_eq(name_of(p, s->locs[2]), "main", "user frames after the kernel's");
	const struct tp_mapping *km = tp_mapping(p, tp_location(p, s->locs[0])->mapping_id);

	cr_assert_str_eq(km->filename, "[kernel.kallsyms]");
	cr_assert_eq(km->start, 0xffffffff81000000ULL);
	cr_assert(km->has_functions);
	cr_assert_eq(tp_mapping(p, 1)->filename[0], '/', "the executable, not the kernel, is mapping 1");
	free_result(&res);
}

/* Recorded on another boot: _text moved (KASLR). Addresses are shifted by
 * the difference before the kallsyms lookup, and reported unshifted. */
Test(convert, kernel_relocated_by_text)
{
	struct result res;

	convert_kernel_file(0xffffffff9a000000ULL, &res);
	const struct tp_profile *p = res.p[0];

	cr_assert_str_eq(name_of(p, p->samples[0].locs[0]), "fake_ksys_write");
	cr_assert_eq(tp_location(p, p->samples[0].locs[0])->address, 0xffffffff9a002010ULL);
	free_result(&res);
}

/*
 * Symbol tables shared by several conversions (the agent's windows): each
 * conversion names its frames with them, user and kernel, and finds the
 * kernel's reference symbol in the table they loaded (relocated here).
 */
Test(convert, shared_symbols_name_every_conversion)
{
	struct symbolizer_opts so = { 0 };
	size_t sizes[3];
	struct symbolizer *sym;
	char ks[128];

	snprintf(ks, sizeof(ks), "%s/kallsyms", tmpdir);
	write_kallsyms(ks);
	so.kallsyms = ks;
	cr_assert_eq(symbolizer_new(&so, &sym), 0);
	sizes[0] = symbolizer_size(sym);
	for (int round = 0; round < 2; round++) {
		struct pp_convert_opts o = { .shared_sym = sym };
		struct result res;
		struct file f;

		write_kernel_file(&f, 0xffffffff9a000000ULL);
		convert(f.path, &o, &res);
		const struct tp_profile *p = res.p[0];
		const struct tp_sample *s = &p->samples[0];

		cr_assert_eq(s->nr_locs, 3);
		cr_assert_str_eq(name_of(p, s->locs[0]), "fake_ksys_write", "round %d", round);
		cr_assert_str_eq(name_of(p, s->locs[1]), "fake_syscall_entry", "round %d", round);
		cr_assert_str_eq(name_of(p, s->locs[2]), "main", "round %d", round);
		cr_assert_eq(tp_location(p, s->locs[0])->address, 0xffffffff9a002010ULL);
		free_result(&res);
		sizes[round + 1] = symbolizer_size(sym);
	}
	/* What they hold grows with the first conversion's files (the
	 * executable, mapped whole), not again with the second's same ones. */
	cr_assert_gt(sizes[1], sizes[0] + 4096, "%zu after, %zu before", sizes[1], sizes[0]);
	cr_assert_eq(sizes[2], sizes[1], "%zu: loaded again", sizes[2]);
	symbolizer_free(sym);
}

/* No kernel map at all; callchains that are empty or markers only: the ip
 * alone (where perf report puts the time), under a catch-all kernel mapping. */
Test(convert, ip_only_samples_and_kernel_without_map)
{
	struct file f;
	struct pp_convert_opts o = { 0 };
	struct result res;
	char ks[128];
	struct perfdata_sample s = {
		.misc = PERF_RECORD_MISC_KERNEL, .id = EV_CPU, .pid = PID, .tid = PID, .time = 30,
		.period = 1, .ip = 0xffffffff81001008ULL,
	};

	use_fake_kallsyms(&o, ks, sizeof(ks));
	file_open(&f, false);
	comm(&f, PID, PID, "pp_shares", true, 10);
	sample(&f, EV_CPU, PID, PID, 0, 20, 1, PERF_RECORD_MISC_KERNEL,
	       (uint64_t[]){ 0xffffffff81002004ULL }, 1);
	cr_assert_eq(perfdata_write_sample(f.w, &s), 0);	/* callchain {nr = 0} */
	s.time = 40;
	s.nr_callchain = 2;
	s.callchain = (uint64_t[]){ PERF_CONTEXT_KERNEL, PERF_CONTEXT_USER };
	cr_assert_eq(perfdata_write_sample(f.w, &s), 0);
	file_close(&f);

	convert(f.path, &o, &res);
	const struct tp_profile *p = res.p[0];

	cr_assert_eq(p->nr_samples, 2);
	cr_assert_str_eq(name_of(p, p->samples[0].locs[0]), "fake_ksys_write",
			 "no marker: the sample's cpumode decides");
	cr_assert_eq(p->samples[1].nr_locs, 1);
	cr_assert_eq(p->samples[1].values[0], 2, "both ip-only samples are one stack");
	cr_assert_str_eq(name_of(p, p->samples[1].locs[0]), "fake_syscall_entry");
	cr_assert_str_eq(tp_mapping(p, tp_location(p, p->samples[0].locs[0])->mapping_id)->filename,
			 "[kernel.kallsyms]");
	free_result(&res);
}

Test(convert, jit_frames_from_perf_map)
{
	struct file f;
	struct pp_convert_opts o = { 0 };
	struct result res;
	char map[128];
	FILE *jm;
	struct perfdata_mmap anon = {
		.misc = PERF_RECORD_MISC_USER, .pid = PID, .tid = PID,
		.start = 0x7f0000000000ULL, .len = 0x10000, .prot = 7, .flags = 2,
		.filename = "//anon",
	};

	snprintf(map, sizeof(map), "%s/perf-%d.map", tmpdir, PID);
	jm = fopen(map, "w");
	cr_assert_not_null(jm);
	fputs("7f0000001000 100 jitted_function\n7f0000002000 80 LazyCompile:*other\n", jm);
	fclose(jm);
	o.sym.jit_dir = tmpdir;
	file_open(&f, false);
	comm(&f, PID, PID, "node", true, 10);
	mmap2(&f, &anon, 10);
	sample(&f, EV_CPU, PID, PID, 0, 20, 1, PERF_RECORD_MISC_USER,
	       (uint64_t[]){ PERF_CONTEXT_USER, 0x7f0000001010ULL, 0x7f0000002010ULL }, 3);
	file_close(&f);

	convert(f.path, &o, &res);
	const struct tp_profile *p = res.p[0];

	cr_assert_str_eq(name_of(p, p->samples[0].locs[0]), "jitted_function");
	cr_assert_str_eq(name_of(p, p->samples[0].locs[1]), "LazyCompile:*other");
	cr_assert_str_eq(tp_mapping(p, tp_location(p, p->samples[0].locs[0])->mapping_id)->filename,
			 "[anon]", "anonymous memory gets a name pprof does not look for on disk");
	free_result(&res);
}

Test(convert, labels_and_filters)
{
	struct file f;
	struct result res;
	uint64_t chain[4];
	struct pp_label_spec labels[] = {
		{ PP_LABEL_PID, NULL }, { PP_LABEL_TID, NULL }, { PP_LABEL_COMM, NULL },
		{ PP_LABEL_CPU, NULL },
	};

	shares_open(&f, false, chain, 10);
	comm(&f, PID, TID, "worker", false, 10);
	comm(&f, 900, 900, "other", true, 10);
	struct perfdata_mmap m = fixture_mmap(PID, false);

	mmap2(&f, &m, 10);
	for (int i = 0; i < 4; i++)
		sample(&f, EV_CPU, PID, i < 3 ? PID : TID, 0, 20 + i, 1, PERF_RECORD_MISC_USER, chain, 4);
	sample(&f, EV_CPU, PID, PID, 1, 30, 1, PERF_RECORD_MISC_USER, chain, 4);
	sample(&f, EV_CPU, 900, 900, 1, 40, 1, PERF_RECORD_MISC_USER, chain, 4);
	file_close(&f);

	struct pp_convert_opts o = { .labels = labels, .nr_labels = 4, .no_symbolize = true };

	convert(f.path, &o, &res);
	const struct tp_profile *p = res.p[0];

	cr_assert_eq(p->nr_samples, 4, "(pid,tid,comm,cpu) sets: main/0 x3, worker, cpu 1, other");
	cr_assert_eq(p->samples[0].values[0], 3);
	cr_assert_str_eq(p->samples[0].labels[0].key, "pid");
	cr_assert_eq(p->samples[0].labels[0].num, PID);
	cr_assert_str_eq(p->samples[0].labels[0].unit, "pid", "units keep 0 values alive in pprof");
	cr_assert_eq(p->samples[1].labels[1].num, TID);
	cr_assert_str_eq(p->samples[1].labels[2].str, "worker", "a thread's own comm");
	cr_assert_str_eq(p->samples[0].labels[3].key, "cpu");
	cr_assert_eq(p->samples[0].labels[3].num, 0);
	cr_assert_eq(p->samples[2].labels[3].num, 1);
	cr_assert_str_eq(p->samples[3].labels[2].str, "other");
	free_result(&res);

	uint32_t pid = PID, tid = TID;
	const char *comms[] = { "other" };
	struct pp_convert_opts byp = { .pids = &pid, .nr_pids = 1, .no_symbolize = true };
	struct pp_convert_opts byt = { .tids = &tid, .nr_pids = 0, .nr_tids = 1, .no_symbolize = true };
	struct pp_convert_opts byc = { .comms = comms, .nr_comms = 1, .no_symbolize = true };

	convert(f.path, &byp, &res);
	cr_assert_eq(total(res.p[0], 0), 5);
	cr_assert_eq(res.st.filtered, 1);
	free_result(&res);
	convert(f.path, &byt, &res);
	cr_assert_eq(total(res.p[0], 0), 1);
	free_result(&res);
	convert(f.path, &byc, &res);
	cr_assert_eq(total(res.p[0], 0), 1);
	cr_assert_eq(res.st.filtered, 5);
	free_result(&res);
}

/* Patch the IDENTIFIER of the n-th SAMPLE in a finished file. */
static void patch_sample_id(const char *path, int nth, uint64_t id)
{
	int fd = open(path, O_RDWR);
	uint64_t off, size, end;
	int seen = 0;

	cr_assert_geq(fd, 0);
	cr_assert_eq(pread(fd, &off, 8, PERFDATA_HDR_OFF_DATA_OFFSET), 8);
	cr_assert_eq(pread(fd, &size, 8, PERFDATA_HDR_OFF_DATA_SIZE), 8);
	for (end = off + size; off < end;) {
		struct perf_event_header h;

		cr_assert_eq(pread(fd, &h, sizeof(h), off), (ssize_t)sizeof(h));
		cr_assert_geq(h.size, sizeof(h));
		if (h.type == PERF_RECORD_SAMPLE && seen++ == nth) {
			cr_assert_eq(pwrite(fd, &id, 8, off + sizeof(h)), 8);
			break;
		}
		off += h.size;
	}
	cr_assert_lt(off, end, "no sample %d", nth);
	close(fd);
}

Test(convert, several_events_and_unknown_ids)
{
	struct file f;
	struct pp_convert_opts o = { .no_symbolize = true };
	struct result res;
	uint64_t chain[4];

	shares_open(&f, true, chain, 10);
	for (int i = 0; i < 3; i++)
		sample(&f, EV_CPU, PID, PID, 0, 20 + i, 1000, PERF_RECORD_MISC_USER, chain, 4);
	sample(&f, EV_OFF, PID, PID, 0, 30, 5000000, PERF_RECORD_MISC_USER, chain, 4);
	sample(&f, EV_OFF, PID, PID, 0, 31, 7000000, PERF_RECORD_MISC_USER, chain, 4);
	file_close(&f);
	patch_sample_id(f.path, 2, 12345);	/* the third cpu-clock sample */

	convert(f.path, &o, &res);
	cr_assert_eq(res.n, 2);
	cr_assert_str_eq(res.name[0], "cpu-clock");
	cr_assert_str_eq(res.name[1], "offcpu-time");
	cr_assert_eq(res.st.unknown_event, 1, "counted, not fatal");
	cr_assert_eq(total(res.p[0], 0), 2);
	cr_assert_eq(total(res.p[0], 1), 2000);
	cr_assert_str_eq(res.p[1]->types[1][0], "off_cpu");
	cr_assert_str_eq(res.p[1]->types[1][1], "nanoseconds");
	cr_assert_eq(total(res.p[1], 0), 2);
	cr_assert_eq(total(res.p[1], 1), 12000000);
	free_result(&res);

	struct pp_convert_opts one = { .event = "offcpu-time", .no_symbolize = true };

	convert(f.path, &one, &res);
	cr_assert_eq(res.n, 1);
	cr_assert_str_eq(res.name[0], "offcpu-time");
	free_result(&res);
	struct pp_convert_opts none = { .event = "cycles", .no_symbolize = true };

	convert(f.path, &none, &res);
	cr_assert_eq(res.n, 0, "no such event: nothing to build");
	free_result(&res);
}

/* ---- profiles split by group (bpfrec agent: one per service) ---- */

struct groups_seen {
	uint32_t pids[8];
	char comms[8][32];
	size_t n;
};

/* Groups by comm, "g-COMM"; drops pid 777 (NULL). Remembers each call. */
static const char *group_of(void *ctx, uint32_t pid, const char *comm)
{
	static char name[64];
	struct groups_seen *g = ctx;

	cr_assert_lt(g->n, 8);
	g->pids[g->n] = pid;
	snprintf(g->comms[g->n++], sizeof(g->comms[0]), "%s", comm);
	if (pid == 777)
		return NULL;
	snprintf(name, sizeof(name), "g-%s", comm);
	return name;	/* copied by the converter: reused by the next call */
}

static int64_t label_num(const struct tp_sample *s, const char *key)
{
	for (size_t i = 0; i < s->nr_labels; i++)
		if (!strcmp(s->labels[i].key, key))
			return s->labels[i].num;
	cr_assert_fail("no label %s", key);
	return -1;
}

static const char *label_str(const struct tp_sample *s, const char *key);

/* The sample of p with want's pid, comm and stack (by address: not symbolized), of profile wp. */
static size_t find_sample(const struct tp_profile *p, const struct tp_profile *wp,
			  const struct tp_sample *want)
{
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct tp_sample *s = &p->samples[i];
		bool same = s->nr_locs == want->nr_locs &&
			    label_num(s, "pid") == label_num(want, "pid") &&
			    !strcmp(label_str(s, "comm"), label_str(want, "comm"));

		for (size_t l = 0; same && l < s->nr_locs; l++)
			same = tp_location(p, s->locs[l])->address ==
			       tp_location(wp, want->locs[l])->address;
		if (same)
			return i;
	}
	return SIZE_MAX;
}

Test(convert, profiles_split_by_group)
{
	struct file f;
	struct result all, grouped;
	struct groups_seen seen = { 0 };
	uint64_t a[4], b[4];
	/* By pid and comm: the whole's samples then split as the groups do. */
	struct pp_label_spec labels[] = { { PP_LABEL_PID, NULL }, { PP_LABEL_COMM, NULL } };

	/* pp_shares (PID, two threads) and other (900) run the same binary;
	 * 777 is dropped by the callback. */
	file_open(&f, true);
	shares_chain(a);
	leaf_chain(b, "leaf_b", 4);
	comm(&f, PID, PID, "pp_shares", true, 10);
	comm(&f, PID, TID, "worker", false, 10);
	comm(&f, 900, 900, "other", true, 10);
	comm(&f, 777, 777, "dropped", true, 10);
	struct perfdata_mmap m1 = fixture_mmap(PID, false), m2 = fixture_mmap(900, false),
			     m3 = fixture_mmap(777, false);

	mmap2(&f, &m1, 10);
	mmap2(&f, &m2, 10);
	mmap2(&f, &m3, 10);
	/* The first sample is the worker thread's: its group is still its process's. */
	sample(&f, EV_CPU, PID, TID, 0, 20, 1000, PERF_RECORD_MISC_USER, a, 4);
	for (int i = 0; i < 3; i++)
		sample(&f, EV_CPU, PID, PID, 0, 21 + i, 1000, PERF_RECORD_MISC_USER, a, 4);
	sample(&f, EV_CPU, PID, PID, 0, 25, 1000, PERF_RECORD_MISC_USER, b, 4);
	for (int i = 0; i < 2; i++)
		sample(&f, EV_CPU, 900, 900, 1, 30 + i, 1000, PERF_RECORD_MISC_USER, a, 4);
	sample(&f, EV_CPU, 900, 900, 1, 32, 1000, PERF_RECORD_MISC_USER, b, 4);
	sample(&f, EV_CPU, 777, 777, 1, 33, 1000, PERF_RECORD_MISC_USER, b, 4);
	sample(&f, EV_OFF, 900, 900, 1, 40, 5000000, PERF_RECORD_MISC_USER, b, 4);
	/* A rename (or an exec) makes it another program: asked again. */
	comm(&f, 900, 900, "renamed", false, 50);
	sample(&f, EV_CPU, 900, 900, 1, 60, 1000, PERF_RECORD_MISC_USER, a, 4);
	sample(&f, EV_CPU, 900, 900, 1, 61, 1000, PERF_RECORD_MISC_USER, a, 4);
	file_close(&f);

	struct pp_convert_opts o = { .labels = labels, .nr_labels = 2, .no_symbolize = true };
	struct pp_convert_opts og = o;

	og.group = group_of;
	og.group_ctx = &seen;
	convert(f.path, &o, &all);
	convert(f.path, &og, &grouped);

	cr_assert_eq(all.n, 2);
	cr_assert_str_eq(all.group[0], "", "no callback, no group");
	cr_assert_eq(seen.n, 4, "asked once per pid and comm, not per sample");
	cr_assert_eq(seen.pids[0], PID);
	cr_assert_str_eq(seen.comms[0], "pp_shares", "the process's comm, not the thread's");
	cr_assert_eq(seen.pids[1], 900);
	cr_assert_str_eq(seen.comms[1], "other");
	cr_assert_eq(seen.pids[2], 777);
	cr_assert_eq(seen.pids[3], 900);
	cr_assert_str_eq(seen.comms[3], "renamed");
	cr_assert_eq(grouped.st.filtered, 1, "the dropped pid's sample");

	/* cpu-clock for each group in order of first sample, then offcpu-time
	 * for the one group that has some. */
	cr_assert_eq(grouped.n, 4);
	cr_assert_str_eq(grouped.name[0], "cpu-clock");
	cr_assert_str_eq(grouped.group[0], "g-pp_shares");
	cr_assert_str_eq(grouped.name[1], "cpu-clock");
	cr_assert_str_eq(grouped.group[1], "g-other");
	cr_assert_str_eq(grouped.name[2], "cpu-clock");
	cr_assert_str_eq(grouped.group[2], "g-renamed");
	cr_assert_str_eq(grouped.name[3], "offcpu-time");
	cr_assert_str_eq(grouped.group[3], "g-other");
	cr_assert_eq(total(grouped.p[0], 0), 5);
	cr_assert_eq(total(grouped.p[1], 0), 3);
	cr_assert_eq(total(grouped.p[2], 0), 2);
	cr_assert_eq(total(grouped.p[3], 1), 5000000);
	cr_assert_eq(total(grouped.p[0], 0) + total(grouped.p[1], 0) + total(grouped.p[2], 0) + 1,
		     total(all.p[0], 0), "the groups and the dropped sample make the whole");
	cr_assert_eq(total(grouped.p[3], 1), total(all.p[1], 1));
	for (size_t i = 0; i < grouped.n; i++)
		cr_assert_eq(grouped.samples[i], (uint64_t)total(grouped.p[i], 0));

	/* Each group's profile has its pid's samples only, as the whole has them. */
	const int64_t pids[] = { PID, 900, 900, 900 };

	for (size_t i = 0; i < grouped.n; i++) {
		const struct tp_profile *g = grouped.p[i], *w = all.p[i < 3 ? 0 : 1];

		cr_assert_gt(g->nr_samples, 0);
		for (size_t s = 0; s < g->nr_samples; s++) {
			size_t at = find_sample(w, g, &g->samples[s]);

			cr_assert_eq(label_num(&g->samples[s], "pid"), pids[i], "profile %zu", i);
			cr_assert_neq(at, SIZE_MAX, "a stack the whole does not have");
			cr_assert_eq(g->samples[s].values[0], w->samples[at].values[0]);
			cr_assert_eq(g->samples[s].values[1], w->samples[at].values[1]);
		}
		cr_assert(strstr(g->comments[0], grouped.group[i]), "%s", g->comments[0]);
	}
	free_result(&all);
	free_result(&grouped);
}

/* ---- heap profiles: record --alloc's alloc and inuse events ---- */

#define EV_ALLOC 300
#define EV_INUSE 400
#define ALLOC_RATE 524288

/*
 * cpu-clock, then the BPF_OUTPUT events `names` (ids `ids`) as
 * perfdata/events.h describes them, sampled every `period`; then
 * pp_shares's COMM and MMAP2.
 */
static void bpf_output_file_open(struct file *f, const char *const *names, const uint64_t *ids,
				 size_t n, uint64_t period)
{
	struct perf_event_attr a = attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT);

	file_begin(f);
	a.sample_type |= PERF_SAMPLE_RAW;
	a.sample_period = period;
	a.mmap = a.comm = a.mmap2 = 0;
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(perfdata_writer_add_event(f->w, names[i], &a, &ids[i], 1), 0, "%s",
			     names[i]);
	cr_assert_eq(perfdata_writer_start(f->w), 0);
	comm(f, PID, PID, "pp_shares", true, 10);
	struct perfdata_mmap m = fixture_mmap(PID, false);

	mmap2(f, &m, 10);
}

/* One user sample of event `id` with RAW (raw NULL = none) of raw_size bytes. */
static void raw_sample(struct file *f, uint64_t id, uint32_t tid, uint64_t time, uint64_t period,
		       const char *raw, uint32_t raw_size, const uint64_t *chain, size_t n)
{
	struct perfdata_sample s = {
		.misc = PERF_RECORD_MISC_USER, .id = id, .pid = PID, .tid = tid, .time = time,
		.period = period, .nr_callchain = n, .callchain = chain, .ip = chain[1],
		.raw = raw, .raw_size = raw ? raw_size : 0,
	};

	cr_assert_eq(perfdata_write_sample(f->w, &s), 0);
}

/* The value of label `key` of sample s, NULL when it has none. */
static const char *label_str(const struct tp_sample *s, const char *key)
{
	for (size_t i = 0; i < s->nr_labels; i++)
		if (!strcmp(s->labels[i].key, key))
			return s->labels[i].str;
	return NULL;
}

/*
 * The first sample with leaf function `leaf`, or NULL; with by_reason,
 * only one whose reason label is `reason` (NULL: one without).
 */
static const struct tp_sample *sample_of_leaf(const struct tp_profile *p, const char *leaf,
					   bool by_reason, const char *reason)
{
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct tp_sample *s = &p->samples[i];
		const char *r = label_str(s, "reason");

		if (!s->nr_locs || strcmp(name_of(p, s->locs[0]), leaf))
			continue;
		if (!by_reason || (reason ? r && !strcmp(r, reason) : !r))
			return s;
	}
	return NULL;
}

/* Sample s (`what` names it) has n values, each want[i] of type types[i]. */
static void expect_values(const struct tp_sample *s, const char *what, const char *const *types,
			  const int64_t *want, size_t n)
{
	cr_assert_not_null(s, "no sample %s", what);
	cr_assert_eq(s->nr_values, n, "%s: %zu values", what, s->nr_values);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(s->values[i], want[i], "%s %s %ld", what, types[i], (long)s->values[i]);
}

/*
 * The stacks at leaf_a (+8), leaf_b (+8) and leaf_c (+4), and one
 * cpu-clock sample at leaf_a, at time 100; returns the next time.
 */
static uint64_t three_stacks_and_a_cpu_sample(struct file *f, uint64_t a[4], uint64_t b[4],
					      uint64_t c[4])
{
	leaf_chain(a, "leaf_a", 8);
	leaf_chain(b, "leaf_b", 8);
	leaf_chain(c, "leaf_c", 4);
	sample(f, EV_CPU, PID, TID, 0, 100, 1000000, PERF_RECORD_MISC_USER, a, 4);
	return 101;
}

/*
 * The file write() makes, converted with no options: two profiles,
 * cpu-clock's and `second`.
 */
static void convert_cpu_and(void (*write)(struct file *), const char *second, struct result *res)
{
	struct pp_convert_opts o = { 0 };
	struct file f;

	write(&f);
	convert(f.path, &o, res);
	cr_assert_eq(res->n, 2, "cpu-clock, and one profile for %s", second);
	cr_assert_str_eq(res->name[0], "cpu-clock");
	cr_assert_str_eq(res->name[1], second);
}

/* cpu-clock, then alloc and inuse, then pp_shares's COMM and MMAP2. */
static void heap_file_open(struct file *f)
{
	static const char *const names[] = { "alloc", "inuse" };
	static const uint64_t ids[] = { EV_ALLOC, EV_INUSE };

	bpf_output_file_open(f, names, ids, 2, ALLOC_RATE);
}

/* One allocation sample; raw NULL = none, else a NUL-terminated text. */
static void heap_sample(struct file *f, uint64_t id, uint64_t time, uint64_t period,
			const char *raw, const uint64_t *chain, size_t n)
{
	raw_sample(f, id, TID, time, period, raw, raw ? (uint32_t)strlen(raw) + 1 : 0, chain, n);
}

/* The sample whose leaf is function `leaf`, or NULL. */
static const struct tp_sample *sample_at(const struct tp_profile *p, const char *leaf)
{
	return sample_of_leaf(p, leaf, false, NULL);
}

static void expect_heap(const struct tp_profile *p, const char *leaf, int64_t alloc_objects,
			int64_t alloc_space, int64_t inuse_objects, int64_t inuse_space)
{
	static const char *const types[] = { "alloc_objects", "alloc_space", "inuse_objects",
					     "inuse_space" };
	const int64_t want[] = { alloc_objects, alloc_space, inuse_objects, inuse_space };
	char what[64];

	snprintf(what, sizeof(what), "at %s", leaf);
	expect_values(sample_at(p, leaf), what, types, want, 4);
}

/*
 * leaf_a: 3 malloc(4096) samples standing for 128 objects each, one still
 * in use; leaf_b: 2 calloc(65536) of 10 objects, none in use; leaf_c: 3
 * realloc(3000) of 524288 bytes (174.76 objects: the sum is rounded, not
 * each sample), one with RAW "garbage", one without RAW (1 object each).
 */
static void write_heap_file(struct file *f)
{
	uint64_t a[4], b[4], c[4];
	uint64_t t;

	heap_file_open(f);
	t = three_stacks_and_a_cpu_sample(f, a, b, c);
	for (int i = 0; i < 3; i++) {
		heap_sample(f, EV_ALLOC, t++, 128 * 4096, "malloc 4096", a, 4);
		heap_sample(f, EV_ALLOC, t++, 524288, "realloc 3000     ", c, 4);
	}
	for (int i = 0; i < 2; i++)
		heap_sample(f, EV_ALLOC, t++, 10 * 65536, "calloc 65536", b, 4);
	heap_sample(f, EV_ALLOC, t++, 1000, "garbage", c, 4);
	heap_sample(f, EV_ALLOC, t++, 500, NULL, c, 4);
	perfdata_write_finished_round(f->w);
	heap_sample(f, EV_INUSE, t++, 128 * 4096, "malloc 4096", a, 4);
	perfdata_write_finished_round(f->w);
	file_close(f);
}

Test(convert, heap_profile_from_alloc_and_inuse)
{
	struct result res;

	/* one profile for alloc + inuse */
	convert_cpu_and(write_heap_file, "heap", &res);
	cr_assert_eq(res.p[0]->nr_types, 2, "other events keep their profile");
	cr_assert_eq(total(res.p[0], 1), 1000000);

	const struct tp_profile *p = res.p[1];
	static const char *const want[][2] = {
		{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
		{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
	};

	cr_assert_eq(p->nr_types, 4);
	for (size_t i = 0; i < 4; i++) {
		cr_assert_str_eq(p->types[i][0], want[i][0]);
		cr_assert_str_eq(p->types[i][1], want[i][1]);
	}
	cr_assert_str_eq(p->default_sample_type, "inuse_space");
	cr_assert_str_eq(p->period_type[0], "space");
	cr_assert_str_eq(p->period_type[1], "bytes");
	cr_assert_eq(p->period, ALLOC_RATE, "the sampling interval");
	cr_assert_eq(p->nr_samples, 3, "alloc and inuse of one stack are one sample");
	expect_heap(p, "leaf_a", 3 * 128, 3 * 128 * 4096, 128, 128 * 4096);
	expect_heap(p, "leaf_b", 2 * 10, 2 * 10 * 65536, 0, 0);
	/* 3 * 524288 / 3000 = 524.288 objects, + 1 + 1 */
	expect_heap(p, "leaf_c", 526, 3 * 524288 + 1000 + 500, 0, 0);
	cr_assert_eq(sample_at(p, "leaf_a")->nr_locs, 3);
	cr_assert(strstr(p->comments[0], "events alloc and inuse"), "%s", p->comments[0]);
	free_result(&res);
}

/* --event: "heap" is both events; one of them still makes a heap profile. */
Test(convert, heap_profile_event_selection)
{
	struct file f;
	struct pp_convert_opts heap = { .event = "heap" }, alloc = { .event = "alloc" };
	struct pp_convert_opts inuse = { .event = "inuse" };
	struct result res;

	write_heap_file(&f);
	convert(f.path, &heap, &res);
	cr_assert_eq(res.n, 1);
	cr_assert_str_eq(res.name[0], "heap");
	expect_heap(res.p[0], "leaf_a", 3 * 128, 3 * 128 * 4096, 128, 128 * 4096);
	free_result(&res);

	convert(f.path, &alloc, &res);
	cr_assert_eq(res.n, 1);
	cr_assert_eq(res.p[0]->nr_types, 4);
	expect_heap(res.p[0], "leaf_a", 3 * 128, 3 * 128 * 4096, 0, 0);
	free_result(&res);

	convert(f.path, &inuse, &res);
	cr_assert_eq(res.n, 1);
	cr_assert_eq(res.p[0]->nr_samples, 1);
	expect_heap(res.p[0], "leaf_a", 0, 0, 128, 128 * 4096);
	free_result(&res);
}

/*
 * The file write() makes, its samples all at pp_shares's stack `chain`,
 * converted with --event `event` and --labels tid.
 */
static void convert_by_tid(const char *event, void (*write)(struct file *, const uint64_t *),
			   struct result *res)
{
	struct pp_label_spec tid = { PP_LABEL_TID, NULL };
	struct pp_convert_opts o = { .event = event, .labels = &tid, .nr_labels = 1 };
	uint64_t chain[4];
	struct file f;

	shares_chain(chain);
	write(&f, chain);
	file_close(&f);
	convert(f.path, &o, res);
}

static void write_heap_two_threads(struct file *f, const uint64_t *a)
{
	heap_file_open(f);
	raw_sample(f, EV_ALLOC, PID + 7, 50, 8192, "malloc 4096", 12, a, 4);
	heap_sample(f, EV_INUSE, 60, 4096, "malloc 4096", a, 4);
}

/* Labels keep apart what they tell apart: two threads, two samples. */
Test(convert, heap_profile_with_labels)
{
	struct result res;

	convert_by_tid("heap", write_heap_two_threads, &res);
	cr_assert_eq(res.p[0]->nr_samples, 2);
	cr_assert_eq(total(res.p[0], 0), 2);
	cr_assert_eq(total(res.p[0], 1), 8192);
	cr_assert_eq(total(res.p[0], 2), 1);
	cr_assert_eq(total(res.p[0], 3), 4096);
	free_result(&res);
}

/* ---- run-queue waits: record --sched's sched-delay event ---- */

#define EV_SCHED 500

/* cpu-clock, then sched-delay (named `name`), then pp_shares's COMM and MMAP2. */
static void sched_file_open(struct file *f, const char *name)
{
	static const uint64_t id = EV_SCHED;

	bpf_output_file_open(f, &name, &id, 1, 1);
}

/* One wait of `ns` ns; raw NULL = no RAW, else its text and size. */
static void sched_wait(struct file *f, uint32_t tid, uint64_t time, uint64_t ns, const char *raw,
		       uint32_t raw_size, const uint64_t *chain, size_t n)
{
	raw_sample(f, EV_SCHED, tid, time, ns, raw, raw_size, chain, n);
}

/* The sample with leaf function `leaf` and reason label `reason` (NULL: none). */
static const struct tp_sample *wait_at(const struct tp_profile *p, const char *leaf,
				       const char *reason)
{
	return sample_of_leaf(p, leaf, true, reason);
}

static void expect_wait(const struct tp_profile *p, const char *leaf, const char *reason,
			int64_t count, int64_t ns)
{
	static const char *const types[] = { "waits", "ns" };
	const int64_t want[] = { count, ns };
	char what[64];

	snprintf(what, sizeof(what), "at %s with reason %s", leaf, reason ? reason : "(none)");
	expect_values(wait_at(p, leaf, reason), what, types, want, 2);
}

/*
 * leaf_a: preempted 3 times (1, 2 and 3 us), woken once (500 ns), the
 * texts padded as the recorder pads them; leaf_b: woken twice (7 us);
 * leaf_c: three waits whose RAW is bad or missing: no reason label, their
 * time still counts.
 */
static void write_sched_file(struct file *f)
{
	static const char preempted[] = "preempted  ", woken[] = "woken  ";
	uint64_t a[4], b[4], c[4];
	uint64_t t;

	sched_file_open(f, "sched-delay");
	t = three_stacks_and_a_cpu_sample(f, a, b, c);
	for (uint64_t i = 1; i <= 3; i++)
		sched_wait(f, TID, t++, i * 1000, preempted, sizeof(preempted), a, 4);
	sched_wait(f, TID, t++, 500, woken, sizeof(woken), a, 4);
	sched_wait(f, TID, t++, 7000, woken, sizeof(woken), b, 4);
	perfdata_write_finished_round(f->w);
	sched_wait(f, TID, t++, 7000, "woken", 6, b, 4);	/* unpadded */
	sched_wait(f, TID, t++, 100, "pre empted", 11, c, 4);
	sched_wait(f, TID, t++, 200, "Preempted", 10, c, 4);
	sched_wait(f, TID, t++, 300, NULL, 0, c, 4);
	perfdata_write_finished_round(f->w);
	file_close(f);
}

Test(convert, sched_delay_profile)
{
	struct result res;

	convert_cpu_and(write_sched_file, "sched-delay", &res);
	cr_assert_eq(res.p[0]->nr_samples, 1);
	cr_assert_eq(res.p[0]->samples[0].nr_labels, 0, "CPU samples get no reason");

	const struct tp_profile *p = res.p[1];

	cr_assert_eq(p->nr_types, 2);
	cr_assert_str_eq(p->types[0][0], "samples");
	cr_assert_str_eq(p->types[0][1], "count");
	cr_assert_str_eq(p->types[1][0], "runq_delay");
	cr_assert_str_eq(p->types[1][1], "nanoseconds");
	cr_assert_str_eq(p->period_type[0], "runq_delay");
	cr_assert_str_eq(p->period_type[1], "nanoseconds");
	cr_assert_eq(p->period, 0, "no sampling interval: every wait is a sample");
	cr_assert_eq(p->nr_samples, 4, "one per (stack, reason)");
	expect_wait(p, "leaf_a", "preempted", 3, 6000);
	expect_wait(p, "leaf_a", "woken", 1, 500);
	expect_wait(p, "leaf_b", "woken", 2, 14000);
	expect_wait(p, "leaf_c", NULL, 3, 600);
	cr_assert_eq(wait_at(p, "leaf_a", "preempted")->nr_labels, 1);
	cr_assert_eq(wait_at(p, "leaf_a", "preempted")->nr_locs, 3);
	cr_assert_eq(total(p, 1), 6000 + 500 + 14000 + 600);
	cr_assert(strstr(p->comments[0], "event sched-delay"), "%s", p->comments[0]);
	free_result(&res);
}

static void write_waits_two_threads(struct file *f, const uint64_t *a)
{
	sched_file_open(f, "sched-delay");
	sched_wait(f, TID, 50, 1000, "preempted", 10, a, 4);
	sched_wait(f, TID + 1, 60, 2000, "preempted", 10, a, 4);
	sched_wait(f, TID + 1, 70, 4000, "woken", 6, a, 4);
}

/* --labels come first, the reason after them; --event picks the profile. */
Test(convert, sched_delay_with_labels)
{
	struct result res;

	convert_by_tid("sched-delay", write_waits_two_threads, &res);
	cr_assert_eq(res.n, 1);
	cr_assert_eq(res.p[0]->nr_samples, 3, "two threads, two reasons");
	for (size_t i = 0; i < 3; i++) {
		const struct tp_sample *s = &res.p[0]->samples[i];

		cr_assert_eq(s->nr_labels, 2);
		cr_assert_str_eq(s->labels[0].key, "tid");
		cr_assert_str_eq(s->labels[1].key, "reason");
	}
	cr_assert_eq(total(res.p[0], 1), 7000);
	free_result(&res);
}

/* Only bpfrec's BPF_OUTPUT event is read as one: another "sched-delay" is any event. */
Test(convert, sched_delay_needs_the_bpf_output_attr)
{
	struct file f;
	struct pp_convert_opts o = { .event = "sched-delay" };
	struct result res;
	struct perf_event_attr a = attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
	uint64_t id = EV_SCHED, chain[4];

	shares_chain(chain);
	file_begin(&f);
	a.sample_type |= PERF_SAMPLE_RAW;
	a.sample_period = 1;
	cr_assert_eq(perfdata_writer_add_event(f.w, "sched-delay", &a, &id, 1), 0);
	cr_assert_eq(perfdata_writer_start(f.w), 0);
	sched_wait(&f, TID, 50, 1000, "preempted", 10, chain, 4);
	file_close(&f);

	convert(f.path, &o, &res);
	cr_assert_eq(res.n, 1);
	cr_assert_str_eq(res.p[0]->types[1][0], "sched-delay");
	cr_assert_str_eq(res.p[0]->types[1][1], "count");
	cr_assert_eq(res.p[0]->samples[0].nr_labels, 0);
	free_result(&res);
}

/* Build-ids recorded in the BUILD_ID feature (not in MMAP2) reach the mapping. */
Test(convert, build_id_from_feature)
{
	struct file f;
	struct pp_convert_opts o = { .no_symbolize = true };
	struct result res;
	uint64_t chain[4];
	uint8_t id[20];
	size_t n = 0;
	char hex[41];

	cr_assert_eq(buildid_read_file(fixture, id, &n), 0);
	shares_open(&f, false, chain, 10);
	struct perfdata_mmap m = fixture_mmap(PID, false);

	mmap2(&f, &m, 10);
	sample(&f, EV_CPU, PID, PID, 0, 20, 1, PERF_RECORD_MISC_USER, chain, 4);
	cr_assert_eq(perfdata_writer_add_build_id(f.w, PERF_RECORD_MISC_USER, id, n, fixture), 0);
	file_close(&f);

	convert(f.path, &o, &res);
	cr_assert_str_eq(tp_mapping(res.p[0], 1)->build_id, buildid_to_hex(id, n, hex));
	free_result(&res);
}

/* Memory follows distinct stacks: 200k identical samples are one entry. */
Test(convert, many_identical_samples_aggregate)
{
	struct file f;
	struct pp_convert_opts o = { .no_symbolize = true };
	struct result res;
	uint64_t chain[4];

	shares_open(&f, false, chain, 1);
	for (int i = 0; i < 200000; i++) {
		sample(&f, EV_CPU, PID, PID, 0, 10 + i, 1, PERF_RECORD_MISC_USER, chain, 4);
		if (i % 10000 == 9999)
			perfdata_write_finished_round(f.w);
	}
	file_close(&f);

	convert(f.path, &o, &res);
	cr_assert_eq(res.p[0]->nr_samples, 1);
	cr_assert_eq(res.p[0]->samples[0].values[0], 200000);
	cr_assert_eq(res.st.frames, 3);
	cr_assert_eq(res.st.stacks, 1);
	free_result(&res);
}

Test(convert, parse_labels)
{
	char s[] = "pid,comm,trace:prev_state,cpu,tid";
	char bad[] = "pid,nope";
	char empty_field[] = "trace:";
	struct pp_label_spec sp[8];
	size_t n;

	cr_assert_eq(pp_parse_labels(s, sp, 8, &n), 0);
	cr_assert_eq(n, 5);
	cr_assert_eq(sp[0].kind, PP_LABEL_PID);
	cr_assert_eq(sp[1].kind, PP_LABEL_COMM);
	cr_assert_eq(sp[2].kind, PP_LABEL_TRACE);
	cr_assert_str_eq(sp[2].field, "prev_state");
	cr_assert_eq(sp[3].kind, PP_LABEL_CPU);
	cr_assert_eq(sp[4].kind, PP_LABEL_TID);
	cr_assert_eq(pp_parse_labels(bad, sp, 8, &n), -EINVAL);
	cr_assert_eq(pp_parse_labels(empty_field, sp, 8, &n), -EINVAL);
	char many[] = "pid,pid,pid";

	cr_assert_eq(pp_parse_labels(many, sp, 2, &n), -E2BIG);
}

/* ---- DWARF-mode samples (perf record --call-graph dwarf) ---- */

#define DWARF_REGS_MASK 0xff0fffULL	/* perf's x86_64 AX..SS, R8..R15 */

static void dwarf_file_open(struct file *f)
{
	struct perfdata_writer_opts o = { 0 };
	struct perf_event_attr a = attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	uint64_t id = EV_CPU;

	a.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a.sample_regs_user = DWARF_REGS_MASK;
	a.sample_stack_user = STACK_COPY;
	a.exclude_callchain_user = 1;
	snprintf(f->path, sizeof(f->path), "%s/perf.data", tmpdir);
	f->fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	cr_assert_geq(f->fd, 0);
	cr_assert_eq(perfdata_writer_new(f->fd, &o, &f->w), 0);
	cr_assert_eq(perfdata_writer_add_event(f->w, "cpu-clock", &a, &id, 1), 0);
	cr_assert_eq(perfdata_writer_start(f->w), 0);
}

/* A sample as perf writes it in DWARF mode: kernel chain, user regs and stack. */
static void dwarf_sample_of(struct file *f, uint32_t pid, uint64_t time, uint16_t misc,
			    const uint64_t *chain, size_t n, bool with_regs)
{
	uint64_t regs[20] = { 0 };
	struct perfdata_sample s = {
		.misc = misc, .id = EV_CPU, .pid = pid, .tid = pid, .time = time, .period = 1,
		.nr_callchain = n, .callchain = chain, .ip = n > 1 ? chain[1] : snap.rip,
		.regs_abi = with_regs ? PERF_SAMPLE_REGS_ABI_64 : PERF_SAMPLE_REGS_ABI_NONE,
		.nr_regs = with_regs ? 20 : 0, .regs = regs,
		.stack_size = with_regs ? STACK_COPY : 0, .stack = snap.stack,
		.stack_dyn_size = with_regs ? snap.len : 0,
	};

	/* Array slots of the mask's bits: BX=1 BP=6 SP=7 IP=8, R12..R15 = 16..19. */
	regs[1] = snap.rbx;
	regs[6] = snap.rbp;
	regs[7] = snap.rsp;
	regs[8] = snap.rip;
	regs[16] = snap.r12;
	regs[17] = snap.r13;
	regs[18] = snap.r14;
	regs[19] = snap.r15;
	cr_assert_eq(perfdata_write_sample(f->w, &s), 0);
}

static void dwarf_sample(struct file *f, uint64_t time, uint16_t misc, const uint64_t *chain,
			 size_t n, bool with_regs)
{
	dwarf_sample_of(f, PID, time, misc, chain, n, with_regs);
}

/* This process's executable mappings, as pid's. */
static void self_mmaps(struct file *f, uint32_t pid, uint64_t time)
{
	struct cap_map maps[128];
	size_t nm = cap_self_maps(maps, 128);

	for (size_t i = 0; i < nm; i++) {
		struct perfdata_mmap m = {
			.misc = PERF_RECORD_MISC_USER, .pid = pid, .tid = pid,
			.start = maps[i].start, .len = maps[i].end - maps[i].start,
			.pgoff = maps[i].pgoff, .prot = 5, .flags = 2, .filename = maps[i].path,
		};

		mmap2(f, &m, time);
	}
}

Test(convert, dwarf_samples_are_unwound)
{
	const uint64_t kaddr = 0xffffffff81002010ULL;
	const uint64_t kchain[] = { PERF_CONTEXT_KERNEL, kaddr };
	struct pp_convert_opts o = { 0 };
	struct result res;
	struct file f;

	cap_f3();
	dwarf_file_open(&f);
	comm(&f, PID, PID, "self", true, 10);
	self_mmaps(&f, PID, 10);
	dwarf_sample(&f, 20, PERF_RECORD_MISC_KERNEL, kchain, 2, true);	/* in a syscall */
	dwarf_sample(&f, 30, PERF_RECORD_MISC_USER, NULL, 0, true);		/* in user code */
	dwarf_sample(&f, 40, PERF_RECORD_MISC_KERNEL, kchain, 2, false);	/* kernel thread */
	/* After an exec the old maps are gone: the same registers unwind no further. */
	comm(&f, PID, PID, "self", true, 50);
	dwarf_sample(&f, 60, PERF_RECORD_MISC_USER, NULL, 0, true);
	perfdata_write_finished_round(f.w);
	file_close(&f);

	convert(f.path, &o, &res);
	const struct tp_profile *p = res.p[0];
	bool seen[4] = { false };

	cr_assert_eq(p->nr_samples, 4);
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct tp_sample *sm = &p->samples[i];
		uint64_t first = tp_location(p, sm->locs[0])->address;
		size_t u = 0;	/* the first user frame */

		if (first == kaddr && sm->nr_locs == 1) {
			seen[2] = true;		/* no user stack: the kernel chain stays */
			continue;
		}
		if (sm->nr_locs == 1) {
			cr_expect_eq(first, snap.rip, "after exec: the pc alone");
			seen[3] = true;
			continue;
		}
		if (first == kaddr) {
			seen[0] = true;
			u = 1;		/* kernel part first, then the user frames */
		} else {
			seen[1] = true;
		}
		cr_assert_gt(sm->nr_locs, u + 3, "sample %zu: %zu frames", i, sm->nr_locs);
		cr_expect_str_eq(name_of(p, sm->locs[u]), "cap_f1");
		cr_expect_str_eq(name_of(p, sm->locs[u + 1]), "cap_f2");
		cr_expect_str_eq(name_of(p, sm->locs[u + 2]), "cap_f3");
		cr_expect_eq(tp_location(p, sm->locs[u])->address, snap.rip);
		for (int k = 1; k <= 3; k++)
			cr_expect_eq(tp_location(p, sm->locs[u + k])->address, snap.ra[k],
				     "frame %d is the return address", k);
	}
	cr_expect(seen[0] && seen[1] && seen[2] && seen[3]);
	cr_expect_eq(res.st.unwind_samples, 3);
	cr_expect_eq(res.st.unwind_no_stack, 1);
	/* The sample after exec stops at its pc; the others wherever the test
	 * runner's stack ends (its trampolines may be anonymous memory). */
	cr_expect_geq(res.st.unwind_stop[UNW_STOP_NO_FILE], 1, "the sample after exec");
	cr_expect_geq(res.st.unwind_frames, 2 * 4 + 1);
	free_result(&res);
}

/* More processes than cached unwinding spaces: the least recently used one
 * is dropped and built again when its process samples again. */
Test(convert, dwarf_spaces_beyond_the_cache)
{
	const uint32_t n = PP_USTACK_SPACES + 4;
	struct pp_convert_opts o = { 0 };
	struct result res;
	struct file f;
	uint64_t t = 10;

	cap_f3();
	dwarf_file_open(&f);
	for (uint32_t i = 0; i < n; i++) {
		comm(&f, PID + i, PID + i, "self", true, t);
		self_mmaps(&f, PID + i, t);
	}
	for (int round = 0; round < 2; round++)
		for (uint32_t i = 0; i < n; i++)
			dwarf_sample_of(&f, PID + i, ++t, PERF_RECORD_MISC_USER, NULL, 0, true);
	perfdata_write_finished_round(f.w);
	file_close(&f);

	convert(f.path, &o, &res);
	const struct tp_profile *p = res.p[0];

	cr_expect_eq(res.st.unwind_samples, 2 * n);
	cr_expect_eq(res.st.unwind_stop[UNW_STOP_OUTSIDE_STACK], 0);
	cr_assert_eq(p->nr_samples, 1, "one stack for all of them, rebuilt spaces included");
	cr_assert_gt(p->samples[0].nr_locs, 3);
	cr_expect_str_eq(name_of(p, p->samples[0].locs[2]), "cap_f3");
	cr_expect_eq(p->samples[0].values[0], 2 * n);
	free_result(&res);
}
