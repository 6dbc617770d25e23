// SPDX-License-Identifier: MIT
/*
 * test_cfiscan.c - the check that keeps libdw's CFA interpreter in bounded
 * memory (symbolize/cfiscan.h).
 *
 * Each test takes Debian's libc, which the recorder builds a table for in
 * every recording, rewrites the instructions of one of its FDEs in memory
 * and hands the copy to the table builder through a memfd, as the recorder
 * hands it a mapped file. The unchanged copy must build; each hostile
 * change must be refused before libdw runs it (without the check, the first
 * one makes libdw clear 2 GiB). The same copies without section headers
 * take libdw's other road to the CFI, through PT_GNU_EH_FRAME.
 */
#include <criterion/criterion.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/cfiscan.h"
#include "symbolize/cfitable.h"
#include "symbolize/util.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

struct image {
	char *buf;
	size_t len;
	size_t eh_off;		/* .eh_frame's file offset */
	size_t eh_size;
};

static void load(struct image *im)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	Elf *elf;

	cr_assert(read_whole_file(LIBC, &im->buf, &im->len) == 0, "cannot read %s", LIBC);
	elf_version(EV_CURRENT);
	elf = elf_memory(im->buf, im->len);
	cr_assert(elf && elf_getshdrstrndx(elf, &shstrndx) == 0);
	im->eh_size = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		cr_assert(gelf_getshdr(scn, &sh));
		if (!strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".eh_frame")) {
			im->eh_off = sh.sh_offset;
			im->eh_size = sh.sh_size;
		}
	}
	elf_end(elf);
	cr_assert(im->eh_size, "%s has no .eh_frame", LIBC);
}

/*
 * The instructions of the first FDE with at least min bytes of them whose
 * CIE is "zR" with pc-relative 4-byte addresses (what gcc emits for C):
 * initial location and range take 8 bytes, then a 1-byte augmentation length.
 */
static uint8_t *fde_program(struct image *im, size_t min, size_t *len)
{
	Elf_Data d = { .d_buf = im->buf + im->eh_off, .d_size = im->eh_size };
	unsigned char ident[EI_NIDENT];
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e, cie;

	memcpy(ident, im->buf, sizeof(ident));
	while (dwarf_next_cfi(ident, &d, true, off, &next, &e) == 0) {
		off = next;
		if (dwarf_cfi_cie_p(&e))
			continue;
		cr_assert(dwarf_next_cfi(ident, &d, true, e.fde.CIE_pointer, &next, &cie) == 0);
		if (strcmp(cie.cie.augmentation, "zR") || cie.cie.augmentation_data[0] != 0x1b)
			continue;
		const uint8_t *p = e.fde.start + 8;

		if (*p != 0 || (size_t)(e.fde.end - p - 1) < min)
			continue;
		*len = (size_t)(e.fde.end - p - 1);
		return (uint8_t *)p + 1;
	}
	cr_assert_fail("no FDE of %s has %zu bytes of instructions", LIBC, min);
	return NULL;
}

/* Fill an FDE's program with ops then nops (nop is 0: a program may end in them). */
static void rewrite(uint8_t *prog, size_t len, const uint8_t *ops, size_t n)
{
	cr_assert(n <= len);
	memset(prog, DW_CFA_nop, len);
	if (n)
		memcpy(prog, ops, n);
}

/* Make the copy look stripped of section headers, as the fuzz input that found the bug. */
static void drop_sections(struct image *im)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)im->buf;

	eh->e_shoff = 0;
	eh->e_shnum = 0;
	eh->e_shstrndx = 0;
}

/* cfi_scan() on the copy, and cfi_table_build_fd() through a memfd: both must agree. */
static int build_copy(const struct image *im)
{
	struct cfi_table *t = NULL;
	int fd = memfd_create("cfiscan", 0), err, scan;
	Elf *elf;

	cr_assert(fd >= 0);
	cr_assert(write(fd, im->buf, im->len) == (ssize_t)im->len);
	elf = elf_memory(im->buf, im->len);
	cr_assert(elf);
	scan = cfi_scan(elf);
	elf_end(elf);
	err = cfi_table_build_fd(fd, &t);
	close(fd);
	if (!err)
		cr_assert(t->nr > 0);
	cfi_table_free(t);
	cr_assert(scan == 0 || err == scan, "the scan said %d, the builder %d", scan, err);
	return err;
}

static void release(struct image *im)
{
	free(im->buf);
}

Test(cfiscan, real_file_builds_both_ways)
{
	struct image im;

	load(&im);
	cr_expect(build_copy(&im) == 0);
	drop_sections(&im);
	cr_expect(build_copy(&im) == 0, "libc without section headers: through PT_GNU_EH_FRAME");
	release(&im);
}

Test(cfiscan, register_numbers)
{
	/* DW_CFA_undefined with a ULEB register number. */
	static const struct {
		uint8_t ops[6];
		size_t n;
		int want;
	} cases[] = {
		{ { DW_CFA_undefined, 0x7f }, 2, 0 },			/* 127: allowed */
		{ { DW_CFA_undefined, 0x80, 0x01 }, 3, -EINVAL },	/* 128 */
		{ { DW_CFA_offset_extended, 0xff, 0xff, 0xff, 0x07, 0x01 }, 6, -EINVAL },
		{ { DW_CFA_register, 0x06, 0xc8, 0x01 }, 4, -EINVAL },	/* the second register */
		{ { DW_CFA_expression, 0xf0, 0x01, 0x01, 0x90 }, 5, -EINVAL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int stripped = 0; stripped < 2; stripped++) {
			struct image im;
			uint8_t *prog;
			size_t len;

			load(&im);
			prog = fde_program(&im, 8, &len);
			rewrite(prog, len, cases[i].ops, cases[i].n);
			if (stripped)
				drop_sections(&im);
			cr_expect(build_copy(&im) == cases[i].want, "case %zu%s: want %d", i,
				  stripped ? " without sections" : "", cases[i].want);
			release(&im);
		}
	}
}

Test(cfiscan, remember_state_depth)
{
	uint8_t ops[CFI_SCAN_MAX_DEPTH + 1];

	memset(ops, DW_CFA_remember_state, sizeof(ops));
	for (size_t n = CFI_SCAN_MAX_DEPTH; n <= CFI_SCAN_MAX_DEPTH + 1; n++) {
		struct image im;
		uint8_t *prog;
		size_t len;

		load(&im);
		prog = fde_program(&im, sizeof(ops), &len);
		rewrite(prog, len, ops, n);
		cr_expect(build_copy(&im) == (n > CFI_SCAN_MAX_DEPTH ? -EINVAL : 0),
			  "%zu nested remember_state", n);
		release(&im);
	}
}

Test(cfiscan, what_it_does_not_decode)
{
	static const uint8_t set_loc[] = { DW_CFA_set_loc, 0, 0, 0, 0 };
	static const uint8_t user_op[] = { DW_CFA_low_user };
	struct image im;
	uint8_t *prog;
	size_t len;

	load(&im);
	prog = fde_program(&im, 8, &len);
	rewrite(prog, len, set_loc, sizeof(set_loc));
	cr_expect(build_copy(&im) == -EINVAL, "DW_CFA_set_loc");
	rewrite(prog, len, user_op, sizeof(user_op));
	cr_expect(build_copy(&im) == -EINVAL, "an opcode libdw does not know");
	/* An expression longer than the FDE: the block would run past its end. */
	rewrite(prog, len, NULL, 0);
	prog[len - 2] = DW_CFA_def_cfa_expression;
	prog[len - 1] = 0x7f;
	cr_expect(build_copy(&im) == -EINVAL, "a block past the end of the FDE");
	release(&im);
}

static void count_pages(void *ctx)
{
	++*(unsigned long *)ctx;
}

/*
 * cfi_scan_opts.pages comes as the scan goes, about every
 * CFI_SCAN_PAGES_BYTES of CFI decoded (the table builder gives the file's
 * pages back there): Debian's libLLVM-14 (installed with clang) has 4.8 MB
 * of .eh_frame, which the scan reads in order and again by its search
 * table. The answer is cfi_scan()'s.
 */
Test(cfiscan, pages_given_back_as_it_goes)
{
	static const char *const path = "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1";
	unsigned long calls = 0;
	struct cfi_scan_opts opts = { .sz = sizeof(opts), .pages = count_pages, .ctx = &calls };
	size_t shstrndx;
	uint64_t eh_size = 0;
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd;

	cr_assert(elf_open_path(path, &fd, &elf) == 0, "cannot open %s", path);
	cr_assert(elf_getshdrstrndx(elf, &shstrndx) == 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		cr_assert(gelf_getshdr(scn, &sh));
		if (!strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".eh_frame"))
			eh_size = sh.sh_size;
	}
	cr_assert_gt(eh_size, 4 * CFI_SCAN_PAGES_BYTES, "%s: a small .eh_frame", path);
	cr_expect_eq(cfi_scan_opts(elf, &opts), 0);
	cr_expect_eq(cfi_scan(elf), 0);
	cr_expect_geq(calls, eh_size / CFI_SCAN_PAGES_BYTES, "%lu calls for %llu bytes of CFI",
		      calls, (unsigned long long)eh_size);
	opts.sz = sizeof(size_t);
	cr_expect_eq(cfi_scan_opts(elf, &opts), -EINVAL);
	elf_end(elf);
	close(fd);
}
