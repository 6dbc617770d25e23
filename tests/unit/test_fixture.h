/* SPDX-License-Identifier: MIT */
/*
 * test_fixture.h - the path of a built fixture (tests/fixtures/), from the
 * FIXTURES directory tests/run.sh sets. Header-only.
 */
#ifndef TEST_FIXTURE_H
#define TEST_FIXTURE_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* FIXTURES/name, which must exist; the next call reuses the buffer. */
static inline const char *fixture(const char *name)
{
	static char path[4096];
	const char *dir = getenv("FIXTURES");

	cr_assert(dir, "FIXTURES is not set: run through tests/run.sh");
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	cr_assert(access(path, R_OK) == 0, "missing fixture %s: run 'make fixtures'", path);
	return path;
}

#endif /* TEST_FIXTURE_H */
