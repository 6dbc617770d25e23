// SPDX-License-Identifier: MIT
/* cache.c - keyed entries with a value and an error, on the hash table (cache.h). */
#include <stdlib.h>
#include <string.h>

#include "symbolize/cache.h"

struct cache_entry *cache_get(const struct cache *c, const void *key, size_t key_len)
{
	struct hash_node *n;
	uint64_t h;

	if (!c->table.nr)
		return NULL;	/* nothing to find, and no seed drawn yet */
	h = hash_bytes(c->table.seed, key, key_len);
	hash_table_for_each_possible(&c->table, n, h) {
		struct cache_entry *e = container_of(n, struct cache_entry, node);

		if (e->key_len == key_len && !memcmp(e->key, key, key_len))
			return e;
	}
	return NULL;
}

struct cache_entry *cache_add(struct cache *c, const void *key, size_t key_len)
{
	struct cache_entry *e = calloc(1, sizeof(*e) + key_len);

	if (!e)
		return NULL;
	e->key_len = key_len;
	memcpy(e->key, key, key_len);
	if (hash_table_add(&c->table, &e->node, hash_table_key(&c->table, key, key_len))) {
		free(e);
		return NULL;
	}
	c->nr = c->table.nr;
	return e;
}

void cache_del(struct cache *c, struct cache_entry *e)
{
	size_t nr = c->table.nr;

	hash_table_del(&c->table, &e->node);
	if (c->table.nr != nr)
		free(e);	/* it was in c */
	c->nr = c->table.nr;
}

void cache_clear(struct cache *c, void (*free_value)(void *value))
{
	struct hash_node *n, *tmp;
	size_t i;

	hash_table_for_each_safe(&c->table, n, tmp, i) {
		struct cache_entry *e = container_of(n, struct cache_entry, node);

		if (e->value && free_value)
			free_value(e->value);
		free(e);
	}
	hash_table_free(&c->table);
	c->nr = 0;
}
