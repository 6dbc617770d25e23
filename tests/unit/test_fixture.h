/* SPDX-License-Identifier: MIT */
/*
 * test_fixture.h - the path of a built fixture (tests/fixtures/), from the
 * FIXTURES directory tests/run.sh sets, and of the two real ELF files every
 * test has at hand: its own binary and the C library. Header-only.
 */
#ifndef TEST_FIXTURE_H
#define TEST_FIXTURE_H

#include <criterion/criterion.h>
#include <dlfcn.h>
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

/* The running test binary's path into path (size bytes): a real file with a build-id. */
static inline void self_exe(char *path, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", path, size - 1);

	cr_assert_gt(n, 0);
	path[n] = '\0';
}

/* The real path of the C library this test runs with into path (PATH_MAX bytes). */
static inline void libc_realpath(char *path)
{
	Dl_info di;

	cr_assert(dladdr((void *)&getpid, &di) && di.dli_fname);
	cr_assert_not_null(realpath(di.dli_fname, path));
}

#endif /* TEST_FIXTURE_H */
