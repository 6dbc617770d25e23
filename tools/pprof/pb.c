// SPDX-License-Identifier: MIT
/*
 * pb.c - protobuf wire encoding (see pb.h).
 *
 * pb_begin() reserves one byte for the length of the nested message, which
 * is enough for bodies under 128 bytes (most Lines, Labels, ValueTypes);
 * pb_end() moves a longer body up to make room for its real varint length.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pb.h"
#include "tools/lib/array.h"

void pb_free(struct pb_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

static int reserve(struct pb_buf *b, size_t n)
{
	if (b->err)
		return b->err;
	if (b->cap - b->len >= n)
		return 0;

	if (n > SIZE_MAX - b->len || ARRAY_RESERVE(b->data, b->cap, b->len + n, 256))
		return b->err = -ENOMEM;
	return 0;
}

size_t pb_varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

size_t pb_put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

int pb_varint(struct pb_buf *b, uint64_t v)
{
	int err = reserve(b, 10);

	if (err)
		return err;
	b->len += pb_put_varint(b->data + b->len, v);
	return 0;
}

int pb_tag(struct pb_buf *b, uint32_t field, enum pb_wire_type wt)
{
	return pb_varint(b, (uint64_t)field << 3 | wt);
}

int pb_uint64(struct pb_buf *b, uint32_t field, uint64_t v)
{
	int err = reserve(b, 20);

	if (err)
		return err;
	b->len += pb_put_varint(b->data + b->len, (uint64_t)field << 3 | PB_WIRE_VARINT);
	b->len += pb_put_varint(b->data + b->len, v);
	return 0;
}

int pb_int64(struct pb_buf *b, uint32_t field, int64_t v)
{
	return pb_uint64(b, field, (uint64_t)v);
}

int pb_bool(struct pb_buf *b, uint32_t field, bool v)
{
	return pb_uint64(b, field, v ? 1 : 0);
}

int pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len)
{
	int err = reserve(b, 20 + len);

	if (err)
		return err;
	b->len += pb_put_varint(b->data + b->len, (uint64_t)field << 3 | PB_WIRE_LEN);
	b->len += pb_put_varint(b->data + b->len, len);
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	return 0;
}

int pb_string(struct pb_buf *b, uint32_t field, const char *s)
{
	return pb_bytes(b, field, s, strlen(s));
}

int pb_packed_uint64(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n)
{
	size_t body = 0;
	int err;

	if (!n)
		return b->err;
	for (size_t i = 0; i < n; i++)
		body += pb_varint_size(v[i]);
	err = reserve(b, 20 + body);
	if (err)
		return err;
	b->len += pb_put_varint(b->data + b->len, (uint64_t)field << 3 | PB_WIRE_LEN);
	b->len += pb_put_varint(b->data + b->len, body);
	for (size_t i = 0; i < n; i++)
		b->len += pb_put_varint(b->data + b->len, v[i]);
	return 0;
}

int pb_packed_int64(struct pb_buf *b, uint32_t field, const int64_t *v, size_t n)
{
	/*
	 * int64 is encoded as the varint of its two's complement bits: the
	 * uint64 of the same bits (C lets the unsigned type read the signed).
	 */
	return pb_packed_uint64(b, field, (const uint64_t *)v, n);
}

int pb_begin(struct pb_buf *b, uint32_t field, size_t *mark)
{
	int err = pb_tag(b, field, PB_WIRE_LEN);

	if (!err)
		err = reserve(b, 1);
	if (err)
		return err;
	b->data[b->len++] = 0;	/* length placeholder */
	*mark = b->len;
	return 0;
}

int pb_end(struct pb_buf *b, size_t mark)
{
	if (b->err)
		return b->err;

	size_t body = b->len - mark;
	size_t need = pb_varint_size(body);

	if (need > 1) {
		int err = reserve(b, need - 1);

		if (err)
			return err;
		memmove(b->data + mark + need - 1, b->data + mark, body);
		b->len += need - 1;
	}
	pb_put_varint(b->data + mark - 1, body);
	return 0;
}
