// SPDX-License-Identifier: MIT
/*
 * intern.c - dedup byte strings into dense ids (see intern.h).
 *
 * Open addressing with linear probing over a power-of-two slot array kept at
 * most half full; each slot holds an entry index + 1, and the entry keeps the
 * key's 32-bit hash so probes rarely touch the key bytes. Keys are copied
 * into append-only chunks so they never move. The hash is seeded per table
 * (perfdata/hash.h): keys come from input files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata/hash.h"
#include "intern.h"

#define CHUNK_MIN	(64 * 1024)

struct pp_intern_chunk {
	struct pp_intern_chunk *next;
	size_t used, cap;
	uint8_t data[];
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
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static int64_t lookup(const struct pp_intern *t, const void *key, uint32_t len, uint32_t hash,
		      size_t *slot_out)
{
	size_t mask = t->nr_slots - 1;
	size_t i = hash & mask;

	for (;;) {
		uint32_t s = t->slots[i];

		if (!s) {
			*slot_out = i;
			return -ENOENT;
		}
		const struct pp_intern_entry *e = &t->entries[s - 1];

		if (e->hash == hash && e->len == len && !memcmp(e->key, key, len))
			return s - 1;
		i = (i + 1) & mask;
	}
}

static uint32_t key_hash(const struct pp_intern *t, const void *key, size_t len)
{
	return (uint32_t)perfdata_hash(t->seed, key, len);
}

static int grow_slots(struct pp_intern *t)
{
	size_t n = t->nr_slots ? t->nr_slots * 2 : 64;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	if (!t->nr_slots)
		t->seed = perfdata_hash_seed();	/* before the first key is hashed */
	for (size_t id = 0; id < t->nr; id++) {
		size_t i = t->entries[id].hash & (n - 1);

		while (slots[i])
			i = (i + 1) & (n - 1);
		slots[i] = id + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nr_slots = n;
	return 0;
}

static uint8_t *store_key(struct pp_intern *t, const void *key, size_t len)
{
	struct pp_intern_chunk *c = t->chunks;

	if (!c || c->cap - c->used < len) {
		size_t cap = len > CHUNK_MIN ? len : CHUNK_MIN;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = t->chunks;
		t->chunks = c;
	}
	uint8_t *p = c->data + c->used;

	if (len)
		memcpy(p, key, len);
	c->used += len;
	return p;
}

int64_t pp_intern_put(struct pp_intern *t, const void *key, size_t len, bool *added)
{
	uint32_t hash;
	size_t slot;
	int64_t id;

	if (added)
		*added = false;
	if (len >= UINT32_MAX)
		return -E2BIG;
	if ((t->nr + 1) * 2 > t->nr_slots) {
		int err = grow_slots(t);

		if (err)
			return err;
	}
	hash = key_hash(t, key, len);
	id = lookup(t, key, len, hash, &slot);
	if (id >= 0)
		return id;
	if (t->nr >= UINT32_MAX - 1)
		return -E2BIG;
	if (t->nr == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct pp_intern_entry *e = realloc(t->entries, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		t->entries = e;
		t->cap = cap;
	}
	const uint8_t *stored = store_key(t, key, len);

	if (!stored)
		return -ENOMEM;
	t->entries[t->nr] = (struct pp_intern_entry){ .key = stored, .len = len, .hash = hash };
	t->slots[slot] = t->nr + 1;
	if (added)
		*added = true;
	return t->nr++;
}

int64_t pp_intern_find(const struct pp_intern *t, const void *key, size_t len)
{
	size_t slot;

	if (!t->nr_slots || len >= UINT32_MAX)
		return -ENOENT;
	return lookup(t, key, len, key_hash(t, key, len), &slot);
}

const void *pp_intern_get(const struct pp_intern *t, uint32_t id, size_t *len)
{
	if (len)
		*len = t->entries[id].len;
	return t->entries[id].key;
}
