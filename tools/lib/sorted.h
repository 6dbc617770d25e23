/* SPDX-License-Identifier: MIT */
/*
 * sorted.h - the one binary search of bpfrec's user-space code, for every
 * sorted array (symbols, mappings, ids, interval ends, names). Generic
 * code every module uses, so in tools/lib/ with the hash table.
 *
 * SORTED_PARTITION(nr, i, below) evaluates to the number of leading indices
 * of [0, nr) for which the expression `below` (which reads the index
 * variable named i) is true, with O(log nr) evaluations. `below` must be
 * true for a prefix of the indices and false for the rest, as a comparison
 * against a key is on an array sorted by that key. So:
 *   below = a[i].key <= key: one past the last element <= key (0: none);
 *   below = a[i].key <  key: the first element >= key (nr: none);
 *   below = a[i].end <= key: the first element whose end is above key.
 * SORTED_COUNT_LE(a, nr, field, key) is the first of these.
 *
 * A macro rather than a function taking a comparator: the searches run per
 * sample and per address, and each call inlines to a plain loop over its
 * own array. The BPF side has its own (bpf/unwind.h, UNWIND_LAST_LE): the
 * verifier needs a bounded loop.
 */
#ifndef TOOLS_LIB_SORTED_H
#define TOOLS_LIB_SORTED_H

#include <stddef.h>

#define SORTED_PARTITION(nr, i, below)                                     \
	__extension__({                                                    \
		size_t sorted_lo_ = 0, sorted_hi_ = (nr);                  \
		while (sorted_lo_ < sorted_hi_) {                          \
			size_t i = sorted_lo_ + (sorted_hi_ - sorted_lo_) / 2; \
			if (below)                                         \
				sorted_lo_ = i + 1;                        \
			else                                               \
				sorted_hi_ = i;                            \
		}                                                          \
		sorted_lo_;                                                \
	})

/* How many elements of a[0..nr), sorted by field, have field <= key. */
#define SORTED_COUNT_LE(a, nr, field, key)                                 \
	SORTED_PARTITION(nr, sorted_i_, (a)[sorted_i_].field <= (key))

#endif /* TOOLS_LIB_SORTED_H */
