// SPDX-License-Identifier: MIT
/* Unit tests for perfdata/reorder.c: perf's FINISHED_ROUND ordering rule. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "perfdata/reorder.h"

struct rec {
	struct perf_event_header h;
	uint64_t tag;
	uint8_t pad[40];
};

struct seen {
	uint64_t tags[4096];
	uint64_t times[4096];
	size_t n;
	size_t stop_after;	/* return -EIO after this many, 0 = never */
};

static int collect(const struct perf_event_header *h, uint64_t time, void *ctx)
{
	struct seen *s = ctx;
	const struct rec *r = (const void *)h;

	cr_assert_eq((uintptr_t)h % 8, 0, "records are delivered 8-byte aligned");
	cr_assert_lt(s->n, 4096);
	cr_assert_eq(r->pad[h->size - sizeof(r->h) - sizeof(r->tag) - 1], 0xaa, "bytes copied");
	s->tags[s->n] = r->tag;
	s->times[s->n++] = time;
	if (s->stop_after && s->n == s->stop_after)
		return -EIO;
	return 0;
}

static void push(struct perfdata_reorder *q, uint64_t time, uint64_t tag, uint16_t size)
{
	struct rec r = { .h = { .type = PERF_RECORD_SAMPLE, .size = size }, .tag = tag };

	memset(r.pad, 0xaa, sizeof(r.pad));
	cr_assert_eq(perfdata_reorder_push(q, time, &r.h), 0);
}

/* Records to push in order: time, tag, size. */
struct push_rec {
	uint64_t time, tag;
	uint16_t size;
};
#define PUSH_ALL(q, ...) \
	do { \
		static const struct push_rec r_[] = { __VA_ARGS__ }; \
		for (size_t i_ = 0; i_ < sizeof(r_) / sizeof(r_[0]); i_++) \
			push(q, r_[i_].time, r_[i_].tag, r_[i_].size); \
	} while (0)

/* A queue of at most `limit` bytes (0: no limit) that collects into s. */
static struct perfdata_reorder *queue(struct seen *s, size_t limit)
{
	struct perfdata_reorder *q;

	cr_assert_eq(perfdata_reorder_new(limit, collect, s, &q), 0);
	return q;
}

/* Records from..from+n-1 delivered were those tagged want[0..n-1]. */
static void expect_tags(const struct seen *s, size_t from, const uint64_t *want, size_t n)
{
	cr_assert_geq(s->n, from + n, "%zu delivered", s->n);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(s->tags[from + i], want[i], "record %zu: tag %lu, want %lu", from + i,
			     (unsigned long)s->tags[from + i], (unsigned long)want[i]);
}
#define EXPECT_TAGS(s, from, ...) \
	expect_tags(s, from, (const uint64_t[]){ __VA_ARGS__ }, \
		    sizeof((uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t))

Test(reorder, round_rule)
{
	struct seen s = { 0 };
	struct perfdata_reorder *q = queue(&s, 0);

	/* Round 1: two CPUs' buffers, each sorted, together not. */
	PUSH_ALL(q, { 10, 1, 24 }, { 30, 2, 24 }, { 20, 3, 24 });
	cr_assert_eq(perfdata_reorder_round(q), 0);
	cr_assert_eq(s.n, 0, "nothing is due at the first round end");
	/* Round 2 may still hold records older than 30, but not older than round 1's start. */
	PUSH_ALL(q, { 25, 4, 24 }, { 40, 5, 24 });
	cr_assert_eq(perfdata_reorder_round(q), 0);
	/* Due: everything up to 30 (the newest before round 1 ended). */
	cr_assert_eq(s.n, 4);
	EXPECT_TAGS(&s, 0, 1, 3, 4, 2);
	cr_assert_eq(perfdata_reorder_queued(q), 1);
	push(q, 35, 6, 24);
	cr_assert_eq(perfdata_reorder_flush(q), 0);
	cr_assert_eq(s.n, 6);
	EXPECT_TAGS(&s, 4, 6, 5);
	cr_assert_eq(s.times[5], 40);
	cr_assert_eq(perfdata_reorder_queued(q), 0);
	perfdata_reorder_free(q);
}

Test(reorder, equal_times_keep_file_order)
{
	struct seen s = { 0 };
	struct perfdata_reorder *q = queue(&s, 0);

	/* Synthesized records (time 0) then samples at the same time. */
	for (uint64_t i = 0; i < 100; i++)
		push(q, i % 3 ? 0 : 5, i, 24 + 8 * (i % 5));
	cr_assert_eq(perfdata_reorder_flush(q), 0);
	cr_assert_eq(s.n, 100);
	uint64_t last_zero = 0, last_five = 0;

	for (size_t i = 0; i < s.n; i++) {
		if (s.times[i] == 0) {
			cr_assert(i == 0 || s.tags[i] > last_zero);
			last_zero = s.tags[i];
		} else {
			cr_assert(s.times[i - 1] <= 5);
			cr_assert(!last_five || s.tags[i] > last_five);
			last_five = s.tags[i];
		}
	}
	cr_assert_eq(s.times[65], 0, "all 66 time-0 records come first");
	cr_assert_eq(s.times[66], 5);
	perfdata_reorder_free(q);
}

/* Records whose size is not a multiple of 8 (malformed but possible) stay aligned. */
Test(reorder, odd_sizes)
{
	struct seen s = { 0 };
	struct perfdata_reorder *q = queue(&s, 0);

	PUSH_ALL(q, { 3, 1, 17 }, { 1, 2, 21 }, { 2, 3, 48 });
	cr_assert_eq(perfdata_reorder_flush(q), 0);
	cr_assert_eq(s.n, 3);
	EXPECT_TAGS(&s, 0, 2, 3, 1);
	perfdata_reorder_free(q);
}

Test(reorder, memory_limit_without_rounds)
{
	struct seen s = { 0 };
	struct perfdata_reorder *q = queue(&s, 1024);

	/* 1 KiB limit, 32-byte records: the queue must start delivering by itself. */
	for (uint64_t i = 0; i < 1000; i++)
		push(q, 1000 - i, i, 32);
	cr_assert_gt(s.n, 0, "delivered before the end");
	cr_assert_lt(perfdata_reorder_queued(q), 100, "%zu queued", perfdata_reorder_queued(q));
	cr_assert_eq(perfdata_reorder_flush(q), 0);
	cr_assert_eq(s.n, 1000, "nothing lost");
	perfdata_reorder_free(q);
}

Test(reorder, callback_error_stops)
{
	struct seen s = { .stop_after = 2 };
	struct perfdata_reorder *q = queue(&s, 0);

	for (uint64_t i = 0; i < 5; i++)
		push(q, i, i, 24);
	cr_assert_eq(perfdata_reorder_flush(q), -EIO);
	cr_assert_eq(s.n, 2);
	perfdata_reorder_free(q);
}

Test(reorder, rejects_short_record)
{
	struct seen s = { 0 };
	struct perfdata_reorder *q;
	struct perf_event_header h = { .type = 9, .size = 4 };

	cr_assert_eq(perfdata_reorder_new(0, collect, &s, &q), 0);
	cr_assert_eq(perfdata_reorder_push(q, 1, &h), -EINVAL);
	perfdata_reorder_free(q);
}

/* Many interleaved sorted runs (one per "CPU"), equal times across runs:
 * delivery is sorted by time and, for equal times, in push order. */
static int check_order(const struct perf_event_header *h, uint64_t time, void *ctx)
{
	uint64_t *last = ctx;	/* [0] time, [1] tag */
	const struct rec *r = (const void *)h;

	cr_assert_geq(time, last[0], "time went back");
	if (time == last[0])
		cr_assert_gt(r->tag, last[1], "equal times out of push order");
	last[0] = time;
	last[1] = r->tag;
	last[2]++;
	return 0;
}

Test(reorder, merges_many_runs)
{
	uint64_t last[3] = { 0, 0, 0 };
	struct perfdata_reorder *q;
	uint64_t x = 88172645463325252ULL, tag = 1;

	cr_assert_eq(perfdata_reorder_new(0, check_order, last, &q), 0);
	for (int round = 0; round < 20; round++) {
		/* 7 "CPUs", each a sorted run of random length with repeated times */
		for (int cpu = 0; cpu < 7; cpu++) {
			uint64_t t = round * 1000;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			for (uint64_t n = x % 300; n; n--) {
				struct rec r = { .h = { .type = 9, .size = 24 }, .tag = tag++ };

				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				t += x % 3;	/* 0: the same time again */
				r.pad[7] = 0xaa;
				cr_assert_eq(perfdata_reorder_push(q, t, &r.h), 0);
			}
		}
		cr_assert_eq(perfdata_reorder_round(q), 0);
	}
	cr_assert_eq(perfdata_reorder_flush(q), 0);
	cr_assert_eq(last[2], tag - 1, "every record delivered once");
	perfdata_reorder_free(q);
}
