// SPDX-License-Identifier: MIT
/*
 * perfdata-synth - write a synthetic recording with the perfdata writer, for
 * checking the writer against the stock perf tools.
 *
 *   perfdata-synth -o OUT|- --elf PATH [--pipe] [--pid N] [--lost N]
 *                  [--snapshot COPY [--snapshot-at N]] [--alloc BYTES] [--sched]
 *                  [--generate SAMPLES:STACKS:PREFIX] [--cache DIR] STACK...
 *
 * STACK is "COUNT:FRAME,FRAME,..." leaf first; a FRAME is "u:SYMBOL" (a
 * function of --elf, mapped as a running process would map it) or
 * "k:SYMBOL" (a kernel function from /proc/kallsyms). A stack whose leaf is
 * a kernel frame is a kernel-mode sample. The tool writes what a recorder
 * writes: the kernel MMAP, COMM, an MMAP2 with the ELF's build-id, samples
 * in time-sorted rounds, and LOST_SAMPLES. --snapshot copies the file after
 * the last checkpoint and before finish (what a killed recorder leaves);
 * with --snapshot-at N it does so right after the round holding sample N.
 *
 * A FRAME "p:NAME@FILE:LINE" is a Python function as the recorder writes
 * one (symbolize/pysyms.h): every such function goes into one Python
 * symbol file, filed in the build-id cache (--cache DIR, default
 * $HOME/.debug) through recorder/pysyms_cache.h, and mapped by an MMAP2
 * with its build-id at PY_SYMFILE_MAP_BASE. Each function gets 0x100
 * bytes; each distinct LINE of it a 0x10-byte row, in order of first use;
 * a frame is at its row's offset, as py_symfile_frame() writes it.
 *
 * --alloc BYTES adds the allocation events of `record --alloc=BYTES`
 * (perfdata/events.h) and allows allocation stacks,
 * "alloc:FUNC:SIZE:COUNT:FRAME,..." or "inuse:FUNC:SIZE:COUNT:FRAME,...":
 * COUNT samples of that event with RAW "FUNC SIZE" and the period the
 * contract gives a SIZE-byte allocation at that interval. inuse samples
 * come last, as a recorder writes them at its end.
 *
 * --sched adds the sched-delay event of `record --sched` (perfdata/events.h)
 * and allows run-queue wait stacks, "sched:REASON:NS:COUNT:FRAME,...":
 * COUNT waits of NS nanoseconds each with RAW "REASON" (preempted, woken).
 *
 * --generate SAMPLES:STACKS:PREFIX writes SAMPLES cpu-clock samples over
 * exactly STACKS distinct call chains instead of STACK arguments, for
 * benchmarks that need a large input independent of the machine's speed.
 * The frames are the --elf functions whose names start with PREFIX (e.g.
 * tests/fixtures/synth_wide.c's 10,000), so perf resolves every frame to a
 * real symbol. Stack i is a tree path: two fixed outer frames, then one
 * frame per decimal digit of i (siblings always differ, so the STACKS
 * paths are distinct), then a tail of 0-8 frames that depends on i only.
 * Every stack gets one sample and the rest go Zipf-like (weight 1/rank,
 * ranks scattered over the tree), so a few paths are wide and most are
 * narrow, as in a real profile; the samples come in a shuffled order.
 * Everything is seeded: the same arguments give the same file.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "perfdata/events.h"
#include "perfdata/writer.h"
#include "recorder/buildid_cache.h"
#include "recorder/pysyms_cache.h"
#include "symbolize/buildid.h"
#include "symbolize/pysyms.h"

#define USER_BASE 0x555555554000ull
#define MAX_FRAMES 64
#define EVENT_ID 42
#define ALLOC_ID 43
#define INUSE_ID 44
#define SCHED_ID 45

struct elf_info {
	uint64_t seg_vaddr, seg_offset, seg_memsz;	/* the executable PT_LOAD */
	uint8_t build_id[BUILDID_MAX];
	size_t build_id_size;
	Elf *elf;
	int fd;
};

static int die(const char *what)
{
	fprintf(stderr, "perfdata-synth: %s\n", what);
	exit(2);
}

static void check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "perfdata-synth: %s: %s\n", what, strerror(-err));
		exit(1);
	}
}

static void elf_open_info(const char *path, struct elf_info *ei)
{
	size_t n;

	elf_version(EV_CURRENT);
	ei->fd = open(path, O_RDONLY);
	if (ei->fd < 0)
		die("cannot open --elf file");
	ei->elf = elf_begin(ei->fd, ELF_C_READ, NULL);
	if (!ei->elf || elf_getphdrnum(ei->elf, &n))
		die("not an ELF file");
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(ei->elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			ei->seg_vaddr = ph.p_vaddr;
			ei->seg_offset = ph.p_offset;
			ei->seg_memsz = ph.p_memsz;
			break;
		}
	}
	if (!ei->seg_memsz)
		die("no executable segment");
	if (buildid_read_file(path, ei->build_id, &ei->build_id_size))
		ei->build_id_size = 0;
}

/*
 * Call fn with each FUNC symbol of .symtab (its name and value, size) until
 * it returns true; true when one did. The walk both lookups below share.
 */
static bool for_each_function(struct elf_info *ei,
			      bool (*fn)(const char *name, const GElf_Sym *sym, void *ctx),
			      void *ctx)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(ei->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			s = elf_strptr(ei->elf, sh.sh_link, sym.st_name);
			if (s && fn(s, &sym, ctx))
				return true;
		}
	}
	return false;
}

struct symbol_lookup {
	const char *name;
	uint64_t value;
};

static bool is_symbol(const char *name, const GElf_Sym *sym, void *ctx)
{
	struct symbol_lookup *l = ctx;

	if (strcmp(name, l->name))
		return false;
	l->value = sym->st_value;
	return true;
}

/* Value of a function symbol in .symtab; dies when missing. */
static uint64_t elf_symbol(struct elf_info *ei, const char *name)
{
	struct symbol_lookup l = { name, 0 };

	if (for_each_function(ei, is_symbol, &l))
		return l.value;
	fprintf(stderr, "perfdata-synth: no symbol %s\n", name);
	exit(2);
}

/* Addresses of the FUNC symbols whose names start with prefix, in name order. */
struct named_addr {
	const char *name;
	uint64_t addr;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct named_addr *)a)->name, ((const struct named_addr *)b)->name);
}

struct prefix_walk {
	const char *prefix;
	size_t plen;
	struct named_addr *f;
	size_t n, cap;
};

static bool add_prefixed(const char *name, const GElf_Sym *sym, void *ctx)
{
	struct prefix_walk *w = ctx;

	if (strncmp(name, w->prefix, w->plen) || sym->st_size < 6)
		return false;
	if (w->n == w->cap &&
	    !(w->f = realloc(w->f, (w->cap = w->cap ? 2 * w->cap : 1024) * sizeof(*w->f))))
		die("out of memory");
	w->f[w->n++] = (struct named_addr){ name, sym->st_value };
	return false;
}

static uint64_t *elf_functions(struct elf_info *ei, const char *prefix, size_t *nr)
{
	struct prefix_walk w = { .prefix = prefix, .plen = strlen(prefix) };
	uint64_t *addrs;

	for_each_function(ei, add_prefixed, &w);
	if (w.n < 16)
		die("--generate: the --elf file has fewer than 16 functions named PREFIX*");
	qsort(w.f, w.n, sizeof(*w.f), by_name);
	addrs = malloc(w.n * sizeof(*addrs));
	if (!addrs)
		die("out of memory");
	for (size_t i = 0; i < w.n; i++)
		addrs[i] = w.f[i].addr;
	free(w.f);
	*nr = w.n;
	return addrs;
}

static uint64_t kallsyms_lookup(const char *name)
{
	char line[512], sym[256], type;
	unsigned long long addr;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		die("cannot read /proc/kallsyms");
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 && !strcmp(sym, name)) {
			fclose(f);
			if (!addr)
				die("kallsyms addresses are hidden (kptr_restrict)");
			return addr;
		}
	}
	fclose(f);
	fprintf(stderr, "perfdata-synth: no kernel symbol %s\n", name);
	exit(2);
}

static uint64_t kernel_build_id(uint8_t id[BUILDID_MAX], size_t *size)
{
	return buildid_read_kernel(NULL, id, size) ? (*size = 0) : *size;
}

/* The p: frames' functions; their frames are placeholders until the file is built. */
#define PY_MAX_FUNCS 32
#define PY_MAX_LINES 8
#define PY_FUNC_SIZE 0x100
#define PY_ROW_SIZE 0x10
#define PY_PLACEHOLDER 0xfeed000000000000ull

struct py_funcs {
	struct {
		char *name, *file;
		uint32_t lines[PY_MAX_LINES];
		size_t nr_lines;
	} f[PY_MAX_FUNCS];
	size_t nr;
};

/* "NAME@FILE:LINE" -> a placeholder frame for that function and line. */
static uint64_t py_frame(struct py_funcs *py, const char *spec)
{
	const char *at = strchr(spec, '@'), *colon = strrchr(spec, ':');
	unsigned long line;
	size_t i, k;

	if (!at || !colon || colon < at)
		die("a Python FRAME is p:NAME@FILE:LINE");
	line = strtoul(colon + 1, NULL, 10);
	for (i = 0; i < py->nr; i++)
		if (!strncmp(py->f[i].name, spec, (size_t)(at - spec)) &&
		    !py->f[i].name[at - spec] && !strncmp(py->f[i].file, at + 1, (size_t)(colon - at - 1)) &&
		    !py->f[i].file[colon - at - 1])
			break;
	if (i == py->nr) {
		if (i == PY_MAX_FUNCS)
			die("too many Python functions");
		py->f[i].name = strndup(spec, (size_t)(at - spec));
		py->f[i].file = strndup(at + 1, (size_t)(colon - at - 1));
		py->nr++;
	}
	for (k = 0; k < py->f[i].nr_lines && py->f[i].lines[k] != line; k++)
		;
	if (k == py->f[i].nr_lines) {
		if (k == PY_MAX_LINES)
			die("too many lines in one Python function");
		py->f[i].lines[py->f[i].nr_lines++] = (uint32_t)line;
	}
	return PY_PLACEHOLDER | i << 8 | k;
}

/* The address of a placeholder frame once the symbol file is mapped at base. */
static uint64_t py_address(uint64_t frame, uint64_t base)
{
	return py_symfile_frame(base, PY_SYMFILE_TEXT_START + ((frame >> 8) & 0xff) * PY_FUNC_SIZE,
				(frame & 0xff) * PY_ROW_SIZE);
}

static bool is_py_placeholder(uint64_t frame)
{
	return (frame & 0xffff000000000000ull) == PY_PLACEHOLDER;
}

/* Build the symbol file of py, file it into the cache at dir; the MMAP2 filename and build-id. */
static uint64_t py_file(struct py_funcs *py, const char *dir, uint32_t pid, char *path,
			size_t path_size, uint8_t id[PY_SYMFILE_BUILD_ID_SIZE])
{
	struct buildid_cache_opts co = { .dir = dir, .log = stderr };
	struct buildid_cache *cache;
	struct py_symfile *sf;
	uint64_t len;
	int fd;

	check(py_symfile_new(&sf), "py_symfile_new");
	for (size_t i = 0; i < py->nr; i++) {
		struct py_symfile_row rows[PY_MAX_LINES];
		struct py_symfile_func f = {
			.start = PY_SYMFILE_TEXT_START + i * PY_FUNC_SIZE, .size = PY_FUNC_SIZE,
			.name = py->f[i].name, .file = py->f[i].file,
			.rows = rows, .nr_rows = py->f[i].nr_lines,
		};

		for (size_t k = 0; k < py->f[i].nr_lines; k++)
			rows[k] = (struct py_symfile_row){ (uint32_t)(k * PY_ROW_SIZE), py->f[i].lines[k] };
		check(py_symfile_add(sf, &f), "py_symfile_add");
	}
	check(buildid_cache_new(&co, &cache), "build-id cache");
	/* Its contents' build-id (a first write to learn it), as the same input always gives. */
	check(py_symfile_path(path, path_size, (pid_t)pid, 0), "py_symfile_path");
	fd = memfd_create("synth-pysyms", MFD_CLOEXEC);
	if (fd < 0)
		die("memfd_create failed");
	check(py_symfile_write(sf, path, fd, id), "py_symfile_write");
	close(fd);
	check(py_symfile_cache(sf, cache, path, id), "py_symfile_cache");
	buildid_cache_flush(cache);
	if (buildid_cache_stats(cache)->failed)
		die("the Python symbol file could not be filed");
	buildid_cache_free(cache);
	len = py_symfile_map_len(sf);
	py_symfile_free(sf);
	for (size_t i = 0; i < py->nr; i++) {
		free(py->f[i].name);
		free(py->f[i].file);
	}
	return len;
}

struct stack {
	unsigned long count;
	uint64_t chain[MAX_FRAMES + 2];
	size_t nr;
	bool kernel;
	uint64_t ip;
	uint64_t id;			/* EVENT_ID, ALLOC_ID, INUSE_ID or SCHED_ID */
	uint64_t period;		/* allocation and wait stacks; else 1 ms */
	char raw[96];			/* "FUNC SIZE" or "REASON", padded */
	uint32_t raw_size;
};

/*
 * The RAW text as perfdata/events.h defines it for bpfrec's BPF_OUTPUT
 * events: padded with spaces so that its NUL ends the 8-byte aligned RAW
 * field (perf prints it as a string then).
 */
static void raw_text(struct stack *st, const char *text)
{
	size_t n = strlen(text);

	if (n + 8 > sizeof(st->raw))
		die("RAW text too long");
	memcpy(st->raw, text, n);
	while ((n + 1 + 4) % 8)
		st->raw[n++] = ' ';
	st->raw[n] = '\0';
	st->raw_size = (uint32_t)n + 1;
}

/* The period of a sampled SIZE-byte allocation at interval rate, and its RAW text. */
static void alloc_sample(struct stack *st, const char *func, uint64_t size, uint64_t rate)
{
	char text[sizeof(st->raw)];

	if (rate <= 1)
		st->period = size;
	else
		st->period = (uint64_t)llround((double)size / -expm1(-(double)size / (double)rate));
	snprintf(text, sizeof(text), "%s %llu", func, (unsigned long long)size);
	raw_text(st, text);
}

/* "[alloc|inuse:FUNC:SIZE:|sched:REASON:NS:]COUNT:k:a,u:b,..." -> a perf
 * callchain with context markers. */
static void parse_stack(const char *spec, struct elf_info *ei, uint64_t rate, bool sched,
			struct py_funcs *py, struct stack *st)
{
	char *copy = strdup(spec), *save = NULL, *frame, *colon;
	uint64_t kern[MAX_FRAMES], user[MAX_FRAMES];
	size_t nk = 0, nu = 0;
	bool first = true;
	char *count = copy;

	st->id = EVENT_ID;
	st->period = 1000000;
	st->raw_size = 0;
	if (!strncmp(copy, "alloc:", 6) || !strncmp(copy, "inuse:", 6)) {
		char *func = copy + 6, *size = strchr(func, ':');

		if (!rate)
			die("allocation stacks need --alloc BYTES");
		st->id = copy[0] == 'a' ? ALLOC_ID : INUSE_ID;
		if (!size || !(count = strchr(size + 1, ':')))
			die("an allocation STACK is alloc|inuse:FUNC:SIZE:COUNT:FRAME,...");
		*size++ = '\0';
		*count++ = '\0';
		alloc_sample(st, func, strtoull(size, NULL, 10), rate);
	} else if (!strncmp(copy, "sched:", 6)) {
		char *reason = copy + 6, *ns = strchr(reason, ':');

		if (!sched)
			die("wait stacks need --sched");
		st->id = SCHED_ID;
		if (!ns || !(count = strchr(ns + 1, ':')))
			die("a wait STACK is sched:REASON:NS:COUNT:FRAME,...");
		*ns++ = '\0';
		*count++ = '\0';
		st->period = strtoull(ns, NULL, 10);
		raw_text(st, reason);
	}
	colon = strchr(count, ':');
	if (!colon)
		die("a STACK is COUNT:FRAME,...");
	*colon = '\0';
	st->count = strtoul(count, NULL, 10);
	for (frame = strtok_r(colon + 1, ",", &save); frame; frame = strtok_r(NULL, ",", &save)) {
		/* The leaf points into its function; callers at a return address inside theirs. */
		uint64_t off = first ? 1 : 5;

		if (!strncmp(frame, "k:", 2) && nk < MAX_FRAMES) {
			if (nu)
				die("kernel frames must come before user frames");
			kern[nk++] = kallsyms_lookup(frame + 2) + off;
		} else if (!strncmp(frame, "u:", 2) && nu < MAX_FRAMES) {
			user[nu++] = USER_BASE + elf_symbol(ei, frame + 2) + off;
		} else if (!strncmp(frame, "p:", 2) && nu < MAX_FRAMES) {
			user[nu++] = py_frame(py, frame + 2);
		} else {
			die("a FRAME is k:SYMBOL, u:SYMBOL or p:NAME@FILE:LINE");
		}
		first = false;
	}
	st->nr = 0;
	if (nk) {
		st->chain[st->nr++] = PERF_CONTEXT_KERNEL;
		memcpy(st->chain + st->nr, kern, nk * 8);
		st->nr += nk;
	}
	if (nu) {
		st->chain[st->nr++] = PERF_CONTEXT_USER;
		memcpy(st->chain + st->nr, user, nu * 8);
		st->nr += nu;
	}
	st->kernel = nk > 0;
	st->ip = nk ? kern[0] : user[0];
	free(copy);
}

/* ---- --generate: many distinct stacks, many samples ---- */

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

struct generator {
	unsigned long samples, stacks;
	const char *prefix;
	uint64_t *funcs;		/* the PREFIX* functions' addresses */
	size_t nr_funcs;
	unsigned digits;		/* decimal digits of stacks - 1 */
};

static void parse_generate(const char *spec, struct generator *g)
{
	char *end;

	g->samples = strtoul(spec, &end, 10);
	if (*end == ':')
		g->stacks = strtoul(end + 1, &end, 10);
	if (*end != ':' || !end[1] || !g->stacks || g->samples < g->stacks || g->stacks > 100000000)
		die("--generate SAMPLES:STACKS:PREFIX, with 1 <= STACKS <= SAMPLES");
	g->prefix = end + 1;
	g->digits = 1;
	for (unsigned long k = 10; k < g->stacks; k *= 10)
		g->digits++;
}

/* Stack i's user call chain, leaf first, as the recorder writes it; returns its length. */
static size_t generated_chain(const struct generator *g, unsigned long i, uint64_t *chain)
{
	uint64_t path[2 + 10 + 8], prefix = 0;
	size_t n = 0, tail = mix64(i ^ 0x7a11) % 9;

	path[n++] = g->funcs[0];
	path[n++] = g->funcs[1];
	for (unsigned l = 0, d; l < g->digits; l++) {
		unsigned long div = 1;

		for (unsigned k = l + 1; k < g->digits; k++)
			div *= 10;
		d = (unsigned)(i / div % 10);
		/* Siblings are a tenth of the functions apart: never the same one. */
		path[n++] = g->funcs[2 + (mix64(prefix * 16 + l) + d * ((g->nr_funcs - 2) / 10)) %
					   (g->nr_funcs - 2)];
		prefix = prefix * 10 + d;
	}
	for (size_t k = 0; k < tail; k++)
		path[n++] = g->funcs[2 + mix64((uint64_t)i * 16 + k + 0x5eed) % (g->nr_funcs - 2)];
	chain[0] = PERF_CONTEXT_USER;
	for (size_t k = 0; k < n; k++)	/* leaf at +1, callers at a return address */
		chain[1 + k] = USER_BASE + path[n - 1 - k] + (k ? 5 : 1);
	return n + 1;
}

/* Samples per stack: one each, the rest by 1/rank over ranks scattered by a prime stride. */
static uint32_t *generated_counts(const struct generator *g)
{
	unsigned long k = g->stacks, extra = g->samples - k, given = 0, stride = 7919;
	uint32_t *count = malloc(k * sizeof(*count));
	double harmonic = 0;

	if (!count)
		die("out of memory");
	while (k % stride == 0)
		stride += 2;
	for (unsigned long r = 0; r < k; r++)
		harmonic += 1.0 / (double)(r + 1);
	for (unsigned long r = 0; r < k; r++) {
		uint32_t c = (uint32_t)((double)extra / (double)(r + 1) / harmonic);

		count[r * stride % k] = 1 + c;
		given += c;
	}
	count[0] += (uint32_t)(extra - given);	/* rank 0 is stack 0 */
	return count;
}

static void write_generated(struct perfdata_writer *w, struct elf_info *ei, struct generator *g,
			    uint32_t pid, uint64_t *t)
{
	uint32_t *count, *order = malloc(g->samples * sizeof(*order));
	uint64_t chain[1 + 2 + 10 + 8], seed = 42;
	size_t n = 0;

	g->funcs = elf_functions(ei, g->prefix, &g->nr_funcs);
	if (g->digits > 10 || !order)
		die("--generate: too many stacks");
	count = generated_counts(g);
	for (unsigned long i = 0; i < g->stacks; i++)
		for (uint32_t c = 0; c < count[i]; c++)
			order[n++] = (uint32_t)i;
	for (size_t i = n - 1; i > 0; i--) {	/* Fisher-Yates, seeded */
		size_t j = (seed = mix64(seed)) % (i + 1);
		uint32_t x = order[i];

		order[i] = order[j];
		order[j] = x;
	}
	for (size_t i = 0; i < n; i++) {
		size_t nr = generated_chain(g, order[i], chain);
		struct perfdata_sample s = {
			.misc = PERF_RECORD_MISC_USER, .id = EVENT_ID, .ip = chain[1], .pid = pid,
			.tid = pid, .cpu = (uint32_t)(i % 2), .period = 1000000, .time = *t,
			.nr_callchain = nr, .callchain = chain,
		};

		*t += 1000000;
		check(perfdata_write_sample(w, &s), "sample");
		if ((i + 1) % 100 == 0)
			check(perfdata_write_finished_round(w), "round");
	}
	free(order);
	free(count);
	free(g->funcs);
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ssize_t n;

	if (in < 0 || out < 0)
		die("snapshot copy failed");
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			die("snapshot copy failed");
	close(in);
	close(out);
}

int main(int argc, char **argv)
{
	const char *out = NULL, *elf_path = NULL, *snapshot = NULL, *cache_dir = NULL;
	struct py_funcs py = { 0 };
	struct perfdata_writer_opts wo = { .argc = argc, .argv = (const char *const *)argv };
	struct stack stacks[32];
	size_t nr_stacks = 0;
	unsigned long pid = 4242, lost = 0, snapshot_at = 0, alloc_rate = 0;
	bool sched = false;
	struct generator gen = { 0 };
	struct elf_info ei = { 0 };
	struct perfdata_writer *w;
	int fd;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else if (!strcmp(argv[i], "--elf") && i + 1 < argc)
			elf_path = argv[++i];
		else if (!strcmp(argv[i], "--pipe"))
			wo.pipe = true;
		else if (!strcmp(argv[i], "--pid") && i + 1 < argc)
			pid = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--lost") && i + 1 < argc)
			lost = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--snapshot") && i + 1 < argc)
			snapshot = argv[++i];
		else if (!strcmp(argv[i], "--snapshot-at") && i + 1 < argc)
			snapshot_at = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--alloc") && i + 1 < argc)
			alloc_rate = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--sched"))
			sched = true;
		else if (!strcmp(argv[i], "--generate") && i + 1 < argc)
			parse_generate(argv[++i], &gen);
		else if (!strcmp(argv[i], "--cache") && i + 1 < argc)
			cache_dir = argv[++i];
		else if (argv[i][0] != '-' && nr_stacks < 32 && elf_path)
			parse_stack(argv[i], (ei.elf ? &ei : (elf_open_info(elf_path, &ei), &ei)),
				    alloc_rate, sched, &py, &stacks[nr_stacks++]);
		else
			die("usage: perfdata-synth -o OUT --elf PATH [--pipe] [--pid N] [--lost N] [--snapshot COPY [--snapshot-at N]] [--alloc BYTES] [--sched] [--generate SAMPLES:STACKS:PREFIX] [--cache DIR] STACK...");
	}
	if (!out || !elf_path || !(nr_stacks || gen.samples))
		die("need -o, --elf and at least one STACK (or --generate)");
	if (!ei.elf)
		elf_open_info(elf_path, &ei);

	fd = strcmp(out, "-") ? open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600) : 1;
	if (fd < 0)
		die("cannot create output");
	check(perfdata_writer_new(fd, &wo, &w), "writer");

	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = 1000,
		.freq = 1,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			       PERF_SAMPLE_CALLCHAIN,
		.sample_id_all = 1, .mmap = 1, .comm = 1, .mmap2 = 1, .comm_exec = 1, .task = 1,
		.use_clockid = 1, .clockid = CLOCK_MONOTONIC,
	};
	uint64_t id = EVENT_ID;

	check(perfdata_writer_add_event(w, "cpu-clock", &attr, &id, 1), "add event");
	if (alloc_rate) {
		/* As perfdata/events.h has them: BPF_OUTPUT, RAW, period = the interval. */
		struct perf_event_attr heap = attr;
		uint64_t alloc_id = ALLOC_ID, inuse_id = INUSE_ID;

		heap.config = PERF_COUNT_SW_BPF_OUTPUT;
		heap.freq = 0;
		heap.sample_period = alloc_rate;
		heap.sample_type |= PERF_SAMPLE_RAW;
		heap.mmap = heap.comm = heap.mmap2 = heap.comm_exec = heap.task = 0;
		check(perfdata_writer_add_event(w, "alloc", &heap, &alloc_id, 1), "add alloc");
		check(perfdata_writer_add_event(w, "inuse", &heap, &inuse_id, 1), "add inuse");
	}
	if (sched) {
		/* As perfdata/events.h has it: BPF_OUTPUT, RAW, period 1. */
		struct perf_event_attr wait = attr;
		uint64_t sched_id = SCHED_ID;

		wait.config = PERF_COUNT_SW_BPF_OUTPUT;
		wait.freq = 0;
		wait.sample_period = 1;
		wait.sample_type |= PERF_SAMPLE_RAW;
		wait.mmap = wait.comm = wait.mmap2 = wait.comm_exec = wait.task = 0;
		check(perfdata_writer_add_event(w, PERFDATA_SCHED_DELAY_EVENT_NAME, &wait, &sched_id, 1),
		      "add sched-delay");
	}
	check(perfdata_writer_start(w), "start");

	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t t0 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	uint64_t text = kallsyms_lookup("_text"), etext = kallsyms_lookup("_etext");
	struct perfdata_sample_id sid = { .pid = (uint32_t)-1, .tid = 0, .time = 0, .id = EVENT_ID };
	struct perfdata_mmap km = {
		.misc = PERF_RECORD_MISC_KERNEL, .pid = (uint32_t)-1, .tid = 0,
		.start = text, .len = etext - text, .pgoff = text,
		.filename = "[kernel.kallsyms]_text",
	};
	uint8_t kid[BUILDID_MAX];
	size_t kid_size;

	check(perfdata_write_mmap(w, &km, &sid), "kernel mmap");
	if (kernel_build_id(kid, &kid_size))
		check(perfdata_writer_add_build_id(w, PERF_RECORD_MISC_KERNEL, kid, kid_size,
						   "[kernel.kallsyms]"), "kernel build-id");

	const char *base = strrchr(elf_path, '/') ? strrchr(elf_path, '/') + 1 : elf_path;
	char comm[16];
	char *real = realpath(elf_path, NULL);

	snprintf(comm, sizeof(comm), "%s", base);
	sid = (struct perfdata_sample_id){ .pid = (uint32_t)pid, .tid = (uint32_t)pid, .time = t0,
					   .id = EVENT_ID };
	check(perfdata_write_comm(w, &(struct perfdata_comm){ .pid = (uint32_t)pid,
				  .tid = (uint32_t)pid, .exec = true, .comm = comm }, &sid), "comm");
	struct perfdata_mmap um = {
		.misc = PERF_RECORD_MISC_USER, .pid = (uint32_t)pid, .tid = (uint32_t)pid,
		.start = (USER_BASE + ei.seg_vaddr) & ~0xfffull,
		.pgoff = ei.seg_offset & ~0xfffull,
		.prot = PROT_READ | PROT_EXEC, .flags = MAP_PRIVATE, .filename = real,
	};
	um.len = ((USER_BASE + ei.seg_vaddr + ei.seg_memsz + 0xfff) & ~0xfffull) - um.start;
	um.build_id_size = (uint8_t)ei.build_id_size;
	memcpy(um.build_id, ei.build_id, ei.build_id_size);
	check(perfdata_write_mmap2(w, &um, &sid), "mmap2");
	if (ei.build_id_size)
		check(perfdata_writer_add_build_id(w, PERF_RECORD_MISC_USER, ei.build_id,
						   ei.build_id_size, real), "build-id");
	if (py.nr) {
		/* The Python symbol file's MMAP2, as pysyms.h has the recorder write it. */
		char py_path[64];
		struct perfdata_mmap pm = {
			.misc = PERF_RECORD_MISC_USER, .pid = (uint32_t)pid, .tid = (uint32_t)pid,
			.start = PY_SYMFILE_MAP_BASE, .pgoff = 0, .prot = PROT_READ | PROT_EXEC,
			.flags = MAP_PRIVATE, .filename = py_path,
			.build_id_size = PY_SYMFILE_BUILD_ID_SIZE,
		};

		pm.len = py_file(&py, cache_dir, (uint32_t)pid, py_path, sizeof(py_path), pm.build_id);
		check(perfdata_write_mmap2(w, &pm, &sid), "python mmap2");
		check(perfdata_writer_add_build_id(w, PERF_RECORD_MISC_USER, pm.build_id,
						   PY_SYMFILE_BUILD_ID_SIZE, py_path), "python build-id");
		for (size_t i = 0; i < nr_stacks; i++) {
			for (size_t k = 0; k < stacks[i].nr; k++)
				if (is_py_placeholder(stacks[i].chain[k]))
					stacks[i].chain[k] = py_address(stacks[i].chain[k], pm.start);
			if (is_py_placeholder(stacks[i].ip))
				stacks[i].ip = py_address(stacks[i].ip, pm.start);
		}
	}

	/* Interleave the stacks so every round has a mix, 1 ms apart, 100 per round. */
	uint64_t t = t0 + 1000, n = 0;
	unsigned long left[32];

	for (size_t i = 0; i < nr_stacks; i++)
		left[i] = stacks[i].count;
	if (gen.samples)
		write_generated(w, &ei, &gen, (uint32_t)pid, &t);
	/* inuse samples after everything else, as at the end of a recording. */
	for (int inuse_pass = 0; inuse_pass < 2; inuse_pass++) {
		for (bool more = true; more;) {
			more = false;
			for (size_t i = 0; i < nr_stacks; i++) {
				struct perfdata_sample s = {
					.misc = stacks[i].kernel ? PERF_RECORD_MISC_KERNEL
								 : PERF_RECORD_MISC_USER,
					.id = stacks[i].id, .ip = stacks[i].ip, .pid = (uint32_t)pid,
					.tid = (uint32_t)pid, .cpu = (uint32_t)(n % 2),
					.period = stacks[i].period,
					.nr_callchain = stacks[i].nr, .callchain = stacks[i].chain,
					.raw = stacks[i].raw, .raw_size = stacks[i].raw_size,
				};

				if (!left[i] || (stacks[i].id == INUSE_ID) != inuse_pass)
					continue;
				left[i]--;
				more = true;
				s.time = t;
				t += 1000000;
				check(perfdata_write_sample(w, &s), "sample");
				if (++n % 100 == 0 || n == snapshot_at)
					check(perfdata_write_finished_round(w), "round");
				if (n == snapshot_at && snapshot && fd != 1) {
					check(perfdata_writer_checkpoint(w), "checkpoint");
					copy_file(out, snapshot);
				}
			}
		}
	}
	if (lost) {
		sid.time = t;
		check(perfdata_write_lost_samples(w, lost, &sid), "lost");
	}
	check(perfdata_write_finished_round(w), "round");
	check(perfdata_writer_checkpoint(w), "checkpoint");
	if (snapshot && !snapshot_at && fd != 1)
		copy_file(out, snapshot);
	check(perfdata_writer_finish(w), "finish");
	perfdata_writer_free(w);
	free(real);
	elf_end(ei.elf);
	close(ei.fd);
	if (fd != 1)
		close(fd);
	return 0;
}
