// SPDX-License-Identifier: MIT
/*
 * Unit tests for tools/agent/spool.c: order across restarts (and a kill -9),
 * eviction of the oldest, refusal of a body too big, corrupt entries
 * skipped, stale temporaries removed, a directory not ours refused, and a
 * full disk (a tiny tmpfs in a private mount namespace; skipped where it
 * cannot be mounted).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/agent/spool.h"

#define HDR 24

static char top[256], dir[300];

static void setup(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(top, sizeof(top), "%s/agent-spool-XXXXXX", t && *t ? t : "/tmp");
	cr_assert_not_null(mkdtemp(top));
	snprintf(dir, sizeof(dir), "%s/spool", top);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(p);
}

static void teardown(void)
{
	umount2(top, MNT_DETACH);
	nftw(top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(spool, .init = setup, .fini = teardown);

/* Body i: i+1 copies of the byte 'a' + i % 26, of length 100 * (i + 1). */
static void body_of(int i, char *buf, size_t *len)
{
	*len = 100 * (size_t)(i + 1);
	memset(buf, 'a' + i % 26, *len);
}

static void put(struct agent_spool *sp, int i)
{
	char buf[4096];
	size_t len;

	body_of(i, buf, &len);
	cr_assert_eq(agent_spool_put(sp, i % 2 ? AGENT_API_PARCA : AGENT_API_PYROSCOPE, buf, len), 0);
}

/* The next peek is body i; then pop it. */
static void expect_next(struct agent_spool *sp, int i)
{
	char want[4096];
	size_t wlen, len;
	enum agent_api api;
	void *body;

	body_of(i, want, &wlen);
	cr_assert_eq(agent_spool_peek(sp, &api, &body, &len), 0, "entry %d missing", i);
	cr_assert_eq(len, wlen, "entry %d: %zu bytes, expected %zu", i, len, wlen);
	cr_assert(!memcmp(body, want, len), "entry %d: other bytes", i);
	cr_assert_eq(api, i % 2 ? AGENT_API_PARCA : AGENT_API_PYROSCOPE);
	free(body);
	cr_assert_eq(agent_spool_pop(sp), 0);
}

/* Files in the spool named ".tmp-*" (what == ".tmp-") or "*.push" (what == ".push"). */
static int count_files(const char *what)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	cr_assert_not_null(d);
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);

		if (!strcmp(what, ".tmp-"))
			n += !strncmp(de->d_name, ".tmp-", 5);
		else
			n += l > 5 && !strcmp(de->d_name + l - 5, ".push");
	}
	closedir(d);
	return n;
}

Test(spool, order_across_restart)
{
	struct agent_spool *sp;
	struct agent_spool_stats st;
	struct stat s;
	enum agent_api api;
	void *body;
	size_t len;

	cr_assert_eq(agent_spool_open(dir, 1 << 20, &sp), 0);
	cr_assert_eq(stat(dir, &s), 0);
	cr_assert_eq(s.st_mode & 0777, 0700, "mode %o", s.st_mode & 0777);
	cr_assert_eq(agent_spool_peek(sp, &api, &body, &len), -ENOENT);
	cr_assert_eq(agent_spool_pop(sp), -ENOENT);
	for (int i = 0; i < 20; i++)	/* past 16: names must sort by number, not text */
		put(sp, i);
	agent_spool_stats(sp, &st);
	cr_assert_eq(st.entries, 20);
	cr_assert_eq(st.stored, 20);
	cr_assert_eq(st.bytes, 20 * HDR + 100 * 210);
	expect_next(sp, 0);
	agent_spool_close(sp);

	/* A restart finds the rest, oldest first, and appends after them. */
	cr_assert_eq(agent_spool_open(dir, 1 << 20, &sp), 0);
	put(sp, 20);
	agent_spool_stats(sp, &st);
	cr_assert_eq(st.entries, 20);
	for (int i = 1; i <= 20; i++) {
		/* Peeking twice gives the same entry. */
		cr_assert_eq(agent_spool_peek(sp, &api, &body, &len), 0);
		free(body);
		expect_next(sp, i);
	}
	cr_assert_eq(agent_spool_peek(sp, &api, &body, &len), -ENOENT);
	agent_spool_stats(sp, &st);
	cr_assert_eq(st.entries, 0);
	cr_assert_eq(st.bytes, 0);
	cr_assert_eq(st.replayed, 20);
	cr_assert_eq(count_files(".push"), 0);
	agent_spool_close(sp);
}

Test(spool, survives_kill9)
{
	struct agent_spool *sp;
	struct agent_spool_stats st;
	pid_t pid = fork();
	int status;

	cr_assert_geq(pid, 0);
	if (!pid) {
		if (agent_spool_open(dir, 1 << 20, &sp))
			_exit(1);
		for (int i = 0; i < 3; i++) {
			char buf[4096];
			size_t len;

			body_of(i, buf, &len);
			if (agent_spool_put(sp, i % 2 ? AGENT_API_PARCA : AGENT_API_PYROSCOPE, buf, len))
				_exit(2);
		}
		raise(SIGKILL);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child status %#x", status);
	/* Its lock died with it. */
	cr_assert_eq(agent_spool_open(dir, 1 << 20, &sp), 0);
	agent_spool_stats(sp, &st);
	cr_assert_eq(st.entries, 3);
	for (int i = 0; i < 3; i++)
		expect_next(sp, i);
	agent_spool_close(sp);
}

Test(spool, evicts_oldest_and_refuses_too_big)
{
	struct agent_spool *sp;
	struct agent_spool_stats st;
	static char big[8192];

	/* Room for bodies 5, 6 and 7 (600 + 700 + 800 bytes and headers), not for 4 too. */
	cr_assert_eq(agent_spool_open(dir, 2100 + 3 * HDR, &sp), 0);
	for (int i = 0; i < 8; i++)
		put(sp, i);
	agent_spool_stats(sp, &st);
	cr_assert_eq(st.entries, 3);
	cr_assert_eq(st.evicted, 5);
	cr_assert_leq(st.bytes, 2100 + 3 * HDR);
	cr_assert_eq(agent_spool_put(sp, AGENT_API_PARCA, big, sizeof(big)), -EFBIG);
	agent_spool_stats(sp, &st);
	cr_assert_eq(st.too_big, 1);
	cr_assert_eq(st.entries, 3, "a refused body evicts nothing");
	for (int i = 5; i < 8; i++)
		expect_next(sp, i);
	cr_assert_eq(count_files(".push"), 0);
	agent_spool_close(sp);
}

/* The file of the n-th (0-based) entry. */
static void entry_path(char *path, size_t size, int n)
{
	snprintf(path, size, "%s/%016x.push", dir, n);
}

/* A spool of 1 MiB holding entries 0..n-1 (put()). */
static struct agent_spool *spool_of(int n)
{
	struct agent_spool *sp;

	cr_assert_eq(agent_spool_open(dir, 1 << 20, &sp), 0);
	for (int i = 0; i < n; i++)
		put(sp, i);
	return sp;
}

/* Overwrite len bytes at off of the n-th (0-based) entry file, or truncate it to off. */
static void damage(int n, off_t off, const void *bytes, size_t len, bool truncate_it)
{
	char path[400];
	int fd;

	entry_path(path, sizeof(path), n);
	fd = open(path, O_WRONLY);
	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	if (truncate_it)
		cr_assert_eq(ftruncate(fd, off), 0);
	else
		cr_assert_eq(pwrite(fd, bytes, len, off), (ssize_t)len);
	close(fd);
}

Test(spool, corrupt_entries_skipped)
{
	struct agent_spool *sp = spool_of(6);
	struct agent_spool_stats st;
	char path[400];

	agent_spool_close(sp);
	damage(0, HDR + 50, "X", 1, false);	/* a body byte: the crc catches it */
	damage(1, 0, "XXXX", 4, false);		/* the magic */
	damage(3, HDR + 10, NULL, 0, true);	/* cut short */
	damage(4, 8, "\x01", 1, false);		/* the length */
	entry_path(path, sizeof(path), 5);
	cr_assert_eq(unlink(path), 0);		/* gone after the scan: below */

	cr_assert_eq(agent_spool_open(dir, 1 << 20, &sp), 0);
	expect_next(sp, 2);
	cr_assert_eq(unlink(path), -1);		/* (already gone: nothing to do) */
	enum agent_api api;
	void *body;
	size_t len;

	cr_assert_eq(agent_spool_peek(sp, &api, &body, &len), -ENOENT);
	agent_spool_stats(sp, &st);
	cr_assert_eq(st.corrupt, 4);
	cr_assert_eq(st.entries, 0);
	cr_assert_eq(count_files(".push"), 0, "corrupt entries are removed");
	agent_spool_close(sp);
}

Test(spool, entry_removed_behind_its_back)
{
	struct agent_spool *sp = spool_of(3);
	struct agent_spool_stats st;
	char path[400];

	entry_path(path, sizeof(path), 1);
	cr_assert_eq(unlink(path), 0);
	expect_next(sp, 0);
	expect_next(sp, 2);
	agent_spool_stats(sp, &st);
	cr_assert_eq(st.corrupt, 0, "a vanished entry is not corrupt");
	agent_spool_close(sp);
}

Test(spool, stale_temporaries_removed_others_kept)
{
	struct agent_spool *sp;
	char path[400];
	int fd;

	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/.tmp-0000000000000009", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "half", 4), 4);
	close(fd);
	snprintf(path, sizeof(path), "%s/README", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(agent_spool_open(dir, 1 << 20, &sp), 0);
	cr_assert_eq(count_files(".tmp-"), 0);
	cr_assert_eq(access(path, F_OK), 0, "a file not ours is left alone");
	put(sp, 0);
	expect_next(sp, 0);
	agent_spool_close(sp);
}

Test(spool, directory_checks)
{
	struct agent_spool *sp, *sp2;
	char link[400];

	/* A second agent on the same spool. */
	cr_assert_eq(agent_spool_open(dir, 1 << 20, &sp), 0);
	cr_assert_eq(agent_spool_open(dir, 1 << 20, &sp2), -EBUSY);
	agent_spool_close(sp);

	/* A symlink to it. */
	snprintf(link, sizeof(link), "%s/link", top);
	cr_assert_eq(symlink(dir, link), 0);
	cr_assert_eq(agent_spool_open(link, 1 << 20, &sp), -ELOOP);

	/* Writable by others. */
	cr_assert_eq(chmod(dir, 0777), 0);
	cr_assert_eq(agent_spool_open(dir, 1 << 20, &sp), -EPERM);
	cr_assert_eq(chmod(dir, 0700), 0);

	/* Owned by another user (as root only: others cannot chown). */
	if (geteuid() == 0) {
		cr_assert_eq(chown(dir, 12345, 12345), 0);
		cr_assert_eq(agent_spool_open(dir, 1 << 20, &sp), -EPERM);
		cr_assert_eq(chown(dir, 0, 0), 0);
	}
	cr_assert_eq(agent_spool_open(dir, 0, &sp), -EINVAL);
	snprintf(link, sizeof(link), "%s/no/such", top);
	cr_assert_eq(agent_spool_open(link, 1 << 20, &sp), -ENOENT);
}

Test(spool, disk_full)
{
	struct agent_spool *sp;
	struct agent_spool_stats st;
	static char body[40 * 1024];

	/* A 64 KiB tmpfs on top, in this test's own mount namespace. */
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", top, "tmpfs", 0, "size=64k,mode=0700"))
		cr_skip_test("cannot mount a small tmpfs here (%s)", strerror(errno));
	cr_assert_eq(agent_spool_open(dir, 1 << 20, &sp), 0);
	memset(body, 'z', sizeof(body));
	cr_assert_eq(agent_spool_put(sp, AGENT_API_PYROSCOPE, body, sizeof(body)), 0);
	cr_assert_eq(agent_spool_put(sp, AGENT_API_PYROSCOPE, body, sizeof(body)), -ENOSPC);
	agent_spool_stats(sp, &st);
	cr_assert_eq(st.full, 1);
	cr_assert_eq(st.entries, 1);
	cr_assert_eq(count_files(".tmp-"), 0, "a failed put leaves nothing behind");
	cr_assert_eq(count_files(".push"), 1);
	{
		enum agent_api api;
		void *b;
		size_t len;

		cr_assert_eq(agent_spool_peek(sp, &api, &b, &len), 0);
		cr_assert_eq(len, sizeof(body));
		cr_assert(!memcmp(b, body, len));
		free(b);
	}
	agent_spool_close(sp);
}
