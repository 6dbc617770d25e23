// SPDX-License-Identifier: MIT
/*
 * Unit tests for tools/agent/request.c: bodies built series by series, then
 * decoded by field number with the test's own decoder (test_agent_pb.h) and
 * each raw_profile gunzipped back to the bytes that went in.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <stdio.h>

#include "tools/agent/request.h"
#include "test_agent_pb.h"

/* Raw (uncompressed) sizes: empty, one-byte length, two, three-byte varint lengths. */
static const size_t sizes[] = { 0, 40, 1000, 20000, 400000, 77 };
#define NR_SIZES (sizeof(sizes) / sizeof(sizes[0]))

struct made {
	uint8_t *raw, *gz;
	size_t raw_len, gz_len;
};

static void make_profiles(struct made *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		m[i].raw_len = sizes[i % NR_SIZES];
		m[i].raw = malloc(m[i].raw_len + 1);
		cr_assert(m[i].raw);
		t_fill(m[i].raw, m[i].raw_len, (uint32_t)i + 7);
		m[i].gz = t_gzip(m[i].raw, m[i].raw_len, &m[i].gz_len);
	}
}

static void free_profiles(struct made *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].raw);
		free(m[i].gz);
	}
}

/* Series i: labels __name__=process_cpu, service_name=svc-i, and a third for odd i. */
static void add_series(struct push_request *req, const struct made *m, size_t i)
{
	char svc[32];
	struct agent_label l[3] = {
		{ "__name__", "process_cpu" },
		{ "service_name", svc },
		{ "hostname", "host.example" },
	};
	size_t chunk = 1 + i * 977;

	snprintf(svc, sizeof(svc), "svc-%zu", i);
	cr_assert_eq(push_request_begin_series(req, l, i % 2 ? 3 : 2), 0);
	/* Streamed in uneven chunks, as the gzip writer hands them over. */
	for (size_t off = 0; off < m->gz_len; off += chunk)
		cr_assert_eq(push_request_write(req, m->gz + off,
						m->gz_len - off < chunk ? m->gz_len - off : chunk), 0);
	cr_assert_eq(push_request_end_series(req), 0);
}

/* Series s of a decoded body is profile m[i] with add_series' labels. */
static void check_series(const struct t_series *s, const struct made *m, size_t i, bool parca)
{
	char svc[32];
	uint8_t *raw;
	size_t raw_len;

	snprintf(svc, sizeof(svc), "svc-%zu", i);
	cr_assert_eq(s->nr_samples, 1);
	cr_assert_eq(s->nr_labels, i % 2 ? 3u : 2u, "series %zu: %zu labels", i, s->nr_labels);
	cr_assert_str_eq(s->names[0], "__name__");
	cr_assert_str_eq(s->values[0], "process_cpu");
	cr_assert_str_eq(s->names[1], "service_name");
	cr_assert_str_eq(s->values[1], svc);
	if (i % 2) {
		cr_assert_str_eq(s->names[2], "hostname");
		cr_assert_str_eq(s->values[2], "host.example");
	}
	cr_assert_eq(s->raw_len, m->gz_len, "series %zu: raw_profile %zu bytes, sent %zu", i,
		     s->raw_len, m->gz_len);
	raw = t_gunzip(s->raw, s->raw_len, &raw_len);
	cr_assert_eq(raw_len, m->raw_len);
	cr_assert(!memcmp(raw, m->raw, raw_len), "series %zu: profile bytes differ", i);
	free(raw);
	if (parca) {
		cr_assert_str_eq(s->id, "");
	} else {
		/* A version-4 UUID: 8-4-4-4-12 lower-case hex digits. */
		cr_assert_eq(strlen(s->id), 36, "ID '%s'", s->id);
		for (int k = 0; k < 36; k++) {
			char c = s->id[k];

			if (k == 8 || k == 13 || k == 18 || k == 23)
				cr_assert_eq(c, '-');
			else
				cr_assert((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'), "ID '%s'", s->id);
		}
		cr_assert_eq(s->id[14], '4');
	}
}

ParameterizedTestParameters(request, roundtrip)
{
	static enum agent_api apis[] = { AGENT_API_PYROSCOPE, AGENT_API_PARCA };

	return cr_make_param_array(enum agent_api, apis, 2);
}

ParameterizedTest(enum agent_api *api, request, roundtrip)
{
	enum { N = 9 };
	struct made m[N];
	struct push_request *req;
	static struct t_body dec;
	const void *body;
	size_t len;

	make_profiles(m, N);
	cr_assert_eq(push_request_new(*api, &req), 0);
	for (size_t i = 0; i < N; i++)
		add_series(req, &m[i], i);
	cr_assert_eq(push_request_nr_series(req), N);
	cr_assert_eq(push_request_finish(req, &body, &len), 0);
	cr_assert_eq(len, push_request_size(req));
	t_decode(*api, body, len, &dec);
	cr_assert_eq(dec.nr, N);
	for (size_t i = 0; i < N; i++)
		check_series(&dec.s[i], &m[i], i, *api == AGENT_API_PARCA);
	cr_assert(!dec.has_tenant && !dec.normalized);
	if (*api == AGENT_API_PYROSCOPE)
		for (size_t i = 1; i < N; i++)
			cr_assert_str_neq(dec.s[i].id, dec.s[0].id, "sample IDs repeat");
	/* A finished request takes more series, and finishes again. */
	add_series(req, &m[0], 0);
	cr_assert_eq(push_request_finish(req, &body, &len), 0);
	t_decode(*api, body, len, &dec);
	cr_assert_eq(dec.nr, N + 1);
	check_series(&dec.s[N], &m[0], 0, *api == AGENT_API_PARCA);
	push_request_free(req);
	free_profiles(m, N);
}

Test(request, empty_bodies)
{
	struct push_request *req;
	const void *body;
	size_t len;

	cr_assert_eq(push_request_new(AGENT_API_PYROSCOPE, &req), 0);
	cr_assert_eq(push_request_finish(req, &body, &len), 0);
	cr_assert_eq(len, 0);
	push_request_free(req);

	cr_assert_eq(push_request_new(AGENT_API_PARCA, &req), 0);
	cr_assert_eq(push_request_finish(req, &body, &len), 0);
	cr_assert_eq(len, 5);
	cr_assert(!memcmp(body, "\0\0\0\0\0", 5));
	push_request_free(req);
	cr_assert_eq(push_request_new((enum agent_api)7, &req), -EINVAL);
}

Test(request, order_and_labels)
{
	struct agent_label dup[2] = { { "a", "1" }, { "a", "2" } };
	struct agent_label empty[1] = { { "", "1" } };
	struct agent_label ok[1] = { { "__name__", "process_cpu" } };
	struct push_request *req;
	const void *body;
	size_t len;
	static struct t_body dec;
	struct made m[3];

	make_profiles(m, 3);
	cr_assert_eq(push_request_new(AGENT_API_PYROSCOPE, &req), 0);
	cr_assert_eq(push_request_write(req, "x", 1), -EINVAL);
	cr_assert_eq(push_request_end_series(req), -EINVAL);
	cr_assert_eq(push_request_abort_series(req), -EINVAL);
	cr_assert_eq(push_request_begin_series(req, dup, 2), -EINVAL);
	cr_assert_eq(push_request_begin_series(req, empty, 1), -EINVAL);
	cr_assert_eq(push_request_size(req), 0);

	/* A half-written series aborted leaves nothing behind. */
	add_series(req, &m[1], 1);
	size_t before = push_request_size(req);

	cr_assert_eq(push_request_begin_series(req, ok, 1), 0);
	cr_assert_eq(push_request_begin_series(req, ok, 1), -EINVAL);
	cr_assert_eq(push_request_write(req, m[2].gz, m[2].gz_len), 0);
	cr_assert_gt(push_request_size(req), before + m[2].gz_len);
	cr_assert_eq(push_request_finish(req, &body, &len), -EINVAL);
	struct push_request *a, *b;

	cr_assert_eq(push_request_split(req, &a, &b), -EINVAL);
	cr_assert_eq(push_request_abort_series(req), 0);
	cr_assert_eq(push_request_size(req), before);
	cr_assert_eq(push_request_nr_series(req), 1);
	add_series(req, &m[2], 2);
	cr_assert_eq(push_request_finish(req, &body, &len), 0);
	t_decode(AGENT_API_PYROSCOPE, body, len, &dec);
	cr_assert_eq(dec.nr, 2);
	check_series(&dec.s[0], &m[1], 1, false);
	check_series(&dec.s[1], &m[2], 2, false);
	push_request_free(req);
	free_profiles(m, 3);
}

/* Split until every request holds one series: each split halves by bytes, keeps order. */
static void split_all(enum agent_api api, struct push_request *req, size_t first,
		      const struct made *m, size_t *seen)
{
	static struct t_body dec;
	struct push_request *a, *b;
	size_t n = push_request_nr_series(req), total = push_request_size(req), biggest = 0;
	const void *body;
	size_t len;

	cr_assert_eq(push_request_finish(req, &body, &len), 0);
	t_decode(api, body, len, &dec);
	cr_assert_eq(dec.nr, n);
	for (size_t i = 0; i < n; i++) {
		check_series(&dec.s[i], &m[first + i], first + i, api == AGENT_API_PARCA);
		if (dec.s[i].raw_len > biggest)
			biggest = dec.s[i].raw_len;
	}
	if (n == 1) {
		cr_assert_eq(push_request_split(req, &a, &b), -E2BIG);
		seen[first]++;
		return;
	}
	cr_assert_eq(push_request_split(req, &a, &b), 0);
	size_t na = push_request_nr_series(a), nb = push_request_nr_series(b);
	size_t sa = push_request_size(a), sb = push_request_size(b);
	size_t frame = api == AGENT_API_PARCA ? 5 : 0;

	cr_assert(na >= 1 && nb >= 1 && na + nb == n, "split %zu into %zu + %zu", n, na, nb);
	/* Every byte of the series lands in exactly one half... */
	cr_assert_eq(sa + sb - 2 * frame, total - frame);
	/* ...and the halves differ by less than the largest series (plus its header). */
	cr_assert_lt(sa > sb ? sa - sb : sb - sa, biggest + 256, "halves %zu and %zu", sa, sb);
	split_all(api, a, first, m, seen);
	split_all(api, b, first + na, m, seen);
	push_request_free(a);
	push_request_free(b);
}

ParameterizedTestParameters(request, split)
{
	static enum agent_api apis[] = { AGENT_API_PYROSCOPE, AGENT_API_PARCA };

	return cr_make_param_array(enum agent_api, apis, 2);
}

ParameterizedTest(enum agent_api *api, request, split)
{
	enum { N = 13 };
	struct made m[N];
	size_t seen[N] = { 0 };
	struct push_request *req;

	make_profiles(m, N);
	cr_assert_eq(push_request_new(*api, &req), 0);
	for (size_t i = 0; i < N; i++)
		add_series(req, &m[i], i);
	split_all(*api, req, 0, m, seen);
	for (size_t i = 0; i < N; i++)
		cr_assert_eq(seen[i], 1, "series %zu ended up in %zu requests", i, seen[i]);
	push_request_free(req);
	free_profiles(m, N);
}

Test(request, split_balance)
{
	/* Nine small series and one as big as all of them: the big one goes alone. */
	struct agent_label l[1] = { { "__name__", "process_cpu" } };
	static uint8_t big[9000], small[1000];
	struct push_request *req, *a, *b;

	cr_assert_eq(push_request_new(AGENT_API_PYROSCOPE, &req), 0);
	for (int i = 0; i < 10; i++) {
		cr_assert_eq(push_request_begin_series(req, l, 1), 0);
		cr_assert_eq(push_request_write(req, i == 9 ? big : small,
						i == 9 ? sizeof(big) : sizeof(small)), 0);
		cr_assert_eq(push_request_end_series(req), 0);
	}
	cr_assert_eq(push_request_split(req, &a, &b), 0);
	cr_assert_eq(push_request_nr_series(a), 9);
	cr_assert_eq(push_request_nr_series(b), 1);
	push_request_free(a);
	push_request_free(b);
	push_request_free(req);
}

Test(request, api_strings)
{
	cr_assert_str_eq(agent_api_path(AGENT_API_PYROSCOPE), "/push.v1.PusherService/Push");
	cr_assert_str_eq(agent_api_path(AGENT_API_PARCA),
			 "/parca.profilestore.v1alpha1.ProfileStoreService/WriteRaw");
	cr_assert_str_eq(agent_api_content_type(AGENT_API_PYROSCOPE), "application/proto");
	cr_assert_str_eq(agent_api_content_type(AGENT_API_PARCA), "application/grpc-web+proto");
	cr_assert_str_eq(agent_api_name(AGENT_API_PARCA), "parca");
}
