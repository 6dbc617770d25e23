// SPDX-License-Identifier: MIT
/*
 * test_cfitable.c - unwind tables from .eh_frame (symbolize/cfitable.h) and
 * the reference walker over them (symbolize/cfiwalk.h).
 *
 * Expected answers never come from libdw's CFI reader that the table is
 * built with: every row is checked against binutils' own interpretation of
 * the same CFI (`readelf -wF`), function addresses come from `nm`, and
 * walks of real stopped processes are compared with libdw's unwinder
 * (dwfl_getthread_frames), which runs the full CFI programs itself.
 *
 * The fixture tests/fixtures/cfi_tree.c is built without frame pointers at
 * -O2; walks stop it where it raises SIGSTOP, as its tracer (ptrace, which
 * root has; tests are skipped where the kernel forbids it).
 */
#include <criterion/criterion.h>
#include <elf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbolize/cfitable.h"
#include "symbolize/cfiwalk.h"
#include "symbolize/procmaps.h"
#include "tests/unit/test_nm.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define PYTHON "/usr/bin/python3.11"
#define SQLITE "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0"
/* clang's (tools/deps.sh installs clang), linked by gold. */
#define LIBLLVM "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1"

static char *fixture_path;

static const char *fixture(const char *name)
{
	const char *dir = getenv("FIXTURES");

	cr_assert(dir, "FIXTURES is not set: run through tests/run.sh");
	free(fixture_path);
	cr_assert(asprintf(&fixture_path, "%s/%s", dir, name) > 0);
	cr_assert(access(fixture_path, X_OK) == 0, "missing fixture %s: run 'make fixtures'",
		  fixture_path);
	return fixture_path;
}

static void free_fixture(void)
{
	free(fixture_path);
	fixture_path = NULL;
}

static struct cfi_table *build(const char *path)
{
	struct cfi_table *t;
	int err = cfi_table_build(path, &t);

	cr_assert(err == 0, "cfi_table_build(%s): %s", path, strerror(-err));
	cr_assert(t->nr > 0);
	return t;
}

/* The address range of a section, from readelf -S; *off: its file offset (may be NULL). */
static void section_place(const char *path, const char *name, uint64_t *start, uint64_t *end,
			  uint64_t *off_out)
{
	char cmd[1024], line[512], want[64];
	unsigned long long a, off, size;
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -SW '%s'", path);
	snprintf(want, sizeof(want), " %s ", name);
	p = popen(cmd, "r");
	cr_assert(p);
	while (fgets(line, sizeof(line), p)) {
		char *s = strstr(line, want);

		if (!s)
			continue;
		cr_assert(sscanf(s + strlen(want), " %*s %llx %llx %llx", &a, &off, &size) == 3,
			  "unexpected readelf line: %s", line);
		*start = a;
		*end = a + size;
		if (off_out)
			*off_out = off;
		found = true;
	}
	cr_assert(pclose(p) == 0);
	cr_assert(found, "no section %s in %s", name, path);
}

static void section_range(const char *path, const char *name, uint64_t *start, uint64_t *end)
{
	section_place(path, name, start, end, NULL);
}

static __u32 rule_at(const struct cfi_table *t, uint64_t vaddr)
{
	const struct unwind_row *r = cfi_table_lookup(t, vaddr);

	cr_assert(r, "no row at %#llx", (unsigned long long)vaddr);
	return r->rule;
}

/* ---- every row against readelf -wF ---------------------------------- */

#define MAX_COLS 40

struct readelf_state {
	const struct cfi_table *t;
	char cols[MAX_COLS][24];	/* the current table header: LOC CFA regs... ra */
	int nr_cols;
	bool signal;			/* the current FDE's CIE has 'S' */
	uint64_t fde_start, fde_end;
	bool fde_pending;		/* an FDE whose rows are not printed yet */
	uint64_t (*fdes)[2];		/* [start, end) of every FDE seen */
	size_t nr_fdes, cap_fdes;
	unsigned long checked, plt, signals, roots, rbp_saved;
	/* CIE offset -> augmentation has 'S'; CIE offset -> its own row. */
	unsigned long cie_off[64];
	bool cie_signal[64];
	char cie_row[64][MAX_COLS][24];
	char cie_cols[64][MAX_COLS][24];
	int cie_nr_cols[64], nr_cies, cur_cie;
	bool in_cie;
};

/* What readelf's row (columns in vals) says, checked against our row at loc. */
static void check_row(struct readelf_state *s, uint64_t loc, char vals[][24], int nr_vals)
{
	const char *cfa = NULL, *ra = NULL, *rbp = "u";
	long long cfa_off = 0, rbp_off;
	__u32 rule;

	if (loc < s->fde_start || loc >= s->fde_end)
		return;
	for (int c = 1; c < s->nr_cols && c < nr_vals; c++) {
		if (!strcmp(s->cols[c], "CFA"))
			cfa = vals[c];
		else if (!strcmp(s->cols[c], "ra"))
			ra = vals[c];
		else if (!strcmp(s->cols[c], "rbp"))
			rbp = vals[c];
	}
	cr_assert(cfa && ra, "row %#llx: no CFA or ra column", (unsigned long long)loc);
	rule = rule_at(s->t, loc);
	s->checked++;
	if (s->signal) {
		cr_expect(unwind_rule_cfa(rule) == UNWIND_CFA_SIGNAL, "%#llx: signal FDE, kind %u",
			  (unsigned long long)loc, unwind_rule_cfa(rule));
		s->signals++;
		return;
	}
	if (!strcmp(ra, "u")) {
		cr_expect(unwind_rule_cfa(rule) == UNWIND_CFA_ROOT, "%#llx: ra undefined, kind %u",
			  (unsigned long long)loc, unwind_rule_cfa(rule));
		s->roots++;
		return;
	}
	if (strcmp(ra, "c-8")) {
		cr_expect(unwind_rule_cfa(rule) == UNWIND_CFA_UNSUPPORTED, "%#llx: ra %s, kind %u",
			  (unsigned long long)loc, ra, unwind_rule_cfa(rule));
		return;
	}
	if (!strcmp(cfa, "exp")) {
		cr_expect(unwind_rule_cfa(rule) == UNWIND_CFA_PLT ||
				  unwind_rule_cfa(rule) == UNWIND_CFA_UNSUPPORTED,
			  "%#llx: CFA expression, kind %u", (unsigned long long)loc,
			  unwind_rule_cfa(rule));
		s->plt += unwind_rule_cfa(rule) == UNWIND_CFA_PLT;
		return;
	}
	if (sscanf(cfa, "rsp+%lld", &cfa_off) == 1) {
		cr_expect(rule == UNWIND_RULE(UNWIND_CFA_RSP, cfa_off, unwind_rule_rbp(rule),
					      unwind_rule_rbp_off(rule)),
			  "%#llx: CFA rsp+%lld, rule %#x", (unsigned long long)loc, cfa_off, rule);
	} else if (sscanf(cfa, "rbp+%lld", &cfa_off) == 1) {
		cr_expect(rule == UNWIND_RULE(UNWIND_CFA_RBP, cfa_off, unwind_rule_rbp(rule),
					      unwind_rule_rbp_off(rule)),
			  "%#llx: CFA rbp+%lld, rule %#x", (unsigned long long)loc, cfa_off, rule);
	} else {
		cr_expect(unwind_rule_cfa(rule) == UNWIND_CFA_UNSUPPORTED, "%#llx: CFA %s, kind %u",
			  (unsigned long long)loc, cfa, unwind_rule_cfa(rule));
		return;
	}
	if (!strcmp(rbp, "u") || !strcmp(rbp, "s")) {
		cr_expect(unwind_rule_rbp(rule) == UNWIND_RBP_SAME, "%#llx: rbp %s, rule %#x",
			  (unsigned long long)loc, rbp, rule);
	} else if (sscanf(rbp, "c%lld", &rbp_off) == 1) {
		cr_expect(unwind_rule_rbp(rule) == UNWIND_RBP_AT_CFA &&
				  unwind_rule_rbp_off(rule) == rbp_off,
			  "%#llx: rbp c%lld, rule %#x", (unsigned long long)loc, rbp_off, rule);
		s->rbp_saved++;
	} else {
		cr_expect(unwind_rule_rbp(rule) == UNWIND_RBP_LOST, "%#llx: rbp %s, rule %#x",
			  (unsigned long long)loc, rbp, rule);
	}
}

/*
 * Called when an FDE's listing ends: readelf prints no rows for an FDE
 * without instructions, where its CIE's row holds.
 */
static void end_fde(struct readelf_state *s)
{
	if (s->fde_pending && s->nr_cols)
		check_row(s, s->fde_start, s->cie_row[s->cur_cie], s->nr_cols);
	s->fde_pending = false;
}

static int cmp_range(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return (x[0] > y[0]) - (x[0] < y[0]);
}

/* The code just past an FDE is the next FDE's or has no CFI: never the FDE's rule. */
static void check_fde_ends(struct readelf_state *s)
{
	qsort(s->fdes, s->nr_fdes, sizeof(s->fdes[0]), cmp_range);
	for (size_t i = 0; i < s->nr_fdes; i++) {
		uint64_t end = s->fdes[i][1];
		const struct unwind_row *r;

		if (i + 1 < s->nr_fdes && s->fdes[i + 1][0] == end)
			continue;	/* checked as that FDE's first row */
		r = cfi_table_lookup(s->t, end);
		cr_expect(r && unwind_rule_cfa(r->rule) == UNWIND_CFA_NONE,
			  "%#llx (end of an FDE, no FDE follows): covered by the row at %#x",
			  (unsigned long long)end, r ? r->pc : 0);
	}
}

static int split(char *line, char out[][24], int max)
{
	int n = 0;

	/* readelf prints "r9 (r9)" for register rules: keep the pair as one column. */
	for (char *tok = strtok(line, " \n"); tok && n < max; tok = strtok(NULL, " \n")) {
		if (tok[0] == '(' && n) {
			continue;
		}
		snprintf(out[n++], 24, "%s", tok);
	}
	return n;
}

static void compare_with_readelf(const char *path, const struct cfi_table *t,
				 struct readelf_state *s)
{
	char cmd[1024], line[4096], vals[MAX_COLS][24];
	bool in_eh_frame = false;
	FILE *p;

	memset(s, 0, sizeof(*s));
	s->t = t;
	/* -wN: the file's own .eh_frame, not a debug file its debuglink names. */
	snprintf(cmd, sizeof(cmd), "readelf -wNF '%s'", path);
	p = popen(cmd, "r");
	cr_assert(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long off, len, id, cie, start, end;
		char aug[32];
		int n;

		if (!strncmp(line, "Contents of the ", 16)) {
			in_eh_frame = strstr(line, ".eh_frame section") != NULL;
			continue;
		}
		if (!in_eh_frame)
			continue;
		if (sscanf(line, "%llx %llx %llx CIE \"%31[^\"]\"", &off, &len, &id, aug) == 4) {
			end_fde(s);
			s->fde_start = s->fde_end = 0;
			cr_assert(s->nr_cies < 64, "too many CIEs for this test");
			s->cur_cie = s->nr_cies++;
			s->cie_off[s->cur_cie] = off;
			s->cie_signal[s->cur_cie] = strchr(aug, 'S') != NULL;
			s->cie_nr_cols[s->cur_cie] = 0;
			s->in_cie = true;
			continue;
		}
		if (sscanf(line, "%llx %llx %llx FDE cie=%llx pc=%llx..%llx", &off, &len, &id, &cie,
			   &start, &end) == 6) {
			int c;

			end_fde(s);
			for (c = 0; c < s->nr_cies && s->cie_off[c] != cie; c++)
				;
			cr_assert(c < s->nr_cies, "FDE at %#llx: unknown CIE", off);
			s->cur_cie = c;
			s->signal = s->cie_signal[c];
			s->fde_start = start;
			s->fde_end = end;
			s->in_cie = false;
			s->fde_pending = true;
			s->nr_cols = s->cie_nr_cols[c];
			memcpy(s->cols, s->cie_cols[c], sizeof(s->cols));
			if (s->nr_fdes == s->cap_fdes) {	/* doubling: libLLVM has 95k */
				s->cap_fdes = s->cap_fdes ? 2 * s->cap_fdes : 1024;
				s->fdes = realloc(s->fdes, s->cap_fdes * sizeof(s->fdes[0]));
				cr_assert(s->fdes);
			}
			s->fdes[s->nr_fdes][0] = start;
			s->fdes[s->nr_fdes++][1] = end;
			continue;
		}
		if (strstr(line, "   LOC ")) {
			n = split(line, vals, MAX_COLS);
			for (int c = 0; c < n; c++)
				memcpy(s->cols[c], vals[c], sizeof(vals[c]));
			s->nr_cols = n;
			if (s->in_cie) {
				s->cie_nr_cols[s->cur_cie] = n;
				memcpy(s->cie_cols[s->cur_cie], s->cols, sizeof(s->cols));
			}
			continue;
		}
		if (sscanf(line, "%llx", &start) == 1 && strlen(line) > 17 && line[16] == ' ') {
			n = split(line, vals, MAX_COLS);
			if (s->in_cie) {
				memcpy(s->cie_row[s->cur_cie], vals, sizeof(vals));
			} else {
				s->fde_pending = false;
				check_row(s, start, vals, n);
			}
		}
	}
	end_fde(s);
	cr_assert(pclose(p) == 0, "readelf failed on %s (binutils missing?)", path);
	check_fde_ends(s);
	free(s->fdes);
}

Test(cfitable, fixture_rows_match_readelf, .fini = free_fixture)
{
	const char *path = fixture("cfi_tree");
	struct cfi_table *t = build(path);
	struct readelf_state *s = calloc(1, sizeof(*s));
	uint64_t plt_start = 0, plt_end = 0, addr, size;
	bool rsp16 = false, rbp_rule = false;

	cr_assert(s);
	compare_with_readelf(path, t, s);
	cr_assert(s->checked > 20, "only %lu readelf rows seen", s->checked);
	cr_expect(s->roots > 0, "_start's row (ra undefined) not seen");
	cr_expect(s->plt > 0, "no PLT row seen");
	free(s);

	/* Functions of known shape (cfi_tree.c): entry is rsp+8, a push makes rsp+16. */
	nm_symbol(path, "cfi_leaf", &addr, &size);
	cr_expect_eq(rule_at(t, addr), UNWIND_RULE(UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0));
	nm_symbol(path, "cfi_mid", &addr, &size);
	cr_expect_eq(rule_at(t, addr), UNWIND_RULE(UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0));
	for (uint64_t a = addr; a < addr + size; a++)
		rsp16 |= rule_at(t, a) == UNWIND_RULE(UNWIND_CFA_RSP, 16, UNWIND_RBP_SAME, 0);
	cr_expect(rsp16, "cfi_mid: no rsp+16 row after its push");
	/* The VLA makes gcc keep an rbp-based CFA with rbp saved at CFA-16. */
	nm_symbol(path, "cfi_vla", &addr, &size);
	for (uint64_t a = addr; a < addr + size; a++)
		rbp_rule |= rule_at(t, a) == UNWIND_RULE(UNWIND_CFA_RBP, 16, UNWIND_RBP_AT_CFA, -16);
	cr_expect(rbp_rule, "cfi_vla: no rbp+16 row");
	/* .plt: the first entry pushes (plain rows), every other entry is the PLT rule. */
	section_range(path, ".plt", &plt_start, &plt_end);
	cr_expect_eq(unwind_rule_cfa(rule_at(t, plt_start)), UNWIND_CFA_RSP);
	for (uint64_t a = plt_start + 16; a < plt_end; a++)
		cr_expect_eq(rule_at(t, a), UNWIND_RULE(UNWIND_CFA_PLT, 8, UNWIND_RBP_SAME, 0),
			     "%#llx in .plt", (unsigned long long)a);
	/* _start: the return address is undefined there: the root. */
	nm_symbol(path, "_start", &addr, &size);
	cr_expect_eq(unwind_rule_cfa(rule_at(t, addr)), UNWIND_CFA_ROOT);
	cfi_table_free(t);
}

/* Rows strictly increasing, each segment ends with a NONE row, no equal neighbours. */
static void check_shape(const struct cfi_table *t)
{
	for (size_t i = 1; i < t->nr; i++) {
		cr_assert(t->rows[i].pc > t->rows[i - 1].pc, "row %zu out of order", i);
		cr_assert(t->rows[i].rule != t->rows[i - 1].rule, "rows %zu and %zu are equal",
			  i - 1, i);
	}
	for (size_t i = 0; i < t->nr_segs; i++) {
		const struct load_seg *seg = &t->segs[i];

		cr_expect_eq(unwind_rule_cfa(rule_at(t, seg->vaddr + seg->memsz)), UNWIND_CFA_NONE);
	}
	if (t->rows[0].pc)	/* a library's segment may start at 0 */
		cr_assert_null(cfi_table_lookup(t, t->rows[0].pc - 1));
}

Test(cfitable, libc_rows_match_readelf)
{
	struct cfi_table *t = build(LIBC);
	struct readelf_state *s = calloc(1, sizeof(*s));

	cr_assert(s);
	check_shape(t);
	compare_with_readelf(LIBC, t, s);
	/* libc has thousands of FDEs, the PLT, __restore_rt (a signal FDE), _start-like roots. */
	cr_expect(s->checked > 10000, "only %lu rows checked", s->checked);
	cr_expect(s->signals > 0, "no signal frame seen in libc");
	cr_expect(s->roots > 0, "no root frame (clone) seen in libc");
	cr_expect(s->plt > 0, "no PLT row in libc");
	cr_expect(s->rbp_saved > 1000, "only %lu rows with rbp saved", s->rbp_saved);
	cr_expect(t->nr * sizeof(t->rows[0]) < 16 * s->checked, "%zu rows for %lu CFI rows",
		  t->nr, s->checked);
	/*
	 * GNU ld's .eh_frame_hdr: libdw's FDE cache was dropped on the way,
	 * and the rows above, checked against readelf, were built across it.
	 */
	cr_expect(t->stats.cfi_renewals > 0, "libdw's CFI never renewed over %llu CFI rows",
		  (unsigned long long)t->stats.cfi_rows);
	free(s);
	cfi_table_free(t);
}

Test(cfitable, big_debian_files)
{
	static const char *const files[] = { PYTHON, SQLITE };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct cfi_table *t = build(files[i]);

		check_shape(t);
		/* Every rule that is not a plain one is counted, never silently dropped. */
		cr_expect(t->stats.cfi_rows >= t->nr / 2, "%s: %zu rows from %llu CFI rows",
			  files[i], t->nr, (unsigned long long)t->stats.cfi_rows);
		cfi_table_free(t);
	}
}

/* Files that cannot have a table say why, and leave nothing behind (LSan watches). */
Test(cfitable, files_without_a_table)
{
	char dir[] = "/tmp/bpfrec-cfitable.XXXXXX", path[64], cmd[256];
	struct cfi_table *t = (struct cfi_table *)1;
	FILE *f;

	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/text", dir);
	f = fopen(path, "w");
	cr_assert(f && fputs("not an ELF file\n", f) >= 0 && fclose(f) == 0);
	cr_expect_eq(cfi_table_build(path, &t), -EINVAL);
	cr_expect_null(t);
	snprintf(path, sizeof(path), "%s/missing", dir);
	cr_expect_eq(cfi_table_build(path, &t), -ENOENT);
	/* A relocatable object has no PT_LOAD: no code to cover. */
	snprintf(path, sizeof(path), "%s/f.o", dir);
	snprintf(cmd, sizeof(cmd), "echo 'int f(void) { return 1; }' | cc -x c -c -o %s -", path);
	cr_assert(system(cmd) == 0, "cc failed");
	cr_expect_eq(cfi_table_build(path, &t), -ENOENT);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert(system(cmd) == 0);
}

/* The whole file at path, malloc'd. */
static unsigned char *load_image(const char *path, size_t *size)
{
	unsigned char *img;
	FILE *f = fopen(path, "rb");

	cr_assert(f && fseek(f, 0, SEEK_END) == 0, "cannot read %s", path);
	*size = (size_t)ftell(f);
	img = malloc(*size);
	cr_assert(img && fseek(f, 0, SEEK_SET) == 0 && fread(img, 1, *size, f) == *size);
	fclose(f);
	return img;
}

/* An anonymous file holding img, as cfi_table_build_fd() takes it. */
static int image_fd(const char *name, const unsigned char *img, size_t size)
{
	int fd = memfd_create(name, 0);

	cr_assert(fd >= 0 && write(fd, img, size) == (ssize_t)size);
	return fd;
}

/*
 * A header may claim more code than the file holds (the fuzzer's input: a
 * 10 KiB file whose text segment said 128 MiB kept the builder probing
 * gap bytes for 30 s). Only the file's bytes get rows, and the table of the
 * code that is there stays the same.
 */
Test(cfitable, segment_longer_than_the_file, .fini = free_fixture)
{
	const char *path = fixture("cfi_tree");
	struct cfi_table *want = build(path), *got = NULL;
	unsigned char *img;
	Elf64_Ehdr *eh;
	size_t size;
	int fd, patched = 0;

	img = load_image(path, &size);
	eh = (Elf64_Ehdr *)img;
	cr_assert(eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) <= size);
	for (int i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr *ph = (Elf64_Phdr *)(img + eh->e_phoff) + i;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			ph->p_filesz = ph->p_memsz = 128u << 20;
			patched++;
		}
	}
	cr_assert_eq(patched, 1);
	fd = image_fd("cfi_tree", img, size);
	cr_assert_eq(cfi_table_build_fd(fd, &got), 0);
	close(fd);
	cr_expect_leq(got->stats.gap_bytes, size, "%llu gap bytes probed in a %zu-byte file",
		      (unsigned long long)got->stats.gap_bytes, size);
	cr_expect_leq(got->rows[got->nr - 1].pc, got->segs[0].vaddr + size);
	/* Every address of the real code keeps its rule. */
	for (size_t i = 0; i + 1 < want->nr; i++)
		cr_expect_eq(rule_at(got, want->rows[i].pc), want->rows[i].rule,
			     "row %zu at %#x", i, want->rows[i].pc);
	cfi_table_free(want);
	cfi_table_free(got);
	free(img);
}

/* The function with the highest address in [lo, hi): last_function(). */
struct last_func {
	uint64_t lo, hi, addr;
	char name[512];
	bool found;
};

static void take_last(uint64_t value, uint64_t size, char type, const char *name, void *ctx)
{
	struct last_func *l = ctx;

	(void)size;
	if ((type != 'T' && type != 't') || value < l->lo || value >= l->hi ||
	    (l->found && value <= l->addr))
		return;
	l->addr = value;
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->found = true;
}

/* The function with the highest address in [lo, hi) that nm lists with a size. */
static void last_function(const char *path, uint64_t lo, uint64_t hi, struct last_func *l)
{
	*l = (struct last_func){ .lo = lo, .hi = hi };
	nm_each_sized(path, false, take_last, l);
	cr_assert(l->found, "no function in [%#llx, %#llx) of %s", (unsigned long long)lo,
		  (unsigned long long)hi, path);
}

/* The FDE count of .eh_frame_hdr's search table, read from the file. */
static uint32_t eh_frame_hdr_count(const char *path)
{
	uint64_t start, end, off;
	unsigned char h[12];
	uint32_t count;
	int fd;

	section_place(path, ".eh_frame_hdr", &start, &end, &off);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert(fd >= 0 && pread(fd, h, sizeof(h), (off_t)off) == (ssize_t)sizeof(h));
	close(fd);
	cr_assert(h[0] == 1 && h[2] == 0x03, "%s: .eh_frame_hdr without a udata4 count", path);
	memcpy(&count, h + 8, sizeof(count));
	return count;
}

/* The table of the file img holds, built as the recorder builds it: from an fd. */
static struct cfi_table *build_image(const char *name, const unsigned char *img, size_t size)
{
	struct cfi_table *t;
	int fd = image_fd(name, img, size);
	int err = cfi_table_build_fd(fd, &t);

	close(fd);
	cr_assert(err == 0, "cfi_table_build_fd(%s): %s", name, strerror(-err));
	cr_assert(t->nr > 0);
	return t;
}

/*
 * gold's layout (tests/fixtures/libcfi_gold.c): 4.5 MiB of relocations in
 * the executable segment before .init, more than the gap-probe budget, and
 * .eh_frame after .fini. The builder probes bytes without CFI only in the
 * code the section headers name, so it reaches the end of .text, and every
 * row is binutils' reading of the CFI. Without section headers the budget
 * runs out before the code, as it did for every file before: the fixture
 * has the shape that emptied libLLVM-14's table, and a file without
 * headers stays bounded.
 */
Test(cfitable, gold_layout_probes_only_code, .fini = free_fixture)
{
	const char *path = fixture("libcfi_gold.so");
	uint64_t init, init_end, text, text_end, addr, size;
	struct readelf_state *s = calloc(1, sizeof(*s));
	struct cfi_table *t, *bare;
	struct last_func last;
	unsigned char *img;
	Elf64_Ehdr *eh;
	size_t img_size;
	bool rsp16 = false;

	cr_assert(s);
	section_range(path, ".init", &init, &init_end);
	section_range(path, ".text", &text, &text_end);
	img = load_image(path, &img_size);
	t = build_image("libcfi_gold", img, img_size);
	cr_assert_eq(t->nr_segs, 1);
	cr_assert_gt(init - t->segs[0].vaddr, CFI_GAP_PROBES_MAX,
		     "the fixture has %#llx bytes before .init: not gold's layout?",
		     (unsigned long long)(init - t->segs[0].vaddr));

	cr_expect(!t->stats.gap_truncated, "the budget ran out (%llu gap bytes)",
		  (unsigned long long)t->stats.gap_bytes);
	cr_expect_lt(t->stats.gap_bytes, text_end - init, "only bytes of code were probed");
	cr_expect_geq(t->stats.noncode_bytes, init - t->segs[0].vaddr);
	check_shape(t);
	compare_with_readelf(path, t, s);
	cr_expect_geq(s->checked, 8, "only %lu readelf rows seen", s->checked);
	cr_expect_gt(s->plt, 0, "no PLT row seen");
	free(s);

	/* Known shapes: the leaf is rsp+8 throughout, mid pushes. */
	nm_symbol(path, "cfi_gold_leaf", &addr, &size);
	for (uint64_t a = addr; a < addr + size; a++)
		cr_expect_eq(rule_at(t, a), UNWIND_RULE(UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0),
			     "cfi_gold_leaf+%#llx", (unsigned long long)(a - addr));
	nm_symbol(path, "cfi_gold_mid", &addr, &size);
	cr_expect_eq(rule_at(t, addr), UNWIND_RULE(UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0));
	for (uint64_t a = addr; a < addr + size; a++)
		rsp16 |= rule_at(t, a) == UNWIND_RULE(UNWIND_CFA_RSP, 16, UNWIND_RBP_SAME, 0);
	cr_expect(rsp16, "cfi_gold_mid: no rsp+16 row after its push");
	/* The end of .text has rows: its last function starts as every function does. */
	last_function(path, text, text_end, &last);
	cr_expect_eq(rule_at(t, last.addr), UNWIND_RULE(UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0),
		     "%s, the last function of .text", last.name);
	/* Past .text's code (.fini's end), .rodata and .eh_frame: no code, no rule. */
	cr_expect_eq(unwind_rule_cfa(rule_at(t, text_end + 0x100)), UNWIND_CFA_NONE);

	/*
	 * Without section headers every byte may be code, and the budget holds
	 * (libdw then searches PT_GNU_EH_FRAME's table: the same CFI).
	 */
	eh = (Elf64_Ehdr *)img;
	eh->e_shoff = 0;
	eh->e_shnum = 0;
	eh->e_shstrndx = 0;
	bare = build_image("libcfi_gold-bare", img, img_size);
	cr_expect(bare->stats.gap_truncated, "no section headers, yet the budget did not run out");
	cr_expect_eq(bare->stats.gap_bytes, CFI_GAP_PROBES_MAX);
	cr_expect_eq(bare->stats.noncode_bytes, 0);
	cr_expect_eq(unwind_rule_cfa(rule_at(bare, last.addr)), UNWIND_CFA_NONE,
		     "%s has a row though the probes ran out before it", last.name);
	cfi_table_free(bare);
	cfi_table_free(t);
	free(img);
}

/* Exported functions in [lo, hi) of t's file, and those whose entry is not rsp+8. */
struct func_entries {
	const struct cfi_table *t;
	uint64_t lo, hi;
	unsigned long funcs, bad;
};

static void check_entry(uint64_t value, uint64_t size, char type, const char *name, void *ctx)
{
	struct func_entries *e = ctx;
	const struct unwind_row *r;

	(void)size;
	if (type != 'T' || value < e->lo || value >= e->hi)
		return;
	e->funcs++;
	r = cfi_table_lookup(e->t, value);
	if ((!r || r->rule != UNWIND_RULE(UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0)) && e->bad++ < 5)
		cr_expect_fail("%s at %#llx: rule %#x", name, (unsigned long long)value,
			       r ? r->rule : 0);
}

/*
 * Debian's libLLVM-14 (clang's, linked by gold): 13 MB of .dynsym, .dynstr
 * and .rela.dyn before .text in the executable segment left its table
 * empty. Now every CFI row readelf prints (~840k) is in the table, within
 * the default budget, and every exported function of .text starts rsp+8.
 */
Test(cfitable, debian_libllvm_gold, .timeout = 300)
{
	struct readelf_state *s = calloc(1, sizeof(*s));
	uint64_t init, init_end, text, text_end;
	uint32_t fdes = eh_frame_hdr_count(LIBLLVM);
	struct cfi_table *t = build(LIBLLVM);
	struct func_entries entries;

	cr_assert(s);
	section_range(LIBLLVM, ".init", &init, &init_end);
	section_range(LIBLLVM, ".text", &text, &text_end);
	cr_assert_gt(init - t->segs[0].vaddr, CFI_GAP_PROBES_MAX,
		     "less than the budget before .init: not the layout this test is about");
	cr_expect(!t->stats.gap_truncated, "the budget ran out (%llu gap bytes)",
		  (unsigned long long)t->stats.gap_bytes);
	cr_expect_geq(t->stats.noncode_bytes, init - t->segs[0].vaddr);
	cr_expect_geq(t->stats.cfi_rows, fdes, "%llu CFI rows for %u FDEs",
		      (unsigned long long)t->stats.cfi_rows, fdes);
	/*
	 * .eh_frame_hdr comes after .eh_frame: libdw searched PT_GNU_EH_FRAME's
	 * table (cfitable.c, open_view()), so its FDE cache was renewed rather
	 * than holding all of them, and the rows below are the CFI's all the same.
	 */
	cr_expect_gt(t->stats.cfi_renewals, 0, "libdw's FDE cache never renewed");
	check_shape(t);
	compare_with_readelf(LIBLLVM, t, s);
	cr_expect_geq(s->checked, t->stats.cfi_rows * 9 / 10, "readelf rows checked: %lu of %llu",
		      s->checked, (unsigned long long)t->stats.cfi_rows);
	free(s);

	entries = (struct func_entries){ .t = t, .lo = text, .hi = text_end };
	nm_each_sized(LIBLLVM, true, check_entry, &entries);
	cr_expect_gt(entries.funcs, 10000, "only %lu exported functions in .text", entries.funcs);
	cr_expect_eq(entries.bad, 0, "%lu of %lu exported functions do not start rsp+8",
		     entries.bad, entries.funcs);
	cfi_table_free(t);
}

/* What a sink got: every row in order, and how it came. */
struct sink_log {
	struct unwind_row *rows;
	size_t nr, cap, calls, largest;
	size_t fail_at;		/* the call (1-based) that fails with -ENOSPC; 0 = none */
};

static int log_rows(void *ctx, const struct unwind_row *rows, uint32_t nr)
{
	struct sink_log *l = ctx;

	if (++l->calls == l->fail_at)
		return -ENOSPC;
	cr_assert_gt(nr, 0, "an empty chunk");
	if (l->nr + nr > l->cap) {
		l->cap = (l->nr + nr) * 2;
		l->rows = realloc(l->rows, l->cap * sizeof(*l->rows));
		cr_assert(l->rows);
	}
	memcpy(l->rows + l->nr, rows, nr * sizeof(*rows));
	l->nr += nr;
	if (nr > l->largest)
		l->largest = nr;
	return 0;
}

/*
 * A table built into a sink: the same rows as built in memory, in chunks
 * of at most 8192 rows (libc has several times that), none kept in the
 * table; a sink's error ends the build with it.
 */
Test(cfitable, rows_to_a_sink_in_chunks)
{
	struct cfi_table *want = build(LIBC), *got;
	struct sink_log log = { 0 };
	struct cfi_table_build_opts opts = { .sz = sizeof(opts), .emit = log_rows, .ctx = &log };
	int fd = open(LIBC, O_RDONLY | O_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_assert_gt(want->nr, 2 * 8192u, "libc's table spans several chunks");
	cr_assert_eq(cfi_table_build_fd_opts(fd, &opts, &got), 0);
	cr_expect_null(got->rows, "the rows went to the sink");
	cr_assert_eq(got->nr, want->nr);
	cr_assert_eq(log.nr, want->nr);
	cr_expect(!memcmp(log.rows, want->rows, want->nr * sizeof(*want->rows)),
		  "the sink's rows are the table's");
	cr_expect_leq(log.largest, 8192u);
	cr_expect_eq(log.calls, (want->nr + 8191) / 8192, "chunks handed over full");
	cr_assert_eq(got->nr_segs, want->nr_segs);
	cfi_table_free(got);

	log.nr = log.calls = 0;
	log.fail_at = 2;
	cr_expect_eq(cfi_table_build_fd_opts(fd, &opts, &got), -ENOSPC);
	cr_expect_null(got);
	cr_expect_eq(log.calls, 2, "the build stopped at the sink's error");
	/* An opts without emit: the rows into the table, a too small sz refused. */
	opts.emit = NULL;
	cr_assert_eq(cfi_table_build_fd_opts(fd, &opts, &got), 0);
	cr_assert_eq(got->nr, want->nr);
	cr_expect(!memcmp(got->rows, want->rows, want->nr * sizeof(*want->rows)));
	cfi_table_free(got);
	opts.sz = sizeof(size_t);
	cr_expect_eq(cfi_table_build_fd_opts(fd, &opts, &got), -EINVAL);
	close(fd);
	free(log.rows);
	cfi_table_free(want);
}

Test(cfitable, bias_of_mappings)
{
	struct cfi_table t = { 0 };
	struct load_seg seg = { .offset = 0x1000, .vaddr = 0x401000, .filesz = 0x2000,
				   .memsz = 0x2000 };
	uint64_t bias;

	t.segs = &seg;
	t.nr_segs = 1;
	/* A PIE/library mapping of the text at 0x7f0000001000 from offset 0x1000. */
	cr_assert_eq(cfi_table_bias(&t, 0x7f0000001000, 0x2000, 0x1000, &bias), 0);
	cr_assert_eq(0x401010 + bias, 0x7f0000001010);
	/* A mapping of only the data after the text. */
	cr_assert_eq(cfi_table_bias(&t, 0x7f0000005000, 0x1000, 0x3000, &bias), -ENOENT);
}

/* ---- the walker on synthetic stacks --------------------------------- */

Test(cfiwalk, synthetic_chain)
{
	/* One table: [0x1000, 0x1100) rsp+8 at entry then rsp+16 from 0x1001,
	 * [0x1100, 0x1200) rbp-based, [0x1200, 0x1210) root, 0x1210 none. */
	const struct unwind_row rows[] = {
		{ 0x1000, UNWIND_RULE(UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0) },
		{ 0x1001, UNWIND_RULE(UNWIND_CFA_RSP, 16, UNWIND_RBP_SAME, 0) },
		{ 0x1100, UNWIND_RULE(UNWIND_CFA_RBP, 16, UNWIND_RBP_AT_CFA, -16) },
		{ 0x1200, UNWIND_RULE(UNWIND_CFA_ROOT, 0, 0, 0) },
		{ 0x1210, UNWIND_RULE(UNWIND_CFA_NONE, 0, 0, 0) },
	};
	const struct unwind_mapping maps[] = {
		{ .start = 0x500000, .end = 0x502000, .bias = 0x500000 - 0x1000 + 0x1000,
		  .first_row = 0, .nr_rows = 5 },
	};
	uint64_t stack[8] = { 0 }, base = 0x7ffd0000;
	struct cfi_stack st = { .base = base, .data = (const uint8_t *)stack,
				.size = sizeof(stack) };
	struct cfi_regs regs = { .ip = 0x501050, .sp = base, .bp = 0xdead };
	struct cfi_walk w;

	/* Frame 0 at 0x1050 (rsp+16): ra at sp+8 -> 0x501150 (rbp frame). */
	stack[1] = 0x501150;
	/* Frame 1: CFA = rbp + 16; rbp = base+16 -> ra at base+24, saved rbp at base+16. */
	regs.bp = base + 16;
	stack[2] = 0x1234;	/* the caller's rbp */
	stack[3] = 0x501205;	/* into the root */
	cfi_walk_stack(rows, sizeof(rows) / sizeof(rows[0]), maps, 1, &regs, &st, &w);
	cr_assert_eq(w.nr, 3);
	cr_expect_eq(w.pcs[0], 0x501050);
	cr_expect_eq(w.pcs[1], 0x501150);
	cr_expect_eq(w.pcs[2], 0x501205);
	cr_expect_eq(w.stop, UNWIND_STOP_ROOT, "stop %s", cfi_walk_stop_name(w.stop));

	/* A return address just past the end of the root's range is looked up at pc - 1. */
	stack[3] = 0x501210;
	cfi_walk_stack(rows, sizeof(rows) / sizeof(rows[0]), maps, 1, &regs, &st, &w);
	cr_expect_eq(w.stop, UNWIND_STOP_ROOT, "stop %s", cfi_walk_stop_name(w.stop));

	/*
	 * The gap row: a pc at 0x1210 or later has no CFI, even though 0x1200
	 * has. rbp 0 is no frame pointer, so the walk stops at the table's reason.
	 */
	regs.ip = 0x501300;
	regs.bp = 0;
	cfi_walk_stack(rows, sizeof(rows) / sizeof(rows[0]), maps, 1, &regs, &st, &w);
	cr_expect_eq(w.nr, 1);
	cr_expect_eq(w.stop, UNWIND_STOP_NO_ROW, "stop %s", cfi_walk_stop_name(w.stop));

	/* Out of every mapping. */
	regs.ip = 0x400000;
	cfi_walk_stack(rows, sizeof(rows) / sizeof(rows[0]), maps, 1, &regs, &st, &w);
	cr_expect_eq(w.stop, UNWIND_STOP_NO_MAPPING);

	/*
	 * A mapping whose table lies past the end of the store it is given
	 * (a stale or damaged entry) has no table: nothing is read outside
	 * the store, and rbp 0 ends the walk there.
	 */
	regs.ip = 0x501050;
	cfi_walk_stack(rows, 4, maps, 1, &regs, &st, &w);
	cr_expect_eq(w.nr, 1);
	cr_expect_eq(w.stop, UNWIND_STOP_NO_TABLE, "stop %s", cfi_walk_stop_name(w.stop));
	{
		struct unwind_mapping far = maps[0];

		far.first_row = UINT32_MAX - 2;
		cfi_walk_stack(rows, sizeof(rows) / sizeof(rows[0]), &far, 1, &regs, &st, &w);
		cr_expect_eq(w.stop, UNWIND_STOP_NO_TABLE, "stop %s", cfi_walk_stop_name(w.stop));
	}

	/* A return address outside the copied stack. */
	regs.ip = 0x501050;
	regs.sp = base + sizeof(stack) - 8;
	cfi_walk_stack(rows, sizeof(rows) / sizeof(rows[0]), maps, 1, &regs, &st, &w);
	cr_expect_eq(w.stop, UNWIND_STOP_STACK_READ, "stop %s", cfi_walk_stop_name(w.stop));

	/*
	 * An epilogue after "pop %rbp": the row still says rbp at CFA-48, a slot
	 * now below sp; rbp already holds the caller's value and the rbp-based
	 * caller must be walked with it, not with the stale slot.
	 */
	{
		const struct unwind_row epi[] = {
			{ 0x1000, UNWIND_RULE(UNWIND_CFA_RSP, 24, UNWIND_RBP_AT_CFA, -48) },
			{ 0x1100, UNWIND_RULE(UNWIND_CFA_RBP, 16, UNWIND_RBP_AT_CFA, -16) },
			{ 0x1200, UNWIND_RULE(UNWIND_CFA_ROOT, 0, 0, 0) },
			{ 0x1210, UNWIND_RULE(UNWIND_CFA_NONE, 0, 0, 0) },
		};
		const struct unwind_mapping m1 = { .start = 0x500000, .end = 0x502000,
						   .bias = 0x500000, .nr_rows = 4 };
		uint64_t mem[16] = { 0 };
		struct cfi_stack es = { .base = base - 64, .data = (const uint8_t *)mem,
					.size = sizeof(mem) };

		/* mem[0..7] lie below sp (base - 64 .. base); sp = base = mem[8]. */
		mem[8 - 3] = 0xbad;		/* the popped slot at CFA-48 = sp-24 */
		mem[8 + 2] = 0x501150;		/* ra at CFA-8 = sp+16 */
		mem[8 + 4] = 0x1234;		/* caller's saved rbp at its CFA-16 */
		mem[8 + 5] = 0x501201;		/* its ra, into the root */
		regs.ip = 0x501050;
		regs.sp = base;
		regs.bp = base + 32;
		cfi_walk_stack(epi, sizeof(epi) / sizeof(epi[0]), &m1, 1, &regs, &es, &w);
		cr_expect_eq(w.nr, 3, "%u frames, stop %s", w.nr, cfi_walk_stop_name(w.stop));
		cr_expect_eq(w.pcs[2], 0x501201);
		cr_expect_eq(w.stop, UNWIND_STOP_ROOT, "stop %s", cfi_walk_stop_name(w.stop));
	}

	/* A loop (a frame whose return address is itself, CFA not moving up) ends. */
	{
		const struct unwind_row self[] = {
			{ 0x1000, UNWIND_RULE(UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0) },
			{ 0x2000, UNWIND_RULE(UNWIND_CFA_NONE, 0, 0, 0) },
		};
		const struct unwind_mapping m1 = { .start = 0x500000, .end = 0x502000,
						   .bias = 0x500000, .nr_rows = 2 };
		uint64_t loop[UNWIND_MAX_FRAMES + 8];
		struct cfi_stack ls = { .base = base, .data = (const uint8_t *)loop,
					.size = sizeof(loop) };

		for (size_t i = 0; i < sizeof(loop) / 8; i++)
			loop[i] = 0x501010;
		regs.ip = 0x501010;
		regs.sp = base;
		cfi_walk_stack(self, sizeof(self) / sizeof(self[0]), &m1, 1, &regs, &ls, &w);
		cr_expect_eq(w.nr, UNWIND_MAX_FRAMES);
		cr_expect_eq(w.stop, UNWIND_STOP_DEPTH, "stop %s", cfi_walk_stop_name(w.stop));
	}
}

/* A row store handed out a page (page_rows rows) at a time, as the recorder maps it. */
struct paged_store {
	const struct unwind_row *rows;
	const uint32_t *page_pcs;
	uint32_t page_rows;
	uint32_t runs, longest;
};

static const struct unwind_row *paged_rows_of(void *ctx, const struct unwind_mapping *m,
					      uint32_t key, uint32_t *nr)
{
	struct paged_store *p = ctx;
	uint32_t first;

	cfi_page_run(p->page_pcs, p->page_rows, m->first_row, m->nr_rows, key, &first, nr);
	p->runs++;
	if (*nr > p->longest)
		p->longest = *nr;
	return p->rows + first;
}

/* The first pc of every page of a store of nr rows. */
static uint32_t *page_pcs_of(const struct unwind_row *rows, uint32_t nr, uint32_t page_rows)
{
	uint32_t *pcs = calloc(nr / page_rows + 1, sizeof(*pcs));

	cr_assert(pcs);
	for (uint32_t i = 0; i < nr; i += page_rows)
		pcs[i / page_rows] = rows[i].pc;
	return pcs;
}

/*
 * The run cfi_page_run() gives holds what a search of the whole table
 * finds, for every kind of key, with the table at any offset in the store
 * and other tables' rows (in no order with its own) around it, and never
 * crosses a page start.
 */
Test(cfiwalk, page_run_finds_what_a_whole_table_search_finds)
{
	enum { STORE = 3000, PER = 8 };
	static struct unwind_row store[STORE];
	const struct { uint32_t first, nr; } tables[] = {
		{ 37, 2000 }, { 64, 1000 }, { 3, 4 }, { 8, 8 }, { 9, 1 }, { 2990, 10 }, { 0, 3000 },
	};
	uint32_t seed = 1;

	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		uint32_t first = tables[t].first, nr = tables[t].nr, pc = 0x1000, *pcs;

		/* Other tables' rows: high pcs before it, low ones after. */
		for (uint32_t i = 0; i < STORE; i++)
			store[i].pc = i < first ? 0xfff00000u + i : i % 7;
		for (uint32_t i = 0; i < nr; i++) {
			seed = seed * 1103515245u + 12345u;
			pc += 1 + (seed >> 16) % 64;
			store[first + i].pc = pc;
		}
		pcs = page_pcs_of(store, STORE, PER);
		for (uint32_t i = 0; i <= nr + 1; i++) {
			uint32_t base = i < nr ? store[first + i].pc : i == nr ? 0 : UINT32_MAX;
			uint32_t keys[] = { base, base - 1, base + 1 };

			for (size_t k = 0; k < 3; k++) {
				uint32_t run_first, run_nr;
				int whole, part;

				cfi_page_run(pcs, PER, first, nr, keys[k], &run_first, &run_nr);
				cr_assert(run_first >= first && run_first + run_nr <= first + nr,
					  "table %zu key %#x: run [%u, +%u) outside [%u, +%u)", t,
					  keys[k], run_first, run_nr, first, nr);
				cr_assert(run_nr >= 1 && run_nr <= PER &&
					  run_first / PER == (run_first + run_nr - 1) / PER,
					  "table %zu key %#x: run [%u, +%u) crosses a page start", t,
					  keys[k], run_first, run_nr);
				whole = unwind_search(store + first, nr, keys[k]);
				part = unwind_search(store + run_first, run_nr, keys[k]);
				if (part >= 0)
					part += (int)(run_first - first);
				cr_assert_eq(part, whole, "table %zu key %#x: row %d in the run, %d in "
					     "the table", t, keys[k], part, whole);
			}
		}
		free(pcs);
	}
}

/* A walk handed one page of rows at a time is the walk over the whole table. */
Test(cfiwalk, paged_walk_is_the_flat_walk)
{
	const struct unwind_row table[] = {
		{ 0x1000, UNWIND_RULE(UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0) },
		{ 0x1001, UNWIND_RULE(UNWIND_CFA_RSP, 16, UNWIND_RBP_SAME, 0) },
		{ 0x1100, UNWIND_RULE(UNWIND_CFA_RBP, 16, UNWIND_RBP_AT_CFA, -16) },
		{ 0x1180, UNWIND_RULE(UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0) },
		{ 0x1200, UNWIND_RULE(UNWIND_CFA_ROOT, 0, 0, 0) },
		{ 0x1210, UNWIND_RULE(UNWIND_CFA_NONE, 0, 0, 0) },
	};
	struct unwind_row store[16] = { 0 };
	const uint32_t at = 3;
	const struct unwind_mapping map = { .start = 0x500000, .end = 0x502000, .bias = 0x500000,
					    .first_row = at, .nr_rows = 6 };
	uint64_t stack[8] = { 0 }, base = 0x7ffd0000;
	struct cfi_stack st = { .base = base, .data = (const uint8_t *)stack, .size = sizeof(stack) };
	struct cfi_regs regs = { .ip = 0x501050, .sp = base, .bp = base + 16 };
	struct paged_store p = { .rows = store, .page_rows = 2 };
	struct cfi_walk flat, paged;

	memcpy(store + at, table, sizeof(table));
	p.page_pcs = page_pcs_of(store, 16, p.page_rows);
	stack[1] = 0x501150;	/* frame 0 (rsp+16): ra at sp+8, into the rbp frame */
	stack[2] = 0x1234;	/* its caller's rbp */
	stack[3] = 0x501205;	/* into the root */
	cfi_walk_stack(store, 16, &map, 1, &regs, &st, &flat);
	cfi_walk_stack_with(paged_rows_of, &p, &map, 1, &regs, &st, &paged);
	cr_assert_eq(flat.nr, 3, "%u frames, stop %s", flat.nr, cfi_walk_stop_name(flat.stop));
	cr_assert_eq(paged.nr, flat.nr);
	cr_assert_eq(paged.stop, flat.stop);
	cr_assert_arr_eq(paged.pcs, flat.pcs, flat.nr * sizeof(flat.pcs[0]));
	cr_expect_eq(p.runs, 3);
	cr_expect_leq(p.longest, 2);
	free((void *)p.page_pcs);
}

/*
 * Frames the tables cannot describe are stepped over by frame pointer
 * (return address at rbp + 8, the caller's rbp at rbp, rsp = rbp + 16), and
 * the walk goes back to the tables for the caller.
 */
Test(cfiwalk, frame_pointer_fallback)
{
	/* [0x1000, 0x1100) rsp+16; [0x1100, 0x1200) rbp+16 with rbp saved; a root; a gap at 0x1210. */
	const struct unwind_row rows[] = {
		{ 0x1000, UNWIND_RULE(UNWIND_CFA_RSP, 16, UNWIND_RBP_SAME, 0) },
		{ 0x1100, UNWIND_RULE(UNWIND_CFA_RBP, 16, UNWIND_RBP_AT_CFA, -16) },
		{ 0x1200, UNWIND_RULE(UNWIND_CFA_ROOT, 0, 0, 0) },
		{ 0x1210, UNWIND_RULE(UNWIND_CFA_NONE, 0, 0, 0) },
		{ 0x1300, UNWIND_RULE(UNWIND_CFA_UNSUPPORTED, 0, 0, 0) },
		{ 0x1400, UNWIND_RULE(UNWIND_CFA_NONE, 0, 0, 0) },
		{ 0x1500, UNWIND_RULE(UNWIND_CFA_RSP, 8, UNWIND_RBP_LOST, 0) },
		{ 0x1600, UNWIND_RULE(UNWIND_CFA_NONE, 0, 0, 0) },
	};
	/* Code at 0x600000 (say JIT) has no mapping; 0x700000 a mapping without a table. */
	const struct unwind_mapping maps[] = {
		{ .start = 0x500000, .end = 0x502000, .bias = 0x500000, .nr_rows = 8 },
		{ .start = 0x700000, .end = 0x701000 },
	};
	uint64_t mem[32] = { 0 }, base = 0x7ffd0000;
	struct cfi_stack st = { .base = base, .data = (const uint8_t *)mem, .size = sizeof(mem) };
	struct cfi_regs regs;
	struct cfi_walk w;

	/* A process without tables: a frame-pointer walk to where the chain ends (rbp 0). */
	regs = (struct cfi_regs){ .ip = 0x900000, .sp = base, .bp = base + 16 };
	mem[2] = base + 48;	/* frame at rbp = base + 16: the caller's rbp */
	mem[3] = 0x900100;	/* and its return address */
	mem[6] = 0;		/* frame at base + 48: the end of the chain */
	mem[7] = 0x900200;
	cfi_walk_stack(rows, sizeof(rows) / sizeof(rows[0]), maps, 0, &regs, &st, &w);
	cr_assert_eq(w.nr, 3, "%u frames, stop %s", w.nr, cfi_walk_stop_name(w.stop));
	cr_expect_eq(w.pcs[1], 0x900100);
	cr_expect_eq(w.pcs[2], 0x900200);
	cr_expect_eq(w.fp_frames, 2);
	/* rbp 0 in a frame reached by frame pointer: the chain's end marker, the root. */
	cr_expect_eq(w.stop, UNWIND_STOP_ROOT, "stop %s", cfi_walk_stop_name(w.stop));
	/* The same 0 in the first frame proves nothing: rbp may be any register there. */
	regs.bp = 0;
	cfi_walk_stack(rows, sizeof(rows) / sizeof(rows[0]), maps, 0, &regs, &st, &w);
	cr_assert_eq(w.nr, 1);
	cr_expect_eq(w.stop, UNWIND_STOP_NO_MAPPING, "stop %s", cfi_walk_stop_name(w.stop));

	/*
	 * Tables, then a JIT frame by frame pointer, then tables again with the
	 * rbp the fp step found: 0x1050 (rsp+16) -> 0x600010 (no mapping, rbp =
	 * base + 32) -> 0x1150 (CFA = rbp + 16, rbp = base + 64) -> the root.
	 */
	memset(mem, 0, sizeof(mem));
	regs = (struct cfi_regs){ .ip = 0x501050, .sp = base, .bp = base + 32 };
	mem[1] = 0x600010;	/* ra of frame 0 at CFA - 8 = sp + 8 */
	mem[4] = base + 64;	/* the JIT frame: saved rbp at rbp, */
	mem[5] = 0x501150;	/* return address at rbp + 8 */
	mem[8] = 0x1234;	/* the rbp frame: saved rbp at CFA - 16 = rbp, */
	mem[9] = 0x501205;	/* return address at CFA - 8, into the root */
	cfi_walk_stack(rows, sizeof(rows) / sizeof(rows[0]), maps, 2, &regs, &st, &w);
	cr_assert_eq(w.nr, 4, "%u frames, stop %s", w.nr, cfi_walk_stop_name(w.stop));
	cr_expect_eq(w.pcs[1], 0x600010);
	cr_expect_eq(w.pcs[2], 0x501150);
	cr_expect_eq(w.pcs[3], 0x501205);
	cr_expect_eq(w.fp_frames, 1);
	cr_expect_eq(w.stop, UNWIND_STOP_ROOT, "stop %s", cfi_walk_stop_name(w.stop));

	/* The same through a mapping without a table, a gap row and an UNSUPPORTED row. */
	for (uint64_t pc = 0x700010; pc; pc = pc == 0x700010 ? 0x501250 : pc == 0x501250 ? 0x501350 : 0) {
		mem[1] = pc;
		cfi_walk_stack(rows, sizeof(rows) / sizeof(rows[0]), maps, 2, &regs, &st, &w);
		cr_expect_eq(w.nr, 4, "%#lx: %u frames, stop %s", (unsigned long)pc, w.nr,
			     cfi_walk_stop_name(w.stop));
		cr_expect_eq(w.fp_frames, 1, "%#lx", (unsigned long)pc);
		cr_expect_eq(w.stop, UNWIND_STOP_ROOT, "%#lx: stop %s", (unsigned long)pc,
			     cfi_walk_stop_name(w.stop));
	}

	/* An rbp that is no frame pointer (below sp, misaligned): the table's reason. */
	mem[1] = 0x600010;
	for (int i = 0; i < 2; i++) {
		regs.bp = i ? base + 33 : base - 16;
		cfi_walk_stack(rows, sizeof(rows) / sizeof(rows[0]), maps, 2, &regs, &st, &w);
		cr_expect_eq(w.nr, 2, "rbp %#lx: %u frames", (unsigned long)regs.bp, w.nr);
		cr_expect_eq(w.fp_frames, 0);
		cr_expect_eq(w.stop, UNWIND_STOP_NO_MAPPING, "stop %s", cfi_walk_stop_name(w.stop));
	}

	/* A frame pointer chain that leaves the stack (a fault in BPF) ends there too. */
	regs.bp = base + sizeof(mem) - 8;
	cfi_walk_stack(rows, sizeof(rows) / sizeof(rows[0]), maps, 2, &regs, &st, &w);
	cr_expect_eq(w.nr, 2);
	cr_expect_eq(w.stop, UNWIND_STOP_NO_MAPPING, "stop %s", cfi_walk_stop_name(w.stop));

	/* A row that loses rbp: the next frame without a table cannot take the fp step. */
	regs = (struct cfi_regs){ .ip = 0x501550, .sp = base, .bp = base + 32 };
	mem[0] = 0x600010;
	cfi_walk_stack(rows, sizeof(rows) / sizeof(rows[0]), maps, 2, &regs, &st, &w);
	cr_expect_eq(w.nr, 2, "%u frames, stop %s", w.nr, cfi_walk_stop_name(w.stop));
	cr_expect_eq(w.fp_frames, 0);
	cr_expect_eq(w.stop, UNWIND_STOP_NO_MAPPING, "stop %s", cfi_walk_stop_name(w.stop));
}

/* ---- walks of a real stopped process -------------------------------- */

struct traced {
	pid_t pid;
	struct user_regs_struct regs;
	uint8_t *stack;
	size_t stack_size;
	struct procmaps maps;
	struct unwind_row *rows;	/* the row store: every table, one after the other */
	size_t nr_rows;
	struct unwind_mapping m[UNWIND_MAX_MAPPINGS];
	uint32_t nr_maps;
};

/*
 * Fork argv[0] as a traced child (its stdout on out_fd unless that is -1)
 * and wait for its exec stop. Returns false (tr->pid 0, the test is
 * skipped) where ptrace is not allowed.
 */
static bool start_traced(char *const argv[], int out_fd, struct traced *tr)
{
	int status, pipefd[2];
	char err = 0;

	cr_assert(pipe(pipefd) == 0);
	tr->pid = fork();
	cr_assert(tr->pid >= 0);
	if (tr->pid == 0) {
		close(pipefd[0]);
		if (out_fd >= 0)
			dup2(out_fd, 1);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL)) {
			err = 1;
			(void)!write(pipefd[1], &err, 1);
			_exit(99);
		}
		close(pipefd[1]);
		execv(argv[0], argv);
		_exit(98);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &err, 1) == 1 && err) {
		close(pipefd[0]);
		waitpid(tr->pid, &status, 0);
		tr->pid = 0;
		return false;
	}
	close(pipefd[0]);
	cr_assert(waitpid(tr->pid, &status, 0) == tr->pid);
	cr_assert(WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP, "no exec stop (status %#x)", status);
	return true;
}

/*
 * Run the fixture with arg as its traced child until it stops itself with
 * SIGSTOP. Returns false (the test is skipped) where ptrace is not allowed.
 */
static bool run_until_stop(const char *path, const char *arg, struct traced *tr)
{
	char *const argv[] = { (char *)path, (char *)arg, NULL };
	int status;

	if (!start_traced(argv, -1, tr))
		return false;
	cr_assert(ptrace(PTRACE_CONT, tr->pid, NULL, NULL) == 0);
	cr_assert(waitpid(tr->pid, &status, 0) == tr->pid);
	cr_assert(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP,
		  "the fixture did not stop itself (status %#x)", status);
	cr_assert(ptrace(PTRACE_GETREGS, tr->pid, NULL, &tr->regs) == 0);
	return true;
}

/* Copy the stack from sp page by page up to the first unreadable page (as BPF will). */
static void copy_stack(struct traced *tr)
{
	const size_t max = 256 << 10, page = 4096;
	uint64_t sp = tr->regs.rsp;

	tr->stack = malloc(max);
	cr_assert(tr->stack);
	tr->stack_size = 0;
	while (tr->stack_size < max) {
		uint64_t at = sp + tr->stack_size;
		size_t chunk = page - (at & (page - 1));
		struct iovec local = { tr->stack + tr->stack_size, chunk };
		struct iovec remote = { (void *)at, chunk };

		if (tr->stack_size + chunk > max ||
		    process_vm_readv(tr->pid, &local, 1, &remote, 1, 0) != (ssize_t)chunk)
			break;
		tr->stack_size += chunk;
	}
	cr_assert(tr->stack_size > 0, "could not read the stack at %#llx",
		  (unsigned long long)sp);
}

/* Tables for every file mapping, appended to the row store (the BPF map's layout). */
static void load_tables(struct traced *tr)
{
	cr_assert(procmaps_read(NULL, (uint32_t)tr->pid, 0, &tr->maps) == 0);
	cr_assert(tr->maps.nr <= UNWIND_MAX_MAPPINGS);
	for (size_t i = 0; i < tr->maps.nr; i++) {
		const struct procmaps_entry *e = &tr->maps.entries[i];
		struct unwind_mapping *m = &tr->m[tr->nr_maps++];
		struct cfi_table *t;
		uint64_t bias;

		*m = (struct unwind_mapping){ .start = e->start, .end = e->end };
		if (e->path[0] != '/' || cfi_table_build(e->path, &t))
			continue;	/* [vdso] and friends: no table, the walk says so */
		if (!cfi_table_bias(t, e->start, e->end - e->start, e->pgoff, &bias)) {
			tr->rows = realloc(tr->rows, (tr->nr_rows + t->nr) * sizeof(*tr->rows));
			cr_assert(tr->rows);
			memcpy(tr->rows + tr->nr_rows, t->rows, t->nr * sizeof(*t->rows));
			m->bias = bias;
			m->first_row = (uint32_t)tr->nr_rows;
			m->nr_rows = (uint32_t)t->nr;
			tr->nr_rows += t->nr;
		}
		cfi_table_free(t);
	}
}

static void walk(const struct traced *tr, struct cfi_walk *w)
{
	struct cfi_regs regs = { .ip = tr->regs.rip, .sp = tr->regs.rsp, .bp = tr->regs.rbp };
	struct cfi_stack st = { .base = tr->regs.rsp, .data = tr->stack,
				.size = tr->stack_size };

	cfi_walk_stack(tr->rows, tr->nr_rows, tr->m, tr->nr_maps, &regs, &st, w);
}

struct libdw_frames {
	uint64_t pcs[UNWIND_MAX_FRAMES];
	uint32_t nr;
};

static int libdw_frame(Dwfl_Frame *state, void *arg)
{
	struct libdw_frames *f = arg;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(state, &pc, NULL) || f->nr >= UNWIND_MAX_FRAMES)
		return DWARF_CB_ABORT;
	f->pcs[f->nr++] = pc;
	return DWARF_CB_OK;
}

/* libdw's own unwinder on the same stopped thread. */
static void libdw_unwind(pid_t pid, struct libdw_frames *f)
{
	static const Dwfl_Callbacks cbs = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
	};
	Dwfl *dwfl = dwfl_begin(&cbs);

	cr_assert(dwfl);
	f->nr = 0;
	cr_assert(dwfl_linux_proc_report(dwfl, pid) == 0);
	cr_assert(dwfl_report_end(dwfl, NULL, NULL) == 0);
	cr_assert(dwfl_linux_proc_attach(dwfl, pid, true) == 0, "dwfl attach: %s",
		  dwfl_errmsg(-1));
	dwfl_getthread_frames(dwfl, pid, libdw_frame, f);	/* an error ends its walk too */
	dwfl_end(dwfl);
}

static void release(struct traced *tr)
{
	if (tr->pid > 0) {
		kill(tr->pid, SIGKILL);
		waitpid(tr->pid, NULL, 0);
	}
	procmaps_release(&tr->maps);
	free(tr->stack);
	free(tr->rows);
}

/* Which function of the fixture (by nm ranges) holds a pc, or NULL. */
static const char *fixture_func(const char *path, const struct traced *tr, uint64_t pc,
				const char *const *names, size_t nr_names)
{
	for (size_t i = 0; i < tr->maps.nr; i++) {
		const struct procmaps_entry *e = &tr->maps.entries[i];

		if (strcmp(e->path, path) || pc < e->start || pc >= e->end)
			continue;
		for (size_t n = 0; n < nr_names; n++) {
			uint64_t addr, size, vaddr = pc - tr->m[i].bias;

			nm_symbol(path, names[n], &addr, &size);
			if (vaddr > addr && vaddr <= addr + size)	/* return addresses: pc - 1 inside */
				return names[n];
		}
	}
	return NULL;
}

static void check_against_libdw(const struct traced *tr, const struct cfi_walk *w)
{
	struct libdw_frames f;

	libdw_unwind(tr->pid, &f);
	cr_log_info("walker: %u frames, stop %s; libdw: %u frames", w->nr,
		    cfi_walk_stop_name(w->stop), f.nr);
	cr_expect_eq(w->nr, f.nr, "walker %u frames (stop %s), libdw %u", w->nr,
		     cfi_walk_stop_name(w->stop), f.nr);
	for (uint32_t i = 0; i < w->nr && i < f.nr; i++)
		cr_expect_eq(w->pcs[i], f.pcs[i], "frame %u: walker %#llx, libdw %#llx", i,
			     (unsigned long long)w->pcs[i], (unsigned long long)f.pcs[i]);
}

/*
 * Run the fixture in mode until it stops itself, walk its stack with the
 * tables and expect the walk to reach the root. false: ptrace not allowed.
 */
static bool stop_and_walk(const char *path, const char *mode, struct traced *tr,
			  struct cfi_walk *w)
{
	if (!run_until_stop(path, mode, tr))
		return false;
	copy_stack(tr);
	load_tables(tr);
	walk(tr, w);
	cr_expect_eq(w->stop, UNWIND_STOP_ROOT, "stop %s after %u frames",
		     cfi_walk_stop_name(w->stop), w->nr);
	return true;
}

Test(cfiwalk, stopped_fixture_matches_libdw, .fini = free_fixture)
{
	static const char *const names[] = { "cfi_leaf", "cfi_mid", "cfi_vla", "main", "_start" };
	const char *path = fixture("cfi_tree");
	struct traced tr = { 0 };
	struct cfi_walk w;
	size_t next = 0;

	if (!stop_and_walk(path, "raise", &tr, &w))
		cr_skip_test("ptrace is not allowed here");
	/* The fixture's frames in call order, leaf first; libc's frames in between. */
	for (uint32_t i = 0; i < w.nr; i++) {
		const char *fn = fixture_func(path, &tr, w.pcs[i], names, 5);

		if (!fn)
			continue;
		cr_expect_str_eq(fn, names[next], "frame %u is %s, expected %s", i, fn,
				 names[next]);
		next++;
	}
	cr_expect_eq(next, 5, "only %zu of the fixture's frames found", next);
	check_against_libdw(&tr, &w);
	release(&tr);
}

Test(cfiwalk, through_libc_qsort, .fini = free_fixture)
{
	static const char *const names[] = { "cfi_cmp", "cfi_sort", "main" };
	const char *path = fixture("cfi_tree");
	struct traced tr = { 0 };
	struct cfi_walk w;
	int at[3] = { -1, -1, -1 };

	if (!stop_and_walk(path, "qsort", &tr, &w))
		cr_skip_test("ptrace is not allowed here");
	for (uint32_t i = 0; i < w.nr; i++) {
		const char *fn = fixture_func(path, &tr, w.pcs[i], names, 3);

		for (int n = 0; fn && n < 3; n++)
			if (!strcmp(fn, names[n]) && at[n] < 0)
				at[n] = (int)i;
	}
	cr_assert(at[0] >= 0 && at[1] > at[0] && at[2] > at[1],
		  "cfi_cmp %d, cfi_sort %d, main %d", at[0], at[1], at[2]);
	/* Between the callback and its caller: libc's qsort, which has no frame pointers. */
	cr_expect(at[1] - at[0] >= 2, "no libc frame between cfi_cmp and cfi_sort");
	for (int i = at[0] + 1; i < at[1]; i++) {
		int m = unwind_find_mapping(tr.m, tr.nr_maps, w.pcs[i]);

		cr_assert(m >= 0);
		cr_expect(strstr(tr.maps.entries[m].path, "libc.so"), "frame %d in %s", i,
			  tr.maps.entries[m].path);
	}
	check_against_libdw(&tr, &w);
	release(&tr);
}

/*
 * A real Debian binary without frame pointers, stopped from outside at
 * whatever instruction it was running (prologues and epilogues included),
 * several times: python3 spinning in Python code under a few levels of
 * Python recursion. Every walk must equal libdw's and reach the root.
 */
Test(cfiwalk, python_stopped_anywhere_matches_libdw)
{
	static const char script[] =
		"import sys\n"
		"def f(n):\n"
		"    if n: return f(n - 1)\n"
		"    print('ready', flush=True)\n"
		"    while True: sorted(range(1000), key=lambda x: -x)\n"
		"f(8)\n";
	char *const argv[] = { PYTHON, "-c", (char *)script, NULL };
	int out[2], status;
	struct traced tr = { 0 };
	char line[16] = "";
	FILE *f;

	cr_assert(access(PYTHON, X_OK) == 0, "%s missing: run tools/deps.sh test", PYTHON);
	/* Close-on-exec: python keeps only its stdout (dup2 clears the flag there). */
	cr_assert(pipe2(out, O_CLOEXEC) == 0);
	if (!start_traced(argv, out[1], &tr)) {
		close(out[0]);
		close(out[1]);
		cr_skip_test("ptrace is not allowed here");
	}
	close(out[1]);
	cr_assert(ptrace(PTRACE_CONT, tr.pid, NULL, NULL) == 0);
	f = fdopen(out[0], "r");
	cr_assert(f && fgets(line, sizeof(line), f), "python printed nothing");
	cr_assert_str_eq(line, "ready\n");

	for (int round = 0; round < 64; round++) {
		struct cfi_walk w;

		cr_assert(kill(tr.pid, SIGSTOP) == 0);
		cr_assert(waitpid(tr.pid, &status, 0) == tr.pid);
		cr_assert(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP, "status %#x", status);
		cr_assert(ptrace(PTRACE_GETREGS, tr.pid, NULL, &tr.regs) == 0);
		copy_stack(&tr);
		if (!round)
			load_tables(&tr);
		walk(&tr, &w);
		cr_expect_eq(w.stop, UNWIND_STOP_ROOT, "round %d: stop %s after %u frames at %#llx",
			     round, cfi_walk_stop_name(w.stop), w.nr,
			     (unsigned long long)w.pcs[w.nr - 1]);
		cr_expect(w.nr > 8, "round %d: only %u frames (main, Py_RunMain, the eval loop, sorted...)", round, w.nr);
		check_against_libdw(&tr, &w);
		free(tr.stack);
		tr.stack = NULL;
		/* Resume without delivering the SIGSTOP; it runs on to another point. */
		cr_assert(ptrace(PTRACE_CONT, tr.pid, NULL, NULL) == 0);
		usleep(1000 * (unsigned int)(round % 8 + 1));
	}
	fclose(f);
	release(&tr);
}
