/* SPDX-License-Identifier: MIT */
/*
 * opts.h - copy a caller's sz-versioned options struct (bpfrec/common.h)
 * into the library's own, and the library's statistics into the caller's;
 * internal.
 *
 * The caller's struct may be older (smaller sz: the fields it lacks keep
 * their zero defaults) or newer (larger sz: accepted only when every byte
 * past the library's last field is zero, so nothing the caller asked for
 * is silently ignored). Each public options struct names its last field
 * right after its declaration (#define TYPE__last_field NAME); adding a
 * field means moving that line.
 */
#ifndef TOOLS_LIB_OPTS_H
#define TOOLS_LIB_OPTS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * Copy opts (NULL = all defaults) into dst of dst_sz bytes, whose first
 * field is the size_t sz. known is how many bytes of it this library
 * knows: the end of the struct's last field (OPTS_KNOWN()), not its
 * sizeof, so that a field a newer header adds inside the old trailing
 * padding is not silently ignored. 0, or -EINVAL for a sz too small to
 * hold sz itself or for non-zero bytes at or beyond known.
 */
static inline int opts_copy(void *dst, size_t dst_sz, size_t known, const void *opts)
{
	const uint8_t *src = opts;
	size_t sz;

	memset(dst, 0, dst_sz);
	if (!opts)
		return 0;
	memcpy(&sz, src, sizeof(sz));
	if (sz < sizeof(size_t))
		return -EINVAL;
	for (size_t i = known; i < sz; i++)
		if (src[i])
			return -EINVAL;
	memcpy(dst, src, sz < known ? sz : known);
	return 0;
}

/*
 * The bytes of struct TYPE up to the end of its last field, as the public
 * header names it (TYPE##__last_field, libbpf's convention).
 */
#define OPTS_KNOWN(TYPE) \
	(offsetof(struct TYPE, TYPE##__last_field) + \
	 sizeof(((struct TYPE *)0)->TYPE##__last_field))

/* opts_copy() into *DST, a struct TYPE. */
#define OPTS_COPY(DST, TYPE, OPTS) opts_copy((DST), sizeof(struct TYPE), OPTS_KNOWN(TYPE), (OPTS))

/*
 * The other way: fill the caller's struct (its sz says how much it has)
 * from the library's full one, src of src_sz bytes whose sz field is
 * ignored. A caller's struct larger than ours gets zeros beyond; sz keeps
 * the caller's value. -EINVAL when the caller's sz cannot hold sz itself.
 */
static inline int opts_copy_out(void *dst, const void *src, size_t src_sz)
{
	size_t sz;

	memcpy(&sz, dst, sizeof(sz));
	if (sz < sizeof(size_t))
		return -EINVAL;
	memcpy((uint8_t *)dst + sizeof(size_t), (const uint8_t *)src + sizeof(size_t),
	       (sz < src_sz ? sz : src_sz) - sizeof(size_t));
	if (sz > src_sz)
		memset((uint8_t *)dst + src_sz, 0, sz - src_sz);
	return 0;
}

#endif /* TOOLS_LIB_OPTS_H */
