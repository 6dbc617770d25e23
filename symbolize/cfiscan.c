// SPDX-License-Identifier: MIT
/* cfiscan.c - refuse CFI that would make libdw allocate without bound (cfiscan.h). */
#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <elfutils/libdw.h>

#include "symbolize/cfiscan.h"

/* Bytes of CFI the scan may decode, per byte of CFI it was given. */
#define SCAN_BUDGET_FACTOR	8u
#define SCAN_BUDGET_SLACK	(1u << 20)

/* One .eh_frame or .eh_frame_hdr: its bytes and the address they load at. */
struct region {
	Elf_Data data;		/* d_buf, d_size: what dwarf_next_cfi reads */
	uint64_t vaddr;
};

struct scan {
	const unsigned char *ident;
	struct region frames[CFI_SCAN_MAX_SECTIONS + 1];
	size_t nr_frames;
	struct region hdrs[CFI_SCAN_MAX_SECTIONS + 1];
	size_t nr_hdrs;
	uint64_t budget;	/* bytes still to decode */
	bool eh_frame_section;	/* libdw takes the sections and never PT_GNU_EH_FRAME */
	const struct cfi_scan_opts *opts;
	uint64_t since_pages;	/* bytes decoded since opts->pages was called */
};

static int spend(struct scan *s, uint64_t n)
{
	if (n + 16 > s->budget)
		return -E2BIG;
	s->budget -= n + 16;	/* 16: each entry costs something, even an empty one */
	s->since_pages += n + 16;
	if (s->since_pages >= CFI_SCAN_PAGES_BYTES && s->opts && s->opts->pages) {
		s->since_pages = 0;
		s->opts->pages(s->opts->ctx);
	}
	return 0;
}

/* An unsigned or signed LEB128: false when it runs past end. */
static bool skip_leb(const uint8_t **p, const uint8_t *end, uint64_t *val)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	while (*p < end) {
		uint8_t b = *(*p)++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		else if (b & 0x7f)
			v = UINT64_MAX;	/* more than 64 bits: too big for anything */
		shift += 7;
		if (!(b & 0x80)) {
			*val = v;
			return true;
		}
	}
	return false;
}

static bool reg_ok(const uint8_t **p, const uint8_t *end)
{
	uint64_t reg;

	return skip_leb(p, end, &reg) && reg <= CFI_SCAN_MAX_REG;
}

static bool skip_bytes(const uint8_t **p, const uint8_t *end, uint64_t n)
{
	if ((uint64_t)(end - *p) < n)
		return false;
	*p += n;
	return true;
}

/* A block: ULEB length, then that many bytes (a DWARF expression). */
static bool skip_block(const uint8_t **p, const uint8_t *end)
{
	uint64_t len;

	return skip_leb(p, end, &len) && skip_bytes(p, end, len);
}

/* One CIE's initial instructions or one FDE's: 0 or -EINVAL. */
static int scan_program(const uint8_t *p, const uint8_t *end)
{
	int depth = 0;
	uint64_t v;

	while (p < end) {
		uint8_t op = *p++;
		bool ok = true;

		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
		case DW_CFA_restore:
			continue;	/* operand in the opcode; registers < 64 */
		case DW_CFA_offset:
			ok = skip_leb(&p, end, &v);
			break;
		default:
			switch (op) {
			case DW_CFA_nop:
			case DW_CFA_GNU_window_save:	/* libdw: at most 32 registers */
				break;
			case DW_CFA_remember_state:
				ok = ++depth <= CFI_SCAN_MAX_DEPTH;
				break;
			case DW_CFA_restore_state:
				depth -= depth > 0;
				break;
			case DW_CFA_advance_loc1:
				ok = skip_bytes(&p, end, 1);
				break;
			case DW_CFA_advance_loc2:
				ok = skip_bytes(&p, end, 2);
				break;
			case DW_CFA_advance_loc4:
				ok = skip_bytes(&p, end, 4);
				break;
			case DW_CFA_MIPS_advance_loc8:
				ok = skip_bytes(&p, end, 8);
				break;
			case DW_CFA_offset_extended:
			case DW_CFA_offset_extended_sf:
			case DW_CFA_val_offset:
			case DW_CFA_val_offset_sf:
			case DW_CFA_GNU_negative_offset_extended:
			case DW_CFA_def_cfa:
			case DW_CFA_def_cfa_sf:
				ok = reg_ok(&p, end) && skip_leb(&p, end, &v);
				break;
			case DW_CFA_restore_extended:
			case DW_CFA_undefined:
			case DW_CFA_same_value:
			case DW_CFA_def_cfa_register:
				ok = reg_ok(&p, end);
				break;
			case DW_CFA_register:
				ok = reg_ok(&p, end) && reg_ok(&p, end);
				break;
			case DW_CFA_def_cfa_offset:
			case DW_CFA_def_cfa_offset_sf:
			case DW_CFA_GNU_args_size:
				ok = skip_leb(&p, end, &v);
				break;
			case DW_CFA_def_cfa_expression:
				ok = skip_block(&p, end);
				break;
			case DW_CFA_expression:
			case DW_CFA_val_expression:
				ok = reg_ok(&p, end) && skip_block(&p, end);
				break;
			default:
				/* DW_CFA_set_loc (its operand's size is the CIE's
				 * encoding) and opcodes libdw rejects. */
				ok = false;
			}
		}
		if (!ok)
			return -EINVAL;
	}
	return 0;
}

/*
 * Bytes of a pointer in encoding enc, or 0 for a variable-length one. The
 * size depends on the format alone, whatever the base or indirection.
 */
static unsigned int enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	default:
		return 0;
	}
}

/*
 * A pointer in encoding enc at *p, which loads at vaddr p_vaddr, in a
 * region that loads at base (the data-relative base of .eh_frame_hdr).
 */
static bool read_enc(uint8_t enc, const uint8_t **p, const uint8_t *end, uint64_t p_vaddr,
		     uint64_t base, uint64_t *out)
{
	unsigned int n = enc_size(enc);
	uint8_t rel = enc & 0x70;
	uint64_t v = 0;

	if (enc & DW_EH_PE_indirect || (rel != DW_EH_PE_absptr && rel != DW_EH_PE_pcrel &&
					 rel != DW_EH_PE_datarel))
		return false;	/* a value the scan does not compute */
	if (!n || (uint64_t)(end - *p) < n)
		return false;
	for (unsigned int i = 0; i < n; i++)
		v |= (uint64_t)(*p)[i] << (8 * i);	/* x86_64 files: little-endian */
	if ((enc & DW_EH_PE_signed) && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= UINT64_MAX << (8 * n);
	*p += n;
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		v += p_vaddr;
	else if ((enc & 0x70) == DW_EH_PE_datarel)
		v += base;
	*out = v;
	return true;
}

/* What a CIE tells about its FDEs' layout, as libdw reads it (cie.c). */
struct cie_shape {
	uint8_t fde_encoding;
	bool sized;		/* 'z': FDEs carry a ULEB length of augmentation data */
};

static int cie_shape(const Dwarf_CIE *cie, struct cie_shape *out)
{
	const char *ap = cie->augmentation;
	const uint8_t *d = cie->augmentation_data;
	const uint8_t *end = d + cie->augmentation_data_size;

	out->fde_encoding = DW_EH_PE_absptr;
	out->sized = false;
	if (!*ap)
		return 0;
	if (*ap++ != 'z')
		return -EINVAL;	/* no size to skip by: libdw must understand every letter */
	out->sized = true;
	for (; *ap; ap++) {
		unsigned int n;

		switch (*ap) {
		case 'S':
			break;
		case 'L':
		case 'R':
			if (d >= end)
				return -EINVAL;
			if (*ap == 'R')
				out->fde_encoding = *d;
			d++;
			break;
		case 'P':
			if (d >= end)
				return -EINVAL;
			n = enc_size(*d++);
			if (!n || !skip_bytes(&d, end, n))
				return -EINVAL;
			break;
		default:
			return -EINVAL;
		}
	}
	return enc_size(out->fde_encoding) ? 0 : -EINVAL;
}

/* The entry at off of region r, as dwarf_next_cfi gives it: 0, 1 at the end, -1. */
static int entry_at(struct scan *s, struct region *r, uint64_t off, uint64_t *next,
		    Dwarf_CFI_Entry *e)
{
	*next = off;
	return dwarf_next_cfi(s->ident, &r->data, true, off, next, e);
}

/*
 * The FDE fde (its bytes after the CIE pointer) with its CIE's initial
 * instructions. A CIE libdw could not read makes an FDE it never runs.
 */
static int scan_fde(struct scan *s, struct region *r, const Dwarf_FDE *fde)
{
	const uint8_t *p = fde->start, *end = fde->end;
	struct cie_shape shape;
	Dwarf_CFI_Entry cie;
	uint64_t next;
	int err;

	if (entry_at(s, r, fde->CIE_pointer, &next, &cie) || !dwarf_cfi_cie_p(&cie))
		return 0;
	err = spend(s, (uint64_t)(cie.cie.initial_instructions_end - cie.cie.initial_instructions));
	if (!err)
		err = scan_program(cie.cie.initial_instructions, cie.cie.initial_instructions_end);
	if (!err)
		err = cie_shape(&cie.cie, &shape);
	if (err)
		return err;
	/* initial location, then the length of the range, then augmentation data. */
	if (!skip_bytes(&p, end, enc_size(shape.fde_encoding)) ||
	    !skip_bytes(&p, end, enc_size(shape.fde_encoding & 0x0f)))
		return 0;	/* libdw refuses the FDE */
	if (shape.sized && !skip_block(&p, end))
		return 0;
	err = spend(s, (uint64_t)(end - p));
	return err ? err : scan_program(p, end);
}

static int scan_entry(struct scan *s, struct region *r, const Dwarf_CFI_Entry *e)
{
	if (dwarf_cfi_cie_p(e)) {
		int err = spend(s, (uint64_t)(e->cie.initial_instructions_end -
					      e->cie.initial_instructions));

		return err ? err : scan_program(e->cie.initial_instructions,
						e->cie.initial_instructions_end);
	}
	return scan_fde(s, r, &e->fde);
}

/* Every entry of r in the order libdw's linear search reads them (fde.c). */
static int scan_linear(struct scan *s, struct region *r)
{
	uint64_t off = 0, next;
	Dwarf_CFI_Entry e;
	int ret, err;

	for (;;) {
		ret = entry_at(s, r, off, &next, &e);
		if (ret > 0)
			return 0;
		if (ret < 0) {
			if (next == off)
				return 0;	/* libdw stops at an entry it cannot pass */
			off = next;
			continue;
		}
		err = scan_entry(s, r, &e);
		if (err)
			return err;
		off = next;
	}
}

/* What an .eh_frame_hdr says, read as libdw's parse_eh_frame_hdr() reads it. */
struct hdr_table {
	bool has_ptr;		/* eh_frame_ptr is valid */
	uint64_t eh_frame_ptr;	/* where its .eh_frame loads */
	const uint8_t *table;	/* count pairs (initial location, FDE address) */
	uint64_t count;		/* 0: no table libdw would use */
	uint8_t enc;
};

/*
 * 0 (a header libdw refuses has neither pointer nor table), or -EINVAL for
 * one the scan cannot decode.
 */
static int parse_hdr(const struct region *h, struct hdr_table *t)
{
	const uint8_t *start = h->data.d_buf, *p = start, *end = start + h->data.d_size;
	uint8_t ptr_enc, count_enc;
	uint64_t count;

	memset(t, 0, sizeof(*t));
	if (h->data.d_size < 4 || p[0] != 1)
		return 0;
	ptr_enc = p[1];
	count_enc = p[2];
	t->enc = p[3];
	p += 4;
	if (ptr_enc == DW_EH_PE_omit)
		return 0;
	if (!read_enc(ptr_enc, &p, end, h->vaddr + 4, h->vaddr, &t->eh_frame_ptr))
		return -EINVAL;
	t->has_ptr = true;
	if (count_enc == DW_EH_PE_omit)
		return 0;
	if (!read_enc(count_enc, &p, end, h->vaddr + (uint64_t)(p - start), h->vaddr, &count))
		return -EINVAL;
	if (!count || t->enc == DW_EH_PE_omit || (t->enc & ~DW_EH_PE_signed) == DW_EH_PE_uleb128)
		return 0;
	if (!enc_size(t->enc))
		return -EINVAL;
	if (count > (uint64_t)(end - p) / enc_size(t->enc) / 2)
		return 0;	/* libdw refuses a table longer than its header */
	t->table = p;
	t->count = count;
	return 0;
}

/* The FDEs that the table of .eh_frame_hdr h names, in every .eh_frame. */
static int scan_table(struct scan *s, const struct region *h)
{
	const uint8_t *start = h->data.d_buf, *end = start + h->data.d_size;
	struct hdr_table t;
	const uint8_t *p;
	int err = parse_hdr(h, &t);

	p = t.table;
	for (uint64_t i = 0; i < t.count && !err; i++) {
		uint64_t loc, fde_vaddr;

		/* Cannot fail: parse_hdr() saw that count pairs fit. */
		read_enc(t.enc, &p, end, h->vaddr + (uint64_t)(p - start), h->vaddr, &loc);
		read_enc(t.enc, &p, end, h->vaddr + (uint64_t)(p - start), h->vaddr, &fde_vaddr);
		for (size_t f = 0; f < s->nr_frames && !err; f++) {
			struct region *r = &s->frames[f];
			uint64_t off = fde_vaddr - r->vaddr, next;
			Dwarf_CFI_Entry e;

			if (off < r->data.d_size && !entry_at(s, r, off, &next, &e))
				err = scan_entry(s, r, &e);
		}
	}
	return err;
}

static void add_region(struct region *rs, size_t *nr, const void *buf, size_t size,
		       uint64_t vaddr)
{
	rs[*nr].data.d_buf = (void *)buf;
	rs[*nr].data.d_size = size;
	rs[*nr].vaddr = vaddr;
	(*nr)++;
}

/* Sections named .eh_frame and .eh_frame_hdr that hold bytes (getcfi_shdr). */
static int find_sections(struct scan *s, Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) || !shstrndx)
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		const char *name;
		bool hdr;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (!name || (strcmp(name, ".eh_frame") && strcmp(name, ".eh_frame_hdr")))
			continue;
		hdr = name[9] == '_';
		s->eh_frame_section |= !hdr;
		d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		if ((hdr ? s->nr_hdrs : s->nr_frames) == CFI_SCAN_MAX_SECTIONS)
			return -EINVAL;
		if (hdr)
			add_region(s->hdrs, &s->nr_hdrs, d->d_buf, d->d_size, shdr.sh_addr);
		else
			add_region(s->frames, &s->nr_frames, d->d_buf, d->d_size, shdr.sh_addr);
	}
	return 0;
}

/*
 * The first PT_GNU_EH_FRAME and the .eh_frame its header points at, which
 * libdw reads to the end of the file (getcfi_gnu_eh_frame). libdw looks
 * there only when no section is named .eh_frame; nor does the scan, which
 * would read past the section's end into data that is not CFI.
 */
static int find_segment(struct scan *s, Elf *elf, const char *file, size_t file_size)
{
	size_t phnum, i;
	struct hdr_table t;
	uint64_t off;
	GElf_Phdr ph;
	int err;

	if (s->eh_frame_section || elf_getphdrnum(elf, &phnum))
		return 0;
	for (i = 0; i < phnum; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME)
			break;
	if (i == phnum || ph.p_offset > file_size || ph.p_filesz > file_size - ph.p_offset)
		return 0;	/* no header, or one libdw cannot read either */
	add_region(s->hdrs, &s->nr_hdrs, file + ph.p_offset, ph.p_filesz, ph.p_vaddr);
	err = parse_hdr(&s->hdrs[s->nr_hdrs - 1], &t);
	if (err || !t.has_ptr)
		return err;
	off = t.eh_frame_ptr - ph.p_vaddr + ph.p_offset;
	if (off < file_size)
		add_region(s->frames, &s->nr_frames, file + off, file_size - off, t.eh_frame_ptr);
	return 0;
}

int cfi_scan_opts(Elf *elf, const struct cfi_scan_opts *opts)
{
	struct scan s = { .opts = opts };
	uint64_t bytes = 0;
	size_t file_size = 0;
	const char *file;
	int err;

	if (opts && opts->sz < sizeof(*opts))
		return -EINVAL;

	s.ident = (const unsigned char *)elf_getident(elf, NULL);
	file = elf_rawfile(elf, &file_size);
	if (!s.ident || !file)
		return -EINVAL;
	err = find_sections(&s, elf);
	if (!err)
		err = find_segment(&s, elf, file, file_size);
	if (err)
		return err;
	for (size_t i = 0; i < s.nr_frames; i++)
		bytes += s.frames[i].data.d_size;
	for (size_t i = 0; i < s.nr_hdrs; i++)
		bytes += s.hdrs[i].data.d_size;
	s.budget = bytes * SCAN_BUDGET_FACTOR + SCAN_BUDGET_SLACK;
	for (size_t i = 0; i < s.nr_frames && !err; i++)
		err = scan_linear(&s, &s.frames[i]);
	for (size_t i = 0; i < s.nr_hdrs && !err; i++)
		err = scan_table(&s, &s.hdrs[i]);
	return err;
}

int cfi_scan(Elf *elf)
{
	return cfi_scan_opts(elf, NULL);
}
