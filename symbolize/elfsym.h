/* SPDX-License-Identifier: MIT */
/*
 * elfsym.h - symbolize addresses of one ELF file with libdw (internal).
 *
 * One elf_file per distinct (path, build-id) of a recording: it owns a Dwfl
 * with the file reported at its ELF addresses (bias 0), opened when first
 * needed and kept open; every string it returns lives as long as it does.
 *
 * A runtime address becomes an ELF address through the mapping: the file
 * offset (addr - start + pgoff) lies in one PT_LOAD, whose p_vaddr gives the
 * ELF address; this holds for PIE, shared libraries and non-PIE executables
 * alike. When only a separate debug file is left (build-id cache), its
 * program headers have lost the file offsets: the mapping is then taken to
 * be the one of the segment that contains the address, executable first.
 *
 * Symbols: the function of an address is the ELF symbol (.symtab, else
 * .dynsym; symtab.h) that contains it, as perf shows it; DWARF adds
 * file:line and the inline chain (scopes.h), innermost first, where each
 * outer frame's line is the call site of the frame inside it. Without
 * DWARF, the symbol alone. DWARF whose dwz alt file fails its build-id
 * check is not used at all.
 */
#ifndef SYMBOLIZE_ELFSYM_H
#define SYMBOLIZE_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/debugfind.h"
#include "symbolize/symbolize.h"

struct elf_file;

/* Open bin, the binary found (debugfind_binary) for a mapping of `path`;
 * the elf_file holds a duplicate of its fd (found_file_dup), bin stays the
 * caller's. dp must outlive the elf_file. 0, -ENOENT when libdw cannot
 * read it, -ENOMEM. */
int elf_file_open(const struct debug_paths *dp, const char *path, const struct found_file *bin,
		  struct elf_file **out);
void elf_file_free(struct elf_file *f);
/*
 * About the heap bytes of the tables made here (symbol table, scope
 * indexes, source paths). libdw's own parse state (CUs, abbreviations, line
 * tables) is not counted.
 */
size_t elf_file_size(const struct elf_file *f);

/* A file libdw has mapped for f: the binary, its debug file, the dwz file. */
struct elf_file_id {
	uint64_t dev, ino;
};
#define ELF_FILE_MAX_IDS 4
/* The files libdw was handed for f, at most ELF_FILE_MAX_IDS: how many. */
size_t elf_file_ids(const struct elf_file *f, struct elf_file_id *ids);

/* addr inside mapping m of this file. 0, or -ENOENT (out->nr_frames = 0). */
int elf_file_symbolize(struct elf_file *f, const struct sym_mapping *m, uint64_t addr,
		       bool no_inlines, struct sym_result *out);

#endif /* SYMBOLIZE_ELFSYM_H */
