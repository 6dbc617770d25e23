/* SPDX-License-Identifier: MIT */
/*
 * test_pprof_decode.h - a tiny, strict profile.proto decoder for the pprof
 * unit tests, written independently of the encoder: it parses the wire
 * format into fields and checks everything go tool pprof relies on
 * (string_table[0] == "", indices in range, unique non-zero ids, one value
 * per sample type, valid UTF-8). Header-only; include it in one test file.
 */
#ifndef TEST_PPROF_DECODE_H
#define TEST_PPROF_DECODE_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* The bytes a serializer writes, collected by tpb_sink() for the decoder; free data. */
struct tpb_buf {
	uint8_t *data;
	size_t len;
};

/* A write callback (bpfrec_write_fn's shape) appending to the struct tpb_buf at ctx. */
static inline int tpb_sink(const void *data, size_t len, void *ctx)
{
	struct tpb_buf *m = ctx;

	m->data = realloc(m->data, m->len + len);
	memcpy(m->data + m->len, data, len);
	m->len += len;
	return 0;
}

struct tpb_field {
	uint32_t num;
	int wt;
	uint64_t v;
	const uint8_t *p;
	size_t len;
};

struct tpb_msg {
	struct tpb_field *f;
	size_t n;
};

static inline uint64_t tpb_varint(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 70; shift += 7) {
		cr_assert_lt(*p, end, "varint runs past the end");
		uint8_t c = *(*p)++;

		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	cr_assert_fail("varint longer than 10 bytes");
	return 0;
}

static inline struct tpb_msg tpb_parse(const uint8_t *p, size_t len)
{
	const uint8_t *end = p + len;
	struct tpb_msg m = { 0 };
	size_t cap = 0;

	while (p < end) {
		uint64_t tag = tpb_varint(&p, end);
		struct tpb_field f = { .num = tag >> 3, .wt = tag & 7 };

		cr_assert_neq(f.num, 0, "field number 0");
		switch (f.wt) {
		case 0:
			f.v = tpb_varint(&p, end);
			break;
		case 2:
			f.len = tpb_varint(&p, end);
			cr_assert_leq(f.len, (size_t)(end - p), "length past the end");
			f.p = p;
			p += f.len;
			break;
		default:
			cr_assert_fail("unexpected wire type %d", f.wt);
		}
		if (m.n == cap) {
			cap = cap ? cap * 2 : 16;
			m.f = realloc(m.f, cap * sizeof(*m.f));
		}
		m.f[m.n++] = f;
	}
	return m;
}

/* Values of a repeated varint field, packed or not. */
static inline size_t tpb_varints(const struct tpb_msg *m, uint32_t num, uint64_t *out, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n; i++) {
		if (m->f[i].num != num)
			continue;
		if (m->f[i].wt == 0) {
			cr_assert_lt(n, cap);
			out[n++] = m->f[i].v;
			continue;
		}
		const uint8_t *p = m->f[i].p, *end = p + m->f[i].len;

		while (p < end) {
			cr_assert_lt(n, cap);
			out[n++] = tpb_varint(&p, end);
		}
	}
	return n;
}

/* The last value of a scalar varint field, or 0 (proto3 default). */
static inline uint64_t tpb_u64(const struct tpb_msg *m, uint32_t num)
{
	uint64_t v = 0;

	for (size_t i = 0; i < m->n; i++)
		if (m->f[i].num == num) {
			cr_assert_eq(m->f[i].wt, 0, "field %u is not a varint", num);
			v = m->f[i].v;
		}
	return v;
}

static inline bool tpb_utf8_valid(const uint8_t *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		uint8_t c = s[i];
		size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;

		if (!n || i + n > len || (n == 2 && c < 0xc2))
			return false;
		for (size_t k = 1; k < n; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
		i += n;
	}
	return true;
}

/* ---- the decoded profile ---- */

struct tp_label {
	const char *key, *str, *unit;
	int64_t num;
};

struct tp_sample {
	uint64_t locs[256];
	size_t nr_locs;
	int64_t values[8];
	size_t nr_values;
	struct tp_label labels[16];
	size_t nr_labels;
};

struct tp_line {
	uint64_t function_id;
	int64_t line;
};

struct tp_location {
	uint64_t id, mapping_id, address;
	struct tp_line lines[32];
	size_t nr_lines;
};

struct tp_mapping {
	uint64_t id, start, limit, offset;
	const char *filename, *build_id;
	bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

struct tp_function {
	uint64_t id;
	const char *name, *system_name, *filename;
	int64_t start_line;
};

struct tp_profile {
	char **strings;
	size_t nr_strings;
	const char *types[8][2];
	size_t nr_types;
	struct tp_sample *samples;
	size_t nr_samples;
	struct tp_mapping *mappings;
	size_t nr_mappings;
	struct tp_location *locations;
	size_t nr_locations;
	struct tp_function *functions;
	size_t nr_functions;
	int64_t time_nanos, duration_nanos, period;
	const char *period_type[2];
	const char *comments[8];
	size_t nr_comments;
	const char *default_sample_type;
};

static inline const char *tp_str(const struct tp_profile *p, uint64_t i)
{
	cr_assert_lt(i, p->nr_strings, "string index %lu out of range", (unsigned long)i);
	return p->strings[i];
}

/*
 * Room for element n (zeroed) in an array that grows one element at a
 * time: the capacity doubles at each power of two, so n appends copy O(n)
 * bytes, not O(n^2) (a sample is kilobytes; ASan's realloc always copies,
 * and 5,000 samples took minutes of a CI run).
 */
static inline void *tp_grow(void *a, size_t n, size_t size)
{
	if ((n & (n - 1)) == 0)	/* 0, 1, 2, 4, ...: full */
		a = realloc(a, (n ? 2 * n : 1) * size);
	cr_assert_not_null(a);
	memset((char *)a + n * size, 0, size);
	return a;
}

static inline int tp_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The ids (a uint64_t at OFF in each of N elements of SIZE) sorted; each non-zero and unique. */
static inline uint64_t *tp_sorted_ids(const void *elems, size_t n, size_t size, size_t off,
				      const char *what)
{
	uint64_t *ids = malloc((n ? n : 1) * sizeof(*ids));

	cr_assert_not_null(ids);
	for (size_t i = 0; i < n; i++) {
		memcpy(&ids[i], (const char *)elems + i * size + off, sizeof(*ids));
		if (!ids[i])
			cr_assert_fail("%s id 0", what);
	}
	qsort(ids, n, sizeof(*ids), tp_cmp_u64);
	for (size_t i = 1; i < n; i++)
		if (ids[i] == ids[i - 1])
			cr_assert_fail("duplicate %s id %lu", what, (unsigned long)ids[i]);
	return ids;
}

static inline bool tp_has_id(const uint64_t *ids, size_t n, uint64_t id)
{
	return bsearch(&id, ids, n, sizeof(*ids), tp_cmp_u64) != NULL;
}

/* Decode an uncompressed Profile and check its invariants. */
static inline struct tp_profile *tp_decode(const uint8_t *data, size_t len)
{
	struct tp_profile *p = calloc(1, sizeof(*p));
	struct tpb_msg m = tpb_parse(data, len);

	/* Strings first: everything else refers to them. */
	for (size_t i = 0; i < m.n; i++) {
		if (m.f[i].num != 6)
			continue;
		cr_assert_eq(m.f[i].wt, 2);
		cr_assert(tpb_utf8_valid(m.f[i].p, m.f[i].len), "string %zu is not UTF-8",
			  p->nr_strings);
		p->strings = tp_grow(p->strings, p->nr_strings, sizeof(char *));
		p->strings[p->nr_strings] = strndup((const char *)m.f[i].p, m.f[i].len);
		p->nr_strings++;
	}
	cr_assert_geq(p->nr_strings, 1, "no string table");
	cr_assert_str_eq(p->strings[0], "", "string_table[0] must be empty");

	for (size_t i = 0; i < m.n; i++) {
		const struct tpb_field *f = &m.f[i];
		struct tpb_msg s = { 0 };

		if (f->wt == 2 && f->num != 6)
			s = tpb_parse(f->p, f->len);
		switch (f->num) {
		case 1:	/* sample_type */
			cr_assert_lt(p->nr_types, 8);
			p->types[p->nr_types][0] = tp_str(p, tpb_u64(&s, 1));
			p->types[p->nr_types][1] = tp_str(p, tpb_u64(&s, 2));
			p->nr_types++;
			break;
		case 2: {	/* sample */
			struct tp_sample *x;
			uint64_t v[8];

			p->samples = tp_grow(p->samples, p->nr_samples, sizeof(*x));
			x = &p->samples[p->nr_samples++];
			x->nr_locs = tpb_varints(&s, 1, x->locs, 256);
			x->nr_values = tpb_varints(&s, 2, v, 8);
			for (size_t k = 0; k < x->nr_values; k++)
				x->values[k] = (int64_t)v[k];
			for (size_t k = 0; k < s.n; k++) {
				if (s.f[k].num != 3)
					continue;
				struct tpb_msg l = tpb_parse(s.f[k].p, s.f[k].len);
				struct tp_label *lab = &x->labels[x->nr_labels++];

				cr_assert_leq(x->nr_labels, 16);
				lab->key = tp_str(p, tpb_u64(&l, 1));
				lab->str = tpb_u64(&l, 2) ? tp_str(p, tpb_u64(&l, 2)) : NULL;
				lab->num = (int64_t)tpb_u64(&l, 3);
				lab->unit = tpb_u64(&l, 4) ? tp_str(p, tpb_u64(&l, 4)) : NULL;
				free(l.f);
			}
			break;
		}
		case 3: {	/* mapping */
			struct tp_mapping *x;

			p->mappings = tp_grow(p->mappings, p->nr_mappings, sizeof(*x));
			x = &p->mappings[p->nr_mappings++];
			x->id = tpb_u64(&s, 1);
			x->start = tpb_u64(&s, 2);
			x->limit = tpb_u64(&s, 3);
			x->offset = tpb_u64(&s, 4);
			x->filename = tp_str(p, tpb_u64(&s, 5));
			x->build_id = tp_str(p, tpb_u64(&s, 6));
			x->has_functions = tpb_u64(&s, 7);
			x->has_filenames = tpb_u64(&s, 8);
			x->has_line_numbers = tpb_u64(&s, 9);
			x->has_inline_frames = tpb_u64(&s, 10);
			break;
		}
		case 4: {	/* location */
			struct tp_location *x;

			p->locations = tp_grow(p->locations, p->nr_locations, sizeof(*x));
			x = &p->locations[p->nr_locations++];
			x->id = tpb_u64(&s, 1);
			x->mapping_id = tpb_u64(&s, 2);
			x->address = tpb_u64(&s, 3);
			for (size_t k = 0; k < s.n; k++) {
				if (s.f[k].num != 4)
					continue;
				struct tpb_msg l = tpb_parse(s.f[k].p, s.f[k].len);

				cr_assert_lt(x->nr_lines, 32);
				x->lines[x->nr_lines].function_id = tpb_u64(&l, 1);
				x->lines[x->nr_lines].line = (int64_t)tpb_u64(&l, 2);
				x->nr_lines++;
				free(l.f);
			}
			break;
		}
		case 5: {	/* function */
			struct tp_function *x;

			p->functions = tp_grow(p->functions, p->nr_functions, sizeof(*x));
			x = &p->functions[p->nr_functions++];
			x->id = tpb_u64(&s, 1);
			x->name = tp_str(p, tpb_u64(&s, 2));
			x->system_name = tp_str(p, tpb_u64(&s, 3));
			x->filename = tp_str(p, tpb_u64(&s, 4));
			x->start_line = (int64_t)tpb_u64(&s, 5);
			break;
		}
		case 6:
			break;
		case 9:
			p->time_nanos = (int64_t)f->v;
			break;
		case 10:
			p->duration_nanos = (int64_t)f->v;
			break;
		case 11:
			p->period_type[0] = tp_str(p, tpb_u64(&s, 1));
			p->period_type[1] = tp_str(p, tpb_u64(&s, 2));
			break;
		case 12:
			p->period = (int64_t)f->v;
			break;
		case 13:
			cr_assert_lt(p->nr_comments, 8);
			p->comments[p->nr_comments++] = tp_str(p, f->v);
			break;
		case 14:
			p->default_sample_type = tp_str(p, f->v);
			break;
		default:
			cr_assert_fail("unknown Profile field %u", f->num);
		}
		free(s.f);
	}
	free(m.f);

	/*
	 * Cross-references and ids, through sorted id lists: the profiles of
	 * the larger tests have thousands of each, which pairwise checks made
	 * quadratic (minutes under ASan).
	 */
	uint64_t *map_ids = tp_sorted_ids(p->mappings, p->nr_mappings, sizeof(*p->mappings),
					  offsetof(struct tp_mapping, id), "mapping");
	uint64_t *fn_ids = tp_sorted_ids(p->functions, p->nr_functions, sizeof(*p->functions),
					 offsetof(struct tp_function, id), "function");
	uint64_t *loc_ids = tp_sorted_ids(p->locations, p->nr_locations, sizeof(*p->locations),
					  offsetof(struct tp_location, id), "location");

	for (size_t i = 0; i < p->nr_locations; i++) {
		const struct tp_location *l = &p->locations[i];

		if (l->mapping_id && !tp_has_id(map_ids, p->nr_mappings, l->mapping_id))
			cr_assert_fail("location %lu: unknown mapping %lu", (unsigned long)l->id,
				       (unsigned long)l->mapping_id);
		for (size_t n = 0; n < l->nr_lines; n++)
			if (!tp_has_id(fn_ids, p->nr_functions, l->lines[n].function_id))
				cr_assert_fail("location %lu: unknown function", (unsigned long)l->id);
	}
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct tp_sample *s = &p->samples[i];

		cr_assert_eq(s->nr_values, p->nr_types, "sample %zu: %zu values for %zu types", i,
			     s->nr_values, p->nr_types);
		for (size_t n = 0; n < s->nr_locs; n++)
			if (!tp_has_id(loc_ids, p->nr_locations, s->locs[n]))
				cr_assert_fail("sample %zu: unknown location %lu", i,
					       (unsigned long)s->locs[n]);
	}
	free(map_ids);
	free(fn_ids);
	free(loc_ids);
	return p;
}

static inline void tp_free(struct tp_profile *p)
{
	for (size_t i = 0; i < p->nr_strings; i++)
		free(p->strings[i]);
	free(p->strings);
	free(p->samples);
	free(p->mappings);
	free(p->locations);
	free(p->functions);
	free(p);
}

/* Inflate a gzip buffer of one member; *len in: compressed size, out: plain size. */
static inline uint8_t *tp_gunzip(const uint8_t *in, size_t *len)
{
	size_t cap = 1 << 16, out_len = 0;
	uint8_t *out = malloc(cap);
	z_stream zs = { 0 };
	int ret;

	cr_assert(*len >= 2 && in[0] == 0x1f && in[1] == 0x8b, "not gzip");
	cr_assert_eq(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (uint8_t *)in;
	zs.avail_in = *len;
	do {
		if (cap - out_len < 4096)
			out = realloc(out, cap *= 2);
		zs.next_out = out + out_len;
		zs.avail_out = cap - out_len;
		ret = inflate(&zs, Z_NO_FLUSH);
		cr_assert(ret == Z_OK || ret == Z_STREAM_END, "inflate: %d", ret);
		out_len = cap - zs.avail_out;
	} while (ret != Z_STREAM_END);
	cr_assert_eq(zs.avail_in, 0, "nothing after the gzip member");
	inflateEnd(&zs);
	*len = out_len;
	return out;
}

static inline const struct tp_location *tp_location(const struct tp_profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->nr_locations; i++)
		if (p->locations[i].id == id)
			return &p->locations[i];
	return NULL;
}

static inline const struct tp_function *tp_function(const struct tp_profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->nr_functions; i++)
		if (p->functions[i].id == id)
			return &p->functions[i];
	return NULL;
}

static inline const struct tp_mapping *tp_mapping(const struct tp_profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->nr_mappings; i++)
		if (p->mappings[i].id == id)
			return &p->mappings[i];
	return NULL;
}

/* Name of the outermost function of a location (last Line), or NULL. */
static inline const char *tp_loc_name(const struct tp_profile *p, uint64_t loc_id)
{
	const struct tp_location *l = tp_location(p, loc_id);

	if (!l || !l->nr_lines)
		return NULL;
	return tp_function(p, l->lines[l->nr_lines - 1].function_id)->name;
}

#endif /* TEST_PPROF_DECODE_H */
