/* SPDX-License-Identifier: MIT */
/*
 * array.h - room in a growable array: the one spelling of "when it is
 * full, double it" (libbpf's libbpf_ensure_mem() does the same).
 *
 * An array is a pointer and a capacity in elements (size_t); how many are
 * used is the caller's. ARRAY_RESERVE(v, cap, nr + 1, 64) before storing
 * v[nr]: on failure nothing changed, so an array is never left with fewer
 * slots than its count.
 */
#ifndef TOOLS_LIB_ARRAY_H
#define TOOLS_LIB_ARRAY_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * Room for need elements of elem_sz bytes in *data, which holds *cap: when
 * it is short, the capacity doubles (from first, for an empty array) until
 * need fits. 0, or -ENOMEM with *data and *cap as they were.
 */
static inline int array_reserve(void **data, size_t *cap, size_t need, size_t elem_sz,
				size_t first)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : first;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (elem_sz && ncap > SIZE_MAX / elem_sz)
		return -ENOMEM;
	p = realloc(*data, ncap * elem_sz);
	if (!p)
		return -ENOMEM;
	*data = p;
	*cap = ncap;
	return 0;
}

/*
 * array_reserve() for a typed pointer lvalue v and a size_t lvalue cap
 * counted in rows of n elements of *v (a statement expression: no pointer
 * is accessed through another type).
 */
#define ARRAY_RESERVE_ROWS(v, cap, need, n, first) ({				\
	void *array_p_ = (v);							\
	int array_err_ = array_reserve(&array_p_, &(cap), (need), (n) * sizeof(*(v)), \
				       (first));				\
	(v) = array_p_;								\
	array_err_;								\
})

/* The same with cap counted in elements of *v. */
#define ARRAY_RESERVE(v, cap, need, first) ARRAY_RESERVE_ROWS(v, cap, need, 1, first)

#endif /* TOOLS_LIB_ARRAY_H */
