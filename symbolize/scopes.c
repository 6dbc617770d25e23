// SPDX-License-Identifier: MIT
/* scopes.c - per-CU function index and scope chains (scopes.h). */
#include <dwarf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/scopes.h"
#include "tools/lib/array.h"
#include "tools/lib/sorted.h"

/* Deeper DIE nesting than this is not followed (recursion bound). */
#define MAX_DEPTH 64

struct fn_range {
	Dwarf_Addr lo, hi;
	Dwarf_Die die;
};

struct cu_index {
	struct fn_range *ranges;
	size_t nr, cap;
	Dwarf_Addr max_len;	/* bounds the backward scan over overlapping ranges */
	bool failed;		/* out of memory while building: answers nothing */
};

static void add_range(struct cu_index *ix, Dwarf_Addr lo, Dwarf_Addr hi, const Dwarf_Die *die)
{
	if (ix->failed || hi <= lo)
		return;
	if (ARRAY_RESERVE(ix->ranges, ix->cap, ix->nr + 1, 64)) {
		ix->failed = true;
		return;
	}
	ix->ranges[ix->nr++] = (struct fn_range){ .lo = lo, .hi = hi, .die = *die };
	if (hi - lo > ix->max_len)
		ix->max_len = hi - lo;
}

/* Every function with code under parent, nested ones (C++ namespaces, GNU C) too. */
static void index_children(struct cu_index *ix, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;

	if (depth > MAX_DEPTH || dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_subprogram) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;

			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0)
				add_range(ix, lo, hi, &child);
		}
		if (dwarf_haschildren(&child) > 0)
			index_children(ix, &child, depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int range_cmp(const void *pa, const void *pb)
{
	const struct fn_range *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->hi < b->hi ? -1 : a->hi > b->hi;
}

static void free_index(void *p)
{
	struct cu_index *ix = p;

	free(ix->ranges);
	free(ix);
}

void scope_cache_clear(struct scope_cache *sc)
{
	cache_clear(&sc->cus, free_index);
	sc->bytes = 0;
}

static struct cu_index *cu_index_of(struct scope_cache *sc, Dwarf_Die *cudie)
{
	Dwarf_Off off = dwarf_dieoffset(cudie);
	struct cache_entry *e = cache_get(&sc->cus, &off, sizeof(off));
	struct cu_index *ix;

	if (e)
		return e->value;
	ix = calloc(1, sizeof(*ix));
	if (!ix)
		return NULL;
	e = cache_add(&sc->cus, &off, sizeof(off));
	if (!e) {
		free(ix);
		return NULL;
	}
	e->value = ix;
	index_children(ix, cudie, 0);
	if (ix->nr)
		qsort(ix->ranges, ix->nr, sizeof(*ix->ranges), range_cmp);
	sc->bytes += sizeof(*e) + sizeof(off) + sizeof(*ix) + ix->cap * sizeof(*ix->ranges);
	return ix;
}

/* The smallest function range containing pc. */
static const struct fn_range *find_function(const struct cu_index *ix, Dwarf_Addr pc)
{
	const struct fn_range *best = NULL;
	size_t n = SORTED_COUNT_LE(ix->ranges, ix->nr, lo, pc);

	for (size_t i = n; i-- > 0;) {
		const struct fn_range *r = &ix->ranges[i];

		if (pc - r->lo >= ix->max_len)
			break;
		if (pc < r->hi && (!best || r->hi - r->lo < best->hi - best->lo))
			best = r;
	}
	return best;
}

static bool has_range_attrs(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges);
}

/*
 * The child scope of parent that contains pc: an inlined subroutine or a
 * block with that address. Blocks without any address attributes are
 * looked through (gcc leaves some whose code all went to inlined children).
 */
static bool child_containing(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *out, int depth)
{
	Dwarf_Die child;

	if (depth > MAX_DEPTH || dwarf_child(parent, &child) != 0)
		return false;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_inlined_subroutine:
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
			if (dwarf_haspc(&child, pc) > 0) {
				*out = child;
				return true;
			}
			if (!has_range_attrs(&child) && child_containing(&child, pc, out, depth + 1))
				return true;
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

size_t scope_chain(struct scope_cache *sc, Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Die *out,
		   size_t max)
{
	Dwarf_Die chain[MAX_DEPTH + 1], cur;
	const struct fn_range *fn;
	struct cu_index *ix;
	size_t n = 0;

	if (!max)
		return 0;
	ix = cu_index_of(sc, cudie);
	if (!ix || ix->failed)
		return 0;
	fn = find_function(ix, pc);
	if (!fn)
		return 0;
	chain[n++] = fn->die;
	cur = fn->die;
	while (n < MAX_DEPTH + 1 && child_containing(&cur, pc, &cur, 0))
		chain[n++] = cur;
	/* Innermost first; when cut, keep the innermost and the function. */
	if (n > max) {
		for (size_t i = 0; i < max - 1; i++)
			out[i] = chain[n - 1 - i];
		out[max - 1] = chain[0];
		return max;
	}
	for (size_t i = 0; i < n; i++)
		out[i] = chain[n - 1 - i];
	return n;
}
