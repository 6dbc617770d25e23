// SPDX-License-Identifier: MIT
/* symtab.c - sorted function symbols of a Dwfl module (symtab.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gelf.h>

#include "symbolize/symtab.h"
#include "symbolize/util.h"
#include "tools/lib/sorted.h"

struct sym {
	uint64_t addr, size;
	const char *name;
	uint32_t index;		/* table order: keeps the sort deterministic */
	uint8_t bind;
};

struct symtab {
	struct sym *syms;
	size_t nr;
	size_t cap;		/* syms allocated, for symtab_size() */
};

static bool is_code_symbol(const GElf_Sym *sym, GElf_Word shndx, const char *name)
{
	int type = GELF_ST_TYPE(sym->st_info);

	if (!name || !*name)
		return false;
	if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
		return false;
	/* dwfl reports -1 for symbols of non-allocated sections. */
	return shndx != SHN_UNDEF && shndx != SHN_ABS && shndx != (GElf_Word)-1;
}

/* By address, then in table order (the order perf keeps aliases in). */
static int sym_cmp(const void *pa, const void *pb)
{
	const struct sym *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/*
 * Move perf's choice among the aliases at syms[0..n) to syms[0]. perf
 * gives a zero-sized ELF symbol the room up to the next symbol, so it stays
 * zero-sized only when an alias follows it in table order.
 */
static void pick_alias(struct sym *syms, size_t n)
{
	size_t best = 0;

	for (size_t i = 1; i < n; i++) {
		struct sym_alias a = {
			.name = syms[best].name, .sized = syms[best].size || best == n - 1,
			.weak = syms[best].bind == STB_WEAK, .global = syms[best].bind == STB_GLOBAL,
		};
		struct sym_alias b = {
			.name = syms[i].name, .sized = syms[i].size || i == n - 1,
			.weak = syms[i].bind == STB_WEAK, .global = syms[i].bind == STB_GLOBAL,
		};

		if (sym_alias_replaces(&a, &b))
			best = i;
	}
	if (best) {
		struct sym tmp = syms[0];

		syms[0] = syms[best];
		syms[best] = tmp;
	}
}

int symtab_load(Dwfl_Module *mod, struct symtab **out)
{
	struct symtab *st = calloc(1, sizeof(*st));
	int n = dwfl_module_getsymtab(mod);

	if (!st)
		return -ENOMEM;
	if (n > 1) {
		st->syms = calloc((size_t)n, sizeof(*st->syms));
		st->cap = (size_t)n;
		if (!st->syms) {
			free(st);
			return -ENOMEM;
		}
	}
	for (int i = 1; i < n; i++) {
		GElf_Word shndx;
		GElf_Addr addr;
		GElf_Sym sym;
		const char *name;
		struct sym *s;

		name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
		if (!is_code_symbol(&sym, shndx, name))
			continue;
		s = &st->syms[st->nr++];
		s->addr = addr;
		s->size = sym.st_size;
		s->name = name;
		s->index = (uint32_t)i;
		s->bind = GELF_ST_BIND(sym.st_info);
	}
	if (st->nr)
		qsort(st->syms, st->nr, sizeof(*st->syms), sym_cmp);
	for (size_t i = 0, j; i < st->nr; i = j) {
		for (j = i + 1; j < st->nr && st->syms[j].addr == st->syms[i].addr; j++)
			;
		if (j - i > 1)
			pick_alias(&st->syms[i], j - i);
	}
	*out = st;
	return 0;
}

size_t symtab_size(const struct symtab *st)
{
	return st ? sizeof(*st) + st->cap * sizeof(*st->syms) : 0;
}

void symtab_free(struct symtab *st)
{
	if (!st)
		return;
	free(st->syms);
	free(st);
}

const char *symtab_lookup(const struct symtab *st, uint64_t addr)
{
	size_t n = SORTED_COUNT_LE(st->syms, st->nr, addr, addr), first, last;
	uint64_t size = 0;

	if (n == 0)
		return NULL;
	last = n - 1;
	first = last;
	while (first > 0 && st->syms[first - 1].addr == st->syms[last].addr)
		first--;
	/* The chosen alias's extent, as perf keeps only that one. */
	size = st->syms[first].size;
	if (size) {
		if (addr - st->syms[first].addr >= size)
			return NULL;
	} else if (last + 1 == st->nr) {
		return NULL;	/* a sizeless last symbol: no end to trust */
	}
	return st->syms[first].name;
}
