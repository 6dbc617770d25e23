// SPDX-License-Identifier: MIT
/*
 * test_decode.c - the record decoders of perfdata/decode.c against byte
 * images built by hand here, field by field in the kernel's order, so a
 * decoder that skips a field wrongly shows up as a wrong value after it.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata/records.h"
#include "test_want.h"

/* ---- a byte builder for records --------------------------------------------- */

struct img {
	_Alignas(8) uint8_t b[65536 + 64];
	size_t len;
	size_t rec;	/* where the current record starts */
};

static void put(struct img *m, const void *p, size_t n)
{
	cr_assert_leq(m->len + n, sizeof(m->b));
	memcpy(m->b + m->len, p, n);
	m->len += n;
}

static void u64(struct img *m, uint64_t v) { put(m, &v, 8); }
static void u32(struct img *m, uint32_t v) { put(m, &v, 4); }
static void u8(struct img *m, uint8_t v) { put(m, &v, 1); }
static void u32x2(struct img *m, uint32_t a, uint32_t b) { u32(m, a); u32(m, b); }
static void zeros(struct img *m, size_t n) { while (n--) u8(m, 0); }
static void pad8(struct img *m) { while (m->len % 8) u8(m, 0); }

static void str_padded(struct img *m, const char *s)
{
	put(m, s, strlen(s) + 1);
	pad8(m);
}

static void begin(struct img *m, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = 0 };

	m->rec = m->len;
	put(m, &h, sizeof(h));
}

static struct perf_event_header *end(struct img *m)
{
	struct perf_event_header *h = (struct perf_event_header *)(m->b + m->rec);

	h->size = (uint16_t)(m->len - m->rec);
	return h;
}

/* Words in order: U64S(m, a, b, ...) is u64(m, a); u64(m, b); ... */
static void u64s(struct img *m, const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		u64(m, v[i]);
}
#define U64S(m, ...) \
	u64s(m, (const uint64_t[]){ __VA_ARGS__ }, sizeof((uint64_t[]){ __VA_ARGS__ }) / 8)

/* Empty m and begin a record of `type` in it. */
static void restart(struct img *m, uint32_t type, uint16_t misc)
{
	m->len = 0;
	begin(m, type, misc);
}

static struct perf_event_header *rec(struct img *m)
{
	return (struct perf_event_header *)(m->b + m->rec);
}

/* Decode with the record claiming `size` bytes; restores the size after. */
static int decode_sample_sized(struct img *m, const struct perf_event_attr *a, uint16_t size,
			       struct perfdata_sample *s)
{
	struct perf_event_header *h = rec(m);
	uint16_t orig = h->size;
	int err;

	h->size = size;
	err = perfdata_decode_sample(h, a, s);
	h->size = orig;
	return err;
}

/* End the SAMPLE record in m (again, after a change): it decodes under a into s. */
static void decodes(struct img *m, const struct perf_event_attr *a, struct perfdata_sample *s)
{
	end(m);
	cr_assert_eq(perfdata_decode_sample(rec(m), a, s), 0, "a %u-byte sample", rec(m)->size);
}

/* Every proper prefix (in u64 steps) of a valid sample must be rejected. */
static void assert_prefixes_rejected(struct img *m, const struct perf_event_attr *a)
{
	struct perfdata_sample s;
	uint16_t full = rec(m)->size;

	for (uint16_t size = 8; size < full; size += 8)
		cr_assert_eq(decode_sample_sized(m, a, size, &s), -EINVAL,
			     "a %u-byte prefix of a %u-byte sample was accepted", size, full);
	cr_assert_eq(decode_sample_sized(m, a, full, &s), 0);
}

/* ---- SAMPLE ------------------------------------------------------------------ */

Test(decode_sample, common_cpu_profile_fields)
{
	struct perf_event_attr a = {
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN,
	};
	static struct img m;
	struct perfdata_sample s;

	restart(&m, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	u64(&m, 0xffffffff81234567ULL);		/* ip */
	u32x2(&m, 4242, 4243);			/* pid, tid */
	u64(&m, 123456789012ULL);		/* time */
	u32x2(&m, 1, 0);			/* cpu, res */
	u64(&m, 250000);			/* period */
	/* callchain nr, then KERNEL, the ip, USER and two user frames */
	U64S(&m, 5, (uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81234567ULL,
	     (uint64_t)PERF_CONTEXT_USER, 0x401000, 0x401100);
	end(&m);

	cr_assert_eq(rec(&m)->size, 8 + 6 * 8 + 5 * 8);
	decodes(&m, &a, &s);
	EXPECT_ALL(
		WANT(s.misc, PERF_RECORD_MISC_KERNEL), WANT(s.ip, 0xffffffff81234567ULL),
		WANT(s.pid, 4242), WANT(s.tid, 4243), WANT(s.time, 123456789012ULL), WANT(s.cpu, 1),
		WANT(s.period, 250000), WANT(s.nr_callchain, 5),
		WANT(s.callchain[0], (uint64_t)PERF_CONTEXT_KERNEL),
		WANT(s.callchain[2], (uint64_t)PERF_CONTEXT_USER), WANT(s.callchain[4], 0x401100));
	cr_assert_eq((const uint8_t *)s.callchain, m.b + m.rec + 8 + 5 * 8 + 8,
		     "callchain must point into the record");
	assert_prefixes_rejected(&m, &a);
}

Test(decode_sample, identifier_id_addr_stream_id)
{
	struct perf_event_attr a = {
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
			       PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU,
	};
	static struct img m;
	struct perfdata_sample s;
	uint64_t id;

	restart(&m, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	U64S(&m, 77, 0x400123);		/* identifier, ip */
	u32x2(&m, 10, 11);
	U64S(&m, 999, 0xdead0000, 77, 78);	/* time, addr, id, stream_id */
	u32x2(&m, 3, 0xffffffff);	/* cpu, res (res must not leak into cpu) */
	decodes(&m, &a, &s);
	EXPECT_ALL(
		WANT(s.id, 77), WANT(s.ip, 0x400123), WANT(s.addr, 0xdead0000),
		WANT(s.stream_id, 78), WANT(s.cpu, 3), WANT(s.time, 999));
	cr_assert_eq(perfdata_decode_sample_event_id(rec(&m), a.sample_type, &id), 0);
	cr_assert_eq(id, 77);
	assert_prefixes_rejected(&m, &a);
}

Test(decode_sample, event_id_from_id_position)
{
	/* Without IDENTIFIER the id sits after IP, TID, TIME and ADDR when present. */
	static struct img m;
	uint64_t id;
	uint64_t type = PERF_SAMPLE_IP | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_PERIOD;

	restart(&m, PERF_RECORD_SAMPLE, 0);
	U64S(&m, 1, 2, 42, 3);	/* ip, time, id, period */
	end(&m);
	cr_assert_eq(perfdata_decode_sample_event_id(rec(&m), type, &id), 0);
	cr_assert_eq(id, 42);
	/* no id bits: 0 */
	cr_assert_eq(perfdata_decode_sample_event_id(rec(&m), PERF_SAMPLE_IP, &id), 0);
	cr_assert_eq(id, 0);
	/* id position past the record */
	rec(&m)->size = 8 + 16;
	cr_assert_eq(perfdata_decode_sample_event_id(rec(&m), type, &id), -EINVAL);
	/* not a sample */
	rec(&m)->size = 40;
	rec(&m)->type = PERF_RECORD_COMM;
	cr_assert_eq(perfdata_decode_sample_event_id(rec(&m), type, &id), -EINVAL);
}

Test(decode_sample, period_defaults_to_fixed_sample_period)
{
	struct perf_event_attr a = { .sample_type = PERF_SAMPLE_IP, .sample_period = 10007 };
	static struct img m;
	struct perfdata_sample s;

	restart(&m, PERF_RECORD_SAMPLE, 0);
	u64(&m, 0x1234);
	decodes(&m, &a, &s);
	cr_assert_eq(s.period, 10007);
	a.freq = 1;	/* sample_period is then the frequency: no per-sample weight */
	decodes(&m, &a, &s);
	cr_assert_eq(s.period, 0);
}

Test(decode_sample, read_single_with_every_read_format_bit)
{
	struct perf_event_attr a = {
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
			       PERF_FORMAT_ID | PERF_FORMAT_LOST,
	};
	static struct img m;
	struct perfdata_sample s;

	restart(&m, PERF_RECORD_SAMPLE, 0);
	u32x2(&m, 5, 6);
	U64S(&m, 1000, 2000, 3000, 44, 0);	/* value, enabled, running, id, lost */
	U64S(&m, 2, 0xa1, 0xa2);		/* callchain nr and its entries */
	decodes(&m, &a, &s);
	cr_assert_eq(s.nr_callchain, 2);
	cr_assert_eq(s.callchain[0], 0xa1);
	cr_assert_eq(s.callchain[1], 0xa2);
	assert_prefixes_rejected(&m, &a);

	/* Without LOST the same bytes shift: the lost word becomes the chain length. */
	a.read_format &= ~(uint64_t)PERF_FORMAT_LOST;
	decodes(&m, &a, &s);
	cr_assert_eq(s.nr_callchain, 0);
}

Test(decode_sample, read_group_values)
{
	static struct img m;
	struct perfdata_sample s;
	struct perf_event_attr a = {
		.sample_type = PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_IP,
		.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			       PERF_FORMAT_ID | PERF_FORMAT_LOST,
	};

	restart(&m, PERF_RECORD_SAMPLE, 0);
	U64S(&m, 0x555, 3, 111);	/* ip, nr, time_enabled */
	for (int i = 0; i < 3; i++) {
		u64(&m, 100 + i);	/* value */
		u64(&m, 200 + i);	/* id */
		u64(&m, 0);		/* lost */
	}
	U64S(&m, 1, 0xbeef);	/* callchain nr and its entry */
	decodes(&m, &a, &s);
	cr_assert_eq(s.ip, 0x555);
	cr_assert_eq(s.nr_callchain, 1);
	cr_assert_eq(s.callchain[0], 0xbeef);
	assert_prefixes_rejected(&m, &a);

	/* A group count that would overflow nr * entry size is rejected. */
	memcpy(m.b + m.rec + 16, &(uint64_t){ UINT64_MAX / 8 }, 8);
	cr_assert_eq(perfdata_decode_sample(rec(&m), &a, &s), -EINVAL);
}

Test(decode_sample, raw_branch_regs_stack)
{
	struct perf_event_attr a = {
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_RAW | PERF_SAMPLE_BRANCH_STACK |
			       PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
		.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX,
		.sample_regs_user = (1ULL << 6) | (1ULL << 7) | (1ULL << 8),	/* BP, SP, IP */
		.sample_stack_user = 16,
	};
	static struct img m;
	struct perfdata_sample s;
	const char raw[12] = "raw-payload";	/* 11 chars + NUL: 4 + 12 = 16 */

	restart(&m, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	u64(&m, 0x401234);
	u32(&m, sizeof(raw));
	put(&m, raw, sizeof(raw));
	U64S(&m, 2, 7);		/* branch nr, hw_idx */
	for (int i = 0; i < 2; i++) {
		u64(&m, 0x1000 + i);	/* from */
		u64(&m, 0x2000 + i);	/* to */
		u64(&m, 0);		/* flags */
	}
	/* regs abi, then bp, sp and ip */
	U64S(&m, PERF_SAMPLE_REGS_ABI_64, 0x7ffd0010, 0x7ffd0000, 0x401234);
	/* stack size, its 16 bytes, dyn_size */
	U64S(&m, 16, 0x1111111111111111ULL, 0x2222222222222222ULL, 8);
	decodes(&m, &a, &s);
	cr_assert_eq(s.raw_size, 12);
	cr_assert_str_eq(s.raw, "raw-payload");
	EXPECT_ALL(
		WANT(s.regs_abi, PERF_SAMPLE_REGS_ABI_64), WANT(s.nr_regs, 3),
		WANT(s.regs[0], 0x7ffd0010), WANT(s.regs[1], 0x7ffd0000), WANT(s.regs[2], 0x401234),
		WANT(s.stack_size, 16), WANT(s.stack_dyn_size, 8));
	cr_assert_eq(((const uint64_t *)s.stack)[1], 0x2222222222222222ULL);
	assert_prefixes_rejected(&m, &a);

	/* Without HW_INDEX the hw_idx word would be read as a branch entry. */
	a.branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
	cr_assert(perfdata_decode_sample(rec(&m), &a, &s) != 0 || s.regs_abi != PERF_SAMPLE_REGS_ABI_64);
}

Test(decode_sample, branch_counters_widen_entries)
{
	struct perf_event_attr a = {
		.sample_type = PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_PERIOD,
		.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | (1ULL << 19),	/* COUNTERS */
	};
	static struct img m;
	struct perfdata_sample s;

	restart(&m, PERF_RECORD_SAMPLE, 0);
	U64S(&m, 77, 2);	/* period, nr */
	zeros(&m, 2 * 24);	/* entries */
	zeros(&m, 2 * 8);	/* counters */
	decodes(&m, &a, &s);
	cr_assert_eq(s.period, 77);
	assert_prefixes_rejected(&m, &a);
}

Test(decode_sample, regs_abi_none_and_empty_stack)
{
	/* Kernel threads: abi NONE (no regs follow) and a 0-byte stack (no dyn_size). */
	struct perf_event_attr a = {
		.sample_type = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT,
		.sample_regs_user = 0xff0fff,
		.sample_stack_user = 8192,
	};
	static struct img m;
	struct perfdata_sample s;

	restart(&m, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	/* regs abi NONE, stack size 0, weight */
	U64S(&m, PERF_SAMPLE_REGS_ABI_NONE, 0, 12345);
	decodes(&m, &a, &s);
	cr_assert_eq(s.nr_regs, 0);
	cr_assert_null(s.regs);
	cr_assert_eq(s.stack_size, 0);
	cr_assert_null(s.stack);
	assert_prefixes_rejected(&m, &a);
}

Test(decode_sample, every_field_at_once)
{
	struct perf_event_attr a = {
		.sample_type = PERF_SAMPLE_MAX - 1,	/* every bit perf_event.h knows */
		.read_format = PERF_FORMAT_ID,
		.branch_sample_type = PERF_SAMPLE_BRANCH_ANY,
		.sample_regs_user = 0x3,
		.sample_regs_intr = 0x7,
	};
	static struct img m;
	struct perfdata_sample s;

	/* WEIGHT and WEIGHT_STRUCT share one slot. */
	restart(&m, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	U64S(&m, 9, 0x1111);		/* IDENTIFIER, IP */
	u32x2(&m, 100, 101);		/* TID */
	U64S(&m, 5555, 0xadd7, 9, 10);	/* TIME, ADDR, ID, STREAM_ID */
	u32x2(&m, 1, 0);		/* CPU */
	U64S(&m, 4000, 17, 9);		/* PERIOD, READ value and id */
	U64S(&m, 1, 0x1111);		/* CALLCHAIN nr and its entry */
	u32(&m, 4);		/* RAW size */
	u32(&m, 0xabcd);
	u64(&m, 1);		/* BRANCH nr */
	zeros(&m, 24);
	/* REGS_USER (abi, 2 regs); STACK_USER (size, data, dyn_size) */
	U64S(&m, PERF_SAMPLE_REGS_ABI_64, 0xa, 0xb, 8, 0x5a5a, 8);
	/* WEIGHT / WEIGHT_STRUCT, DATA_SRC, TRANSACTION; REGS_INTR (abi, 3 regs) */
	U64S(&m, 3, 4, 5, PERF_SAMPLE_REGS_ABI_64, 1, 2, 3);
	/* PHYS_ADDR, CGROUP, DATA_PAGE_SIZE, CODE_PAGE_SIZE, AUX size */
	U64S(&m, 0x7000, 42, 4096, 4096, 16);
	zeros(&m, 16);
	decodes(&m, &a, &s);
	EXPECT_ALL(
		WANT(s.id, 9), WANT(s.pid, 100), WANT(s.tid, 101), WANT(s.addr, 0xadd7),
		WANT(s.stream_id, 10), WANT(s.period, 4000), WANT(s.nr_callchain, 1),
		WANT(s.raw_size, 4), WANT(s.nr_regs, 2), WANT(s.regs[1], 0xb),
		WANT(s.stack_dyn_size, 8));
	/* Every u64 of the tail (WEIGHT .. AUX) is needed: no prefix decodes. */
	assert_prefixes_rejected(&m, &a);
}

Test(decode_sample, malformed_inputs_are_rejected)
{
	struct perf_event_attr a = { .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN };
	static struct img m;
	struct perfdata_sample s;

	restart(&m, PERF_RECORD_SAMPLE, 0);
	U64S(&m, 1, 1ULL << 61, 2);	/* ip, a callchain nr whose nr * 8 overflows, an entry */
	end(&m);
	cr_assert_eq(perfdata_decode_sample(rec(&m), &a, &s), -EINVAL);

	/* nr one more than the record holds */
	memcpy(m.b + m.rec + 16, &(uint64_t){ 2 }, 8);
	cr_assert_eq(perfdata_decode_sample(rec(&m), &a, &s), -EINVAL);
	memcpy(m.b + m.rec + 16, &(uint64_t){ 1 }, 8);
	decodes(&m, &a, &s);

	/* a sample_type bit whose layout nobody knows */
	a.sample_type |= 1ULL << 40;
	cr_assert_eq(perfdata_decode_sample(rec(&m), &a, &s), -EINVAL);
	a.sample_type &= ~(1ULL << 40);

	/* not a SAMPLE, or a header-only / shorter-than-header record */
	rec(&m)->type = PERF_RECORD_MMAP;
	cr_assert_eq(perfdata_decode_sample(rec(&m), &a, &s), -EINVAL);
	rec(&m)->type = PERF_RECORD_SAMPLE;
	cr_assert_eq(decode_sample_sized(&m, &a, 4, &s), -EINVAL);

	/* RAW whose size leaves the next field misaligned */
	struct perf_event_attr raw = { .sample_type = PERF_SAMPLE_RAW };

	restart(&m, PERF_RECORD_SAMPLE, 0);
	u32(&m, 5);
	zeros(&m, 12);
	end(&m);
	cr_assert_eq(perfdata_decode_sample(rec(&m), &raw, &s), -EINVAL);

	/* STACK_USER with dyn_size larger than what was copied */
	struct perf_event_attr st = { .sample_type = PERF_SAMPLE_STACK_USER };

	restart(&m, PERF_RECORD_SAMPLE, 0);
	U64S(&m, 8, 0, 16);	/* size 8, its bytes, dyn_size 16 */
	end(&m);
	cr_assert_eq(perfdata_decode_sample(rec(&m), &st, &s), -EINVAL);

	/* AUX size past the record */
	struct perf_event_attr aux = { .sample_type = PERF_SAMPLE_AUX };

	restart(&m, PERF_RECORD_SAMPLE, 0);
	u64(&m, UINT64_MAX);
	end(&m);
	cr_assert_eq(perfdata_decode_sample(rec(&m), &aux, &s), -EINVAL);

	/* branch nr that overflows */
	struct perf_event_attr br = { .sample_type = PERF_SAMPLE_BRANCH_STACK };

	restart(&m, PERF_RECORD_SAMPLE, 0);
	u64(&m, UINT64_MAX / 12);
	zeros(&m, 24);
	end(&m);
	cr_assert_eq(perfdata_decode_sample(rec(&m), &br, &s), -EINVAL);
}

Test(decode_sample, random_records_never_read_out_of_bounds)
{
	/* Each record is malloc'ed at its exact size so ASan sees any overread. */
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	for (int i = 0; i < 20000; i++) {
		struct perf_event_attr a = { 0 };
		struct perfdata_sample s;
		struct perfdata_sample_id sid;
		size_t size;
		uint8_t *p;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size = 8 + (x % 32) * 8;
		p = malloc(size);
		for (size_t j = 0; j < size; j++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			/* mostly small numbers so counts are sometimes plausible */
			p[j] = (x & 3) ? (uint8_t)(x >> 8) % 4 : (uint8_t)(x >> 8);
		}
		struct perf_event_header *h = (struct perf_event_header *)p;

		h->size = (uint16_t)size;
		h->type = PERF_RECORD_SAMPLE;
		a.sample_type = x & ((uint64_t)PERF_SAMPLE_MAX - 1);
		a.read_format = (x >> 30) & 0x1f;
		a.branch_sample_type = (x >> 35) & 1 ? PERF_SAMPLE_BRANCH_HW_INDEX : 0;
		a.sample_regs_user = (x >> 40) & 0xff;
		a.sample_regs_intr = (x >> 48) & 0xff;
		int err = perfdata_decode_sample(h, &a, &s);

		cr_assert(err == 0 || err == -EINVAL);
		if (!err && s.nr_callchain)
			cr_assert_leq((const uint8_t *)(s.callchain + s.nr_callchain), p + size);
		h->type = (uint32_t)(1 + x % 20);
		if (h->type != PERF_RECORD_SAMPLE) {
			err = perfdata_decode_sample_id(h, a.sample_type, &sid);
			cr_assert(err == 0 || err == -EINVAL);
		}
		struct perfdata_mmap mm;
		struct perfdata_comm cm;
		struct perfdata_task tk;

		h->type = PERF_RECORD_MMAP;
		perfdata_decode_mmap(h, &mm);
		h->type = PERF_RECORD_MMAP2;
		perfdata_decode_mmap2(h, &mm);
		h->type = PERF_RECORD_COMM;
		perfdata_decode_comm(h, &cm);
		h->type = PERF_RECORD_FORK;
		perfdata_decode_task(h, &tk);
		free(p);
	}
}

/* ---- sample_id trailer -------------------------------------------------------- */

static uint64_t all_trailer_bits(void)
{
	return PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
	       PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
}

Test(decode_sample_id, full_trailer_parsed_from_the_end)
{
	static struct img m;
	struct perfdata_sample_id sid;
	/* sample_type also has non-trailer bits, which must not matter */
	uint64_t type = all_trailer_bits() | PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN |
			PERF_SAMPLE_PERIOD;

	restart(&m, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	u32x2(&m, 300, 301);
	str_padded(&m, "worker-with-long-name");
	u32x2(&m, 300, 301);	/* TID */
	U64S(&m, 7777, 55, 56);	/* TIME, ID, STREAM_ID */
	u32x2(&m, 1, 0);	/* CPU */
	u64(&m, 55);		/* IDENTIFIER */
	end(&m);

	cr_assert_eq(perfdata_decode_sample_id(rec(&m), type, &sid), 0);
	EXPECT_ALL(
		WANT(sid.pid, 300), WANT(sid.tid, 301), WANT(sid.time, 7777), WANT(sid.id, 55),
		WANT(sid.stream_id, 56), WANT(sid.cpu, 1));

	/* the COMM fields still decode from the front */
	struct perfdata_comm c;

	cr_assert_eq(perfdata_decode_comm(rec(&m), &c), 0);
	cr_assert_str_eq(c.comm, "worker-with-long-name");
	cr_assert(c.exec);
}

Test(decode_sample_id, subset_and_no_trailer)
{
	static struct img m;
	struct perfdata_sample_id sid;

	restart(&m, PERF_RECORD_LOST_SAMPLES, 0);
	u64(&m, 12);		/* lost */
	u32x2(&m, 8, 9);	/* TID */
	u64(&m, 1234);		/* TIME */
	end(&m);
	cr_assert_eq(perfdata_decode_sample_id(rec(&m), PERF_SAMPLE_TID | PERF_SAMPLE_TIME, &sid), 0);
	cr_assert_eq(sid.pid, 8);
	cr_assert_eq(sid.time, 1234);
	cr_assert_eq(sid.id, 0);

	/* IDENTIFIER alone is the last u64 */
	cr_assert_eq(perfdata_decode_sample_id(rec(&m), PERF_SAMPLE_IDENTIFIER, &sid), 0);
	cr_assert_eq(sid.id, 1234);

	/* no trailer bits: nothing read, all zero */
	cr_assert_eq(perfdata_decode_sample_id(rec(&m), PERF_SAMPLE_IP, &sid), 0);
	cr_assert_eq(sid.pid, 0);
	cr_assert_eq(sid.time, 0);
}

Test(decode_sample_id, trailer_must_fit_after_the_fixed_fields)
{
	static struct img m;
	struct perfdata_sample_id sid;

	/* LOST_SAMPLES has an 8-byte fixed part: a 2-word trailer needs 24 bytes of body. */
	restart(&m, PERF_RECORD_LOST_SAMPLES, 0);
	U64S(&m, 12, 1234);	/* lost, then one trailer word */
	end(&m);
	cr_assert_eq(perfdata_decode_sample_id(rec(&m), PERF_SAMPLE_TID | PERF_SAMPLE_TIME, &sid),
		     -EINVAL);
	cr_assert_eq(perfdata_decode_sample_id(rec(&m), PERF_SAMPLE_TIME, &sid), 0);
	cr_assert_eq(sid.time, 1234);

	/* a trailer larger than the whole record */
	restart(&m, PERF_RECORD_SWITCH, 0);
	end(&m);
	cr_assert_eq(perfdata_decode_sample_id(rec(&m), PERF_SAMPLE_TIME, &sid), -EINVAL);

	/* SAMPLE records have no trailer */
	restart(&m, PERF_RECORD_SAMPLE, 0);
	u64(&m, 1);
	end(&m);
	cr_assert_eq(perfdata_decode_sample_id(rec(&m), PERF_SAMPLE_TIME, &sid), -EINVAL);
}

/* ---- MMAP, MMAP2, COMM, FORK/EXIT ------------------------------------------- */

Test(decode_mmap, kernel_map_with_trailer)
{
	static struct img m;
	struct perfdata_mmap mm;
	struct perfdata_sample_id sid;

	restart(&m, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
	u32x2(&m, (uint32_t)-1, 0);
	U64S(&m, 0xffffffff81000000ULL, 0x1200000, 0xffffffff81000000ULL);	/* addr, len, pgoff */
	str_padded(&m, "[kernel.kallsyms]_text");
	u32x2(&m, 0, 0);	/* TID */
	u64(&m, 0);		/* TIME */
	end(&m);

	cr_assert_eq(perfdata_decode_mmap(rec(&m), &mm), 0);
	cr_assert_eq(mm.misc, PERF_RECORD_MISC_KERNEL);
	cr_assert_eq((int32_t)mm.pid, -1);
	cr_assert_eq(mm.start, 0xffffffff81000000ULL);
	cr_assert_eq(mm.len, 0x1200000);
	cr_assert_eq(mm.pgoff, 0xffffffff81000000ULL);
	cr_assert_str_eq(mm.filename, "[kernel.kallsyms]_text");
	cr_assert_eq(perfdata_decode_sample_id(rec(&m), PERF_SAMPLE_TID | PERF_SAMPLE_TIME, &sid), 0);
	/* the wrong decoder refuses */
	cr_assert_eq(perfdata_decode_mmap2(rec(&m), &mm), -EINVAL);
}

Test(decode_mmap, mmap2_inode_and_build_id_forms)
{
	static struct img m;
	struct perfdata_mmap mm;
	const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
				  13, 14, 15, 16 };

	restart(&m, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	u32x2(&m, 10, 11);
	U64S(&m, 0x400000, 0x1000, 0x2000);	/* addr, len, pgoff */
	u32x2(&m, 8, 1);	/* maj, min */
	U64S(&m, 123456, 7);	/* ino, ino_generation */
	u32x2(&m, 5, 2);	/* prot r-x, MAP_PRIVATE */
	str_padded(&m, "/usr/bin/app");
	end(&m);
	cr_assert_eq(perfdata_decode_mmap2(rec(&m), &mm), 0);
	EXPECT_ALL(
		WANT(mm.misc, PERF_RECORD_MISC_USER), WANT(mm.pid, 10), WANT(mm.tid, 11),
		WANT(mm.maj, 8), WANT(mm.min, 1), WANT(mm.ino, 123456), WANT(mm.ino_generation, 7),
		WANT(mm.build_id_size, 0), WANT(mm.prot, 5), WANT(mm.flags, 2));
	cr_assert_str_eq(mm.filename, "/usr/bin/app");

	restart(&m, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	u32x2(&m, 10, 11);
	U64S(&m, 0x400000, 0x1000, 0);	/* addr, len, pgoff */
	u8(&m, 20);		/* build_id_size */
	zeros(&m, 3);
	put(&m, bid, 20);
	u32x2(&m, 5, 2);
	str_padded(&m, "/usr/lib/libx.so");
	end(&m);
	cr_assert_eq(perfdata_decode_mmap2(rec(&m), &mm), 0);
	cr_assert_eq(mm.misc, PERF_RECORD_MISC_USER, "the build-id flag is implied by the size");
	cr_assert_eq(mm.build_id_size, 20);
	cr_assert_arr_eq(mm.build_id, bid, 20);
	cr_assert_eq(mm.maj, 0);
	cr_assert_str_eq(mm.filename, "/usr/lib/libx.so");

	/* a build-id longer than 20 bytes cannot be */
	m.b[m.rec + 8 + 32] = 21;
	cr_assert_eq(perfdata_decode_mmap2(rec(&m), &mm), -EINVAL);
}

Test(decode_mmap, filename_must_end_inside_the_record)
{
	static struct img m;
	struct perfdata_mmap mm;

	restart(&m, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER);
	u32x2(&m, 1, 1);
	U64S(&m, 1, 1, 0);	/* addr, len, pgoff */
	put(&m, "abcdefgh", 8);	/* no NUL */
	end(&m);
	cr_assert_eq(perfdata_decode_mmap(rec(&m), &mm), -EINVAL);

	/* fixed fields cut short */
	rec(&m)->size = 8 + 16;
	cr_assert_eq(perfdata_decode_mmap(rec(&m), &mm), -EINVAL);

	/* MMAP2 without room for prot/flags */
	restart(&m, PERF_RECORD_MMAP2, 0);
	zeros(&m, 56);
	end(&m);
	cr_assert_eq(perfdata_decode_mmap2(rec(&m), &mm), -EINVAL);
}

Test(decode_comm, exec_flag_and_bounds)
{
	static struct img m;
	struct perfdata_comm c;

	restart(&m, PERF_RECORD_COMM, 0);
	u32x2(&m, 70, 71);
	str_padded(&m, "bash");
	end(&m);
	cr_assert_eq(rec(&m)->size, 24);
	cr_assert_eq(perfdata_decode_comm(rec(&m), &c), 0);
	cr_assert_eq(c.pid, 70);
	cr_assert_eq(c.tid, 71);
	cr_assert_not(c.exec);
	cr_assert_str_eq(c.comm, "bash");

	memcpy(m.b + m.rec + 16, "12345678", 8);	/* comm without NUL */
	cr_assert_eq(perfdata_decode_comm(rec(&m), &c), -EINVAL);
	rec(&m)->size = 12;
	cr_assert_eq(perfdata_decode_comm(rec(&m), &c), -EINVAL);
}

Test(decode_task, fork_and_exit)
{
	static struct img m;
	struct perfdata_task t;

	restart(&m, PERF_RECORD_FORK, 0);
	u32x2(&m, 200, 100);	/* pid, ppid */
	u32x2(&m, 201, 101);	/* tid, ptid */
	u64(&m, 31337);
	end(&m);
	cr_assert_eq(perfdata_decode_task(rec(&m), &t), 0);
	EXPECT_ALL(
		WANT(t.pid, 200), WANT(t.ppid, 100), WANT(t.tid, 201), WANT(t.ptid, 101),
		WANT(t.time, 31337));
	rec(&m)->type = PERF_RECORD_EXIT;
	cr_assert_eq(perfdata_decode_task(rec(&m), &t), 0);
	rec(&m)->type = PERF_RECORD_COMM;
	cr_assert_eq(perfdata_decode_task(rec(&m), &t), -EINVAL);
	rec(&m)->type = PERF_RECORD_EXIT;
	rec(&m)->size = 24;
	cr_assert_eq(perfdata_decode_task(rec(&m), &t), -EINVAL);
}

Test(decode_ksymbol, fields_name_and_trailer)
{
	static struct img m;
	struct perfdata_ksymbol k;
	struct perfdata_sample_id sid;
	uint16_t type_flags[2] = { PERF_RECORD_KSYMBOL_TYPE_BPF, 0 };

	restart(&m, PERF_RECORD_KSYMBOL, 0);
	u64(&m, 0xffffffffc0025538ULL);
	u32(&m, 0x8c2);
	put(&m, type_flags, sizeof(type_flags));
	str_padded(&m, "bpf_prog_de3d2baa04cab2a8_on_sample");
	u32x2(&m, 0, 0);	/* TID */
	u64(&m, 0);		/* TIME */
	end(&m);
	cr_assert_eq(perfdata_decode_ksymbol(rec(&m), &k), 0);
	cr_assert_eq(k.addr, 0xffffffffc0025538ULL);
	cr_assert_eq(k.len, 0x8c2);
	cr_assert_eq(k.ksym_type, PERF_RECORD_KSYMBOL_TYPE_BPF);
	cr_assert_eq(k.flags, 0);
	cr_assert_str_eq(k.name, "bpf_prog_de3d2baa04cab2a8_on_sample");
	cr_assert_eq(perfdata_decode_sample_id(rec(&m), PERF_SAMPLE_TID | PERF_SAMPLE_TIME, &sid), 0);

	/* What the encoder writes, the decoder reads back. */
	k.flags = PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER;
	k.name = "bpf_prog_0123456789abcdef";
	m.len = 0;
	m.rec = 0;
	cr_assert_eq(perfdata_encode_ksymbol(m.b, sizeof(m.b), &k, 0, NULL), 8 + 16 + 32);
	cr_assert_eq(perfdata_decode_ksymbol(rec(&m), &k), 0);
	cr_assert_eq(k.flags, PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER);
	cr_assert_str_eq(k.name, "bpf_prog_0123456789abcdef");

	/* the name must end inside the record; the fixed part must fit */
	memset(m.b + 24, 'x', 32);
	cr_assert_eq(perfdata_decode_ksymbol(rec(&m), &k), -EINVAL);
	rec(&m)->size = 8 + 12;
	cr_assert_eq(perfdata_decode_ksymbol(rec(&m), &k), -EINVAL);
	/* and the wrong type is refused */
	rec(&m)->size = 8 + 16 + 32;
	rec(&m)->type = PERF_RECORD_MMAP;
	cr_assert_eq(perfdata_decode_ksymbol(rec(&m), &k), -EINVAL);
}

Test(decode_lost, lost_and_lost_samples)
{
	static struct img m;
	uint64_t id = 1, lost = 1;

	restart(&m, PERF_RECORD_LOST, 0);
	U64S(&m, 77, 12345);	/* id, lost */
	end(&m);
	cr_assert_eq(perfdata_decode_lost(rec(&m), &id, &lost), 0);
	cr_assert_eq(id, 77);
	cr_assert_eq(lost, 12345);
	/* LOST_SAMPLES: the count is the first word, there is no id. */
	rec(&m)->type = PERF_RECORD_LOST_SAMPLES;
	cr_assert_eq(perfdata_decode_lost(rec(&m), &id, &lost), 0);
	cr_assert_eq(id, 0);
	cr_assert_eq(lost, 77);
	rec(&m)->type = PERF_RECORD_COMM;
	cr_assert_eq(perfdata_decode_lost(rec(&m), &id, &lost), -EINVAL);
	rec(&m)->type = PERF_RECORD_LOST;
	rec(&m)->size = 16;	/* the id, not the count */
	cr_assert_eq(perfdata_decode_lost(rec(&m), &id, &lost), -EINVAL);
	cr_assert_eq(lost, 0, "nothing counted from a short record");
	rec(&m)->type = PERF_RECORD_LOST_SAMPLES;
	cr_assert_eq(perfdata_decode_lost(rec(&m), &id, &lost), 0);
	rec(&m)->size = 8;
	cr_assert_eq(perfdata_decode_lost(rec(&m), &id, &lost), -EINVAL);
}
