/* SPDX-License-Identifier: MIT */
/*
 * opts.h - copy a caller's sz-versioned options struct (bpfrec/common.h)
 * into the library's own, internal.
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

#endif /* PERFDATA_OPTS_H */
