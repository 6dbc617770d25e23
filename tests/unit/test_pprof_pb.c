// SPDX-License-Identifier: MIT
/* Unit tests for tools/pprof/pb.c: byte-exact protobuf wire encodings, computed by hand. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "tools/pprof/pb.h"

static void expect_bytes(const struct pb_buf *b, const uint8_t *want, size_t n)
{
	cr_assert_eq(pb_error(b), 0);
	cr_assert_eq(b->len, n, "encoded %zu bytes, expected %zu", b->len, n);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(b->data[i], want[i], "byte %zu: 0x%02x, expected 0x%02x", i,
			     b->data[i], want[i]);
}

#define EXPECT(b, ...)                                                        \
	do {                                                                  \
		const uint8_t want_[] = { __VA_ARGS__ };                      \
		expect_bytes((b), want_, sizeof(want_));                      \
	} while (0)

Test(pb, varints)
{
	struct pb_buf b = { 0 };

	pb_varint(&b, 0);
	pb_varint(&b, 1);
	pb_varint(&b, 127);
	pb_varint(&b, 128);
	pb_varint(&b, 300);
	pb_varint(&b, 16384);
	EXPECT(&b, 0x00, 0x01, 0x7f, 0x80, 0x01, 0xac, 0x02, 0x80, 0x80, 0x01);
	pb_reset(&b);
	pb_varint(&b, UINT64_MAX);
	EXPECT(&b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01);
	pb_free(&b);
}

Test(pb, varint_size)
{
	cr_assert_eq(pb_varint_size(0), 1);
	cr_assert_eq(pb_varint_size(127), 1);
	cr_assert_eq(pb_varint_size(128), 2);
	cr_assert_eq(pb_varint_size(16383), 2);
	cr_assert_eq(pb_varint_size(16384), 3);
	cr_assert_eq(pb_varint_size(UINT64_MAX), 10);
}

Test(pb, scalar_fields)
{
	struct pb_buf b = { 0 };

	/* The protobuf documentation's example: field 1 = 150. */
	pb_uint64(&b, 1, 150);
	EXPECT(&b, 0x08, 0x96, 0x01);
	pb_reset(&b);
	pb_int64(&b, 3, -1);
	EXPECT(&b, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01);
	pb_reset(&b);
	pb_bool(&b, 7, true);
	pb_bool(&b, 8, false);
	EXPECT(&b, 0x38, 0x01, 0x40, 0x00);
	pb_reset(&b);
	/* Field 16 needs a two-byte tag: (16 << 3 | 0) = 128. */
	pb_uint64(&b, 16, 1);
	EXPECT(&b, 0x80, 0x01, 0x01);
	pb_free(&b);
}

Test(pb, strings_and_bytes)
{
	struct pb_buf b = { 0 };

	pb_string(&b, 2, "testing");
	EXPECT(&b, 0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g');
	pb_reset(&b);
	pb_string(&b, 6, "");
	EXPECT(&b, 0x32, 0x00);
	pb_reset(&b);
	pb_bytes(&b, 1, "\x00\xff", 2);
	EXPECT(&b, 0x0a, 0x02, 0x00, 0xff);
	pb_free(&b);
}

Test(pb, packed)
{
	struct pb_buf b = { 0 };
	uint64_t u[] = { 3, 270, 86942 };
	int64_t s[] = { 1, -1 };

	/* The protobuf documentation's packed example. */
	pb_packed_uint64(&b, 4, u, 3);
	EXPECT(&b, 0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05);
	pb_reset(&b);
	pb_packed_int64(&b, 2, s, 2);
	EXPECT(&b, 0x12, 0x0b, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01);
	pb_reset(&b);
	cr_assert_eq(pb_packed_uint64(&b, 1, u, 0), 0);
	cr_assert_eq(b.len, 0, "an empty packed field is not written");
	pb_free(&b);
}

Test(pb, nested_short)
{
	struct pb_buf b = { 0 };
	size_t m;

	cr_assert_eq(pb_begin(&b, 4, &m), 0);
	pb_uint64(&b, 1, 1);
	pb_uint64(&b, 2, 150);
	cr_assert_eq(pb_end(&b, m), 0);
	EXPECT(&b, 0x22, 0x05, 0x08, 0x01, 0x10, 0x96, 0x01);
	pb_reset(&b);
	pb_begin(&b, 3, &m);
	pb_end(&b, m);
	EXPECT(&b, 0x1a, 0x00);
	pb_free(&b);
}

Test(pb, nested_long_moves_body)
{
	struct pb_buf b = { 0 };
	uint8_t payload[200];
	size_t m;

	memset(payload, 0xab, sizeof(payload));
	pb_uint64(&b, 1, 7);
	pb_begin(&b, 2, &m);
	pb_bytes(&b, 1, payload, sizeof(payload));	/* body: 0x0a c8 01 + 200 = 203 bytes */
	pb_end(&b, m);
	pb_uint64(&b, 3, 9);
	cr_assert_eq(b.len, 2 + 1 + 2 + 203 + 2);
	cr_assert_eq(b.data[0], 0x08);
	cr_assert_eq(b.data[1], 0x07);
	cr_assert_eq(b.data[2], 0x12);
	cr_assert_eq(b.data[3], 0xcb);	/* 203 = 0xcb 0x01 */
	cr_assert_eq(b.data[4], 0x01);
	cr_assert_eq(b.data[5], 0x0a);
	cr_assert_eq(b.data[6], 0xc8);
	cr_assert_eq(b.data[7], 0x01);
	for (size_t i = 0; i < 200; i++)
		cr_assert_eq(b.data[8 + i], 0xab);
	cr_assert_eq(b.data[208], 0x18);
	cr_assert_eq(b.data[209], 0x09);
	pb_free(&b);
}

Test(pb, nested_in_nested)
{
	struct pb_buf b = { 0 };
	uint8_t payload[130];
	size_t outer, inner;

	memset(payload, 1, sizeof(payload));
	pb_begin(&b, 1, &outer);
	pb_uint64(&b, 1, 5);
	pb_begin(&b, 2, &inner);
	pb_bytes(&b, 3, payload, sizeof(payload));	/* 1 + 2 + 130 = 133 */
	pb_end(&b, inner);				/* 1 + 2 + 133 = 136 */
	pb_end(&b, outer);				/* 2 + 136 = 138 */
	cr_assert_eq(b.len, 1 + 2 + 138);
	const uint8_t head[] = { 0x0a, 0x8a, 0x01, 0x08, 0x05, 0x12, 0x85, 0x01, 0x1a, 0x82, 0x01 };

	for (size_t i = 0; i < sizeof(head); i++)
		cr_assert_eq(b.data[i], head[i], "byte %zu: 0x%02x", i, b.data[i]);
	pb_free(&b);
}

Test(pb, sticky_error)
{
	struct pb_buf b = { 0 };

	pb_uint64(&b, 1, 1);
	b.err = -ENOMEM;	/* as after a failed allocation */
	cr_assert_eq(pb_uint64(&b, 2, 2), -ENOMEM);
	cr_assert_eq(pb_string(&b, 2, "x"), -ENOMEM);
	cr_assert_eq(b.len, 2, "nothing written after an error");
	pb_free(&b);
}
