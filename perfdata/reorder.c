// SPDX-License-Identifier: MIT
/*
 * reorder.c - the timestamp reordering queue (see reorder.h).
 *
 * Records are copied into one growing byte arena (8-byte aligned) and
 * indexed by (time, sequence number, offset). A flush sorts the index,
 * delivers the prefix that is due, and moves what remains into a fresh
 * arena, so every record is copied a small constant number of times.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "reorder.h"
#include "tools/lib/array.h"

struct entry {
	uint64_t time, seq;
	size_t off;
};

struct perfdata_reorder {
	perfdata_reorder_fn fn;
	void *ctx;
	size_t mem_limit;
	uint8_t *arena;
	size_t used, cap;
	struct entry *e;
	size_t nr, ecap;
	uint64_t seq;
	uint64_t max_time;	/* newest time pushed */
	uint64_t next_flush;	/* deliver up to this at the next round end */
	bool sorted;
};

int perfdata_reorder_new(size_t mem_limit, perfdata_reorder_fn fn, void *ctx, struct perfdata_reorder **out)
{
	struct perfdata_reorder *q = calloc(1, sizeof(*q));

	if (!q)
		return -ENOMEM;
	q->fn = fn;
	q->ctx = ctx;
	q->mem_limit = mem_limit ? mem_limit : (size_t)256 << 20;
	q->sorted = true;
	*out = q;
	return 0;
}

void perfdata_reorder_free(struct perfdata_reorder *q)
{
	if (!q)
		return;
	free(q->arena);
	free(q->e);
	free(q);
}

size_t perfdata_reorder_queued(const struct perfdata_reorder *q)
{
	return q->nr;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Deliver the first `count` entries (sorted) and keep the rest. */
static int deliver(struct perfdata_reorder *q, size_t count)
{
	int err = 0;
	size_t i;

	for (i = 0; i < count && !err; i++) {
		const struct perf_event_header *h = (const void *)(q->arena + q->e[i].off);

		err = q->fn(h, q->e[i].time, q->ctx);
	}
	if (err)
		return err;

	/* Move the remaining records to a fresh arena, in delivery order. */
	size_t rest = 0;

	for (i = count; i < q->nr; i++) {
		const struct perf_event_header *h = (const void *)(q->arena + q->e[i].off);

		rest += (h->size + 7) & ~(size_t)7;
	}
	uint8_t *arena = NULL;
	size_t cap = 0, used = 0;

	if (rest) {
		cap = rest > q->cap / 2 ? rest * 2 : q->cap / 2;
		arena = malloc(cap);
		if (!arena)
			return -ENOMEM;
	}
	for (i = count; i < q->nr; i++) {
		const struct perf_event_header *h = (const void *)(q->arena + q->e[i].off);
		struct entry e = q->e[i];

		memcpy(arena + used, h, h->size);
		e.off = used;
		used += (h->size + 7) & ~(size_t)7;
		q->e[i - count] = e;
	}
	free(q->arena);
	q->arena = arena;
	q->cap = cap;
	q->used = used;
	q->nr -= count;
	return 0;
}

/*
 * A round holds one sorted run per CPU buffer (plus the sorted leftover of
 * the last round), so a natural merge sort - find the runs, merge them
 * pairwise - takes O(n log runs) instead of qsort's O(n log n). Stable:
 * (time, seq) keys are unique anyway.
 */
static int sort_entries(struct perfdata_reorder *q)
{
	struct entry *tmp, *src = q->e, *dst;
	size_t n = q->nr;

	if (q->sorted || n < 2) {
		q->sorted = true;
		return 0;
	}
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp) {
		qsort(q->e, n, sizeof(*q->e), cmp_entry);	/* in place, no memory needed */
		q->sorted = true;
		return 0;
	}
	dst = tmp;
	for (;;) {
		size_t i = 0, runs = 0;

		while (i < n) {
			size_t a = i, b, end;

			/* [a, b) and [b, end) are the next two runs */
			for (b = a + 1; b < n && cmp_entry(&src[b - 1], &src[b]) <= 0; b++)
				;
			for (end = b < n ? b + 1 : b; end < n && cmp_entry(&src[end - 1], &src[end]) <= 0; end++)
				;
			size_t x = a, y = b, o = a;

			while (x < b && y < end)
				dst[o++] = cmp_entry(&src[y], &src[x]) < 0 ? src[y++] : src[x++];
			while (x < b)
				dst[o++] = src[x++];
			while (y < end)
				dst[o++] = src[y++];
			i = end;
			runs++;
		}
		struct entry *t = src;

		src = dst;
		dst = t;
		if (runs == 1)
			break;
	}
	if (src != q->e)
		memcpy(q->e, src, n * sizeof(*src));
	free(tmp);
	q->sorted = true;
	return 0;
}

static int flush_upto(struct perfdata_reorder *q, uint64_t upto)
{
	size_t n = 0;

	sort_entries(q);
	while (n < q->nr && q->e[n].time <= upto)
		n++;
	return n ? deliver(q, n) : 0;
}

int perfdata_reorder_push(struct perfdata_reorder *q, uint64_t time, const struct perf_event_header *h)
{
	size_t size = (h->size + 7) & ~(size_t)7;

	if (h->size < sizeof(*h))
		return -EINVAL;
	if (q->used > q->mem_limit && q->nr > 1) {
		/* No round in sight: deliver the oldest half to bound memory. */
		int err;

		sort_entries(q);
		err = deliver(q, q->nr / 2);
		if (err)
			return err;
	}
	if (ARRAY_RESERVE(q->arena, q->cap, q->used + size, 1 << 20))
		return -ENOMEM;
	if (ARRAY_RESERVE(q->e, q->ecap, q->nr + 1, 4096))
		return -ENOMEM;
	memcpy(q->arena + q->used, h, h->size);
	if (size > h->size)
		memset(q->arena + q->used + h->size, 0, size - h->size);
	if (q->nr && cmp_entry(&q->e[q->nr - 1], &(struct entry){ time, q->seq, 0 }) > 0)
		q->sorted = false;
	q->e[q->nr++] = (struct entry){ .time = time, .seq = q->seq++, .off = q->used };
	q->used += size;
	if (time > q->max_time)
		q->max_time = time;
	return 0;
}

int perfdata_reorder_round(struct perfdata_reorder *q)
{
	int err = flush_upto(q, q->next_flush);

	q->next_flush = q->max_time;
	return err;
}

int perfdata_reorder_flush(struct perfdata_reorder *q)
{
	return flush_upto(q, UINT64_MAX);
}
