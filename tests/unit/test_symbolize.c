// SPDX-License-Identifier: MIT
/*
 * test_symbolize.c - user-space symbolization end to end.
 *
 * Expected answers never come from the library under test: function
 * addresses and sizes come from binutils' nm, runtime addresses from the
 * fixture itself (it prints them) and its /proc/PID/maps, segment layouts
 * from readelf, and line numbers from the MARK comments of the fixture
 * sources (tests run from the source tree top, as tests/run.sh does).
 * Variants that need other flags (-O2, -no-pie, shared library, stripped,
 * separate debug files) are made here with cc/objcopy/strip in a temp dir.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recorder/buildid_cache.h"
#include "recorder/pysyms_cache.h"
#include "symbolize/buildid.h"
#include "symbolize/symbolize.h"
#include "tests/unit/test_nm.h"

#define SRC_TARGET "tests/fixtures/sym_target.c"
#define SRC_INLINE "tests/fixtures/sym_inline.c"
#define SRC_LIB "tests/fixtures/sym_lib.c"
#define SRC_DWZ "tests/fixtures/sym_dwz.c"

/* ---- helpers -------------------------------------------------------- */

static char tmpdir[64];
/* Strings made by tmp() and fixture(), freed after each test (LSan watches). */
static char *strings[512];
static size_t nr_strings;

static void make_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/bpfrec-symbolize.XXXXXX");
	cr_assert(mkdtemp(tmpdir), "mkdtemp: %s", strerror(errno));
}

static void cleanup(void)
{
	char cmd[128];

	if (tmpdir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		cr_assert(system(cmd) == 0);
	}
	while (nr_strings)
		free(strings[--nr_strings]);
}

static const char *keep(char *s)
{
	cr_assert(s && nr_strings < sizeof(strings) / sizeof(strings[0]));
	strings[nr_strings++] = s;
	return s;
}

static void run(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	cr_assert(system(cmd) == 0, "command failed: %s", cmd);
}

/* A path in the temp dir. */
static const char *tmp(const char *fmt, ...)
{
	char rel[1024], *path;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	cr_assert(asprintf(&path, "%s/%s", tmpdir, rel) > 0);
	return keep(path);
}

static const char *fixture(const char *name)
{
	const char *dir = getenv("FIXTURES");
	char *path;

	cr_assert(dir, "FIXTURES is not set: run through tests/run.sh");
	cr_assert(asprintf(&path, "%s/%s", dir, name) > 0);
	cr_assert(access(path, R_OK) == 0, "missing fixture %s: run 'make fixtures'", path);
	return keep(path);
}

static void need_source(const char *src)
{
	cr_assert(access(src, R_OK) == 0, "%s not found: run from the source tree top", src);
}

/* The line of src holding "MARK:<marker> ". */
static int marker_line(const char *src, const char *marker)
{
	char line[1024], want[256];
	int lineno = 0, found = 0;
	FILE *f;

	need_source(src);
	snprintf(want, sizeof(want), "MARK:%s ", marker);
	f = fopen(src, "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (strstr(line, want)) {
			cr_assert_eq(found, 0, "marker %s twice in %s", marker, src);
			found = lineno;
		}
	}
	fclose(f);
	cr_assert(found, "no marker %s in %s", marker, src);
	return found;
}

/* The first line at or after `from` that opens a block: gcc puts a function's entry there. */
static int brace_line(const char *src, int from)
{
	char line[1024];
	int lineno = 0;
	FILE *f = fopen(src, "r");

	cr_assert(f);
	while (fgets(line, sizeof(line), f))
		if (++lineno >= from && line[0] == '{')
			break;
	fclose(f);
	return lineno;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

static struct symbolizer *new_symbolizer(const char *debug_dir, bool no_inlines)
{
	struct symbolizer_opts opts = { .debug_dir = debug_dir, .no_inlines = no_inlines };
	struct symbolizer *s = NULL;

	cr_assert_eq(symbolizer_new(&opts, &s), 0);
	return s;
}

/* An empty debug dir and $HOME, so system debug files cannot help a test. */
static struct symbolizer *isolated_symbolizer(bool no_inlines)
{
	run("mkdir -p '%s' '%s'", tmp("empty-debug"), tmp("empty-home"));
	cr_assert_eq(setenv("HOME", tmp("empty-home"), 1), 0);
	return new_symbolizer(tmp("empty-debug"), no_inlines);
}

/*
 * A mapping of the executable PT_LOAD of an ELF file as the loader would
 * make it at load_base (0 for ET_EXEC), from `readelf -lW`.
 */
static struct sym_mapping text_mapping(const char *path, uint64_t load_base)
{
	char cmd[4200], line[1024];
	struct sym_mapping m = { .path = path };
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -lW '%s'", path);
	p = popen(cmd, "r");
	cr_assert(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long off, vaddr, paddr, filesz, memsz;
		char flags[16];

		if (sscanf(line, " LOAD 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx %15[RWE ]", &off, &vaddr,
			   &paddr, &filesz, &memsz, flags) == 6 &&
		    strchr(flags, 'E')) {
			m.start = load_base + (vaddr & ~0xfffULL);
			m.pgoff = off & ~0xfffULL;
			m.len = ((vaddr + filesz + 0xfff) & ~0xfffULL) - (vaddr & ~0xfffULL);
			found = true;
		}
	}
	pclose(p);
	cr_assert(found, "no executable PT_LOAD in %s", path);
	return m;
}

/* ---- a running fixture ---------------------------------------------- */

struct proc_map {
	uint64_t start, end, pgoff;
	char path[512];
};

struct proc_info {
	struct proc_map maps[256];
	size_t nr_maps;
	struct {
		char name[64];
		uint64_t addr;
	} syms[8];
	size_t nr_syms;
};

/* Run sym_target (bin) with an optional library, record what it prints and its maps. */
static void run_fixture(const char *bin, const char *lib, struct proc_info *pi)
{
	int in[2], out[2], status;
	char line[1024], maps_path[64];
	bool ready = false;
	pid_t pid;
	FILE *f;

	memset(pi, 0, sizeof(*pi));
	cr_assert(pipe(in) == 0 && pipe(out) == 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(bin, bin, lib, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	f = fdopen(out[0], "r");
	cr_assert(f);
	while (!ready && fgets(line, sizeof(line), f)) {
		char name[64];
		void *addr;

		if (!strcmp(line, "ready\n"))
			ready = true;
		else if (sscanf(line, "%63s %p", name, &addr) == 2 && pi->nr_syms < 8) {
			snprintf(pi->syms[pi->nr_syms].name, sizeof(pi->syms[0].name), "%s", name);
			pi->syms[pi->nr_syms++].addr = (uint64_t)(uintptr_t)addr;
		}
	}
	cr_assert(ready, "%s did not get ready", bin);
	snprintf(maps_path, sizeof(maps_path), "/proc/%d/maps", pid);
	{
		FILE *m = fopen(maps_path, "r");

		cr_assert(m);
		while (fgets(line, sizeof(line), m) && pi->nr_maps < 256) {
			struct proc_map *pm = &pi->maps[pi->nr_maps];
			unsigned long long s, e, o;
			int path_at = 0;

			if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &s, &e, &o, &path_at) < 3)
				continue;
			pm->start = s;
			pm->end = e;
			pm->pgoff = o;
			if (path_at)
				snprintf(pm->path, sizeof(pm->path), "%s", line + path_at);
			pm->path[strcspn(pm->path, "\n")] = '\0';
			pi->nr_maps++;
		}
		fclose(m);
	}
	close(in[1]);	/* the fixture exits at EOF */
	fclose(f);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static uint64_t proc_sym(const struct proc_info *pi, const char *name)
{
	for (size_t i = 0; i < pi->nr_syms; i++)
		if (!strcmp(pi->syms[i].name, name))
			return pi->syms[i].addr;
	cr_assert_fail("the fixture printed no %s", name);
	return 0;
}

static struct sym_mapping proc_mapping(const struct proc_info *pi, uint64_t addr)
{
	for (size_t i = 0; i < pi->nr_maps; i++) {
		const struct proc_map *pm = &pi->maps[i];

		if (addr >= pm->start && addr < pm->end)
			return (struct sym_mapping){ .path = pm->path, .start = pm->start,
						     .len = pm->end - pm->start,
						     .pgoff = pm->pgoff };
	}
	cr_assert_fail("no mapping holds %#llx", (unsigned long long)addr);
	return (struct sym_mapping){ 0 };
}

/* ---- checks --------------------------------------------------------- */

/*
 * Every byte of a non-inlined function [addr, addr+size) must symbolize to
 * that function in src, on a line between its begin and end markers; the
 * entry is on its opening brace and some byte is on the `inside` marker line.
 */
static void check_function(struct symbolizer *s, const struct sym_mapping *m, uint64_t addr,
			   uint64_t size, const char *src, const char *func, const char *inside)
{
	char marker[128];
	int begin, end, want_inside;
	bool saw_inside = false;

	snprintf(marker, sizeof(marker), "%s:begin", func);
	begin = marker_line(src, marker);
	snprintf(marker, sizeof(marker), "%s:end", func);
	end = marker_line(src, marker);
	snprintf(marker, sizeof(marker), "%s:%s", func, inside);
	want_inside = marker_line(src, marker);
	cr_assert_gt(size, 0);
	for (uint64_t a = addr; a < addr + size; a++) {
		struct sym_result r;
		int err = symbolize_user(s, m, a, &r);

		cr_assert_eq(err, 0, "%s+%#llx: %d", func, (unsigned long long)(a - addr), err);
		cr_assert_eq(r.nr_frames, 1, "%s+%#llx: %zu frames", func,
			     (unsigned long long)(a - addr), r.nr_frames);
		cr_assert_str_eq(r.frames[0].function, func);
		cr_assert(r.frames[0].file && r.frames[0].file[0] == '/' &&
			  ends_with(r.frames[0].file, src), "file %s", r.frames[0].file);
		cr_assert(r.frames[0].line >= begin && r.frames[0].line <= end,
			  "%s+%#llx: line %d not in %d..%d", func, (unsigned long long)(a - addr),
			  r.frames[0].line, begin, end);
		if (a == addr)
			cr_assert_eq(r.frames[0].line, brace_line(src, begin), "%s entry", func);
		saw_inside |= r.frames[0].line == want_inside;
		cr_assert(r.has_functions && r.has_filenames && r.has_line_numbers &&
			  r.has_inline_frames);
	}
	cr_assert(saw_inside, "no address of %s is on line %d", func, want_inside);
}

/* The answer for one address, flattened, to compare two symbolizations. */
static void describe(struct symbolizer *s, const struct sym_mapping *m, uint64_t addr, char *out,
		     size_t size)
{
	struct sym_result r;
	int err = symbolize_user(s, m, addr, &r);
	size_t n = (size_t)snprintf(out, size, "err=%d", err);

	for (size_t i = 0; i < r.nr_frames && n < size; i++)
		n += (size_t)snprintf(out + n, size - n, " | %s %s:%d", r.frames[i].function,
				      r.frames[i].file ? r.frames[i].file : "-", r.frames[i].line);
}

/* Every byte of func answers the same from path (in s) as from ref (in ref_s). */
static void check_same_answers(struct symbolizer *s, const char *path, struct symbolizer *ref_s,
			       const char *ref, const char *func, const uint8_t *build_id,
			       size_t build_id_size)
{
	struct sym_mapping m = text_mapping(ref, 0x7f0000000000ULL);
	struct sym_mapping rm = m;
	uint64_t value, size;
	char got[2048], want[2048];

	nm_symbol(ref, func, &value, &size);
	m.path = path;
	m.build_id = build_id;
	m.build_id_size = build_id_size;
	for (uint64_t a = value; a < value + size; a++) {
		describe(ref_s, &rm, 0x7f0000000000ULL + a, want, sizeof(want));
		describe(s, &m, 0x7f0000000000ULL + a, got, sizeof(got));
		cr_assert(!strncmp(want, "err=0 | ", 8), "reference: %s", want);
		cr_assert_str_eq(got, want, "%s+%#llx", func, (unsigned long long)(a - value));
	}
}

/*
 * Every byte of sym_outer (the inline fixture built at base 0x7f...):
 * frames are a suffix of sym_inner <- sym_mid_inline <- sym_outer, with
 * each outer frame on the line that calls the frame inside it. Returns how
 * many addresses had all three levels.
 */
static size_t check_inline_chain(const char *bin, bool no_inlines)
{
	const uint64_t base = 0x7f1200000000ULL;
	struct sym_mapping m = text_mapping(bin, base);
	struct symbolizer *s = isolated_symbolizer(no_inlines);
	int outer_b = marker_line(SRC_INLINE, "sym_outer:begin");
	int outer_e = marker_line(SRC_INLINE, "sym_outer:end");
	int outer_call = marker_line(SRC_INLINE, "sym_outer:call");
	int mid_b = marker_line(SRC_INLINE, "sym_mid_inline:begin");
	int mid_e = marker_line(SRC_INLINE, "sym_mid_inline:end");
	int mid_call = marker_line(SRC_INLINE, "sym_mid_inline:call");
	int inner_b = marker_line(SRC_INLINE, "sym_inner:begin");
	int inner_e = marker_line(SRC_INLINE, "sym_inner:end");
	size_t full = 0, levels[4] = { 0 };
	uint64_t value, size;

	nm_symbol(bin, "sym_outer", &value, &size);
	for (uint64_t a = value; a < value + size; a++) {
		struct sym_result r;
		const struct sym_frame *fr = NULL;
		int err = symbolize_user(s, &m, base + a, &r);

		cr_assert_eq(err, 0, "sym_outer+%#llx", (unsigned long long)(a - value));
		cr_assert(r.nr_frames >= 1 && r.nr_frames <= 3, "%zu frames", r.nr_frames);
		levels[r.nr_frames]++;
		fr = r.frames;
		for (size_t i = 0; i < r.nr_frames; i++)
			cr_assert(fr[i].file && ends_with(fr[i].file, SRC_INLINE), "frame %zu: %s", i,
				  fr[i].file);
		cr_assert_str_eq(fr[r.nr_frames - 1].function, "sym_outer");
		cr_assert_eq(r.has_inline_frames, !no_inlines);
		if (r.nr_frames == 1) {
			if (no_inlines)
				cr_assert(fr[0].line == outer_call ||
					  (fr[0].line >= outer_b && fr[0].line <= outer_e));
			else
				cr_assert(fr[0].line >= outer_b && fr[0].line <= outer_e,
					  "sym_outer line %d", fr[0].line);
			continue;
		}
		cr_assert_eq(fr[r.nr_frames - 1].line, outer_call);
		cr_assert_str_eq(fr[r.nr_frames - 2].function, "sym_mid_inline");
		if (r.nr_frames == 2) {
			cr_assert(fr[0].line >= mid_b && fr[0].line <= mid_e, "mid line %d",
				  fr[0].line);
			continue;
		}
		full++;
		cr_assert_eq(fr[1].line, mid_call);
		cr_assert_str_eq(fr[0].function, "sym_inner");
		cr_assert(fr[0].line >= inner_b && fr[0].line <= inner_e, "inner line %d",
			  fr[0].line);
	}
	if (no_inlines)
		cr_assert_eq(levels[2] + levels[3], 0);
	symbolizer_free(s);
	return full;
}

/* ---- executables and libraries in a real process -------------------- */

static void check_target_process(const char *bin, const char *lib, bool expect_pie)
{
	struct symbolizer *s = isolated_symbolizer(false);
	static const char *const funcs[][2] = {
		{ "sym_leaf", "body" },
		{ "sym_static_middle", "call" },
		{ "sym_top", "call" },
	};
	struct proc_info pi;

	run_fixture(bin, lib, &pi);
	for (size_t i = 0; i < 3; i++) {
		uint64_t rt = proc_sym(&pi, funcs[i][0]), value, size;
		struct sym_mapping m = proc_mapping(&pi, rt);

		nm_symbol(bin, funcs[i][0], &value, &size);
		cr_assert_str_eq(m.path, bin);
		if (expect_pie)
			cr_assert_neq(rt, value, "a PIE runs relocated");
		else
			cr_assert_eq(rt, value, "a non-PIE executable runs at its link address");
		check_function(s, &m, rt, size, SRC_TARGET, funcs[i][0], funcs[i][1]);
	}
	symbolizer_free(s);
}

Test(symbolize, pie_executable_in_a_process, .init = make_tmpdir, .fini = cleanup)
{
	check_target_process(fixture("sym_target"), NULL, true);
}

Test(symbolize, non_pie_executable_in_a_process, .init = make_tmpdir, .fini = cleanup)
{
	const char *bin = tmp("target-nopie");

	need_source(SRC_TARGET);
	run("cc -O0 -g -fno-inline -fno-pie -no-pie -Wl,--build-id=sha1 -o '%s' %s -ldl", bin,
	    SRC_TARGET);
	check_target_process(bin, NULL, false);
}

Test(symbolize, shared_library_at_nonzero_base, .init = make_tmpdir, .fini = cleanup)
{
	const char *lib = tmp("libsymtest.so");
	struct symbolizer *s;
	struct proc_info pi;
	uint64_t rt, entry, entry_size, helper, helper_size;
	struct sym_mapping m;

	need_source(SRC_LIB);
	run("cc -O0 -g -fno-inline -shared -fPIC -DSYM_LIB_SHARED -Wl,--build-id=sha1 -o '%s' %s",
	    lib, SRC_LIB);
	run_fixture(fixture("sym_target"), lib, &pi);
	s = isolated_symbolizer(false);
	rt = proc_sym(&pi, "sym_lib_entry");
	m = proc_mapping(&pi, rt);
	cr_assert_str_eq(m.path, lib);
	cr_assert_gt(m.start, 0);
	nm_symbol(lib, "sym_lib_entry", &entry, &entry_size);
	nm_symbol(lib, "sym_lib_helper", &helper, &helper_size);
	cr_assert_neq(rt, entry, "the library runs relocated");
	check_function(s, &m, rt, entry_size, SRC_LIB, "sym_lib_entry", "call");
	/* A static function of the library, found through the same mapping. */
	check_function(s, &m, rt - entry + helper, helper_size, SRC_LIB, "sym_lib_helper", "body");
	symbolizer_free(s);
}

/* ---- inline chains -------------------------------------------------- */

Test(symbolize, inline_chain_at_O0, .init = make_tmpdir, .fini = cleanup)
{
	cr_assert_gt(check_inline_chain(fixture("sym_inline"), false), 0,
		     "no address with the full inline chain");
}

Test(symbolize, inline_chain_at_O2, .init = make_tmpdir, .fini = cleanup)
{
	const char *bin = tmp("inline-O2");

	need_source(SRC_INLINE);
	run("cc -O2 -g -Wl,--build-id=sha1 -o '%s' %s", bin, SRC_INLINE);
	cr_assert_gt(check_inline_chain(bin, false), 0, "no address with the full inline chain");
}

Test(symbolize, no_inlines_keeps_the_outer_function, .init = make_tmpdir, .fini = cleanup)
{
	const char *bin = tmp("inline-O2");

	need_source(SRC_INLINE);
	run("cc -O2 -g -Wl,--build-id=sha1 -o '%s' %s", bin, SRC_INLINE);
	cr_assert_eq(check_inline_chain(bin, true), 0);
}

/* ---- separate debug info -------------------------------------------- */

/* <tmp>/bin/t: a stripped copy of sym_target; <tmp>/t.debug its debug info. */
static const char *make_stripped(bool debuglink)
{
	const char *bin = tmp("bin/t"), *dbg = tmp("t.debug");

	run("mkdir -p '%s'", tmp("bin"));
	run("objcopy --only-keep-debug '%s' '%s'", fixture("sym_target"), dbg);
	run("strip --strip-all -o '%s' '%s'", bin, fixture("sym_target"));
	if (debuglink)
		run("objcopy --add-gnu-debuglink='%s' '%s'", dbg, bin);
	return bin;
}

static void build_id_hex(const char *path, char *hex)
{
	uint8_t id[BUILDID_MAX];
	size_t size = 0;

	cr_assert_eq(buildid_read_file(path, id, &size), 0);
	buildid_to_hex(id, size, hex);
}

static void check_like_unstripped(const char *bin)
{
	struct symbolizer *s = new_symbolizer(tmp("debug"), false);
	struct symbolizer *ref = new_symbolizer(tmp("debug"), false);

	check_same_answers(s, bin, ref, fixture("sym_target"), "sym_leaf", NULL, 0);
	check_same_answers(s, bin, ref, fixture("sym_target"), "sym_static_middle", NULL, 0);
	symbolizer_free(s);
	symbolizer_free(ref);
}

static void isolate_home(void)
{
	run("mkdir -p '%s' '%s'", tmp("home"), tmp("debug"));
	cr_assert_eq(setenv("HOME", tmp("home"), 1), 0);
}

Test(symbolize, debuglink_next_to_the_binary, .init = make_tmpdir, .fini = cleanup)
{
	const char *bin = make_stripped(true);

	isolate_home();
	run("mv '%s' '%s'", tmp("t.debug"), tmp("bin/t.debug"));
	check_like_unstripped(bin);
}

Test(symbolize, debuglink_in_dot_debug, .init = make_tmpdir, .fini = cleanup)
{
	const char *bin = make_stripped(true);

	isolate_home();
	run("mkdir -p '%s' && mv '%s' '%s'", tmp("bin/.debug"), tmp("t.debug"),
	    tmp("bin/.debug/t.debug"));
	check_like_unstripped(bin);
}

Test(symbolize, debuglink_under_debug_dir, .init = make_tmpdir, .fini = cleanup)
{
	const char *bin = make_stripped(true);

	isolate_home();
	/* <debug_dir>/<dir of the binary>/<debuglink> */
	run("mkdir -p '%s%s/bin' && mv '%s' '%s%s/bin/t.debug'", tmp("debug"), tmpdir,
	    tmp("t.debug"), tmp("debug"), tmpdir);
	check_like_unstripped(bin);
}

Test(symbolize, build_id_under_debug_dir, .init = make_tmpdir, .fini = cleanup)
{
	const char *bin = make_stripped(false);
	char hex[41];

	isolate_home();
	build_id_hex(bin, hex);
	run("mkdir -p '%s/.build-id/%.2s' && mv '%s' '%s/.build-id/%.2s/%s.debug'", tmp("debug"),
	    hex, tmp("t.debug"), tmp("debug"), hex, hex + 2);
	check_like_unstripped(bin);
}

/*
 * @bin, stripped, has no debug info the symbolizer may use: sym_leaf,
 * inside it, has no name (-ENOENT, no frames). @r is left for the caller.
 */
static void check_leaf_unknown(const char *bin, struct sym_result *r)
{
	struct symbolizer *s = new_symbolizer(tmp("debug"), false);
	struct sym_mapping m = text_mapping(bin, 0x7f0000000000ULL);
	uint64_t value, size;

	nm_symbol(fixture("sym_target"), "sym_leaf", &value, &size);
	cr_assert_eq(symbolize_user(s, &m, 0x7f0000000000ULL + value + 4, r), -ENOENT,
		     "%s: sym_leaf has no name", bin);
	cr_assert_eq(r->nr_frames, 0, "%s: no frames", bin);
	symbolizer_free(s);
}

Test(symbolize, build_id_in_perf_cache, .init = make_tmpdir, .fini = cleanup)
{
	const char *bin = make_stripped(false);
	char hex[41];

	isolate_home();
	build_id_hex(bin, hex);
	run("mkdir -p '%s/.debug/.build-id/%.2s/%s' && mv '%s' '%s/.debug/.build-id/%.2s/%s/debug'",
	    tmp("home"), hex, hex + 2, tmp("t.debug"), tmp("home"), hex, hex + 2);
	check_like_unstripped(bin);
}

Test(symbolize, stripped_without_debug_info, .init = make_tmpdir, .fini = cleanup)
{
	const char *bin = make_stripped(true);
	struct sym_result r;

	isolate_home();
	run("rm '%s'", tmp("t.debug"));
	/* A PIE's .dynsym has none of its own functions: nothing to say. */
	check_leaf_unknown(bin, &r);
	cr_assert(!r.has_functions && !r.has_filenames && !r.has_line_numbers);
}

Test(symbolize, symbol_table_without_dwarf, .init = make_tmpdir, .fini = cleanup)
{
	const char *bin = tmp("t-nodebug");
	struct symbolizer *s;
	struct sym_mapping m;
	struct sym_result r;
	uint64_t value, size;

	isolate_home();
	run("strip --strip-debug -o '%s' '%s'", bin, fixture("sym_target"));
	s = new_symbolizer(tmp("debug"), false);
	m = text_mapping(bin, 0x7f0000000000ULL);
	nm_symbol(fixture("sym_target"), "sym_static_middle", &value, &size);
	for (uint64_t a = value; a < value + size; a++) {
		cr_assert_eq(symbolize_user(s, &m, 0x7f0000000000ULL + a, &r), 0);
		cr_assert_eq(r.nr_frames, 1);
		cr_assert_str_eq(r.frames[0].function, "sym_static_middle");
		cr_assert_null(r.frames[0].file);
		cr_assert_eq(r.frames[0].line, 0);
		cr_assert(r.has_functions && !r.has_filenames && !r.has_line_numbers &&
			  !r.has_inline_frames);
	}
	symbolizer_free(s);
}

/*
 * Aliases in an ELF symbol table, where the name perf shows is not the last
 * one (locals keep their order in .symtab). perf ends a zero-sized symbol
 * at the next one, so a_zero stays empty while ___a_last (last at its
 * address) gets a size: __a_sized wins by size over a_zero, then by fewer
 * underscores over ___a_last. At c_*, both sized: the longer name.
 */
static const char alias_asm[] =
	"	.text\n"
	"	.p2align 4\n"
	"	.type __a_sized, @function\n"
	"__a_sized:\n"
	"	.type a_zero, @function\n"
	"a_zero:\n"
	"	.type ___a_last, @function\n"
	"___a_last:\n"
	"	.fill 16, 1, 0x90\n"
	"	.size __a_sized, 16\n"
	"	.p2align 4\n"
	"	.type c_first_long, @function\n"
	"c_first_long:\n"
	"	.type c_short, @function\n"
	"c_short:\n"
	"	.fill 16, 1, 0x90\n"
	"	.size c_first_long, 16\n"
	"	.size c_short, 16\n"
	"	.globl end_marker\n"
	"	.type end_marker, @function\n"
	"end_marker:\n"
	"	ret\n"
	"	.size end_marker, 1\n";

Test(symbolize, elf_aliases_as_perf_chooses, .init = make_tmpdir, .fini = cleanup)
{
	/* nm -S lists sized symbols only: the address comes from the sized one. */
	static const struct {
		const char *at, *want;
	} cases[] = { { "__a_sized", "__a_sized" }, { "c_short", "c_first_long" } };
	const char *src = tmp("alias.s"), *lib = tmp("libalias.so");
	struct symbolizer *s;
	struct sym_mapping m;
	struct sym_result r;
	uint64_t value, size;
	FILE *f = fopen(src, "w");

	cr_assert(f);
	fputs(alias_asm, f);
	fclose(f);
	run("cc -shared -nostdlib -o '%s' '%s'", lib, src);
	isolate_home();
	s = new_symbolizer(tmp("debug"), false);
	m = text_mapping(lib, 0x7f0000000000ULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		nm_symbol(lib, cases[i].at, &value, &size);
		for (uint64_t a = value; a < value + 16; a++) {
			cr_assert_eq(symbolize_user(s, &m, 0x7f0000000000ULL + a, &r), 0);
			cr_assert_eq(r.nr_frames, 1);
			cr_assert_str_eq(r.frames[0].function, cases[i].want, "%s+%#llx",
					 cases[i].at, (unsigned long long)(a - value));
		}
	}
	symbolizer_free(s);
}

Test(symbolize, debuglink_to_another_build_is_ignored, .init = make_tmpdir, .fini = cleanup)
{
	const char *bin = make_stripped(true);
	struct sym_result r;

	isolate_home();
	/* Debug info of another program under the expected name. */
	run("objcopy --only-keep-debug '%s' '%s'", fixture("sym_inline"), tmp("bin/t.debug"));
	check_leaf_unknown(bin, &r);
}

Test(symbolize, debuglink_crc_without_build_ids, .init = make_tmpdir, .fini = cleanup)
{
	const char *full = tmp("nobid-full"), *bin = tmp("bin/nb"), *dbg = tmp("bin/nb.debug");
	struct symbolizer *s, *ref;
	struct sym_mapping m;
	struct sym_result r;
	uint64_t value, size;

	isolate_home();
	need_source(SRC_TARGET);
	run("mkdir -p '%s'", tmp("bin"));
	run("cc -O0 -g -fno-inline -Wl,--build-id=none -o '%s' %s -ldl", full, SRC_TARGET);
	run("objcopy --only-keep-debug '%s' '%s'", full, dbg);
	run("strip --strip-all -o '%s' '%s'", bin, full);
	run("objcopy --add-gnu-debuglink='%s' '%s'", dbg, bin);
	/* The CRC matches: the debug file is used. */
	s = new_symbolizer(tmp("debug"), false);
	ref = new_symbolizer(tmp("debug"), false);
	check_same_answers(s, bin, ref, full, "sym_leaf", NULL, 0);
	symbolizer_free(s);
	/* One byte more and it is another file. */
	run("printf x >> '%s'", dbg);
	s = new_symbolizer(tmp("debug"), false);
	m = text_mapping(bin, 0x7f0000000000ULL);
	nm_symbol(full, "sym_leaf", &value, &size);
	cr_assert_eq(symbolize_user(s, &m, 0x7f0000000000ULL + value + 4, &r), -ENOENT);
	symbolizer_free(s);
	symbolizer_free(ref);
}

/*
 * dwz: inline names live in the alt file that .gnu_debugaltlink names
 * (checked by its build-id). Counts the addresses of sym_dwz_outer whose
 * chain is sym_dwz_inner <- sym_dwz_outer with the right lines.
 */
static size_t dwz_inline_frames(const char *bin)
{
	const uint64_t base = 0x7f3400000000ULL;
	struct sym_mapping m = text_mapping(bin, base);
	struct symbolizer *s = new_symbolizer(tmp("debug"), false);
	int call = marker_line(SRC_DWZ, "sym_dwz_outer:call");
	int inner_b = marker_line(SRC_DWZ, "sym_dwz_inner:begin");
	int inner_e = marker_line(SRC_DWZ, "sym_dwz_inner:end");
	uint64_t value, size;
	size_t found = 0;

	nm_symbol(bin, "sym_dwz_outer", &value, &size);
	for (uint64_t a = value; a < value + size; a++) {
		struct sym_result r;

		cr_assert_eq(symbolize_user(s, &m, base + a, &r), 0);
		cr_assert_str_eq(r.frames[r.nr_frames - 1].function, "sym_dwz_outer");
		if (r.nr_frames != 2 || !r.frames[0].function)
			continue;
		cr_assert_str_eq(r.frames[0].function, "sym_dwz_inner");
		cr_assert(r.frames[0].line >= inner_b && r.frames[0].line <= inner_e);
		cr_assert_eq(r.frames[1].line, call);
		found++;
	}
	symbolizer_free(s);
	return found;
}

Test(symbolize, dwz_alt_file, .init = make_tmpdir, .fini = cleanup)
{
	const char *o0 = tmp("dwz-O0"), *o2 = tmp("dwz-O2"), *alt = tmp("common.debug");
	char hex[41];

	if (system("command -v dwz >/dev/null 2>&1"))
		cr_skip_test("dwz is not installed (apt-get install dwz)");
	need_source(SRC_DWZ);
	isolate_home();
	run("cc -O0 -g -Wl,--build-id=sha1 -o '%s' %s", o0, SRC_DWZ);
	run("cc -O2 -g -Wl,--build-id=sha1 -o '%s' %s", o2, SRC_DWZ);
	run("dwz -m '%s' -M '%s' '%s' '%s'", alt, alt, o0, o2);
	run("readelf -S '%s' | grep -q gnu_debugaltlink", o0);
	/* The alt file where the link says. */
	cr_assert_gt(dwz_inline_frames(o0), 0);
	cr_assert_gt(dwz_inline_frames(o2), 0);
	/* Moved to <debug_dir>/.build-id under its own build-id: found there. */
	build_id_hex(alt, hex);
	run("mkdir -p '%s/.build-id/%.2s' && mv '%s' '%s/.build-id/%.2s/%s.debug'", tmp("debug"),
	    hex, alt, tmp("debug"), hex, hex + 2);
	cr_assert_gt(dwz_inline_frames(o0), 0);
	/* Replaced by another file under its name: not used, the outer function still known. */
	run("mv '%s/.build-id/%.2s/%s.debug' '%s' && objcopy --only-keep-debug '%s' '%s'",
	    tmp("debug"), hex, hex + 2, tmp("alt.saved"), fixture("sym_inline"), alt);
	cr_assert_eq(dwz_inline_frames(o0), 0);
}

/* ---- build-id checks ------------------------------------------------ */

Test(symbolize, build_id_mismatch_is_not_symbolized, .init = make_tmpdir, .fini = cleanup)
{
	const char *bin = tmp("app");
	uint8_t target_id[BUILDID_MAX], other_id[BUILDID_MAX];
	size_t target_size = 0, other_size = 0;
	struct symbolizer *s;
	struct sym_mapping m;
	struct sym_result r;
	uint64_t value, size;
	char hex[41];

	isolate_home();
	cr_assert_eq(buildid_read_file(fixture("sym_target"), target_id, &target_size), 0);
	/* The file at the recorded path was rebuilt: now it is another program. */
	run("cp '%s' '%s'", fixture("sym_inline"), bin);
	cr_assert_eq(buildid_read_file(bin, other_id, &other_size), 0);
	m = text_mapping(fixture("sym_target"), 0x7f0000000000ULL);
	m.path = bin;
	m.build_id = target_id;
	m.build_id_size = target_size;
	nm_symbol(fixture("sym_target"), "sym_leaf", &value, &size);

	s = new_symbolizer(tmp("debug"), false);
	cr_assert_eq(symbolize_user(s, &m, 0x7f0000000000ULL + value + 4, &r), -ENOENT);
	cr_assert_eq(r.nr_frames, 0);
	/* Without a recorded build-id the file is taken as it is: another cache entry. */
	m.build_id = NULL;
	m.build_id_size = 0;
	if (symbolize_user(s, &m, 0x7f0000000000ULL + value + 4, &r) == 0)
		cr_assert_str_neq(r.frames[r.nr_frames - 1].function, "sym_leaf");
	/* With the recorded one, still nothing: failures are cached per file version. */
	m.build_id = target_id;
	m.build_id_size = target_size;
	cr_assert_eq(symbolize_user(s, &m, 0x7f0000000000ULL + value + 4, &r), -ENOENT);
	symbolizer_free(s);

	/* The right debug file by build-id: symbolized from it, as the original. */
	buildid_to_hex(target_id, target_size, hex);
	run("mkdir -p '%s/.build-id/%.2s' && objcopy --only-keep-debug '%s' '%s/.build-id/%.2s/%s.debug'",
	    tmp("debug"), hex, fixture("sym_target"), tmp("debug"), hex, hex + 2);
	s = new_symbolizer(tmp("debug"), false);
	{
		struct symbolizer *ref = new_symbolizer(tmp("debug"), false);

		check_same_answers(s, bin, ref, fixture("sym_target"), "sym_leaf", target_id,
				   target_size);
		check_same_answers(s, bin, ref, fixture("sym_target"), "sym_top", target_id,
				   target_size);
		symbolizer_free(ref);
	}
	symbolizer_free(s);
}

/*
 * sym_target in a private perf buildid-cache ($HOME/.debug, isolate_home())
 * as .../<its id>/name, the way perf keeps a binary ("elf") or a vDSO
 * ("vdso"): a symbolizer given only path and the build-id finds it there,
 * with the same answers for func as for sym_target itself.
 */
static void check_found_in_perf_cache(const char *name, const char *path, const char *func)
{
	uint8_t id[BUILDID_MAX];
	size_t id_size = 0;
	struct symbolizer *s, *ref;
	char hex[41];

	isolate_home();
	cr_assert_eq(buildid_read_file(fixture("sym_target"), id, &id_size), 0);
	buildid_to_hex(id, id_size, hex);
	run("mkdir -p '%s/.debug/.build-id/%.2s/%s' && cp '%s' '%s/.debug/.build-id/%.2s/%s/%s'",
	    tmp("home"), hex, hex + 2, fixture("sym_target"), tmp("home"), hex, hex + 2, name);
	s = new_symbolizer(tmp("debug"), false);
	ref = new_symbolizer(tmp("debug"), false);
	check_same_answers(s, path, ref, fixture("sym_target"), func, id, id_size);
	symbolizer_free(s);
	symbolizer_free(ref);
}

Test(symbolize, build_id_finds_the_binary_in_perf_cache, .init = make_tmpdir, .fini = cleanup)
{
	/* perf buildid-cache keeps the whole binary as .../<id>/elf. */
	check_found_in_perf_cache("elf", "/nonexistent/bpfrec-test/app", "sym_static_middle");
}

Test(symbolize, recorded_build_id_that_matches, .init = make_tmpdir, .fini = cleanup)
{
	uint8_t id[BUILDID_MAX];
	size_t id_size = 0;
	struct symbolizer *s, *ref;

	isolate_home();
	cr_assert_eq(buildid_read_file(fixture("sym_target"), id, &id_size), 0);
	s = new_symbolizer(tmp("debug"), false);
	ref = new_symbolizer(tmp("debug"), false);
	check_same_answers(s, fixture("sym_target"), ref, fixture("sym_target"), "sym_top", id,
			   id_size);
	symbolizer_free(s);
	symbolizer_free(ref);
}

/* ---- paths ---------------------------------------------------------- */

Test(symbolize, symfs_prefixes_recorded_paths, .init = make_tmpdir, .fini = cleanup)
{
	const char *recorded = "/opt/bpfrec-symfs-test/bin/app";
	struct symbolizer_opts opts = { .symfs = tmp("root"), .debug_dir = tmp("debug") };
	struct symbolizer *s = NULL, *plain, *ref;
	struct sym_mapping m;
	struct sym_result r;
	uint64_t value, size;

	isolate_home();
	cr_assert(access(recorded, F_OK) != 0, "%s exists on this machine", recorded);
	run("mkdir -p '%s/opt/bpfrec-symfs-test/bin' && cp '%s' '%s%s'", tmp("root"),
	    fixture("sym_target"), tmp("root"), recorded);
	cr_assert_eq(symbolizer_new(&opts, &s), 0);
	ref = new_symbolizer(tmp("debug"), false);
	check_same_answers(s, recorded, ref, fixture("sym_target"), "sym_leaf", NULL, 0);
	/* Without symfs the path does not exist here. */
	plain = new_symbolizer(tmp("debug"), false);
	m = text_mapping(fixture("sym_target"), 0x7f0000000000ULL);
	m.path = recorded;
	nm_symbol(fixture("sym_target"), "sym_leaf", &value, &size);
	cr_assert_eq(symbolize_user(plain, &m, 0x7f0000000000ULL + value, &r), -ENOENT);
	symbolizer_free(plain);
	symbolizer_free(ref);
	symbolizer_free(s);
}

/*
 * A file is found and opened once per symbolizer: DWARF unwinding gets
 * duplicates of the fd naming opened (one open file: one offset), and
 * neither looks for the file again, so it is still there once unlinked.
 */
Test(symbolize, naming_and_unwinding_share_one_opened_file, .init = make_tmpdir, .fini = cleanup)
{
	const char *bin = tmp("target-copy");
	struct symbolizer *s = isolated_symbolizer(false);
	struct sym_result r;
	struct sym_mapping m;
	struct stat st, st1;
	char *p1 = NULL, *p2 = NULL;
	int fd1 = -1, fd2 = -1;

	run("cp '%s' '%s'", fixture("sym_target"), bin);
	cr_assert_eq(stat(bin, &st), 0);
	m = text_mapping(bin, 0);
	symbolize_user(s, &m, m.start, &r);
	cr_assert_eq(unlink(bin), 0);
	cr_assert_eq(symbolize_open_binary(s, &m, &fd1, &p1), 0, "not looked for again");
	cr_assert_eq(symbolize_open_binary(s, &m, &fd2, &p2), 0);
	cr_assert_str_eq(p1, bin);
	cr_assert_eq(fstat(fd1, &st1), 0);
	cr_assert_eq(st1.st_ino, st.st_ino);
	cr_assert_neq(fd1, fd2, "each caller owns its fd");
	cr_assert_eq(lseek(fd1, 100, SEEK_SET), 100);
	cr_assert_eq(lseek(fd2, 0, SEEK_CUR), 100, "duplicates of one open file");
	close(fd1);
	close(fd2);
	free(p1);
	free(p2);
	symbolizer_free(s);
}

Test(symbolize, mappings_without_a_file, .init = make_tmpdir, .fini = cleanup)
{
	static const char *const paths[] = {
		"[heap]", "[stack]", "//anon", "/memfd:jit (deleted)", "anon_inode:[perf_event]",
		"relative/path", "", "/nonexistent/bpfrec-test/lib.so",
	};
	struct symbolizer *s = isolated_symbolizer(false);
	struct sym_result r;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct sym_mapping m = { .path = paths[i], .start = 0x1000, .len = 0x1000 };

		cr_assert_eq(symbolize_user(s, &m, 0x1100, &r), -ENOENT, "%s", paths[i]);
		cr_assert_eq(r.nr_frames, 0);
	}
	symbolizer_free(s);
}

Test(symbolize, deleted_file_needs_a_build_id, .init = make_tmpdir, .fini = cleanup)
{
	uint8_t id[BUILDID_MAX];
	size_t id_size = 0;
	char path[4200];
	struct symbolizer *s;
	struct sym_mapping m;
	struct sym_result r;
	uint64_t value, size;

	cr_assert_eq(buildid_read_file(fixture("sym_target"), id, &id_size), 0);
	s = isolated_symbolizer(false);
	m = text_mapping(fixture("sym_target"), 0x7f0000000000ULL);
	snprintf(path, sizeof(path), "%s (deleted)", fixture("sym_target"));
	m.path = path;
	nm_symbol(fixture("sym_target"), "sym_leaf", &value, &size);
	/* Whatever is at the path now may be another version... */
	cr_assert_eq(symbolize_user(s, &m, 0x7f0000000000ULL + value, &r), -ENOENT);
	/* ...unless the build-id proves it is the same file. */
	m.build_id = id;
	m.build_id_size = id_size;
	cr_assert_eq(symbolize_user(s, &m, 0x7f0000000000ULL + value, &r), 0);
	cr_assert_str_eq(r.frames[0].function, "sym_leaf");
	symbolizer_free(s);
}

Test(symbolize, addresses_outside_the_file, .init = make_tmpdir, .fini = cleanup)
{
	struct symbolizer *s = isolated_symbolizer(false);
	struct sym_mapping m = text_mapping(fixture("sym_target"), 0x7f0000000000ULL);
	struct sym_result r;

	/* Below the mapping, past its end, and inside it past the segment's bytes. */
	cr_assert_eq(symbolize_user(s, &m, m.start - 1, &r), -ENOENT);
	cr_assert_eq(symbolize_user(s, &m, m.start + m.len, &r), -ENOENT);
	m.pgoff += 0x100000;
	m.len = 0;
	cr_assert_eq(symbolize_user(s, &m, m.start + 0x10, &r), -ENOENT);
	cr_assert_eq(r.nr_frames, 0);
	symbolizer_free(s);
}

/* ---- the system's own debug info ------------------------------------ */

Test(symbolize, libc_with_system_debug_info)
{
	struct symbolizer *s = NULL;
	struct sym_result r;
	struct sym_mapping m = { 0 };
	char line[1024], path[512], hex[41], dbg[600];
	/* libc's own malloc, not a sanitizer's interceptor. */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	uint64_t addr = libc ? (uint64_t)(uintptr_t)dlsym(libc, "malloc") : 0;
	Dl_info info;
	FILE *f;

	cr_assert(addr && dladdr((void *)(uintptr_t)addr, &info) && info.dli_fname);
	build_id_hex(info.dli_fname, hex);
	snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	if (access(dbg, R_OK))
		cr_skip_test("no debug info for %s installed (libc6-dbg)", info.dli_fname);
	/* Our own mapping of libc, as a recorder would have seen it. */
	f = fopen("/proc/self/maps", "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long st, en, off;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %511s", &st, &en, &off, path) == 4 &&
		    addr >= st && addr < en) {
			m.start = st;
			m.len = en - st;
			m.pgoff = off;
			m.path = path;
			break;
		}
	}
	fclose(f);
	cr_assert(m.path, "malloc is in no mapping");
	cr_assert_eq(symbolizer_new(NULL, &s), 0);
	cr_assert_eq(symbolize_user(s, &m, addr + 8, &r), 0);
	cr_assert(strstr(r.frames[r.nr_frames - 1].function, "malloc"), "%s",
		  r.frames[r.nr_frames - 1].function);
	cr_assert(r.frames[r.nr_frames - 1].file &&
		  ends_with(r.frames[r.nr_frames - 1].file, "malloc.c"), "%s",
		  r.frames[r.nr_frames - 1].file);
	cr_assert_gt(r.frames[r.nr_frames - 1].line, 0);
	cr_assert(r.has_functions && r.has_filenames && r.has_line_numbers);
	symbolizer_free(s);
	dlclose(libc);
}

/* ---- the vDSO ------------------------------------------------------ */

struct vdso_info {
	struct sym_mapping m;
	uint64_t func;		/* __vdso_clock_gettime, relative to the image */
	char names[4][256];	/* every dynamic symbol at that address */
	size_t nr_names;
	uint8_t id[BUILDID_MAX];
	size_t id_size;
};

/* Our own [vdso]: its mapping, and a copy on disk for nm and the build-id. */
static void own_vdso(struct vdso_info *v)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	char line[512], cmd[4200], sym[256];
	const char *copy = tmp("vdso.so");
	unsigned long long val, sz, func = ~0ULL;
	FILE *f;

	memset(v, 0, sizeof(*v));
	cr_assert(base, "no vDSO in this process");
	f = fopen("/proc/self/maps", "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long st, en;

		if (sscanf(line, "%llx-%llx", &st, &en) == 2 && st == base && strstr(line, "[vdso]"))
			v->m = (struct sym_mapping){ .path = "[vdso]", .start = st, .len = en - st };
	}
	fclose(f);
	cr_assert(v->m.len, "no [vdso] line in /proc/self/maps");
	f = fopen(copy, "w");
	cr_assert(f);
	cr_assert_eq(fwrite((const void *)base, 1, v->m.len, f), v->m.len);
	fclose(f);
	cr_assert_eq(buildid_read_file(copy, v->id, &v->id_size), 0);
	snprintf(cmd, sizeof(cmd), "nm -D -S '%s'", copy);
	for (int pass = 0; pass < 2; pass++) {
		FILE *p = popen(cmd, "r");

		cr_assert(p);
		while (fgets(line, sizeof(line), p)) {
			char type;

			if (sscanf(line, "%llx %llx %c %255s", &val, &sz, &type, sym) != 4)
				continue;
			sym[strcspn(sym, "@")] = '\0';
			if (pass == 0 && !strcmp(sym, "__vdso_clock_gettime"))
				func = val;
			if (pass == 1 && val == func && v->nr_names < 4)
				snprintf(v->names[v->nr_names++], sizeof(v->names[0]), "%s", sym);
		}
		pclose(p);
	}
	cr_assert_neq(func, ~0ULL, "no __vdso_clock_gettime in the vDSO");
	v->func = func;
}

static bool is_one_of(const char *name, const struct vdso_info *v)
{
	for (size_t i = 0; name && i < v->nr_names; i++)
		if (!strcmp(name, v->names[i]))
			return true;
	return false;
}

Test(symbolize, vdso_of_this_kernel, .init = make_tmpdir, .fini = cleanup)
{
	struct symbolizer *s = isolated_symbolizer(false);
	struct vdso_info v;
	struct sym_result r;
	uint8_t wrong[BUILDID_MAX];

	own_vdso(&v);
	cr_assert_eq(symbolize_user(s, &v.m, v.m.start + v.func + 1, &r), 0);
	cr_assert(is_one_of(r.frames[r.nr_frames - 1].function, &v), "got %s",
		  r.frames[r.nr_frames - 1].function);
	/* The recorded build-id is this vDSO's: the same answer. */
	v.m.build_id = v.id;
	v.m.build_id_size = v.id_size;
	cr_assert_eq(symbolize_user(s, &v.m, v.m.start + v.func + 1, &r), 0);
	cr_assert(is_one_of(r.frames[r.nr_frames - 1].function, &v));
	/* Recorded under another kernel: not this vDSO. */
	memcpy(wrong, v.id, v.id_size);
	wrong[0] ^= 0xff;
	v.m.build_id = wrong;
	cr_assert_eq(symbolize_user(s, &v.m, v.m.start + v.func + 1, &r), -ENOENT);
	cr_assert_eq(r.nr_frames, 0);
	symbolizer_free(s);
}

Test(symbolize, vdso_from_perf_cache, .init = make_tmpdir, .fini = cleanup)
{
	/* Any ELF stands in for another kernel's vDSO, kept as perf does. */
	check_found_in_perf_cache("vdso", "[vdso]", "sym_leaf");
}

/* ---- JIT perf maps -------------------------------------------------- */

static const char jit_map[] =
	"7f0000001000 100 short_fn\n"
	"0x7f0000002000 0x80 LazyCompile:*foo /app/x.js:10:3\n"
	"this line is garbage\n"
	"7f0000003000 200 outer_stub\n"
	"7f0000003100 10 regenerated_old\n"
	"7F0000003100 10 regenerated_new\r\n"
	"7f0000004000 0 zero_sized\n"
	"\n"
	"7f0000005000 20 last";

static struct symbolizer *jit_symbolizer(void)
{
	struct symbolizer_opts opts = { .jit_dir = tmpdir };
	struct symbolizer *s = NULL;
	FILE *f = fopen(tmp("perf-4242.map"), "w");

	cr_assert(f);
	fputs(jit_map, f);
	fclose(f);
	cr_assert_eq(symbolizer_new(&opts, &s), 0);
	return s;
}

static void expect_jit(struct symbolizer *s, int pid, uint64_t addr, const char *name)
{
	struct sym_result r;
	int err = symbolize_jit(s, pid, addr, &r);

	if (!name) {
		cr_assert_eq(err, -ENOENT, "%#llx: %d", (unsigned long long)addr, err);
		cr_assert_eq(r.nr_frames, 0);
		return;
	}
	cr_assert_eq(err, 0, "%#llx: %d", (unsigned long long)addr, err);
	cr_assert_eq(r.nr_frames, 1);
	cr_assert_str_eq(r.frames[0].function, name);
	cr_assert_null(r.frames[0].file);
	cr_assert(r.has_functions && !r.has_filenames && !r.has_line_numbers);
}

Test(symbolize, jit_perf_map, .init = make_tmpdir, .fini = cleanup)
{
	struct symbolizer *s = jit_symbolizer();

	expect_jit(s, 4242, 0x7f0000000fffULL, NULL);
	expect_jit(s, 4242, 0x7f0000001000ULL, "short_fn");
	expect_jit(s, 4242, 0x7f00000010ffULL, "short_fn");
	expect_jit(s, 4242, 0x7f0000001100ULL, NULL);
	expect_jit(s, 4242, 0x7f0000002040ULL, "LazyCompile:*foo /app/x.js:10:3");
	/* Overlaps: the entry written last wins; the older one still covers the rest. */
	expect_jit(s, 4242, 0x7f0000003050ULL, "outer_stub");
	expect_jit(s, 4242, 0x7f0000003105ULL, "regenerated_new");
	expect_jit(s, 4242, 0x7f0000003150ULL, "outer_stub");
	expect_jit(s, 4242, 0x7f0000004000ULL, NULL);
	expect_jit(s, 4242, 0x7f000000501fULL, "last");
	expect_jit(s, 4242, 0x7f0000005020ULL, NULL);
	/* No map for that pid. */
	expect_jit(s, 4243, 0x7f0000001000ULL, NULL);
	symbolizer_free(s);
}

Test(symbolize, jit_map_is_read_once_per_pid, .init = make_tmpdir, .fini = cleanup)
{
	struct symbolizer *s = jit_symbolizer();
	FILE *f;

	expect_jit(s, 4242, 0x7f0000001000ULL, "short_fn");
	f = fopen(tmp("perf-4242.map"), "w");
	cr_assert(f);
	fputs("7f0000001000 100 rewritten\n", f);
	fclose(f);
	expect_jit(s, 4242, 0x7f0000001000ULL, "short_fn");
	symbolizer_free(s);
}

/* Whether path is mapped in this process (/proc/self/maps). */
static bool mapped_here(const char *path)
{
	char line[4200];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	cr_assert(f);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		found |= ends_with(line, path);
	}
	fclose(f);
	return found;
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	cr_assert_eq(stat(path, &st), 0, "%s", path);
	return (uint64_t)st.st_size;
}

/*
 * symbolizer_size() counts the pages of the files naming mapped that are
 * resident here (the binary and the debug file its debuglink finds), at
 * most the files' sizes, plus tables; freeing it unmaps both.
 */
Test(symbolize, size_counts_resident_file_pages_and_free_unmaps_them, .init = make_tmpdir,
     .fini = cleanup)
{
	const char *bin = make_stripped(true), *dbg = tmp("bin/t.debug");
	struct symbolizer *s;
	struct sym_mapping m;
	struct sym_result r;
	uint64_t value, size;
	size_t empty, named, again;

	isolate_home();
	run("mv '%s' '%s'", tmp("t.debug"), dbg);
	s = new_symbolizer(tmp("debug"), false);
	empty = symbolizer_size(s);
	cr_assert_lt(empty, 4096, "nothing loaded yet: %zu", empty);
	m = text_mapping(bin, 0x7f0000000000ULL);
	nm_symbol(fixture("sym_target"), "sym_leaf", &value, &size);
	cr_assert_eq(symbolize_user(s, &m, 0x7f0000000000ULL + value + 4, &r), 0);
	cr_assert_str_eq(r.frames[r.nr_frames - 1].function, "sym_leaf");
	cr_assert(r.frames[0].line > 0, "named from the debug file's DWARF");
	cr_assert(mapped_here(dbg), "libdw maps the debug file");
	named = symbolizer_size(s);
	/* The ELF headers and the DWARF read are resident pages: at least two. */
	cr_assert_geq(named, empty + 2 * 4096, "%zu: no resident page counted", named);
	cr_assert_leq(named, empty + file_size(bin) + file_size(dbg) + 8 * 4096 + (64u << 10),
		      "%zu: more than the files (%llu + %llu) and the tables", named,
		      (unsigned long long)file_size(bin), (unsigned long long)file_size(dbg));
	/* The same address again reads nothing new. */
	cr_assert_eq(symbolize_user(s, &m, 0x7f0000000000ULL + value + 4, &r), 0);
	again = symbolizer_size(s);
	cr_assert_eq(again, named, "%zu, then %zu", named, again);
	symbolizer_free(s);
	cr_assert(!mapped_here(dbg) && !mapped_here(bin), "mapped after symbolizer_free()");
}

/* The outermost function symbolize_user() names at addr of m, or NULL. */
static const char *name_at(struct symbolizer *s, const struct sym_mapping *m, uint64_t addr)
{
	struct sym_result r;

	if (symbolize_user(s, m, addr, &r) || !r.nr_frames)
		return NULL;
	return r.frames[r.nr_frames - 1].function;
}

/*
 * A Python symbol file keeps its path and build-id while it grows, and the
 * recorder files it again, over its earlier copy, at each rotation
 * (recorder/pysyms_cache.h). A symbolizer serving one recording after
 * another (bpfrec agent's windows) reads the grown copy in the next
 * recording, and a file that was not filed yet once it is; within one
 * recording the answers stay as they were.
 */
Test(symbolize, grown_symbol_file_is_read_again_in_the_next_recording, .init = make_tmpdir,
     .fini = cleanup)
{
	static const struct py_symfile_func early = { 0x100, 0x10, "early", "/srv/app.py", NULL, 0 };
	static const struct py_symfile_func late = { 0x200, 0x10, "late", "/srv/app.py", NULL, 0 };
	struct symbolizer *s = isolated_symbolizer(false);
	struct buildid_cache_opts co = { .dir = tmp("empty-home/.debug") };
	uint8_t id[PY_SYMFILE_BUILD_ID_SIZE], id2[PY_SYMFILE_BUILD_ID_SIZE];
	struct sym_mapping m = { .start = PY_SYMFILE_MAP_BASE, .len = 1 << 24,
				 .build_id = id, .build_id_size = sizeof(id) };
	struct sym_mapping m2 = m;
	struct buildid_cache *cache;
	struct py_symfile *sf, *sf2;
	char path[64], path2[64];
	const char *n;

	for (size_t i = 0; i < sizeof(id); i++) {
		id[i] = (uint8_t)(0x70 + i);
		id2[i] = (uint8_t)(0x90 + i);
	}
	cr_assert_eq(py_symfile_path(path, sizeof(path), 4245, 0), 0);
	cr_assert_eq(py_symfile_path(path2, sizeof(path2), 4246, 1), 0);
	m.path = path;
	m2.path = path2;
	m2.build_id = id2;
	cr_assert_eq(buildid_cache_new(&co, &cache), 0);
	cr_assert_eq(py_symfile_new(&sf), 0);
	cr_assert_eq(py_symfile_add(sf, &early), 0);
	cr_assert_eq(py_symfile_cache(sf, cache, path, id), 0);

	/* The first recording: the file as filed then; the other one not filed yet. */
	symbolizer_next_recording(s);
	n = name_at(s, &m, m.start + early.start + 2);
	cr_assert(n && !strcmp(n, "early (app.py)"), "early: %s", n ? n : "none");
	cr_assert_null(name_at(s, &m, m.start + late.start + 2));
	cr_assert_null(name_at(s, &m2, m2.start + early.start + 2));

	/* Both filed while that recording is still being read: its answers stay. */
	cr_assert_eq(py_symfile_add(sf, &late), 0);
	cr_assert_eq(py_symfile_cache(sf, cache, path, id), 0);
	cr_assert_eq(py_symfile_new(&sf2), 0);
	cr_assert_eq(py_symfile_add(sf2, &early), 0);
	cr_assert_eq(py_symfile_cache(sf2, cache, path2, id2), 0);
	cr_assert_null(name_at(s, &m, m.start + late.start + 2));

	/* The next recording reads both as they are now. */
	symbolizer_next_recording(s);
	n = name_at(s, &m, m.start + late.start + 2);
	cr_assert(n && !strcmp(n, "late (app.py)"), "late: %s", n ? n : "none");
	n = name_at(s, &m, m.start + early.start + 2);
	cr_assert(n && !strcmp(n, "early (app.py)"), "early again: %s", n ? n : "none");
	n = name_at(s, &m2, m2.start + early.start + 2);
	cr_assert(n && !strcmp(n, "early (app.py)"), "the file filed late: %s", n ? n : "none");

	buildid_cache_free(cache);
	py_symfile_free(sf);
	py_symfile_free(sf2);
	symbolizer_free(s);
}

/* buildid_cache_opts.on_filed, as bpfrec agent wires it: each filing told to the symbolizer. */
static void tell_filed(void *ctx, const uint8_t *id, size_t size)
{
	symbolizer_file_filed(ctx, id, size);
}

/*
 * With filed_told, a file with a build-id is checked again only when its
 * build-id was filed since it was looked for: one filed again, grown, is
 * read anew in the next recording, one not filed yet once it is, and a
 * file changed behind the symbolizer's back (nobody told) is not looked at
 * again: no stat per file and recording.
 */
Test(symbolize, filed_told_checks_only_the_files_filed, .init = make_tmpdir, .fini = cleanup)
{
	static const struct py_symfile_func early = { 0x100, 0x10, "early", "/srv/app.py", NULL, 0 };
	static const struct py_symfile_func late = { 0x200, 0x10, "late", "/srv/app.py", NULL, 0 };
	static const struct py_symfile_func later = { 0x300, 0x10, "later", "/srv/app.py", NULL, 0 };
	struct symbolizer_opts so = { .debug_dir = tmp("empty-debug"), .filed_told = true };
	struct buildid_cache_opts co = { .dir = tmp("empty-home/.debug"), .on_filed = tell_filed };
	uint8_t id[PY_SYMFILE_BUILD_ID_SIZE], id2[PY_SYMFILE_BUILD_ID_SIZE];
	struct sym_mapping m = { .start = PY_SYMFILE_MAP_BASE, .len = 1 << 24,
				 .build_id = id, .build_id_size = sizeof(id) };
	struct sym_mapping m2 = m;
	struct buildid_cache *cache, *untold;
	struct py_symfile *sf, *sf2;
	struct symbolizer *s = NULL;
	char path[64], path2[64];
	const char *n;

	run("mkdir -p '%s' '%s'", tmp("empty-debug"), tmp("empty-home"));
	cr_assert_eq(setenv("HOME", tmp("empty-home"), 1), 0);
	cr_assert_eq(symbolizer_new(&so, &s), 0);
	for (size_t i = 0; i < sizeof(id); i++) {
		id[i] = (uint8_t)(0x71 + i);
		id2[i] = (uint8_t)(0x91 + i);
	}
	cr_assert_eq(py_symfile_path(path, sizeof(path), 4247, 0), 0);
	cr_assert_eq(py_symfile_path(path2, sizeof(path2), 4248, 1), 0);
	m.path = path;
	m2.path = path2;
	m2.build_id = id2;
	co.on_filed_ctx = s;
	cr_assert_eq(buildid_cache_new(&co, &cache), 0);
	co.on_filed = NULL;
	cr_assert_eq(buildid_cache_new(&co, &untold), 0);
	cr_assert_eq(py_symfile_new(&sf), 0);
	cr_assert_eq(py_symfile_add(sf, &early), 0);
	cr_assert_eq(py_symfile_cache(sf, cache, path, id), 0);

	symbolizer_next_recording(s);
	n = name_at(s, &m, m.start + early.start + 2);
	cr_assert(n && !strcmp(n, "early (app.py)"), "early: %s", n ? n : "none");
	cr_assert_null(name_at(s, &m2, m2.start + early.start + 2));

	/* Filed (and told) while that recording is read: its answers stay. */
	cr_assert_eq(py_symfile_add(sf, &late), 0);
	cr_assert_eq(py_symfile_cache(sf, cache, path, id), 0);
	cr_assert_eq(py_symfile_new(&sf2), 0);
	cr_assert_eq(py_symfile_add(sf2, &early), 0);
	cr_assert_eq(py_symfile_cache(sf2, cache, path2, id2), 0);
	cr_assert_null(name_at(s, &m, m.start + late.start + 2));

	/* The next recording reads both as they are now. */
	symbolizer_next_recording(s);
	n = name_at(s, &m, m.start + late.start + 2);
	cr_assert(n && !strcmp(n, "late (app.py)"), "late: %s", n ? n : "none");
	n = name_at(s, &m2, m2.start + early.start + 2);
	cr_assert(n && !strcmp(n, "early (app.py)"), "the file filed late: %s", n ? n : "none");

	/* Grown and filed again, but not told: what was found stays. */
	cr_assert_eq(py_symfile_add(sf, &later), 0);
	cr_assert_eq(py_symfile_cache(sf, untold, path, id), 0);
	symbolizer_next_recording(s);
	cr_assert_null(name_at(s, &m, m.start + later.start + 2));
	n = name_at(s, &m, m.start + late.start + 2);
	cr_assert(n && !strcmp(n, "late (app.py)"), "late, untold: %s", n ? n : "none");

	/* Told: read anew in the recording after. */
	symbolizer_file_filed(s, id, sizeof(id));
	cr_assert_null(name_at(s, &m, m.start + later.start + 2));
	symbolizer_next_recording(s);
	n = name_at(s, &m, m.start + later.start + 2);
	cr_assert(n && !strcmp(n, "later (app.py)"), "later, told: %s", n ? n : "none");

	buildid_cache_free(cache);
	buildid_cache_free(untold);
	py_symfile_free(sf);
	py_symfile_free(sf2);
	symbolizer_free(s);
}

/*
 * opts.kernel_now: the kernel's table is read in symbolizer_new(), so a
 * long-running user's memory is what it will be from the start; without
 * it, at the first kernel address. A table that cannot be read fails the
 * first kernel question, not the symbolizer.
 */
Test(symbolize, kernel_now_reads_kallsyms_at_creation, .init = make_tmpdir, .fini = cleanup)
{
	const char *ks = tmp("kallsyms");
	struct symbolizer *now, *lazy, *missing;
	struct sym_result r;
	FILE *f = fopen(ks, "w");

	cr_assert(f);
	fprintf(f, "ffffffff81000000 T _text\n");
	for (int i = 0; i < 2000; i++)
		fprintf(f, "ffffffff81%06x T kfunc_%d\n", 0x1000 + i * 0x40, i);
	cr_assert_eq(fclose(f), 0);
	struct symbolizer_opts o = { .kallsyms = ks, .kernel_now = true };

	cr_assert_eq(symbolizer_new(&o, &now), 0);
	o.kernel_now = false;
	cr_assert_eq(symbolizer_new(&o, &lazy), 0);
	cr_assert_gt(symbolizer_size(now), symbolizer_size(lazy) + 2000 * 8,
		     "kernel_now: %zu bytes, lazy: %zu", symbolizer_size(now), symbolizer_size(lazy));
	cr_assert_eq(symbolize_kernel(now, 0xffffffff81001048ULL, &r), 0);
	cr_assert_str_eq(r.frames[0].function, "kfunc_1");
	cr_assert_eq(symbolize_kernel(lazy, 0xffffffff81001048ULL, &r), 0);
	cr_assert_eq(symbolizer_size(lazy), symbolizer_size(now), "the same table, loaded later");
	o.kallsyms = tmp("no-such-kallsyms");
	o.kernel_now = true;
	cr_assert_eq(symbolizer_new(&o, &missing), 0, "a missing table is not the symbolizer's failure");
	cr_assert_lt(symbolize_kernel(missing, 0xffffffff81001048ULL, &r), 0);
	symbolizer_free(now);
	symbolizer_free(lazy);
	symbolizer_free(missing);
}
