// SPDX-License-Identifier: MIT
/*
 * profile.c - the pprof profile builder and serializer (see profile.h).
 *
 * Each table is a pp_intern set whose keys are packed records of string
 * indices and ids, so "dedup" is a hash lookup and "id" is the insertion
 * index + 1. Sample values live in one array beside the sample set.
 * Serialization walks the tables in id order, encodes each entry with pb.h
 * into a staging buffer and hands the buffer to the sink every 64 KiB.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gz.h"
#include "intern.h"
#include "pb.h"
#include "profile.h"
#include "tools/lib/array.h"

/* profile.proto field numbers (package perftools.profiles). */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,

	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,

	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,

	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,
	LABEL_NUM_UNIT = 4,

	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,

	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,

	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,

	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
	FUNCTION_START_LINE = 5,
};

/* Packed table keys. All members are 8 bytes wide: no padding to zero. */
struct mapping_key {
	uint64_t start, limit, offset;
	int64_t filename, build_id;
	uint64_t discriminator;
};

struct function_key {
	int64_t name, system_name, filename, start_line;
};

struct location_key_head {
	uint64_t mapping_id, address, nr_lines;
};
struct location_key_line {
	uint64_t function_id;
	int64_t line;
};

struct sample_key_head {
	uint64_t nr_locs, nr_labels;
	/* then nr_locs u64 location ids, then nr_labels struct label_key */
};
struct label_key {
	int64_t key, str, num, num_unit;
	uint64_t is_str;
};

struct pprof_builder {
	struct pp_intern strings, mappings, functions, locations, samples;
	unsigned int *mapping_flags;
	size_t mapping_flags_cap;
	int64_t *values;		/* nr_types per sample */
	size_t values_cap;		/* in samples */
	int64_t *types;			/* (type, unit) string pairs */
	size_t nr_types;
	int64_t period_type[2], period;
	bool has_period;
	int64_t time_nanos, duration_nanos;
	int64_t *comments;
	size_t nr_comments;
	int64_t default_sample_type;
	uint8_t *scratch;		/* key under construction */
	size_t scratch_cap;
};

int pprof_builder_new(struct pprof_builder **out)
{
	struct pprof_builder *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	/* string_table[0] must be "". */
	if (pprof_string(b, "") != 0) {
		pprof_builder_free(b);
		return -ENOMEM;
	}
	*out = b;
	return 0;
}

void pprof_builder_free(struct pprof_builder *b)
{
	if (!b)
		return;
	pp_intern_free(&b->strings);
	pp_intern_free(&b->mappings);
	pp_intern_free(&b->functions);
	pp_intern_free(&b->locations);
	pp_intern_free(&b->samples);
	free(b->mapping_flags);
	free(b->values);
	free(b->types);
	free(b->comments);
	free(b->scratch);
	free(b);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
static size_t utf8_seq(const unsigned char *s, size_t left)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (left < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates, beyond U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

int64_t pprof_string(struct pprof_builder *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t len = strlen((const char *)p), i = 0, n;

	while (i < len && (n = utf8_seq(p + i, len - i)))
		i += n;
	if (i == len)
		return pp_intern_put(&b->strings, p, len, NULL);

	/* Replace each invalid byte by U+FFFD: the table must be valid UTF-8. */
	unsigned char *clean = malloc(len * 3 + 1), *o = clean;
	int64_t idx;

	if (!clean)
		return -ENOMEM;
	for (i = 0; i < len;) {
		n = utf8_seq(p + i, len - i);
		if (n) {
			memcpy(o, p + i, n);
			o += n;
			i += n;
		} else {
			*o++ = 0xef;
			*o++ = 0xbf;
			*o++ = 0xbd;
			i++;
		}
	}
	idx = pp_intern_put(&b->strings, clean, o - clean, NULL);
	free(clean);
	return idx;
}

static int strings2(struct pprof_builder *b, const char *x, const char *y, int64_t out[2])
{
	out[0] = pprof_string(b, x);
	if (out[0] < 0)
		return out[0];
	out[1] = pprof_string(b, y);
	return out[1] < 0 ? out[1] : 0;
}

int pprof_add_sample_type(struct pprof_builder *b, const char *type, const char *unit)
{
	int64_t *types;
	int err;

	if (pp_intern_count(&b->samples))
		return -EINVAL;
	types = realloc(b->types, (b->nr_types + 1) * 2 * sizeof(*types));
	if (!types)
		return -ENOMEM;
	b->types = types;
	err = strings2(b, type, unit, &types[b->nr_types * 2]);
	if (err)
		return err;
	b->nr_types++;
	return 0;
}

int pprof_set_period(struct pprof_builder *b, const char *type, const char *unit, int64_t period)
{
	int err = strings2(b, type, unit, b->period_type);

	if (err)
		return err;
	b->period = period;
	b->has_period = true;
	return 0;
}

void pprof_set_time(struct pprof_builder *b, int64_t time_nanos, int64_t duration_nanos)
{
	b->time_nanos = time_nanos;
	b->duration_nanos = duration_nanos;
}

int pprof_add_comment(struct pprof_builder *b, const char *comment)
{
	int64_t *c = realloc(b->comments, (b->nr_comments + 1) * sizeof(*c));
	int64_t idx;

	if (!c)
		return -ENOMEM;
	b->comments = c;
	idx = pprof_string(b, comment);
	if (idx < 0)
		return idx;
	c[b->nr_comments++] = idx;
	return 0;
}

int pprof_set_default_sample_type(struct pprof_builder *b, const char *type)
{
	int64_t idx = pprof_string(b, type);

	if (idx < 0)
		return idx;
	b->default_sample_type = idx;
	return 0;
}

static void *scratch(struct pprof_builder *b, size_t len)
{
	if (ARRAY_RESERVE(b->scratch, b->scratch_cap, len, 256))
		return NULL;
	memset(b->scratch, 0, len);
	return b->scratch;
}

int pprof_mapping(struct pprof_builder *b, const struct pprof_mapping *m, uint64_t *id)
{
	struct mapping_key k = {
		.start = m->memory_start,
		.limit = m->memory_limit,
		.offset = m->file_offset,
		.filename = pprof_string(b, m->filename),
		.build_id = pprof_string(b, m->build_id),
		.discriminator = m->discriminator,
	};
	bool added;
	int64_t i;

	if (k.filename < 0 || k.build_id < 0)
		return -ENOMEM;
	/* Room for a new entry's flags first, so a failure leaves no entry without them. */
	if (ARRAY_RESERVE(b->mapping_flags, b->mapping_flags_cap, pp_intern_count(&b->mappings) + 1, 16))
		return -ENOMEM;
	i = pp_intern_put(&b->mappings, &k, sizeof(k), &added);
	if (i < 0)
		return i;
	if (added)
		b->mapping_flags[i] = 0;
	*id = i + 1;
	return 0;
}

int pprof_mapping_add_flags(struct pprof_builder *b, uint64_t id, unsigned int flags)
{
	if (!id || id > pp_intern_count(&b->mappings))
		return -EINVAL;
	b->mapping_flags[id - 1] |= flags;
	return 0;
}

int pprof_function(struct pprof_builder *b, const char *name, const char *system_name,
		   const char *filename, int64_t start_line, uint64_t *id)
{
	struct function_key k = {
		.name = pprof_string(b, name),
		.system_name = pprof_string(b, system_name ? system_name : name),
		.filename = pprof_string(b, filename),
		.start_line = start_line,
	};
	int64_t i;

	if (k.name < 0 || k.system_name < 0 || k.filename < 0)
		return -ENOMEM;
	i = pp_intern_put(&b->functions, &k, sizeof(k), NULL);
	if (i < 0)
		return i;
	*id = i + 1;
	return 0;
}

int pprof_location(struct pprof_builder *b, uint64_t mapping_id, uint64_t address,
		   const struct pprof_line *lines, size_t nr_lines, uint64_t *id)
{
	size_t len = sizeof(struct location_key_head) + nr_lines * sizeof(struct location_key_line);
	struct location_key_line *kl;
	struct location_key_head *kh;
	int64_t i;

	if (mapping_id > pp_intern_count(&b->mappings))
		return -EINVAL;
	/* Functions first: pprof_function() may reuse nothing of the scratch key. */
	uint64_t *fids = calloc(nr_lines ? nr_lines : 1, sizeof(*fids));

	if (!fids)
		return -ENOMEM;
	for (size_t l = 0; l < nr_lines; l++) {
		int err = pprof_function(b, lines[l].function, lines[l].system_name,
					 lines[l].filename, 0, &fids[l]);

		if (err) {
			free(fids);
			return err;
		}
	}
	kh = scratch(b, len);
	if (!kh) {
		free(fids);
		return -ENOMEM;
	}
	kh->mapping_id = mapping_id;
	kh->address = address;
	kh->nr_lines = nr_lines;
	kl = (struct location_key_line *)(kh + 1);
	for (size_t l = 0; l < nr_lines; l++) {
		kl[l].function_id = fids[l];
		kl[l].line = lines[l].line;
	}
	free(fids);
	i = pp_intern_put(&b->locations, kh, len, NULL);
	if (i < 0)
		return i;
	*id = i + 1;
	return 0;
}

int pprof_add_sample(struct pprof_builder *b, const uint64_t *locs, size_t nr_locs,
		     const int64_t *values, const struct pprof_label *labels, size_t nr_labels)
{
	size_t len = sizeof(struct sample_key_head) + nr_locs * sizeof(uint64_t) +
		     nr_labels * sizeof(struct label_key);
	struct label_key *lk;
	struct sample_key_head *kh;
	bool added;
	int64_t i;

	if (!b->nr_types)
		return -EINVAL;
	for (size_t l = 0; l < nr_locs; l++)
		if (!locs[l] || locs[l] > pp_intern_count(&b->locations))
			return -EINVAL;
	/* Strings first: they may not touch the scratch key being built. As
	 * many labels as the caller has: on the heap, not the stack. */
	lk = calloc(nr_labels ? nr_labels : 1, sizeof(*lk));
	if (!lk)
		return -ENOMEM;
	for (size_t l = 0; l < nr_labels; l++) {
		lk[l].key = pprof_string(b, labels[l].key);
		lk[l].is_str = labels[l].str != NULL;
		if (lk[l].is_str)
			lk[l].str = pprof_string(b, labels[l].str);
		else
			lk[l].num = labels[l].num;
		if (labels[l].num_unit)
			lk[l].num_unit = pprof_string(b, labels[l].num_unit);
		if (lk[l].key < 0 || lk[l].str < 0 || lk[l].num_unit < 0) {
			free(lk);
			return -ENOMEM;
		}
	}
	kh = scratch(b, len);
	if (!kh) {
		free(lk);
		return -ENOMEM;
	}
	kh->nr_locs = nr_locs;
	kh->nr_labels = nr_labels;
	if (nr_locs)
		memcpy(kh + 1, locs, nr_locs * sizeof(uint64_t));
	if (nr_labels)
		memcpy((uint64_t *)(kh + 1) + nr_locs, lk, nr_labels * sizeof(lk[0]));
	free(lk);

	/* Room for a new sample's values first: no sample may exist without them. */
	if (ARRAY_RESERVE_ROWS(b->values, b->values_cap, pp_intern_count(&b->samples) + 1,
			       b->nr_types, 64))
		return -ENOMEM;
	i = pp_intern_put(&b->samples, kh, len, &added);
	if (i < 0)
		return i;
	int64_t *v = &b->values[i * b->nr_types];

	for (size_t t = 0; t < b->nr_types; t++)
		v[t] = added ? values[t] : v[t] + values[t];
	return 0;
}

size_t pprof_nr_sample_types(const struct pprof_builder *b)
{
	return b->nr_types;
}
size_t pprof_nr_samples(const struct pprof_builder *b)
{
	return pp_intern_count(&b->samples);
}
size_t pprof_nr_locations(const struct pprof_builder *b)
{
	return pp_intern_count(&b->locations);
}
size_t pprof_nr_functions(const struct pprof_builder *b)
{
	return pp_intern_count(&b->functions);
}
size_t pprof_nr_mappings(const struct pprof_builder *b)
{
	return pp_intern_count(&b->mappings);
}
size_t pprof_nr_strings(const struct pprof_builder *b)
{
	return pp_intern_count(&b->strings);
}

/* ---- reading back ---- */

const char *pprof_string_at(const struct pprof_builder *b, int64_t idx, size_t *len)
{
	return pp_intern_get(&b->strings, (uint32_t)idx, len);
}

void pprof_sample_type_at(const struct pprof_builder *b, size_t i, int64_t *type, int64_t *unit)
{
	*type = b->types[i * 2];
	*unit = b->types[i * 2 + 1];
}

void pprof_sample_at(const struct pprof_builder *b, size_t i, struct pprof_sample_view *v)
{
	const struct sample_key_head *kh = pp_intern_get(&b->samples, (uint32_t)i, NULL);

	v->locs = (const uint64_t *)(kh + 1);
	v->nr_locs = kh->nr_locs;
	v->values = &b->values[i * b->nr_types];
	v->nr_labels = kh->nr_labels;
}

void pprof_sample_label_at(const struct pprof_builder *b, size_t i, size_t l,
			   struct pprof_label_view *out)
{
	const struct sample_key_head *kh = pp_intern_get(&b->samples, (uint32_t)i, NULL);
	const struct label_key *lk = (const struct label_key *)((const uint64_t *)(kh + 1) +
								kh->nr_locs) + l;

	*out = (struct pprof_label_view){
		.key = lk->key, .str = lk->str, .num = lk->num, .is_str = lk->is_str,
	};
}

void pprof_location_at(const struct pprof_builder *b, uint64_t id, uint64_t *mapping_id,
		       uint64_t *address, size_t *nr_lines)
{
	const struct location_key_head *kh = pp_intern_get(&b->locations, id - 1, NULL);

	*mapping_id = kh->mapping_id;
	*address = kh->address;
	*nr_lines = kh->nr_lines;
}

int64_t pprof_location_function_name(const struct pprof_builder *b, uint64_t id, size_t l)
{
	const struct location_key_head *kh = pp_intern_get(&b->locations, id - 1, NULL);
	const struct location_key_line *kl = (const struct location_key_line *)(kh + 1);
	const struct function_key *f = pp_intern_get(&b->functions, kl[l].function_id - 1, NULL);

	return f->name;
}

void pprof_mapping_at(const struct pprof_builder *b, uint64_t id, int64_t *filename,
		      uint64_t *discriminator)
{
	const struct mapping_key *k = pp_intern_get(&b->mappings, id - 1, NULL);

	*filename = k->filename;
	*discriminator = k->discriminator;
}

/* ---- serialization ---- */

#define FLUSH_AT (64 * 1024)

struct emitter {
	struct pb_buf pb;
	pprof_sink_fn sink;
	void *ctx;
	int err;
};

static int maybe_flush(struct emitter *e, bool force)
{
	if (e->err)
		return e->err;
	if (pb_error(&e->pb))
		return e->err = pb_error(&e->pb);
	if (e->pb.len && (force || e->pb.len >= FLUSH_AT)) {
		e->err = e->sink(e->pb.data, e->pb.len, e->ctx);
		pb_reset(&e->pb);
	}
	return e->err;
}

static void emit_value_type(struct pb_buf *pb, uint32_t field, const int64_t tu[2])
{
	size_t m;

	pb_begin(pb, field, &m);
	if (tu[0])
		pb_int64(pb, VALUE_TYPE_TYPE, tu[0]);
	if (tu[1])
		pb_int64(pb, VALUE_TYPE_UNIT, tu[1]);
	pb_end(pb, m);
}

static void emit_sample(const struct pprof_builder *b, struct pb_buf *pb, uint32_t i)
{
	const struct sample_key_head *kh = pp_intern_get(&b->samples, i, NULL);
	const uint64_t *locs = (const uint64_t *)(kh + 1);
	const struct label_key *lk = (const struct label_key *)(locs + kh->nr_locs);
	size_t m, ml;

	pb_begin(pb, PROFILE_SAMPLE, &m);
	pb_packed_uint64(pb, SAMPLE_LOCATION_ID, locs, kh->nr_locs);
	pb_packed_int64(pb, SAMPLE_VALUE, &b->values[(size_t)i * b->nr_types], b->nr_types);
	for (uint64_t l = 0; l < kh->nr_labels; l++) {
		pb_begin(pb, SAMPLE_LABEL, &ml);
		pb_int64(pb, LABEL_KEY, lk[l].key);
		if (lk[l].is_str)
			pb_int64(pb, LABEL_STR, lk[l].str);
		else if (lk[l].num)
			pb_int64(pb, LABEL_NUM, lk[l].num);
		if (lk[l].num_unit)
			pb_int64(pb, LABEL_NUM_UNIT, lk[l].num_unit);
		pb_end(pb, ml);
	}
	pb_end(pb, m);
}

static void emit_mapping(const struct pprof_builder *b, struct pb_buf *pb, uint32_t i)
{
	const struct mapping_key *k = pp_intern_get(&b->mappings, i, NULL);
	unsigned int f = b->mapping_flags[i];
	size_t m;

	pb_begin(pb, PROFILE_MAPPING, &m);
	pb_uint64(pb, MAPPING_ID, i + 1);
	if (k->start)
		pb_uint64(pb, MAPPING_MEMORY_START, k->start);
	if (k->limit)
		pb_uint64(pb, MAPPING_MEMORY_LIMIT, k->limit);
	if (k->offset)
		pb_uint64(pb, MAPPING_FILE_OFFSET, k->offset);
	if (k->filename)
		pb_int64(pb, MAPPING_FILENAME, k->filename);
	if (k->build_id)
		pb_int64(pb, MAPPING_BUILD_ID, k->build_id);
	if (f & PPROF_HAS_FUNCTIONS)
		pb_bool(pb, MAPPING_HAS_FUNCTIONS, true);
	if (f & PPROF_HAS_FILENAMES)
		pb_bool(pb, MAPPING_HAS_FILENAMES, true);
	if (f & PPROF_HAS_LINE_NUMBERS)
		pb_bool(pb, MAPPING_HAS_LINE_NUMBERS, true);
	if (f & PPROF_HAS_INLINE_FRAMES)
		pb_bool(pb, MAPPING_HAS_INLINE_FRAMES, true);
	pb_end(pb, m);
}

static void emit_location(const struct pprof_builder *b, struct pb_buf *pb, uint32_t i)
{
	const struct location_key_head *kh = pp_intern_get(&b->locations, i, NULL);
	const struct location_key_line *kl = (const struct location_key_line *)(kh + 1);
	size_t m, ml;

	pb_begin(pb, PROFILE_LOCATION, &m);
	pb_uint64(pb, LOCATION_ID, i + 1);
	if (kh->mapping_id)
		pb_uint64(pb, LOCATION_MAPPING_ID, kh->mapping_id);
	if (kh->address)
		pb_uint64(pb, LOCATION_ADDRESS, kh->address);
	for (uint64_t l = 0; l < kh->nr_lines; l++) {
		pb_begin(pb, LOCATION_LINE, &ml);
		pb_uint64(pb, LINE_FUNCTION_ID, kl[l].function_id);
		if (kl[l].line)
			pb_int64(pb, LINE_LINE, kl[l].line);
		pb_end(pb, ml);
	}
	pb_end(pb, m);
}

static void emit_function(const struct pprof_builder *b, struct pb_buf *pb, uint32_t i)
{
	const struct function_key *k = pp_intern_get(&b->functions, i, NULL);
	size_t m;

	pb_begin(pb, PROFILE_FUNCTION, &m);
	pb_uint64(pb, FUNCTION_ID, i + 1);
	if (k->name)
		pb_int64(pb, FUNCTION_NAME, k->name);
	if (k->system_name)
		pb_int64(pb, FUNCTION_SYSTEM_NAME, k->system_name);
	if (k->filename)
		pb_int64(pb, FUNCTION_FILENAME, k->filename);
	if (k->start_line)
		pb_int64(pb, FUNCTION_START_LINE, k->start_line);
	pb_end(pb, m);
}

int pprof_serialize(const struct pprof_builder *b, pprof_sink_fn sink, void *ctx)
{
	struct emitter e = { .sink = sink, .ctx = ctx };
	struct pb_buf *pb = &e.pb;
	size_t n;

	for (size_t t = 0; t < b->nr_types; t++)
		emit_value_type(pb, PROFILE_SAMPLE_TYPE, &b->types[t * 2]);
	n = pp_intern_count(&b->samples);
	for (size_t i = 0; i < n && !maybe_flush(&e, false); i++)
		emit_sample(b, pb, i);
	n = pp_intern_count(&b->mappings);
	for (size_t i = 0; i < n && !maybe_flush(&e, false); i++)
		emit_mapping(b, pb, i);
	n = pp_intern_count(&b->locations);
	for (size_t i = 0; i < n && !maybe_flush(&e, false); i++)
		emit_location(b, pb, i);
	n = pp_intern_count(&b->functions);
	for (size_t i = 0; i < n && !maybe_flush(&e, false); i++)
		emit_function(b, pb, i);
	n = pp_intern_count(&b->strings);
	for (size_t i = 0; i < n && !maybe_flush(&e, false); i++) {
		size_t len;
		const void *s = pp_intern_get(&b->strings, i, &len);

		pb_bytes(pb, PROFILE_STRING_TABLE, s, len);
	}
	if (b->time_nanos)
		pb_int64(pb, PROFILE_TIME_NANOS, b->time_nanos);
	if (b->duration_nanos)
		pb_int64(pb, PROFILE_DURATION_NANOS, b->duration_nanos);
	if (b->has_period) {
		emit_value_type(pb, PROFILE_PERIOD_TYPE, b->period_type);
		if (b->period)
			pb_int64(pb, PROFILE_PERIOD, b->period);
	}
	for (size_t i = 0; i < b->nr_comments; i++)
		pb_int64(pb, PROFILE_COMMENT, b->comments[i]);
	if (b->default_sample_type)
		pb_int64(pb, PROFILE_DEFAULT_SAMPLE_TYPE, b->default_sample_type);

	int err = maybe_flush(&e, true);

	pb_free(pb);
	return err;
}

static int gz_sink(const void *data, size_t len, void *ctx)
{
	return pp_gz_write(ctx, data, len);
}

int pprof_write_gzip(const struct pprof_builder *b, int fd)
{
	struct pp_gz *gz;
	int err = pp_gz_new(fd, -1, &gz);

	if (err)
		return err;
	err = pprof_serialize(b, gz_sink, gz);
	if (!err)
		err = pp_gz_finish(gz);
	pp_gz_free(gz);
	return err;
}
