// SPDX-License-Identifier: MIT
/* batch.c - a time-sorted batch of records (contract in batch.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "recorder/batch.h"

#define BATCH_MIN_BYTES		(64u << 10)
#define BATCH_MIN_ENTS		1024u	/* 32 KiB: whole pages, as every size below */

/*
 * An anonymous mapping of `to` bytes (page multiples) with what p held
 * (old bytes of it); p = NULL for a new one, to = 0 to unmap. NULL on
 * ENOMEM (p is left as it was). Not malloc: glibc keeps a large block
 * freed in its heap once its mmap threshold has risen, and the batch's
 * bursts would stay resident.
 */
static void *arena_resize(void *p, size_t old, size_t to)
{
	void *q;

	if (!to) {
		if (p)
			munmap(p, old);
		return NULL;
	}
	if (!p)
		q = mmap(NULL, to, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	else
		q = mremap(p, old, to, MREMAP_MAYMOVE);
	return q == MAP_FAILED ? NULL : q;
}

/* The smallest power of two >= need, at least min. */
static size_t pow2_at_least(size_t need, size_t min)
{
	size_t cap = min;

	while (cap < need)
		cap *= 2;
	return cap;
}

void *batch_add(struct batch *b, uint64_t time, size_t len)
{
	size_t room = (len + 7) & ~(size_t)7;
	struct batch_entry *e;

	if (b->len + room > b->cap) {
		size_t cap = pow2_at_least(b->len + room, b->cap ? b->cap : BATCH_MIN_BYTES);
		uint8_t *data = arena_resize(b->data, b->cap, cap);

		if (!data)
			return NULL;
		b->data = data;
		b->cap = cap;
	}
	if (b->nr == b->cap_ents) {
		size_t cap = b->cap_ents ? 2 * b->cap_ents : BATCH_MIN_ENTS;

		e = arena_resize(b->ents, b->cap_ents * sizeof(*e), cap * sizeof(*e));
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

/*
 * A round ended holding b->len bytes in b->nr records: every
 * BATCH_SHRINK_ROUNDS rounds, what is over four times the most those held
 * goes back (to twice that; a failed shrink leaves it as it is).
 */
static void round_ended(struct batch *b)
{
	size_t cap;
	void *p;

	if (b->len > b->round_peak)
		b->round_peak = b->len;
	if (b->nr > b->round_peak_nr)
		b->round_peak_nr = b->nr;
	if (++b->rounds < BATCH_SHRINK_ROUNDS)
		return;
	cap = pow2_at_least(2 * b->round_peak, BATCH_MIN_BYTES);
	if (b->cap > 2 * cap && (p = arena_resize(b->data, b->cap, cap))) {
		b->data = p;
		b->cap = cap;
	}
	cap = pow2_at_least(2 * b->round_peak_nr, BATCH_MIN_ENTS);
	if (b->cap_ents > 2 * cap &&
	    (p = arena_resize(b->ents, b->cap_ents * sizeof(*b->ents), cap * sizeof(*b->ents)))) {
		b->ents = p;
		b->cap_ents = cap;
	}
	b->rounds = 0;
	b->round_peak = b->round_peak_nr = 0;
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
	if (b->len <= 2 * kept + (1u << 20)) {
		round_ended(b);
		return 0;
	}
	cap = pow2_at_least(2 * kept, BATCH_MIN_BYTES);
	data = arena_resize(NULL, 0, cap);
	if (!data) {
		round_ended(b);
		return 0;	/* the arena stays as it is: still correct */
	}
	b->len = 0;
	for (size_t i = 0; i < n; i++) {
		struct batch_entry *e = &b->ents[i];

		memcpy(data + b->len, b->data + e->off, e->len);
		e->off = b->len;
		b->len += (e->len + 7) & ~(size_t)7;
	}
	arena_resize(b->data, b->cap, 0);
	b->data = data;
	b->cap = cap;
	round_ended(b);
	return 0;
}

void batch_clear(struct batch *b)
{
	round_ended(b);
	b->len = 0;
	b->nr = 0;
}

void batch_free(struct batch *b)
{
	arena_resize(b->data, b->cap, 0);
	arena_resize(b->ents, b->cap_ents * sizeof(*b->ents), 0);
	*b = (struct batch){ 0 };
}
