/* SPDX-License-Identifier: MIT */
/*
 * util.h - small helpers shared by the symbolize library (internal).
 */
#ifndef SYMBOLIZE_UTIL_H
#define SYMBOLIZE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

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

/* Open path read-only as an ELF file (libelf initialized): 0 with *fd and
 * *elf (release with elf_end() and close()), -EINVAL when it is not ELF, -errno. */
int elf_open_path(const char *path, int *fd, Elf **elf);

/* A PT_LOAD segment: file bytes [offset, offset + filesz) at ELF address vaddr. */
struct load_seg {
	uint64_t offset, vaddr, filesz, memsz;
	bool exec;
};

/* The PT_LOAD segments of elf, in file order (exec_only: only executable
 * ones), into a malloc'd array: 0, -ENOENT when there is none, -EINVAL, -ENOMEM. */
int elf_load_segments(Elf *elf, bool exec_only, struct load_seg **segs, size_t *nr);

#endif /* SYMBOLIZE_UTIL_H */
