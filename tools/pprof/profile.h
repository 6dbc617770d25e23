/* SPDX-License-Identifier: MIT */
/*
 * profile.h - build one pprof profile (profile.proto, perftools.profiles)
 * and write it gzip-compressed.
 *
 * The builder owns every table of the message and dedups each:
 *   strings    index 0 is always ""; invalid UTF-8 is replaced by U+FFFD
 *   mappings   by (start, limit, offset, filename, build-id, discriminator)
 *   functions  by (name, system_name, filename, start_line)
 *   locations  by (mapping, address, lines)
 *   samples    by (locations, labels): values of identical samples are added
 * Ids of mappings, locations and functions are 1, 2, 3... in order of first
 * use, as profile.proto requires (non-zero, unique). Memory grows with the
 * number of distinct entries, never with the number of samples added.
 *
 * Sample types are declared first; every sample then carries one value per
 * type. All functions return 0 or -errno (-ENOMEM; -EINVAL for misuse such
 * as an unknown id or a sample type added after the first sample).
 */
#ifndef TOOLS_PPROF_PROFILE_H
#define TOOLS_PPROF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pprof_builder;

struct pprof_mapping {
	uint64_t memory_start, memory_limit, file_offset;
	const char *filename;		/* NULL = "" */
	const char *build_id;		/* lower-case hex, NULL = none */
	/* Keeps apart mappings that look identical but hold different code
	 * (anonymous JIT memory of two processes); 0 otherwise. Not written. */
	uint64_t discriminator;
};

/* Mapping.has_* flags, OR-ed in as symbolization finds things. */
enum {
	PPROF_HAS_FUNCTIONS = 1 << 0,
	PPROF_HAS_FILENAMES = 1 << 1,
	PPROF_HAS_LINE_NUMBERS = 1 << 2,
	PPROF_HAS_INLINE_FRAMES = 1 << 3,
};

/* One Line of a Location: one inline level, innermost first. */
struct pprof_line {
	const char *function;		/* the Function's name; NULL = "" */
	const char *system_name;	/* NULL = same as function */
	const char *filename;		/* NULL = "" */
	int64_t line;
};

/* A sample label: a string label when str != NULL, else numeric. */
struct pprof_label {
	const char *key;
	const char *str;
	int64_t num;
	const char *num_unit;		/* NULL = none */
};

int pprof_builder_new(struct pprof_builder **out);
void pprof_builder_free(struct pprof_builder *b);

/* The string table index of s (added when new), or -ENOMEM. */
int64_t pprof_string(struct pprof_builder *b, const char *s);

/* Header fields. */
int pprof_add_sample_type(struct pprof_builder *b, const char *type, const char *unit);
int pprof_set_period(struct pprof_builder *b, const char *type, const char *unit, int64_t period);
void pprof_set_time(struct pprof_builder *b, int64_t time_nanos, int64_t duration_nanos);
int pprof_add_comment(struct pprof_builder *b, const char *comment);
int pprof_set_default_sample_type(struct pprof_builder *b, const char *type);

int pprof_mapping(struct pprof_builder *b, const struct pprof_mapping *m, uint64_t *id);
int pprof_mapping_add_flags(struct pprof_builder *b, uint64_t id, unsigned int flags);
int pprof_function(struct pprof_builder *b, const char *name, const char *system_name,
		   const char *filename, int64_t start_line, uint64_t *id);
/* mapping_id 0 = no mapping known. */
int pprof_location(struct pprof_builder *b, uint64_t mapping_id, uint64_t address,
		   const struct pprof_line *lines, size_t nr_lines, uint64_t *id);
/* locs: leaf first. values: one per sample type. */
int pprof_add_sample(struct pprof_builder *b, const uint64_t *locs, size_t nr_locs,
		     const int64_t *values, const struct pprof_label *labels, size_t nr_labels);

size_t pprof_nr_sample_types(const struct pprof_builder *b);
size_t pprof_nr_samples(const struct pprof_builder *b);	/* distinct */
size_t pprof_nr_locations(const struct pprof_builder *b);
size_t pprof_nr_functions(const struct pprof_builder *b);
size_t pprof_nr_mappings(const struct pprof_builder *b);
size_t pprof_nr_strings(const struct pprof_builder *b);

/*
 * Reading a built profile back, for outputs other than profile.proto (the
 * flame graph, tools/flamegraph/). Ids are those the builder handed out;
 * strings are the table's (valid UTF-8, not NUL-terminated: *len says how
 * long). Nothing is copied: pointers stay valid until the builder is freed
 * or changed.
 */
const char *pprof_string_at(const struct pprof_builder *b, int64_t idx, size_t *len);
/* Sample type i's type and unit string indices. */
void pprof_sample_type_at(const struct pprof_builder *b, size_t i, int64_t *type, int64_t *unit);
/* Distinct sample i (< pprof_nr_samples): its locations (leaf first) and values. */
struct pprof_sample_view {
	const uint64_t *locs;
	size_t nr_locs;
	const int64_t *values;		/* pprof_nr_sample_types() of them */
	size_t nr_labels;
};
void pprof_sample_at(const struct pprof_builder *b, size_t i, struct pprof_sample_view *v);
/* Label l of sample i: key, and str (string labels) or num; string indices. */
struct pprof_label_view {
	int64_t key, str, num;
	bool is_str;
};
void pprof_sample_label_at(const struct pprof_builder *b, size_t i, size_t l,
			   struct pprof_label_view *out);
/* Location id: its mapping id (0 = none), address and number of Lines. */
void pprof_location_at(const struct pprof_builder *b, uint64_t id, uint64_t *mapping_id,
		       uint64_t *address, size_t *nr_lines);
/* Line l (innermost first) of location id: its function's name string index. */
int64_t pprof_location_function_name(const struct pprof_builder *b, uint64_t id, size_t l);
/* Mapping id's file name string index, and the discriminator it was made with. */
void pprof_mapping_at(const struct pprof_builder *b, uint64_t id, int64_t *filename,
		      uint64_t *discriminator);

/* Serialize the uncompressed message, in pieces, through sink. */
typedef int (*pprof_sink_fn)(const void *data, size_t len, void *ctx);
int pprof_serialize(const struct pprof_builder *b, pprof_sink_fn sink, void *ctx);
/* Serialize, gzip-compressed, to fd (not closed). */
int pprof_write_gzip(const struct pprof_builder *b, int fd);

#endif /* TOOLS_PPROF_PROFILE_H */
