// SPDX-License-Identifier: MIT
/* rotate.c - --switch-output naming and pruning (contract in rotate.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "recorder/rotate.h"

/* Enough retries to step over any plausible pile of planted names. */
#define MAX_NAME_TRIES	1000

int rotate_parse(const char *arg, struct rotate_spec *out)
{
	/* perf's tags: sizes in upper case, times in lower case ("1m" is a minute). */
	static const struct {
		char tag;
		enum rotate_mode mode;
		uint64_t unit;
	} tags[] = {
		{ 'B', ROTATE_SIZE, 1 },
		{ 'K', ROTATE_SIZE, 1ull << 10 },
		{ 'M', ROTATE_SIZE, 1ull << 20 },
		{ 'G', ROTATE_SIZE, 1ull << 30 },
		{ 's', ROTATE_TIME, 1000000000ull },
		{ 'm', ROTATE_TIME, 60ull * 1000000000ull },
		{ 'h', ROTATE_TIME, 3600ull * 1000000000ull },
		{ 'd', ROTATE_TIME, 86400ull * 1000000000ull },
	};
	unsigned long long v;
	char *end;

	memset(out, 0, sizeof(*out));
	if (!arg || !strcmp(arg, "signal")) {
		out->mode = ROTATE_SIGNAL;
		return 0;
	}
	if (*arg < '0' || *arg > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || !v || end[0] == '\0' || end[1] != '\0')
		return -EINVAL;
	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		if (tags[i].tag != end[0])
			continue;
		if (v > UINT64_MAX / tags[i].unit)
			return -EINVAL;
		out->mode = tags[i].mode;
		if (out->mode == ROTATE_SIZE)
			out->bytes = v * tags[i].unit;
		else
			out->ns = v * tags[i].unit;
		return 0;
	}
	return -EINVAL;
}

int rotator_init(struct rotator *r, const char *path, unsigned int max_files)
{
	memset(r, 0, sizeof(*r));
	r->path = strdup(path);
	r->max_files = max_files;
	if (max_files)
		r->kept = calloc(max_files, sizeof(*r->kept));
	if (!r->path || (max_files && !r->kept)) {
		rotator_free(r);
		return -ENOMEM;
	}
	return 0;
}

void rotator_free(struct rotator *r)
{
	for (size_t i = 0; r->kept && i < r->max_files; i++)
		free(r->kept[i]);
	free(r->kept);
	free(r->path);
	memset(r, 0, sizeof(*r));
}

uint64_t rotate_stamp(uint64_t realtime_ns)
{
	time_t secs = (time_t)(realtime_ns / 1000000000ull);
	struct tm tm;

	if (!localtime_r(&secs, &tm))
		return 0;
	return ((((((uint64_t)(tm.tm_year + 1900) * 100 + (uint64_t)(tm.tm_mon + 1)) * 100 +
		   (uint64_t)tm.tm_mday) * 100 + (uint64_t)tm.tm_hour) * 100 +
		 (uint64_t)tm.tm_min) * 100 + (uint64_t)tm.tm_sec) * 100 +
	       realtime_ns % 1000000000ull / 10000000ull;
}

/* rename(2) that fails with EEXIST instead of replacing the target. */
static int rename_noreplace(const char *from, const char *to)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* A filesystem without RENAME_NOREPLACE: link() never replaces either. */
	if (link(from, to) < 0)
		return -errno;
	if (unlink(from) < 0) {
		int err = -errno;

		unlink(to);
		return err;
	}
	return 0;
}

int rotator_retire(struct rotator *r, uint64_t realtime_ns, char *name, size_t len)
{
	uint64_t stamp = rotate_stamp(realtime_ns);
	int err = -EEXIST;

	if (stamp <= r->last_stamp)
		stamp = r->last_stamp + 1;
	for (int i = 0; i < MAX_NAME_TRIES && err == -EEXIST; i++, stamp++) {
		if ((size_t)snprintf(name, len, "%s.%016llu", r->path,
				     (unsigned long long)stamp) >= len)
			return -ENAMETOOLONG;
		err = rename_noreplace(r->path, name);
		if (!err)
			r->last_stamp = stamp;
	}
	if (err)
		return err;
	r->nr_files++;
	if (!r->max_files)
		return 0;
	/* The ring is full: its oldest entry is the one we overwrite next. */
	if (r->kept[r->next]) {
		unlink(r->kept[r->next]);
		free(r->kept[r->next]);
	}
	r->kept[r->next] = strdup(name);
	r->next = (r->next + 1) % r->max_files;
	if (r->nr_kept < r->max_files)
		r->nr_kept++;
	return 0;
}
