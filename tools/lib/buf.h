/* SPDX-License-Identifier: MIT */
/*
 * buf.h - a growable byte buffer, for payloads built piece by piece
 * (perf.data feature sections, the recorder's task descriptions).
 *
 * Allocation failure is sticky: appends after it are dropped and
 * growbuf_error() reports -ENOMEM once, at the end.
 */
#ifndef TOOLS_LIB_BUF_H
#define TOOLS_LIB_BUF_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/array.h"

struct growbuf {
	uint8_t *data;
	size_t len, cap;
	bool failed;
};

/* n free bytes at the end, to be filled and then added to len; NULL on failure. */
static inline uint8_t *growbuf_room(struct growbuf *b, size_t n)
{
	if (b->failed)
		return NULL;
	if (n > SIZE_MAX - b->len || ARRAY_RESERVE(b->data, b->cap, b->len + n, 256)) {
		b->failed = true;
		return NULL;
	}
	return b->data + b->len;
}

static inline void growbuf_put(struct growbuf *b, const void *src, size_t n)
{
	if (!growbuf_room(b, n))
		return;
	if (src)
		memcpy(b->data + b->len, src, n);
	else
		memset(b->data + b->len, 0, n);
	b->len += n;
}

static inline void growbuf_u32(struct growbuf *b, uint32_t v) { growbuf_put(b, &v, 4); }
static inline void growbuf_u64(struct growbuf *b, uint64_t v) { growbuf_put(b, &v, 8); }

static inline int growbuf_error(const struct growbuf *b) { return b->failed ? -ENOMEM : 0; }

static inline void growbuf_free(struct growbuf *b)
{
	free(b->data);
	*b = (struct growbuf){ 0 };
}

#endif /* TOOLS_LIB_BUF_H */
