/* SPDX-License-Identifier: MIT */
/*
 * reader.h - stream any perf.data, file or pipe mode, ours or perf's.
 *
 * perfdata_reader_open() reads the header. In file mode it also reads the
 * attrs and the feature sections (EVENT_DESC names the events); in pipe mode
 * attrs and features arrive as HEADER_ATTR / HEADER_FEATURE records and are
 * absorbed as they pass, so the event list grows while reading.
 *
 * perfdata_reader_next() yields one record at a time; the pointer stays
 * valid until the next call. Memory does not grow with the file: one record
 * buffer (at most 64 KiB) plus a read-ahead buffer. Unknown record types are
 * yielded too (callers skip what they do not know); HEADER_ATTR and
 * HEADER_FEATURE are yielded after they were absorbed.
 *
 * COMPRESSED records (perf record -z) are yielded, then the records they
 * decompress to (perfdata_reader_in_compressed() tells which is which), so
 * callers see the same records as in an uncompressed file. Decompression
 * streams through a fixed 256 KiB buffer (plus zstd's window, at most
 * 2^27 bytes): a piece that inflates without bound costs time, not memory.
 *
 * Errors are -errno (-EINVAL for malformed input, -EIO for read failures)
 * and perfdata_reader_error() says what and at which offset, e.g.
 * "perf.data: record at offset 0x1a8 has size 0". A truncated file (data
 * section cut short) is an error at the offset where it ends; the records
 * before it were yielded.
 */
#ifndef PERFDATA_READER_H
#define PERFDATA_READER_H

#include "records.h"

struct perfdata_reader;

/*
 * name is used in error messages only. The fd is not closed by the reader.
 * On failure *out is still set (unless allocation failed: then NULL) so the
 * caller can print perfdata_reader_error(); free it either way.
 */
int perfdata_reader_open(int fd, const char *name, struct perfdata_reader **out);
void perfdata_reader_free(struct perfdata_reader *r);
const char *perfdata_reader_error(const struct perfdata_reader *r);	/* "" when none */

bool perfdata_reader_is_pipe(const struct perfdata_reader *r);

/* 1 = a record in *rec, 0 = end of data, < 0 = error (see _error()). */
int perfdata_reader_next(struct perfdata_reader *r, const struct perf_event_header **rec);
/*
 * File offset (file mode) or stream offset (pipe) of the last record yielded;
 * for a record decompressed from a COMPRESSED one, that record's offset.
 */
uint64_t perfdata_reader_offset(const struct perfdata_reader *r);
/* The last record yielded came out of a COMPRESSED record. */
bool perfdata_reader_in_compressed(const struct perfdata_reader *r);

/* An event's name is NULL when the file has no EVENT_DESC naming it. */
size_t perfdata_reader_nr_events(const struct perfdata_reader *r);
const struct perfdata_event *perfdata_reader_event(const struct perfdata_reader *r, size_t i);
/* The event a SAMPLE belongs to, or NULL when its id is unknown. */
const struct perfdata_event *perfdata_reader_sample_event(const struct perfdata_reader *r,
							  const struct perf_event_header *h);
/* Decode a SAMPLE with its own event's sample_type; *ev may be NULL. */
int perfdata_reader_parse_sample(const struct perfdata_reader *r, const struct perf_event_header *h,
				 struct perfdata_sample *s, const struct perfdata_event **ev);
/* The sample_id trailer of a non-SAMPLE kernel record (zeroed when none). */
int perfdata_reader_parse_sample_id(const struct perfdata_reader *r,
				    const struct perf_event_header *h,
				    struct perfdata_sample_id *sid);

/* The file header (file mode); NULL in pipe mode. */
const struct perfdata_file_header *perfdata_reader_file_header(const struct perfdata_reader *r);

/* Raw payload of a feature section, or NULL (size 0) when absent / not yet seen. */
const void *perfdata_reader_feature(const struct perfdata_reader *r, unsigned int feat,
				    size_t *size);
/* A string feature (HOSTNAME, OSRELEASE, ...) decoded, or NULL. */
const char *perfdata_reader_feature_string(const struct perfdata_reader *r, unsigned int feat);

/* Walk the build-ids of the BUILD_ID feature and HEADER_BUILD_ID records seen. */
typedef int (*perfdata_build_id_fn)(const struct perfdata_build_id *b, void *ctx);
int perfdata_reader_for_each_build_id(const struct perfdata_reader *r, perfdata_build_id_fn fn,
				      void *ctx);

#endif /* PERFDATA_READER_H */
