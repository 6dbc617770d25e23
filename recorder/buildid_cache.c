// SPDX-License-Identifier: MIT
/* buildid_cache.c - fill perf's build-id cache, safely (buildid_cache.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/buildid_cache.h"
#include "symbolize/buildid.h"
#include "symbolize/cache.h"
#include "symbolize/util.h"
#include "tools/lib/array.h"

/* A file waiting for buildid_cache_flush(). */
struct held {
	char *rel;		/* where it goes below the cache dir, e.g. "usr/bin/ls" or "[vdso]" */
	uint8_t id[BUILDID_MAX];
	size_t size;
	int fd;
};

struct buildid_cache {
	char *dir;
	int dir_fd;		/* O_PATH, the cache's top directory */
	uint64_t max_file;
	size_t max_held;
	FILE *log;
	void (*on_filed)(void *ctx, const uint8_t *build_id, size_t size);
	void *on_filed_ctx;
	struct cache seen;	/* build-ids handed over already */
	struct held *held;
	size_t nr_held, cap_held;
	struct buildid_cache_stats st;
};

static void say(const struct buildid_cache *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(const struct buildid_cache *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->log)
		return;
	va_start(ap, fmt);
	fprintf(c->log, "bpfrec record: build-id cache: ");
	vfprintf(c->log, fmt, ap);
	fputc('\n', c->log);
	va_end(ap);
}

int buildid_cache_new(const struct buildid_cache_opts *opts, struct buildid_cache **out)
{
	static const struct buildid_cache_opts defaults;
	const char *home = getenv("HOME");
	struct buildid_cache *c;
	int err;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	if (!opts->dir && (!home || !*home))
		return -ENOENT;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->dir_fd = -1;
	c->dir = opts->dir ? strdup(opts->dir) : str_join(home, "/.debug", NULL);
	c->max_file = opts->max_file_bytes ? opts->max_file_bytes : BUILDID_CACHE_MAX_FILE;
	c->max_held = opts->max_held ? opts->max_held : BUILDID_CACHE_MAX_HELD;
	c->log = opts->log;
	c->on_filed = opts->on_filed;
	c->on_filed_ctx = opts->on_filed_ctx;
	if (!c->dir) {
		err = -ENOMEM;
		goto fail;
	}
	/* The top directory may be a symlink (the user's choice, as for perf); nothing below it. */
	if (mkdir(c->dir, 0755) && errno != EEXIST) {
		err = -errno;
		goto fail;
	}
	c->dir_fd = open(c->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c->dir_fd < 0) {
		err = -errno;
		goto fail;
	}
	*out = c;
	return 0;
fail:
	buildid_cache_free(c);
	return err;
}

/*
 * Where a recorded path goes below the cache dir: without its leading '/'
 * and " (deleted)". NULL for what cannot be filed there: no absolute path,
 * or empty, "." or ".." components (the kernel prints none; refusing them
 * keeps every write below the cache dir).
 */
static char *rel_dir(const char *path)
{
	static const char deleted[] = " (deleted)";
	size_t len = strlen(path), dl = sizeof(deleted) - 1;
	const char *p;
	char *rel;

	if (!strcmp(path, "[vdso]"))
		return strdup(path);
	if (path[0] != '/')
		return NULL;
	if (len > dl && !strcmp(path + len - dl, deleted))
		len -= dl;
	rel = strndup(path + 1, len - 1);
	if (!rel)
		return NULL;
	for (p = rel;;) {
		size_t n = strcspn(p, "/");

		if (!n || n > NAME_MAX || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.')) {
			free(rel);
			return NULL;
		}
		if (!p[n])
			break;
		p += n + 1;
	}
	return rel;
}

/*
 * Enter rel (relative, components checked by rel_dir() or constant) below
 * base, creating what is missing; no component may be a symlink. An O_PATH
 * fd of the last directory, or -errno.
 */
static int enter_dirs(int base, const char *rel)
{
	char name[NAME_MAX + 1];
	int cur = base, next, err = 0;

	while (*rel) {
		size_t n = strcspn(rel, "/");

		if (!n || n > NAME_MAX) {
			err = -EINVAL;
			break;
		}
		memcpy(name, rel, n);
		name[n] = '\0';
		rel += n + (rel[n] == '/');
		if (mkdirat(cur, name, 0755) && errno != EEXIST) {
			err = -errno;
			break;
		}
		next = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			err = -errno;
			break;
		}
		if (cur != base)
			close(cur);
		cur = next;
	}
	if (!err && cur == base)
		err = -EINVAL;
	if (err) {
		if (cur != base)
			close(cur);
		return err;
	}
	return cur;
}

/*
 * Copy len bytes of from into dir_fd/leaf: a temporary name, then rename.
 * sendfile copies in the kernel, from its offset argument (from's own
 * offset is left alone).
 */
static int copy_into(int from, uint64_t len, int dir_fd, const char *leaf, mode_t mode)
{
	char tmp[NAME_MAX + 1];
	off_t off = 0;
	int to, err = 0;

	snprintf(tmp, sizeof(tmp), ".%s.%d.tmp", leaf, (int)getpid());
	unlinkat(dir_fd, tmp, 0);	/* a leftover of a run that was killed */
	to = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (to < 0)
		return -errno;
	while ((uint64_t)off < len) {
		size_t want = len - (uint64_t)off < (1u << 30) ? (size_t)(len - (uint64_t)off) : 1u << 30;
		ssize_t n = sendfile(to, from, &off, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n ? -errno : -EIO;	/* the file shrank: not the one we checked */
			break;
		}
	}
	if (!err && fchmod(to, mode))
		err = -errno;
	if (close(to) && !err)
		err = -errno;
	if (!err && renameat(dir_fd, tmp, dir_fd, leaf))
		err = -errno;
	if (err)
		unlinkat(dir_fd, tmp, 0);
	return err;
}

/* .build-id/xx/rest -> ../../<rel>/<hex>, replacing a link that led nowhere. */
static int link_build_id(struct buildid_cache *c, const char *hex, const char *rel)
{
	char sub[16], tmp[NAME_MAX + 1];
	char *target;
	int dfd, err = 0;

	snprintf(sub, sizeof(sub), ".build-id/%.2s", hex);
	dfd = enter_dirs(c->dir_fd, sub);
	if (dfd < 0)
		return dfd;
	target = str_join("../../", rel, "/", hex, NULL);
	snprintf(tmp, sizeof(tmp), ".%s.%d.tmp", hex + 2, (int)getpid());
	unlinkat(dfd, tmp, 0);
	if (!target)
		err = -ENOMEM;
	else if (symlinkat(target, dfd, tmp) || renameat(dfd, tmp, dfd, hex + 2))
		err = -errno;
	if (err)
		unlinkat(dfd, tmp, 0);
	free(target);
	close(dfd);
	return err;
}

/* Is the build-id there already, its link leading to a regular file? */
static bool cached(const struct buildid_cache *c, const char *hex, const char *leaf)
{
	char path[2 * BUILDID_MAX + 32];
	struct stat st;

	snprintf(path, sizeof(path), ".build-id/%.2s/%s/%s", hex, hex + 2, leaf);
	return !fstatat(c->dir_fd, path, &st, 0) && S_ISREG(st.st_mode);
}

/*
 * Copy fd into the cache as rel under id (its fd is closed by the caller).
 * A file already cached under id is left as it is, unless replace: then
 * the new copy takes its place (the rename is atomic: a reader sees the
 * old file or the new one, whole). 0 or -errno, counted and told.
 */
static int copy_one(struct buildid_cache *c, const char *rel, const uint8_t *want, size_t want_size,
		    int fd, bool replace)
{
	const char *leaf = strcmp(rel, "[vdso]") ? "elf" : "vdso";
	char hex[2 * BUILDID_MAX + 1];
	uint8_t id[BUILDID_MAX];
	size_t size = 0;
	struct stat st;
	bool there;
	char *dir;
	int dfd, err;

	buildid_to_hex(want, want_size, hex);
	there = cached(c, hex, leaf);
	if (there && !replace) {
		c->st.present++;
		return 0;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		c->st.failed++;
		say(c, "/%s: not a regular file", rel);
		return -EINVAL;
	}
	if ((uint64_t)st.st_size > c->max_file) {
		c->st.too_big++;
		say(c, "/%s: skipped, %llu MiB is over the limit of %llu MiB", rel,
		    (unsigned long long)st.st_size >> 20, (unsigned long long)c->max_file >> 20);
		return -EFBIG;
	}
	/* Filed under its build-id: it must carry that one. */
	if (buildid_read_fd(fd, id, &size) || size != want_size || memcmp(id, want, size)) {
		c->st.failed++;
		say(c, "/%s: its build-id is no longer %s", rel, hex);
		return -EINVAL;
	}
	dir = str_join(rel, "/", hex, NULL);
	dfd = dir ? enter_dirs(c->dir_fd, dir) : -ENOMEM;
	free(dir);
	err = dfd < 0 ? dfd : 0;
	if (!err) {
		err = copy_into(fd, (uint64_t)st.st_size, dfd, leaf, (st.st_mode & 0644) | 0400);
		close(dfd);
	}
	if (!err)
		err = link_build_id(c, hex, rel);
	if (err) {
		c->st.failed++;
		say(c, "/%s: cannot copy it into %s: %s", rel, c->dir, strerror(-err));
		return err;
	}
	if (there)
		c->st.replaced++;
	else
		c->st.copied++;
	if (c->on_filed)
		c->on_filed(c->on_filed_ctx, want, want_size);
	return 0;
}

/* Remember id as handed over: false when it was already (or cannot be: counted). */
static bool first_time(struct buildid_cache *c, const uint8_t *id, size_t size)
{
	if (cache_get(&c->seen, id, size))
		return false;
	if (!cache_add(&c->seen, id, size)) {
		c->st.failed++;
		return false;
	}
	return true;
}

void buildid_cache_add(struct buildid_cache *c, const char *path, const uint8_t *id, size_t size,
		       int fd)
{
	struct held h = { .size = size, .fd = fd };

	if (!c || !size || size > BUILDID_MAX || !first_time(c, id, size)) {
		close(fd);
		return;
	}
	memcpy(h.id, id, size);
	h.rel = rel_dir(path);
	if (!h.rel) {
		c->st.failed++;
		say(c, "%s: not a path it can be filed under", path);
		close(fd);
		return;
	}
	/* Without memory for one more, the file is copied now, as when too many are held. */
	if (c->nr_held < c->max_held)
		(void)ARRAY_RESERVE(c->held, c->cap_held, c->nr_held + 1, 64);
	if (c->nr_held < c->cap_held && c->nr_held < c->max_held) {
		c->held[c->nr_held++] = h;
		return;
	}
	/* Too many kept open: copy this one now. */
	copy_one(c, h.rel, h.id, h.size, fd, false);
	close(fd);
	free(h.rel);
}

int buildid_cache_put(struct buildid_cache *c, const char *path, const uint8_t *id, size_t size,
		      int fd)
{
	char *rel;
	int err;

	if (!c || !size || size > BUILDID_MAX) {
		close(fd);
		return -EINVAL;
	}
	rel = rel_dir(path);
	if (!rel) {
		c->st.failed++;
		say(c, "%s: not a path it can be filed under", path);
		close(fd);
		return -EINVAL;
	}
	/* A later buildid_cache_add() of the same file finds it handed over. */
	if (!cache_get(&c->seen, id, size))
		(void)cache_add(&c->seen, id, size);
	err = copy_one(c, rel, id, size, fd, true);
	close(fd);
	free(rel);
	return err;
}

bool buildid_cache_has(const struct buildid_cache *c, const uint8_t *id, size_t size)
{
	return c && size && size <= BUILDID_MAX && cache_get(&c->seen, id, size);
}

void buildid_cache_flush(struct buildid_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr_held; i++) {
		copy_one(c, c->held[i].rel, c->held[i].id, c->held[i].size, c->held[i].fd,
			 false);
		close(c->held[i].fd);
		free(c->held[i].rel);
	}
	c->nr_held = 0;
}

const struct buildid_cache_stats *buildid_cache_stats(const struct buildid_cache *c)
{
	return &c->st;
}

const char *buildid_cache_dir(const struct buildid_cache *c)
{
	return c->dir;
}

void buildid_cache_free(struct buildid_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr_held; i++) {
		close(c->held[i].fd);
		free(c->held[i].rel);
	}
	free(c->held);
	cache_clear(&c->seen, NULL);
	if (c->dir_fd >= 0)
		close(c->dir_fd);
	free(c->dir);
	free(c);
}
