/* SPDX-License-Identifier: MIT */
/*
 * cache.h - byte-string keys to a value and an error code, for the
 * symbolizer's per-file and per-pid caches and the recorder's (build-ids
 * seen, unwind tables), on bpfrec's one hash table (tools/lib/hash.h): the
 * entries own a copy of their key. Failures are cached too (value NULL,
 * err < 0), so a missing file is looked for once. Keys (paths from
 * perf.data files) are hashed with a per-cache random seed. A zeroed
 * struct is an empty cache.
 */
#ifndef SYMBOLIZE_CACHE_H
#define SYMBOLIZE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "tools/lib/hash.h"

struct cache_entry {
	struct hash_node node;
	void *value;
	int err;
	size_t key_len;
	unsigned char key[];
};

struct cache {
	struct hash_table table;
	size_t nr;		/* entries, for callers to read */
};

/* The entry for key, or NULL. */
struct cache_entry *cache_get(const struct cache *c, const void *key, size_t key_len);
/* A new entry (value NULL, err 0) for a key not in c, or NULL when out of memory. */
struct cache_entry *cache_add(struct cache *c, const void *key, size_t key_len);
/* Unlink entry e of c and free it (not its value). */
void cache_del(struct cache *c, struct cache_entry *e);
/* Free every entry, calling free_value on the non-NULL values. */
void cache_clear(struct cache *c, void (*free_value)(void *value));

#endif /* SYMBOLIZE_CACHE_H */
