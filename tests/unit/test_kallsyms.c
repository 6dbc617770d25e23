// SPDX-License-Identifier: MIT
/*
 * test_kallsyms.c - the kernel symbol table: a fake kallsyms written here
 * (unsorted, with aliases, data, end markers, modules and BPF programs),
 * broken and hidden (kptr_restrict) tables, the real /proc/kallsyms
 * compared with the names perf derives from its lines (shared addresses
 * included), and symbolize_kernel() on top of it.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/kallsyms.h"
#include "symbolize/symbolize.h"

/* Deliberately out of order; groups at one address test the alias choice. */
static const char fake_kallsyms[] =
	"ffffffff81000500 T delta\n"
	"ffffffff81000100 t alpha_local\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T text_begin\n"
	"ffffffff81000100 T alpha\n"
	"ffffffff81000200 t beta\n"
	"ffffffff81000300 W weak_gamma_longer_name\n"
	"ffffffff81000300 T gamma\n"
	"ffffffff81000400 D some_data\n"
	"ffffffff81000500 T delta_long\n"
	/* Winners that are not last in file order, or that the old rule missed. */
	"ffffffff81000600 T __x86_indirect_thunk_array\n"
	"ffffffff81000600 T __x86_indirect_thunk_rax\n"
	"ffffffff81000680 T __pi_thing\n"
	"ffffffff81000680 T thing\n"
	"ffffffff81000680 t ___thing_local\n"
	"ffffffff81000700 t func_before_ro\n"
	"ffffffff81000700 r func_ro_alias\n"
	"ffffffff81000700 a func_abs_alias\n"
	"ffffffff81000780 t $x\n"
	"ffffffff81000780 T dollar_first\n"
	"ffffffff81000780 t $d\n"
	"ffffffff81000800 T text_then_data\n"
	"ffffffff81000800 D data_at_text\n"
	"ffffffff81000900 T _etext\n"
	"ffffffff81000a00 T init_after_etext\n"
	"ffffffffc0001100 t mod_func2\t[mymod]\n"
	"ffffffffc0001000 t mod_func\t[mymod]\n"
	"ffffffffc0002000 d mod_data\t[mymod]\n"
	"ffffffffc0003000 t bpf_prog_0123456789abcdef_main\t[bpf]";	/* no final newline */

static char tmpdir[64];

static void make_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/bpfrec-kallsyms.XXXXXX");
	cr_assert(mkdtemp(tmpdir));
}

static void cleanup(void)
{
	char cmd[128];

	if (tmpdir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		cr_assert(system(cmd) == 0);
	}
}

static const char *write_file(const char *name, const char *text)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	cr_assert(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static struct kallsyms *load_fake(void)
{
	struct kallsyms *ks = NULL;

	cr_assert_eq(kallsyms_load(write_file("kallsyms", fake_kallsyms), &ks, NULL, 0), 0);
	return ks;
}

static void expect(const struct kallsyms *ks, uint64_t addr, const char *name, uint64_t off,
		   const char *module)
{
	const char *got, *got_mod = "unset";
	uint64_t got_off = ~0ULL;
	int err = kallsyms_lookup(ks, addr, &got, &got_off, &got_mod);

	cr_assert_eq(err, 0, "%#llx: %d, want %s", (unsigned long long)addr, err, name);
	cr_assert_str_eq(got, name, "%#llx", (unsigned long long)addr);
	cr_assert_eq(got_off, off, "%#llx: offset %#llx", (unsigned long long)addr,
		     (unsigned long long)got_off);
	if (module)
		cr_assert_str_eq(got_mod, module);
	else
		cr_assert_null(got_mod, "%#llx: module %s", (unsigned long long)addr, got_mod);
}

static void expect_none(const struct kallsyms *ks, uint64_t addr)
{
	const char *got = NULL;
	uint64_t off;

	cr_assert_eq(kallsyms_lookup(ks, addr, &got, &off, NULL), -ENOENT, "%#llx found %s",
		     (unsigned long long)addr, got ? got : "?");
}

/*
 * Lookups in the fake table: an address, the symbol and offset it names
 * (no name: none, -ENOENT) and its module (none: the kernel's).
 */
static const struct {
	uint64_t addr;
	const char *name;
	uint64_t off;
	const char *module;
} lookups[] = {
	{ .addr = 0xffffffff80ffffffULL }, /* below the first symbol */
	/*
	 * perf sizes kallsyms symbols by the next one it loads, so at a shared
	 * address only the last it loads (t/T/w/W/d/D/b/B, no "$" names) has a
	 * size, and a sized symbol beats every other rule.
	 */
	{ .addr = 0xffffffff81000000ULL, .name = "text_begin" },
	/* The local alpha_local came first: the global alpha is last. */
	{ .addr = 0xffffffff81000105ULL, .name = "alpha", .off = 5 },
	{ .addr = 0xffffffff81000250ULL, .name = "beta", .off = 0x50 },
	{ .addr = 0xffffffff81000300ULL, .name = "gamma" },
	{ .addr = 0xffffffff810003ffULL, .name = "gamma", .off = 0xff },
	/* A data symbol ends the text before it and is not text itself. */
	{ .addr = 0xffffffff81000400ULL },
	{ .addr = 0xffffffff810004ffULL },
	{ .addr = 0xffffffff810005ffULL, .name = "delta_long", .off = 0xff },
	/* Same binding and underscores, shorter name: still the sized one. */
	{ .addr = 0xffffffff81000610ULL, .name = "__x86_indirect_thunk_rax", .off = 0x10 },
	/* A local with three underscores after a global: the local is last. */
	{ .addr = 0xffffffff81000680ULL, .name = "___thing_local" },
	/* perf does not load r or a symbols: the t before them is the last it loads. */
	{ .addr = 0xffffffff81000701ULL, .name = "func_before_ro", .off = 1 },
	/* Nor ARM's "$x" mapping symbols. */
	{ .addr = 0xffffffff81000790ULL, .name = "dollar_first", .off = 0x10 },
	/* perf loads data too: a data alias after the text is the name it shows. */
	{ .addr = 0xffffffff81000800ULL, .name = "data_at_text" },
	/* _etext ends the kernel's text; text symbols past it do not count. */
	{ .addr = 0xffffffff81000900ULL },
	{ .addr = 0xffffffff81000a10ULL },
	{ .addr = 0xffffffffa0000000ULL },
	/* Modules: sorted in, bounded by their neighbours. */
	{ .addr = 0xffffffffc0001010ULL, .name = "mod_func", .off = 0x10, .module = "mymod" },
	{ .addr = 0xffffffffc0001150ULL, .name = "mod_func2", .off = 0x50, .module = "mymod" },
	{ .addr = 0xffffffffc0001fffULL, .name = "mod_func2", .off = 0xeff, .module = "mymod" },
	{ .addr = 0xffffffffc0002010ULL },
	/* The last symbol has no known end: it covers its page, no more. */
	{ .addr = 0xffffffffc0003020ULL, .name = "bpf_prog_0123456789abcdef_main", .off = 0x20, .module = "bpf" },
	{ .addr = 0xffffffffc0003fffULL, .name = "bpf_prog_0123456789abcdef_main", .off = 0xfff, .module = "bpf" },
	{ .addr = 0xffffffffc0004000ULL },
};

Test(kallsyms, fake_table_lookups, .init = make_tmpdir, .fini = cleanup)
{
	struct kallsyms *ks = load_fake();

	for (size_t i = 0; i < sizeof(lookups) / sizeof(lookups[0]); i++) {
		if (lookups[i].name)
			expect(ks, lookups[i].addr, lookups[i].name, lookups[i].off,
			       lookups[i].module);
		else
			expect_none(ks, lookups[i].addr);
	}
	kallsyms_free(ks);
}

Test(kallsyms, find_by_name, .init = make_tmpdir, .fini = cleanup)
{
	struct kallsyms *ks = load_fake();
	uint64_t addr = 0;

	cr_assert_eq(kallsyms_find(ks, "_text", &addr), 0);
	cr_assert_eq(addr, 0xffffffff81000000ULL);
	cr_assert_eq(kallsyms_find(ks, "_etext", &addr), 0);
	cr_assert_eq(addr, 0xffffffff81000900ULL);
	cr_assert_eq(kallsyms_find(ks, "some_data", &addr), 0);
	cr_assert_eq(addr, 0xffffffff81000400ULL);
	cr_assert_eq(kallsyms_find(ks, "mod_func2", &addr), 0);
	cr_assert_eq(addr, 0xffffffffc0001100ULL);
	cr_assert_eq(kallsyms_find(ks, "no_such_symbol", &addr), -ENOENT);
	cr_assert_eq(kallsyms_find(ks, "mod_func2\t[mymod]", &addr), -ENOENT);
	/* The core kernel's only, as kallsyms_find_names() reads the file. */
	cr_assert_eq(kallsyms_find_core(ks, "_text", &addr), 0);
	cr_assert_eq(addr, 0xffffffff81000000ULL);
	cr_assert_eq(kallsyms_find_core(ks, "mod_func2", &addr), -ENOENT);
	kallsyms_free(ks);
}

Test(kallsyms, hidden_addresses_are_eperm, .init = make_tmpdir, .fini = cleanup)
{
	struct kallsyms *ks = NULL;
	const char *path = write_file("hidden",
				      "0000000000000000 T _text\n"
				      "0000000000000000 T ksys_write\n"
				      "0000000000000000 t mod_func\t[mymod]\n");

	char msg[256];

	cr_assert_eq(kallsyms_load(path, &ks, msg, sizeof(msg)), -EPERM);
	cr_assert_null(ks);
	/* The reason goes to the caller, naming the file and the fix. */
	cr_assert(strstr(msg, path) && strstr(msg, "kptr_restrict") && strstr(msg, "--kallsyms"),
		  "%s", msg);
	cr_assert_eq(kallsyms_load(path, &ks, NULL, 0), -EPERM, "no message wanted");
}

Test(kallsyms, malformed_tables, .init = make_tmpdir, .fini = cleanup)
{
	static const char *const bad[] = {
		"",					/* no symbols at all */
		"ffffffff81000000 T _text\nzzzz T x\n",	/* not hex */
		"ffffffff81000000 T\n",			/* no name */
		"ffffffff81000000 T_text\n",		/* no space after the type */
		"ffffffff81000000 t f\t[mod\n",		/* unclosed module */
		"ffffffff81000000 t f\t[]\n",		/* empty module */
		"1ffffffff81000000 T toolong\n",	/* more than 64 bits */
	};
	struct kallsyms *ks = NULL;
	char path[128], msg[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(path, sizeof(path), "%s", write_file("bad", bad[i]));
		cr_assert_eq(kallsyms_load(path, &ks, msg, sizeof(msg)), -EINVAL, "case %zu", i);
		cr_assert(strstr(msg, path) && strstr(msg, i ? "not a kallsyms line" : "no symbols"),
			  "case %zu: %s", i, msg);
	}
	snprintf(path, sizeof(path), "%s/missing", tmpdir);
	cr_assert_eq(kallsyms_load(path, &ks, msg, sizeof(msg)), -ENOENT);
	cr_assert(strstr(msg, "cannot read") && strstr(msg, path), "%s", msg);
}

/* Lines of /proc/kallsyms as read here with sscanf, and their place in the file. */
struct ksline {
	unsigned long long addr;
	size_t line;
	char type;
	bool module;
	char name[128];
};

static int ksline_cmp(const void *pa, const void *pb)
{
	const struct ksline *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

/* Every line of /proc/kallsyms, by address and, at one address, in file order. */
static size_t read_proc_kallsyms(struct ksline **out)
{
	struct ksline *all = NULL;
	size_t nr = 0, cap = 0;
	char line[512], name[256], extra[256];
	FILE *f = fopen("/proc/kallsyms", "r");

	cr_assert(f);
	while (fgets(line, sizeof(line), f)) {
		struct ksline k = { .line = nr };
		int fields = sscanf(line, "%llx %c %255s %255s", &k.addr, &k.type, name, extra);

		cr_assert_geq(fields, 3, "kallsyms line: %s", line);
		k.module = fields == 4;
		/* Too long for here: an empty name makes its address untestable. */
		size_t len = strlen(name);

		if (len < sizeof(k.name))
			memcpy(k.name, name, len + 1);
		if (nr == cap) {
			cap = cap ? 2 * cap : 4096;
			all = realloc(all, cap * sizeof(*all));
			cr_assert(all);
		}
		all[nr++] = k;
	}
	fclose(f);
	qsort(all, nr, sizeof(*all), ksline_cmp);
	*out = all;
	return nr;
}

/*
 * The name perf shows at the address of run[0..n), derived from how perf
 * reads kallsyms rather than from its alias rule: it loads t/T/w/W/d/D/b/B
 * lines (no "$" names) and ends each symbol at the next one it loaded, so
 * the last of them in file order is the only one with a size, and a sized
 * symbol beats any unsized one. NULL when no text line is there.
 */
static const char *perf_name(const struct ksline *run, size_t n)
{
	const char *name = NULL;
	bool text = false;

	for (size_t i = 0; i < n; i++) {
		text |= strchr("tTwW", run[i].type) != NULL;
		if (strchr("tTwWdDbB", run[i].type) && run[i].name[0] != '$')
			name = run[i].name;
	}
	return text ? name : NULL;
}

Test(kallsyms, real_proc_kallsyms)
{
	struct kallsyms *ks = NULL;
	struct ksline *lines = NULL;
	uint64_t ksys_write, text, etext, off;
	const char *name, *module, *want;
	size_t nr, shared = 0, unique = 0, seen = 0;
	int err;

	err = kallsyms_load(NULL, &ks, NULL, 0);
	if (err == -EPERM)
		cr_skip_test("kptr_restrict hides kernel addresses from this user");
	cr_assert_eq(err, 0);
	cr_assert_eq(kallsyms_find(ks, "_text", &text), 0);
	cr_assert_eq(kallsyms_find(ks, "_etext", &etext), 0);
	cr_assert_gt(etext, text);
	/* The example of the contract: a known function, one byte in. */
	cr_assert_eq(kallsyms_find(ks, "ksys_write", &ksys_write), 0);
	cr_assert(ksys_write > text && ksys_write < etext);
	cr_assert_eq(kallsyms_lookup(ks, ksys_write + 1, &name, &off, &module), 0);
	cr_assert_str_eq(name, "ksys_write");
	cr_assert_eq(off, 1);
	cr_assert_null(module);
	/* Past the end of the kernel's text: nothing, though init text is there. */
	cr_assert_eq(kallsyms_lookup(ks, etext + 0x10, &name, &off, NULL), -ENOENT);
	/*
	 * The table read here with sscanf: at EVERY address of the core
	 * kernel's text that several lines share, and at every 97th other
	 * one, the name is the one perf shows.
	 */
	nr = read_proc_kallsyms(&lines);
	for (size_t i = 0, j; i < nr; i = j) {
		bool testable = !lines[i].module && lines[i].addr >= text && lines[i].addr < etext;

		for (j = i + 1; j < nr && lines[j].addr == lines[i].addr; j++)
			testable &= !lines[j].module;
		for (size_t k = i; k < j; k++)
			testable &= lines[k].name[0] != '\0';
		want = perf_name(&lines[i], j - i);
		if (!testable || !want || (j - i == 1 && seen++ % 97))
			continue;
		cr_assert_eq(kallsyms_lookup(ks, lines[i].addr, &name, &off, NULL), 0, "%s", want);
		cr_assert_str_eq(name, want, "at %#llx", lines[i].addr);
		cr_assert_eq(off, 0);
		if (j - i > 1)
			shared++;
		else
			unique++;
	}
	free(lines);
	/* x86-64 kernels share at least _text's address (startup_64, _stext...). */
	cr_assert_gt(shared, 0, "no shared addresses in /proc/kallsyms");
	cr_assert_gt(unique, 50, "only %zu usable lines in /proc/kallsyms", unique);
	kallsyms_free(ks);
}

Test(kallsyms, symbolize_kernel_uses_the_given_file, .init = make_tmpdir, .fini = cleanup)
{
	struct symbolizer_opts opts = { .kallsyms = write_file("kallsyms", fake_kallsyms) };
	struct symbolizer *s = NULL;
	struct sym_result r;

	cr_assert_eq(symbolizer_new(&opts, &s), 0);
	cr_assert_eq(symbolize_kernel(s, 0xffffffff81000210ULL, &r), 0);
	cr_assert_eq(r.nr_frames, 1);
	cr_assert_str_eq(r.frames[0].function, "beta");
	cr_assert_null(r.frames[0].file);
	cr_assert_eq(r.frames[0].line, 0);
	cr_assert(r.has_functions && !r.has_filenames && !r.has_line_numbers &&
		  !r.has_inline_frames);
	cr_assert_eq(symbolize_kernel(s, 0xffffffffc0001001ULL, &r), 0);
	cr_assert_str_eq(r.frames[0].function, "mod_func");
	cr_assert_eq(symbolize_kernel(s, 0xffffffff81000450ULL, &r), -ENOENT);
	cr_assert_eq(r.nr_frames, 0);
	cr_assert(!r.has_functions);
	symbolizer_free(s);
}

Test(kallsyms, symbolize_kernel_reports_hidden_table, .init = make_tmpdir, .fini = cleanup)
{
	struct symbolizer_opts opts = {
		.kallsyms = write_file("hidden", "0000000000000000 T _text\n0000000000000000 T f\n"),
	};
	struct symbolizer *s = NULL;
	struct sym_result r;

	cr_assert_eq(symbolizer_new(&opts, &s), 0);
	cr_assert_eq(symbolize_kernel(s, 0xffffffff81000000ULL, &r), -EPERM);
	cr_assert_eq(r.nr_frames, 0);
	/* The failure is remembered: one message, the same answer. */
	cr_assert_eq(symbolize_kernel(s, 0xffffffff81000010ULL, &r), -EPERM);
	symbolizer_free(s);
}

/* ---- the line reader shared by the recorder and the converter ---- */

Test(kallsyms, reader_gives_every_line_in_file_order, .init = make_tmpdir, .fini = cleanup)
{
	struct kallsyms_reader r;
	struct kallsyms_sym s;
	size_t n = 0, lines = 0;

	/* The fake table, line by line: what the reader gives must match it. */
	for (const char *p = fake_kallsyms; *p; p++)
		lines += *p == '\n';
	lines++;	/* the last line has no newline */
	cr_assert_eq(kallsyms_reader_open(&r, write_file("kallsyms", fake_kallsyms)), 0);
	while (kallsyms_reader_next(&r, &s) == 1) {
		if (n == 0) {
			cr_assert_eq(s.addr, 0xffffffff81000500ULL);
			cr_assert_eq(s.type, 'T');
			cr_assert_str_eq(s.name, "delta");
			cr_assert_null(s.module);
		}
		if (!strcmp(s.name, "mod_data")) {
			cr_assert_eq(s.addr, 0xffffffffc0002000ULL);
			cr_assert_eq(s.type, 'd');
			cr_assert_str_eq(s.module, "mymod");
		}
		n++;
		cr_assert_eq(r.lineno, n);
	}
	/* The last one, without a final newline: a BPF program. */
	cr_assert_str_eq(s.name, "bpf_prog_0123456789abcdef_main");
	cr_assert_str_eq(s.module, "bpf");
	cr_assert_eq(n, lines);
	cr_assert_eq(kallsyms_reader_next(&r, &s), 0, "the end stays the end");
	kallsyms_reader_close(&r);
}

Test(kallsyms, reader_reports_bad_lines_and_goes_on, .init = make_tmpdir, .fini = cleanup)
{
	struct kallsyms_reader r;
	struct kallsyms_sym s;

	cr_assert_eq(kallsyms_reader_open(&r, write_file("bad", "ffffffff81000000 T _text\n"
								"\n"
								"garbage\n"
								"ffffffffc0000000 t f\t[\n"
								"0000000000000000 T hidden\n")),
		     0);
	cr_assert_eq(kallsyms_reader_next(&r, &s), 1);
	cr_assert_str_eq(s.name, "_text");
	cr_assert_eq(kallsyms_reader_next(&r, &s), -EINVAL, "garbage");
	cr_assert_eq(r.lineno, 3, "the empty line is passed over but counted");
	cr_assert_eq(kallsyms_reader_next(&r, &s), -EINVAL, "a module name never closed");
	cr_assert_eq(r.lineno, 4);
	/* kptr_restrict: the address is 0, still a symbol; the caller decides. */
	cr_assert_eq(kallsyms_reader_next(&r, &s), 1);
	cr_assert_str_eq(s.name, "hidden");
	cr_assert_eq(s.addr, 0);
	cr_assert_eq(kallsyms_reader_next(&r, &s), 0);
	kallsyms_reader_close(&r);
	cr_assert_eq(kallsyms_reader_open(&r, write_file("empty", "")), 0);
	cr_assert_eq(kallsyms_reader_next(&r, &s), 0);
	kallsyms_reader_close(&r);
	cr_assert_eq(kallsyms_reader_open(&r, "/nonexistent/kallsyms"), -ENOENT);
	kallsyms_reader_close(&r);	/* harmless after a failed open */
}

/* ---- a few names in one pass ---- */

Test(kallsyms, find_names_takes_the_first_core_symbol_and_the_next_line,
     .init = make_tmpdir, .fini = cleanup)
{
	struct kallsyms_want w[] = { { .name = "gamma" }, { .name = "_etext" },
				     { .name = "mod_func" }, { .name = "bpf_prog_0123456789abcdef_main" },
				     { .name = "absent" }, { .name = "delta" } };
	const char *path = write_file("kallsyms", fake_kallsyms);

	w[0].found = true;	/* outputs are reset: stale ones never leak through */
	w[4].addr = 42;
	cr_assert_eq(kallsyms_find_names(path, w, sizeof(w) / sizeof(w[0])), 0);
	cr_assert(w[0].found);
	cr_assert_eq(w[0].addr, 0xffffffff81000300ULL);
	cr_assert_eq(w[0].type, 'T');
	cr_assert_eq(w[0].lineno, 9);
	cr_assert_eq(w[0].next, 0xffffffff81000400ULL, "the line after it, whatever its kind");
	cr_assert(w[1].found);
	cr_assert_eq(w[1].next, 0xffffffff81000a00ULL);
	cr_assert_not(w[2].found, "a module's symbol is not the core kernel's");
	cr_assert_not(w[3].found);
	cr_assert_not(w[4].found);
	cr_assert_eq(w[4].addr, 0);
	cr_assert(w[5].found);
	cr_assert_eq(w[5].lineno, 1, "the first of that name, not delta_long");
	cr_assert_eq(w[5].next, 0xffffffff81000100ULL);
	cr_assert_str_eq(w[5].name, "delta", "the names asked stay");
}

Test(kallsyms, find_names_passes_over_bad_lines_and_ends_at_the_last,
     .init = make_tmpdir, .fini = cleanup)
{
	struct kallsyms_want w[] = { { .name = "_text" }, { .name = "last" }, { .name = "hidden" } };
	const char *path = write_file("bad", "garbage\n"
					     "ffffffff81000000 T _text\n"
					     "not a line either\n"
					     "ffffffff81000040 T after_text\n"
					     "0000000000000000 T hidden\n"
					     "ffffffff81000080 t last\n");

	cr_assert_eq(kallsyms_find_names(path, w, 3), 0);
	cr_assert(w[0].found);
	cr_assert_eq(w[0].lineno, 2);
	cr_assert_eq(w[0].next, 0xffffffff81000040ULL, "the next symbol, not the bad line");
	cr_assert(w[2].found, "a hidden address is still found: the caller decides");
	cr_assert_eq(w[2].addr, 0);
	cr_assert(w[1].found);
	cr_assert_eq(w[1].next, 0, "nothing after the last line");
	cr_assert_eq(kallsyms_find_names("/nonexistent/kallsyms", w, 3), -ENOENT);
	cr_assert_not(w[0].found);
}
