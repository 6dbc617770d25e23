// SPDX-License-Identifier: MIT
/* fdio.c - all of a buffer to a file descriptor (fdio.h). */
#include <errno.h>
#include <unistd.h>

#include "tools/lib/fdio.h"

/* off < 0: write(2) at the fd's offset; else pwrite(2) at off. */
static int write_loop(int fd, const void *buf, size_t n, int64_t off)
{
	const uint8_t *p = buf;

	while (n) {
		ssize_t w = off < 0 ? write(fd, p, n) : pwrite(fd, p, n, (off_t)off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
		if (off >= 0)
			off += w;
	}
	return 0;
}

int fd_write_all(int fd, const void *p, size_t n)
{
	return write_loop(fd, p, n, -1);
}

int fd_pwrite_all(int fd, const void *p, size_t n, uint64_t off)
{
	if (off > (uint64_t)INT64_MAX)
		return -EINVAL;
	return write_loop(fd, p, n, (int64_t)off);
}
