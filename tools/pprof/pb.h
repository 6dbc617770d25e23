/* SPDX-License-Identifier: MIT */
/*
 * pb.h - the protobuf wire format, encode side, into a growable buffer.
 *
 * Just what profile.proto needs: varint fields (uint64, int64, bool),
 * length-delimited fields (bytes, strings, packed repeated varints) and
 * nested messages. Encodings are canonical (shortest varints), so the bytes
 * can be compared with hand-computed ones.
 *
 * Nested messages: pb_begin() writes the tag and remembers where the body
 * starts; pb_end() writes the body's length in front of it. Begin/end pairs
 * nest like a stack.
 *
 * Errors are sticky: the first failed allocation marks the buffer failed,
 * every later call returns the same error without writing, so a caller may
 * encode a whole message and check once (pb_error()).
 */
#ifndef TOOLS_PPROF_PB_H
#define TOOLS_PPROF_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pb_wire_type {
	PB_WIRE_VARINT = 0,
	PB_WIRE_I64 = 1,
	PB_WIRE_LEN = 2,
	PB_WIRE_I32 = 5,
};

struct pb_buf {
	uint8_t *data;
	size_t len, cap;
	int err;
};

/* A zeroed struct pb_buf is a valid empty buffer. */
void pb_free(struct pb_buf *b);
/* Forget the contents (keep the memory); the sticky error stays. */
static inline void pb_reset(struct pb_buf *b)
{
	b->len = 0;
}
static inline int pb_error(const struct pb_buf *b)
{
	return b->err;
}

/* Bytes needed for v as a varint (1..10). */
size_t pb_varint_size(uint64_t v);
/* Write v as a varint at p (room for pb_varint_size(v) bytes); returns the bytes written. */
size_t pb_put_varint(uint8_t *p, uint64_t v);

int pb_varint(struct pb_buf *b, uint64_t v);
int pb_tag(struct pb_buf *b, uint32_t field, enum pb_wire_type wt);

/* Field writers. They always write, even a zero (proto3 callers skip defaults). */
int pb_uint64(struct pb_buf *b, uint32_t field, uint64_t v);
int pb_int64(struct pb_buf *b, uint32_t field, int64_t v);	/* two's complement, 10 bytes if < 0 */
int pb_bool(struct pb_buf *b, uint32_t field, bool v);
int pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len);
int pb_string(struct pb_buf *b, uint32_t field, const char *s);
/* Packed repeated varints (one LEN field). Nothing is written when n == 0. */
int pb_packed_uint64(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n);
int pb_packed_int64(struct pb_buf *b, uint32_t field, const int64_t *v, size_t n);

/* Nested message: *mark must be handed to the matching pb_end(). */
int pb_begin(struct pb_buf *b, uint32_t field, size_t *mark);
int pb_end(struct pb_buf *b, size_t mark);

#endif /* TOOLS_PPROF_PB_H */
