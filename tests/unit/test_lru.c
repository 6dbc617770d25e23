// SPDX-License-Identifier: MIT
/* Unit tests for recorder/lru.c: find, eviction order, the dead list. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "recorder/lru.h"

#define N 100

Test(lru, finds_and_evicts_the_least_recently_used)
{
	struct lru_entry *e = calloc(N, sizeof(*e));
	struct lru_table t;

	lru_table_init(&t);
	cr_assert_null(lru_table_find(&t, 1), "empty");
	cr_assert_null(lru_table_oldest(&t));
	for (uint32_t i = 0; i < N; i++) {
		e[i].key = 1000 + i;
		cr_assert_eq(lru_table_insert(&t, &e[i]), 0);
	}
	for (uint32_t i = 0; i < N; i++)
		cr_assert_eq(lru_table_find(&t, 1000 + i), &e[i]);
	cr_assert_null(lru_table_find(&t, 999));
	/* Inserted in order: the first is the oldest, until it is used again. */
	cr_assert_eq(lru_table_oldest(&t), &e[0]);
	lru_table_touch(&t, &e[0]);
	cr_assert_eq(lru_table_oldest(&t), &e[1]);
	lru_table_remove(&t, &e[1]);
	cr_assert_null(lru_table_find(&t, 1001));
	cr_assert_eq(lru_table_oldest(&t), &e[2]);
	for (uint32_t i = 0; i < N; i++)
		if (i != 1)
			lru_table_remove(&t, &e[i]);
	cr_assert_null(lru_table_oldest(&t));
	cr_assert_eq(t.map.nr, 0);
	hash_table_free(&t.map);
	free(e);
}

Test(lru, the_dead_wait_for_a_later_round)
{
	struct lru_entry e[3] = { { .key = 1 }, { .key = 2 }, { .key = 3 } };
	struct lru_table t;

	lru_table_init(&t);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(lru_table_insert(&t, &e[i]), 0);
	lru_table_mark_dead(&t, &e[1], 5);
	lru_table_mark_dead(&t, &e[1], 7);	/* once: the first round counts */
	lru_table_mark_dead(&t, &e[2], 6);
	cr_assert_eq(t.nr_dead, 2);
	cr_assert_null(lru_table_dead_before(&t, 5), "not before its round ends");
	cr_assert_eq(lru_table_dead_before(&t, 6), &e[1]);
	lru_table_remove(&t, &e[1]);
	cr_assert_eq(t.nr_dead, 1);
	cr_assert_null(lru_table_dead_before(&t, 6));
	cr_assert_eq(lru_table_dead_before(&t, 7), &e[2]);
	/* Removing a live entry leaves the dead list alone. */
	lru_table_remove(&t, &e[0]);
	cr_assert_eq(t.nr_dead, 1);
	lru_table_remove(&t, &e[2]);
	cr_assert_eq(t.nr_dead, 0);
	cr_assert_null(lru_table_dead_before(&t, 100));
	hash_table_free(&t.map);
}
