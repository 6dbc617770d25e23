// SPDX-License-Identifier: MIT
/*
 * test_tasks.c - the task tracker against a fake proc root (hand-written
 * maps and comm files), and against the real /proc for this process.
 *
 * What the tracker says the file lacks is written (emit.h) through a real
 * writer in pipe mode into a memory file (test_roundtrip.h); each step's
 * records are read back and decoded here by byte offset (independently of
 * the encoders), so a test sees exactly what one call added to the stream.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perfdata/writer.h"
#include "recorder/emit.h"
#include "symbolize/procmaps.h"
#include "recorder/taskdesc.h"
#include "recorder/taskfiles.h"
#include "recorder/tasks.h"
#include "symbolize/buildid.h"
#include "tests/unit/test_roundtrip.h"
#include "tests/unit/test_fixture.h"

#define MS 1000000ull
/* snprintf that must not truncate */
#define FMT(buf, ...) cr_assert_lt(snprintf(buf, sizeof(buf), __VA_ARGS__), (int)sizeof(buf))

/* ---- fake proc root --------------------------------------------------------- */

static char root[256];
static char exe[PATH_MAX];	/* this test binary: an ELF with a build-id */
static char libc_path[PATH_MAX];
/* "maj:min ino" of a file as a maps line prints it: the tracker checks it. */
static char exe_id[64], libc_id[64];

static void maps_id(const char *path, char *out, size_t size)
{
	struct stat st;

	cr_assert_eq(stat(path, &st), 0, "stat %s: %s", path, strerror(errno));
	cr_assert_lt(snprintf(out, size, "%02x:%02x %llu", major(st.st_dev), minor(st.st_dev),
			      (unsigned long long)st.st_ino), (int)size);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "fopen %s: %s", path, strerror(errno));
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

/*
 * root/PID/maps (and root/PID/comm when comm is not NULL); root/PID/root is
 * "/", as for a process that is not in a container.
 */
static void fake_proc(unsigned int pid, const char *maps, const char *comm)
{
	char path[PATH_MAX];

	FMT(path, "%s/%u", root, pid);
	mkdir(path, 0755);
	FMT(path, "%s/%u/root", root, pid);
	if (access(path, F_OK))
		cr_assert_eq(symlink("/", path), 0);
	FMT(path, "%s/%u/maps", root, pid);
	write_text(path, maps);
	if (comm) {
		char line[64];

		FMT(path, "%s/%u/comm", root, pid);
		FMT(line, "%s\n", comm);
		write_text(path, line);
	}
}

/* Our own vDSO image, copied from memory into a file, read like any ELF file. */
static void self_vdso_build_id(uint8_t id[BUILDID_MAX], size_t *size)
{
	char line[512], path[300];
	unsigned long start = 0, end = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	int fd;

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &start, &end) == 2)
			break;
	fclose(f);
	cr_assert_gt(end, start, "no [vdso] in /proc/self/maps");
	FMT(path, "%s/vdso.so", root);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, (const void *)start, end - start), (ssize_t)(end - start));
	close(fd);
	cr_assert_eq(buildid_read_file(path, id, size), 0, "no build-id in our vDSO");
}

/* The build-id of a file, or of our vDSO for "[vdso]". */
static void build_id_of(const char *path, uint8_t id[BUILDID_MAX], size_t *size)
{
	if (!strcmp(path, "[vdso]")) {
		self_vdso_build_id(id, size);
		return;
	}
	cr_assert_eq(buildid_read_file(path, id, size), 0, "no build-id in %s", path);
	cr_assert_gt(*size, 0);
}

/* ---- capture what the tracker writes ------------------------------------------ */

static struct perfdata_writer *w;
static struct task_tracker *tt;
static int out_fd = -1;
static off_t mark;
static struct trip_rec recs[256];

static void setup(void)
{
	struct perf_event_attr attr = trip_cpu_clock();
	struct perfdata_writer_opts wo = { .pipe = true };
	uint64_t id = 7;

	FMT(root, "/tmp/bpfrec-tasks.XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	out_fd = trip_memfd("tasks");
	w = trip_writer(out_fd, &wo, "cpu-clock", &attr, &id, 1);
	mark = trip_mark(w, out_fd);

	self_exe(exe, sizeof(exe));
	libc_realpath(libc_path);
	maps_id(exe, exe_id, sizeof(exe_id));
	maps_id(libc_path, libc_id, sizeof(libc_id));
}

static void teardown(void)
{
	char cmd[300];

	task_tracker_free(tt);
	tt = NULL;
	perfdata_writer_free(w);
	close(out_fd);
	FMT(cmd, "rm -rf '%s'", root);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(tasks, .init = setup, .fini = teardown);

/* The records' clock at each read of /proc (opts.now): what a test sets. */
static uint64_t fake_clock;

static uint64_t fake_now(void)
{
	return fake_clock;
}

static void new_tracker(size_t max_pids)
{
	struct task_tracker_opts o = { .proc_root = root, .max_pids = max_pids, .now = fake_now };

	cr_assert_eq(task_tracker_new(&o, &tt), 0);
}

/*
 * The records written since the last call (header and feature records
 * skipped): all counted, the first ones kept in recs.
 */
static size_t take(void)
{
	return trip_take(w, out_fd, &mark, recs, sizeof(recs) / sizeof(recs[0]));
}

static uint32_t u32_at(const struct trip_rec *r, size_t off)
{
	uint32_t v;

	memcpy(&v, r->raw + off, sizeof(v));
	return v;
}

static uint64_t u64_at(const struct trip_rec *r, size_t off)
{
	uint64_t v;

	memcpy(&v, r->raw + off, sizeof(v));
	return v;
}

static const char *str_at(const struct trip_rec *r, size_t off)
{
	return (const char *)r->raw + off;
}

/* The trailer: pid, tid, time, cpu. */
static void assert_trailer(const struct trip_rec *r, uint32_t pid, uint32_t tid, uint64_t time,
			   uint32_t cpu)
{
	size_t t = r->size - TRIP_CPU_CLOCK_TRAILER;

	cr_assert_eq(u32_at(r, t), pid, "trailer pid");
	cr_assert_eq(u32_at(r, t + 4), tid, "trailer tid");
	cr_assert_eq(u64_at(r, t + 8), time, "trailer time");
	cr_assert_eq(u32_at(r, t + 16), cpu, "trailer cpu");
}

static void assert_comm(const struct trip_rec *r, uint32_t pid, uint32_t tid, const char *comm,
			bool exec, uint64_t time, uint32_t cpu)
{
	cr_assert_eq(r->type, PERF_RECORD_COMM);
	cr_assert_eq(u32_at(r, 8), pid, "comm pid");
	cr_assert_eq(u32_at(r, 12), tid, "comm tid");
	cr_assert_str_eq(str_at(r, 16), comm);
	cr_assert_eq(!!(r->misc & PERF_RECORD_MISC_COMM_EXEC), exec, "exec flag");
	assert_trailer(r, pid, tid, time, cpu);
}

struct mmap2_want {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	uint32_t prot, flags;
	const char *filename;
	const char *build_id_of;	/* file whose build-id the record carries, or NULL */
	uint32_t maj, min;		/* otherwise */
	uint64_t ino;
};

static void assert_mmap2(const struct trip_rec *r, const struct mmap2_want *m, uint64_t time,
			 uint32_t cpu)
{
	cr_assert_eq(r->type, PERF_RECORD_MMAP2, "type %u", r->type);
	cr_assert_eq(r->misc & PERF_RECORD_MISC_CPUMODE_MASK, PERF_RECORD_MISC_USER);
	cr_assert_eq(u32_at(r, 8), m->pid);
	cr_assert_eq(u32_at(r, 12), m->tid);
	cr_assert_eq(u64_at(r, 16), m->start, "start of %s", m->filename);
	cr_assert_eq(u64_at(r, 24), m->len, "len of %s", m->filename);
	cr_assert_eq(u64_at(r, 32), m->pgoff, "pgoff of %s", m->filename);
	if (m->build_id_of) {
		uint8_t id[BUILDID_MAX];
		size_t size;

		build_id_of(m->build_id_of, id, &size);
		cr_assert(r->misc & PERF_RECORD_MISC_MMAP_BUILD_ID, "%s: no build-id", m->filename);
		cr_assert_eq(r->raw[40], size);
		cr_assert_arr_eq(r->raw + 44, id, size);
	} else {
		cr_assert_not(r->misc & PERF_RECORD_MISC_MMAP_BUILD_ID, "%s", m->filename);
		cr_assert_eq(u32_at(r, 40), m->maj);
		cr_assert_eq(u32_at(r, 44), m->min);
		cr_assert_eq(u64_at(r, 48), m->ino);
	}
	cr_assert_eq(u32_at(r, 64), m->prot);
	cr_assert_eq(u32_at(r, 68), m->flags);
	cr_assert_str_eq(str_at(r, 72), m->filename);
	assert_trailer(r, m->pid, m->tid, time, cpu);
}

/* HEADER_BUILD_ID (pipe mode): misc USER, the file's build-id and name. */
static void assert_build_id(const struct trip_rec *r, const char *path)
{
	uint8_t id[BUILDID_MAX];
	size_t size;

	build_id_of(path, id, &size);
	cr_assert_eq(r->type, PERFDATA_RECORD_HEADER_BUILD_ID, "type %u", r->type);
	cr_assert_eq(r->misc & PERF_RECORD_MISC_CPUMODE_MASK, PERF_RECORD_MISC_USER);
	cr_assert_eq(r->raw[32], size);
	cr_assert_arr_eq(r->raw + 12, id, size);
	cr_assert_str_eq(str_at(r, 36), path);
}

static int see(uint32_t pid, uint32_t tid, const char *comm, uint64_t time, uint32_t cpu,
	       const uint64_t *ips, size_t nr)
{
	return emit_task(w, tt, pid, tid, comm, time, cpu, ips, nr);
}

/* The r-x private mapping of file, with file's own build-id. */
static struct mmap2_want rx_map(uint32_t pid, uint32_t tid, uint64_t start, uint64_t len,
				uint64_t pgoff, const char *file)
{
	return (struct mmap2_want){ pid, tid, start, len, pgoff, PROT_READ | PROT_EXEC,
				    MAP_PRIVATE, file, file, 0, 0, 0 };
}

/* see() a sample the tracker must take (0): the number of records it wrote. */
static size_t see_take(uint32_t pid, uint32_t tid, const char *comm, uint64_t time, uint32_t cpu,
		       const uint64_t *ips, size_t nr)
{
	cr_assert_eq(see(pid, tid, comm, time, cpu, ips, nr), 0, "%u/%u at %lu", pid, tid,
		     (unsigned long)time);
	return take();
}

/* A kernel mmap report, with what it makes the file lack written at once. */
static int report_mmap(uint32_t pid, uint32_t tid, const struct procmaps_entry *e,
		       uint64_t time, uint32_t cpu)
{
	const struct task_desc *d;
	int err = task_tracker_mmap(tt, pid, tid, e, time, cpu, &d);

	return err ? err : emit_desc(w, d);
}

/* ---- a typical process -------------------------------------------------------- */

#define APP_START	0x401000ull
#define APP_END		0x405000ull
#define LIBC_START	0x7f0000100000ull
#define LIBC_END	0x7f0000200000ull
#define BLOB_START	0x7f0000300000ull
#define ANON_START	0x7f0000400000ull
#define VDSO_START	0x7ffc00000000ull

static char *app_maps(void)
{
	static char text[4 * PATH_MAX];

	FMT(text,
		 "00400000-00401000 r--p 00000000 %s %s\n"
		 "00401000-00405000 r-xp 00001000 %s %s\n"
		 "00405000-00406000 rw-p 00006000 %s %s\n"
		 "7f0000100000-7f0000200000 r-xp 00026000 %s    %s\n"
		 "7f0000300000-7f0000301000 r-xs 00000000 08:03 33 %s/not an elf\n"
		 "7f0000400000-7f0000410000 rwxp 00000000 00:00 0 \n"
		 "7ffc00000000-7ffc00002000 r-xp 00000000 00:00 0                  [vdso]\n"
		 "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n",
		 exe_id, exe, exe_id, exe, exe_id, exe, libc_id, libc_path, root);
	return text;
}

static void make_blob(void)
{
	char path[PATH_MAX];

	FMT(path, "%s/not an elf", root);
	write_text(path, "just text, no ELF header\n");
}

/* The typical process, 1000 "app" (app_maps() and its blob), and a fresh tracker. */
static void start_app(void)
{
	make_blob();
	fake_proc(1000, app_maps(), "app");
	new_tracker(0);
}

/* start_app(), then its first sample, in the app at 1 s: seen, what it wrote taken. */
static void app_seen_at_1s(void)
{
	uint64_t in_app[] = { APP_START + 0x10 };

	start_app();
	cr_assert_eq(see(1000, 1000, "app", 1000 * MS, 0, in_app, 1), 0);
	take();
}

static void check_app_mmaps(size_t first, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu)
{
	char blob[PATH_MAX];
	const struct mmap2_want want[] = {
		{ pid, tid, APP_START, APP_END - APP_START, 0x1000, PROT_READ | PROT_EXEC,
		  MAP_PRIVATE, exe, exe, 0, 0, 0 },
		{ pid, tid, LIBC_START, LIBC_END - LIBC_START, 0x26000, PROT_READ | PROT_EXEC,
		  MAP_PRIVATE, libc_path, libc_path, 0, 0, 0 },
		{ pid, tid, BLOB_START, 0x1000, 0, PROT_READ | PROT_EXEC, MAP_SHARED, blob, NULL,
		  8, 3, 33 },
		{ pid, tid, ANON_START, 0x10000, 0, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE,
		  "//anon", NULL, 0, 0, 0 },
		/* Our own vDSO's build-id: the kernel maps one image into every 64-bit process. */
		{ pid, tid, VDSO_START, 0x2000, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE, "[vdso]",
		  "[vdso]", 0, 0, 0 },
	};

	FMT(blob, "%s/not an elf", root);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_mmap2(&recs[first + i], &want[i], time, cpu);
}

Test(tasks, first_sample_describes_the_process)
{
	uint64_t ips[] = { APP_START + 0x123, 0 };

	start_app();
	cr_assert_eq(see_take(1000, 1000, "app", 5000, 1, ips, 2), 7);
	assert_comm(&recs[0], 1000, 1000, "app", false, 5000, 1);
	check_app_mmaps(1, 1000, 1000, 5000, 1);
	/* Only the file with a sample gets its build-id listed. */
	assert_build_id(&recs[6], exe);
}

/* The tracker decides and writes nothing: the description is the decision. */
Test(tasks, describe_decides_without_writing)
{
	uint64_t ips[] = { APP_START + 0x123 };
	const struct task_desc *d;
	struct task_desc_rec r;
	size_t nr_mmap = 0;

	start_app();
	cr_assert_eq(task_tracker_describe(tt, 1000, 1000, "app", 5000, 1, ips, 1, &d), 0);
	cr_assert_eq(take(), 0, "nothing written by the tracker");
	cr_assert_eq(d->nr, 7);
	cr_assert_not_null(task_desc_get(d, 0, &r));
	cr_assert_eq(r.kind, TASK_DESC_COMM);
	cr_assert_str_eq(r.comm.comm, "app");
	cr_assert(r.sid.pid == 1000 && r.sid.time == 5000 && r.sid.cpu == 1);
	for (size_t i = 1; i < 6; i++) {
		cr_assert_not_null(task_desc_get(d, i, &r));
		cr_assert_eq(r.kind, TASK_DESC_MMAP2, "record %zu", i);
		cr_assert_not_null(r.mmap.filename);
		nr_mmap++;
	}
	cr_assert_not_null(task_desc_get(d, 6, &r));
	cr_assert_eq(r.kind, TASK_DESC_BUILD_ID);
	cr_assert_str_eq(r.path, exe);
	cr_assert_null(task_desc_get(d, 7, &r));
	/* Counted as written: the same sample again needs nothing. */
	cr_assert_eq(task_tracker_describe(tt, 1000, 1000, "app", 6000, 1, ips, 1, &d), 0);
	cr_assert_eq(d->nr, 0);
	cr_assert_eq(nr_mmap, 5);
}

Test(tasks, same_process_again_writes_nothing)
{
	uint64_t in_app[] = { APP_START + 0x10, APP_END - 1 };
	uint64_t in_libc[] = { LIBC_START + 0x40, APP_START + 0x10 };

	start_app();
	cr_assert_eq(see(1000, 1000, "app", 5000, 0, in_app, 2), 0);
	take();
	cr_assert_eq(see_take(1000, 1000, "app", 6000, 0, in_app, 2), 0);
	/* A first hit in libc lists its build-id, nothing else. */
	cr_assert_eq(see_take(1000, 1000, "app", 7000, 0, in_libc, 2), 1);
	assert_build_id(&recs[0], libc_path);
	cr_assert_eq(see_take(1000, 1000, "app", 8000, 0, in_libc, 2), 0);
}

Test(tasks, new_thread_gets_a_comm_only)
{
	uint64_t ips[] = { APP_START + 0x10 };

	start_app();
	cr_assert_eq(see(1000, 1000, "app", 5000, 0, ips, 1), 0);
	take();
	cr_assert_eq(see_take(1000, 1001, "worker", 6000, 1, ips, 1), 1);
	assert_comm(&recs[0], 1000, 1001, "worker", false, 6000, 1);
	cr_assert_eq(see_take(1000, 1001, "worker", 7000, 1, ips, 1), 0);
}

Test(tasks, first_sample_from_a_thread)
{
	uint64_t ips[] = { LIBC_START + 8 };

	make_blob();
	fake_proc(1000, app_maps(), "mainname");
	new_tracker(0);
	cr_assert_eq(see_take(1000, 1002, "thr", 5000, 1, ips, 1), 8);
	/* The process is named from /proc, the thread from the sample. */
	assert_comm(&recs[0], 1000, 1000, "mainname", false, 5000, 1);
	assert_comm(&recs[1], 1000, 1002, "thr", false, 5000, 1);
	check_app_mmaps(2, 1000, 1000, 5000, 1);
	assert_build_id(&recs[7], libc_path);
	/* The main thread is known now. */
	cr_assert_eq(see_take(1000, 1000, "mainname", 6000, 1, ips, 1), 0);
}

static char *app_maps_plus_lib(const char *lib)
{
	static char text[6 * PATH_MAX];

	char id[64];

	maps_id(lib, id, sizeof(id));
	FMT(text, "%s7f0000500000-7f0000508000 r-xp 00002000 %s %s\n", app_maps(), id, lib);
	return text;
}

Test(tasks, ip_outside_the_maps_rereads_them)
{
	uint64_t in_new[] = { 0x7f0000500000ull + 0x77, APP_START + 0x10 };
	struct mmap2_want lib = rx_map(1000, 1003, 0x7f0000500000ull, 0x8000, 0x2000, libc_path);

	app_seen_at_1s();
	/* dlopen: a new mapping (the same file again, mapped elsewhere). */
	fake_proc(1000, app_maps_plus_lib(libc_path), NULL);
	cr_assert_eq(see_take(1000, 1003, "app", 1300 * MS, 1, in_new, 2), 3);
	assert_comm(&recs[0], 1000, 1003, "app", false, 1300 * MS, 1);
	/* Only the new mapping, then its build-id (its first sample). */
	assert_mmap2(&recs[1], &lib, 1300 * MS, 1);
	assert_build_id(&recs[2], libc_path);
	cr_assert_eq(see_take(1000, 1003, "app", 1400 * MS, 1, in_new, 2), 0);
}

Test(tasks, rereads_are_rate_limited)
{
	uint64_t in_new[] = { 0x7f0000500000ull + 0x77 };
	struct mmap2_want lib = rx_map(1000, 1000, 0x7f0000500000ull, 0x8000, 0x2000, libc_path);

	app_seen_at_1s();
	fake_proc(1000, app_maps_plus_lib(libc_path), NULL);
	/* Within 100 ms of the last read: the maps are not read again yet. */
	cr_assert_eq(see_take(1000, 1000, "app", 1050 * MS, 0, in_new, 1), 0);
	cr_assert_eq(see_take(1000, 1000, "app", 1100 * MS, 0, in_new, 1), 2);
	assert_mmap2(&recs[0], &lib, 1100 * MS, 0);
	assert_build_id(&recs[1], libc_path);
}

Test(tasks, unmapped_addresses_are_remembered)
{
	uint64_t nowhere[] = { 0x7f0000900010ull };
	uint64_t in_new[] = { 0x7f0000500000ull + 0x77 };

	app_seen_at_1s();
	/* An address no mapping holds: one re-read, which finds nothing. */
	cr_assert_eq(see_take(1000, 1000, "app", 2000 * MS, 0, nowhere, 1), 0);
	/*
	 * The maps change, but the same unmapped address does not read them
	 * again (a JIT region would otherwise cost a read per sample)...
	 */
	fake_proc(1000, app_maps_plus_lib(libc_path), NULL);
	cr_assert_eq(see_take(1000, 1000, "app", 2500 * MS, 0, nowhere, 1), 0);
	/* ... while an ip in a page not known to be unmapped does. */
	cr_assert_eq(see_take(1000, 1000, "app", 2600 * MS, 0, in_new, 1), 2);
	cr_assert_eq(recs[0].type, PERF_RECORD_MMAP2);
	cr_assert_eq(u64_at(&recs[0], 16), 0x7f0000500000ull);
}

Test(tasks, kernel_and_null_ips_are_ignored)
{
	uint64_t kernelish[] = { 0, 0xffffffff81000100ull, PERF_CONTEXT_USER };

	app_seen_at_1s();
	fake_proc(1000, app_maps_plus_lib(libc_path), NULL);
	/* No user address outside the maps: no re-read, the new mapping stays unwritten. */
	cr_assert_eq(see_take(1000, 1000, "app", 5000 * MS, 0, kernelish, 3), 0);
}

static const char other_maps[] =
	"00600000-00608000 r-xp 00000000 fe:01 55 /usr/bin/other\n"
	"7f0000100000-7f0000200000 r-xp 00026000 fe:01 22 /usr/lib/libc-like.so\n";

Test(tasks, exec_writes_comm_exec_and_fresh_maps)
{
	uint64_t in_app[] = { APP_START + 0x10 };
	uint64_t in_other[] = { 0x600010 };
	struct mmap2_want want[] = {
		{ 1000, 1000, 0x600000, 0x8000, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE,
		  "/usr/bin/other", NULL, 0xfe, 1, 55 },
		{ 1000, 1000, LIBC_START, LIBC_END - LIBC_START, 0x26000, PROT_READ | PROT_EXEC,
		  MAP_PRIVATE, "/usr/lib/libc-like.so", NULL, 0xfe, 1, 22 },
	};

	start_app();
	cr_assert_eq(see(1000, 1000, "app", 1000 * MS, 0, in_app, 1), 0);
	cr_assert_eq(see(1000, 1001, "app", 1001 * MS, 0, in_app, 1), 0);
	take();
	fake_proc(1000, other_maps, "other");
	cr_assert_eq(see_take(1000, 1000, "other", 1010 * MS, 1, in_other, 1), 3);
	assert_comm(&recs[0], 1000, 1000, "other", true, 1010 * MS, 1);
	assert_mmap2(&recs[1], &want[0], 1010 * MS, 1);
	assert_mmap2(&recs[2], &want[1], 1010 * MS, 1);
	/* exec left one thread: a sample on the old tid is a new thread. */
	cr_assert_eq(see_take(1000, 1001, "other", 1020 * MS, 1, in_other, 1), 1);
	assert_comm(&recs[0], 1000, 1001, "other", false, 1020 * MS, 1);
}

Test(tasks, rename_is_not_an_exec)
{
	uint64_t in_app[] = { APP_START + 0x10 };

	start_app();
	cr_assert_eq(see(1000, 1000, "app", 1000 * MS, 0, in_app, 1), 0);
	cr_assert_eq(see(1000, 1001, "app", 1001 * MS, 0, in_app, 1), 0);
	take();
	/* prctl(PR_SET_NAME) on the main thread: same address space. */
	cr_assert_eq(see_take(1000, 1000, "renamed", 1002 * MS, 0, in_app, 1), 1);
	assert_comm(&recs[0], 1000, 1000, "renamed", false, 1002 * MS, 0);
	/* ... and on another thread, which cannot exec anyway. */
	cr_assert_eq(see_take(1000, 1001, "pool-1", 1003 * MS, 1, in_app, 1), 1);
	assert_comm(&recs[0], 1000, 1001, "pool-1", false, 1003 * MS, 1);
	cr_assert_eq(see_take(1000, 1001, "pool-1", 1004 * MS, 1, in_app, 1), 0);
}

Test(tasks, vanished_process_gets_its_comm_only)
{
	uint64_t ips[] = { 0x401000, 0x7f0000001000ull };

	new_tracker(0);
	cr_assert_eq(see_take(2000, 2000, "ghost", 1000 * MS, 0, ips, 2), 1);
	assert_comm(&recs[0], 2000, 2000, "ghost", false, 1000 * MS, 0);
	cr_assert_eq(see_take(2000, 2000, "ghost", 1001 * MS, 0, ips, 2), 0);
	/* A thread of another vanished process: the process is named after it. */
	cr_assert_eq(see_take(3000, 3005, "gone-thr", 1002 * MS, 1, ips, 2), 2);
	assert_comm(&recs[0], 3000, 3000, "gone-thr", false, 1002 * MS, 1);
	assert_comm(&recs[1], 3000, 3005, "gone-thr", false, 1002 * MS, 1);
}

/* The process left /proc: its directory gone, as after its exit. */
static void proc_gone(unsigned int pid)
{
	const char *const names[] = { "maps", "comm", "root" };
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		FMT(path, "%s/%u/%s", root, pid, names[i]);
		unlink(path);
	}
	FMT(path, "%s/%u", root, pid);
	cr_assert_eq(rmdir(path), 0, "rmdir %s: %s", path, strerror(errno));
}

/*
 * A new file (--switch-output) describes every process again, and one that
 * exited before its first sample there still gets the mappings the tracker
 * knew: a fresh tracker had only its comm to give.
 */
Test(tasks, new_file_describes_again_from_what_is_known)
{
	uint64_t ips[] = { APP_START + 0x123 };
	const struct task_desc *d;
	struct task_desc_rec r;

	app_seen_at_1s();
	cr_assert_eq(see_take(1000, 1001, "worker", 1001 * MS, 0, ips, 1), 1, "a thread: its COMM");
	proc_gone(1000);
	task_tracker_new_file(tt);
	/* What the tracker decides the new file lacks (this test's writer is the old file's). */
	cr_assert_eq(task_tracker_describe(tt, 1000, 1000, "app", 2000 * MS, 1, ips, 1, &d), 0);
	cr_assert_eq(d->nr, 7, "COMM, five MMAP2s and the build-id again: %zu", d->nr);
	cr_assert_not_null(task_desc_get(d, 0, &r));
	cr_assert_eq(r.kind, TASK_DESC_COMM);
	cr_assert_str_eq(r.comm.comm, "app");
	cr_assert(r.sid.pid == 1000 && r.sid.time == 2000 * MS && r.sid.cpu == 1);
	for (size_t i = 1; i < 6; i++) {
		cr_assert_not_null(task_desc_get(d, i, &r));
		cr_assert_eq(r.kind, TASK_DESC_MMAP2, "record %zu", i);
		cr_assert_eq(r.sid.time, 2000 * MS);
	}
	cr_assert_not_null(task_desc_get(d, 1, &r));
	cr_assert_eq(r.mmap.start, APP_START);
	cr_assert_str_eq(r.mmap.filename, exe);
	cr_assert_not_null(task_desc_get(d, 6, &r));
	cr_assert_eq(r.kind, TASK_DESC_BUILD_ID);
	cr_assert_str_eq(r.path, exe);
	/* Its threads are named again too, and once per file. */
	cr_assert_eq(task_tracker_describe(tt, 1000, 1001, "worker", 2001 * MS, 1, ips, 1, &d), 0);
	cr_assert_eq(d->nr, 1);
	cr_assert_not_null(task_desc_get(d, 0, &r));
	cr_assert(r.kind == TASK_DESC_COMM && !strcmp(r.comm.comm, "worker"));
	cr_assert_eq(task_tracker_describe(tt, 1000, 1000, "app", 2002 * MS, 1, ips, 1, &d), 0);
	cr_assert_eq(d->nr, 0);
}

/*
 * In a new file, a sample of a process carried over but stamped before the
 * one that described it there (an --alloc record that waited behind a
 * later CPU sample) gets the description again at its own time; the
 * process, exited before the switch, is still known in the new file's
 * first round, with its mappings.
 */
Test(tasks, new_file_sample_before_the_description)
{
	uint64_t ips[] = { APP_START + 0x123 };
	const struct task_desc *d;
	struct task_desc_rec r;

	app_seen_at_1s();
	task_tracker_exit(tt, 1000, 1000);
	proc_gone(1000);
	task_tracker_round_end(tt);
	/* The switch: the old file's last round would forget it, but the file is ending. */
	task_tracker_file_ending(tt);
	task_tracker_round_end(tt);
	task_tracker_new_file(tt);
	cr_assert_eq(task_tracker_describe(tt, 1000, 1000, "app", 2000 * MS, 1, ips, 1, &d), 0);
	cr_assert_eq(d->nr, 7, "COMM, five MMAP2s and the build-id: %zu", d->nr);
	cr_assert_eq(task_tracker_describe(tt, 1000, 1000, "app", 1990 * MS, 0, ips, 1, &d), 0);
	cr_assert_eq(d->nr, 6, "COMM and the five MMAP2s at the earlier time: %zu", d->nr);
	for (size_t i = 0; i < 6; i++) {
		cr_assert_not_null(task_desc_get(d, i, &r));
		cr_assert_eq(r.kind, i ? TASK_DESC_MMAP2 : TASK_DESC_COMM, "record %zu", i);
		cr_assert_eq(r.sid.time, 1990 * MS);
	}
	cr_assert_not_null(task_desc_get(d, 0, &r));
	cr_assert(!strcmp(r.comm.comm, "app") && !r.comm.exec);
	cr_assert_eq(task_tracker_describe(tt, 1000, 1000, "app", 1995 * MS, 0, ips, 1, &d), 0);
	cr_assert_eq(d->nr, 0, "after the earliest description: nothing");
	/* Once the new file's first round ends, the exited process is gone. */
	task_tracker_round_end(tt);
	cr_assert_eq(task_tracker_describe(tt, 1000, 1000, "app", 2100 * MS, 0, ips, 1, &d), 0);
	cr_assert_eq(d->nr, 1, "its COMM only, from the sample: %zu", d->nr);
}

Test(tasks, idle_task_is_left_to_perf)
{
	uint64_t ips[] = { 0x401000 };

	new_tracker(0);
	cr_assert_eq(see(0, 0, "swapper/0", 1000, 0, NULL, 0), 0);
	cr_assert_eq(see_take(0, 0, "swapper/1", 2000, 1, ips, 1), 0);
}

Test(tasks, comm_is_cut_at_15_characters)
{
	char long_comm[16];

	memset(long_comm, 'x', sizeof(long_comm));	/* 16 bytes, no NUL */
	new_tracker(0);
	cr_assert_eq(see_take(2000, 2000, long_comm, 1, 0, NULL, 0), 1);
	assert_comm(&recs[0], 2000, 2000, "xxxxxxxxxxxxxxx", false, 1, 0);
}

Test(tasks, eviction_of_the_least_recently_seen)
{
	new_tracker(2);
	cr_assert_eq(see(2001, 2001, "a", 1, 0, NULL, 0), 0);
	cr_assert_eq(see(2002, 2002, "b", 2, 0, NULL, 0), 0);
	cr_assert_eq(see(2001, 2001, "a", 3, 0, NULL, 0), 0);	/* a is now the newest */
	cr_assert_eq(take(), 2);
	cr_assert_eq(see(2003, 2003, "c", 4, 0, NULL, 0), 0);	/* evicts b */
	cr_assert_eq(take(), 1);
	cr_assert_eq(see(2001, 2001, "a", 5, 0, NULL, 0), 0);	/* still known */
	cr_assert_eq(see_take(2003, 2003, "c", 6, 0, NULL, 0), 0);
	cr_assert_eq(see(2002, 2002, "b", 7, 0, NULL, 0), 0);	/* described again, evicts a */
	cr_assert_eq(take(), 1);
	assert_comm(&recs[0], 2002, 2002, "b", false, 7, 0);
	cr_assert_eq(see_take(2001, 2001, "a", 8, 0, NULL, 0), 1);
	assert_comm(&recs[0], 2001, 2001, "a", false, 8, 0);
}

Test(tasks, many_processes_stay_bounded)
{
	new_tracker(100);
	for (uint32_t pid = 10000; pid < 12000; pid++)
		cr_assert_eq(see(pid, pid, "p", pid, 0, NULL, 0), 0);
	cr_assert_eq(take(), 2000);
	/* The last 100 are known, the one before is not. */
	for (uint32_t pid = 11900; pid < 12000; pid++)
		cr_assert_eq(see(pid, pid, "p", 20000, 0, NULL, 0), 0);
	cr_assert_eq(take(), 0);
	cr_assert_eq(see_take(11899, 11899, "p", 20001, 0, NULL, 0), 1);
}

/* Two round ends: the one of the round the exit came in, and the next. */
static void rounds_pass(void)
{
	task_tracker_round_end(tt);
	task_tracker_round_end(tt);
}

Test(tasks, exit_forgets_after_the_next_round)
{
	new_tracker(0);
	cr_assert_eq(see(2001, 2001, "a", 1, 0, NULL, 0), 0);
	cr_assert_eq(see(2001, 2002, "a-thr", 2, 0, NULL, 0), 0);
	take();
	/* A thread exits: a late sample of it still finds it... */
	task_tracker_exit(tt, 2001, 2002);
	task_tracker_round_end(tt);
	cr_assert_eq(see_take(2001, 2002, "a-thr", 3, 0, NULL, 0), 0);
	/* ...then its tid is new again; the process is still known. */
	task_tracker_round_end(tt);
	cr_assert_eq(see_take(2001, 2002, "a-thr2", 4, 0, NULL, 0), 1);
	assert_comm(&recs[0], 2001, 2002, "a-thr2", false, 4, 0);
	/* The process exits: the same, then a reused pid starts fresh. */
	task_tracker_exit(tt, 2001, 2001);
	cr_assert_eq(see_take(2001, 2001, "a", 5, 0, NULL, 0), 0);
	rounds_pass();
	cr_assert_eq(see_take(2001, 2001, "reused", 6, 0, NULL, 0), 1);
	assert_comm(&recs[0], 2001, 2001, "reused", false, 6, 0);
	/* A fork under the pid is a new process at once. */
	task_tracker_fork(tt, 2001, 2001, 1);
	cr_assert_eq(see_take(2001, 2001, "again", 7, 0, NULL, 0), 1);
	assert_comm(&recs[0], 2001, 2001, "again", false, 7, 0);
	/* Mismatched tids are ignored. */
	task_tracker_exit(tt, 9999, 2001);
	rounds_pass();
	cr_assert_eq(see_take(2001, 2001, "again", 8, 0, NULL, 0), 0);
}

/* A sample in the exit path of a process never seen before leaves nothing behind. */
Test(tasks, sample_after_exit_of_an_unseen_process)
{
	struct task_tracker_stats st;

	new_tracker(0);
	task_tracker_exit(tt, 4242, 4242);
	cr_assert_eq(see_take(4242, 4242, "gone", 10, 0, NULL, 0), 1, "its COMM");
	rounds_pass();
	task_tracker_stats(tt, &st);
	cr_assert_eq(st.procs, 0);
	cr_assert_eq(st.threads, 0);
}

Test(tasks, reported_exec_with_the_same_comm)
{
	uint64_t in_app[] = { APP_START + 0x10 };

	app_seen_at_1s();
	/* The kernel said exec; the comm did not change (app exec'd app). */
	task_tracker_exec(tt, 1000, 1005 * MS);
	cr_assert_eq(see(1000, 1000, "app", 1010 * MS, 1, in_app, 1), 0);
	cr_assert_geq(take(), 2, "a COMM and the new image's maps");
	assert_comm(&recs[0], 1000, 1000, "app", true, 1010 * MS, 1);
	cr_assert_eq(recs[1].type, PERF_RECORD_MMAP2);
	/* Only once: the next exit and reuse of the pid is no exec. */
	task_tracker_exit(tt, 1000, 1000);
	task_tracker_fork(tt, 1000, 1000, 1);
	cr_assert_eq(see(1000, 1000, "app", 1020 * MS, 1, in_app, 1), 0);
	take();
	assert_comm(&recs[0], 1000, 1000, "app", false, 1020 * MS, 1);
}

Test(tasks, tid_reused_by_another_process)
{
	new_tracker(0);
	cr_assert_eq(see(2001, 2005, "a", 1, 0, NULL, 0), 0);
	take();
	cr_assert_eq(see_take(2010, 2005, "a", 2, 0, NULL, 0), 2);
	assert_comm(&recs[0], 2010, 2010, "a", false, 2, 0);
	assert_comm(&recs[1], 2010, 2005, "a", false, 2, 0);
}

static void copy_file(const char *from, const char *to)
{
	char cmd[3 * PATH_MAX];

	FMT(cmd, "cp '%s' '%s'", from, to);
	cr_assert_eq(system(cmd), 0);
}

Test(tasks, build_id_is_read_once_per_file)
{
	char lib[PATH_MAX], maps[2 * PATH_MAX], id[64];
	uint64_t ips[] = { 0x7f0000500010ull };
	struct mmap2_want want = { 5000, 5000, 0x7f0000500000ull, 0x1000, 0,
				   PROT_READ | PROT_EXEC, MAP_PRIVATE, lib, exe, 0, 0, 0 };

	FMT(lib, "%s/lib.so", root);
	copy_file(exe, lib);
	maps_id(lib, id, sizeof(id));
	FMT(maps, "7f0000500000-7f0000501000 r-xp 00000000 %s %s\n", id, lib);
	fake_proc(5000, maps, "x");
	fake_proc(5001, maps, "y");
	new_tracker(0);
	cr_assert_eq(see_take(5000, 5000, "x", 1, 0, ips, 1), 3);
	assert_mmap2(&recs[1], &want, 1, 0);
	/* The same (device, inode, path) in another process: the cached build-id, not the new file's. */
	copy_file(libc_path, lib);
	cr_assert_eq(see_take(5001, 5001, "y", 2, 0, ips, 1), 2);
	want.pid = want.tid = 5001;
	assert_mmap2(&recs[1], &want, 2, 0);
}

Test(tasks, deleted_file_read_through_map_files)
{
	char dir[PATH_MAX], link[PATH_MAX + 64], maps[256];
	uint64_t ips[] = { 0x7f0000500010ull };
	struct mmap2_want want = { 6000, 6000, 0x7f0000500000ull, 0x1000, 0,
				   PROT_READ | PROT_EXEC, MAP_PRIVATE, "/nonexistent/app (deleted)",
				   exe, 0, 0, 0 };

	/* map_files is the mapping itself: its inode must be the maps line's. */
	FMT(maps, "7f0000500000-7f0000501000 r-xp 00000000 %s /nonexistent/app (deleted)\n",
	    exe_id);
	fake_proc(6000, maps, "d");
	FMT(dir, "%s/6000/map_files", root);
	cr_assert_eq(mkdir(dir, 0755), 0);
	FMT(link, "%s/7f0000500000-7f0000501000", dir);
	cr_assert_eq(symlink(exe, link), 0);
	new_tracker(0);
	cr_assert_eq(see_take(6000, 6000, "d", 1, 0, ips, 1), 3);
	assert_mmap2(&recs[1], &want, 1, 0);
	cr_assert_eq(recs[2].type, PERFDATA_RECORD_HEADER_BUILD_ID);
	cr_assert_str_eq(str_at(&recs[2], 36), "/nonexistent/app (deleted)");
}

__attribute__((noinline)) static int in_this_binary(void)
{
	return 7;
}

/* The real thing: this process through the real /proc. */
Test(tasks, real_proc_self)
{
	struct task_tracker_opts o = { 0 };
	uint64_t ips[] = { (uint64_t)(uintptr_t)&in_this_binary };
	uint32_t pid = (uint32_t)getpid();
	char comm[16] = { 0 };
	bool seen_exe = false, seen_libc = false;
	size_t n, i;
	FILE *f;

	f = fopen("/proc/self/comm", "r");
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';

	cr_assert_eq(task_tracker_new(&o, &tt), 0);
	cr_assert_eq(emit_task(w, tt, pid, pid, comm, 42, 0, ips, 1), 0);
	n = take();
	cr_assert_gt(n, 3);
	assert_comm(&recs[0], pid, pid, comm, false, 42, 0);
	for (i = 1; i < n && recs[i].type == PERF_RECORD_MMAP2; i++) {
		const struct trip_rec *r = &recs[i];
		uint64_t start = u64_at(r, 16), len = u64_at(r, 24);

		cr_assert(u32_at(r, 64) & PROT_EXEC);
		if (!strcmp(str_at(r, 72), exe) && ips[0] >= start && ips[0] < start + len) {
			struct mmap2_want want = { pid, pid, start, len, u64_at(r, 32),
						   u32_at(r, 64), MAP_PRIVATE, exe, exe, 0, 0, 0 };

			assert_mmap2(r, &want, 42, 0);
			seen_exe = true;
		}
		if (!strcmp(str_at(r, 72), libc_path))
			seen_libc = true;
	}
	cr_assert(seen_exe, "no MMAP2 for %s", exe);
	cr_assert(seen_libc, "no MMAP2 for %s", libc_path);
	/* Then the build-id of the one file with a sample. */
	cr_assert_eq(i, n - 1);
	assert_build_id(&recs[n - 1], exe);
	(void)in_this_binary();
}

Test(tasks, vdso_build_id)
{
	static const char maps[] =
		"08048000-08049000 r-xp 00000000 fe:01 88 /opt/app32\n"
		"f7fc1000-f7fc3000 r-xp 00000000 00:00 0 [vdso]\n";
	uint64_t in_vdso[] = { VDSO_START + 0x10 };
	struct mmap2_want vdso32 = { 7000, 7000, 0xf7fc1000, 0x2000, 0, PROT_READ | PROT_EXEC,
				     MAP_PRIVATE, "[vdso]", NULL, 0, 0, 0 };

	make_blob();
	fake_proc(1000, app_maps(), "app");
	fake_proc(7000, maps, "app32");
	new_tracker(0);
	/* A sample in the vDSO lists its build-id under "[vdso]", as perf does. */
	cr_assert_eq(see_take(1000, 1000, "app", 1, 0, in_vdso, 1), 7);
	check_app_mmaps(1, 1000, 1000, 1, 0);
	assert_build_id(&recs[6], "[vdso]");
	/* A 32-bit process has another vDSO image: no build-id we could vouch for. */
	cr_assert_eq(see_take(7000, 7000, "app32", 2, 0, NULL, 0), 3);
	assert_mmap2(&recs[2], &vdso32, 2, 0);
}

/* ---- what the kernel reports (side-band MMAP2 and exec) ------------------------ */

/* An executable mapping of exe at start, as an MMAP2 record gives it. */
/* A mapping of this test binary as the kernel reports it: its real device and inode. */
static struct procmaps_entry exe_mapping(uint64_t start, uint64_t len, uint64_t pgoff)
{
	unsigned int maj, min;
	unsigned long long ino;

	cr_assert_eq(sscanf(exe_id, "%x:%x %llu", &maj, &min, &ino), 3);
	return (struct procmaps_entry){
		.start = start, .end = start + len, .pgoff = pgoff, .maj = maj, .min = min,
		.ino = ino, .prot = PROT_READ | PROT_EXEC, .flags = MAP_PRIVATE, .path = exe,
	};
}

static void report_exec(uint32_t pid, uint64_t time)
{
	struct procmaps_entry app = exe_mapping(APP_START, APP_END - APP_START, 0x1000);
	struct procmaps_entry data = app;

	task_tracker_exec_begin(tt, pid, time);
	cr_assert_eq(report_mmap(pid, pid, &app, time, 0), 0);
	/* Not executable, and a pseudo file: neither is kept. */
	data.prot = PROT_READ | PROT_WRITE;
	cr_assert_eq(report_mmap(pid, pid, &data, time, 0), 0);
	data = app;
	data.start = 0xffffffffff600000ull;
	data.end = data.start + 0x1000;
	data.path = "[vsyscall]";
	cr_assert_eq(report_mmap(pid, pid, &data, time, 0), 0);
	/* The BPF notice comes after the image is mapped: already handled. */
	task_tracker_exec(tt, pid, time);
}

/* pid, forked by init, execs the app at `time`: as the kernel reports it. */
static void spawn(uint32_t pid, uint64_t time)
{
	task_tracker_fork(tt, pid, pid, 1);
	report_exec(pid, time);
}

/* No /proc/7000 in the fake root: the process is gone before its first sample is written. */
Test(tasks, process_gone_before_its_sample_resolves_from_kernel_reports)
{
	uint64_t ips[] = { APP_START + 0x10 };
	struct mmap2_want want = rx_map(7000, 7000, APP_START, APP_END - APP_START, 0x1000, exe);

	new_tracker(0);
	spawn(7000, 100);
	cr_assert_eq(take(), 0, "nothing is written before a sample");
	task_tracker_exit(tt, 7000, 7000);
	/* A sample stamped before the exit, arriving in the next batch. */
	task_tracker_round_end(tt);
	cr_assert_eq(see_take(7000, 7000, "short", 150, 1, ips, 1), 3);
	assert_comm(&recs[0], 7000, 7000, "short", true, 150, 1);
	assert_mmap2(&recs[1], &want, 150, 1);
	assert_build_id(&recs[2], exe);
}

Test(tasks, unsampled_process_leaves_nothing)
{
	struct task_tracker_stats st;

	new_tracker(0);
	spawn(7001, 100);
	task_tracker_stats(tt, &st);
	cr_assert_eq(st.procs, 1);
	cr_assert_eq(st.maps, 1);
	task_tracker_exit(tt, 7001, 7001);
	rounds_pass();
	task_tracker_stats(tt, &st);
	cr_assert_eq(st.procs, 0);
	cr_assert_eq(st.maps, 0);
	cr_assert_eq(take(), 0);
}

/* Out of scope (not -a, never announced by a fork): reports are dropped. */
Test(tasks, reports_for_pids_out_of_scope_are_dropped)
{
	struct procmaps_entry app = exe_mapping(APP_START, APP_END - APP_START, 0x1000);
	struct task_tracker_stats st;

	new_tracker(0);
	task_tracker_exec_begin(tt, 7002, 1);
	cr_assert_eq(report_mmap(7002, 7002, &app, 1, 0), 0);
	task_tracker_stats(tt, &st);
	cr_assert_eq(st.procs, 0);
}

/* A mapping over part of another replaces that part (ld.so maps a reserve, then segments). */
Test(tasks, reported_mapping_over_another_splits_it)
{
	struct task_tracker_opts o = { .proc_root = root, .track_all = true, .now = fake_now };
	struct procmaps_entry big = exe_mapping(0x10000, 0x10000, 0);
	struct procmaps_entry mid = exe_mapping(0x14000, 0x4000, 0x8000);
	uint64_t ips[] = { 0x10010 };
	struct mmap2_want want = rx_map(7003, 7003, 0, 0, 0, exe);
	const uint64_t starts[] = { 0x10000, 0x14000, 0x18000 };
	const uint64_t lens[] = { 0x4000, 0x4000, 0x8000 };
	const uint64_t pgoffs[] = { 0, 0x8000, 0x8000 };

	cr_assert_eq(task_tracker_new(&o, &tt), 0);
	task_tracker_exec_begin(tt, 7003, 1);
	cr_assert_eq(report_mmap(7003, 7003, &big, 1, 0), 0);
	cr_assert_eq(report_mmap(7003, 7003, &mid, 2, 0), 0);
	cr_assert_eq(see_take(7003, 7003, "split", 3, 0, ips, 1), 5);
	for (size_t i = 0; i < 3; i++) {
		want.start = starts[i];
		want.len = lens[i];
		want.pgoff = pgoffs[i];
		assert_mmap2(&recs[1 + i], &want, 3, 0);
	}
}

/* Already sampled (in the middle of its exec, or a dlopen): the report is written at once. */
Test(tasks, reported_mapping_of_a_sampled_process_is_written_at_once)
{
	struct task_tracker_opts o = { .proc_root = root, .track_all = true, .now = fake_now };
	struct procmaps_entry lib = exe_mapping(0x7f0000500000ull, 0x1000, 0);
	uint64_t ips[] = { 0x7f0000500010ull };
	struct mmap2_want want = rx_map(7004, 7005, 0x7f0000500000ull, 0x1000, 0, exe);

	cr_assert_eq(task_tracker_new(&o, &tt), 0);
	task_tracker_exec_begin(tt, 7004, 1);
	cr_assert_eq(see_take(7004, 7004, "mid-exec", 1, 0, NULL, 0), 1, "a COMM, no mappings yet");
	cr_assert_eq(report_mmap(7004, 7005, &lib, 2, 1), 0);
	cr_assert_eq(take(), 1);
	assert_mmap2(&recs[0], &want, 2, 1);
	cr_assert_eq(see_take(7004, 7004, "mid-exec", 3, 0, ips, 1), 1, "only the build-id: no re-read, the ip is mapped");
	assert_build_id(&recs[0], exe);
}

/* The exec flag survives any number of other processes' execs before the first sample. */
Test(tasks, exec_flag_kept_per_process)
{
	struct task_tracker_opts o = { .proc_root = root, .track_all = true, .now = fake_now };

	cr_assert_eq(task_tracker_new(&o, &tt), 0);
	for (uint32_t pid = 8000; pid < 8200; pid++)
		task_tracker_exec_begin(tt, pid, 1);
	cr_assert_eq(see_take(8000, 8000, "first", 1, 0, NULL, 0), 1);
	assert_comm(&recs[0], 8000, 8000, "first", true, 1, 0);
}

/* A child that never execs runs its parent's image. */
Test(tasks, forked_child_inherits_its_parents_mappings)
{
	uint64_t ips[] = { APP_START + 0x10 };
	struct mmap2_want want = rx_map(7011, 7011, APP_START, APP_END - APP_START, 0x1000, exe);

	new_tracker(0);
	spawn(7010, 100);
	task_tracker_fork(tt, 7011, 7011, 7010);
	task_tracker_exit(tt, 7011, 7011);
	cr_assert_eq(see_take(7011, 7011, "child", 200, 0, ips, 1), 3);
	assert_comm(&recs[0], 7011, 7011, "child", false, 200, 0);
	assert_mmap2(&recs[1], &want, 200, 0);
}

/*
 * Many short-lived processes, as a build makes them: forked, exec'd, mapped,
 * some sampled (also after their exit, in the next batch), some not, a few
 * with threads. Once they have all exited and two rounds have passed, the
 * tracker holds what it held before them.
 */
static void short_lived_wave(uint32_t first_pid, unsigned int n, uint64_t *time)
{
	uint64_t ips[] = { APP_START + 0x10, 0x7f0000500010ull };
	struct procmaps_entry lib = exe_mapping(0x7f0000500000ull, 0x1000, 0);

	for (unsigned int i = 0; i < n; i++) {
		uint32_t pid = first_pid + 2 * i;

		spawn(pid, (*time)++);
		cr_assert_eq(report_mmap(pid, pid, &lib, (*time)++, 0), 0);
		if (i % 3)
			cr_assert_eq(see(pid, pid, "cc1", (*time)++, 0, ips, 2), 0);
		if (i % 5 == 0) {
			task_tracker_fork(tt, pid, pid + 1, pid);
			cr_assert_eq(see(pid, pid + 1, "worker", (*time)++, 0, ips, 2), 0);
			task_tracker_exit(tt, pid, pid + 1);
		}
		if (i % 64 == 63)
			task_tracker_round_end(tt);
	}
	for (unsigned int i = 0; i < n; i++)
		task_tracker_exit(tt, first_pid + 2 * i, first_pid + 2 * i);
	task_tracker_round_end(tt);
	/* Late samples, one batch after the exits; some in the exit path (no user ips). */
	for (unsigned int i = 0; i < n; i += 7)
		cr_assert_eq(see(first_pid + 2 * i, first_pid + 2 * i, "cc1", (*time)++, 0, ips,
				 i % 2 ? 2 : 0), 0);
	task_tracker_round_end(tt);
}

Test(tasks, short_lived_processes_leave_no_state)
{
	struct task_tracker_opts o = { .proc_root = root, .track_all = true, .now = fake_now };
	struct task_tracker_stats base, st;
	uint64_t time = 1;

	cr_assert_eq(task_tracker_new(&o, &tt), 0);
	/* A first wave creates the file entries, which stay (one per distinct file). */
	short_lived_wave(100000, 10, &time);
	take();
	task_tracker_stats(tt, &base);
	cr_assert_eq(base.procs, 0);
	cr_assert_eq(base.threads, 0);
	cr_assert_eq(base.maps, 0);
	for (unsigned int wave = 0; wave < 20; wave++) {
		short_lived_wave(200000 + wave * 2000, 500, &time);
		task_tracker_stats(tt, &st);
		cr_assert_eq(st.procs, 0, "wave %u: %zu processes left", wave, st.procs);
		cr_assert_eq(st.threads, 0, "wave %u: %zu threads left", wave, st.threads);
		cr_assert_eq(st.dead, 0);
		cr_assert_eq(st.maps, 0);
		cr_assert_eq(st.files, base.files);
		cr_assert_eq(st.bytes, base.bytes, "wave %u: %zu bytes, %zu before", wave,
			     st.bytes, base.bytes);
		take();
	}
}

/*
 * A process in a container whose /app is a symlink to a host binary, with a
 * maps line naming that binary's device and inode: the tracker must not
 * follow the link out of the container (the old /proc/PID/root<path>
 * fallback did). And a file whose inode is not the maps line's: no build-id
 * either. Both MMAP2s then carry maj/min/ino instead.
 */
Test(tasks, no_build_id_from_outside_the_root_or_another_inode)
{
	char ctr[PATH_MAX], link[PATH_MAX], rootlink[PATH_MAX], maps[3 * PATH_MAX];
	unsigned int maj, min;
	unsigned long long ino;
	uint64_t ips[] = { 0x7f0000500010ull, 0x7f0000600010ull };

	cr_assert_eq(sscanf(exe_id, "%x:%x %llu", &maj, &min, &ino), 3);
	FMT(ctr, "%s/ctr", root);
	cr_assert_eq(mkdir(ctr, 0755), 0);
	FMT(link, "%s/app", ctr);
	cr_assert_eq(symlink(exe, link), 0);
	FMT(maps, "7f0000500000-7f0000501000 r-xp 00000000 %s /app\n"
		  "7f0000600000-7f0000601000 r-xp 00000000 %x:%x %llu %s\n",
	    exe_id, maj, min, ino + 1, libc_path);
	FMT(rootlink, "%s/8000", root);
	cr_assert_eq(mkdir(rootlink, 0755), 0);
	FMT(rootlink, "%s/8000/root", root);
	cr_assert_eq(symlink(ctr, rootlink), 0);
	fake_proc(8000, maps, "c");
	new_tracker(0);
	cr_assert_eq(see(8000, 8000, "c", 1, 0, ips, 2), 0);
	/* COMM and two MMAP2s; no BUILD_ID record, as neither has one. */
	cr_assert_eq(take(), 3);
	{
		struct mmap2_want app = { 8000, 8000, 0x7f0000500000ull, 0x1000, 0,
					  PROT_READ | PROT_EXEC, MAP_PRIVATE, "/app", NULL,
					  maj, min, ino };
		struct mmap2_want lib = { 8000, 8000, 0x7f0000600000ull, 0x1000, 0,
					  PROT_READ | PROT_EXEC, MAP_PRIVATE, libc_path, NULL,
					  maj, min, ino + 1 };

		assert_mmap2(&recs[1], &app, 1, 0);
		assert_mmap2(&recs[2], &lib, 1, 0);
	}
}

/*
 * Maps the kernel refuses (pid 1's, to a process of another user without
 * capabilities) are counted for the recorder's warning, and the process is
 * described like a vanished one. Run in a child that gives up root if it
 * has it, so teardown keeps its privileges.
 */
Test(tasks, refused_maps_are_counted)
{
	pid_t child;
	int status;

	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		struct task_tracker_opts o = { 0 };
		struct task_tracker_denied d;
		uint64_t ips[] = { 0x401000 };

		if (getuid() == 0 && (setgroups(0, NULL) || setgid(65534) || setuid(65534)))
			_exit(2);
		if (task_tracker_new(&o, &tt) ||
		    emit_task(w, tt, 1, 1, "init", 42, 0, ips, 1))
			_exit(3);
		task_tracker_denied(tt, &d);
		if (d.maps != 1 || d.maps_pid != 1 || (d.maps_err != -EACCES && d.maps_err != -EPERM))
			_exit(4);
		_exit(perfdata_writer_checkpoint(w) ? 5 : 0);
	}
	cr_assert_eq(waitpid(child, &status, 0), child);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	cr_assert_eq(take(), 1, "pid 1 gets its COMM only");
	assert_comm(&recs[0], 1, 1, "init", false, 42, 0);
}

/* ---- hooks: what the in-kernel unwinder follows -------------------------------- */

struct hook_log {
	unsigned int changed, forgot, execs;
	uint32_t pid, exec_pid;
	uint64_t exec_time;
	size_t nr;		/* mappings in the last call */
	uint64_t first_start;
	char first_path[PATH_MAX];
};

static void log_maps_changed(void *ctx, uint32_t pid, const struct procmaps_entry *maps,
			     struct task_file *const *files, size_t nr)
{
	struct hook_log *l = ctx;

	l->changed++;
	l->pid = pid;
	l->nr = nr;
	for (size_t i = 0; i < nr; i++) {
		cr_assert(maps[i].prot & PROT_EXEC, "only executable mappings are told");
		cr_assert(files[i] && files[i]->ino == maps[i].ino && !strcmp(files[i]->path, maps[i].path),
			  "each mapping with its file's entry");
	}
	l->first_start = nr ? maps[0].start : 0;
	snprintf(l->first_path, sizeof(l->first_path), "%s", nr ? maps[0].path : "");
}

static void log_forget(void *ctx, uint32_t pid)
{
	struct hook_log *l = ctx;

	l->forgot++;
	l->pid = pid;
}

static void log_exec(void *ctx, uint32_t pid, uint64_t time)
{
	struct hook_log *l = ctx;

	l->execs++;
	l->exec_pid = pid;
	l->exec_time = time;
}

static const struct task_tracker_hooks log_hooks = {
	.maps_changed = log_maps_changed,
	.forget = log_forget,
	.exec = log_exec,
};

static void new_hooked_tracker(struct hook_log *l, bool track_all)
{
	struct task_tracker_opts o = {
		.proc_root = root, .track_all = track_all, .hooks = &log_hooks, .hooks_ctx = l,
		.now = fake_now,
	};

	memset(l, 0, sizeof(*l));
	cr_assert_eq(task_tracker_new(&o, &tt), 0);
}

/* A process in scope is told from the kernel's reports, before its first sample. */
Test(tasks, hooks_follow_reported_mappings_before_samples)
{
	struct hook_log l;

	new_hooked_tracker(&l, false);
	task_tracker_fork(tt, 7100, 7100, 1);
	cr_assert_eq(l.changed, 0, "no mappings known yet");
	report_exec(7100, 100);
	cr_assert_geq(l.changed, 1);
	cr_assert_eq(l.pid, 7100);
	cr_assert_eq(l.nr, 1, "the data and pseudo mappings are not told");
	cr_assert_eq(l.first_start, APP_START);
	cr_assert_str_eq(l.first_path, exe);
	cr_assert_eq(take(), 0, "telling the hooks writes nothing");
	/* Gone after the round that follows its exit. */
	task_tracker_exit(tt, 7100, 7100);
	cr_assert_eq(l.forgot, 0, "late samples may still come");
	rounds_pass();
	cr_assert_eq(l.forgot, 1);
	cr_assert_eq(l.pid, 7100);
}

/*
 * Every report of an exec reaches the hooks with its time, also of a process
 * the tracker does not know (--alloc: what it held before went with the
 * old image, whether or not the file describes it).
 */
Test(tasks, hooks_told_of_every_exec_with_its_time)
{
	struct hook_log l;

	new_hooked_tracker(&l, false);
	task_tracker_exec(tt, 7150, 500);
	cr_assert_eq(l.execs, 1, "an exec of an unknown process is told");
	cr_assert_eq(l.exec_pid, 7150);
	cr_assert_eq(l.exec_time, 500);
	task_tracker_exec_begin(tt, 7151, 600);
	cr_assert_eq(l.execs, 2, "the kernel's COMM exec of a process out of scope is told");
	cr_assert_eq(l.exec_pid, 7151);
	cr_assert_eq(l.exec_time, 600);
	task_tracker_fork(tt, 7152, 7152, 1);
	task_tracker_exec_begin(tt, 7152, 700);
	task_tracker_exec(tt, 7152, 710);
	cr_assert_eq(l.execs, 4, "both reports of one exec are told");
	cr_assert_eq(l.exec_time, 710);
	task_tracker_exec(tt, 0, 800);
	cr_assert_eq(l.execs, 4, "pid 0 is no process");
	cr_assert_eq(take(), 0, "telling the hooks writes nothing");
}

/* -a: the kernel reports every process; only sampled ones are worth tables. */
Test(tasks, hooks_wait_for_a_sample_with_track_all)
{
	uint64_t ips[] = { APP_START + 0x10 };
	struct hook_log l;

	new_hooked_tracker(&l, true);
	report_exec(7101, 100);
	cr_assert_eq(l.changed, 0);
	cr_assert_eq(see(7101, 7101, "app", 150, 0, ips, 1), 0);
	cr_assert_eq(l.changed, 1);
	cr_assert_eq(l.nr, 1);
}

/* root/PID/task/TID/comm, the name of one thread. */
static void fake_thread_comm(unsigned int pid, unsigned int tid, const char *comm)
{
	char path[PATH_MAX], line[64];

	FMT(path, "%s/%u/task", root, pid);
	mkdir(path, 0755);
	FMT(path, "%s/%u/task/%u", root, pid, tid);
	mkdir(path, 0755);
	FMT(path, "%s/%u/task/%u/comm", root, pid, tid);
	FMT(line, "%s\n", comm);
	write_text(path, line);
}

/*
 * A process whose samples wait (late samples ahead of them): its maps are
 * read from /proc and its tables start, also with -a, and nothing is
 * written; the description that follows uses them even once it is gone.
 */
Test(tasks, prefetch_reads_maps_and_tells_the_hooks_without_writing)
{
	uint64_t ips[] = { APP_START + 0x123, 0 };
	struct hook_log l;
	char path[PATH_MAX];

	make_blob();
	new_hooked_tracker(&l, true);
	fake_proc(7200, app_maps(), "app");
	fake_thread_comm(7200, 7200, "app");
	task_tracker_prefetch(tt, 7200, 7200, "app");
	cr_assert_eq(l.changed, 1, "-a: the tables start before the description");
	cr_assert_eq(l.pid, 7200);
	cr_assert_eq(l.first_start, APP_START);
	cr_assert_eq(take(), 0, "nothing written");
	/* Again: nothing new. */
	task_tracker_prefetch(tt, 7200, 7200, "app");
	cr_assert_eq(l.changed, 1);
	/* Gone from /proc before its sample is written: the maps read before describe it. */
	FMT(path, "%s/7200/maps", root);
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(see_take(7200, 7200, "app", 5000, 1, ips, 2), 7);
	assert_comm(&recs[0], 7200, 7200, "app", false, 5000, 1);
	check_app_mmaps(1, 7200, 7200, 5000, 1);
}

/*
 * The exec's reports (COMM exec, the BPF notice) come in their turn, after
 * what read the new image from /proc ahead of them: a launched command's
 * first sample read ahead (early_turns()). They must not forget what the
 * hooks built from it (its unwind tables, its Python frames): the process
 * is kept, and its COMM says it exec'd. An exec after the read is another
 * image, and one already described is forgotten: as ever.
 */
Test(tasks, exec_reported_after_its_image_was_read_keeps_the_process)
{
	uint64_t ips[] = { APP_START + 0x123 };
	struct procmaps_entry app = exe_mapping(APP_START, APP_END - APP_START, 0x1000);
	struct hook_log l;

	make_blob();
	new_hooked_tracker(&l, false);
	/* Read ahead for its sample at 2000, at 2100; its exec was at 1500. */
	task_tracker_fork(tt, 7210, 7210, 1);
	fake_proc(7210, app_maps(), "app");
	fake_thread_comm(7210, 7210, "app");
	fake_clock = 2100;
	task_tracker_prefetch(tt, 7210, 7210, "app");
	cr_assert_eq(l.changed, 1);
	task_tracker_exec_begin(tt, 7210, 1500);
	cr_assert_eq(report_mmap(7210, 7210, &app, 1500, 0), 0);
	task_tracker_exec(tt, 7210, 1500);
	cr_assert_eq(l.forgot, 0, "the image read after the exec is the exec's");
	cr_assert_eq(see_take(7210, 7210, "app", 2000, 1, ips, 1), 7);
	assert_comm(&recs[0], 7210, 7210, "app", true, 2000, 1);
	check_app_mmaps(1, 7210, 7210, 2000, 1);
	/* A later exec than that read is another image. */
	task_tracker_exec(tt, 7210, 3000);
	cr_assert_eq(l.forgot, 1);

	/*
	 * Its launcher's sample at 1000 described at 1600, /proc having the
	 * app since 1500: described already, it is forgotten at the exec and
	 * described afresh, its COMM exec first (tracer records between
	 * would otherwise be the launcher's).
	 */
	task_tracker_fork(tt, 7211, 7211, 1);
	fake_proc(7211, app_maps(), "app");
	fake_clock = 1600;
	cr_assert_eq(see_take(7211, 7211, "launcher", 1000, 1, NULL, 0), 6);
	assert_comm(&recs[0], 7211, 7211, "launcher", false, 1000, 1);
	task_tracker_exec_begin(tt, 7211, 1500);
	task_tracker_exec(tt, 7211, 1500);
	cr_assert_eq(l.forgot, 2, "described already: forgotten at its exec");
	cr_assert_geq(see_take(7211, 7211, "app", 2000, 1, ips, 1), 1);
	assert_comm(&recs[0], 7211, 7211, "app", true, 2000, 1);
}

/* A thread with another name now exec'd since: /proc has the next image. */
Test(tasks, prefetch_leaves_a_process_that_exec_d_since)
{
	struct hook_log l;

	new_hooked_tracker(&l, true);
	fake_proc(7201, app_maps(), "next");
	fake_thread_comm(7201, 7201, "next");
	task_tracker_prefetch(tt, 7201, 7201, "launcher");
	cr_assert_eq(l.changed, 0);
	cr_assert_eq(take(), 0);
	/* No such thread: nothing either. */
	task_tracker_prefetch(tt, 7201, 7299, "next");
	cr_assert_eq(l.changed, 0);
}

/*
 * An mmap report that waits behind a late sample: a process not described
 * yet gets the mapping (and its tables) at once; one not known yet, or
 * already described, is left to the report's turn.
 */
Test(tasks, early_mmaps_reach_the_hooks_of_undescribed_processes_only)
{
	uint64_t ips[] = { APP_START + 0x10 };
	struct procmaps_entry lib = exe_mapping(0x7f0000500000ull, 0x8000, 0x2000);
	struct hook_log l;

	new_hooked_tracker(&l, false);
	task_tracker_mmap_early(tt, 7300, &lib);
	cr_assert_eq(l.changed, 0, "unknown: its fork or exec comes first");
	spawn(7300, 100);
	cr_assert_eq(l.nr, 1);
	task_tracker_mmap_early(tt, 7300, &lib);
	cr_assert_eq(l.nr, 2, "the library joins its mappings");
	cr_assert_eq(l.first_start, APP_START);
	cr_assert_eq(take(), 0, "nothing written");
	/* Described: later reports go in in their turn, written. */
	fake_proc(7301, app_maps(), "app");
	cr_assert_eq(see(7301, 7301, "app", 150, 0, ips, 1), 0);
	(void)take();
	l.changed = 0;
	task_tracker_mmap_early(tt, 7301, &lib);
	cr_assert_eq(l.changed, 0);
	cr_assert_eq(take(), 0);
}

/* First sample of a process described from /proc; a dlopen re-read tells again. */
Test(tasks, hooks_follow_proc_maps_and_rereads)
{
	uint64_t ips[] = { APP_START + 0x123 };
	uint64_t lib_ip[] = { 0x7f0000500000ull + 0x10 };
	struct hook_log l;
	char lib[PATH_MAX];

	make_blob();
	fake_proc(1100, app_maps(), "app");
	new_hooked_tracker(&l, false);
	cr_assert_eq(see(1100, 1100, "app", 5000, 1, ips, 1), 0);
	cr_assert_eq(l.changed, 1);
	cr_assert_eq(l.nr, 5, "exe, libc, blob, anon, vdso: every executable mapping");
	FMT(lib, "%s", libc_path);
	fake_proc(1100, app_maps_plus_lib(lib), "app");
	cr_assert_eq(see(1100, 1100, "app", 5000 + 200000000ull, 1, lib_ip, 1), 0);
	cr_assert_eq(l.changed, 2);
	cr_assert_eq(l.nr, 6);
	/* exec: forgotten, then described afresh. */
	task_tracker_exec(tt, 1100, 5000 + 200000001ull);
	cr_assert_eq(l.forgot, 1);
}

/* A tracker freed for --switch-output leaves the processes (and their tables) alone. */
Test(tasks, hooks_not_told_when_the_tracker_is_freed)
{
	uint64_t ips[] = { APP_START + 0x123 };
	struct hook_log l;

	make_blob();
	fake_proc(1101, app_maps(), "app");
	new_hooked_tracker(&l, false);
	cr_assert_eq(see(1101, 1101, "app", 5000, 1, ips, 1), 0);
	task_tracker_free(tt);
	tt = NULL;
	cr_assert_eq(l.forgot, 0);
}
