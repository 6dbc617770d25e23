/* SPDX-License-Identifier: MIT */
/*
 * aspace.h - which mapping covers an address of a process, as MMAP, MMAP2,
 * FORK and COMM-exec records replayed in time order describe it.
 *
 * One interval map per pid (tgid): threads share their process's maps. A
 * new mapping replaces whatever part of older ones it overlaps, as mmap(2)
 * does. fork copies the parent's maps to the child, exec empties them; the
 * kernel's maps live under PP_ASPACE_KERNEL. Values are the caller's
 * mapping ids (32-bit). Memory: 24 bytes per live interval plus one small
 * header per pid seen.
 */
#ifndef TOOLS_PPROF_ASPACE_H
#define TOOLS_PPROF_ASPACE_H

#include <stdbool.h>
#include <stdint.h>

/* The pid of kernel maps (perf writes pid -1 in their MMAP records). */
#define PP_ASPACE_KERNEL UINT32_MAX

struct pp_aspace;

int pp_aspace_new(struct pp_aspace **out);
void pp_aspace_free(struct pp_aspace *a);

/* [start, start + len) of pid now maps to value. -EINVAL for len 0. */
int pp_aspace_map(struct pp_aspace *a, uint32_t pid, uint64_t start, uint64_t len,
		  uint32_t value);
/* The value covering addr in pid, 0 or -ENOENT. */
int pp_aspace_find(const struct pp_aspace *a, uint32_t pid, uint64_t addr, uint32_t *value);
/* child's maps become a copy of parent's (a fork; also fine for pid reuse). */
int pp_aspace_fork(struct pp_aspace *a, uint32_t child, uint32_t parent);
/* pid exec'd: its old maps are gone. */
void pp_aspace_exec(struct pp_aspace *a, uint32_t pid);
/* Whether any MMAP/FORK ever described pid. */
bool pp_aspace_known(const struct pp_aspace *a, uint32_t pid);
/* A number that changes whenever pid's maps change (0 for an unknown pid):
 * lookups cached under (pid, generation) stay valid while it holds. */
uint32_t pp_aspace_generation(const struct pp_aspace *a, uint32_t pid);
/* Number of intervals of pid (for tests and statistics). */
size_t pp_aspace_count(const struct pp_aspace *a, uint32_t pid);
/* The i-th interval of pid in address order (i < pp_aspace_count()):
 * [*start, *end) maps to *value. 0 or -ENOENT. */
int pp_aspace_at(const struct pp_aspace *a, uint32_t pid, size_t i, uint64_t *start,
		 uint64_t *end, uint32_t *value);

#endif /* TOOLS_PPROF_ASPACE_H */
