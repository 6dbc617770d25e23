/* SPDX-License-Identifier: MIT */
/*
 * fdlimit.h - raise RLIMIT_NOFILE's soft limit to the hard limit.
 *
 * The symbolizer keeps every file it opened (up to three fds each) and the
 * recorder holds events per CPU: a system-wide profile can exceed the usual
 * soft limit of 1024 fds. The library raises it itself where it needs the
 * fds (opening a recording, making a symbolizer), so a program using it
 * does not have to know; raising a soft limit up to the hard one never
 * takes anything from the caller.
 */
#ifndef SYMBOLIZE_FDLIMIT_H
#define SYMBOLIZE_FDLIMIT_H

/* As far as we may; 0 or -errno (an unchanged limit is not an error). */
int fd_limit_raise(void);

#endif /* SYMBOLIZE_FDLIMIT_H */
