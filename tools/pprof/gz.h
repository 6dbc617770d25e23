/* SPDX-License-Identifier: MIT */
/*
 * gz.h - stream bytes into a gzip file (RFC 1952) on an fd, with zlib.
 *
 * pprof profiles are gzip-compressed protobuf; the serializer hands its
 * encoded pieces here as it goes, so the uncompressed profile never has to
 * exist in memory at once. The fd is not closed. Errors are -errno and
 * sticky: once a write failed, later calls return the same error.
 */
#ifndef TOOLS_PPROF_GZ_H
#define TOOLS_PPROF_GZ_H

#include <stddef.h>
#include <stdint.h>

struct pp_gz;

/* level: zlib level 0..9, or -1 for zlib's default. */
int pp_gz_new(int fd, int level, struct pp_gz **out);
int pp_gz_write(struct pp_gz *g, const void *data, size_t len);
/* Flush everything and write the gzip trailer. */
int pp_gz_finish(struct pp_gz *g);
void pp_gz_free(struct pp_gz *g);
/* Uncompressed bytes consumed so far. */
uint64_t pp_gz_bytes_in(const struct pp_gz *g);

#endif /* TOOLS_PPROF_GZ_H */
