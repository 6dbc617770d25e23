/* SPDX-License-Identifier: MIT */
/*
 * hash.h - the one hash function and the one hash table of bpfrec.
 *
 * Tables are filled with keys taken from input files (stacks, paths and
 * strings of a perf.data) or from /proc. With a fixed hash, whoever writes
 * the file can precompute keys that all land in one slot and make every
 * lookup a linear scan. So each table draws its own random seed when it is
 * created (hash_seed(), from getrandom) and hashes with it: the
 * same key hashes differently in two tables and in two runs. Nothing may
 * depend on the hash values or on slot order (ids and outputs follow
 * insertion order), so results stay deterministic.
 */
#ifndef TOOLS_LIB_HASH_H
#define TOOLS_LIB_HASH_H

#include <stddef.h>
#include <stdint.h>

/* A fresh random seed (getrandom; a time- and address-based one if that fails). */
uint64_t hash_seed(void);
/* 64-bit hash of len bytes under seed; every bit depends on every key bit. */
uint64_t hash_bytes(uint64_t seed, const void *data, size_t len);

/*
 * The hash table: chained, intrusive (the caller embeds a struct hash_node
 * in its entry and owns the entry's memory), keys of any shape. The caller
 * hashes its key with the table's seed (hash_table_key(), or
 * hash_bytes() over hash_table_seed() for a key in several pieces),
 * walks the nodes of that hash with hash_table_for_each_possible() and
 * compares the keys itself. On an add, buckets double when there are more
 * entries than buckets and halve when there are four times fewer, so chains
 * stay short and a table that held a burst does not keep its size. A zeroed
 * struct hash_table is an empty table; its seed is drawn on first use.
 * Used by the symbolizer's caches (symbolize/cache.h), the recorder's task
 * tracker and whatever else needs "find by key".
 */
struct hash_node {
	struct hash_node *next;
	uint64_t hash;
};

struct hash_table {
	struct hash_node **buckets;
	size_t nr_buckets;	/* 0, or a power of two */
	size_t nr;
	uint64_t seed;
	int seeded;
};

/* The table's seed, drawn the first time it is asked for. */
uint64_t hash_table_seed(struct hash_table *t);
/* The hash of a key of len bytes under the table's seed. */
uint64_t hash_table_key(struct hash_table *t, const void *key, size_t len);
/* The first node with this hash, or NULL; then the next after n. */
struct hash_node *hash_table_first(const struct hash_table *t, uint64_t hash);
struct hash_node *hash_table_next(const struct hash_node *n);
/* Add n under hash (a key not in t, or a second entry for it): 0 or -ENOMEM. */
int hash_table_add(struct hash_table *t, struct hash_node *n, uint64_t hash);
/* Unlink n from t (its memory stays the caller's); nothing when it is not in t.
 * Never moves other nodes: safe inside hash_table_for_each_safe(). */
void hash_table_del(struct hash_table *t, struct hash_node *n);
/* Double or halve the buckets if the entries call for it (hash_table_add()
 * does it; this is for after many deletes). Not inside an iteration. */
void hash_table_fit(struct hash_table *t);
/* Free the buckets, not the entries (free those first with hash_table_for_each_safe()). */
void hash_table_free(struct hash_table *t);

/* Each node whose hash is h: candidates for the key, to be compared. */
#define hash_table_for_each_possible(t, n, h)                                      \
	for ((n) = hash_table_first((t), (h)); (n); (n) = hash_table_next(n))

/* Each node of t in bucket order; the body may hash_table_del() the current one. */
#define hash_table_for_each_safe(t, n, tmp, i)                                     \
	for ((i) = 0; (i) < (t)->nr_buckets; (i)++)                                \
		for ((n) = (t)->buckets[i]; (n) && ((tmp) = (n)->next, 1); (n) = (tmp))

#ifndef container_of
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
#endif

#endif /* TOOLS_LIB_HASH_H */
