// SPDX-License-Identifier: MIT
/* pysyms.c - build and write a Python symbol file (see pysyms.h). */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/cache.h"
#include "symbolize/pysyms.h"
#include "tools/lib/buf.h"
#include "tools/lib/hash.h"

#ifndef DW_LANG_Python
#define DW_LANG_Python 0x0014
#endif

struct func {
	uint64_t start, size;
	char *name;		/* "NAME (BASENAME)", the symbol */
	uint32_t file;		/* index into files[] + 1; 0: none */
	size_t first_row, nr_rows;	/* in rows[] */
};

struct py_symfile {
	struct func *funcs;
	size_t nr, cap;
	struct py_symfile_row *rows;
	size_t nr_rows, cap_rows;
	const char **files;	/* distinct paths, in order of first use (keys of file_index) */
	size_t nr_files, cap_files;
	struct cache file_index;	/* path (with its NUL) -> index in files */
	uint64_t end;		/* highest function end */
};

int py_symfile_new(struct py_symfile **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void py_symfile_free(struct py_symfile *sf)
{
	if (!sf)
		return;
	for (size_t i = 0; i < sf->nr; i++)
		free(sf->funcs[i].name);
	cache_clear(&sf->file_index, NULL);
	free(sf->funcs);
	free(sf->rows);
	free(sf->files);
	free(sf);
}

size_t py_symfile_nr(const struct py_symfile *sf)
{
	return sf->nr;
}

uint64_t py_symfile_map_len(const struct py_symfile *sf)
{
	return sf->nr ? (sf->end + 0xfff) & ~0xfffull : 0;
}

int py_symfile_path(char *buf, size_t size, pid_t pid, unsigned int seq)
{
	int n = snprintf(buf, size, "/proc/version/bpfrec-python-%d-%u", (int)pid, seq);

	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/*
 * The file's index + 1 (its number in the line table), added when new: a
 * file is looked up once per function, and a large program has thousands
 * of modules, so by hash (a scan made a million functions take minutes).
 */
static int file_index(struct py_symfile *sf, const char *file, uint32_t *idx)
{
	size_t len = strlen(file) + 1;
	struct cache_entry *e = cache_get(&sf->file_index, file, len);
	int err;

	if (e) {
		*idx = (uint32_t)(uintptr_t)e->value;
		return 0;
	}
	err = grow((void **)&sf->files, &sf->cap_files, sf->nr_files + 1, sizeof(*sf->files));
	if (err)
		return err;
	e = cache_add(&sf->file_index, file, len);
	if (!e)
		return -ENOMEM;
	sf->files[sf->nr_files++] = (const char *)e->key;
	e->value = (void *)(uintptr_t)sf->nr_files;
	*idx = (uint32_t)sf->nr_files;
	return 0;
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

int py_symfile_add(struct py_symfile *sf, const struct py_symfile_func *f)
{
	bool has_file = f->file && f->file[0];
	size_t name_len;
	struct func *fn;
	int err;

	if (!f->name || !f->name[0] || !f->size || f->start < PY_SYMFILE_TEXT_START ||
	    (f->nr_rows && !f->rows))
		return -EINVAL;
	name_len = strnlen(f->name, PY_SYMFILE_MAX_NAME + 1);
	if (name_len > PY_SYMFILE_MAX_NAME ||
	    (has_file && strnlen(f->file, PY_SYMFILE_MAX_NAME + 1) > PY_SYMFILE_MAX_NAME))
		return -E2BIG;
	if (f->start >= PY_SYMFILE_MAX_END || f->size > PY_SYMFILE_MAX_END - f->start)
		return -E2BIG;
	if (sf->nr >= PY_SYMFILE_MAX_FUNCS || f->nr_rows > PY_SYMFILE_MAX_ROWS ||
	    f->nr_rows > PY_SYMFILE_MAX_TOTAL_ROWS - sf->nr_rows)
		return -E2BIG;
	for (size_t i = 0; i < f->nr_rows; i++)
		if (f->rows[i].offset >= f->size || (i && f->rows[i].offset <= f->rows[i - 1].offset))
			return -EINVAL;

	if ((err = grow((void **)&sf->funcs, &sf->cap, sf->nr + 1, sizeof(*sf->funcs))) ||
	    (err = grow((void **)&sf->rows, &sf->cap_rows, sf->nr_rows + f->nr_rows,
			sizeof(*sf->rows))))
		return err;
	fn = &sf->funcs[sf->nr];
	*fn = (struct func){ .start = f->start, .size = f->size, .first_row = sf->nr_rows,
			     .nr_rows = f->nr_rows };
	if (has_file) {
		const char *base = basename_of(f->file);
		size_t len = name_len + strlen(base) + 4;

		fn->name = malloc(len);
		if (fn->name)
			snprintf(fn->name, len, "%s (%s)", f->name, base);
		err = fn->name ? file_index(sf, f->file, &fn->file) : -ENOMEM;
	} else {
		fn->name = strdup(f->name);
		err = fn->name ? 0 : -ENOMEM;
	}
	if (err) {
		free(fn->name);		/* nothing else was added */
		return err;
	}
	if (f->nr_rows)
		memcpy(sf->rows + sf->nr_rows, f->rows, f->nr_rows * sizeof(*f->rows));
	sf->nr_rows += f->nr_rows;
	sf->nr++;
	if (f->start + f->size > sf->end)
		sf->end = f->start + f->size;
	return 0;
}

/* ---- DWARF encoding -------------------------------------------------------- */

static void put_u8(struct growbuf *b, uint8_t v) { growbuf_put(b, &v, 1); }
static void put_u16(struct growbuf *b, uint16_t v) { growbuf_put(b, &v, 2); }
static void put_str(struct growbuf *b, const char *s) { growbuf_put(b, s, strlen(s) + 1); }

static void put_uleb(struct growbuf *b, uint64_t v)
{
	do {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		put_u8(b, byte | (v ? 0x80 : 0));
	} while (v);
}

static void put_sleb(struct growbuf *b, int64_t v)
{
	for (;;) {
		uint8_t byte = v & 0x7f;

		v >>= 7;	/* arithmetic: gcc and clang on every target we build */
		if ((!v && !(byte & 0x40)) || (v == -1 && (byte & 0x40))) {
			put_u8(b, byte);
			return;
		}
		put_u8(b, byte | 0x80);
	}
}

/* Patch the 4-byte length at off to cover what follows it. */
static void patch_len32(struct growbuf *b, size_t off)
{
	uint32_t len = (uint32_t)(b->len - off - 4);

	if (!b->failed)
		memcpy(b->data + off, &len, 4);
}

#define DW_TAG_compile_unit	0x11
#define DW_TAG_subprogram	0x2e
#define DW_AT_name		0x03
#define DW_AT_stmt_list		0x10
#define DW_AT_low_pc		0x11
#define DW_AT_high_pc		0x12
#define DW_AT_language		0x13
#define DW_AT_producer		0x25
#define DW_AT_decl_file		0x3a
#define DW_AT_decl_line		0x3b
#define DW_FORM_addr		0x01
#define DW_FORM_data2		0x05
#define DW_FORM_data8		0x07
#define DW_FORM_string		0x08
#define DW_FORM_udata		0x0f
#define DW_FORM_sec_offset	0x17
#define DW_LNS_copy		0x01
#define DW_LNS_advance_pc	0x02
#define DW_LNS_advance_line	0x03
#define DW_LNS_set_file		0x04
#define DW_LNE_end_sequence	0x01
#define DW_LNE_set_address	0x02

enum { ABBREV_CU = 1, ABBREV_SUBPROGRAM = 2 };

static void write_abbrev(struct growbuf *b)
{
	static const uint8_t abbrev[] = {
		ABBREV_CU, DW_TAG_compile_unit, 1,
		DW_AT_producer, DW_FORM_string, DW_AT_language, DW_FORM_data2,
		DW_AT_name, DW_FORM_string, DW_AT_stmt_list, DW_FORM_sec_offset,
		DW_AT_low_pc, DW_FORM_addr, DW_AT_high_pc, DW_FORM_data8, 0, 0,
		ABBREV_SUBPROGRAM, DW_TAG_subprogram, 0,
		DW_AT_name, DW_FORM_string, DW_AT_low_pc, DW_FORM_addr,
		DW_AT_high_pc, DW_FORM_data8, DW_AT_decl_file, DW_FORM_udata,
		DW_AT_decl_line, DW_FORM_udata, 0, 0,
		0,
	};

	growbuf_put(b, abbrev, sizeof(abbrev));
}

/*
 * One CU covering [low, high), its functions as subprograms (high_pc as a
 * length, DWARF 4) with their file and first row's line as declaration:
 * hotspot gives a function the file of its declaration.
 */
static void write_info(struct growbuf *b, const struct py_symfile *sf, const char *name,
		       uint64_t low, uint64_t high)
{
	size_t start = b->len;

	growbuf_u32(b, 0);			/* unit_length, patched */
	put_u16(b, 4);				/* version */
	growbuf_u32(b, 0);			/* debug_abbrev_offset */
	put_u8(b, 8);				/* address_size */
	put_uleb(b, ABBREV_CU);
	put_str(b, "bpfrec python symbols");
	put_u16(b, DW_LANG_Python);
	put_str(b, name);
	growbuf_u32(b, 0);			/* stmt_list: the only line program */
	growbuf_u64(b, low);
	growbuf_u64(b, high - low);
	for (size_t i = 0; i < sf->nr; i++) {
		put_uleb(b, ABBREV_SUBPROGRAM);
		put_str(b, sf->funcs[i].name);
		growbuf_u64(b, sf->funcs[i].start);
		growbuf_u64(b, sf->funcs[i].size);
		put_uleb(b, sf->funcs[i].file);	/* 0: none */
		put_uleb(b, sf->funcs[i].nr_rows ? sf->rows[sf->funcs[i].first_row].line : 0);
	}
	put_u8(b, 0);				/* end of the CU's children */
	patch_len32(b, start);
}

/*
 * Address ranges of the CU, one per function: libdw (before 0.189 or so)
 * finds a CU for an address only through .debug_aranges.
 */
static void write_aranges(struct growbuf *b, const struct py_symfile *sf)
{
	size_t start = b->len;

	growbuf_u32(b, 0);			/* unit_length, patched */
	put_u16(b, 2);				/* version */
	growbuf_u32(b, 0);			/* debug_info_offset: the CU */
	put_u8(b, 8);				/* address_size */
	put_u8(b, 0);				/* segment_selector_size */
	growbuf_u32(b, 0);			/* pad the tuples to 16 bytes */
	for (size_t i = 0; i < sf->nr; i++) {
		growbuf_u64(b, sf->funcs[i].start);
		growbuf_u64(b, sf->funcs[i].size);
	}
	growbuf_u64(b, 0);
	growbuf_u64(b, 0);
	patch_len32(b, start);
}

static void put_extended(struct growbuf *b, uint8_t op, const void *arg, size_t len)
{
	put_u8(b, 0);
	put_uleb(b, len + 1);
	put_u8(b, op);
	growbuf_put(b, arg, len);
}

/* A DWARF 4 line program: every file, then one sequence per function with rows. */
static void write_line(struct growbuf *b, const struct py_symfile *sf)
{
	static const uint8_t opcode_lengths[12] = { 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
	size_t start = b->len, header;

	growbuf_u32(b, 0);			/* unit_length, patched */
	put_u16(b, 4);				/* version */
	header = b->len;
	growbuf_u32(b, 0);			/* header_length, patched */
	put_u8(b, 1);				/* minimum_instruction_length */
	put_u8(b, 1);				/* maximum_operations_per_instruction */
	put_u8(b, 1);				/* default_is_stmt */
	put_u8(b, (uint8_t)-5);			/* line_base */
	put_u8(b, 14);				/* line_range */
	put_u8(b, 13);				/* opcode_base */
	growbuf_put(b, opcode_lengths, sizeof(opcode_lengths));
	put_u8(b, 0);				/* no include_directories */
	for (size_t i = 0; i < sf->nr_files; i++) {
		put_str(b, sf->files[i]);
		put_uleb(b, 0);			/* dir: the CU's */
		put_uleb(b, 0);			/* mtime */
		put_uleb(b, 0);			/* length */
	}
	put_u8(b, 0);
	patch_len32(b, header);

	for (size_t i = 0; i < sf->nr; i++) {
		const struct func *f = &sf->funcs[i];
		const struct py_symfile_row *r = sf->rows + f->first_row;
		uint64_t addr = f->start;
		int64_t line = 1;

		if (!f->nr_rows || !f->file)
			continue;
		put_extended(b, DW_LNE_set_address, &addr, 8);
		put_u8(b, DW_LNS_set_file);
		put_uleb(b, f->file);
		for (size_t k = 0; k < f->nr_rows; k++) {
			/* The first row holds from the function's start on. */
			uint64_t at = k ? f->start + r[k].offset : f->start;

			int64_t dl = (int64_t)r[k].line - line;

			/*
			 * Both advances and the row in one special opcode where
			 * they fit (line_base -5, line_range 14, opcode_base 13):
			 * the recorder's rows are a line each, two bytes apart.
			 */
			if (at >= addr && dl >= -5 && dl <= 8 &&
			    at - addr <= (uint64_t)(255 - 13 - (dl + 5)) / 14) {
				put_u8(b, (uint8_t)(13 + (at - addr) * 14 + (uint64_t)(dl + 5)));
				addr = at;
				line = r[k].line;
				continue;
			}
			if (at > addr) {
				put_u8(b, DW_LNS_advance_pc);
				put_uleb(b, at - addr);
				addr = at;
			}
			if (r[k].line != line) {
				put_u8(b, DW_LNS_advance_line);
				put_sleb(b, (int64_t)r[k].line - line);
				line = r[k].line;
			}
			put_u8(b, DW_LNS_copy);
		}
		put_u8(b, DW_LNS_advance_pc);
		put_uleb(b, f->start + f->size - addr);
		put_extended(b, DW_LNE_end_sequence, NULL, 0);
	}
	patch_len32(b, start);
}

/* ---- the ELF ----------------------------------------------------------------- */

static int by_start(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

enum { SEC_NOTE = 1, SEC_TEXT, SEC_SYMTAB, SEC_STRTAB, SEC_ABBREV, SEC_INFO, SEC_ARANGES,
       SEC_LINE, SEC_SHSTRTAB, SEC_NR };

struct section {
	const char *name;
	uint32_t type;
	uint64_t flags, align, entsize;
	struct growbuf data;
	uint64_t offset, addr, size;
	uint32_t link, info;
};

static const char note_name[4] = "GNU";

/* Lay out the sections from off on, each at its alignment; returns the end. */
static uint64_t layout(struct section *s, uint64_t off)
{
	for (int i = SEC_SYMTAB; i < SEC_NR; i++) {
		off = (off + s[i].align - 1) & ~(s[i].align - 1);
		s[i].offset = off;
		s[i].size = s[i].data.len;
		off += s[i].size;
	}
	return off;
}

static void build_id_of(struct section *s, uint64_t text_size, uint8_t id[PY_SYMFILE_BUILD_ID_SIZE])
{
	static const uint64_t seeds[3] = { 0x7079737966696c65ull, 0x62706672656331ull,
					   0x9e3779b97f4a7c15ull };
	static const char tag[] = "bpfrec python symbol file v1";
	uint64_t h[3];

	for (int k = 0; k < 3; k++) {
		h[k] = hash_bytes(seeds[k], tag, sizeof(tag));
		h[k] = hash_bytes(h[k], &text_size, sizeof(text_size));
		for (int i = SEC_NOTE; i < SEC_NR; i++) {
			uint64_t kind[2] = { s[i].type, s[i].flags };

			h[k] = hash_bytes(h[k], kind, sizeof(kind));
			if (i != SEC_NOTE && i != SEC_TEXT)	/* the note is the id, .text zeros */
				h[k] = hash_bytes(h[k], s[i].data.data, s[i].data.len);
		}
	}
	memcpy(id, &h[0], 8);
	memcpy(id + 8, &h[1], 8);
	memcpy(id + 16, &h[2], 4);
}

static int write_elf(int fd, struct section *s, uint64_t text_end, uint64_t shoff)
{
	Elf *e = NULL;
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	int err = -EIO;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EIO;
	e = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!e || !(eh = elf64_newehdr(e)) || !(ph = elf64_newphdr(e, 2)))
		goto out;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_shoff = shoff;
	eh->e_shstrndx = SEC_SHSTRTAB;

	for (int i = 1; i < SEC_NR; i++) {
		Elf_Scn *scn = elf_newscn(e);
		Elf64_Shdr *sh;
		Elf_Data *d;

		if (!scn || !(sh = elf64_getshdr(scn)))
			goto out;
		/* .text has no data: libelf fills a laid-out section's rest with zeros. */
		if (i != SEC_TEXT) {
			if (!(d = elf_newdata(scn)))
				goto out;
			d->d_buf = s[i].data.data;
			d->d_size = s[i].data.len;
			d->d_type = ELF_T_BYTE;
			d->d_align = s[i].align;
			d->d_version = EV_CURRENT;
		}
		sh->sh_type = s[i].type;
		sh->sh_flags = s[i].flags;
		sh->sh_addr = s[i].addr;
		sh->sh_offset = s[i].offset;
		sh->sh_size = s[i].size;
		sh->sh_link = s[i].link;
		sh->sh_info = s[i].info;
		sh->sh_addralign = s[i].align;
		sh->sh_entsize = s[i].entsize;
	}
	/* Section names: offsets into .shstrtab, which holds them in section order. */
	{
		Elf_Scn *scn = NULL;
		uint32_t off = 1;

		for (int i = 1; (scn = elf_nextscn(e, scn)); i++) {
			elf64_getshdr(scn)->sh_name = off;
			off += (uint32_t)strlen(s[i].name) + 1;
		}
	}
	ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0,
			      .p_vaddr = 0, .p_paddr = 0, .p_filesz = text_end,
			      .p_memsz = text_end, .p_align = 0x1000 };
	ph[1] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_flags = PF_R, .p_offset = s[SEC_NOTE].offset,
			      .p_vaddr = s[SEC_NOTE].addr, .p_paddr = s[SEC_NOTE].addr,
			      .p_filesz = s[SEC_NOTE].size, .p_memsz = s[SEC_NOTE].size,
			      .p_align = 4 };
	elf_flagelf(e, ELF_C_SET, ELF_F_LAYOUT);
	elf_flagphdr(e, ELF_C_SET, ELF_F_DIRTY);
	if (elf_update(e, ELF_C_WRITE) < 0)
		goto out;
	err = 0;
out:
	elf_end(e);
	return err;
}

/* The file into fd; given: under build_id as it is, else under its contents' hash, into build_id. */
static int write_file(struct py_symfile *sf, const char *name, int fd,
		      uint8_t build_id[PY_SYMFILE_BUILD_ID_SIZE], bool given)
{
	struct section s[SEC_NR] = {
		[SEC_NOTE] = { .name = ".note.gnu.build-id", .type = SHT_NOTE, .flags = SHF_ALLOC, .align = 4 },
		[SEC_TEXT] = { .name = ".text", .type = SHT_PROGBITS, .flags = SHF_ALLOC | SHF_EXECINSTR, .align = 16 },
		[SEC_SYMTAB] = { .name = ".symtab", .type = SHT_SYMTAB, .flags = 0, .align = 8, .entsize = sizeof(Elf64_Sym) },
		[SEC_STRTAB] = { .name = ".strtab", .type = SHT_STRTAB, .flags = 0, .align = 1 },
		[SEC_ABBREV] = { .name = ".debug_abbrev", .type = SHT_PROGBITS, .flags = 0, .align = 1 },
		[SEC_INFO] = { .name = ".debug_info", .type = SHT_PROGBITS, .flags = 0, .align = 1 },
		[SEC_ARANGES] = { .name = ".debug_aranges", .type = SHT_PROGBITS, .flags = 0, .align = 1 },
		[SEC_LINE] = { .name = ".debug_line", .type = SHT_PROGBITS, .flags = 0, .align = 1 },
		[SEC_SHSTRTAB] = { .name = ".shstrtab", .type = SHT_STRTAB, .flags = 0, .align = 1 },
	};
	uint64_t low, end, shoff;
	uint32_t id_hdr[3] = { sizeof(note_name), PY_SYMFILE_BUILD_ID_SIZE, NT_GNU_BUILD_ID };
	int err;

	if (!sf->nr)
		return -EINVAL;
	if (name && strnlen(name, PY_SYMFILE_MAX_NAME + 1) > PY_SYMFILE_MAX_NAME)
		return -E2BIG;
	/* Sorted by start: symbols and line sequences in address order, overlaps next to each other. */
	qsort(sf->funcs, sf->nr, sizeof(*sf->funcs), by_start);
	for (size_t i = 1; i < sf->nr; i++)
		if (sf->funcs[i].start < sf->funcs[i - 1].start + sf->funcs[i - 1].size)
			return -EINVAL;
	low = sf->funcs[0].start;
	end = sf->end;

	/* .symtab: the null symbol, then one global FUNC per function. */
	growbuf_put(&s[SEC_STRTAB].data, "", 1);
	growbuf_put(&s[SEC_SYMTAB].data, NULL, sizeof(Elf64_Sym));
	for (size_t i = 0; i < sf->nr; i++) {
		Elf64_Sym sym = {
			.st_name = (uint32_t)s[SEC_STRTAB].data.len,
			.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			.st_shndx = SEC_TEXT,
			.st_value = sf->funcs[i].start,
			.st_size = sf->funcs[i].size,
		};

		if (s[SEC_STRTAB].data.len > UINT32_MAX - PY_SYMFILE_MAX_NAME * 2) {
			err = -E2BIG;
			goto out;
		}
		put_str(&s[SEC_STRTAB].data, sf->funcs[i].name);
		growbuf_put(&s[SEC_SYMTAB].data, &sym, sizeof(sym));
	}
	s[SEC_SYMTAB].link = SEC_STRTAB;
	s[SEC_SYMTAB].info = 1;		/* first global: every symbol after the null one */
	write_abbrev(&s[SEC_ABBREV].data);
	write_info(&s[SEC_INFO].data, sf, name ? name : "python", low, end);
	write_aranges(&s[SEC_ARANGES].data, sf);
	write_line(&s[SEC_LINE].data, sf);
	growbuf_put(&s[SEC_SHSTRTAB].data, "", 1);
	for (int i = 1; i < SEC_NR; i++)
		put_str(&s[SEC_SHSTRTAB].data, s[i].name);
	for (int i = 1; i < SEC_NR; i++) {
		err = growbuf_error(&s[i].data);
		if (err)
			goto out;
	}
	if (s[SEC_INFO].data.len > UINT32_MAX || s[SEC_LINE].data.len > UINT32_MAX ||
	    s[SEC_ARANGES].data.len > UINT32_MAX) {
		err = -E2BIG;	/* 32-bit DWARF */
		goto out;
	}

	/* Headers, then the note, then .text at vaddr == offset (zeros: no code), the rest after. */
	s[SEC_NOTE].offset = s[SEC_NOTE].addr = sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Phdr);
	s[SEC_NOTE].size = sizeof(id_hdr) + sizeof(note_name) + PY_SYMFILE_BUILD_ID_SIZE;
	s[SEC_TEXT].offset = s[SEC_TEXT].addr = PY_SYMFILE_TEXT_START;
	s[SEC_TEXT].size = end - PY_SYMFILE_TEXT_START;
	shoff = (layout(s, end) + 7) & ~7ull;

	if (!given)
		build_id_of(s, s[SEC_TEXT].size, build_id);
	growbuf_put(&s[SEC_NOTE].data, id_hdr, sizeof(id_hdr));
	growbuf_put(&s[SEC_NOTE].data, note_name, sizeof(note_name));
	growbuf_put(&s[SEC_NOTE].data, build_id, PY_SYMFILE_BUILD_ID_SIZE);
	err = growbuf_error(&s[SEC_NOTE].data);
	if (!err)
		err = write_elf(fd, s, end, shoff);
out:
	for (int i = 1; i < SEC_NR; i++)
		growbuf_free(&s[i].data);
	return err;
}

int py_symfile_write(struct py_symfile *sf, const char *name, int fd,
		     uint8_t build_id[PY_SYMFILE_BUILD_ID_SIZE])
{
	return write_file(sf, name, fd, build_id, false);
}

int py_symfile_write_id(struct py_symfile *sf, const char *name, int fd,
			const uint8_t build_id[PY_SYMFILE_BUILD_ID_SIZE])
{
	uint8_t id[PY_SYMFILE_BUILD_ID_SIZE];

	memcpy(id, build_id, sizeof(id));
	return write_file(sf, name, fd, id, true);
}
