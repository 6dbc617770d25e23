// SPDX-License-Identifier: MIT
/*
 * test_pylayout.c - CPython's struct offsets (symbolize/pylayout.h): every
 * table entry against the DWARF of real CPython builds, and the parser of
 * 3.13's _Py_DebugOffsets against hostile blocks.
 *
 * The builds are pyenv's (`pyenv root`/versions/3.X.Y, whose
 * lib/libpython3.X.so.1.0 carries DWARF): each installed 3.X.Y is checked
 * member by member, read with libdw (struct members' DW_AT_data_member_location,
 * bit-fields' DW_AT_data_bit_offset, enumerators' DW_AT_const_value),
 * and what the table says a version lacks must be missing from its DWARF.
 * A minor version with no build installed is a skip that names it. The
 * same files go through the detection (pyruntime.h): its version against
 * the build's directory name, its addresses against nm; and 3.7 and 3.6
 * builds, when there are some, must be refused (3.7, named) or not be
 * runtimes at all (3.6).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/pylayout.h"
#include "symbolize/pyruntime.h"
#include "tests/unit/test_nm.h"
#include "tests/unit/test_pylayout.h"

/* ---- DWARF, read with libdw ---- */

/* die through typedefs and qualifiers to the type itself. */
static bool strip_type(Dwarf_Die *die)
{
	for (;;) {
		int tag = dwarf_tag(die);
		Dwarf_Attribute a;

		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type &&
		    tag != DW_TAG_atomic_type)
			return true;
		if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, die))
			return false;
	}
}

static bool is_complete_struct(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return (tag == DW_TAG_structure_type || tag == DW_TAG_union_type) &&
	       !dwarf_hasattr(die, DW_AT_declaration) && dwarf_haschildren(die);
}

/*
 * The complete definition of the type called name at the top of some unit:
 * a struct tag, or a typedef of a struct (the struct may be complete only
 * in other units, found then by its tag).
 */
static bool find_type(Dwarf *dw, const char *name, Dwarf_Die *out)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	char tag_name[128] = "";

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, die;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &die) == 0) {
			do {
				const char *n = dwarf_diename(&die);
				Dwarf_Die t = die;

				if (!n || strcmp(n, name))
					continue;
				if (dwarf_tag(&die) == DW_TAG_typedef && strip_type(&t)) {
					if (is_complete_struct(&t)) {
						*out = t;
						return true;
					}
					if (dwarf_diename(&t))
						snprintf(tag_name, sizeof(tag_name), "%s", dwarf_diename(&t));
				} else if (is_complete_struct(&die)) {
					*out = die;
					return true;
				}
			} while (dwarf_siblingof(&die, &die) == 0);
		}
		off = next;
	}
	return tag_name[0] && strcmp(tag_name, name) && find_type(dw, tag_name, out);
}

/* The member called name of struct st, or false. */
static bool find_member(Dwarf_Die *st, const char *name, Dwarf_Die *out)
{
	Dwarf_Die m;

	if (dwarf_child(st, &m))
		return false;
	do {
		const char *n = dwarf_diename(&m);

		if (dwarf_tag(&m) == DW_TAG_member && n && !strcmp(n, name)) {
			*out = m;
			return true;
		}
	} while (dwarf_siblingof(&m, &m) == 0);
	return false;
}

/* A member's type, completed from another unit when it is only declared here. */
static bool member_type(Dwarf *dw, Dwarf_Die *m, Dwarf_Die *out)
{
	Dwarf_Attribute a;
	const char *n;

	if (!dwarf_attr_integrate(m, DW_AT_type, &a) || !dwarf_formref_die(&a, out) ||
	    !strip_type(out))
		return false;
	if (is_complete_struct(out) || dwarf_tag(out) != DW_TAG_structure_type)
		return true;
	n = dwarf_diename(out);
	return n && find_type(dw, n, out);
}

/*
 * The byte offset of the member path "a.b" in type tname, -1 when the type
 * or a member is missing; *last gets the last member's DIE.
 */
static long member_offset(Dwarf *dw, const char *tname, const char *path, Dwarf_Die *last)
{
	char buf[128], *save = NULL;
	Dwarf_Die st, m;
	long total = 0;

	if (!find_type(dw, tname, &st))
		return -1;
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = strtok_r(buf, ".", &save); p; p = strtok_r(NULL, ".", &save)) {
		Dwarf_Attribute a;
		Dwarf_Word loc;

		if (!find_member(&st, p, &m))
			return -1;
		cr_assert(dwarf_attr(&m, DW_AT_data_member_location, &a) &&
			  dwarf_formudata(&a, &loc) == 0, "%s.%s: no constant location", tname, p);
		total += (long)loc;
		if (!member_type(dw, &m, &st))
			cr_assert(!strtok_r(NULL, ".", &save), "%s.%s: no type", tname, p);
	}
	if (last)
		*last = m;
	return total;
}

static long type_size(Dwarf *dw, const char *tname)
{
	Dwarf_Die st;

	return find_type(dw, tname, &st) ? dwarf_bytesize(&st) : -1;
}

/* The bit offset of bit-field bits inside PyASCIIObject.state's struct. */
static long state_bit(Dwarf *dw, const char *bits)
{
	Dwarf_Die state, st, m;
	Dwarf_Attribute a;
	Dwarf_Word v;

	cr_assert_geq(member_offset(dw, "PyASCIIObject", "state", &state), 0);
	cr_assert(member_type(dw, &state, &st));
	cr_assert(find_member(&st, bits, &m), "no state.%s", bits);
	cr_assert(dwarf_attr(&m, DW_AT_data_bit_offset, &a) && dwarf_formudata(&a, &v) == 0,
		  "state.%s: no DW_AT_data_bit_offset (DWARF 4+)", bits);
	return (long)v;
}

/* The value of the enumerator called name in some unit's enumeration, or -1. */
static long enumerator(Dwarf *dw, const char *name)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, die, e;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &die) == 0) {
			do {
				if (dwarf_tag(&die) != DW_TAG_enumeration_type || dwarf_child(&die, &e))
					continue;
				do {
					const char *n = dwarf_diename(&e);
					Dwarf_Attribute a;
					Dwarf_Sword v;

					if (n && !strcmp(n, name) &&
					    dwarf_attr(&e, DW_AT_const_value, &a) &&
					    dwarf_formsdata(&a, &v) == 0)
						return (long)v;
				} while (dwarf_siblingof(&e, &e) == 0);
			} while (dwarf_siblingof(&die, &die) == 0);
		}
		off = next;
	}
	return -1;
}

/* ---- what the table must say, per field and version ---- */

enum check_kind {
	MEMBER,		/* the member's offset (NONE: the member does not exist) */
	SIZEOF,		/* the type's size */
	ENUMERATOR,	/* the enumerator's value (NONE: no such enumerator) */
};

#define FIELD(f) offsetof(struct py_layout, f), sizeof(((struct py_layout *)0)->f), #f

static const struct check {
	size_t at, width;
	const char *field;
	unsigned int from, to;	/* the minor versions this row is for */
	enum check_kind kind;
	const char *type, *member;
} checks[] = {
	{ FIELD(runtime_interpreters_head), 8, 13, MEMBER, "_PyRuntimeState", "interpreters.head" },
	{ FIELD(interp_next), 8, 13, MEMBER, "PyInterpreterState", "next" },
	{ FIELD(interp_threads_head), 8, 10, MEMBER, "PyInterpreterState", "tstate_head" },
	{ FIELD(interp_threads_head), 11, 13, MEMBER, "PyInterpreterState", "threads.head" },
	{ FIELD(tstate_next), 8, 13, MEMBER, "PyThreadState", "next" },
	{ FIELD(tstate_thread_id), 8, 13, MEMBER, "PyThreadState", "thread_id" },
	{ FIELD(tstate_native_thread_id), 8, 13, MEMBER, "PyThreadState", "native_thread_id" },
	{ FIELD(tstate_frame), 8, 10, MEMBER, "PyThreadState", "frame" },
	{ FIELD(tstate_frame), 11, 12, MEMBER, "PyThreadState", "cframe" },
	{ FIELD(tstate_frame), 13, 13, MEMBER, "PyThreadState", "current_frame" },
	{ FIELD(cframe_current_frame), 8, 13, MEMBER, "_PyCFrame", "current_frame" },
	{ FIELD(frame_previous), 8, 10, MEMBER, "PyFrameObject", "f_back" },
	{ FIELD(frame_code), 8, 10, MEMBER, "PyFrameObject", "f_code" },
	{ FIELD(frame_instr), 8, 10, MEMBER, "PyFrameObject", "f_lasti" },
	{ FIELD(frame_previous), 11, 13, MEMBER, "_PyInterpreterFrame", "previous" },
	{ FIELD(frame_code), 11, 12, MEMBER, "_PyInterpreterFrame", "f_code" },
	{ FIELD(frame_code), 13, 13, MEMBER, "_PyInterpreterFrame", "f_executable" },
	{ FIELD(frame_instr), 11, 12, MEMBER, "_PyInterpreterFrame", "prev_instr" },
	{ FIELD(frame_instr), 13, 13, MEMBER, "_PyInterpreterFrame", "instr_ptr" },
	/* 3.11 has owners but no shim frames: the walker needs no owner there. */
	{ FIELD(frame_owner), 8, 11, ENUMERATOR, NULL, "FRAME_OWNED_BY_CSTACK" },
	{ FIELD(frame_owner), 12, 13, MEMBER, "_PyInterpreterFrame", "owner" },
	{ FIELD(frame_owner_cstack), 12, 13, ENUMERATOR, NULL, "FRAME_OWNED_BY_CSTACK" },
	{ FIELD(code_name), 8, 13, MEMBER, "PyCodeObject", "co_name" },
	{ FIELD(code_qualname), 8, 13, MEMBER, "PyCodeObject", "co_qualname" },
	{ FIELD(code_filename), 8, 13, MEMBER, "PyCodeObject", "co_filename" },
	{ FIELD(code_firstlineno), 8, 13, MEMBER, "PyCodeObject", "co_firstlineno" },
	{ FIELD(code_lines), 8, 9, MEMBER, "PyCodeObject", "co_lnotab" },
	{ FIELD(code_lines), 10, 13, MEMBER, "PyCodeObject", "co_linetable" },
	{ FIELD(code_adaptive), 8, 13, MEMBER, "PyCodeObject", "co_code_adaptive" },
	{ FIELD(object_type), 8, 13, MEMBER, "PyObject", "ob_type" },
	{ FIELD(var_size), 8, 13, MEMBER, "PyVarObject", "ob_size" },
	{ FIELD(bytes_data), 8, 13, MEMBER, "PyBytesObject", "ob_sval" },
	{ FIELD(unicode_length), 8, 13, MEMBER, "PyASCIIObject", "length" },
	{ FIELD(unicode_state), 8, 13, MEMBER, "PyASCIIObject", "state" },
	{ FIELD(unicode_ascii_data), 8, 13, SIZEOF, "PyASCIIObject", NULL },
	{ FIELD(unicode_compact_data), 8, 13, SIZEOF, "PyCompactUnicodeObject", NULL },
};

static uint64_t field_value(const struct py_layout *l, const struct check *c)
{
	const char *p = (const char *)l + c->at;

	return c->width == 1 ? *(const uint8_t *)p : *(const uint32_t *)p;
}

/* Every row of checks[] for 3.minor, and what DWARF says of the rest. */
static void check_against_dwarf(Dwarf *dw, const struct py_layout *l, const char *what)
{
	unsigned int minor = l->minor;
	Dwarf_Die instr;

	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		const struct check *c = &checks[i];
		uint64_t got = field_value(l, c);
		long want;

		if (minor < c->from || minor > c->to)
			continue;
		switch (c->kind) {
		case MEMBER:
			want = member_offset(dw, c->type, c->member, NULL);
			break;
		case SIZEOF:
			want = type_size(dw, c->type);
			cr_assert_geq(want, 0, "%s: no type %s", what, c->type);
			break;
		default:
			want = enumerator(dw, c->member);
			break;
		}
		if (c->kind == ENUMERATOR && c->width == 1) {
			cr_expect_eq(got, (uint64_t)want, "%s: %s is %llu, DWARF %s = %ld", what,
				     c->field, (unsigned long long)got, c->member, want);
		} else if (want < 0) {
			cr_expect_eq(got, PY_LAYOUT_NONE, "%s: %s is %llu, DWARF has no %s.%s", what,
				     c->field, (unsigned long long)got, c->type ? c->type : "",
				     c->member);
		} else if (c->kind == ENUMERATOR) {
			cr_expect_neq(got, PY_LAYOUT_NONE, "%s: %s is none, DWARF has %s", what,
				      c->field, c->member);
		} else {
			cr_expect_eq(got, (uint64_t)want, "%s: %s is %llu, DWARF %s.%s at %ld", what,
				     c->field, (unsigned long long)got, c->type,
				     c->member ? c->member : "(size)", want);
		}
	}
	/* Where a frame is: an int index before 3.11, a pointer after. */
	cr_assert_geq(member_offset(dw, minor < 11 ? "PyFrameObject" : "_PyInterpreterFrame",
				    minor < 11 ? "f_lasti" : minor < 13 ? "prev_instr" : "instr_ptr",
				    &instr), 0);
	{
		Dwarf_Attribute a;
		Dwarf_Die t;

		cr_assert(dwarf_attr_integrate(&instr, DW_AT_type, &a) && dwarf_formref_die(&a, &t) &&
			  strip_type(&t));
		cr_expect_eq(dwarf_tag(&t) == DW_TAG_pointer_type, l->instr_kind == PY_INSTR_CODE_PTR,
			     "%s: instr_kind %d", what, l->instr_kind);
	}
	cr_expect_eq(l->lines_kind == PY_LINES_LNOTAB,
		     member_offset(dw, "PyCodeObject", "co_lnotab", NULL) >= 0, "%s: lines_kind", what);
	cr_expect_eq(l->lines_kind == PY_LINES_LOCATIONS,
		     member_offset(dw, "PyCodeObject", "co_qualname", NULL) >= 0,
		     "%s: lines_kind (the location table came with co_qualname in 3.11)", what);
	cr_expect_eq(state_bit(dw, "kind"), PY_UNICODE_KIND_SHIFT, "%s", what);
	cr_expect_eq(state_bit(dw, "compact"), PY_UNICODE_COMPACT_BIT, "%s", what);
	cr_expect_eq(state_bit(dw, "ascii"), PY_UNICODE_ASCII_BIT, "%s", what);
}

/* ---- the pyenv builds ---- */

/* The checks of one build: versions/3.<minor>.<micro> under root. */
static void check_build(const char *root, unsigned int minor, unsigned int micro)
{
	char lib[PATH_MAX], exe[PATH_MAX], what[64];
	const struct py_layout *table = py_layout_table(3, minor);
	struct py_runtime_info rt;
	struct py_layout l;
	Dwarf *dw;
	Elf *elf;
	int fd;

	snprintf(what, sizeof(what), "CPython 3.%u.%u", minor, micro);
	snprintf(lib, sizeof(lib), "%s/versions/3.%u.%u/lib/libpython3.%u.so.1.0", root, minor, micro,
		 minor);
	snprintf(exe, sizeof(exe), "%s/versions/3.%u.%u/bin/python3.%u", root, minor, micro, minor);
	cr_assert_not_null(table, "no table entry for 3.%u", minor);

	cr_assert_eq(elf_open_path(lib, &fd, &elf), 0, "%s", lib);
	cr_assert_eq(py_runtime_detect(elf, &rt), 0, "%s", lib);
	cr_expect_eq(rt.major, 3, "%s", what);
	cr_expect_eq(rt.minor, minor, "%s", what);
	cr_expect_eq(rt.micro_known, minor >= 11, "%s", what);
	if (minor >= 11)
		cr_expect_eq(rt.micro, micro, "%s: micro %u", what, rt.micro);
	expect_runtime_symbols(lib, &rt);
	/* For 3.13 what the file publishes, which must be the table's. */
	cr_assert_eq(py_runtime_layout(elf, &rt, &l), 0, "%s", what);
	expect_layout_eq(&l, table, what);

	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	cr_assert_not_null(dw, "%s: no DWARF in %s", what, lib);
	check_against_dwarf(dw, table, what);
	if (minor == 13) {
		cr_expect_eq(type_size(dw, "_Py_DebugOffsets"), PY_DEBUG_OFFSETS_313_SIZE);
		check_against_dwarf(dw, &l, "published by CPython 3.13");
	}
	cr_expect_eq(type_size(dw, "_PyRuntimeState"), (long)rt.runtime_size, "%s", what);
	dwarf_end(dw);
	elf_end(elf);
	close(fd);

	/* The executable only calls into libpython: no runtime of its own. */
	if (access(exe, R_OK) == 0) {
		cr_assert_eq(elf_open_path(exe, &fd, &elf), 0, "%s", exe);
		cr_expect_eq(py_runtime_detect(elf, &rt), -ENOENT, "%s", exe);
		elf_end(elf);
		close(fd);
	}
}

static void check_minor(unsigned int minor)
{
	for_each_build(minor, "", check_build);
}

/* Before 3.8: 3.7 has a _PyRuntime but no layout here, 3.6 no _PyRuntime. */
static void check_old_build(const char *root, unsigned int minor, unsigned int micro)
{
	char lib[PATH_MAX];
	struct py_runtime_info rt;
	Elf *elf;
	int fd;

	snprintf(lib, sizeof(lib), "%s/versions/3.%u.%u/lib/libpython3.%um.so.1.0", root, minor, micro,
		 minor);
	cr_assert_eq(elf_open_path(lib, &fd, &elf), 0, "%s", lib);
	cr_expect_eq(py_runtime_detect(elf, &rt), minor == 7 ? -EOPNOTSUPP : -ENOENT, "%s", lib);
	if (minor == 7)
		cr_expect(rt.major == 3 && rt.minor == 7, "%s: 3.%u", lib, rt.minor);
	elf_end(elf);
	close(fd);
}

TestSuite(pylayout);

Test(pylayout, dwarf_3_8) { check_minor(8); }
Test(pylayout, dwarf_3_9) { check_minor(9); }
Test(pylayout, dwarf_3_10) { check_minor(10); }
Test(pylayout, dwarf_3_11) { check_minor(11); }
Test(pylayout, dwarf_3_12) { check_minor(12); }
Test(pylayout, dwarf_3_13) { check_minor(13); }
Test(pylayout, refused_3_7) { for_each_build(7, "m", check_old_build); }
Test(pylayout, no_runtime_3_6) { for_each_build(6, "m", check_old_build); }

Test(pylayout, table_has_3_8_to_3_13_only)
{
	cr_expect_null(py_layout_table(3, 7));
	cr_expect_null(py_layout_table(3, 14));
	cr_expect_null(py_layout_table(2, 8));
	for (unsigned int minor = 8; minor <= 13; minor++) {
		const struct py_layout *l = py_layout_table(3, minor);

		cr_assert_not_null(l, "3.%u", minor);
		cr_expect_eq(l->major, 3);
		cr_expect_eq(l->minor, minor);
	}
}

/* ---- _Py_DebugOffsets from hostile bytes ---- */

/* Word i of a 3.13 block (0: the version; the cookie comes before). */
#define WORD(i) (8 + 8 * (i))
/* Word indexes of 3.13's _Py_DebugOffsets. */
enum {
	W_VERSION = 0, W_FREE_THREADED = 1, W_RUNTIME_SIZE = 2, W_INTERPRETERS_HEAD = 4,
	W_INTERP_SIZE = 5, W_THREADS_HEAD = 8, W_TSTATE_SIZE = 18, W_TSTATE_NEXT = 20,
	W_FRAME_SIZE = 27, W_FRAME_OWNER = 32, W_CODE_SIZE = 33, W_CODE_ADAPTIVE = 42,
	W_OBJECT_SIZE = 43, W_UNICODE_SIZE = 66, W_UNICODE_STATE = 67, W_UNICODE_ASCII = 69,
};

/* 3.13.0's block as its release publishes it (as in the fixture libpy_fake313.so). */
static const uint64_t block_313[72] = {
	0x030d00f0, 0,
	283320, 608, 632,
	194968, 7272, 7264, 7344, 7400, 7656, 7640, 7648, 16, 7752, 0, 7768, 7760,
	304, 0, 8, 16, 72, 152, 160, 232, 32,
	80, 8, 0, 56, 72, 70,
	208, 112, 120, 128, 136, 68, 52, 96, 104, 200,
	16, 8,
	416, 24, 88, 168,
	32, 24, 16,
	40, 24, 16,
	48, 32, 40,
	24, 16,
	32, 16, 24,
	40, 16, 32,
	64, 32, 16, 40,
	240, 200,
};

static void make_block(unsigned char *buf)
{
	memcpy(buf, "xdebugpy", 8);
	memcpy(buf + 8, block_313, sizeof(block_313));
}

static void set_word(unsigned char *buf, int i, uint64_t v)
{
	memcpy(buf + WORD(i), &v, 8);
}

static int parse(const unsigned char *buf, struct py_layout *l)
{
	return py_layout_from_debug_offsets(buf, PY_DEBUG_OFFSETS_313_SIZE, 0, 0, l);
}

Test(pylayout, debug_offsets_of_3_13_0_are_the_table)
{
	unsigned char buf[PY_DEBUG_OFFSETS_313_SIZE];
	struct py_layout l;

	make_block(buf);
	cr_assert_eq(py_layout_from_debug_offsets(buf, sizeof(buf), 0x030d00f0, 283320, &l), 0);
	expect_layout_eq(&l, py_layout_table(3, 13), "3.13.0's block");
	/* Any later 3.13 release: the same layout, whatever offsets it publishes. */
	set_word(buf, W_VERSION, 0x030d07f0);
	set_word(buf, W_TSTATE_NEXT, 16);
	cr_assert_eq(parse(buf, &l), 0);
	cr_expect_eq(l.tstate_next, 16);
}

Test(pylayout, debug_offsets_refuse_what_is_not_3_13_final)
{
	unsigned char buf[PY_DEBUG_OFFSETS_313_SIZE];
	struct py_layout l;

	make_block(buf);
	cr_expect_eq(py_layout_from_debug_offsets(buf, sizeof(buf) - 1, 0, 0, &l), -EINVAL);
	buf[7] = 'z';
	cr_expect_eq(parse(buf, &l), -EINVAL, "cookie");
	make_block(buf);
	set_word(buf, W_VERSION, 0x030e00f0);
	cr_expect_eq(parse(buf, &l), -EOPNOTSUPP, "3.14");
	set_word(buf, W_VERSION, 0x030d00c2);
	cr_expect_eq(parse(buf, &l), -EOPNOTSUPP, "3.13.0rc2");
	set_word(buf, W_VERSION, 0x1030d00f0ull);
	cr_expect_eq(parse(buf, &l), -EINVAL, "a version wider than PY_VERSION_HEX");
	make_block(buf);
	set_word(buf, W_FREE_THREADED, 1);
	cr_expect_eq(parse(buf, &l), -EOPNOTSUPP, "free-threaded");
	/* Not the bytes of the runtime the caller found. */
	make_block(buf);
	cr_expect_eq(py_layout_from_debug_offsets(buf, sizeof(buf), 0x030d01f0, 0, &l), -EINVAL);
	cr_expect_eq(py_layout_from_debug_offsets(buf, sizeof(buf), 0, 283328, &l), -EINVAL);
}

Test(pylayout, debug_offsets_stay_inside_their_structs)
{
	static const struct {
		int word;
		uint64_t value;
		const char *what;
	} bad[] = {
		{ W_INTERPRETERS_HEAD, 283320 - 7, "a pointer across the end of _PyRuntime" },
		{ W_INTERPRETERS_HEAD, UINT64_MAX - 3, "an offset that wraps" },
		{ W_RUNTIME_SIZE, 0, "a struct of no size" },
		{ W_INTERP_SIZE, 1ull << 40, "a struct of 1 TiB" },
		{ W_THREADS_HEAD, 194968, "an offset at the end" },
		{ W_TSTATE_SIZE, 8, "a thread state smaller than its offsets" },
		{ W_FRAME_OWNER, 80, "the owner byte past the frame" },
		{ W_FRAME_SIZE, 70, "a frame ending at its owner byte" },
		{ W_CODE_ADAPTIVE, 208, "bytecode after the code object" },
		{ W_CODE_SIZE, 100, "a code object smaller than its names" },
		{ W_UNICODE_ASCII, 20, "ASCII characters over the string's state" },
		{ W_UNICODE_STATE, 62, "the state word across the end of str" },
		{ W_UNICODE_SIZE, 24, "str smaller than its header" },
		{ W_OBJECT_SIZE, 48, "an object header longer than a string's" },
	};
	unsigned char buf[PY_DEBUG_OFFSETS_313_SIZE];
	struct py_layout l;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		make_block(buf);
		set_word(buf, bad[i].word, bad[i].value);
		cr_expect_eq(parse(buf, &l), -EINVAL, "%s", bad[i].what);
	}
	/* Each edge itself is fine: a pointer that ends where its struct ends. */
	make_block(buf);
	set_word(buf, W_INTERPRETERS_HEAD, 283320 - 8);
	cr_expect_eq(parse(buf, &l), 0);
	cr_expect_eq(l.runtime_interpreters_head, 283320 - 8);
}
