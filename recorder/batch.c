// SPDX-License-Identifier: MIT
/* batch.c - a time-sorted batch of records (contract in batch.h). */
#include <stdlib.h>

#include "recorder/batch.h"

void *batch_add(struct batch *b, uint64_t time, size_t len)
{
	size_t room = (len + 7) & ~(size_t)7;
	struct batch_entry *e;

	if (b->len + room > b->cap) {
		size_t cap = b->cap ? b->cap : 64 << 10;
		uint8_t *data;

		while (cap < b->len + room)
			cap *= 2;
		data = realloc(b->data, cap);
		if (!data)
			return NULL;
		b->data = data;
		b->cap = cap;
	}
	if (b->nr == b->cap_ents) {
		size_t cap = b->cap_ents ? 2 * b->cap_ents : 1024;

		e = realloc(b->ents, cap * sizeof(*e));
		if (!e)
			return NULL;
		b->ents = e;
		b->cap_ents = cap;
	}
	e = &b->ents[b->nr++];
	e->time = time;
	e->seq = b->seq++;
	e->off = b->len;
	e->len = len;
	b->len += room;
	return b->data + e->off;
}

static int cmp_entry(const void *pa, const void *pb)
{
	const struct batch_entry *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

void batch_sort(struct batch *b)
{
	if (b->nr > 1)
		qsort(b->ents, b->nr, sizeof(*b->ents), cmp_entry);
}

const void *batch_get(const struct batch *b, size_t i, size_t *len)
{
	*len = b->ents[i].len;
	return b->data + b->ents[i].off;
}

void batch_clear(struct batch *b)
{
	b->len = 0;
	b->nr = 0;
}

void batch_free(struct batch *b)
{
	free(b->data);
	free(b->ents);
	*b = (struct batch){ 0 };
}
