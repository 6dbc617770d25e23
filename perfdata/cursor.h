/* SPDX-License-Identifier: MIT */
/*
 * cursor.h - the one bounded reader over bytes of a perf.data file: a
 * record's body (decode.c), a feature's payload (reader.c, dump). Each
 * step checks that what it takes lies inside [p, end) before it reads, so
 * no size in the file can make it read past the end; scalars are read with
 * memcpy, so the bytes may sit at any address. Steps return 0, or -EINVAL
 * (and leave the cursor where it was) when the bytes are not there.
 */
#ifndef PERFDATA_CURSOR_H
#define PERFDATA_CURSOR_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct perfdata_cursor {
	const uint8_t *p;
	const uint8_t *end;
};

static inline void perfdata_cursor_init(struct perfdata_cursor *c, const void *data, size_t size)
{
	c->p = data;
	c->end = c->p + size;
}

static inline size_t perfdata_cursor_left(const struct perfdata_cursor *c)
{
	return (size_t)(c->end - c->p);
}

/* Consume n bytes; *out (if out is not NULL) points at them. */
static inline int perfdata_cursor_take(struct perfdata_cursor *c, uint64_t n, const void **out)
{
	if (n > perfdata_cursor_left(c))
		return -EINVAL;
	if (out)
		*out = c->p;
	c->p += n;
	return 0;
}

/* Copy the next n bytes to v, or skip them when v is NULL. */
static inline int perfdata_cursor_copy(struct perfdata_cursor *c, void *v, size_t n)
{
	const void *at;

	if (perfdata_cursor_take(c, n, &at))
		return -EINVAL;
	if (v)
		memcpy(v, at, n);
	return 0;
}

/* v may be NULL: skip the value. */
static inline int perfdata_cursor_u32(struct perfdata_cursor *c, uint32_t *v)
{
	return perfdata_cursor_copy(c, v, sizeof(*v));
}

static inline int perfdata_cursor_u64(struct perfdata_cursor *c, uint64_t *v)
{
	return perfdata_cursor_copy(c, v, sizeof(*v));
}

/* Two u32 packed in one u64 slot ({pid, tid}, {cpu, res}); either may be NULL. */
static inline int perfdata_cursor_u32_pair(struct perfdata_cursor *c, uint32_t *a, uint32_t *b)
{
	const uint8_t *at;

	if (perfdata_cursor_take(c, 8, (const void **)&at))
		return -EINVAL;
	if (a)
		memcpy(a, at, 4);
	if (b)
		memcpy(b, at + 4, 4);
	return 0;
}

/*
 * perf's string: u32 len, then len bytes holding a NUL-padded string.
 * *s points at the bytes and *max is len: the string may lack its NUL,
 * so read at most *max bytes of it.
 */
static inline int perfdata_cursor_string(struct perfdata_cursor *c, const char **s, size_t *max)
{
	struct perfdata_cursor start = *c;
	uint32_t len;
	const void *at;

	if (perfdata_cursor_u32(c, &len) || perfdata_cursor_take(c, len, &at)) {
		*c = start;
		return -EINVAL;
	}
	*s = at;
	*max = len;
	return 0;
}

#endif /* PERFDATA_CURSOR_H */
