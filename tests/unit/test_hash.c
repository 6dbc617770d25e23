// SPDX-License-Identifier: MIT
/*
 * test_hash.c - the hash table of tools/lib/hash.h: find, add, delete, keys
 * that share a hash, deleting while iterating, growing and shrinking back,
 * and seeds that differ between tables.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "tools/lib/hash.h"

struct item {
	struct hash_node node;
	uint32_t key;
};

static struct item *find(const struct hash_table *t, uint32_t key, uint64_t h)
{
	struct hash_node *n;

	hash_table_for_each_possible(t, n, h) {
		struct item *it = container_of(n, struct item, node);

		if (it->key == key)
			return it;
	}
	return NULL;
}

static struct item *add(struct hash_table *t, uint32_t key)
{
	struct item *it = calloc(1, sizeof(*it));

	cr_assert(it);
	it->key = key;
	cr_assert_eq(hash_table_add(t, &it->node, hash_table_key(t, &key, sizeof(key))), 0);
	return it;
}

static uint64_t key_hash(struct hash_table *t, uint32_t key)
{
	return hash_table_key(t, &key, sizeof(key));
}

static void free_all(struct hash_table *t)
{
	struct hash_node *n, *tmp;
	size_t i;

	hash_table_for_each_safe(t, n, tmp, i)
		free(container_of(n, struct item, node));
	hash_table_free(t);
}

Test(hash, zeroed_table_is_empty)
{
	struct hash_table t = { 0 };

	cr_assert_null(hash_table_first(&t, 12345));
	cr_assert_null(find(&t, 1, key_hash(&t, 1)));
	hash_table_fit(&t);
	cr_assert_eq(t.nr_buckets, 0);
	hash_table_free(&t);
}

Test(hash, add_find_delete)
{
	struct hash_table t = { 0 };
	struct item *items[1000];

	for (uint32_t k = 0; k < 1000; k++)
		items[k] = add(&t, k * 7);
	cr_assert_eq(t.nr, 1000);
	cr_assert_geq(t.nr_buckets, 1000, "at most one entry per bucket");
	for (uint32_t k = 0; k < 1000; k++)
		cr_assert_eq(find(&t, k * 7, key_hash(&t, k * 7)), items[k]);
	cr_assert_null(find(&t, 3, key_hash(&t, 3)));
	hash_table_del(&t, &items[10]->node);
	cr_assert_null(find(&t, 70, key_hash(&t, 70)));
	cr_assert_eq(t.nr, 999);
	hash_table_del(&t, &items[10]->node);	/* not in t any more: nothing happens */
	cr_assert_eq(t.nr, 999);
	free(items[10]);
	free_all(&t);
	cr_assert_null(t.buckets);
	cr_assert_eq(t.nr, 0);
}

Test(hash, keys_sharing_a_hash_are_told_apart_by_the_caller)
{
	struct hash_table t = { 0 };
	struct item a = { .key = 1 }, b = { .key = 2 }, c = { .key = 3 };
	struct hash_node *n;
	int seen = 0;

	/* Three keys forced onto one hash, one on another in the same bucket. */
	cr_assert_eq(hash_table_add(&t, &a.node, 42), 0);
	cr_assert_eq(hash_table_add(&t, &b.node, 42), 0);
	cr_assert_eq(hash_table_add(&t, &c.node, 42 + 64 * 1024), 0);
	cr_assert_eq(find(&t, 1, 42), &a);
	cr_assert_eq(find(&t, 2, 42), &b);
	cr_assert_null(find(&t, 3, 42), "another hash is never a candidate");
	cr_assert_eq(find(&t, 3, 42 + 64 * 1024), &c);
	hash_table_for_each_possible(&t, n, 42)
		seen++;
	cr_assert_eq(seen, 2);
	hash_table_del(&t, &a.node);
	cr_assert_eq(find(&t, 2, 42), &b);
	hash_table_free(&t);
}

Test(hash, delete_while_iterating_then_shrink)
{
	struct hash_table t = { 0 };
	struct hash_node *n, *tmp;
	size_t i, big, visited = 0;

	for (uint32_t k = 0; k < 5000; k++)
		add(&t, k);
	big = t.nr_buckets;
	/* Keep one in a hundred: every node is visited once although most go. */
	hash_table_for_each_safe(&t, n, tmp, i) {
		struct item *it = container_of(n, struct item, node);

		visited++;
		if (it->key % 100) {
			hash_table_del(&t, n);
			free(it);
		}
	}
	cr_assert_eq(visited, 5000);
	cr_assert_eq(t.nr, 50);
	cr_assert_eq(t.nr_buckets, big, "deleting never resizes");
	hash_table_fit(&t);
	cr_assert_lt(t.nr_buckets, big);
	cr_assert_geq(t.nr * 4, t.nr_buckets > 64 ? t.nr_buckets : 0, "shrunk all the way");
	for (uint32_t k = 0; k < 5000; k += 100)
		cr_assert_not_null(find(&t, k, key_hash(&t, k)), "%u after the shrink", k);
	free_all(&t);
}

Test(hash, each_table_draws_its_own_seed)
{
	struct hash_table a = { 0 }, b = { 0 };
	uint32_t key = 7;

	/* Fixed once drawn; two tables agree on a key only by a 2^-64 chance. */
	cr_assert_eq(hash_table_key(&a, &key, sizeof(key)), hash_table_key(&a, &key, sizeof(key)));
	cr_assert_neq(hash_table_seed(&a), hash_table_seed(&b));
	cr_assert_neq(hash_table_key(&a, &key, sizeof(key)), hash_table_key(&b, &key, sizeof(key)));
}
