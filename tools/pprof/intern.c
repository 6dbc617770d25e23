// SPDX-License-Identifier: MIT
/*
 * intern.c - dedup byte strings into dense ids (see intern.h).
 *
 * Each entry (its hash node, id, length and key bytes) is appended to an
 * arena chunk, so it never moves and the hash table (tools/lib/hash.h) can
 * link it in place; an array of pointers gives the entry of an id. A probe
 * compares the stored hash first, so it rarely touches other keys' bytes,
 * and the key sits next to its node when it does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "intern.h"
#include "tools/lib/array.h"

#define CHUNK_MIN	(64 * 1024)
#define ENTRY_ALIGN	8

struct pp_intern_chunk {
	struct pp_intern_chunk *next;
	size_t used, cap;
	uint8_t data[] __attribute__((aligned(ENTRY_ALIGN)));
};

void pp_intern_init(struct pp_intern *t)
{
	memset(t, 0, sizeof(*t));
}

void pp_intern_free(struct pp_intern *t)
{
	struct pp_intern_chunk *c = t->chunks;

	while (c) {
		struct pp_intern_chunk *next = c->next;

		free(c);
		c = next;
	}
	free(t->entries);
	hash_table_free(&t->table);
	memset(t, 0, sizeof(*t));
}

static int64_t lookup(const struct pp_intern *t, const void *key, uint32_t len, uint64_t hash)
{
	struct hash_node *n;

	hash_table_for_each_possible(&t->table, n, hash) {
		const struct pp_intern_entry *e = container_of(n, struct pp_intern_entry, node);

		if (e->len == len && !memcmp(e->key, key, len))
			return e->id;
	}
	return -ENOENT;
}

/* Room for an entry with a key of len bytes, aligned for its node. */
static struct pp_intern_entry *new_entry(struct pp_intern *t, size_t len)
{
	struct pp_intern_chunk *c = t->chunks;
	size_t size = (sizeof(struct pp_intern_entry) + len + ENTRY_ALIGN - 1) & ~(size_t)(ENTRY_ALIGN - 1);
	void *p;

	if (!c || c->cap - c->used < size) {
		size_t cap = size > CHUNK_MIN ? size : CHUNK_MIN;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = t->chunks;
		t->chunks = c;
	}
	p = c->data + c->used;
	c->used += size;
	return p;
}

int64_t pp_intern_put(struct pp_intern *t, const void *key, size_t len, bool *added)
{
	struct pp_intern_entry *e;
	uint64_t hash;
	int64_t id;

	if (added)
		*added = false;
	if (len >= UINT32_MAX)
		return -E2BIG;
	hash = hash_table_key(&t->table, key, len);
	id = lookup(t, key, (uint32_t)len, hash);
	if (id >= 0)
		return id;
	if (t->nr >= UINT32_MAX - 1)
		return -E2BIG;
	if (ARRAY_RESERVE(t->entries, t->cap, t->nr + 1, 64))
		return -ENOMEM;
	e = new_entry(t, len);
	if (!e)
		return -ENOMEM;
	e->id = (uint32_t)t->nr;
	e->len = (uint32_t)len;
	if (len)
		memcpy(e->key, key, len);
	if (hash_table_add(&t->table, &e->node, hash))
		return -ENOMEM;	/* the arena keeps the bytes until pp_intern_free() */
	t->entries[t->nr] = e;
	if (added)
		*added = true;
	return t->nr++;
}

int64_t pp_intern_find(const struct pp_intern *t, const void *key, size_t len)
{
	if (!t->nr || len >= UINT32_MAX)
		return -ENOENT;	/* nothing to find, and no seed drawn yet */
	return lookup(t, key, (uint32_t)len, hash_bytes(t->table.seed, key, len));
}

const void *pp_intern_get(const struct pp_intern *t, uint32_t id, size_t *len)
{
	if (len)
		*len = t->entries[id]->len;
	return t->entries[id]->key;
}
