// SPDX-License-Identifier: MIT
/* Unit tests for tools/pprof/gz.c: what it writes, zlib reads back identically. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "tools/pprof/gz.h"
#include "test_pprof_decode.h"

static int tmp_fd(void)
{
	char path[] = "/tmp/test_pprof_gz.XXXXXX";
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	unlink(path);
	return fd;
}

/* Read the whole fd and inflate it as gzip (tp_gunzip()); returns the plain bytes. */
static uint8_t *gunzip_fd(int fd, size_t *out_len)
{
	off_t size = lseek(fd, 0, SEEK_END);
	uint8_t *in = malloc(size ? size : 1), *out;

	cr_assert(in);
	cr_assert_eq(pread(fd, in, size, 0), size);
	cr_assert_geq(size, 18, "a gzip file is at least 18 bytes");
	*out_len = (size_t)size;
	out = tp_gunzip(in, out_len);
	free(in);
	return out;
}

Test(gz, round_trip_small)
{
	int fd = tmp_fd();
	struct pp_gz *g;
	const char *msg = "hello, profile";
	size_t len;

	cr_assert_eq(pp_gz_new(fd, -1, &g), 0);
	cr_assert_eq(pp_gz_write(g, msg, 7), 0);
	cr_assert_eq(pp_gz_write(g, msg + 7, strlen(msg) - 7), 0);
	cr_assert_eq(pp_gz_finish(g), 0);
	cr_assert_eq(pp_gz_bytes_in(g), strlen(msg));
	pp_gz_free(g);

	uint8_t *plain = gunzip_fd(fd, &len);

	cr_assert_eq(len, strlen(msg));
	cr_assert_eq(memcmp(plain, msg, len), 0);
	free(plain);
	close(fd);
}

Test(gz, round_trip_empty)
{
	int fd = tmp_fd();
	struct pp_gz *g;
	size_t len;

	cr_assert_eq(pp_gz_new(fd, 6, &g), 0);
	cr_assert_eq(pp_gz_finish(g), 0);
	pp_gz_free(g);
	free(gunzip_fd(fd, &len));
	cr_assert_eq(len, 0);
	close(fd);
}

/* Several MiB of poorly compressible data, in odd-sized pieces: many output buffers. */
Test(gz, round_trip_large)
{
	size_t n = 5 * 1024 * 1024 + 13, len;
	uint8_t *data = malloc(n);
	uint64_t x = 0x123456789abcdefULL;
	int fd = tmp_fd();
	struct pp_gz *g;

	cr_assert(data);
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		data[i] = (uint8_t)(i % 3 ? x : i);
	}
	cr_assert_eq(pp_gz_new(fd, 1, &g), 0);
	for (size_t off = 0, step = 1; off < n; off += step, step = step * 3 % 100003 + 1)
		cr_assert_eq(pp_gz_write(g, data + off, off + step > n ? n - off : step), 0);
	cr_assert_eq(pp_gz_finish(g), 0);
	pp_gz_free(g);

	uint8_t *plain = gunzip_fd(fd, &len);

	cr_assert_eq(len, n);
	cr_assert_eq(memcmp(plain, data, n), 0);
	free(plain);
	free(data);
	close(fd);
}

Test(gz, write_error_is_reported_and_sticky)
{
	int fds[2];
	struct pp_gz *g;
	uint8_t junk[1 << 16];

	/* A pipe without a reader: write(2) fails with EPIPE (SIGPIPE ignored). */
	signal(SIGPIPE, SIG_IGN);
	cr_assert_eq(pipe(fds), 0);
	close(fds[0]);
	memset(junk, 'x', sizeof(junk));
	cr_assert_eq(pp_gz_new(fds[1], 0, &g), 0);	/* level 0: output as big as input */
	int err = 0;

	for (int i = 0; i < 8 && !err; i++)
		err = pp_gz_write(g, junk, sizeof(junk));
	if (!err)
		err = pp_gz_finish(g);
	cr_assert_eq(err, -EPIPE);
	cr_assert_eq(pp_gz_write(g, junk, 1), -EPIPE);
	cr_assert_eq(pp_gz_finish(g), -EPIPE);
	pp_gz_free(g);
	close(fds[1]);
}
