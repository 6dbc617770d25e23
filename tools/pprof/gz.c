// SPDX-License-Identifier: MIT
/*
 * gz.c - gzip output through zlib's deflate (see gz.h).
 *
 * deflateInit2() with windowBits 15 + 16 makes zlib write the gzip header
 * and trailer (CRC-32, size) itself. Output goes through a 64 KiB buffer and
 * fd_write_all() (tools/lib/fdio.h), which copes with short writes and EINTR.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "gz.h"
#include "tools/lib/fdio.h"

#define OUT_SIZE (64 * 1024)

struct pp_gz {
	int fd;
	int err;
	z_stream zs;
	uint64_t bytes_in;
	unsigned char out[OUT_SIZE];
};

int pp_gz_new(int fd, int level, struct pp_gz **out)
{
	struct pp_gz *g = calloc(1, sizeof(*g));

	if (!g)
		return -ENOMEM;
	g->fd = fd;
	if (deflateInit2(&g->zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		return -EINVAL;
	}
	*out = g;
	return 0;
}

/* Run deflate with `flush` until it wants more input (or, for Z_FINISH, is done). */
static int pump(struct pp_gz *g, int flush)
{
	for (;;) {
		g->zs.next_out = g->out;
		g->zs.avail_out = OUT_SIZE;

		int ret = deflate(&g->zs, flush);

		if (ret == Z_STREAM_ERROR)
			return g->err = -EINVAL;

		size_t have = OUT_SIZE - g->zs.avail_out;

		if (have) {
			int err = fd_write_all(g->fd, g->out, have);

			if (err)
				return g->err = err;
		}
		if (flush == Z_FINISH ? ret == Z_STREAM_END : g->zs.avail_out != 0)
			return 0;
	}
}

int pp_gz_write(struct pp_gz *g, const void *data, size_t len)
{
	const unsigned char *p = data;

	if (g->err)
		return g->err;
	g->bytes_in += len;
	/* avail_in is a uInt: feed huge buffers in pieces. */
	while (len) {
		size_t n = len > (1u << 30) ? (1u << 30) : len;
		int err;

		g->zs.next_in = (unsigned char *)p;
		g->zs.avail_in = (uInt)n;
		err = pump(g, Z_NO_FLUSH);
		if (err)
			return err;
		p += n;
		len -= n;
	}
	return 0;
}

int pp_gz_finish(struct pp_gz *g)
{
	if (g->err)
		return g->err;
	g->zs.next_in = NULL;
	g->zs.avail_in = 0;
	return pump(g, Z_FINISH);
}

void pp_gz_free(struct pp_gz *g)
{
	if (!g)
		return;
	deflateEnd(&g->zs);
	free(g);
}

uint64_t pp_gz_bytes_in(const struct pp_gz *g)
{
	return g->bytes_in;
}
