/* SPDX-License-Identifier: MIT */
/*
 * intern.h - a set of byte strings with dense ids, in insertion order.
 *
 * Every table of the pprof converter is "dedup this key, give it a number":
 * strings, functions, locations, mappings, stacks, label sets, samples. They
 * all use this one structure. A key is an arbitrary byte string (callers pack
 * fixed-layout structs or arrays; pad bytes must be zeroed). Ids start at 0
 * and are never reused; a stored key never moves, so the pointer returned by
 * pp_intern_get() stays valid until pp_intern_free().
 *
 * Memory: the entries, each its key and 24 bytes, in 64 KiB+ arena
 * chunks; a pointer per id; bpfrec's hash table (tools/lib/hash.h) over
 * them, at most one entry per bucket. Keys are hashed with a per-table
 * random seed, so keys chosen in a file cannot be made to collide.
 */
#ifndef TOOLS_PPROF_INTERN_H
#define TOOLS_PPROF_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tools/lib/hash.h"

/* One key, in an arena chunk: it never moves. */
struct pp_intern_entry {
	struct hash_node node;
	uint32_t id;
	uint32_t len;
	uint8_t key[];
};

struct pp_intern_chunk;

struct pp_intern {
	struct pp_intern_entry **entries;	/* by id */
	size_t nr, cap;
	struct hash_table table;
	struct pp_intern_chunk *chunks;
};

/* A zeroed struct pp_intern is a valid empty set; _init() just zeroes it. */
void pp_intern_init(struct pp_intern *t);
void pp_intern_free(struct pp_intern *t);

/*
 * The id of key, adding it when new (*added says which, may be NULL).
 * Returns the id (>= 0), -ENOMEM, or -E2BIG for a key of 4 GiB or more.
 */
int64_t pp_intern_put(struct pp_intern *t, const void *key, size_t len, bool *added);
/* The id of key, or -ENOENT. */
int64_t pp_intern_find(const struct pp_intern *t, const void *key, size_t len);
/* The key of id (which must be < pp_intern_count()). */
const void *pp_intern_get(const struct pp_intern *t, uint32_t id, size_t *len);

static inline size_t pp_intern_count(const struct pp_intern *t)
{
	return t->nr;
}

/* The id of string s, its NUL included in the key (added when new), or -ENOMEM. */
static inline int64_t pp_intern_str(struct pp_intern *t, const char *s)
{
	return pp_intern_put(t, s, strlen(s) + 1, NULL);
}

#endif /* TOOLS_PPROF_INTERN_H */
