/* SPDX-License-Identifier: MIT */
/*
 * test_agent_pb.h - the agent tests' own decoder of push request bodies, by
 * the upstream field numbers (independent of tools/agent/request.c):
 *
 * Pyroscope (api/push/v1/push.proto, types/v1/types.proto):
 *   PushRequest.series = 1; RawProfileSeries.labels = 1, .samples = 2;
 *   LabelPair.name = 1, .value = 2; RawSample.raw_profile = 1, .ID = 2.
 * Parca (proto/parca/profilestore/v1alpha1/profilestore.proto), after the
 * 5-byte gRPC-Web frame prefix:
 *   WriteRawRequest.tenant = 1, .series = 2, .normalized = 3;
 *   RawProfileSeries.labels = 1 (a LabelSet), .samples = 2; LabelSet.labels = 1;
 *   Label.name = 1, .value = 2; RawSample.raw_profile = 1, .executable_info = 2.
 *
 * Also gzip helpers to make and undo a raw_profile.
 */
#ifndef TEST_AGENT_PB_H
#define TEST_AGENT_PB_H

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tools/agent/request.h"

#define T_MAX_LABELS 8
#define T_MAX_SERIES 64

struct t_series {
	size_t nr_labels;
	char names[T_MAX_LABELS][64], values[T_MAX_LABELS][64];
	const uint8_t *raw;	/* into the body */
	size_t raw_len;
	char id[64];
	int nr_samples;
};

struct t_body {
	size_t nr;
	struct t_series s[T_MAX_SERIES];
	bool normalized;
	bool has_tenant;
};

struct t_rd {
	const uint8_t *p, *end;
};

static inline bool t_varint(struct t_rd *r, uint64_t *v)
{
	*v = 0;
	for (int sh = 0; sh < 64 && r->p < r->end; sh += 7) {
		uint8_t b = *r->p++;

		*v |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* Next field: its number and wire type; for LEN fields a sub-reader. */
static inline bool t_field(struct t_rd *r, uint32_t *num, int *wt, struct t_rd *sub, uint64_t *v)
{
	uint64_t tag, len;

	if (!t_varint(r, &tag))
		return false;
	*num = (uint32_t)(tag >> 3);
	*wt = (int)(tag & 7);
	if (*wt == 0)
		return t_varint(r, v);
	cr_assert_eq(*wt, 2, "unexpected wire type %d", *wt);
	cr_assert(t_varint(r, &len));
	cr_assert(len <= (uint64_t)(r->end - r->p), "field %u overruns its message", *num);
	sub->p = r->p;
	sub->end = r->p + len;
	r->p += len;
	return true;
}

static inline void t_str(const struct t_rd *r, char *out, size_t cap)
{
	size_t n = (size_t)(r->end - r->p);

	cr_assert_lt(n, cap);
	memcpy(out, r->p, n);
	out[n] = 0;
}

static inline void t_label(struct t_rd l, struct t_series *s)
{
	struct t_rd f;
	uint32_t num;
	int wt;
	uint64_t v;

	cr_assert_lt(s->nr_labels, T_MAX_LABELS);
	while (l.p < l.end) {
		cr_assert(t_field(&l, &num, &wt, &f, &v));
		if (num == 1)
			t_str(&f, s->names[s->nr_labels], 64);
		else if (num == 2)
			t_str(&f, s->values[s->nr_labels], 64);
		else
			cr_assert_fail("label field %u", num);
	}
	s->nr_labels++;
}

static inline void t_sample(struct t_rd m, struct t_series *s, bool parca)
{
	struct t_rd f;
	uint32_t num;
	int wt;
	uint64_t v;

	s->nr_samples++;
	while (m.p < m.end) {
		cr_assert(t_field(&m, &num, &wt, &f, &v));
		if (num == 1) {
			s->raw = f.p;
			s->raw_len = (size_t)(f.end - f.p);
		} else if (num == 2 && !parca) {
			t_str(&f, s->id, sizeof(s->id));
		} else {
			cr_assert_fail("sample field %u", num);
		}
	}
}

static inline void t_series_msg(struct t_rd m, struct t_series *s, bool parca)
{
	struct t_rd f, g;
	uint32_t num;
	int wt;
	uint64_t v;

	memset(s, 0, sizeof(*s));
	while (m.p < m.end) {
		cr_assert(t_field(&m, &num, &wt, &f, &v));
		if (num == 1 && parca) {	/* LabelSet { repeated Label labels = 1 } */
			while (f.p < f.end) {
				cr_assert(t_field(&f, &num, &wt, &g, &v));
				cr_assert_eq(num, 1);
				t_label(g, s);
			}
		} else if (num == 1) {
			t_label(f, s);
		} else if (num == 2) {
			t_sample(f, s, parca);
		} else {
			cr_assert_fail("series field %u", num);
		}
	}
}

/* Decode a whole body as sent. */
static inline void t_decode(enum agent_api api, const void *body, size_t len, struct t_body *out)
{
	bool parca = api == AGENT_API_PARCA;
	struct t_rd r = { body, (const uint8_t *)body + len }, f;
	uint32_t num;
	int wt;
	uint64_t v;

	memset(out, 0, sizeof(*out));
	if (parca) {
		const uint8_t *p = body;

		cr_assert_geq(len, 5);
		cr_assert_eq(p[0], 0, "gRPC-Web frame flags 0x%x", p[0]);
		cr_assert_eq((size_t)p[1] << 24 | (size_t)p[2] << 16 | (size_t)p[3] << 8 | p[4],
			     len - 5, "frame length");
		r.p += 5;
	}
	while (r.p < r.end) {
		cr_assert(t_field(&r, &num, &wt, &f, &v));
		if (num == (parca ? 2u : 1u)) {
			cr_assert_lt(out->nr, T_MAX_SERIES);
			t_series_msg(f, &out->s[out->nr++], parca);
		} else if (parca && num == 3) {
			out->normalized = v;
		} else if (parca && num == 1) {
			out->has_tenant = true;
		} else {
			cr_assert_fail("request field %u", num);
		}
	}
}

/* gzip data into a malloc'd buffer. */
static inline uint8_t *t_gzip(const void *data, size_t len, size_t *out_len)
{
	z_stream zs = { 0 };
	size_t cap = len + len / 100 + 64;
	uint8_t *out = malloc(cap);

	cr_assert(out);
	cr_assert_eq(deflateInit2(&zs, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = (Bytef *)data;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	cr_assert_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
	*out_len = zs.total_out;
	deflateEnd(&zs);
	return out;
}

static inline uint8_t *t_gunzip(const void *data, size_t len, size_t *out_len)
{
	z_stream zs = { 0 };
	size_t cap = 4 * len + 1024;
	uint8_t *out = malloc(cap);
	int rc;

	cr_assert(out);
	cr_assert_eq(inflateInit2(&zs, 31), Z_OK);
	zs.next_in = (Bytef *)data;
	zs.avail_in = (uInt)len;
	for (;;) {
		zs.next_out = out + zs.total_out;
		zs.avail_out = (uInt)(cap - zs.total_out);
		rc = inflate(&zs, Z_NO_FLUSH);
		if (rc == Z_STREAM_END)
			break;
		cr_assert(rc == Z_OK || rc == Z_BUF_ERROR, "inflate: %d", rc);
		cap *= 2;
		out = realloc(out, cap);
		cr_assert(out);
	}
	*out_len = zs.total_out;
	inflateEnd(&zs);
	return out;
}

/* Deterministic bytes that compress somewhat, like a profile. */
static inline void t_fill(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		p[i] = (uint8_t)(x % 23 + 'a');
	}
}

#endif /* TEST_AGENT_PB_H */
