// SPDX-License-Identifier: MIT
/*
 * test_pycode.c - Python code objects read from outside to names and lines
 * (symbolize/pycode.h).
 *
 * Real interpreters: each pyenv build of CPython 3.8 to 3.13 (a missing
 * minor version is a skip that names it) and Debian's /usr/bin/python3
 * (3.11, the interpreter linked in, no DWARF) run a script whose main thread
 * blocks in a known function, hot_alpha, at the end of a chain of calls
 * with ASCII, latin-1, UCS-2 and UCS-4 names; a second thread prints each
 * frame of the main thread as Python itself sees it (its code object's
 * address, f_lasti, f_lineno, qualified name, file) and PyCode_Type's
 * address. The test reads every one of those code objects from outside,
 * with the layout and PyCode_Type that pyruntime.h finds in the ELF file
 * mapped in the process, and must get what Python printed.
 *
 * Hostile memory: this test process's own memory, read through
 * process_vm_readv as any other's, holds code objects built by hand
 * following a layout: garbage, strings and line tables cut by an
 * unmapped page, objects replaced under the cache. The line table and
 * string decoders get hand-written tables of each format.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbolize/pycode.h"
#include "symbolize/pylayout.h"
#include "symbolize/pyruntime.h"
#include "symbolize/util.h"
#include "tests/unit/test_pylayout.h"
#include "test_want.h"

TestSuite(pycode);

/* ---- the line table formats ---- */

static int line_at(enum py_lines_kind kind, const uint8_t *t, size_t len, int64_t addr)
{
	int line = -12345;
	int err = py_code_line(kind, t, len, 10, addr, &line);

	return err ? err : line;
}

Test(pycode, lnotab_of_3_8)
{
	/* Pairs (6, +1), (4, +2), (8, -1) from line 10; the odd last byte is no pair. */
	static const uint8_t t[] = { 6, 1, 4, 2, 8, 0xff, 7 };
	static const struct { int64_t addr; int line; } want[] = {
		{ -1, 10 }, { 0, 10 }, { 5, 10 }, { 6, 11 }, { 9, 11 }, { 10, 13 },
		{ 17, 13 }, { 18, 12 }, { 100000, 12 },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_expect_eq(line_at(PY_LINES_LNOTAB, t, sizeof(t), want[i].addr), want[i].line,
			     "byte %lld", (long long)want[i].addr);
	cr_expect_eq(line_at(PY_LINES_LNOTAB, t, 0, 50), 10, "no table: the first line");
}

Test(pycode, linetable_of_3_10)
{
	/* [0,4) +1; an empty range +2; [4,10) +0; [10,12) no line; [12,16) -2. */
	static const uint8_t t[] = { 4, 1, 0, 2, 6, 0, 2, 0x80, 4, 0xfe, 9 };
	static const struct { int64_t addr; int line; } want[] = {
		{ -1, 10 }, { 0, 11 }, { 3, 11 }, { 4, 13 }, { 9, 13 }, { 10, -ENOENT },
		{ 11, -ENOENT }, { 12, 11 }, { 15, 11 }, { 16, -ENOENT },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_expect_eq(line_at(PY_LINES_LINETABLE, t, sizeof(t), want[i].addr), want[i].line,
			     "byte %lld", (long long)want[i].addr);
}

/* An entry's first byte: 1, the code, the length in code units less one. */
#define LOC(code, units) (0x80 | (code) << 3 | ((units) - 1))

Test(pycode, locations_of_3_11)
{
	static const uint8_t t[] = {
		LOC(13, 2), 0x02,			/* [0,4): +1, no columns */
		LOC(0, 1), 0x12,			/* [4,6): the same line, short form */
		LOC(11, 3), 0x05, 0x09,			/* [6,12): +1, one line */
		LOC(15, 1),				/* [12,14): no location */
		LOC(14, 1), 0x58, 0x09, 0, 5, 10,	/* [14,16): +300 (600 = 24 + 9 << 6), long form */
		LOC(13, 1), 0x0b,			/* [16,18): -5 */
	};
	static const struct { int64_t addr; int line; } want[] = {
		{ -1, 10 }, { 0, 11 }, { 3, 11 }, { 4, 11 }, { 6, 12 }, { 11, 12 },
		{ 12, -ENOENT }, { 14, 312 }, { 16, 307 }, { 17, 307 }, { 18, -ENOENT },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_expect_eq(line_at(PY_LINES_LOCATIONS, t, sizeof(t), want[i].addr), want[i].line,
			     "byte %lld", (long long)want[i].addr);
}

/* The span of the tables above: the lines of non-empty ranges that have one. */
Test(pycode, line_spans)
{
	static const uint8_t lnotab[] = { 6, 1, 4, 2, 8, 0xff, 7 };
	/* A jump of 137 lines in two pairs: the line between is on no instruction. */
	static const uint8_t lnotab_jump[] = { 0, 127, 2, 10 };
	static const uint8_t linetable[] = { 4, 1, 0, 2, 6, 0, 2, 0x80, 4, 0xfe, 9 };
	static const uint8_t locations[] = {
		LOC(13, 2), 0x02, LOC(0, 1), 0x12, LOC(11, 3), 0x05, 0x09, LOC(15, 1),
		LOC(14, 1), 0x58, 0x09, 0, 5, 10, LOC(13, 1), 0x0b,
	};
	static const uint8_t no_line[] = { LOC(15, 2) };
	static const uint8_t cut[] = { LOC(13, 1), 0x02, LOC(13, 1), 0x42 };
	int lo = -1, hi = -1;

	cr_assert_eq(py_code_line_span(PY_LINES_LNOTAB, lnotab, sizeof(lnotab), 10, &lo, &hi), 0);
	cr_expect(lo == 10 && hi == 13, "lnotab: %d-%d", lo, hi);
	cr_assert_eq(py_code_line_span(PY_LINES_LNOTAB, lnotab_jump, sizeof(lnotab_jump), 10,
				       &lo, &hi), 0);
	cr_expect(lo == 137 && hi == 147, "lnotab jump: %d-%d", lo, hi);
	cr_assert_eq(py_code_line_span(PY_LINES_LINETABLE, linetable, sizeof(linetable), 10,
				       &lo, &hi), 0);
	cr_expect(lo == 11 && hi == 13, "linetable: %d-%d", lo, hi);
	cr_assert_eq(py_code_line_span(PY_LINES_LOCATIONS, locations, sizeof(locations), 10,
				       &lo, &hi), 0);
	cr_expect(lo == 11 && hi == 312, "locations: %d-%d", lo, hi);
	lo = hi = -1;
	cr_expect_eq(py_code_line_span(PY_LINES_LOCATIONS, no_line, sizeof(no_line), 10, &lo, &hi),
		     -ENOENT);
	cr_expect_eq(py_code_line_span(PY_LINES_LOCATIONS, NULL, 0, 10, &lo, &hi), -ENOENT);
	cr_expect_eq(py_code_line_span(PY_LINES_LOCATIONS, cut, sizeof(cut), 10, &lo, &hi), -EINVAL);
	cr_expect(lo == -1 && hi == -1, "left as they were");
}

Test(pycode, locations_refuse_what_runs_past_the_end)
{
	static const uint8_t cut_varint[] = { LOC(13, 1), 0x42 };
	static const uint8_t no_entry[] = { 0x02, LOC(13, 1), 0x02 };
	static const uint8_t entry_in_varint[] = { LOC(14, 1), 0x42, LOC(13, 1), 0x02 };
	static const uint8_t overflow[] = { LOC(13, 1), 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x01 };
	/* A line far out of int's range, one huge delta at a time. */
	uint8_t far[6 * 40];

	cr_expect_eq(line_at(PY_LINES_LOCATIONS, cut_varint, sizeof(cut_varint), 0), -EINVAL);
	cr_expect_eq(line_at(PY_LINES_LOCATIONS, no_entry, sizeof(no_entry), 0), -EINVAL);
	cr_expect_eq(line_at(PY_LINES_LOCATIONS, entry_in_varint, sizeof(entry_in_varint), 0),
		     -EINVAL);
	cr_expect_eq(line_at(PY_LINES_LOCATIONS, overflow, sizeof(overflow), 0), -EINVAL);
	for (size_t i = 0; i < sizeof(far); i += 6) {
		far[i] = LOC(13, 1);
		/* 0x3ffffffe: +0x1fffffff, the fourth one past INT_MAX */
		far[i + 1] = 0x7e, far[i + 2] = 0x7f, far[i + 3] = 0x7f;
		far[i + 4] = 0x7f, far[i + 5] = 0x3f;
	}
	cr_expect_eq(line_at(PY_LINES_LOCATIONS, far, sizeof(far), 2 * 39), -EINVAL);
	/* What is before the damage is read as it is: entries are decoded in order. */
	cr_expect_eq(line_at(PY_LINES_LOCATIONS, far, sizeof(far), 0), 10 + 0x1fffffff);
	cr_expect_eq(line_at(PY_LINES_LOCATIONS, cut_varint, 0, 0), -ENOENT, "an empty table");
}

/* ---- str characters ---- */

static int utf8(unsigned int kind, bool ascii, const void *chars, size_t n, char *out, size_t size)
{
	size_t len = 0;
	int err = py_str_to_utf8(kind, ascii, chars, n, out, size, &len);

	if (!err)
		cr_expect_eq(len, strlen(out));
	return err;
}

Test(pycode, str_kinds_to_utf8)
{
	static const uint16_t ucs2[] = { 0x70ed, 'x', 0xdc80 };	/* 热x, a lone surrogate */
	static const uint32_t ucs4[] = { 0x20000, 0, 0x10ffff };
	static const uint32_t too_big[] = { 'a', 0x110000 };
	char out[64];

	cr_expect_eq(utf8(1, true, "abc", 3, out, sizeof(out)), 0);
	cr_expect_str_eq(out, "abc");
	cr_expect_eq(utf8(1, false, "h\xf4t", 3, out, sizeof(out)), 0);
	cr_expect_str_eq(out, "h\xc3\xb4t");
	cr_expect_eq(utf8(2, false, ucs2, 3, out, sizeof(out)), 0);
	cr_expect_str_eq(out, "\xe7\x83\xadx\xef\xbf\xbd");
	cr_expect_eq(utf8(4, false, ucs4, 3, out, sizeof(out)), 0);
	cr_expect_str_eq(out, "\xf0\xa0\x80\x80\xef\xbf\xbd\xf4\x8f\xbf\xbf");
	cr_expect_eq(utf8(1, true, "", 0, out, sizeof(out)), 0);
	cr_expect_str_eq(out, "");

	cr_expect_eq(utf8(4, false, too_big, 2, out, sizeof(out)), -EILSEQ);
	cr_expect_eq(utf8(1, true, "h\xf4t", 3, out, sizeof(out)), -EILSEQ, "not ASCII");
	cr_expect_eq(utf8(2, true, ucs2, 1, out, sizeof(out)), -EILSEQ, "ASCII of kind 2");
	cr_expect_eq(utf8(3, false, ucs4, 1, out, sizeof(out)), -EILSEQ);
	cr_expect_eq(utf8(0, false, ucs4, 1, out, sizeof(out)), -EILSEQ);
	/* The NUL fits or the string does not. */
	cr_expect_eq(utf8(1, true, "abc", 3, out, 3), -ENOSPC);
	cr_expect_eq(utf8(1, true, "abc", 3, out, 4), 0);
	cr_expect_eq(utf8(4, false, ucs4, 1, out, 4), -ENOSPC);
	cr_expect_eq(utf8(1, true, "", 0, out, 0), -ENOSPC);
}

/* ---- code objects built by hand in this process ---- */

/* A str of kind at obj, as CPython lays out a compact one. */
static void make_str(uint8_t *obj, const struct py_layout *l, unsigned int kind, bool ascii,
		     const void *chars, size_t n)
{
	uint32_t state = kind << PY_UNICODE_KIND_SHIFT | 1u << PY_UNICODE_COMPACT_BIT |
			 (ascii ? 1u << PY_UNICODE_ASCII_BIT : 0);
	int64_t len = (int64_t)n;

	/* An ASCII one has the shorter header: no more than that is written. */
	memset(obj, 0, ascii ? l->unicode_ascii_data : l->unicode_compact_data);
	memcpy(obj + l->unicode_length, &len, sizeof(len));
	memcpy(obj + l->unicode_state, &state, sizeof(state));
	memcpy(obj + (ascii ? l->unicode_ascii_data : l->unicode_compact_data), chars, n * kind);
}

static void make_bytes(uint8_t *obj, const struct py_layout *l, const void *data, int64_t n,
		       size_t copy)
{
	memset(obj, 0, l->bytes_data);
	memcpy(obj + l->var_size, &n, sizeof(n));
	memcpy(obj + l->bytes_data, data, copy);
}

static void put_ptr(uint8_t *obj, uint32_t off, const void *p)
{
	uint64_t v = (uintptr_t)p;

	memcpy(obj + off, &v, sizeof(v));
}

/* A 3.11 code object and what it points to, all in this process. */
struct fake {
	const struct py_layout *l;
	uint64_t code_type;	/* the address a code object's ob_type must be */
	uint8_t code[512];
	uint8_t name[256], qualname[256], filename[256], lines[256];
};

/* Three code units: lines 11, 11, 12 from first line 10. */
static const uint8_t fake_table[] = { LOC(13, 2), 0x02, LOC(11, 1), 5, 9 };

static void make_fake(struct fake *f, int firstlineno)
{
	int64_t units = 3;
	int32_t first = firstlineno;

	f->l = py_layout_table(3, 11);
	f->code_type = (uintptr_t)&f->code_type;
	memset(f->code, 0, sizeof(f->code));
	put_ptr(f->code, f->l->object_type, &f->code_type);
	memcpy(f->code + f->l->var_size, &units, sizeof(units));
	put_ptr(f->code, f->l->code_name, f->name);
	put_ptr(f->code, f->l->code_qualname, f->qualname);
	put_ptr(f->code, f->l->code_filename, f->filename);
	put_ptr(f->code, f->l->code_lines, f->lines);
	memcpy(f->code + f->l->code_firstlineno, &first, sizeof(first));
	make_str(f->name, f->l, 1, true, "hot", 3);
	make_str(f->qualname, f->l, 1, true, "Outer.hot", 9);
	make_str(f->filename, f->l, 1, true, "/x/y.py", 7);
	make_bytes(f->lines, f->l, fake_table, sizeof(fake_table), sizeof(fake_table));
}

/* The address of the code unit unit of f's bytecode (PY_INSTR_CODE_PTR). */
static uint64_t unit(const struct fake *f, int i)
{
	return (uintptr_t)f->code + f->l->code_adaptive + 2 * (int64_t)i;
}

/* f made anew (first line 10) and a reader of this process that takes it for a code object. */
static struct py_code_reader *fake_reader(struct fake *f, size_t max_entries)
{
	struct py_code_opts opts = { .sz = sizeof(opts), .max_entries = max_entries };
	struct py_code_reader *r;

	make_fake(f, 10);
	cr_assert_eq(py_code_reader_new(getpid(), f->l, f->code_type, &opts, &r), 0);
	return r;
}

static struct py_code_stats stats_of(const struct py_code_reader *r)
{
	struct py_code_stats s;

	py_code_stats(r, &s);
	return s;
}

Test(pycode, fake_code_object_named)
{
	static struct fake f;
	struct py_code_name n;
	struct py_code_reader *r;

	r = fake_reader(&f, 0);
	cr_assert_eq(py_code_name(r, (uintptr_t)f.code, unit(&f, 2), &n), 0);
	cr_expect_str_eq(n.qualname, "Outer.hot");
	cr_expect_str_eq(n.filename, "/x/y.py");
	cr_expect_eq(n.firstlineno, 10);
	cr_expect_eq(n.line, 12);
	cr_expect_eq(n.line_lo, 11, "the lines of its table");
	cr_expect_eq(n.line_hi, 12);
	cr_assert_eq(py_code_name(r, (uintptr_t)f.code, unit(&f, 0), &n), 0);
	cr_expect_eq(n.line, 11);
	cr_assert_eq(py_code_name(r, (uintptr_t)f.code, unit(&f, -1), &n), 0);
	cr_expect_eq(n.line, 10, "before the first instruction: the first line");
	/* Past the bytecode: another object's instruction, no line of this one. */
	cr_assert_eq(py_code_name(r, (uintptr_t)f.code, unit(&f, 3), &n), 0);
	cr_expect_eq(n.line, 0);
	struct py_code_stats st = stats_of(r);
	EXPECT_ALL(WANT(st.reads, 1), WANT(st.hits, 3), WANT(st.no_line, 1));
	py_code_reader_free(r);
}

Test(pycode, garbage_is_no_code_object)
{
	static struct fake f;
	struct py_code_name n = { .line = 77 };
	struct py_code_reader *r;
	uint8_t garbage[512];

	r = fake_reader(&f, 0);
	for (size_t i = 0; i < sizeof(garbage); i++)
		garbage[i] = (uint8_t)(i * 131 + 7);
	cr_expect_eq(py_code_name(r, (uintptr_t)garbage, 0, &n), -EINVAL);
	cr_expect_eq(py_code_name(r, 0, 0, &n), -EFAULT, "NULL");
	cr_expect_eq(py_code_name(r, UINT64_MAX - 8, 0, &n), -EFAULT, "wraps");
	cr_expect_eq(n.line, 77, "out untouched");
	cr_expect_eq(stats_of(r).errors[PY_CODE_ERR_NOT_CODE], 1);
	cr_expect_eq(stats_of(r).errors[PY_CODE_ERR_READ], 2);

	/* A code object whose name is no compact str. */
	f.name[f.l->unicode_state] &= (uint8_t)~(1u << PY_UNICODE_COMPACT_BIT);
	f.qualname[f.l->unicode_state] = 3 << PY_UNICODE_KIND_SHIFT | 1 << PY_UNICODE_COMPACT_BIT;
	cr_expect_eq(py_code_name(r, (uintptr_t)f.code, 0, &n), -EILSEQ, "a kind of 3");
	make_str(f.qualname, f.l, 1, true, "Outer.hot", 9);
	memcpy(f.qualname + f.l->unicode_length, &(int64_t){ PY_STR_MAX_CHARS + 1 }, 8);
	cr_expect_eq(py_code_name(r, (uintptr_t)f.code, 0, &n), -E2BIG);
	memcpy(f.qualname + f.l->unicode_length, &(int64_t){ -1 }, 8);
	cr_expect_eq(py_code_name(r, (uintptr_t)f.code, 0, &n), -EILSEQ);
	make_str(f.qualname, f.l, 1, true, "Outer.h\xffot", 10);
	cr_expect_eq(py_code_name(r, (uintptr_t)f.code, 0, &n), -EILSEQ, "not ASCII");
	cr_expect_eq(stats_of(r).errors[PY_CODE_ERR_STRING], 4);
	py_code_reader_free(r);
}

/* Two pages, the second one unreadable: objects that run into it are cut. */
static uint8_t *page_before_hole(void)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(p, MAP_FAILED);
	cr_assert_eq(mprotect(p + page, page, PROT_NONE), 0);
	return p;
}

Test(pycode, cut_strings_and_line_tables)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *p = page_before_hole(), *end = p + page;
	static const uint8_t cut_table[] = { LOC(13, 2), 0x02, LOC(13, 1), 0x42 };
	static struct fake f;
	struct py_code_name n;
	struct py_code_reader *r;

	r = fake_reader(&f, 0);

	/* A file name whose characters run into the hole. */
	make_str(end - f.l->unicode_ascii_data - 4, f.l, 1, true, "/a/b", 4);
	memcpy(end - f.l->unicode_ascii_data - 4 + f.l->unicode_length, &(int64_t){ 40 }, 8);
	put_ptr(f.code, f.l->code_filename, end - f.l->unicode_ascii_data - 4);
	cr_expect_eq(py_code_name(r, (uintptr_t)f.code, unit(&f, 0), &n), -EFAULT);
	/* The same string, whole: it ends where the page does. */
	memcpy(end - f.l->unicode_ascii_data - 4 + f.l->unicode_length, &(int64_t){ 4 }, 8);
	cr_assert_eq(py_code_name(r, (uintptr_t)f.code, unit(&f, 0), &n), 0);
	cr_expect_str_eq(n.filename, "/a/b");
	cr_expect_eq(n.line, 11);
	/* The str header itself in the hole. */
	put_ptr(f.code, f.l->code_filename, end - 8);
	cr_expect_eq(py_code_name(r, (uintptr_t)f.code, 0, &n), -EFAULT);
	cr_expect_eq(stats_of(r).errors[PY_CODE_ERR_READ], 2);
	put_ptr(f.code, f.l->code_filename, f.filename);

	/* A line table whose size runs past its end: named, no line. */
	make_bytes(end - f.l->bytes_data - sizeof(fake_table), f.l, fake_table, 1000,
		   sizeof(fake_table));
	put_ptr(f.code, f.l->code_lines, end - f.l->bytes_data - sizeof(fake_table));
	cr_assert_eq(py_code_name(r, (uintptr_t)f.code, unit(&f, 0), &n), 0);
	cr_expect_str_eq(n.qualname, "Outer.hot");
	cr_expect_eq(n.line, 0);
	/* The table read whole, but its last entry cut: lines before it are still found. */
	make_bytes(end - f.l->bytes_data - 4, f.l, cut_table, 4, 4);
	put_ptr(f.code, f.l->code_lines, end - f.l->bytes_data - 4);
	cr_assert_eq(py_code_name(r, (uintptr_t)f.code, unit(&f, 1), &n), 0);
	cr_expect_eq(n.line, 11);
	cr_assert_eq(py_code_name(r, (uintptr_t)f.code, unit(&f, 2), &n), 0);
	cr_expect_eq(n.line, 0);
	/* A negative size and one too big to read. */
	make_bytes(f.lines, f.l, fake_table, -1, 0);
	put_ptr(f.code, f.l->code_lines, f.lines);
	cr_assert_eq(py_code_name(r, (uintptr_t)f.code, unit(&f, 0), &n), 0);
	cr_expect_eq(n.line, 0);
	make_bytes(f.lines, f.l, fake_table, PY_LINES_MAX_BYTES + 1, 0);
	f.code[f.l->code_firstlineno]++;	/* another object: read again */
	cr_assert_eq(py_code_name(r, (uintptr_t)f.code, unit(&f, 0), &n), 0);
	cr_expect_eq(n.line, 0);
	cr_expect_eq(stats_of(r).no_line, 4);
	/* The code object itself cut by the hole. */
	cr_expect_eq(py_code_name(r, (uintptr_t)end - 16, 0, &n), -EFAULT);
	py_code_reader_free(r);
	munmap(p, 2 * page);
}

Test(pycode, cache_sees_a_replaced_object)
{
	static struct fake f;
	struct py_code_reader *r = fake_reader(&f, 0);
	struct py_code_name n;

	cr_assert_eq(py_code_name(r, (uintptr_t)f.code, unit(&f, 2), &n), 0);
	cr_expect_str_eq(n.qualname, "Outer.hot", "read");
	/* Freed and another code object put there: other names, another first line. */
	make_str(f.name, f.l, 1, true, "cold", 4);
	make_str(f.qualname, f.l, 2, false, (const uint16_t[]){ 0x70ed }, 1);
	cr_assert_eq(py_code_name(r, (uintptr_t)f.code, unit(&f, 2), &n), 0);
	cr_expect_str_eq(n.qualname, "Outer.hot", "the same fixed fields: the cached names");
	memcpy(f.code + f.l->code_firstlineno, &(int32_t){ 20 }, 4);
	cr_assert_eq(py_code_name(r, (uintptr_t)f.code, unit(&f, 2), &n), 0);
	cr_expect_str_eq(n.qualname, "\xe7\x83\xad");
	cr_expect_eq(n.firstlineno, 20);
	cr_expect_eq(n.line, 22);
	/* The qualified name moved to another str. */
	put_ptr(f.code, f.l->code_qualname, f.name);
	cr_assert_eq(py_code_name(r, (uintptr_t)f.code, unit(&f, 2), &n), 0);
	cr_expect_str_eq(n.qualname, "cold");
	/* No code object any more: refused; the same one back: as cached. */
	f.code[f.l->object_type]++;
	cr_expect_eq(py_code_name(r, (uintptr_t)f.code, 0, &n), -EINVAL);
	f.code[f.l->object_type]--;
	cr_assert_eq(py_code_name(r, (uintptr_t)f.code, 0, &n), 0);
	struct py_code_stats st = stats_of(r);
	EXPECT_ALL(WANT(st.reads, 3), WANT(st.changed, 2), WANT(st.hits, 2));
	py_code_reader_free(r);
}

Test(pycode, named_as_last_read)
{
	static struct fake f;
	struct py_code_reader *r = fake_reader(&f, 0);
	struct py_code_name n;

	cr_expect_eq(py_code_name_last(r, (uintptr_t)f.code, unit(&f, 2), &n), -ENOENT,
		     "never read");
	cr_assert_eq(py_code_name(r, (uintptr_t)f.code, unit(&f, 0), &n), 0);
	/* Freed since: no code object to read, but its last read names any instruction. */
	f.code[f.l->object_type]++;
	cr_expect_eq(py_code_name(r, (uintptr_t)f.code, unit(&f, 2), &n), -EINVAL);
	cr_assert_eq(py_code_name_last(r, (uintptr_t)f.code, unit(&f, 2), &n), 0);
	cr_expect_str_eq(n.qualname, "Outer.hot");
	cr_expect_str_eq(n.filename, "/x/y.py");
	cr_expect_eq(n.firstlineno, 10);
	cr_expect_eq(n.line, 12);
	cr_expect_eq(stats_of(r).reads, 1);
	cr_expect_eq(stats_of(r).last, 1);
	py_code_reader_free(r);
}

Test(pycode, cache_holds_max_entries)
{
	static struct fake f[3];
	struct py_code_name n;
	struct py_code_reader *r;

	r = fake_reader(&f[0], 2);
	for (int i = 1; i < 3; i++) {
		make_fake(&f[i], 10 + i);
		/* One PyCode_Type for all three. */
		put_ptr(f[i].code, f[i].l->object_type, &f[0].code_type);
	}
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(py_code_name(r, (uintptr_t)f[i].code, 0, &n), 0);
		cr_expect_eq(n.firstlineno, 10 + i);
	}
	cr_expect_eq(stats_of(r).evicted, 1);
	cr_assert_eq(py_code_name(r, (uintptr_t)f[2].code, 0, &n), 0);
	cr_expect_eq(stats_of(r).hits, 1);
	cr_assert_eq(py_code_name(r, (uintptr_t)f[0].code, 0, &n), 0);
	cr_expect_eq(stats_of(r).reads, 4, "the oldest was dropped");
	cr_expect_eq(stats_of(r).evicted, 2);
	py_code_reader_free(r);
}

Test(pycode, reader_refuses_layouts_and_options)
{
	struct py_layout l = *py_layout_table(3, 11);
	struct py_code_opts opts[2] = { { .sz = 2 * sizeof(opts[0]) } };
	struct py_code_reader *r;

	cr_expect_eq(py_code_reader_new(getpid(), &l, 0, NULL, &r), -EINVAL, "no PyCode_Type");
	l.code_name = 1u << 20;
	cr_expect_eq(py_code_reader_new(getpid(), &l, 8, NULL, &r), -EINVAL);
	l = *py_layout_table(3, 11);
	l.code_qualname = PY_LAYOUT_NONE;
	cr_expect_eq(py_code_reader_new(getpid(), &l, 8, NULL, &r), -EINVAL,
		     "an instruction pointer with no bytecode offset");
	l = *py_layout_table(3, 11);
	l.unicode_ascii_data = l.unicode_state;
	cr_expect_eq(py_code_reader_new(getpid(), &l, 8, NULL, &r), -EINVAL);
	opts[1].max_entries = 1;	/* a field this library does not know */
	cr_expect_eq(py_code_reader_new(getpid(), py_layout_table(3, 11), 8, opts, &r), -EINVAL);
	for (unsigned int minor = 8; minor <= 13; minor++) {
		cr_assert_eq(py_code_reader_new(getpid(), py_layout_table(3, minor), 8, NULL, &r), 0,
			     "3.%u", minor);
		py_code_reader_free(r);
	}
	py_code_reader_free(NULL);
}

Test(pycode, process_gone)
{
	static struct fake f;
	struct py_code_reader *r;
	struct py_code_name n;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(0);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	make_fake(&f, 10);
	cr_assert_eq(py_code_reader_new(pid, f.l, f.code_type, NULL, &r), 0);
	cr_expect_eq(py_code_name(r, (uintptr_t)f.code, 0, &n), -ESRCH);
	cr_expect_eq(stats_of(r).errors[PY_CODE_ERR_READ], 1);
	py_code_reader_free(r);
}

/* ---- real interpreters ---- */

/*
 * The script: the main thread blocks reading stdin in hot_alpha, far below
 * its first line (line deltas past what one entry of each format holds);
 * a thread prints PyCode_Type's address, then every frame of the main
 * thread: code object, f_lasti (bytes), f_lineno, first line, qualified
 * name (co_name before 3.11, which has no co_qualname), file; then "end".
 */
static const char script_head[] =
	"import sys, threading, time\n"
	"\n"
	"def hot_alpha():\n"
	"    total = 0\n"
	"    for i in range(3):\n"
	"        total += i\n";
/* 200 blank lines go here. */
static const char script_tail[] =
	"    if total >= 0:\n"
	"        sys.stdin.readline()  # HOT_ALPHA_BLOCKS\n"
	"    return total\n"
	"\n"
	"def \xf0\xa0\x80\x80_eps():\n"		/* U+20000: a UCS-4 name */
	"    hot_alpha()\n"
	"\n"
	"def \xe7\x83\xad_delta():\n"		/* 热: UCS-2 */
	"    \xf0\xa0\x80\x80_eps()\n"
	"\n"
	"def h\xc3\xb4t_gamma():\n"		/* ô: latin-1 */
	"    \xe7\x83\xad_delta()\n"
	"\n"
	"class Outer:\n"
	"    def hot_beta(self):\n"
	"        h\xc3\xb4t_gamma()\n"
	"\n"
	"def report():\n"
	"    main = threading.main_thread().ident\n"
	"    while True:\n"
	"        f = sys._current_frames().get(main)\n"
	"        if f is not None and f.f_code is hot_alpha.__code__:\n"
	"            break\n"
	"        time.sleep(0.01)\n"
	"    print('%x' % id(type(f.f_code)))\n"
	"    while f is not None:\n"
	"        c = f.f_code\n"
	"        print('%x %d %d %d\\t%s\\t%s' % (id(c), f.f_lasti, f.f_lineno, c.co_firstlineno,\n"
	"              getattr(c, 'co_qualname', c.co_name), c.co_filename))\n"
	"        f = f.f_back\n"
	"    print('end', flush=True)\n"
	"\n"
	"threading.Thread(target=report, daemon=True).start()\n"
	"Outer().hot_beta()\n";

/* What the script's frames are, from the top, per version. */
static const char *const frames_311[] = {
	"hot_alpha", "\xf0\xa0\x80\x80_eps", "\xe7\x83\xad_delta", "h\xc3\xb4t_gamma",
	"Outer.hot_beta", "<module>",
};

/* The script in dir, and the line hot_alpha blocks on. */
static int write_script(const char *dir, char *path, size_t size)
{
	FILE *fp;
	int line = 1;

	snprintf(path, size, "%s/pycode_target.py", dir);
	fp = fopen(path, "w");
	cr_assert_not_null(fp, "%s", path);
	fputs(script_head, fp);
	for (int i = 0; i < 200; i++)
		fputc('\n', fp);
	fputs(script_tail, fp);
	fclose(fp);
	for (const char *p = script_head; *p; p++)
		line += *p == '\n';
	return line + 200 + 1;
}

struct frame {
	uint64_t code;
	long long lasti;
	int lineno, firstlineno;
	char qualname[256], filename[PATH_MAX];
};

struct target {
	pid_t pid;
	int in;		/* its stdin: closing it lets it end */
	uint64_t code_type;
	struct frame frames[16];
	size_t nr;
};

/* Run python on script and read what it prints of its blocked main thread. */
static void start_target(const char *python, const char *script, struct target *t)
{
	int in[2], out[2];
	char line[2 * PATH_MAX];
	FILE *fp;

	cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
	t->pid = fork();
	cr_assert_geq(t->pid, 0);
	if (t->pid == 0) {
		char *const argv[] = { (char *)python, "-S", (char *)script, NULL };
		char *const envp[] = { "PYTHONIOENCODING=utf-8", "PYTHONDONTWRITEBYTECODE=1", NULL };

		dup2(in[0], 0);
		dup2(out[1], 1);
		execve(python, argv, envp);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	t->in = in[1];
	fp = fdopen(out[0], "r");
	cr_assert_not_null(fp);
	cr_assert_not_null(fgets(line, sizeof(line), fp), "%s printed nothing", python);
	t->code_type = strtoull(line, NULL, 16);
	t->nr = 0;
	while (fgets(line, sizeof(line), fp) && strcmp(line, "end\n")) {
		struct frame *f = &t->frames[t->nr];
		char *q, *file;

		cr_assert_lt(t->nr, sizeof(t->frames) / sizeof(t->frames[0]));
		line[strcspn(line, "\n")] = '\0';
		q = strchr(line, '\t');
		cr_assert_not_null(q, "%s", line);
		file = strchr(q + 1, '\t');
		cr_assert_not_null(file, "%s", line);
		*q++ = '\0';
		*file++ = '\0';
		cr_assert_eq(sscanf(line, "%" SCNx64 " %lld %d %d", &f->code, &f->lasti, &f->lineno,
				    &f->firstlineno), 4, "%s", line);
		snprintf(f->qualname, sizeof(f->qualname), "%s", q);
		snprintf(f->filename, sizeof(f->filename), "%s", file);
		t->nr++;
	}
	fclose(fp);
}

static void stop_target(struct target *t)
{
	int status;

	close(t->in);
	cr_assert_eq(waitpid(t->pid, &status, 0), t->pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
}

/* Where the file at path (its first segment) is mapped in pid, minus that segment's address. */
static uint64_t load_bias(pid_t pid, const char *path, Elf *elf)
{
	char maps[64], line[PATH_MAX + 128], real[PATH_MAX];
	uint64_t bias = 0, first_vaddr = UINT64_MAX;
	bool found = false;
	size_t n;
	FILE *fp;

	cr_assert_eq(elf_getphdrnum(elf, &n), 0);
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < first_vaddr)
			first_vaddr = ph.p_vaddr & ~0xfffull;
	}
	cr_assert(realpath(path, real), "%s", path);
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	fp = fopen(maps, "r");
	cr_assert_not_null(fp);
	while (!found && fgets(line, sizeof(line), fp)) {
		unsigned long long start, off;
		int pos = 0;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%llx-%*[0-9a-f] %*s %llx %*s %*s %n", &start, &off, &pos) == 2 && pos &&
		    off == 0 && !strcmp(line + pos, real)) {
			bias = start - first_vaddr;
			found = true;
		}
	}
	fclose(fp);
	cr_assert(found, "%s is not mapped in %d", real, (int)pid);
	return bias;
}

/*
 * Read every frame the script printed from outside: python runs it, and
 * runtime is the ELF file that holds its interpreter (python or libpython).
 */
static void check_python(const char *python, const char *runtime, unsigned int minor)
{
	char dir[] = "/tmp/pycode-XXXXXX", script[PATH_MAX];
	struct py_runtime_info rt;
	struct py_layout l;
	struct py_code_reader *r;
	struct py_code_name n;
	struct target t;
	uint64_t bias;
	int hot_line, fd;
	Elf *elf;

	cr_assert_not_null(mkdtemp(dir));
	hot_line = write_script(dir, script, sizeof(script));
	cr_assert_eq(elf_open_path(runtime, &fd, &elf), 0, "%s", runtime);
	cr_assert_eq(py_runtime_detect(elf, &rt), 0, "%s", runtime);
	cr_assert_eq(rt.minor, minor, "%s", runtime);
	cr_assert_eq(py_runtime_layout(elf, &rt, &l), 0, "%s", runtime);

	start_target(python, script, &t);
	bias = load_bias(t.pid, runtime, elf);
	cr_expect_eq(rt.code_type_addr + bias, t.code_type, "%s: PyCode_Type", python);
	cr_assert_eq(t.nr, 6, "%s: %zu frames", python, t.nr);
	cr_expect_eq(t.frames[0].lineno, hot_line, "%s: Python's own line for hot_alpha", python);

	cr_assert_eq(py_code_reader_new(t.pid, &l, rt.code_type_addr + bias, NULL, &r), 0);
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < t.nr; i++) {
			const struct frame *f = &t.frames[i];
			const char *want = frames_311[i];
			uint64_t instr;

			/* Before 3.11 the name only: no qualified one. */
			if (minor < 11 && strchr(want, '.'))
				want = strchr(want, '.') + 1;
			instr = l.instr_kind == PY_INSTR_LASTI_BYTES ? (uint64_t)f->lasti :
				l.instr_kind == PY_INSTR_LASTI_UNITS ? (uint64_t)(f->lasti / 2) :
				f->code + l.code_adaptive + (uint64_t)f->lasti;
			cr_assert_eq(py_code_name(r, f->code, instr, &n), 0, "%s: frame %zu", python, i);
			cr_expect_str_eq(f->qualname, want, "%s: Python's own name", python);
			cr_expect_str_eq(n.qualname, want, "%s: frame %zu", python, i);
			cr_expect_str_eq(n.filename, script, "%s: frame %zu", python, i);
			cr_expect_eq(n.firstlineno, f->firstlineno, "%s: %s", python, want);
			cr_expect_eq(n.line, f->lineno, "%s: %s at byte %lld", python, want, f->lasti);
		}
	}
	cr_expect_eq(stats_of(r).reads, t.nr);
	cr_expect_eq(stats_of(r).hits, t.nr);
	cr_expect_eq(stats_of(r).no_line, 0);

	stop_target(&t);
	cr_expect_eq(py_code_name(r, t.frames[0].code, 0, &n), -ESRCH, "%s: exited", python);
	/*
	 * Gone: a code object read while it lived is named as then, the line
	 * of any of its instructions too (its last samples are named after
	 * its exit); one never read is not.
	 */
	cr_expect_eq(py_code_name_last(r, t.frames[1].code, 0, &n), 0, "%s: exited", python);
	cr_expect_eq(n.firstlineno, t.frames[1].firstlineno, "%s: exited", python);
	cr_expect_eq(stats_of(r).last, 1, "%s", python);
	cr_expect_eq(py_code_name_last(r, t.frames[1].code + 8, 0, &n), -ENOENT, "%s", python);
	py_code_reader_free(r);
	elf_end(elf);
	close(fd);
	unlink(script);
	rmdir(dir);
}

/* The pyenv build 3.<minor>.<micro> under root: its python3.<minor> runs on its libpython. */
static void check_pyenv_build(const char *root, unsigned int minor, unsigned int micro)
{
	char exe[PATH_MAX], lib[PATH_MAX];

	snprintf(exe, sizeof(exe), "%s/versions/3.%u.%u/bin/python3.%u", root, minor, micro, minor);
	snprintf(lib, sizeof(lib), "%s/versions/3.%u.%u/lib/libpython3.%u.so.1.0", root, minor, micro,
		 minor);
	cr_assert_eq(access(exe, X_OK), 0, "%s", exe);
	check_python(exe, lib, minor);
}

static void check_pyenv(unsigned int minor)
{
	for_each_build(minor, "", check_pyenv_build);
}

Test(pycode, pyenv_3_8, .timeout = 60) { check_pyenv(8); }
Test(pycode, pyenv_3_9, .timeout = 60) { check_pyenv(9); }
Test(pycode, pyenv_3_10, .timeout = 60) { check_pyenv(10); }
Test(pycode, pyenv_3_11, .timeout = 60) { check_pyenv(11); }
Test(pycode, pyenv_3_12, .timeout = 60) { check_pyenv(12); }
Test(pycode, pyenv_3_13, .timeout = 60) { check_pyenv(13); }

/* Debian's: the interpreter linked into the executable, stripped of DWARF. */
Test(pycode, debian_python3_11, .timeout = 60)
{
	if (access("/usr/bin/python3", X_OK) || access("/usr/bin/python3.11", R_OK))
		cr_skip_test("no /usr/bin/python3 (Debian's 3.11)");
	check_python("/usr/bin/python3", "/usr/bin/python3.11", 11);
}
