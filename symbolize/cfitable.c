// SPDX-License-Identifier: MIT
/* cfitable.c - the compact unwind table of one ELF file from its CFI (cfitable.h). */
#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <elfutils/libdw.h>
#include <gelf.h>

#include "symbolize/cfiscan.h"
#include "symbolize/cfitable.h"
#include "symbolize/procmaps.h"
#include "symbolize/safeopen.h"
#include "tools/lib/array.h"

/* DWARF register numbers on x86_64. */
#define DWREG_RBP 6
#define DWREG_RSP 7
#define DWREG_RIP 16

/*
 * libdw keeps every FDE and CIE it has looked up in its Dwarf_CFI until
 * dwarf_cfi_end(), and the builder looks up each one once, in address
 * order: 80 bytes an FDE, 8 MB for cc1 (100k FDEs), all at once, in the
 * recorder's peak memory. Where libdw finds FDEs with .eh_frame_hdr's
 * binary-search table, a fresh Dwarf_CFI every CFI_RENEW_LOOKUPS lookups
 * costs nothing it needs: the table is in the file.
 */
#define CFI_RENEW_LOOKUPS	4096
/* Rows a build with a sink holds before it hands them over (64 KiB). */
#define CFI_EMIT_ROWS		8192
/* Files from this size up have their pages given back during the build (find_file_map()). */
#define CFI_DROP_PAGES_BYTES	(1u << 20)
/* Code sections a file's headers may name before they are not used (read_code_ranges()). */
#define CFI_CODE_SECTIONS_MAX	1024

/* Addresses [start, end) the section headers say hold code. */
struct code_range {
	uint64_t start, end;
};

struct builder {
	struct cfi_table *t;
	size_t cap;
	/*
	 * With a sink (cfi_table_build_opts.emit, else NULL): the rows not
	 * handed over yet, in t->rows (cap CFI_EMIT_ROWS), and the last row
	 * made, which the next one is merged with or checked against.
	 */
	const struct cfi_table_build_opts *sink;
	size_t pending;
	struct unwind_row last;
	uint64_t gap_budget;	/* bytes without CFI still to probe */
	struct code_range *code;	/* sorted, disjoint; none: no section headers to go by */
	size_t nr_code;
	Elf *elf;
	Elf *cfi_elf;		/* what libdw and cfi_scan() read: elf or view_elf */
	Dwarf_CFI *cfi;
	bool renew;		/* libdw searches a table: the CFI can be renewed */
	uint32_t lookups;	/* since the CFI was made, or the file's pages given back */
	void *map;		/* the file as libelf mapped it, when its pages may be given back */
	size_t map_len;
	/* open_view(): the file mapped again for libdw, and its pages past the first. */
	char *view;
	size_t view_len;
	Elf *view_elf;
	void *view_drop;	/* NULL: a file too small to give pages back */
	size_t view_drop_len;
};

/* The rows not handed over yet go to the sink: 0, or its error. */
static int flush_rows(struct builder *b)
{
	int err = 0;

	if (b->pending)
		err = b->sink->emit(b->sink->ctx, b->t->rows, (uint32_t)b->pending);
	b->pending = 0;
	return err;
}

static int add_row(struct builder *b, uint64_t pc, uint32_t rule)
{
	struct cfi_table *t = b->t;
	int err;

	if (t->nr && b->last.rule == rule)
		return 0;	/* same rule continues: one row covers both */
	if (t->nr && pc <= b->last.pc)
		return -EINVAL;	/* overlapping segments: not a layout we can serve */
	if (t->nr >= UNWIND_TABLE_MAX_ROWS)
		return -E2BIG;
	if (b->sink && b->pending == b->cap) {
		err = flush_rows(b);
		if (err)
			return err;
	}
	if (ARRAY_RESERVE(t->rows, b->cap, b->pending + 1, 1024))
		return -ENOMEM;
	b->last = (struct unwind_row){ .pc = (uint32_t)pc, .rule = rule };
	t->rows[b->pending++] = b->last;
	t->nr++;
	return 0;
}

/* The base register and offset of a one-op "reg + offset" expression. */
static bool breg_op(const Dwarf_Op *op, unsigned int *reg, int64_t *off)
{
	if (op->atom == DW_OP_bregx) {
		*reg = (unsigned int)op->number;
		*off = (int64_t)op->number2;
		return true;
	}
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = op->atom - DW_OP_breg0;
		*off = (int64_t)op->number;
		return true;
	}
	return false;
}

/* gcc and ld's .plt entries: CFA = rsp + 8 + ((rip & 15) >= 11 ? 8 : 0). */
static bool is_plt_expr(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	static const uint8_t tail[] = { DW_OP_lit15, DW_OP_and, DW_OP_lit11, DW_OP_ge,
					DW_OP_lit3, DW_OP_shl, DW_OP_plus };
	unsigned int reg, rip;
	int64_t rip_off;

	if (nops != 2 + sizeof(tail) || !breg_op(&ops[0], &reg, off) || reg != DWREG_RSP ||
	    !breg_op(&ops[1], &rip, &rip_off) || rip != DWREG_RIP || rip_off != 0)
		return false;
	for (size_t i = 0; i < sizeof(tail); i++)
		if (ops[2 + i].atom != tail[i])
			return false;
	return true;
}

/*
 * Where a saved register is: 1 and *off when at CFA + off, 0 when the
 * caller's value is this frame's (same value, or undefined), -1 for any
 * other rule (another register, a value rather than a location, an
 * expression).
 */
static int saved_at_cfa(Dwarf_Frame *frame, int regno, int64_t *off)
{
	Dwarf_Op ops_mem[3], *ops;
	size_t nops;

	if (dwarf_frame_register(frame, regno, ops_mem, &ops, &nops))
		return -1;
	if (nops == 0)
		return 0;
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return -1;
	if (nops == 1) {
		*off = 0;
		return 1;
	}
	if (nops == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return 1;
	}
	return -1;
}

static bool ra_undefined(Dwarf_Frame *frame, int ra_reg)
{
	Dwarf_Op ops_mem[3], *ops;
	size_t nops;

	return !dwarf_frame_register(frame, ra_reg, ops_mem, &ops, &nops) && nops == 0 &&
	       ops == ops_mem;
}

static uint32_t classify(struct cfi_table_stats *st, Dwarf_Frame *frame, int ra_reg, bool signal)
{
	uint32_t cfa_kind, rbp_kind = UNWIND_RBP_SAME;
	int64_t cfa_off, ra_off, rbp_off = 0;
	Dwarf_Op *ops;
	unsigned int reg;
	size_t nops;
	int rbp;

	if (signal)
		return UNWIND_RULE(UNWIND_CFA_SIGNAL, 0, 0, 0);
	if (ra_undefined(frame, ra_reg))
		return UNWIND_RULE(UNWIND_CFA_ROOT, 0, 0, 0);
	if (ra_reg != DWREG_RIP || saved_at_cfa(frame, ra_reg, &ra_off) != 1 || ra_off != -8)
		goto unsupported;
	if (dwarf_frame_cfa(frame, &ops, &nops) || nops == 0)
		goto unsupported;
	if (nops == 1 && breg_op(&ops[0], &reg, &cfa_off) &&
	    (reg == DWREG_RSP || reg == DWREG_RBP)) {
		cfa_kind = reg == DWREG_RSP ? UNWIND_CFA_RSP : UNWIND_CFA_RBP;
	} else if (is_plt_expr(ops, nops, &cfa_off)) {
		cfa_kind = UNWIND_CFA_PLT;
		st->plt_rows++;
	} else {
		goto unsupported;
	}
	if (cfa_off < 0 || cfa_off > UNWIND_CFA_OFF_MAX)
		goto unsupported;

	rbp = saved_at_cfa(frame, DWREG_RBP, &rbp_off);
	if (rbp == 1 && rbp_off % 8 == 0 && rbp_off >= UNWIND_RBP_OFF_MIN &&
	    rbp_off <= UNWIND_RBP_OFF_MAX) {
		rbp_kind = UNWIND_RBP_AT_CFA;
	} else if (rbp != 0) {
		rbp_kind = UNWIND_RBP_LOST;
		rbp_off = 0;
		st->rbp_lost_rows++;
	}
	return UNWIND_RULE(cfa_kind, cfa_off, rbp_kind, rbp_off);

unsupported:
	st->unsupported_rows++;
	return UNWIND_RULE(UNWIND_CFA_UNSUPPORTED, 0, 0, 0);
}

/* How libdw 0.188 finds a file's FDEs (fde_search()). */
enum fde_search {
	/*
	 * By reading .eh_frame from its start, keeping every FDE it passes
	 * (at the first address no FDE covers: all of them), and a renewed
	 * Dwarf_CFI would read it again.
	 */
	FDE_SEARCH_LINEAR,
	/* In the binary-search table of the section .eh_frame_hdr. */
	FDE_SEARCH_TABLE,
	/* Linearly, but PT_GNU_EH_FRAME holds a table for the same .eh_frame (open_view()). */
	FDE_SEARCH_SEGMENT,
};

/*
 * Whether the .eh_frame_hdr bytes h[0, n), loaded at hdr_addr, hold a table
 * libdw takes (parse_eh_frame_hdr() in its dwarf_getcfi_elf.c) for the
 * .eh_frame at eh_frame_addr: version 1, eh_frame_ptr (pc-relative sdata4)
 * naming that .eh_frame, a udata4 count of entries the bytes hold, the
 * table datarel sdata4, as GNU ld and gold write it. The fields are read
 * in x86_64's byte order (fde_search() checks the file's).
 */
static bool search_table_ok(const uint8_t *h, uint64_t n, uint64_t hdr_addr,
			    uint64_t eh_frame_addr)
{
	uint32_t count;
	int32_t rel;

	if (n < 12 || h[0] != 1 || h[1] != (DW_EH_PE_pcrel | DW_EH_PE_sdata4) ||
	    h[2] != DW_EH_PE_udata4 || h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return false;
	memcpy(&rel, h + 4, sizeof(rel));
	memcpy(&count, h + 8, sizeof(count));
	return hdr_addr + 4 + (uint64_t)(int64_t)rel == eh_frame_addr && count &&
	       count <= (n - 12) / 8;
}

/* Whether the first PT_GNU_EH_FRAME, the one libdw reads, has a table for .eh_frame at eh_frame_addr. */
static bool segment_table_ok(Elf *elf, uint64_t eh_frame_addr)
{
	size_t size = 0, phnum, i;
	const char *file = elf_rawfile(elf, &size);
	GElf_Phdr ph;

	if (!file || elf_getphdrnum(elf, &phnum))
		return false;
	for (i = 0; i < phnum; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME)
			break;
	if (i == phnum || ph.p_offset > size || ph.p_filesz > size - ph.p_offset)
		return false;
	return search_table_ok((const uint8_t *)file + ph.p_offset, ph.p_filesz, ph.p_vaddr,
			       eh_frame_addr);
}

/*
 * libdw (getcfi_shdr()) takes the first section named .eh_frame, and the
 * search table of an .eh_frame_hdr section only when one comes before it.
 * GNU ld writes .eh_frame_hdr first; gold (Debian's libLLVM-14 and
 * libclang-cpp-14) and lld write it after: FDE_SEARCH_SEGMENT when their
 * PT_GNU_EH_FRAME has a table for that .eh_frame, else FDE_SEARCH_LINEAR,
 * which in doubt costs memory, never rows.
 */
static enum fde_search fde_search(Elf *elf)
{
	Elf_Scn *scn = NULL, *hdr = NULL;
	const unsigned char *ident;
	GElf_Addr hdr_addr = 0;
	size_t shstrndx;

	ident = (const unsigned char *)elf_getident(elf, NULL);
	if (!ident || ident[EI_DATA] != ELFDATA2LSB)
		return FDE_SEARCH_LINEAR;
	if (elf_getshdrstrndx(elf, &shstrndx) || !shstrndx)
		return FDE_SEARCH_LINEAR;	/* libdw reads PT_GNU_EH_FRAME; in doubt, linear */
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".eh_frame_hdr")) {
			hdr = scn;
			hdr_addr = sh.sh_addr;
			continue;
		}
		if (strcmp(name, ".eh_frame"))
			continue;
		if (sh.sh_type == SHT_NOBITS)
			return FDE_SEARCH_LINEAR;
		d = hdr ? elf_rawdata(hdr, NULL) : NULL;
		if (d && d->d_buf && search_table_ok(d->d_buf, d->d_size, hdr_addr, sh.sh_addr))
			return FDE_SEARCH_TABLE;
		return segment_table_ok(elf, sh.sh_addr) ? FDE_SEARCH_SEGMENT : FDE_SEARCH_LINEAR;
	}
	return FDE_SEARCH_LINEAR;
}

/*
 * libelf maps the whole file (ELF_C_READ_MMAP) and the builder reads its
 * .eh_frame through: every page read stays in the recorder's resident
 * memory until elf_end() (3 MB for cc1, 6 for libclang-cpp, at once with
 * the rows). Those pages can be given back while the build goes on, and
 * libdw's next reads fault them in again from the page cache, provided the
 * file is one read-only private mapping of fd: then no page of it can hold
 * anything but the file. (libelf reads the file into memory where mmap
 * fails: that memory is not given back, nor is anything not verified so.)
 */
static void find_file_map(struct builder *b, int fd)
{
	size_t size = 0;
	char *base = elf_rawfile(b->elf, &size);
	long page = sysconf(_SC_PAGESIZE);
	struct procmaps m;
	struct stat st;

	if (!base || size < CFI_DROP_PAGES_BYTES || page <= 0 || (uintptr_t)base % (uintptr_t)page ||
	    fstat(fd, &st) ||
	    procmaps_read(NULL, (uint32_t)getpid(), PROCMAPS_DATA, &m))
		return;
	for (size_t i = 0; i < m.nr; i++) {
		const struct procmaps_entry *e = &m.entries[i];

		if (e->start == (uintptr_t)base && e->end >= (uintptr_t)base + size &&
		    e->prot == PROT_READ && e->flags == MAP_PRIVATE && e->pgoff == 0 &&
		    e->ino == st.st_ino && e->maj == major(st.st_dev) &&
		    e->min == minor(st.st_dev)) {
			b->map = base;
			b->map_len = e->end - e->start;
			break;
		}
	}
	procmaps_release(&m);
}

/*
 * FDE_SEARCH_SEGMENT: libdw finds FDEs by reading .eh_frame from its
 * start, and at the first address no FDE covers it reads all of it and
 * keeps every FDE for the rest of the build (libLLVM-14: 95k FDEs, about
 * 6 MB of heap, with 4.8 MB of the file's pages), though PT_GNU_EH_FRAME
 * holds a table for the same .eh_frame. libdw takes that table in a file
 * without section headers (getcfi_phdr()), so it gets the file as one:
 * a private read-only mapping of fd whose first page, a copy, has the
 * section header fields of the ELF header zeroed. Its CFI is the same
 * bytes, and cfi_scan() reads what libdw reads through it. 0, or -errno
 * (then libdw reads the file as it is).
 */
static int open_view(struct builder *b, int fd, size_t file_size)
{
	long page = sysconf(_SC_PAGESIZE);
	Elf64_Ehdr *eh;
	char *view;

	if (page <= 0 || file_size < sizeof(*eh))
		return -EINVAL;
	view = mmap(NULL, file_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (view == MAP_FAILED)
		return -errno;
	eh = (Elf64_Ehdr *)view;
	eh->e_shoff = 0;
	eh->e_shnum = 0;
	eh->e_shstrndx = SHN_UNDEF;
	/* Read-only from here: no page but the first is ever anything but the file's. */
	if (mprotect(view, file_size, PROT_READ)) {
		int err = -errno;

		munmap(view, file_size);
		return err;
	}
	b->view_elf = elf_memory(view, file_size);
	if (!b->view_elf || elf_kind(b->view_elf) != ELF_K_ELF) {
		elf_end(b->view_elf);
		b->view_elf = NULL;
		munmap(view, file_size);
		return -EINVAL;
	}
	b->view = view;
	b->view_len = file_size;
	b->cfi_elf = b->view_elf;
	/* Pages go back as libelf's do (find_file_map()), but never the copied first one. */
	if (file_size >= CFI_DROP_PAGES_BYTES) {
		b->view_drop = view + page;
		b->view_drop_len = file_size - (size_t)page;
	}
	return 0;
}

static void drop_pages(struct builder *b)
{
	if (b->map)
		madvise(b->map, b->map_len, MADV_DONTNEED);
	if (b->view_drop)
		madvise(b->view_drop, b->view_drop_len, MADV_DONTNEED);
}

static void scan_pages(void *ctx)
{
	drop_pages(ctx);
}

/*
 * After a lookup: every CFI_RENEW_LOOKUPS (see there) the file's pages go
 * back (find_file_map(), open_view()) and, where libdw searches a table, a
 * fresh Dwarf_CFI replaces the one that kept every FDE looked up.
 */
static int renew_cfi(struct builder *b)
{
	if (++b->lookups < CFI_RENEW_LOOKUPS)
		return 0;
	b->lookups = 0;
	drop_pages(b);
	if (!b->renew)
		return 0;
	dwarf_cfi_end(b->cfi);
	b->t->stats.cfi_renewals++;
	b->cfi = dwarf_getcfi_elf(b->cfi_elf);
	return b->cfi ? 0 : -ENOENT;
}

static int cmp_code_range(const void *a, const void *b)
{
	const struct code_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Which bytes are code, by the section headers: the allocated
 * SHF_EXECINSTR sections (.init, .plt, .plt.got, .text, .fini ...), sorted
 * and merged into b->code. An executable segment holds more than code:
 * gold puts .dynsym, .dynstr and .rela.dyn before .init (13 MB in Debian's
 * libLLVM-14) and .rodata and .eh_frame after .fini, bytes no FDE covers
 * that the byte-wise probe spent its whole budget on before it reached
 * .text. The headers are the file's word, not the loader's: headers that
 * lie only cost rows (those walks fall back to frame pointers), never give
 * a wrong one, as every row still comes from the CFI. No section headers,
 * or more than CFI_CODE_SECTIONS_MAX code sections: no ranges, and every
 * byte of an executable segment may be code. 0 or -ENOMEM.
 */
static int read_code_ranges(struct builder *b)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0, n = 0;

	while ((scn = elf_nextscn(b->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size ||
		    (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR) ||
		    sh.sh_addr + sh.sh_size < sh.sh_addr)
			continue;
		if (n == CFI_CODE_SECTIONS_MAX) {
			n = 0;
			break;
		}
		if (ARRAY_RESERVE(b->code, cap, n + 1, 16))
			return -ENOMEM;
		b->code[n++] = (struct code_range){ sh.sh_addr, sh.sh_addr + sh.sh_size };
	}
	if (n)	/* b->code is NULL without one */
		qsort(b->code, n, sizeof(*b->code), cmp_code_range);
	b->nr_code = 0;
	for (size_t i = 0; i < n; i++) {
		struct code_range *last = b->nr_code ? &b->code[b->nr_code - 1] : NULL;

		if (last && b->code[i].start <= last->end) {
			if (b->code[i].end > last->end)
				last->end = b->code[i].end;
		} else {
			b->code[b->nr_code++] = b->code[i];
		}
	}
	return 0;
}

/* The first address at or after pc that the section headers say is code; UINT64_MAX: none. */
static uint64_t code_from(const struct builder *b, uint64_t pc)
{
	size_t lo = 0, hi = b->nr_code;

	while (lo < hi) {	/* the first range that ends after pc */
		size_t mid = lo + (hi - lo) / 2;

		if (b->code[mid].end <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == b->nr_code)
		return UINT64_MAX;
	return b->code[lo].start > pc ? b->code[lo].start : pc;
}

/* Rows for one executable segment's addresses [lo, hi). */
static int build_segment(struct builder *b, uint64_t lo, uint64_t hi)
{
	struct cfi_table_stats *st = &b->t->stats;
	/* A segment the headers name no code in is all code, as its p_flags say. */
	bool by_sections = code_from(b, lo) < hi;
	uint64_t pc = lo;
	int err;

	while (pc < hi) {
		Dwarf_Addr start, end;
		Dwarf_Frame *frame;
		uint32_t rule;
		bool signal;
		int ra_reg;

		if (dwarf_cfi_addrframe(b->cfi, pc, &frame)) {
			uint64_t next = by_sections ? code_from(b, pc) : pc;

			if (next > pc) {
				/* No code here: on to the next code without probing. */
				next = next < hi ? next : hi;
				st->noncode_bytes += next - pc;
				err = add_row(b, pc, UNWIND_RULE(UNWIND_CFA_NONE, 0, 0, 0));
				if (!err)
					err = renew_cfi(b);
				if (err)
					return err;
				pc = next;
				continue;
			}
			/*
			 * No FDE here. libdw offers no "next FDE": step a byte,
			 * within a budget: a crafted file with a huge gap would
			 * otherwise hold the builder for minutes (150 ns a byte).
			 * Past it the rest of the segment has no rows.
			 */
			if (st->gap_bytes >= b->gap_budget) {
				st->gap_truncated = true;
				break;
			}
			st->gap_bytes++;
			err = add_row(b, pc++, UNWIND_RULE(UNWIND_CFA_NONE, 0, 0, 0));
			if (!err)
				err = renew_cfi(b);	/* a failed lookup reads and keeps CFI too */
			if (err)
				return err;
			continue;
		}
		ra_reg = dwarf_frame_info(frame, &start, &end, &signal);
		if (ra_reg < 0) {
			free(frame);
			return -EINVAL;
		}
		rule = classify(st, frame, ra_reg, signal);
		free(frame);
		st->cfi_rows++;
		err = add_row(b, pc, rule);
		if (!err)
			err = renew_cfi(b);
		if (err)
			return err;
		/* The next row starts where this one ends; never stall on a bad range. */
		pc = end <= pc ? pc + 1 : end < hi ? end : hi;
	}
	return add_row(b, hi, UNWIND_RULE(UNWIND_CFA_NONE, 0, 0, 0));
}

static int read_segments(struct cfi_table *t, Elf *elf)
{
	int err = elf_load_segments(elf, true, &t->segs, &t->nr_segs);

	for (size_t i = 0; i < t->nr_segs && !err; i++) {
		const struct load_seg *s = &t->segs[i];

		if (s->vaddr + s->memsz < s->vaddr || s->vaddr + s->memsz > UINT32_MAX)
			err = -E2BIG;	/* rows hold 32-bit addresses */
	}
	return err;
}

/*
 * The bytes of segment s that can be code: those the file holds. Memory
 * past filesz is zeroes (a crafted segment claimed 176 MiB of it after
 * 3 KiB), and a mapping past the end of the file faults, so a header that
 * claims 128 MiB in a 10 KiB file gets 10 KiB at most.
 */
static uint64_t code_bytes(const struct load_seg *s, uint64_t file_size)
{
	uint64_t n = s->filesz < s->memsz ? s->filesz : s->memsz;

	if (s->offset >= file_size)
		return 0;
	return n < file_size - s->offset ? n : file_size - s->offset;
}

static int build(struct cfi_table *t, Elf *elf, int fd, const struct cfi_table_build_opts *opts)
{
	struct builder b = { .t = t, .elf = elf, .cfi_elf = elf,
			     .sink = opts && opts->emit ? opts : NULL };
	struct cfi_scan_opts scan_opts = { .sz = sizeof(scan_opts), .pages = scan_pages,
					   .ctx = &b };
	enum fde_search search;
	size_t file_size = 0;
	int err;

	err = read_segments(t, elf);
	if (err)
		return err;
	if (!elf_rawfile(elf, &file_size))
		return -EINVAL;
	b.gap_budget = file_size < CFI_GAP_PROBES_MAX ? file_size : CFI_GAP_PROBES_MAX;
	find_file_map(&b, fd);
	search = fde_search(elf);
	b.renew = search != FDE_SEARCH_LINEAR;
	if (search == FDE_SEARCH_SEGMENT && open_view(&b, fd, file_size))
		b.renew = false;	/* read as it is, linearly */
	/*
	 * libdw's interpreter trusts register numbers; the file is not ours
	 * (cfiscan.h). The scan reads all of the CFI (cc1: 2.7 MB, libLLVM-14:
	 * 5.6): its pages go back as it goes, and before the build.
	 */
	err = cfi_scan_opts(b.cfi_elf, &scan_opts);
	if (err)
		goto out;
	drop_pages(&b);
	err = read_code_ranges(&b);
	if (err)
		goto out;
	if (b.sink) {
		/* One chunk, handed over whenever it fills: rows never pile up here. */
		t->rows = malloc(CFI_EMIT_ROWS * sizeof(*t->rows));
		err = t->rows ? 0 : -ENOMEM;
		if (err)
			goto out;
		b.cap = CFI_EMIT_ROWS;
	}
	b.cfi = dwarf_getcfi_elf(b.cfi_elf);
	err = b.cfi ? 0 : -ENOENT;
	if (err)
		goto out;
	for (size_t i = 0; i < t->nr_segs && !err; i++)
		err = build_segment(&b, t->segs[i].vaddr,
				    t->segs[i].vaddr + code_bytes(&t->segs[i], file_size));
	dwarf_cfi_end(b.cfi);
	if (b.sink) {
		if (!err)
			err = flush_rows(&b);
		free(t->rows);
		t->rows = NULL;
	} else if (!err && t->nr && t->nr < b.cap) {
		/*
		 * The rows grew by doubling; a table is kept for as long as a
		 * process maps its file (and then cached): up to half of it
		 * would be room never used, resident in the recorder.
		 */
		struct unwind_row *rows = realloc(t->rows, t->nr * sizeof(*rows));

		if (rows)
			t->rows = rows;
	}
out:
	free(b.code);
	if (b.view_elf) {
		elf_end(b.view_elf);
		munmap(b.view, b.view_len);
	}
	return err;
}

int cfi_table_build_fd_opts(int fd, const struct cfi_table_build_opts *opts,
			    struct cfi_table **out)
{
	struct cfi_table *t;
	Elf *elf;
	int err;

	*out = NULL;
	if (opts && opts->sz < sizeof(*opts))
		return -EINVAL;
	err = elf_open_fd(fd, &elf);
	if (err)
		return err;
	t = calloc(1, sizeof(*t));
	if (!t)
		err = -ENOMEM;
	else if (gelf_getclass(elf) != ELFCLASS64)
		err = -EINVAL;	/* x86_64 code only */
	else
		err = build(t, elf, fd, opts);
	elf_end(elf);
	if (err) {
		cfi_table_free(t);
		return err;
	}
	*out = t;
	return 0;
}

int cfi_table_build_fd(int fd, struct cfi_table **out)
{
	return cfi_table_build_fd_opts(fd, NULL, out);
}

int cfi_table_build(const char *path, struct cfi_table **out)
{
	int fd, err;

	*out = NULL;
	/* Regular files only, looked at before they are opened (safeopen.h). */
	err = safeopen(-1, path, NULL, &fd, NULL);
	if (err)
		return err;
	err = cfi_table_build_fd(fd, out);
	close(fd);
	return err;
}

void cfi_table_free(struct cfi_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->segs);
	free(t);
}

int cfi_table_bias(const struct cfi_table *t, uint64_t start, uint64_t len, uint64_t pgoff,
		   uint64_t *bias)
{
	for (size_t i = 0; i < t->nr_segs; i++) {
		const struct load_seg *s = &t->segs[i];

		/* The mapping's file range [pgoff, pgoff + len) holds part of s. */
		if (pgoff < s->offset + s->filesz && s->offset < pgoff + len) {
			*bias = start - pgoff + s->offset - s->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

const struct unwind_row *cfi_table_lookup(const struct cfi_table *t, uint64_t vaddr)
{
	int i;

	if (vaddr > UINT32_MAX)
		return t->nr ? &t->rows[t->nr - 1] : NULL;	/* past the end: NONE */
	i = unwind_search(t->rows, (uint32_t)t->nr, (uint32_t)vaddr);
	return i < 0 ? NULL : &t->rows[i];
}
