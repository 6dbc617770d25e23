// SPDX-License-Identifier: MIT
/*
 * spool.c - the push spool on disk (see spool.h).
 *
 * The index in memory is the entries' (sequence, size) in age order, read
 * from the directory once at open and kept in step with every put, pop and
 * eviction: no directory scan per operation. Every file operation goes
 * through the directory's fd (openat, renameat, unlinkat), so a directory
 * renamed or replaced under us after the checks cannot redirect them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>

#include "spool.h"
#include "tools/lib/array.h"

#define SPOOL_MAGIC	"BPSP"
#define SPOOL_VERSION	1
#define SPOOL_HDR_LEN	24
#define SPOOL_SUFFIX	".push"
#define SPOOL_TMP	".tmp-"
/* "%016" PRIx64 ".push" */
#define NAME_LEN	(16 + sizeof(SPOOL_SUFFIX) - 1)

struct spool_entry {
	uint64_t seq;
	uint64_t size;		/* the whole file */
};

struct agent_spool {
	int dfd;
	uint64_t max_bytes;
	struct spool_entry *ents;	/* oldest first */
	size_t nr, cap;
	uint64_t bytes;		/* the sum of ents[].size */
	uint64_t next_seq;
	bool peeked;
	uint64_t peeked_seq;
	struct agent_spool_stats st;	/* entries and bytes filled in by agent_spool_stats() */
};

static void entry_name(char *buf, size_t cap, const char *prefix, uint64_t seq, const char *suffix)
{
	snprintf(buf, cap, "%s%016" PRIx64 "%s", prefix, seq, suffix);
}

/* NNNNNNNNNNNNNNNN.push -> seq; false for any other name. */
static bool parse_name(const char *name, uint64_t *seq)
{
	uint64_t v = 0;

	if (strlen(name) != NAME_LEN || strcmp(name + 16, SPOOL_SUFFIX))
		return false;
	for (int i = 0; i < 16; i++) {
		char c = name[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

		if (d < 0)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	*seq = v;
	return true;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static int push_entry(struct agent_spool *sp, uint64_t seq, uint64_t size)
{
	if (ARRAY_RESERVE(sp->ents, sp->cap, sp->nr + 1, 64))
		return -ENOMEM;
	sp->ents[sp->nr++] = (struct spool_entry){ seq, size };
	sp->bytes += size;
	return 0;
}

/* Forget the oldest entry (its file is already gone or about to be). */
static void drop_oldest(struct agent_spool *sp)
{
	if (sp->peeked && sp->ents[0].seq == sp->peeked_seq)
		sp->peeked = false;
	sp->bytes -= sp->ents[0].size;
	memmove(sp->ents, sp->ents + 1, (sp->nr - 1) * sizeof(*sp->ents));
	sp->nr--;
}

static void unlink_oldest(struct agent_spool *sp)
{
	char name[NAME_LEN + 1];

	entry_name(name, sizeof(name), "", sp->ents[0].seq, SPOOL_SUFFIX);
	unlinkat(sp->dfd, name, 0);
	drop_oldest(sp);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct spool_entry *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int scan(struct agent_spool *sp)
{
	int fd = dup(sp->dfd);
	struct dirent *de;
	DIR *d;
	int err = 0;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	while ((de = readdir(d))) {
		struct stat st;
		uint64_t seq;

		if (!strncmp(de->d_name, SPOOL_TMP, strlen(SPOOL_TMP))) {
			unlinkat(sp->dfd, de->d_name, 0);	/* a put cut short */
			continue;
		}
		if (!parse_name(de->d_name, &seq))
			continue;
		if (fstatat(sp->dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		err = push_entry(sp, seq, (uint64_t)st.st_size);
		if (err)
			break;
		if (seq >= sp->next_seq)
			sp->next_seq = seq + 1;
	}
	closedir(d);
	if (!err && sp->nr)
		qsort(sp->ents, sp->nr, sizeof(*sp->ents), cmp_entry);
	return err;
}

int agent_spool_open(const char *dir, uint64_t max_bytes, struct agent_spool **out)
{
	struct agent_spool *sp;
	struct stat st;
	int err;

	if (!dir || !*dir || !max_bytes)
		return -EINVAL;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	sp->max_bytes = max_bytes;
	sp->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sp->dfd < 0) {
		/* A symlink (to a directory or not): ELOOP or ENOTDIR by kernel; say ELOOP. */
		struct stat lst;

		err = -errno;
		if (!lstat(dir, &lst) && S_ISLNK(lst.st_mode))
			err = -ELOOP;
		free(sp);
		return err;
	}
	err = -EPERM;
	if (fstat(sp->dfd, &st) || (st.st_uid != geteuid() && st.st_uid != 0) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)))
		goto fail;
	if (flock(sp->dfd, LOCK_EX | LOCK_NB)) {
		err = errno == EWOULDBLOCK ? -EBUSY : -errno;
		goto fail;
	}
	err = scan(sp);
	if (err)
		goto fail;
	*out = sp;
	return 0;
fail:
	close(sp->dfd);
	free(sp->ents);
	free(sp);
	return err;
}

void agent_spool_close(struct agent_spool *sp)
{
	if (!sp)
		return;
	close(sp->dfd);	/* drops the flock */
	free(sp->ents);
	free(sp);
}

static int write_all(int fd, struct iovec *iov, int n)
{
	while (n) {
		ssize_t w = writev(fd, iov, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (n && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

int agent_spool_put(struct agent_spool *sp, enum agent_api api, const void *body, size_t len)
{
	uint64_t size = SPOOL_HDR_LEN + (uint64_t)len;
	char tmp[sizeof(SPOOL_TMP) + 16], name[NAME_LEN + 1];
	uint8_t hdr[SPOOL_HDR_LEN] = SPOOL_MAGIC;
	struct iovec iov[2];
	int fd, err;

	if ((api != AGENT_API_PYROSCOPE && api != AGENT_API_PARCA) || (!body && len))
		return -EINVAL;
	if (size > sp->max_bytes) {
		sp->st.too_big++;
		return -EFBIG;
	}
	/* Room in the index first: after the write, nothing may fail but the disk. */
	err = push_entry(sp, 0, 0);
	if (err)
		return err;
	sp->nr--;

	while (sp->nr && sp->bytes + size > sp->max_bytes) {
		unlink_oldest(sp);
		sp->st.evicted++;
	}

	put_le(hdr + 4, SPOOL_VERSION, 2);
	put_le(hdr + 6, (uint64_t)api, 2);
	put_le(hdr + 8, len, 8);
	put_le(hdr + 16, crc32_z(crc32_z(0, Z_NULL, 0), body, len), 4);
	put_le(hdr + 20, 0, 4);
	iov[0] = (struct iovec){ hdr, sizeof(hdr) };
	iov[1] = (struct iovec){ (void *)body, len };

	entry_name(tmp, sizeof(tmp), SPOOL_TMP, sp->next_seq, "");
	entry_name(name, sizeof(name), "", sp->next_seq, SPOOL_SUFFIX);
	fd = openat(sp->dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	err = write_all(fd, iov, len ? 2 : 1);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(sp->dfd, tmp, sp->dfd, name))
		err = -errno;
	if (err) {
		unlinkat(sp->dfd, tmp, 0);
		goto out;
	}
	/* The rename itself survives a crash once the directory is synced. */
	fsync(sp->dfd);
	push_entry(sp, sp->next_seq++, size);	/* cannot fail: room was made above */
	sp->st.stored++;
	return 0;
out:
	if (err == -ENOSPC || err == -EDQUOT) {
		sp->st.full++;
		err = -ENOSPC;
	}
	return err;
}

/* Read the oldest entry. 0, -errno, or 1: it is corrupt, 2: it is gone (the caller drops it). */
static int read_oldest(struct agent_spool *sp, enum agent_api *api, void **body, size_t *len)
{
	char name[NAME_LEN + 1];
	uint8_t hdr[SPOOL_HDR_LEN];
	uint64_t blen, ver, a;
	struct stat st;
	uint8_t *buf = NULL;
	ssize_t r;
	int fd, ret = 1;

	entry_name(name, sizeof(name), "", sp->ents[0].seq, SPOOL_SUFFIX);
	fd = openat(sp->dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOMEM ? -ENOMEM : errno == ENOENT ? 2 : 1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < SPOOL_HDR_LEN)
		goto out;
	r = pread(fd, hdr, sizeof(hdr), 0);
	if (r != (ssize_t)sizeof(hdr) || memcmp(hdr, SPOOL_MAGIC, 4))
		goto out;
	ver = get_le(hdr + 4, 2);
	a = get_le(hdr + 6, 2);
	blen = get_le(hdr + 8, 8);
	if (ver != SPOOL_VERSION || (a != AGENT_API_PYROSCOPE && a != AGENT_API_PARCA) ||
	    blen != (uint64_t)st.st_size - SPOOL_HDR_LEN || blen > SIZE_MAX - 1)
		goto out;
	buf = malloc(blen ? blen : 1);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	for (uint64_t got = 0; got < blen; got += (uint64_t)r) {
		r = pread(fd, buf + got, blen - got, (off_t)(SPOOL_HDR_LEN + got));
		if (r < 0 && errno == EINTR) {
			r = 0;
			continue;
		}
		if (r <= 0)
			goto out;	/* EIO or shrunk: unreadable for good */
	}
	if (crc32_z(crc32_z(0, Z_NULL, 0), buf, blen) != get_le(hdr + 16, 4))
		goto out;
	*api = (enum agent_api)a;
	*body = buf;
	*len = blen;
	buf = NULL;
	ret = 0;
out:
	free(buf);
	close(fd);
	return ret;
}

int agent_spool_peek(struct agent_spool *sp, enum agent_api *api, void **body, size_t *len)
{
	while (sp->nr) {
		int ret = read_oldest(sp, api, body, len);

		if (ret <= 0) {
			if (!ret) {
				sp->peeked = true;
				sp->peeked_seq = sp->ents[0].seq;
			}
			return ret;
		}
		if (ret == 1)
			sp->st.corrupt++;
		unlink_oldest(sp);
	}
	return -ENOENT;
}

int agent_spool_pop(struct agent_spool *sp)
{
	if (!sp->peeked || !sp->nr || sp->ents[0].seq != sp->peeked_seq)
		return -ENOENT;
	unlink_oldest(sp);
	/* A removal lost in a crash would push the entry twice: make it last. */
	fsync(sp->dfd);
	sp->st.replayed++;
	return 0;
}

void agent_spool_stats(const struct agent_spool *sp, struct agent_spool_stats *st)
{
	*st = sp->st;
	st->entries = sp->nr;
	st->bytes = sp->bytes;
}
