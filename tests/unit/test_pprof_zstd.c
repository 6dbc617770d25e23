// SPDX-License-Identifier: MIT
/*
 * Unit tests for tools/pprof/zstd.c: output is capped. The input is a zstd
 * frame made by hand of RLE blocks (3-byte header + 1 byte, 128 KiB out
 * each), the cheapest way a file can ask for gigabytes.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/pprof/zstd.h"

#define RLE_BLOCK	(128 * 1024)

/* A frame of nr RLE blocks of `byte`; returns its size. */
static size_t rle_frame(uint8_t *out, size_t nr, uint8_t byte)
{
	size_t n = 0;

	memcpy(out, "\x28\xb5\x2f\xfd", 4);	/* magic 0xFD2FB528 */
	n = 4;
	out[n++] = 0x00;	/* descriptor: no content size, no checksum, no dictionary */
	out[n++] = 7 << 3;	/* window 2^(10+7) = 128 KiB: blocks may be that large */
	for (size_t i = 0; i < nr; i++) {
		uint32_t h = RLE_BLOCK << 3 | 1 << 1 | (i + 1 == nr);	/* size, RLE, last */

		out[n++] = h & 0xff;
		out[n++] = h >> 8 & 0xff;
		out[n++] = h >> 16 & 0xff;
		out[n++] = byte;
	}
	return n;
}

static struct pp_zstd *zstd_new(void)
{
	struct pp_zstd *z = NULL;
	char err[256];

	cr_assert_eq(pp_zstd_new(&z, err, sizeof(err)), 0, "%s (install libzstd1)", err);
	return z;
}

Test(pprof_zstd, frame_within_the_limit_inflates_fully)
{
	struct pp_zstd *z = zstd_new();
	uint8_t src[64];
	size_t n = rle_frame(src, 4, 0xab), len = 0, cap = 0;
	unsigned char *buf = NULL;
	char err[256] = "";

	cr_assert_eq(pp_zstd_decompress(z, src, n, &buf, &len, &cap, 4 * RLE_BLOCK, err,
					 sizeof(err)), 0, "%s", err);
	cr_assert_eq(len, 4 * RLE_BLOCK);
	cr_assert_eq(buf[0], 0xab);
	cr_assert_eq(buf[len - 1], 0xab);
	free(buf);
	pp_zstd_free(z);
}

Test(pprof_zstd, bomb_stops_at_the_limit)
{
	struct pp_zstd *z = zstd_new();
	size_t nr = 16000;			/* 64 KiB of input, 2 GiB of output */
	uint8_t *src = malloc(6 + 4 * nr);
	size_t n = rle_frame(src, nr, 0), len = 0, cap = 0;
	size_t limit = 8 << 20;
	unsigned char *buf = NULL;
	char err[256] = "";

	cr_assert_leq(n, 65535 - 8, "fits one COMPRESSED record");
	cr_assert_eq(pp_zstd_decompress(z, src, n, &buf, &len, &cap, limit, err, sizeof(err)),
		     -EFBIG);
	cr_assert_leq(len, limit);
	cr_assert_leq(cap, limit, "never allocated past the limit");
	cr_assert_not_null(strstr(err, "more than 8 MiB"), "%s", err);
	free(buf);
	free(src);
	pp_zstd_free(z);
}
