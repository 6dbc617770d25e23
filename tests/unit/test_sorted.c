// SPDX-License-Identifier: MIT
/*
 * test_sorted.c - the one binary search (tools/lib/sorted.h): empty arrays,
 * keys below, above and between the elements, runs of equal keys, the
 * extremes of uint64_t, and every answer checked against a linear scan.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "tools/lib/sorted.h"

struct item {
	uint64_t key;
	int tag;
};

/* The answer by definition: how many leading elements have key <= k. */
static size_t linear_count_le(const struct item *a, size_t nr, uint64_t k)
{
	size_t n = 0;

	while (n < nr && a[n].key <= k)
		n++;
	return n;
}

Test(sorted, empty_array_has_nothing_below_any_key)
{
	const struct item *none = NULL;

	cr_assert_eq(SORTED_COUNT_LE(none, 0, key, 0), 0);
	cr_assert_eq(SORTED_COUNT_LE(none, 0, key, UINT64_MAX), 0);
	cr_assert_eq(SORTED_PARTITION(0, i, none[i].key < 5), 0);
}

Test(sorted, one_element)
{
	const struct item a[] = { { 10, 0 } };

	cr_assert_eq(SORTED_COUNT_LE(a, 1, key, 9), 0);
	cr_assert_eq(SORTED_COUNT_LE(a, 1, key, 10), 1);
	cr_assert_eq(SORTED_COUNT_LE(a, 1, key, 11), 1);
}

Test(sorted, last_le_lands_on_the_last_of_equal_keys)
{
	const struct item a[] = { { 1, 0 }, { 5, 1 }, { 5, 2 }, { 5, 3 }, { 9, 4 } };

	/* Last <= 5 is the third 5; first >= 5 is the first 5. */
	cr_assert_eq(SORTED_COUNT_LE(a, 5, key, 5) - 1, 3);
	cr_assert_eq(a[SORTED_COUNT_LE(a, 5, key, 5) - 1].tag, 3);
	cr_assert_eq(SORTED_PARTITION(5, i, a[i].key < 5), 1);
	cr_assert_eq(SORTED_COUNT_LE(a, 5, key, 4), 1);
	cr_assert_eq(SORTED_COUNT_LE(a, 5, key, 0), 0);
	cr_assert_eq(SORTED_COUNT_LE(a, 5, key, 100), 5);
}

Test(sorted, extremes_of_the_key_range)
{
	const struct item a[] = { { 0, 0 }, { 1, 1 }, { UINT64_MAX - 1, 2 }, { UINT64_MAX, 3 } };

	cr_assert_eq(SORTED_COUNT_LE(a, 4, key, 0), 1);
	cr_assert_eq(SORTED_COUNT_LE(a, 4, key, UINT64_MAX - 1), 3);
	cr_assert_eq(SORTED_COUNT_LE(a, 4, key, UINT64_MAX), 4);
	cr_assert_eq(SORTED_PARTITION(4, i, a[i].key < UINT64_MAX), 3);
}

Test(sorted, agrees_with_a_linear_scan_for_every_size_and_key)
{
	struct item a[40];

	/* Keys 0, 0, 2, 2, 4, ...: duplicates, and odd keys that fall between. */
	for (size_t i = 0; i < 40; i++)
		a[i] = (struct item){ (i / 2) * 2, (int)i };
	for (size_t nr = 0; nr <= 40; nr++)
		for (uint64_t k = 0; k < 44; k++)
			cr_assert_eq(SORTED_COUNT_LE(a, nr, key, k), linear_count_le(a, nr, k),
				     "nr %zu key %llu", nr, (unsigned long long)k);
}

Test(sorted, lower_bound_on_strings)
{
	const char *names[] = { "ext4", "nf_tables", "nf_tables", "xfs" };

	cr_assert_eq(SORTED_PARTITION(4, i, strcmp(names[i], "nf_tables") < 0), 1);
	cr_assert_eq(SORTED_PARTITION(4, i, strcmp(names[i], "a") < 0), 0);
	cr_assert_eq(SORTED_PARTITION(4, i, strcmp(names[i], "zz") < 0), 4);
	cr_assert_eq(SORTED_PARTITION(4, i, strcmp(names[i], "btrfs") < 0), 0);
	cr_assert_eq(SORTED_PARTITION(4, i, strcmp(names[i], "f") < 0), 1);
}

Test(sorted, the_condition_sees_each_probe_once_per_step)
{
	const struct item a[] = { { 1, 0 }, { 2, 1 }, { 3, 2 }, { 4, 3 }, { 5, 4 }, { 6, 5 },
				  { 7, 6 }, { 8, 7 } };
	int probes = 0;

	/* log2(8) + 1 steps at most: a search, not a scan. */
	cr_assert_eq(SORTED_PARTITION(8, i, (probes++, a[i].key <= 6)), 6);
	cr_assert_leq(probes, 4);
}
