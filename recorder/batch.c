// SPDX-License-Identifier: MIT
/* batch.c - a time-sorted batch of records (contract in batch.h). */
#include <stdlib.h>
#include <string.h>

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

void batch_set_len(struct batch *b, size_t i, size_t len)
{
	if (len < b->ents[i].len)
		b->ents[i].len = len;
}

int batch_keep_from(struct batch *b, size_t from)
{
	size_t n = from < b->nr ? b->nr - from : 0, kept = 0, cap;
	uint8_t *data;

	if (!n) {
		batch_clear(b);
		return 0;
	}
	memmove(b->ents, b->ents + from, n * sizeof(*b->ents));
	b->nr = n;
	for (size_t i = 0; i < n; i++)
		kept += (b->ents[i].len + 7) & ~(size_t)7;
	/* Reclaim the written records' room once it is most of the arena. */
	if (b->len <= 2 * kept + (1u << 20))
		return 0;
	cap = 64 << 10;
	while (cap < 2 * kept)
		cap *= 2;
	data = malloc(cap);
	if (!data)
		return 0;	/* the arena stays as it is: still correct */
	b->len = 0;
	for (size_t i = 0; i < n; i++) {
		struct batch_entry *e = &b->ents[i];

		memcpy(data + b->len, b->data + e->off, e->len);
		e->off = b->len;
		b->len += (e->len + 7) & ~(size_t)7;
	}
	free(b->data);
	b->data = data;
	b->cap = cap;
	return 0;
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
