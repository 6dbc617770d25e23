/* SPDX-License-Identifier: MIT */
/*
 * compress.h - the zstd streams inside PERF_RECORD_COMPRESSED records
 * (`perf record -z`), for the writer (compression) and the reader
 * (decompression). Thin wrappers over libzstd's streaming API
 * (ZSTD_CCtx / ZSTD_DCtx) that keep its error text and bound its memory.
 *
 * What perf writes, and so what we write and read: every COMPRESSED record of
 * a file carries the next piece of ONE zstd stream (a single frame that is
 * flushed, never ended). Decompressed, the pieces are ordinary records, laid
 * end to end; a record may straddle two COMPRESSED records. Each piece
 * decompresses to at most the mmap_len of the COMPRESSED feature.
 *
 * Errors: -ENOMEM when libzstd could not allocate, -EPROTO for any other
 * zstd failure (corrupt input, an internal error); the text is in err.
 */
#ifndef PERFDATA_COMPRESS_H
#define PERFDATA_COMPRESS_H

#include <stdbool.h>
#include <stddef.h>

/* perf's default and range of -z / --compression-level. */
#define PERFDATA_ZSTD_LEVEL_DEFAULT	1
#define PERFDATA_ZSTD_LEVEL_MAX		22
/*
 * Largest window a decompressor accepts: 2^27 bytes, zstd's own default
 * limit, enough for every level perf and bpfrec write. A frame that asks for
 * more is refused instead of allocated.
 */
#define PERFDATA_ZSTD_WINDOW_LOG_MAX	27

struct perfdata_zstd_buf {
	void *data;
	size_t size;	/* bytes available at data */
	size_t pos;	/* bytes consumed (input) or produced (output) so far */
};

struct perfdata_zstd_enc;

int perfdata_zstd_enc_new(int level, struct perfdata_zstd_enc **out);
void perfdata_zstd_enc_free(struct perfdata_zstd_enc *z);
/*
 * Compress from in into out, both advanced by their pos. With flush false
 * it returns once all of in is consumed or out is full; with flush true it
 * also pushes everything fed so far into out, and returns 1 while out was too
 * small to take it all (call again with more room), 0 once it is complete.
 * -ENOMEM / -EPROTO on failure (perfdata_zstd_enc_error() says why).
 */
int perfdata_zstd_compress(struct perfdata_zstd_enc *z, struct perfdata_zstd_buf *in,
			   struct perfdata_zstd_buf *out, bool flush);
const char *perfdata_zstd_enc_error(const struct perfdata_zstd_enc *z);

struct perfdata_zstd_dec;

int perfdata_zstd_dec_new(struct perfdata_zstd_dec **out);
void perfdata_zstd_dec_free(struct perfdata_zstd_dec *z);
/*
 * Decompress from in into out (both advanced by their pos) until out is full
 * or nothing more comes out of in. However much a piece would inflate, it
 * never writes past out: when out is full the caller drains it and calls
 * again; when out is not full, in is used up. 0, or -ENOMEM / -EPROTO
 * (perfdata_zstd_dec_error() says why).
 */
int perfdata_zstd_decompress(struct perfdata_zstd_dec *z, struct perfdata_zstd_buf *in,
			     struct perfdata_zstd_buf *out);
const char *perfdata_zstd_dec_error(const struct perfdata_zstd_dec *z);

#endif /* PERFDATA_COMPRESS_H */
