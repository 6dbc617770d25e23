// SPDX-License-Identifier: MIT
/* hash.c - the seeded hash function and the hash table (see hash.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "hash.h"

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

uint64_t hash_seed(void)
{
	struct timespec ts;
	uint64_t seed;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == sizeof(seed))
		return seed;
	/* No entropy yet (early boot) or no getrandom: still differs per run. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return mix((uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 32 ^ (uint64_t)getpid() << 16 ^
		   (uint64_t)(uintptr_t)&ts);
}

/*
 * One multiply per 8-byte word (keys are mostly short arrays of ids and
 * addresses), a full avalanche at the end. The seed enters the initial
 * state and the tail, so equal-length keys that collide under one seed do
 * not under another.
 */
uint64_t hash_bytes(uint64_t seed, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t h = mix(seed ^ 0x9e3779b97f4a7c15ULL) ^ (len * 0x100000001b3ULL);
	uint64_t w;

	while (len >= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 32;
		p += 8;
		len -= 8;
	}
	if (len) {
		w = 0;
		memcpy(&w, p, len);
		h = (h ^ w ^ 0xa0761d6478bd642fULL) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 32;
	}
	return mix(h ^ seed);
}

/* ---- the table ------------------------------------------------------------ */

#define MIN_BUCKETS	64

uint64_t hash_table_seed(struct hash_table *t)
{
	if (!t->seeded) {
		t->seed = hash_seed();
		t->seeded = 1;
	}
	return t->seed;
}

uint64_t hash_table_key(struct hash_table *t, const void *key, size_t len)
{
	return hash_bytes(hash_table_seed(t), key, len);
}

/* The first node of h's chain with hash h, from n on. */
static struct hash_node *same_hash(struct hash_node *n, uint64_t h)
{
	while (n && n->hash != h)
		n = n->next;
	return n;
}

struct hash_node *hash_table_first(const struct hash_table *t, uint64_t hash)
{
	if (!t->nr_buckets)
		return NULL;
	return same_hash(t->buckets[hash & (t->nr_buckets - 1)], hash);
}

struct hash_node *hash_table_next(const struct hash_node *n)
{
	return same_hash(n->next, n->hash);
}

/* Move every node to n buckets; on ENOMEM the old array stays (longer chains, still correct). */
static int rehash(struct hash_table *t, size_t n)
{
	struct hash_node **b = calloc(n, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < t->nr_buckets; i++) {
		struct hash_node *e = t->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			e->next = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
		}
	}
	free(t->buckets);
	t->buckets = b;
	t->nr_buckets = n;
	return 0;
}

void hash_table_fit(struct hash_table *t)
{
	size_t n = t->nr_buckets;

	/* Hysteresis: at most one entry per bucket, at least one per four buckets. */
	while (n && t->nr >= n && n <= SIZE_MAX / 2 / sizeof(*t->buckets))
		n *= 2;
	while (t->nr < n / 4 && n > MIN_BUCKETS)
		n /= 2;
	if (n != t->nr_buckets)
		rehash(t, n);
}

int hash_table_add(struct hash_table *t, struct hash_node *n, uint64_t hash)
{
	size_t slot;

	if (!t->nr_buckets && rehash(t, MIN_BUCKETS))
		return -ENOMEM;
	/* Resized here, never on a delete: that never moves the nodes an iteration walks. */
	hash_table_fit(t);
	n->hash = hash;
	slot = hash & (t->nr_buckets - 1);
	n->next = t->buckets[slot];
	t->buckets[slot] = n;
	t->nr++;
	return 0;
}

void hash_table_del(struct hash_table *t, struct hash_node *n)
{
	struct hash_node **pp;

	if (!t->nr_buckets)
		return;
	pp = &t->buckets[n->hash & (t->nr_buckets - 1)];
	while (*pp && *pp != n)
		pp = &(*pp)->next;
	if (!*pp)
		return;	/* not in t */
	*pp = n->next;
	n->next = NULL;
	t->nr--;
}

void hash_table_free(struct hash_table *t)
{
	free(t->buckets);
	t->buckets = NULL;
	t->nr_buckets = t->nr = 0;
}
