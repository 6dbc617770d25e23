// SPDX-License-Identifier: MIT
/*
 * test_buildid_cache.c - the build-id cache the recorder fills: perf's
 * layout, checked copies, atomic and bounded, and no write through a
 * symlink planted in the cache. A temporary directory is the cache.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/buildid_cache.h"
#include "symbolize/buildid.h"
#include "tests/unit/test_fixture.h"

#define FMT(buf, ...) cr_assert_lt(snprintf(buf, sizeof(buf), __VA_ARGS__), (int)sizeof(buf))

static char dir[256];		/* the cache */
static char exe[PATH_MAX], libc_path[PATH_MAX];
static uint8_t exe_id[BUILDID_MAX], libc_id[BUILDID_MAX];
static size_t exe_id_size, libc_id_size;
static char exe_hex[2 * BUILDID_MAX + 1];

static void setup(void)
{
	FMT(dir, "/tmp/bpfrec-bidcache.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	self_exe(exe, sizeof(exe));
	libc_realpath(libc_path);
	cr_assert_eq(buildid_read_file(exe, exe_id, &exe_id_size), 0);
	cr_assert_eq(buildid_read_file(libc_path, libc_id, &libc_id_size), 0);
	buildid_to_hex(exe_id, exe_id_size, exe_hex);
}

static void teardown(void)
{
	char cmd[300];

	FMT(cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(buildid_cache, .init = setup, .fini = teardown);

static struct buildid_cache *new_cache(uint64_t max_file, size_t max_held)
{
	struct buildid_cache_opts o = { .dir = dir, .max_file_bytes = max_file,
					.max_held = max_held };
	struct buildid_cache *c;

	cr_assert_eq(buildid_cache_new(&o, &c), 0);
	return c;
}

static int open_ro(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
	return fd;
}

/* The cache's file for a build-id, through its .build-id link. */
static char *cached_path(const char *hex, const char *leaf)
{
	static char p[PATH_MAX];

	FMT(p, "%s/.build-id/%.2s/%s/%s", dir, hex, hex + 2, leaf);
	return p;
}

static bool same_bytes(const char *a, const char *b)
{
	char cmd[3 * PATH_MAX];

	FMT(cmd, "cmp -s '%s' '%s'", a, b);
	return system(cmd) == 0;
}

Test(buildid_cache, perf_layout_and_one_copy_per_build_id)
{
	struct buildid_cache *c = new_cache(0, 0);
	char link[PATH_MAX], target[PATH_MAX], want[PATH_MAX];
	const struct buildid_cache_stats *st;
	struct stat sb;
	ssize_t n;

	cr_assert_not(buildid_cache_has(c, exe_id, exe_id_size));
	buildid_cache_add(c, exe, exe_id, exe_id_size, open_ro(exe));
	/* Handed over: a caller need not open another file with that build-id. */
	cr_assert(buildid_cache_has(c, exe_id, exe_id_size));
	cr_assert_not(buildid_cache_has(c, libc_id, libc_id_size));
	cr_assert_not(buildid_cache_has(NULL, exe_id, exe_id_size));
	buildid_cache_add(c, "/elsewhere/same-id", exe_id, exe_id_size, open_ro(exe));
	/* Kept until the flush, not copied while recording. */
	cr_assert_neq(access(cached_path(exe_hex, "elf"), F_OK), 0);
	buildid_cache_flush(c);
	st = buildid_cache_stats(c);
	cr_assert_eq(st->copied, 1);
	cr_assert_eq(st->failed + st->too_big + st->present, 0);
	/* .build-id/xx/rest -> ../../<path>/<id>, and .../elf is the file. */
	FMT(link, "%s/.build-id/%.2s/%s", dir, exe_hex, exe_hex + 2);
	n = readlink(link, target, sizeof(target) - 1);
	cr_assert_gt(n, 0);
	target[n] = '\0';
	FMT(want, "../..%s/%s", exe, exe_hex);
	cr_assert_str_eq(target, want);
	cr_assert(same_bytes(cached_path(exe_hex, "elf"), exe));
	cr_assert_eq(stat(cached_path(exe_hex, "elf"), &sb), 0);
	cr_assert_eq(sb.st_mode & 07133, 0, "mode %o: executable or writable by others", sb.st_mode);
	buildid_cache_free(c);

	/* Another recording: already there. */
	c = new_cache(0, 0);
	buildid_cache_add(c, exe, exe_id, exe_id_size, open_ro(exe));
	buildid_cache_flush(c);
	cr_assert_eq(buildid_cache_stats(c)->present, 1);
	cr_assert_eq(buildid_cache_stats(c)->copied, 0);
	buildid_cache_free(c);
}

Test(buildid_cache, a_file_with_another_build_id_is_not_filed)
{
	struct buildid_cache *c = new_cache(0, 0);

	/* The fd is libc, the build-id the test binary's. */
	buildid_cache_add(c, "/opt/app", exe_id, exe_id_size, open_ro(libc_path));
	buildid_cache_flush(c);
	cr_assert_eq(buildid_cache_stats(c)->failed, 1);
	cr_assert_eq(buildid_cache_stats(c)->copied, 0);
	cr_assert_neq(access(cached_path(exe_hex, "elf"), F_OK), 0);
	buildid_cache_free(c);
}

Test(buildid_cache, too_big_is_skipped)
{
	struct buildid_cache *c = new_cache(4096, 0);

	buildid_cache_add(c, exe, exe_id, exe_id_size, open_ro(exe));
	buildid_cache_flush(c);
	cr_assert_eq(buildid_cache_stats(c)->too_big, 1);
	cr_assert_neq(access(cached_path(exe_hex, "elf"), F_OK), 0);
	buildid_cache_free(c);
}

Test(buildid_cache, past_max_held_files_are_copied_at_once)
{
	struct buildid_cache *c = new_cache(0, 1);
	char libc_hex[2 * BUILDID_MAX + 1];

	buildid_to_hex(libc_id, libc_id_size, libc_hex);
	buildid_cache_add(c, exe, exe_id, exe_id_size, open_ro(exe));
	buildid_cache_add(c, libc_path, libc_id, libc_id_size, open_ro(libc_path));
	cr_assert(same_bytes(cached_path(libc_hex, "elf"), libc_path));
	cr_assert_neq(access(cached_path(exe_hex, "elf"), F_OK), 0);
	buildid_cache_flush(c);
	cr_assert(same_bytes(cached_path(exe_hex, "elf"), exe));
	cr_assert_eq(buildid_cache_stats(c)->copied, 2);
	buildid_cache_free(c);
}

Test(buildid_cache, deleted_files_and_odd_paths)
{
	struct buildid_cache *c = new_cache(0, 0);
	char path[PATH_MAX];

	buildid_cache_add(c, "/opt/app (deleted)", exe_id, exe_id_size, open_ro(exe));
	/* No relative paths, no ".." out of the cache. */
	buildid_cache_add(c, "/opt/../../x", libc_id, libc_id_size, open_ro(libc_path));
	buildid_cache_flush(c);
	cr_assert_eq(buildid_cache_stats(c)->copied, 1);
	cr_assert_eq(buildid_cache_stats(c)->failed, 1);
	FMT(path, "%s/opt/app/%s/elf", dir, exe_hex);
	cr_assert(same_bytes(path, exe));
	buildid_cache_free(c);
}

Test(buildid_cache, a_symlink_planted_in_the_cache_is_not_followed)
{
	struct buildid_cache *c = new_cache(0, 0);
	char elsewhere[PATH_MAX], planted[PATH_MAX], cmd[PATH_MAX + 32];
	FILE *f;
	char line[16] = "";

	FMT(elsewhere, "%s.elsewhere", dir);
	cr_assert_eq(mkdir(elsewhere, 0755), 0);
	/* cache/opt -> a directory outside the cache */
	FMT(planted, "%s/opt", dir);
	cr_assert_eq(symlink(elsewhere, planted), 0);
	buildid_cache_add(c, "/opt/app", exe_id, exe_id_size, open_ro(exe));
	buildid_cache_flush(c);
	cr_assert_eq(buildid_cache_stats(c)->failed, 1);
	FMT(cmd, "ls -A '%s' | wc -l", elsewhere);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(line, sizeof(line), f));
	pclose(f);
	FMT(cmd, "rm -rf '%s'", elsewhere);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(atoi(line), 0, "wrote through the planted symlink");
	buildid_cache_free(c);
}
