/* SPDX-License-Identifier: MIT */
/*
 * util.h - small helpers shared by the symbolize library (internal).
 */
#ifndef SYMBOLIZE_UTIL_H
#define SYMBOLIZE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gelf.h>

/* Read a whole file, also one whose size stat() does not know (/proc).
 * *buf is NUL-terminated (one spare byte past *len); free() it. 0 or -errno. */
int read_whole_file(const char *path, char **buf, size_t *len);
/* The same from an open fd (read from its current offset; fd stays open). */
int read_whole_fd(int fd, char **buf, size_t *len);
/* read_whole_fd() that starts with first bytes where fstat() gives no size
 * (procfs reports 0), rather than the 1 MiB that fits a kallsyms. */
int read_whole_fd_sized(int fd, size_t first, char **buf, size_t *len);

/* The value of the hexadecimal digit c (either case), or -1: for the text
 * parsers of kallsyms, maps files and JIT maps. */
static inline int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* malloc'd concatenation of the NULL-terminated list of strings, or NULL. */
char *str_join(const char *first, ...) __attribute__((sentinel));

/*
 * One symbol among several at one address, as perf sees it when it picks
 * the name to show (choose_best_symbol() in perf's util/symbol.c).
 * sized: the symbol covers at least one byte once perf has fixed up the
 * ends: an ELF st_size, or the distance to the next symbol perf loaded. A
 * zero-sized symbol followed by an alias therefore stays zero-sized, and
 * in /proc/kallsyms (no sizes at all) only the last alias in file order
 * is sized.
 */
struct sym_alias {
	const char *name;
	bool sized;
	bool weak;
	bool global;
};

/*
 * perf's rule for aliases, applied to them in table order: does cand
 * replace best (the winner so far, earlier in the table)? In order: a sized
 * symbol, a non-weak one, a global one, fewer leading underscores, the
 * longer name; on a full tie best stays unless its name starts with "SyS"
 * or "compat_SyS" (old syscall wrappers). One rule for kallsyms and ELF.
 */
bool sym_alias_replaces(const struct sym_alias *best, const struct sym_alias *cand);

/* The one way bpfrec opens an ELF file (read through mmap, libelf initialized).
 * Open path read-only as an ELF file: 0 with *fd and
 * *elf (release with elf_end() and close()), -EINVAL when it is not ELF, -errno. */
int elf_open_path(const char *path, int *fd, Elf **elf);
/* The same for a file already open (safeopen.h): 0 with *elf, -EINVAL when it
 * is not ELF. fd stays open and must outlive *elf. */
int elf_open_fd(int fd, Elf **elf);

/* A PT_LOAD segment: file bytes [offset, offset + filesz) at ELF address vaddr. */
struct load_seg {
	uint64_t offset, vaddr, filesz, memsz;
	bool exec;
};

/* The PT_LOAD segments of elf, in file order (exec_only: only executable
 * ones), into a malloc'd array: 0, -ENOENT when there is none, -EINVAL, -ENOMEM
 * (on an error *segs is NULL).
 * Segments whose file or address range wraps around 2^64 are left out. */
int elf_load_segments(Elf *elf, bool exec_only, struct load_seg **segs, size_t *nr);

/*
 * The load bias of a mapping [start, start + len) of elf from file offset
 * pgoff (runtime address = ELF address + bias): the file offset at start
 * is pgoff, and the executable PT_LOAD the mapping covers says which ELF
 * address that is. Non-PIE executables come out at 0. 0, -ENOENT when the
 * mapping covers no executable segment, or elf_load_segments()'s error.
 */
int elf_mapping_bias(Elf *elf, uint64_t start, uint64_t len, uint64_t pgoff, uint64_t *bias);
/* The same from segs (elf_load_segments(), exec_only), kept from an earlier look: 0 or -ENOENT. */
int load_segs_bias(const struct load_seg *segs, size_t nr, uint64_t start, uint64_t len,
		   uint64_t pgoff, uint64_t *bias);

/*
 * Call fn(sym, name, ctx) for each defined symbol with a name in elf's
 * symbol tables of type sh_type (SHT_DYNSYM or SHT_SYMTAB), in table order,
 * until fn returns non-zero: that value is returned, else 0. Only the
 * entries a section's data really holds are read, and names only through
 * libelf's bounded string lookup: the file may be anyone's.
 */
typedef int (*elf_symbol_fn)(const GElf_Sym *sym, const char *name, void *ctx);
int elf_for_each_symbol(Elf *elf, uint32_t sh_type, elf_symbol_fn fn, void *ctx);

/*
 * Copy the len bytes the file holds for ELF address addr into buf: all of
 * them within the file part of one PT_LOAD (initialized data, not .bss) and
 * within the file itself, whatever its headers claim. 0, -ENOENT when no
 * segment holds them all, -EINVAL, -ENOMEM.
 */
int elf_read_addr(Elf *elf, uint64_t addr, void *buf, size_t len);

/*
 * The file offsets of the functions names[0, n) (defined STT_FUNC
 * symbols, from .dynsym, else .symtab) into offsets[0, n):
 * where a uprobe goes. 0 for a name not found. 0 when at least one was
 * found, -ENOENT when none, -EINVAL, -ENOMEM.
 */
int elf_func_offsets(Elf *elf, const char *const *names, size_t n, uint64_t *offsets);

#endif /* SYMBOLIZE_UTIL_H */
