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

	m.len = 0;
	begin(&m, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	u64(&m, 0xffffffff81234567ULL);		/* ip */
	u32x2(&m, 4242, 4243);			/* pid, tid */
	u64(&m, 123456789012ULL);		/* time */
	u32x2(&m, 1, 0);			/* cpu, res */
	u64(&m, 250000);			/* period */
	u64(&m, 5);				/* callchain nr */
	u64(&m, (uint64_t)PERF_CONTEXT_KERNEL);
	u64(&m, 0xffffffff81234567ULL);
	u64(&m, (uint64_t)PERF_CONTEXT_USER);
	u64(&m, 0x401000);
	u64(&m, 0x401100);
	end(&m);

	cr_assert_eq(rec(&m)->size, 8 + 6 * 8 + 5 * 8);
	cr_assert_eq(perfdata_decode_sample(rec(&m), &a, &s), 0);
	cr_assert_eq(s.misc, PERF_RECORD_MISC_KERNEL);
	cr_assert_eq(s.ip, 0xffffffff81234567ULL);
	cr_assert_eq(s.pid, 4242);
	cr_assert_eq(s.tid, 4243);
	cr_assert_eq(s.time, 123456789012ULL);
	cr_assert_eq(s.cpu, 1);
	cr_assert_eq(s.period, 250000);
	cr_assert_eq(s.nr_callchain, 5);
	cr_assert_eq(s.callchain[0], (uint64_t)PERF_CONTEXT_KERNEL);
	cr_assert_eq(s.callchain[2], (uint64_t)PERF_CONTEXT_USER);
	cr_assert_eq(s.callchain[4], 0x401100);
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

	m.len = 0;
	begin(&m, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	u64(&m, 77);		/* identifier */
	u64(&m, 0x400123);	/* ip */
	u32x2(&m, 10, 11);
	u64(&m, 999);		/* time */
	u64(&m, 0xdead0000);	/* addr */
	u64(&m, 77);		/* id */
	u64(&m, 78);		/* stream_id */
	u32x2(&m, 3, 0xffffffff);	/* cpu, res (res must not leak into cpu) */
	end(&m);

	cr_assert_eq(perfdata_decode_sample(rec(&m), &a, &s), 0);
	cr_assert_eq(s.id, 77);
	cr_assert_eq(s.ip, 0x400123);
	cr_assert_eq(s.addr, 0xdead0000);
	cr_assert_eq(s.stream_id, 78);
	cr_assert_eq(s.cpu, 3);
	cr_assert_eq(s.time, 999);
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

	m.len = 0;
	begin(&m, PERF_RECORD_SAMPLE, 0);
	u64(&m, 1);	/* ip */
	u64(&m, 2);	/* time */
	u64(&m, 42);	/* id */
	u64(&m, 3);	/* period */
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

	m.len = 0;
	begin(&m, PERF_RECORD_SAMPLE, 0);
	u64(&m, 0x1234);
	end(&m);
	cr_assert_eq(perfdata_decode_sample(rec(&m), &a, &s), 0);
	cr_assert_eq(s.period, 10007);
	a.freq = 1;	/* sample_period is then the frequency: no per-sample weight */
	cr_assert_eq(perfdata_decode_sample(rec(&m), &a, &s), 0);
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

	m.len = 0;
	begin(&m, PERF_RECORD_SAMPLE, 0);
	u32x2(&m, 5, 6);
	u64(&m, 1000);	/* value */
	u64(&m, 2000);	/* enabled */
	u64(&m, 3000);	/* running */
	u64(&m, 44);	/* id */
	u64(&m, 0);	/* lost */
	u64(&m, 2);	/* callchain nr */
	u64(&m, 0xa1);
	u64(&m, 0xa2);
	end(&m);
	cr_assert_eq(perfdata_decode_sample(rec(&m), &a, &s), 0);
	cr_assert_eq(s.nr_callchain, 2);
	cr_assert_eq(s.callchain[0], 0xa1);
	cr_assert_eq(s.callchain[1], 0xa2);
	assert_prefixes_rejected(&m, &a);

	/* Without LOST the same bytes shift: the lost word becomes the chain length. */
	a.read_format &= ~(uint64_t)PERF_FORMAT_LOST;
	cr_assert_eq(perfdata_decode_sample(rec(&m), &a, &s), 0);
	cr_assert_eq(s.nr_callchain, 0);
}

Test(decode_sample, read_group_values)
{
	struct perf_event_attr a = {
		.sample_type = PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_IP,
		.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			       PERF_FORMAT_ID | PERF_FORMAT_LOST,
	};
	static struct img m;
	struct perfdata_sample s;

	m.len = 0;
	begin(&m, PERF_RECORD_SAMPLE, 0);
	u64(&m, 0x555);	/* ip */
	u64(&m, 3);	/* nr */
	u64(&m, 111);	/* time_enabled */
	for (int i = 0; i < 3; i++) {
		u64(&m, 100 + i);	/* value */
		u64(&m, 200 + i);	/* id */
		u64(&m, 0);		/* lost */
	}
	u64(&m, 1);
	u64(&m, 0xbeef);
	end(&m);
	cr_assert_eq(perfdata_decode_sample(rec(&m), &a, &s), 0);
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

	m.len = 0;
	begin(&m, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	u64(&m, 0x401234);
	u32(&m, sizeof(raw));
	put(&m, raw, sizeof(raw));
	u64(&m, 2);		/* branch nr */
	u64(&m, 7);		/* hw_idx */
	for (int i = 0; i < 2; i++) {
		u64(&m, 0x1000 + i);	/* from */
		u64(&m, 0x2000 + i);	/* to */
		u64(&m, 0);		/* flags */
	}
	u64(&m, PERF_SAMPLE_REGS_ABI_64);
	u64(&m, 0x7ffd0010);	/* bp */
	u64(&m, 0x7ffd0000);	/* sp */
	u64(&m, 0x401234);	/* ip */
	u64(&m, 16);		/* stack size */
	u64(&m, 0x1111111111111111ULL);
	u64(&m, 0x2222222222222222ULL);
	u64(&m, 8);		/* dyn_size */
	end(&m);

	cr_assert_eq(perfdata_decode_sample(rec(&m), &a, &s), 0);
	cr_assert_eq(s.raw_size, 12);
	cr_assert_str_eq(s.raw, "raw-payload");
	cr_assert_eq(s.regs_abi, PERF_SAMPLE_REGS_ABI_64);
	cr_assert_eq(s.nr_regs, 3);
	cr_assert_eq(s.regs[0], 0x7ffd0010);
	cr_assert_eq(s.regs[1], 0x7ffd0000);
	cr_assert_eq(s.regs[2], 0x401234);
	cr_assert_eq(s.stack_size, 16);
	cr_assert_eq(s.stack_dyn_size, 8);
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

	m.len = 0;
	begin(&m, PERF_RECORD_SAMPLE, 0);
	u64(&m, 77);	/* period */
	u64(&m, 2);	/* nr */
	zeros(&m, 2 * 24);	/* entries */
	zeros(&m, 2 * 8);	/* counters */
	end(&m);
	cr_assert_eq(perfdata_decode_sample(rec(&m), &a, &s), 0);
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

	m.len = 0;
	begin(&m, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	u64(&m, PERF_SAMPLE_REGS_ABI_NONE);
	u64(&m, 0);		/* stack size 0 */
	u64(&m, 12345);		/* weight */
	end(&m);
	cr_assert_eq(perfdata_decode_sample(rec(&m), &a, &s), 0);
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
	m.len = 0;
	begin(&m, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	u64(&m, 9);		/* IDENTIFIER */
	u64(&m, 0x1111);	/* IP */
	u32x2(&m, 100, 101);	/* TID */
	u64(&m, 5555);		/* TIME */
	u64(&m, 0xadd7);	/* ADDR */
	u64(&m, 9);		/* ID */
	u64(&m, 10);		/* STREAM_ID */
	u32x2(&m, 1, 0);	/* CPU */
	u64(&m, 4000);		/* PERIOD */
	u64(&m, 17);		/* READ value */
	u64(&m, 9);		/* READ id */
	u64(&m, 1);		/* CALLCHAIN nr */
	u64(&m, 0x1111);
	u32(&m, 4);		/* RAW size */
	u32(&m, 0xabcd);
	u64(&m, 1);		/* BRANCH nr */
	zeros(&m, 24);
	u64(&m, PERF_SAMPLE_REGS_ABI_64);	/* REGS_USER */
	u64(&m, 0xa);
	u64(&m, 0xb);
	u64(&m, 8);		/* STACK_USER size */
	u64(&m, 0x5a5a);
	u64(&m, 8);		/* dyn_size */
	u64(&m, 3);		/* WEIGHT / WEIGHT_STRUCT */
	u64(&m, 4);		/* DATA_SRC */
	u64(&m, 5);		/* TRANSACTION */
	u64(&m, PERF_SAMPLE_REGS_ABI_64);	/* REGS_INTR */
	u64(&m, 1);
	u64(&m, 2);
	u64(&m, 3);
	u64(&m, 0x7000);	/* PHYS_ADDR */
	u64(&m, 42);		/* CGROUP */
	u64(&m, 4096);		/* DATA_PAGE_SIZE */
	u64(&m, 4096);		/* CODE_PAGE_SIZE */
	u64(&m, 16);		/* AUX size */
	zeros(&m, 16);
	end(&m);

	cr_assert_eq(perfdata_decode_sample(rec(&m), &a, &s), 0);
	cr_assert_eq(s.id, 9);
	cr_assert_eq(s.pid, 100);
	cr_assert_eq(s.tid, 101);
	cr_assert_eq(s.addr, 0xadd7);
	cr_assert_eq(s.stream_id, 10);
	cr_assert_eq(s.period, 4000);
	cr_assert_eq(s.nr_callchain, 1);
	cr_assert_eq(s.raw_size, 4);
	cr_assert_eq(s.nr_regs, 2);
	cr_assert_eq(s.regs[1], 0xb);
	cr_assert_eq(s.stack_dyn_size, 8);
	/* Every u64 of the tail (WEIGHT .. AUX) is needed: no prefix decodes. */
	assert_prefixes_rejected(&m, &a);
}

Test(decode_sample, malformed_inputs_are_rejected)
{
	struct perf_event_attr a = { .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN };
	static struct img m;
	struct perfdata_sample s;

	m.len = 0;
	begin(&m, PERF_RECORD_SAMPLE, 0);
	u64(&m, 1);
	u64(&m, 1ULL << 61);	/* nr * 8 overflows 64 bits */
	u64(&m, 2);
	end(&m);
	cr_assert_eq(perfdata_decode_sample(rec(&m), &a, &s), -EINVAL);

	/* nr one more than the record holds */
	memcpy(m.b + m.rec + 16, &(uint64_t){ 2 }, 8);
	cr_assert_eq(perfdata_decode_sample(rec(&m), &a, &s), -EINVAL);
	memcpy(m.b + m.rec + 16, &(uint64_t){ 1 }, 8);
	cr_assert_eq(perfdata_decode_sample(rec(&m), &a, &s), 0);

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

	m.len = 0;
	begin(&m, PERF_RECORD_SAMPLE, 0);
	u32(&m, 5);
	zeros(&m, 12);
	end(&m);
	cr_assert_eq(perfdata_decode_sample(rec(&m), &raw, &s), -EINVAL);

	/* STACK_USER with dyn_size larger than what was copied */
	struct perf_event_attr st = { .sample_type = PERF_SAMPLE_STACK_USER };

	m.len = 0;
	begin(&m, PERF_RECORD_SAMPLE, 0);
	u64(&m, 8);
	u64(&m, 0);
	u64(&m, 16);
	end(&m);
	cr_assert_eq(perfdata_decode_sample(rec(&m), &st, &s), -EINVAL);

	/* AUX size past the record */
	struct perf_event_attr aux = { .sample_type = PERF_SAMPLE_AUX };

	m.len = 0;
	begin(&m, PERF_RECORD_SAMPLE, 0);
	u64(&m, UINT64_MAX);
	end(&m);
	cr_assert_eq(perfdata_decode_sample(rec(&m), &aux, &s), -EINVAL);

	/* branch nr that overflows */
	struct perf_event_attr br = { .sample_type = PERF_SAMPLE_BRANCH_STACK };

	m.len = 0;
	begin(&m, PERF_RECORD_SAMPLE, 0);
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

	m.len = 0;
	begin(&m, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	u32x2(&m, 300, 301);
	str_padded(&m, "worker-with-long-name");
	u32x2(&m, 300, 301);	/* TID */
	u64(&m, 7777);		/* TIME */
	u64(&m, 55);		/* ID */
	u64(&m, 56);		/* STREAM_ID */
	u32x2(&m, 1, 0);	/* CPU */
	u64(&m, 55);		/* IDENTIFIER */
	end(&m);

	cr_assert_eq(perfdata_decode_sample_id(rec(&m), type, &sid), 0);
	cr_assert_eq(sid.pid, 300);
	cr_assert_eq(sid.tid, 301);
	cr_assert_eq(sid.time, 7777);
	cr_assert_eq(sid.id, 55);
	cr_assert_eq(sid.stream_id, 56);
	cr_assert_eq(sid.cpu, 1);

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

	m.len = 0;
	begin(&m, PERF_RECORD_LOST_SAMPLES, 0);
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
	m.len = 0;
	begin(&m, PERF_RECORD_LOST_SAMPLES, 0);
	u64(&m, 12);
	u64(&m, 1234);
	end(&m);
	cr_assert_eq(perfdata_decode_sample_id(rec(&m), PERF_SAMPLE_TID | PERF_SAMPLE_TIME, &sid),
		     -EINVAL);
	cr_assert_eq(perfdata_decode_sample_id(rec(&m), PERF_SAMPLE_TIME, &sid), 0);
	cr_assert_eq(sid.time, 1234);

	/* a trailer larger than the whole record */
	m.len = 0;
	begin(&m, PERF_RECORD_SWITCH, 0);
	end(&m);
	cr_assert_eq(perfdata_decode_sample_id(rec(&m), PERF_SAMPLE_TIME, &sid), -EINVAL);

	/* SAMPLE records have no trailer */
	m.len = 0;
	begin(&m, PERF_RECORD_SAMPLE, 0);
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

	m.len = 0;
	begin(&m, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
	u32x2(&m, (uint32_t)-1, 0);
	u64(&m, 0xffffffff81000000ULL);
	u64(&m, 0x1200000);
	u64(&m, 0xffffffff81000000ULL);
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

	m.len = 0;
	begin(&m, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	u32x2(&m, 10, 11);
	u64(&m, 0x400000);
	u64(&m, 0x1000);
	u64(&m, 0x2000);
	u32x2(&m, 8, 1);	/* maj, min */
	u64(&m, 123456);	/* ino */
	u64(&m, 7);		/* ino_generation */
	u32x2(&m, 5, 2);	/* prot r-x, MAP_PRIVATE */
	str_padded(&m, "/usr/bin/app");
	end(&m);
	cr_assert_eq(perfdata_decode_mmap2(rec(&m), &mm), 0);
	cr_assert_eq(mm.misc, PERF_RECORD_MISC_USER);
	cr_assert_eq(mm.pid, 10);
	cr_assert_eq(mm.tid, 11);
	cr_assert_eq(mm.maj, 8);
	cr_assert_eq(mm.min, 1);
	cr_assert_eq(mm.ino, 123456);
	cr_assert_eq(mm.ino_generation, 7);
	cr_assert_eq(mm.build_id_size, 0);
	cr_assert_eq(mm.prot, 5);
	cr_assert_eq(mm.flags, 2);
	cr_assert_str_eq(mm.filename, "/usr/bin/app");

	m.len = 0;
	begin(&m, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	u32x2(&m, 10, 11);
	u64(&m, 0x400000);
	u64(&m, 0x1000);
	u64(&m, 0);
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

	m.len = 0;
	begin(&m, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER);
	u32x2(&m, 1, 1);
	u64(&m, 1);
	u64(&m, 1);
	u64(&m, 0);
	put(&m, "abcdefgh", 8);	/* no NUL */
	end(&m);
	cr_assert_eq(perfdata_decode_mmap(rec(&m), &mm), -EINVAL);

	/* fixed fields cut short */
	rec(&m)->size = 8 + 16;
	cr_assert_eq(perfdata_decode_mmap(rec(&m), &mm), -EINVAL);

	/* MMAP2 without room for prot/flags */
	m.len = 0;
	begin(&m, PERF_RECORD_MMAP2, 0);
	zeros(&m, 56);
	end(&m);
	cr_assert_eq(perfdata_decode_mmap2(rec(&m), &mm), -EINVAL);
}

Test(decode_comm, exec_flag_and_bounds)
{
	static struct img m;
	struct perfdata_comm c;

	m.len = 0;
	begin(&m, PERF_RECORD_COMM, 0);
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

	m.len = 0;
	begin(&m, PERF_RECORD_FORK, 0);
	u32x2(&m, 200, 100);	/* pid, ppid */
	u32x2(&m, 201, 101);	/* tid, ptid */
	u64(&m, 31337);
	end(&m);
	cr_assert_eq(perfdata_decode_task(rec(&m), &t), 0);
	cr_assert_eq(t.pid, 200);
	cr_assert_eq(t.ppid, 100);
	cr_assert_eq(t.tid, 201);
	cr_assert_eq(t.ptid, 101);
	cr_assert_eq(t.time, 31337);
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

	m.len = 0;
	begin(&m, PERF_RECORD_KSYMBOL, 0);
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

	m.len = 0;
	begin(&m, PERF_RECORD_LOST, 0);
	u64(&m, 77);	/* id */
	u64(&m, 12345);	/* lost */
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
