// SPDX-License-Identifier: MIT
/* cache.c - chained hash table, seeded hash (cache.h). */
#include <stdlib.h>
#include <string.h>

#include "perfdata/hash.h"
#include "symbolize/cache.h"

struct cache_entry *cache_get(const struct cache *c, const void *key, size_t key_len)
{
	struct cache_entry *e;
	uint64_t h;

	if (!c->nr_buckets)
		return NULL;
	h = perfdata_hash(c->seed, key, key_len);
	for (e = c->buckets[h & (c->nr_buckets - 1)]; e; e = e->next)
		if (e->hash == h && e->key_len == key_len && !memcmp(e->key, key, key_len))
			return e;
	return NULL;
}

static int grow(struct cache *c)
{
	size_t n = c->nr_buckets ? c->nr_buckets * 2 : 64;
	struct cache_entry **b = calloc(n, sizeof(*b));

	if (!b)
		return -1;
	if (!c->nr_buckets)
		c->seed = perfdata_hash_seed();	/* before the first key is hashed */
	for (size_t i = 0; i < c->nr_buckets; i++) {
		struct cache_entry *e = c->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			e->next = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
		}
	}
	free(c->buckets);
	c->buckets = b;
	c->nr_buckets = n;
	return 0;
}

struct cache_entry *cache_add(struct cache *c, const void *key, size_t key_len)
{
	struct cache_entry *e;
	size_t slot;

	if (c->nr >= c->nr_buckets && grow(c))
		return NULL;
	e = calloc(1, sizeof(*e) + key_len);
	if (!e)
		return NULL;
	e->hash = perfdata_hash(c->seed, key, key_len);
	e->key_len = key_len;
	memcpy(e->key, key, key_len);
	slot = e->hash & (c->nr_buckets - 1);
	e->next = c->buckets[slot];
	c->buckets[slot] = e;
	c->nr++;
	return e;
}

void cache_del(struct cache *c, struct cache_entry *e)
{
	struct cache_entry **pp = &c->buckets[e->hash & (c->nr_buckets - 1)];

	while (*pp && *pp != e)
		pp = &(*pp)->next;
	if (!*pp)
		return;	/* not in c */
	*pp = e->next;
	c->nr--;
	free(e);
}

void cache_clear(struct cache *c, void (*free_value)(void *value))
{
	for (size_t i = 0; i < c->nr_buckets; i++) {
		struct cache_entry *e = c->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			if (e->value && free_value)
				free_value(e->value);
			free(e);
		}
	}
	free(c->buckets);
	c->buckets = NULL;
	c->nr_buckets = c->nr = 0;
}
