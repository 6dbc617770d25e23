// SPDX-License-Identifier: MIT
/*
 * test_alloc_inproc.c - the fast path's in-process state
 * (recorder/preload/alloc_inproc.h): the set of sampled addresses and the
 * per-thread countdown.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "recorder/preload/alloc_inproc.h"

static struct alloc_set *new_set(void)
{
	struct alloc_set *s = calloc(1, sizeof(*s));

	cr_assert_not_null(s);
	return s;
}

Test(alloc_inproc, set_takes_what_it_holds_once)
{
	struct alloc_set *s = new_set();

	cr_assert_not(alloc_set_take(s, 0x1000), "an empty set holds nothing");
	cr_assert_eq(alloc_set_add(s, 0x1000), 0);
	cr_assert_eq(alloc_set_add(s, 0x2010), 0);
	cr_assert_not(alloc_set_take(s, 0x3000));
	cr_assert(alloc_set_take(s, 0x2010));
	cr_assert_not(alloc_set_take(s, 0x2010), "taken twice");
	cr_assert(alloc_set_take(s, 0x1000));
	cr_assert_eq(s->used, 0);
	free(s);
}

/* Many addresses in and out: every one is found, the slots of removed ones are reused. */
Test(alloc_inproc, set_holds_many_and_reuses_removed_slots)
{
	struct alloc_set *s = new_set();
	const uint64_t n = ALLOC_SET_SLOTS / 2;

	for (int round = 0; round < 4; round++) {
		for (uint64_t i = 0; i < n; i++)
			cr_assert_eq(alloc_set_add(s, 0x10000 + (i + round * n) * 16), 0,
				     "round %d: %llu refused", round, (unsigned long long)i);
		for (uint64_t i = 0; i < n; i++)
			cr_assert(alloc_set_take(s, 0x10000 + (i + round * n) * 16));
		cr_assert_eq(s->used, 0);
	}
	cr_assert_eq(s->saturated, 0);
	free(s);
}

/* Past its probe: saturated, and from then on every free is reported. */
Test(alloc_inproc, full_set_saturates_and_reports_every_free)
{
	struct alloc_set *s = new_set();
	uint64_t i;
	int err = 0;

	for (i = 0; i < ALLOC_SET_SLOTS + 1 && !err; i++)
		err = alloc_set_add(s, 0x10000 + i * 16);
	cr_assert_eq(err, -ENOSPC);
	cr_assert_eq(s->saturated, 1);
	cr_assert(alloc_set_take(s, 0x99), "a saturated set cannot say no");
	free(s);
}

Test(alloc_inproc, countdown_at_rate_one_samples_every_nonempty_block)
{
	struct alloc_countdown c = { 0 };

	cr_assert(alloc_countdown_take(&c, 1, 1, 42));
	cr_assert(alloc_countdown_take(&c, 4096, 1, 42));
	cr_assert_not(alloc_countdown_take(&c, 0, 1, 42));
}

/*
 * Blocks of S bytes at interval R: sampled with probability
 * 1 - exp(-S / R) (the uprobe path's), within 5 standard errors.
 */
Test(alloc_inproc, countdown_samples_with_the_poisson_probability)
{
	static const uint64_t sizes[] = { 4096, 65536, 524288, 2 << 20 };
	const uint64_t interval = 512 * 1024, n = 200000;

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct alloc_countdown c = { 0 };
		double p = 1 - exp(-(double)sizes[k] / interval), got, se;
		uint64_t hits = 0;

		for (uint64_t i = 0; i < n; i++)
			hits += alloc_countdown_take(&c, sizes[k], interval, 12345 + k);
		got = (double)hits / n;
		se = sqrt(p * (1 - p) / n);
		cr_assert(fabs(got - p) <= 5 * se + 1e-4, "size %llu: sampled %.5f, want %.5f",
			  (unsigned long long)sizes[k], got, p);
	}
}

Test(alloc_inproc, countdown_seeds_differ)
{
	struct alloc_countdown a = { 0 }, b = { 0 };
	int same = 0;

	for (int i = 0; i < 1000; i++)
		same += alloc_countdown_take(&a, 4096, 65536, 1) ==
			alloc_countdown_take(&b, 4096, 65536, 2);
	cr_assert_lt(same, 1000, "two threads' seeds drew the same samples");
}
