/* SPDX-License-Identifier: MIT */
/*
 * util.h - small helpers shared by the symbolize library (internal).
 */
#ifndef SYMBOLIZE_UTIL_H
#define SYMBOLIZE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Read a whole file, also one whose size stat() does not know (/proc).
 * *buf is NUL-terminated (one spare byte past *len); free() it. 0 or -errno. */
int read_whole_file(const char *path, char **buf, size_t *len);
/* The same from an open fd (read from its current offset; fd stays open). */
int read_whole_fd(int fd, char **buf, size_t *len);

/* malloc'd concatenation of the NULL-terminated list of strings, or NULL. */
char *str_join(const char *first, ...) __attribute__((sentinel));

/*
 * Which of two symbols at one address to show, as perf chooses: strong
 * before weak, global before local, fewer leading underscores, then the
 * longer name. < 0 when a wins, > 0 when b wins, 0 when nothing decides.
 */
int sym_alias_cmp(bool weak_a, bool global_a, const char *name_a,
		  bool weak_b, bool global_b, const char *name_b);

#endif /* SYMBOLIZE_UTIL_H */
