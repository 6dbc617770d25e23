/* SPDX-License-Identifier: MIT */
/*
 * buf.h - a growable byte buffer, for payloads built piece by piece
 * (perf.data feature sections, the recorder's task descriptions).
 *
 * Allocation failure is sticky: appends after it are dropped and
 * perfdata_buf_error() reports -ENOMEM once, at the end.
 */
#ifndef PERFDATA_BUF_H
#define PERFDATA_BUF_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct perfdata_buf {
	uint8_t *data;
	size_t len, cap;
	bool failed;
};

/* n free bytes at the end, to be filled and then added to len; NULL on failure. */
static inline uint8_t *perfdata_buf_room(struct perfdata_buf *b, size_t n)
{
	if (b->failed)
		return NULL;
	if (n > b->cap - b->len) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *p;

		while (cap - b->len < n)
			cap *= 2;
		p = realloc(b->data, cap);
		if (!p) {
			b->failed = true;
			return NULL;
		}
		b->data = p;
		b->cap = cap;
	}
	return b->data + b->len;
}

static inline void perfdata_buf_put(struct perfdata_buf *b, const void *src, size_t n)
{
	if (!perfdata_buf_room(b, n))
		return;
	if (src)
		memcpy(b->data + b->len, src, n);
	else
		memset(b->data + b->len, 0, n);
	b->len += n;
}

static inline void perfdata_buf_u32(struct perfdata_buf *b, uint32_t v) { perfdata_buf_put(b, &v, 4); }
static inline void perfdata_buf_u64(struct perfdata_buf *b, uint64_t v) { perfdata_buf_put(b, &v, 8); }

static inline int perfdata_buf_error(const struct perfdata_buf *b) { return b->failed ? -ENOMEM : 0; }

static inline void perfdata_buf_free(struct perfdata_buf *b)
{
	free(b->data);
	*b = (struct perfdata_buf){ 0 };
}

#endif /* PERFDATA_BUF_H */
