/* SPDX-License-Identifier: MIT */
/*
 * opts.h - copy a caller's sz-versioned options struct (bpfrec/common.h)
 * into the library's own, and the library's statistics into the caller's;
 * internal.
 *
 * The caller's struct may be older (smaller sz: the fields it lacks keep
 * their zero defaults) or newer (larger sz: accepted only when every byte
 * the library does not know is zero, so nothing the caller asked for is
 * silently ignored).
 */
#ifndef PERFDATA_OPTS_H
#define PERFDATA_OPTS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * Copy opts (NULL = all defaults) into dst of dst_sz bytes, whose first
 * field is the size_t sz. 0, or -EINVAL for a sz too small to hold sz
 * itself or for non-zero bytes beyond dst_sz.
 */
static inline int opts_copy(void *dst, size_t dst_sz, const void *opts)
{
	const uint8_t *src = opts;
	size_t sz;

	memset(dst, 0, dst_sz);
	if (!opts)
		return 0;
	memcpy(&sz, src, sizeof(sz));
	if (sz < sizeof(size_t))
		return -EINVAL;
	for (size_t i = dst_sz; i < sz; i++)
		if (src[i])
			return -EINVAL;
	memcpy(dst, src, sz < dst_sz ? sz : dst_sz);
	return 0;
}

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

#endif /* PERFDATA_OPTS_H */
