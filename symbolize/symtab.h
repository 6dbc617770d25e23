/* SPDX-License-Identifier: MIT */
/*
 * symtab.h - the function symbols of one Dwfl module, sorted for binary
 * search (internal to the symbolize library).
 *
 * libdw's dwfl_module_addrinfo() scans the whole symbol table on every
 * call; a profile asks about thousands of addresses in libraries with tens
 * of thousands of symbols, so the table is read once into a sorted array.
 *
 * Kept: STT_FUNC, STT_GNU_IFUNC and STT_NOTYPE (assembly labels) symbols
 * defined in an allocated section; never data, ABS or undefined symbols.
 * A symbol covers [value, value + size), or up to the next symbol when its
 * size is 0. Among aliases at one address the one perf shows wins, by
 * perf's rule (util.h, sym_alias_replaces()) over the aliases in table
 * order, where a zero-sized alias counts as sized only when it is the last
 * at its address; the winner's extent is the symbol's. Names live as long
 * as the module.
 */
#ifndef SYMBOLIZE_SYMTAB_H
#define SYMBOLIZE_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdwfl.h>

struct symtab;

/* 0 (an empty table when the module has no symbols) or -ENOMEM. */
int symtab_load(Dwfl_Module *mod, struct symtab **out);
void symtab_free(struct symtab *st);
/* Heap bytes the table holds (its names are in the file's mapped strtab). */
size_t symtab_size(const struct symtab *st);
/* The symbol containing Dwfl address addr, or NULL. */
const char *symtab_lookup(const struct symtab *st, uint64_t addr);

#endif /* SYMBOLIZE_SYMTAB_H */
