// SPDX-License-Identifier: MIT
/* Unit tests for tools/pprof/intern.c: dedup, dense ids, stable keys. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tools/lib/hash.h"
#include "tools/pprof/intern.h"

Test(intern, dedup_and_dense_ids)
{
	struct pp_intern t;
	bool added;

	pp_intern_init(&t);
	cr_assert_eq(pp_intern_find(&t, "a", 1), -ENOENT, "empty set finds nothing");
	cr_assert_eq(pp_intern_put(&t, "", 0, &added), 0);
	cr_assert(added);
	cr_assert_eq(pp_intern_put(&t, "abc", 3, &added), 1);
	cr_assert(added);
	cr_assert_eq(pp_intern_put(&t, "ab", 2, &added), 2, "a prefix is another key");
	cr_assert_eq(pp_intern_put(&t, "abc", 3, &added), 1);
	cr_assert(!added);
	cr_assert_eq(pp_intern_put(&t, "", 0, NULL), 0);
	cr_assert_eq(pp_intern_find(&t, "ab", 2), 2);
	cr_assert_eq(pp_intern_find(&t, "abd", 3), -ENOENT);
	cr_assert_eq(pp_intern_count(&t), 3);

	size_t len;
	const char *k = pp_intern_get(&t, 1, &len);

	cr_assert_eq(len, 3);
	cr_assert_eq(memcmp(k, "abc", 3), 0);
	pp_intern_free(&t);
	cr_assert_eq(pp_intern_count(&t), 0);
}

Test(intern, binary_keys)
{
	struct pp_intern t;
	uint64_t a[2] = { 1, 2 }, b[2] = { 2, 1 }, c[3] = { 1, 2, 0 };

	pp_intern_init(&t);
	cr_assert_eq(pp_intern_put(&t, a, sizeof(a), NULL), 0);
	cr_assert_eq(pp_intern_put(&t, b, sizeof(b), NULL), 1);
	cr_assert_eq(pp_intern_put(&t, c, sizeof(c), NULL), 2, "trailing zeros make a new key");
	cr_assert_eq(pp_intern_find(&t, a, sizeof(a)), 0);
	pp_intern_free(&t);
}

/* Many keys: the index grows many times, ids stay in insertion order and
 * pointers returned earlier still point at the same bytes. */
Test(intern, growth_keeps_ids_and_pointers)
{
	struct pp_intern t;
	enum { N = 200000 };
	const char *first = NULL;
	char key[32];

	pp_intern_init(&t);
	for (int i = 0; i < N; i++) {
		int n = snprintf(key, sizeof(key), "key-%d", i);

		cr_assert_eq(pp_intern_put(&t, key, n, NULL), i);
		if (i == 0)
			first = pp_intern_get(&t, 0, NULL);
	}
	cr_assert_eq(pp_intern_count(&t), N);
	cr_assert_eq(memcmp(first, "key-0", 5), 0);
	for (int i = 0; i < N; i += 997) {
		int n = snprintf(key, sizeof(key), "key-%d", i);
		size_t len;

		cr_assert_eq(pp_intern_find(&t, key, n), i);
		cr_assert_eq(pp_intern_put(&t, key, n, NULL), i);
		cr_assert_eq(memcmp(pp_intern_get(&t, i, &len), key, n), 0);
		cr_assert_eq(len, (size_t)n);
	}
	cr_assert_eq(pp_intern_count(&t), N, "lookups added nothing");
	pp_intern_free(&t);
}

Test(intern, big_key_gets_its_own_chunk)
{
	struct pp_intern t;
	static char big[200 * 1024];

	memset(big, 'z', sizeof(big));
	pp_intern_init(&t);
	cr_assert_eq(pp_intern_put(&t, "x", 1, NULL), 0);
	cr_assert_eq(pp_intern_put(&t, big, sizeof(big), NULL), 1);
	cr_assert_eq(pp_intern_put(&t, "y", 1, NULL), 2);
	cr_assert_eq(pp_intern_find(&t, big, sizeof(big)), 1);
	cr_assert_eq(memcmp(pp_intern_get(&t, 0, NULL), "x", 1), 0);
	pp_intern_free(&t);
}

Test(intern, hash_spreads_small_keys)
{
	/* Keys differing in one bit must not collide in the low bits used for slots. */
	uint64_t seed = hash_seed();
	uint64_t seen[1024] = { 0 };
	int collisions = 0;

	for (uint64_t i = 0; i < 1024; i++) {
		uint64_t h = hash_bytes(seed, &i, sizeof(i)) & 1023;

		collisions += seen[h]++ > 0;
	}
	/* 1024 balls into 1024 bins: ~377 expected collisions for a good hash. */
	cr_assert_lt(collisions, 450, "%d collisions", collisions);
}

/*
 * Keys come from perf.data files: with a fixed hash, a file could hold keys
 * that all share a slot. Each table draws its own seed, so keys that
 * collide in one table (found by brute force here) do not in another.
 */
Test(intern, colliding_keys_of_one_table_do_not_collide_in_another)
{
	struct pp_intern a, b;
	uint64_t keys[8], nr = 0;
	uint32_t want;

	pp_intern_init(&a);
	pp_intern_init(&b);
	cr_assert_eq(pp_intern_put(&a, "x", 1, NULL), 0);
	cr_assert_eq(pp_intern_put(&b, "x", 1, NULL), 0);
	cr_assert_neq(a.table.seed, b.table.seed, "two tables, one seed");
	/* Eight keys whose hashes agree in the low 12 bits under a's seed. */
	want = (uint32_t)hash_bytes(a.table.seed, &nr, sizeof(nr)) & 4095;
	for (uint64_t k = 0; nr < 8; k++)
		if (((uint32_t)hash_bytes(a.table.seed, &k, sizeof(k)) & 4095) == want)
			keys[nr++] = k;
	for (uint64_t i = 0; i < nr; i++) {
		cr_assert_geq(pp_intern_put(&a, &keys[i], 8, NULL), 0);
		cr_assert_geq(pp_intern_put(&b, &keys[i], 8, NULL), 0);
	}
	/* Under b's seed they spread: at most a couple share the low 12 bits. */
	int same = 0;

	for (uint64_t i = 1; i < nr; i++)
		same += (b.entries[i + 1]->node.hash & 4095) == (b.entries[1]->node.hash & 4095);
	cr_assert_lt(same, 3, "%d of %llu keys still collide", same, (unsigned long long)nr);
	for (uint64_t i = 0; i < nr; i++)
		cr_assert_eq(pp_intern_find(&b, &keys[i], 8), (int64_t)i + 1);
	pp_intern_free(&a);
	pp_intern_free(&b);
}
