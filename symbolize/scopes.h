/* SPDX-License-Identifier: MIT */
/*
 * scopes.h - the DWARF scopes that contain an address: its function and
 * the inlined subroutines and lexical blocks nested in it (internal).
 *
 * dwarf_getscopes() walks a CU's DIE tree from the top for every address,
 * and past an inlined instance it continues with the abstract definition's
 * scopes rather than the physical callers, so its answer needs a second
 * walk (dwarf_getscopes_die). For big CUs that costs hundreds of
 * microseconds per address. Here each CU is walked once: its functions'
 * address ranges go into a sorted index; a lookup then binary-searches the
 * function and descends only inside it.
 */
#ifndef SYMBOLIZE_SCOPES_H
#define SYMBOLIZE_SCOPES_H

#include <stddef.h>

#include <elfutils/libdw.h>

#include "symbolize/cache.h"

/* Per-file state: one index per CU, built on first use. Zero-initialize. */
struct scope_cache {
	struct cache cus;
	size_t bytes;		/* heap the indexes hold, for the symbolizer's size */
};

void scope_cache_clear(struct scope_cache *sc);

/*
 * The scopes of cudie containing DWARF address pc, innermost first and the
 * function (DW_TAG_subprogram) last: at most max DIEs, the outermost kept
 * when there are more. 0 when no function of the CU contains pc.
 */
size_t scope_chain(struct scope_cache *sc, Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Die *out,
		   size_t max);

#endif /* SYMBOLIZE_SCOPES_H */
