// SPDX-License-Identifier: MIT
/*
 * request.c - push request bodies (see request.h).
 *
 * The body is one growable byte array. A series is laid out so that its
 * profile never needs a second buffer:
 *
 *   begin_series:  [series start][gap: room for every header][profile ...]
 *   end_series:    [series tag, len, labels, sample tag, len, (ID,) raw tag, len][profile]
 *
 * The gap is sized for the largest header (10-byte varints), the real
 * header is written in front of the profile and the profile moved down once
 * to meet it. The labels are encoded at begin_series into a scratch buffer
 * with the pprof module's protobuf writer (pb.h), so both APIs' label
 * layouts come from one place.
 *
 * Each finished series' (offset, length) is kept, for push_request_split().
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "tools/lib/array.h"
#include "tools/pprof/pb.h"
#include "request.h"

/* Pyroscope: PushRequest.series, RawProfileSeries.{labels,samples}, LabelPair.{name,value},
 * RawSample.{raw_profile,ID}. */
#define PYRO_PUSH_SERIES	1
#define PYRO_SERIES_LABELS	1
#define PYRO_SERIES_SAMPLES	2
#define PYRO_LABEL_NAME		1
#define PYRO_LABEL_VALUE	2
#define PYRO_SAMPLE_RAW		1
#define PYRO_SAMPLE_ID		2
/* Parca: WriteRawRequest.series, RawProfileSeries.{labels,samples}, LabelSet.labels,
 * Label.{name,value}, RawSample.raw_profile. */
#define PARCA_WRITE_SERIES	2
#define PARCA_SERIES_LABELS	1
#define PARCA_SERIES_SAMPLES	2
#define PARCA_LABELSET_LABELS	1
#define PARCA_LABEL_NAME	1
#define PARCA_LABEL_VALUE	2
#define PARCA_SAMPLE_RAW	1

/* gRPC(-Web) message frame: 1 flag byte, 4 length bytes (big-endian). */
#define GRPC_FRAME_LEN		5
/* A UUID in its text form: 8-4-4-4-12 hex digits. */
#define UUID_LEN		36
/* Three tags (one byte each: fields < 16) and three 10-byte varint lengths. */
#define HDR_SLACK		(3 * (1 + 10))

struct series_span {
	size_t off, len;
};

struct push_request {
	enum agent_api api;
	uint8_t *data;
	size_t len, cap;
	size_t hdr_len;		/* bytes before the first series (Parca's frame prefix) */

	struct series_span *spans;
	size_t nr_spans, spans_cap;

	/* The open series. */
	bool open;
	size_t series_off;	/* where its header goes */
	size_t profile_off;	/* where its profile bytes start (after the gap) */
	struct pb_buf labels;	/* its encoded labels, as they go inside the series */
	char id[UUID_LEN + 1];	/* Pyroscope's sample ID */
};

const char *agent_api_path(enum agent_api api)
{
	return api == AGENT_API_PARCA ? "/parca.profilestore.v1alpha1.ProfileStoreService/WriteRaw"
				      : "/push.v1.PusherService/Push";
}

const char *agent_api_content_type(enum agent_api api)
{
	return api == AGENT_API_PARCA ? "application/grpc-web+proto" : "application/proto";
}

const char *agent_api_name(enum agent_api api)
{
	return api == AGENT_API_PARCA ? "parca" : "pyroscope";
}

static int reserve(struct push_request *r, size_t n)
{
	if (n > SIZE_MAX - r->len)
		return -ENOMEM;
	return ARRAY_RESERVE(r->data, r->cap, r->len + n, 4096);
}

int push_request_new(enum agent_api api, struct push_request **req)
{
	struct push_request *r;

	if (api != AGENT_API_PYROSCOPE && api != AGENT_API_PARCA)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->api = api;
	if (api == AGENT_API_PARCA) {
		if (reserve(r, GRPC_FRAME_LEN)) {
			free(r);
			return -ENOMEM;
		}
		memset(r->data, 0, GRPC_FRAME_LEN);	/* patched by finish */
		r->len = r->hdr_len = GRPC_FRAME_LEN;
	}
	*req = r;
	return 0;
}

void push_request_free(struct push_request *req)
{
	if (!req)
		return;
	pb_free(&req->labels);
	free(req->spans);
	free(req->data);
	free(req);
}

/* A random version-4 UUID; clock bits if the kernel's pool is not ready (an ID, not a secret). */
static void make_uuid(char out[UUID_LEN + 1])
{
	uint8_t b[16];

	if (getrandom(b, sizeof(b), GRND_NONBLOCK) != (ssize_t)sizeof(b)) {
		struct timespec ts;
		uint64_t x;

		clock_gettime(CLOCK_REALTIME, &ts);
		x = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		for (size_t i = 0; i < sizeof(b); i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			b[i] = (uint8_t)x;
		}
	}
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	snprintf(out, UUID_LEN + 1,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		 b[13], b[14], b[15]);
}

static int encode_labels(struct push_request *r, const struct agent_label *labels, size_t n)
{
	struct pb_buf *b = &r->labels;
	size_t set = 0, one;

	pb_reset(b);
	if (r->api == AGENT_API_PARCA)
		pb_begin(b, PARCA_SERIES_LABELS, &set);
	for (size_t i = 0; i < n; i++) {
		if (r->api == AGENT_API_PARCA) {
			pb_begin(b, PARCA_LABELSET_LABELS, &one);
			pb_string(b, PARCA_LABEL_NAME, labels[i].name);
			pb_string(b, PARCA_LABEL_VALUE, labels[i].value);
		} else {
			pb_begin(b, PYRO_SERIES_LABELS, &one);
			pb_string(b, PYRO_LABEL_NAME, labels[i].name);
			pb_string(b, PYRO_LABEL_VALUE, labels[i].value);
		}
		pb_end(b, one);
	}
	if (r->api == AGENT_API_PARCA)
		pb_end(b, set);
	return pb_error(b);
}

int push_request_begin_series(struct push_request *req, const struct agent_label *labels,
			      size_t n)
{
	size_t gap;
	int err;

	if (req->open || (n && !labels))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!labels[i].name || !labels[i].name[0] || !labels[i].value)
			return -EINVAL;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(labels[i].name, labels[j].name))
				return -EINVAL;
	}
	/* A failed allocation is sticky in a pb_buf: start each series from a fresh one. */
	if (pb_error(&req->labels))
		pb_free(&req->labels);
	err = encode_labels(req, labels, n);
	if (err)
		return err;
	gap = req->labels.len + HDR_SLACK;
	if (req->api == AGENT_API_PYROSCOPE) {
		make_uuid(req->id);
		gap += 1 + 1 + UUID_LEN;	/* ID: tag, one-byte length, the text */
	}
	err = reserve(req, gap);
	if (err)
		return err;
	req->series_off = req->len;
	req->len += gap;
	req->profile_off = req->len;
	req->open = true;
	return 0;
}

int push_request_write(void *ctx, const void *buf, size_t len)
{
	struct push_request *req = ctx;
	int err;

	if (!req->open)
		return -EINVAL;
	if (!len)
		return 0;
	err = reserve(req, len);
	if (err)
		return err;
	memcpy(req->data + req->len, buf, len);
	req->len += len;
	return 0;
}

static uint8_t *put_len_field(uint8_t *p, uint32_t field, uint64_t len)
{
	*p++ = (uint8_t)(field << 3 | PB_WIRE_LEN);	/* fields < 16: one byte */
	return p + pb_put_varint(p, len);
}

int push_request_end_series(struct push_request *req)
{
	bool parca = req->api == AGENT_API_PARCA;
	size_t plen, id_len, sample_len, series_len, hlen;
	uint8_t *start, *p;

	if (!req->open)
		return -EINVAL;
	if (ARRAY_RESERVE(req->spans, req->spans_cap, req->nr_spans + 1, 16))
		return -ENOMEM;
	plen = req->len - req->profile_off;
	id_len = parca ? 0 : 1 + pb_varint_size(UUID_LEN) + UUID_LEN;
	sample_len = id_len + 1 + pb_varint_size(plen) + plen;
	series_len = req->labels.len + 1 + pb_varint_size(sample_len) + sample_len;

	/*
	 * The header fits the gap (sized for 10-byte varints), so writing it
	 * leaves the profile untouched; then the profile moves down to it.
	 */
	start = p = req->data + req->series_off;
	p = put_len_field(p, parca ? PARCA_WRITE_SERIES : PYRO_PUSH_SERIES, series_len);
	memcpy(p, req->labels.data, req->labels.len);
	p += req->labels.len;
	p = put_len_field(p, parca ? PARCA_SERIES_SAMPLES : PYRO_SERIES_SAMPLES, sample_len);
	if (!parca) {
		p = put_len_field(p, PYRO_SAMPLE_ID, UUID_LEN);
		memcpy(p, req->id, UUID_LEN);
		p += UUID_LEN;
	}
	p = put_len_field(p, parca ? PARCA_SAMPLE_RAW : PYRO_SAMPLE_RAW, plen);
	hlen = (size_t)(p - start);
	if (p != req->data + req->profile_off)
		memmove(p, req->data + req->profile_off, plen);
	req->len = req->series_off + hlen + plen;
	req->spans[req->nr_spans++] = (struct series_span){ req->series_off, hlen + plen };
	req->open = false;
	return 0;
}

int push_request_abort_series(struct push_request *req)
{
	if (!req->open)
		return -EINVAL;
	req->len = req->series_off;
	req->open = false;
	return 0;
}

size_t push_request_nr_series(const struct push_request *req)
{
	return req->nr_spans;
}

size_t push_request_size(const struct push_request *req)
{
	return req->len;
}

int push_request_finish(struct push_request *req, const void **body, size_t *len)
{
	if (req->open)
		return -EINVAL;
	if (req->api == AGENT_API_PARCA) {
		uint64_t n = req->len - GRPC_FRAME_LEN;

		if (n > UINT32_MAX)
			return -E2BIG;
		req->data[0] = 0;	/* flags: an uncompressed data frame */
		req->data[1] = (uint8_t)(n >> 24);
		req->data[2] = (uint8_t)(n >> 16);
		req->data[3] = (uint8_t)(n >> 8);
		req->data[4] = (uint8_t)n;
	}
	*body = req->data;
	*len = req->len;
	return 0;
}

/* Append finished series [from, to) of src to dst. */
static int copy_series(struct push_request *dst, const struct push_request *src, size_t from,
		       size_t to)
{
	size_t bytes = 0;
	int err;

	for (size_t i = from; i < to; i++)
		bytes += src->spans[i].len;
	err = reserve(dst, bytes);
	if (err)
		return err;
	dst->spans = malloc((to - from) * sizeof(*dst->spans));
	if (!dst->spans)
		return -ENOMEM;
	dst->spans_cap = to - from;
	for (size_t i = from; i < to; i++) {
		const struct series_span *s = &src->spans[i];

		memcpy(dst->data + dst->len, src->data + s->off, s->len);
		dst->spans[dst->nr_spans++] = (struct series_span){ dst->len, s->len };
		dst->len += s->len;
	}
	return 0;
}

int push_request_split(const struct push_request *req, struct push_request **a,
		       struct push_request **b)
{
	struct push_request *ra = NULL, *rb = NULL;
	size_t total = 0, acc = 0, cut = 1;
	int err;

	if (req->open)
		return -EINVAL;
	if (req->nr_spans < 2)
		return -E2BIG;
	for (size_t i = 0; i < req->nr_spans; i++)
		total += req->spans[i].len;
	/* The cut (each side at least one series) closest to half the bytes. */
	for (size_t i = 0, best = SIZE_MAX; i + 1 < req->nr_spans; i++) {
		size_t d;

		acc += req->spans[i].len;
		d = 2 * acc > total ? 2 * acc - total : total - 2 * acc;
		if (d < best) {
			best = d;
			cut = i + 1;
		}
	}

	err = push_request_new(req->api, &ra);
	if (!err)
		err = push_request_new(req->api, &rb);
	if (!err)
		err = copy_series(ra, req, 0, cut);
	if (!err)
		err = copy_series(rb, req, cut, req->nr_spans);
	if (err) {
		push_request_free(ra);
		push_request_free(rb);
		return err;
	}
	*a = ra;
	*b = rb;
	return 0;
}
