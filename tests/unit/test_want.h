/* SPDX-License-Identifier: MIT */
/*
 * test_want.h - check a table of values at once: EXPECT_ALL(WANT(s.pid, 42),
 * WANT(s.tid, 43), ...) asserts each, in order, and a failure names the
 * expression and both values. For tests whose expectations are lists of
 * fields, so that each list reads as one table. Values compare as uint64_t.
 * Header-only.
 */
#ifndef TEST_WANT_H
#define TEST_WANT_H

#include <criterion/criterion.h>
#include <stddef.h>
#include <stdint.h>

struct want {
	const char *name;
	uint64_t got, want;
	const char *why;	/* NULL, or why x must be v */
};

/* Expression x must be v; the expression's text names it. */
#define WANT(x, v) { #x, (uint64_t)(x), (uint64_t)(v), NULL }
#define WANT_WHY(x, v, why) { #x, (uint64_t)(x), (uint64_t)(v), why }

static inline void expect_all(const struct want *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(w[i].got, w[i].want, "%s is %#llx (%llu), want %#llx (%llu)%s%s",
			     w[i].name, (unsigned long long)w[i].got, (unsigned long long)w[i].got,
			     (unsigned long long)w[i].want, (unsigned long long)w[i].want,
			     w[i].why ? ": " : "", w[i].why ? w[i].why : "");
}

#define EXPECT_ALL(...) \
	expect_all((const struct want[]){ __VA_ARGS__ }, \
		   sizeof((struct want[]){ __VA_ARGS__ }) / sizeof(struct want))

#endif /* TEST_WANT_H */
