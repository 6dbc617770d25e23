// SPDX-License-Identifier: MIT
/* elfsym.c - ELF/DWARF symbolization of one file with libdw's Dwfl (elfsym.h). */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "symbolize/cache.h"
#include "symbolize/elfsym.h"
#include "symbolize/scopes.h"
#include "symbolize/symtab.h"
#include "symbolize/util.h"

struct elf_file {
	const struct debug_paths *dp;
	char *orig_path;	/* as recorded */
	char *binary_path;	/* the file reported to Dwfl */
	uint8_t build_id[BUILDID_MAX];	/* of binary_path; size 0 when it has none */
	size_t build_id_size;
	char *debuglink;	/* its .gnu_debuglink, to tell dwz alt requests apart */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	uint64_t bias;		/* Dwfl address = ELF address + bias */
	struct load_seg *segs;
	size_t nr_segs;
	bool offsets_lost;	/* a debug-only file: PT_LOAD p_offset is meaningless */
	struct cache paths;	/* absolute source paths made here; the key is the string */
	int dwarf_state;	/* 0 not checked yet, 1 usable, -1 not to be used */
	struct symtab *symtab;	/* read on first use */
	struct scope_cache scopes;
	struct elf_file_id ids[ELF_FILE_MAX_IDS];	/* the files handed to libdw */
	size_t nr_ids;
	size_t paths_bytes;	/* heap of the paths cache */
};

/* The longest inline chain kept while walking; the result keeps SYM_MAX_FRAMES. */
#define MAX_CHAIN 64

/* Remember the file at fd, which libdw maps, for elf_file_ids(). */
static void note_file(struct elf_file *f, int fd)
{
	struct stat st;

	if (f->nr_ids < ELF_FILE_MAX_IDS && !fstat(fd, &st))
		f->ids[f->nr_ids++] = (struct elf_file_id){ .dev = st.st_dev, .ino = st.st_ino };
}

static int find_elf_none(Dwfl_Module *mod, void **userdata, const char *modname,
			 Dwarf_Addr base, char **file_name, Elf **elfp)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name, (void)elfp;
	return -1;	/* every module is reported with its file already open */
}

/*
 * libdw calls this for the separate debug info of a binary that lacks
 * .symtab or DWARF, and again, once it has DWARF, for the dwz file named by
 * .gnu_debugaltlink (then debuglink_file is that name, not the binary's
 * own .gnu_debuglink). Returns an fd libdw owns, or -1.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct elf_file *f = userdata ? *userdata : NULL;
	struct found_file found;
	int err;

	(void)mod, (void)modname, (void)base;
	if (!f)
		return -1;
	if (debuglink_file && (!f->debuglink || strcmp(debuglink_file, f->debuglink)))
		err = debugfind_altfile(f->dp, file_name, debuglink_file, &found);
	else
		err = debugfind_debuginfo(f->dp, f->orig_path, f->binary_path,
					  f->build_id_size ? f->build_id : NULL, f->build_id_size,
					  debuglink_file, debuglink_crc, &found);
	if (err)
		return -1;
	note_file(f, found.fd);
	*debuginfo_file_name = found.path;
	return found.fd;
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = find_elf_none,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static int read_segments(struct elf_file *f, Elf *elf)
{
	int err = elf_load_segments(elf, false, &f->segs, &f->nr_segs);

	/* objcopy --only-keep-debug keeps the segments but not their bytes. */
	for (size_t i = 0; i < f->nr_segs; i++)
		if (f->segs[i].exec && !f->segs[i].filesz && f->segs[i].memsz)
			f->offsets_lost = true;
	return err;
}

static int read_identity(struct elf_file *f, Elf *elf)
{
	const void *id;
	const char *link;
	GElf_Word crc;
	ssize_t len;

	len = dwelf_elf_gnu_build_id(elf, &id);
	if (len > 0 && (size_t)len <= BUILDID_MAX) {
		memcpy(f->build_id, id, (size_t)len);
		f->build_id_size = (size_t)len;
	}
	link = dwelf_elf_gnu_debuglink(elf, &crc);
	if (link && !(f->debuglink = strdup(link)))
		return -ENOMEM;
	return 0;
}

int elf_file_open(const struct debug_paths *dp, const char *path, const struct found_file *bin,
		  struct elf_file **out)
{
	struct found_file found;
	struct elf_file *f;
	void **userdata;
	GElf_Addr bias;
	Elf *elf;
	int err;

	err = found_file_dup(bin, &found);
	if (err)
		return err;
	f = calloc(1, sizeof(*f));
	if (!f) {
		close(found.fd);
		free(found.path);
		return -ENOMEM;
	}
	f->dp = dp;
	f->binary_path = found.path;
	f->orig_path = strdup(path);
	f->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!f->orig_path || !f->dwfl) {
		close(found.fd);
		err = -ENOMEM;
		goto fail;
	}
	note_file(f, found.fd);
	dwfl_report_begin(f->dwfl);
	/* ET_DYN at base 0 + p_vaddr: Dwfl addresses are the ELF's own. */
	f->mod = dwfl_report_elf(f->dwfl, path, f->binary_path, found.fd, 0, true);
	if (!f->mod) {
		close(found.fd);
		dwfl_report_end(f->dwfl, NULL, NULL);
		err = -ENOENT;
		goto fail;
	}
	dwfl_report_end(f->dwfl, NULL, NULL);
	dwfl_module_info(f->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = f;
	elf = dwfl_module_getelf(f->mod, &bias);
	if (!elf) {
		err = -ENOENT;
		goto fail;
	}
	f->bias = bias;
	err = read_identity(f, elf);
	if (!err)
		err = read_segments(f, elf);
	if (err)
		goto fail;
	*out = f;
	return 0;
fail:
	elf_file_free(f);
	return err;
}

size_t elf_file_size(const struct elf_file *f)
{
	if (!f)
		return 0;
	return sizeof(*f) + f->paths_bytes + f->scopes.bytes + symtab_size(f->symtab) +
	       f->nr_segs * sizeof(*f->segs);
}

size_t elf_file_ids(const struct elf_file *f, struct elf_file_id *ids)
{
	memcpy(ids, f->ids, f->nr_ids * sizeof(*ids));
	return f->nr_ids;
}

void elf_file_free(struct elf_file *f)
{
	if (!f)
		return;
	if (f->dwfl)
		dwfl_end(f->dwfl);
	cache_clear(&f->paths, NULL);
	symtab_free(f->symtab);
	scope_cache_clear(&f->scopes);
	free(f->segs);
	free(f->debuglink);
	free(f->orig_path);
	free(f->binary_path);
	free(f);
}

static int to_elf_addr(const struct elf_file *f, const struct sym_mapping *m, uint64_t addr,
		       uint64_t *vaddr)
{
	uint64_t rel, page = (uint64_t)sysconf(_SC_PAGESIZE);

	if (addr < m->start || (m->len && addr - m->start >= m->len))
		return -ENOENT;
	rel = addr - m->start;
	if (!f->offsets_lost) {
		uint64_t off = rel + m->pgoff;

		for (size_t i = 0; i < f->nr_segs; i++) {
			const struct load_seg *s = &f->segs[i];

			if (off >= s->offset && off - s->offset < s->filesz) {
				*vaddr = s->vaddr + (off - s->offset);
				return 0;
			}
		}
		return -ENOENT;
	}
	/* The loader maps a segment from the page holding its p_vaddr. */
	for (int want_exec = 1; want_exec >= 0; want_exec--) {
		for (size_t i = 0; i < f->nr_segs; i++) {
			const struct load_seg *s = &f->segs[i];
			uint64_t v = (s->vaddr & ~(page - 1)) + rel;

			if (s->exec == want_exec && v >= s->vaddr && v - s->vaddr < s->memsz) {
				*vaddr = v;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* Names as in the symbol table: the linkage name when there is one. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!name)
		name = dwarf_diename(die);
	return name;
}

/*
 * Source paths in DWARF may be relative to the CU's DW_AT_comp_dir (gcc
 * writes them as given on its command line): return them absolute, in
 * strings that live as long as f. Falls back to the path as it is.
 */
static const char *absolute_path(struct elf_file *f, Dwarf_Die *cudie, const char *path)
{
	Dwarf_Attribute attr;
	struct cache_entry *e;
	const char *dir;
	size_t dlen, plen;
	char *joined;

	if (!path || path[0] == '/')
		return path;
	dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
	if (!dir || dir[0] != '/')
		return path;
	dlen = strlen(dir);
	plen = strlen(path);
	joined = malloc(dlen + 1 + plen + 1);
	if (!joined)
		return path;
	memcpy(joined, dir, dlen);
	joined[dlen] = '/';
	memcpy(joined + dlen + 1, path, plen + 1);
	e = cache_get(&f->paths, joined, dlen + plen + 2);
	if (!e && (e = cache_add(&f->paths, joined, dlen + plen + 2)))
		f->paths_bytes += sizeof(*e) + dlen + plen + 2;
	free(joined);
	return e ? (const char *)e->key : path;
}

/*
 * The inline chain at DWARF address pc, innermost first. file/line enter as
 * the line-table answer for pc (the innermost frame's); each inlined
 * subroutine passes its call site on to the frame that contains it.
 */
static size_t inline_chain(struct elf_file *f, Dwarf_Die *cudie, Dwarf_Addr pc,
			   const char *file, int line, struct sym_frame *frames)
{
	Dwarf_Die scopes[MAX_CHAIN];
	Dwarf_Files *files = NULL;
	size_t nfiles = 0, nscopes, n = 0;

	nscopes = scope_chain(&f->scopes, cudie, pc, scopes, MAX_CHAIN);
	if (nscopes && dwarf_getsrcfiles(cudie, &files, &nfiles))
		files = NULL;
	for (size_t i = 0; i < nscopes; i++) {
		Dwarf_Die *die = &scopes[i];
		Dwarf_Attribute attr;
		Dwarf_Word v;
		int tag = dwarf_tag(die);

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;	/* lexical blocks */
		frames[n].function = die_name(die);
		frames[n].file = file;
		frames[n].line = line;
		n++;
		if (tag != DW_TAG_inlined_subroutine)
			break;
		file = NULL;
		line = 0;
		if (files && !dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &v) &&
		    v < nfiles)
			file = absolute_path(f, cudie, dwarf_filesrc(files, v, NULL, NULL));
		if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &v) && v <= INT32_MAX)
			line = (int)v;
	}
	return n;
}

/*
 * Whether the DWARF of f can be trusted. libdw falls back to opening the
 * dwz alt file at its recorded path (or /usr/lib/debug) without checking
 * its build-id: when the alt file it ended up with is not the one the
 * .gnu_debugaltlink names, names from it would be garbage, so the DWARF is
 * not used at all and answers come from the symbol table.
 */
static bool dwarf_usable(struct elf_file *f)
{
	const void *want_id, *alt_id;
	const char *altname;
	ssize_t want_len, alt_len;
	Dwarf_Addr bias;
	Dwarf *dw, *alt;

	if (f->dwarf_state)
		return f->dwarf_state > 0;
	f->dwarf_state = 1;
	dw = dwfl_module_getdwarf(f->mod, &bias);
	if (!dw)
		return true;	/* nothing to distrust: lookups just find no DWARF */
	want_len = dwelf_dwarf_gnu_debugaltlink(dw, &altname, &want_id);
	if (want_len <= 0)
		return true;
	alt = dwarf_getalt(dw);
	if (!alt)
		return true;	/* names in the alt file stay unknown */
	alt_len = dwelf_elf_gnu_build_id(dwarf_getelf(alt), &alt_id);
	if (alt_len != want_len || memcmp(alt_id, want_id, (size_t)want_len))
		f->dwarf_state = -1;
	return f->dwarf_state > 0;
}

int elf_file_symbolize(struct elf_file *f, const struct sym_mapping *m, uint64_t addr,
		       bool no_inlines, struct sym_result *out)
{
	struct sym_frame chain[MAX_CHAIN];
	const char *symname, *file = NULL;
	Dwarf_Addr a, cubias = 0;
	Dwarf_Die *cudie;
	Dwfl_Line *dl;
	uint64_t vaddr;
	size_t n = 0;
	int line = 0;

	memset(out, 0, sizeof(*out));
	if (to_elf_addr(f, m, addr, &vaddr))
		return -ENOENT;
	a = vaddr + f->bias;
	if (!f->symtab && symtab_load(f->mod, &f->symtab))
		return -ENOMEM;
	symname = symtab_lookup(f->symtab, a);
	cudie = dwarf_usable(f) ? dwfl_module_addrdie(f->mod, a, &cubias) : NULL;
	if (cudie) {
		dl = dwfl_module_getsrc(f->mod, a);
		if (dl)
			file = absolute_path(f, cudie,
					     dwfl_lineinfo(dl, NULL, &line, NULL, NULL, NULL));
		if (line < 0)
			line = 0;
		n = inline_chain(f, cudie, a - cubias, file, line, chain);
	}
	if (n == 0) {
		if (!symname && !file)
			return -ENOENT;
		chain[0] = (struct sym_frame){ .function = symname, .file = file, .line = line };
		n = 1;
	} else if (symname) {
		/* The outermost function as perf names it (foo.cold, foo.isra.0). */
		chain[n - 1].function = symname;
	}

	if (no_inlines) {
		out->frames[0] = chain[n - 1];
		out->nr_frames = 1;
	} else if (n > SYM_MAX_FRAMES) {
		memcpy(out->frames, chain, (SYM_MAX_FRAMES - 1) * sizeof(*chain));
		out->frames[SYM_MAX_FRAMES - 1] = chain[n - 1];
		out->nr_frames = SYM_MAX_FRAMES;
	} else {
		memcpy(out->frames, chain, n * sizeof(*chain));
		out->nr_frames = n;
	}
	for (size_t i = 0; i < out->nr_frames; i++) {
		out->has_functions |= out->frames[i].function != NULL;
		out->has_filenames |= out->frames[i].file != NULL;
		out->has_line_numbers |= out->frames[i].line > 0;
	}
	/* DWARF scopes were searched: the chain is complete, even if 1 long. */
	out->has_inline_frames = cudie != NULL && !no_inlines;
	return 0;
}
