// SPDX-License-Identifier: MIT
/*
 * test_pyruntime.c - telling CPython runtimes in ELF files and their
 * versions (symbolize/pyruntime.h), and the ELF helpers it reads them with
 * (elf_for_each_symbol, elf_read_addr in symbolize/util.h).
 *
 * The fixtures libpy_fake313.so and libpy_fake310.so hold only what the
 * detection reads; copies of them patched in memory (a symbol renamed, a
 * constant changed) make each way it can refuse a file. Real files: Debian's
 * /usr/bin/python3.11 (the interpreter linked in, stripped; its version as
 * the interpreter itself prints it) and programs that are no Python.
 * Addresses come from nm, never from the library under test. The pyenv
 * builds, with their DWARF, are test_pylayout.c's.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/pyruntime.h"
#include "symbolize/util.h"
#include "tests/unit/test_fixture.h"
#include "tests/unit/test_nm.h"
#include "tests/unit/test_pylayout.h"

#define DEBIAN_PYTHON "/usr/bin/python3.11"

/* A file's bytes, to patch before looking at them. */
struct image {
	char *data;
	size_t len;
};

static struct image load(const char *path)
{
	struct image im;

	cr_assert_eq(read_whole_file(path, &im.data, &im.len), 0, "%s", path);
	return im;
}

/* Replace every occurrence of the n bytes from with to; how many there were. */
static int patch(struct image *im, const void *from, const void *to, size_t n)
{
	int count = 0;

	for (size_t i = 0; i + n <= im->len; i++) {
		if (!memcmp(im->data + i, from, n)) {
			memcpy(im->data + i, to, n);
			count++;
		}
	}
	return count;
}

/*
 * Rename symbol name (in .dynstr, .strtab and DWARF's strings) to to, of
 * the same length, or when to is NULL to name with its first letter changed.
 */
static void rename_symbol(struct image *im, const char *name, const char *to)
{
	char a[64], b[64];
	size_t n = strlen(name) + 2;

	cr_assert_lt(n, sizeof(a));
	cr_assert(!to || strlen(to) == strlen(name));
	/* With both NULs: a name that ends another one is not touched. */
	snprintf(a, sizeof(a), "%c%s", '\0', name);
	snprintf(b, sizeof(b), "%c%s", '\0', to ? to : name);
	if (!to)
		b[1] = b[1] == 'Q' ? 'R' : 'Q';
	cr_assert_geq(patch(im, a, b, n), 1, "no symbol %s", name);
}

/* The detection of an image, opened from a memfd as any file would be. */
static int detect_image(const struct image *im, struct py_runtime_info *rt, struct py_layout *l,
			int *layout_err)
{
	int fd = memfd_create("pyruntime", MFD_CLOEXEC);
	Elf *elf;
	int err;

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, im->data, im->len), (ssize_t)im->len);
	cr_assert_eq(elf_open_fd(fd, &elf), 0);
	err = py_runtime_detect(elf, rt);
	if (layout_err)
		*layout_err = err ? err : py_runtime_layout(elf, rt, l);
	elf_end(elf);
	close(fd);
	return err;
}

static int detect_path(const char *path, struct py_runtime_info *rt, struct py_layout *l,
		       int *layout_err)
{
	struct image im = load(path);
	int err = detect_image(&im, rt, l, layout_err);

	free(im.data);
	return err;
}

/* The detection of fixture fix with its symbol name renamed as rename_symbol() does. */
static int detect_renamed(const char *fix, const char *name, const char *to,
			  struct py_runtime_info *rt)
{
	struct image im = load(fixture(fix));
	int err;

	rename_symbol(&im, name, to);
	err = detect_image(&im, rt, NULL, NULL);
	free(im.data);
	return err;
}

/*
 * The fake runtimes: 3.13 says its micro version (and hexversion), 3.10
 * does not; each publishes the table's offsets for its release.
 */
static const struct {
	const char *fixture, *name;
	int minor;
	bool micro_known;
	uint64_t hexversion, runtime_size;
} fakes[] = {
	{ "libpy_fake313.so", "fake 3.13", 13, true, 0x030d00f0, 1024 },
	{ "libpy_fake310.so", "fake 3.10", 10, false, 0, 672 },
};

Test(pyruntime, fakes_are_their_release_with_the_published_layout)
{
	for (size_t i = 0; i < sizeof(fakes) / sizeof(fakes[0]); i++) {
		const char *path = fixture(fakes[i].fixture), *name = fakes[i].name;
		struct py_runtime_info rt;
		struct py_layout l;
		int lerr;

		cr_assert_eq(detect_path(path, &rt, &l, &lerr), 0, "%s", name);
		cr_expect_eq(rt.major, 3, "%s", name);
		cr_expect_eq(rt.minor, fakes[i].minor, "%s", name);
		cr_expect_eq(rt.micro, 0, "%s", name);
		cr_expect_eq(rt.micro_known, fakes[i].micro_known, "%s", name);
		cr_expect_eq(rt.hexversion, fakes[i].hexversion, "%s", name);
		expect_runtime_symbols(path, &rt);
		cr_expect_eq(rt.runtime_size, fakes[i].runtime_size, "%s", name);
		cr_assert_eq(lerr, 0, "%s", name);
		expect_layout_eq(&l, py_layout_table(3, fakes[i].minor), name);
	}
}

/* Without the function a release added, the file is the release before. */
Test(pyruntime, api_functions_date_the_old_releases)
{
	struct image im = load(fixture("libpy_fake310.so"));
	struct py_runtime_info rt;
	struct py_layout l;
	int lerr;

	rename_symbol(&im, "Py_NewRef", NULL);
	cr_assert_eq(detect_image(&im, &rt, &l, &lerr), 0);
	cr_expect_eq(rt.minor, 9);
	cr_assert_eq(lerr, 0);
	expect_layout_eq(&l, py_layout_table(3, 9), "fake 3.9");

	rename_symbol(&im, "PyFrame_GetCode", NULL);
	cr_assert_eq(detect_image(&im, &rt, &l, &lerr), 0);
	cr_expect_eq(rt.minor, 8);
	cr_assert_eq(lerr, 0);
	expect_layout_eq(&l, py_layout_table(3, 8), "fake 3.8");

	/* 3.7: a runtime, but no layout for it. */
	rename_symbol(&im, "Py_BytesMain", NULL);
	cr_expect_eq(detect_image(&im, &rt, NULL, NULL), -EOPNOTSUPP);
	cr_expect_eq(rt.major, 3);
	cr_expect_eq(rt.minor, 7);
	free(im.data);
}

Test(pyruntime, api_functions_out_of_order_are_refused)
{
	struct py_runtime_info rt;

	/* Py_NewRef (3.10) without PyFrame_GetCode (3.9): no release is like that. */
	cr_expect_eq(detect_renamed("libpy_fake310.so", "PyFrame_GetCode", NULL, &rt), -EINVAL);
	cr_expect_eq(detect_renamed("libpy_fake313.so", "Py_NewRef", NULL, &rt), -EINVAL,
		     "Py_Version without Py_NewRef");
}

Test(pyruntime, no_runtime_is_no_python)
{
	struct py_runtime_info rt;

	cr_expect_eq(detect_renamed("libpy_fake310.so", "_PyRuntime", NULL, &rt), -ENOENT);
	cr_expect_eq(detect_path("/bin/true", &rt, NULL, NULL), -ENOENT);
	cr_expect_eq(detect_path(fixture("sym_target"), &rt, NULL, NULL), -ENOENT);
}

Test(pyruntime, trace_refs_builds_are_refused)
{
	struct py_runtime_info rt;

	/* Their objects have two more pointers in front: no layout holds. */
	cr_expect_eq(detect_renamed("libpy_fake310.so", "_Py_PrintReferencez",
				    "_Py_PrintReferences", &rt), -EOPNOTSUPP);
	cr_expect_eq(rt.minor, 10);
}

/*
 * The 8 bytes of Py_Version's value, 0x030d00f0, stand twice in the fake
 * 3.13: in .rodata (Py_Version) and, later in the file, in .data (the
 * version word of the debug block).
 */
static void patch_version(struct image *im, int which, uint64_t to)
{
	const uint64_t from = 0x030d00f0;
	int seen = 0;

	for (size_t i = 0; i + 8 <= im->len; i++) {
		if (memcmp(im->data + i, &from, 8))
			continue;
		if (seen++ == which)
			memcpy(im->data + i, &to, 8);
	}
	cr_assert_eq(seen, 2);
}

Test(pyruntime, py_version_says_the_version)
{
	static const struct {
		uint64_t hex;
		int err;
		unsigned minor;
	} cases[] = {
		{ 0x030e00f0, -EOPNOTSUPP, 14 },	/* 3.14: no layout here */
		{ 0x030a00f0, -EINVAL, 10 },		/* Py_Version came with 3.11 */
		{ 0x020b00f0, -EINVAL, 11 },		/* Python 2 */
	};
	struct py_runtime_info rt;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct image im = load(fixture("libpy_fake313.so"));

		patch_version(&im, 0, cases[i].hex);
		cr_expect_eq(detect_image(&im, &rt, NULL, NULL), cases[i].err, "%#llx",
			     (unsigned long long)cases[i].hex);
		cr_expect_eq(rt.minor, cases[i].minor);
		free(im.data);
	}
}

Test(pyruntime, debug_block_in_the_file_is_checked)
{
	struct py_runtime_info rt;
	struct py_layout l;
	struct image im;
	int lerr;

	/* Another micro version in the block than in Py_Version: not this runtime's. */
	im = load(fixture("libpy_fake313.so"));
	patch_version(&im, 1, 0x030d01f0);
	cr_assert_eq(detect_image(&im, &rt, &l, &lerr), 0);
	cr_expect_eq(lerr, -EINVAL);
	free(im.data);

	im = load(fixture("libpy_fake313.so"));
	cr_assert_eq(patch(&im, "xdebugpy", "xdebugpz", 8), 1);
	cr_assert_eq(detect_image(&im, &rt, &l, &lerr), 0);
	cr_expect_eq(lerr, -EINVAL);
	free(im.data);
}

Test(pyruntime, debian_python_is_311)
{
	struct py_runtime_info rt;
	struct py_layout l;
	unsigned long hex = 0;
	int lerr;
	FILE *p;

	if (access(DEBIAN_PYTHON, R_OK))
		cr_skip_test("no %s here", DEBIAN_PYTHON);
	cr_assert_eq(detect_path(DEBIAN_PYTHON, &rt, &l, &lerr), 0);
	cr_expect_eq(rt.major, 3);
	cr_expect_eq(rt.minor, 11);
	/* The version as the interpreter itself tells it. */
	p = popen(DEBIAN_PYTHON " -S -c 'import sys; print(sys.hexversion)'", "r");
	cr_assert(p);
	cr_assert_eq(fscanf(p, "%lu", &hex), 1);
	cr_assert_eq(pclose(p), 0);
	cr_expect_eq(rt.hexversion, hex);
	cr_expect(rt.micro_known);
	cr_expect_eq(rt.micro, hex >> 8 & 0xff);
	/* Stripped: only its dynamic symbols tell where. */
	expect_runtime_symbols(DEBIAN_PYTHON, &rt);
	cr_assert_eq(lerr, 0);
	expect_layout_eq(&l, py_layout_table(3, 11), DEBIAN_PYTHON);
}

static int count_symbol(const GElf_Sym *sym, const char *name, void *ctx)
{
	(void)sym;
	(void)name;
	++*(int *)ctx;
	return 0;
}

static int find_symbol(const GElf_Sym *sym, const char *name, void *ctx)
{
	(void)ctx;
	return !strcmp(name, "Py_NewRef") && GELF_ST_TYPE(sym->st_info) == STT_FUNC ? 7 : 0;
}

Test(pyruntime, symbols_visited_until_the_callback_stops)
{
	Elf *elf;
	int fd, count = 0;

	cr_assert_eq(elf_open_path(fixture("libpy_fake310.so"), &fd, &elf), 0);
	cr_expect_eq(elf_for_each_symbol(elf, SHT_DYNSYM, count_symbol, &count), 0);
	/* Defined ones only: the fixture's own, not libc's it imports. */
	cr_expect_geq(count, 6);
	cr_expect_eq(elf_for_each_symbol(elf, SHT_DYNSYM, find_symbol, NULL), 7);
	cr_expect_eq(elf_for_each_symbol(elf, SHT_SYMTAB, find_symbol, NULL), 7);
	elf_end(elf);
	close(fd);
}

Test(pyruntime, read_addr_reads_the_file_bytes_only)
{
	const char *p313 = fixture("libpy_fake313.so");
	uint64_t addr, size, word;
	char cookie[8];
	Elf *elf;
	int fd;

	nm_symbol_of(p313, true, "Py_Version", &addr, &size);
	cr_assert_eq(elf_open_path(p313, &fd, &elf), 0);
	cr_expect_eq(elf_read_addr(elf, addr, &word, sizeof(word)), 0);
	cr_expect_eq(word, 0x030d00f0);
	nm_symbol_of(p313, true, "_PyRuntime", &addr, &size);
	cr_expect_eq(elf_read_addr(elf, addr, cookie, sizeof(cookie)), 0);
	cr_expect_eq(memcmp(cookie, "xdebugpy", 8), 0);
	/* Past every segment, and wrapping around. */
	cr_expect_eq(elf_read_addr(elf, UINT64_MAX - 3, &word, sizeof(word)), -ENOENT);
	cr_expect_eq(elf_read_addr(elf, addr, &word, SIZE_MAX), -ENOENT);
	elf_end(elf);
	close(fd);

	/* A .bss object: memory, not file bytes. */
	nm_symbol_of(fixture("libpy_fake310.so"), true, "_PyRuntime", &addr, &size);
	cr_assert_eq(elf_open_path(fixture("libpy_fake310.so"), &fd, &elf), 0);
	cr_expect_eq(elf_read_addr(elf, addr, &word, sizeof(word)), -ENOENT);
	elf_end(elf);
	close(fd);
}
