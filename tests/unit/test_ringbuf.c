// SPDX-License-Identifier: MIT
/*
 * test_ringbuf.c - the ring buffer reader (recorder/ringbuf.h) over rings
 * laid out in memory as the kernel lays them out (kernel/bpf/ringbuf.c):
 * an 8-byte header per record (length, busy and discard bits), records
 * padded to 8, positions that only grow, data that wraps at the end.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/bpf.h>
#include <string.h>

#include "recorder/ringbuf.h"

#define AREA 64

struct fake_ring {
	uint64_t cons, prod;
	uint8_t data[AREA];
	struct ringbuf_mem mem;
};

struct seen {
	char recs[8][32];
	size_t lens[8];
	int n;
	int stop_at;	/* return -EXDEV on this call (1-based), 0: never */
};

static void fake_init(struct fake_ring *r, uint64_t start)
{
	memset(r, 0, sizeof(*r));
	r->cons = r->prod = start;
	r->mem = (struct ringbuf_mem){ .consumer_pos = &r->cons, .producer_pos = &r->prod,
				       .data = r->data, .mask = AREA - 1 };
}

/* Append a record as a producer would: header, bytes (wrapping), padding. */
static void produce(struct fake_ring *r, const char *bytes, uint32_t flags)
{
	uint32_t len = (uint32_t)strlen(bytes), hdr[2] = { len | flags, 0 };

	for (size_t i = 0; i < sizeof(hdr); i++)
		r->data[(r->prod + i) & (AREA - 1)] = ((uint8_t *)hdr)[i];
	for (uint32_t i = 0; i < len; i++)
		r->data[(r->prod + BPF_RINGBUF_HDR_SZ + i) & (AREA - 1)] = (uint8_t)bytes[i];
	r->prod += (len + BPF_RINGBUF_HDR_SZ + 7) / 8 * 8;
}

/* Clear a record's busy bit, as bpf_ringbuf_submit() does. */
static void commit_at(struct fake_ring *r, uint64_t pos)
{
	r->data[((pos & (AREA - 1)) + 3)] &= 0x7f;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct seen *s = ctx;

	cr_assert(s->n < 8 && size < sizeof(s->recs[0]));
	memcpy(s->recs[s->n], data, size);
	s->recs[s->n][size] = '\0';
	s->lens[s->n] = size;
	s->n++;
	return s->stop_at == s->n ? -EXDEV : 0;
}

Test(ringbuf, records_in_order_and_consumer_moves)
{
	struct fake_ring r;
	struct seen s = { 0 };

	fake_init(&r, 0);
	produce(&r, "alpha", 0);
	produce(&r, "bravo-charlie", 0);
	cr_assert_eq(ringbuf_mem_consume(&r.mem, on_record, &s), 2);
	cr_expect_str_eq(s.recs[0], "alpha");
	cr_expect_eq(s.lens[0], 5);
	cr_expect_str_eq(s.recs[1], "bravo-charlie");
	cr_expect_eq(r.cons, r.prod, "consumer at %lu, producer at %lu",
		     (unsigned long)r.cons, (unsigned long)r.prod);
	/* Nothing new: nothing handed over. */
	cr_expect_eq(ringbuf_mem_consume(&r.mem, on_record, &s), 0);
}

/* A record whose bytes run past the end of the area reads as one piece. */
Test(ringbuf, record_that_wraps)
{
	struct fake_ring r;
	struct seen s = { 0 };

	fake_init(&r, 1000 * AREA + 40);	/* the header at 40, the bytes at 48..71 */
	produce(&r, "0123456789abcdefghijklmn", 0);
	cr_assert_eq(ringbuf_mem_consume(&r.mem, on_record, &s), 1);
	cr_expect_str_eq(s.recs[0], "0123456789abcdefghijklmn");
	cr_expect_eq(r.cons, 1000 * AREA + 40 + 32);
	free(r.mem.bounce);
}

Test(ringbuf, discarded_skipped_busy_waits)
{
	struct fake_ring r;
	struct seen s = { 0 };
	uint64_t busy;

	fake_init(&r, 0);
	produce(&r, "dropped", BPF_RINGBUF_DISCARD_BIT);
	produce(&r, "kept", 0);
	busy = r.prod;
	produce(&r, "inflight", BPF_RINGBUF_BUSY_BIT);
	produce(&r, "after", 0);
	cr_assert_eq(ringbuf_mem_consume(&r.mem, on_record, &s), 1);
	cr_expect_str_eq(s.recs[0], "kept");
	cr_expect_eq(r.cons, busy, "the reader must stop at a record being written");
	commit_at(&r, busy);
	cr_assert_eq(ringbuf_mem_consume(&r.mem, on_record, &s), 2);
	cr_expect_str_eq(s.recs[1], "inflight");
	cr_expect_str_eq(s.recs[2], "after");
	cr_expect_eq(r.cons, r.prod);
}

/* A callback's error stops the reading, past the record it refused. */
Test(ringbuf, callback_error_stops_after_its_record)
{
	struct fake_ring r;
	struct seen s = { .stop_at = 1 };
	uint64_t second;

	fake_init(&r, 0);
	produce(&r, "one", 0);
	second = r.prod;
	produce(&r, "two", 0);
	cr_assert_eq(ringbuf_mem_consume(&r.mem, on_record, &s), -EXDEV);
	cr_expect_eq(r.cons, second);
	s.stop_at = 0;
	cr_assert_eq(ringbuf_mem_consume(&r.mem, on_record, &s), 1);
	cr_expect_str_eq(s.recs[1], "two");
}

/* A length no kernel writes is an error, never a read past the area. */
Test(ringbuf, impossible_length)
{
	struct fake_ring r;
	struct seen s = { 0 };

	fake_init(&r, 0);
	produce(&r, "x", 0);
	r.data[0] = 0xf8;	/* 248 + header: more than the area and than was produced */
	cr_expect_eq(ringbuf_mem_consume(&r.mem, on_record, &s), -EPROTO);
	cr_expect_eq(s.n, 0);
}
