/* SPDX-License-Identifier: MIT */
/*
 * zstd.h - streaming zstd decompression for `perf record -z` files.
 *
 * perf compresses batches of records into PERF_RECORD_COMPRESSED records,
 * all parts of one zstd stream. libzstd is loaded at run time (dlopen of
 * libzstd.so.1, which perf itself depends on), so the build needs no zstd
 * headers and files without compressed records need no libzstd at all.
 */
#ifndef TOOLS_PPROF_ZSTD_H
#define TOOLS_PPROF_ZSTD_H

#include <stddef.h>

struct pp_zstd;

/* -ENOENT when libzstd.so.1 cannot be loaded; err says why. */
int pp_zstd_new(struct pp_zstd **out, char *err, size_t errlen);
void pp_zstd_free(struct pp_zstd *z);
/*
 * Decompress src, appending to *buf (grown with realloc, *len bytes used,
 * *cap allocated), never past max_len bytes in all: a few KiB of zstd can
 * inflate to gigabytes. -EFBIG when the output would pass max_len, -EINVAL
 * on corrupt data (err says what), -ENOMEM.
 */
int pp_zstd_decompress(struct pp_zstd *z, const void *src, size_t size, unsigned char **buf,
		       size_t *len, size_t *cap, size_t max_len, char *err, size_t errlen);

#endif /* TOOLS_PPROF_ZSTD_H */
