/* SPDX-License-Identifier: MIT */
/*
 * fdio.h - all of a buffer to a file descriptor: the loop every writer
 * needs, since write(2) may write less than asked (a pipe, a full disk's
 * last bytes, a signal) and may be interrupted before it writes anything.
 */
#ifndef TOOLS_LIB_FDIO_H
#define TOOLS_LIB_FDIO_H

#include <stddef.h>
#include <stdint.h>

/* All n bytes of p to fd at its offset (a pipe, a socket, a file): 0, or
 * -errno (-EIO when the fd takes no more bytes without saying why). */
int fd_write_all(int fd, const void *p, size_t n);
/* All n bytes of p to fd at off, with pwrite(2); the fd's offset stays. */
int fd_pwrite_all(int fd, const void *p, size_t n, uint64_t off);

#endif /* TOOLS_LIB_FDIO_H */
