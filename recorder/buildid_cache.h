/* SPDX-License-Identifier: MIT */
/*
 * buildid_cache.h - copy the files that have samples into perf's build-id
 * cache, so a recording stays readable after its binaries are gone (a
 * container that exited, an upgrade, a deleted build tree).
 *
 * The layout is the one `perf buildid-cache` writes and `perf report` and
 * `bpfrec pprof` read (dirs 0755):
 *   DIR/<path as recorded>/<build-id hex>/elf        the file's bytes
 *   DIR/[vdso]/<build-id hex>/vdso                   the vDSO image
 *   DIR/.build-id/<2 hex>/<38 hex> -> ../../<path as recorded>/<build-id hex>
 * DIR is $HOME/.debug by default, as for perf.
 *
 * The recorder hands over an fd of each file when its first sample is
 * written (opened through the process's own root and checked by
 * safeopen_mapped(): never a file the process could swap in). The cache
 * keeps the fd and copies at buildid_cache_flush(), after recording: the
 * copy does not stall sampling, and an open fd still reads a file that was
 * deleted or a process that exited meanwhile. Past max_held kept fds a
 * file is copied at once instead, so descriptors stay bounded.
 *
 * A file that grows under a build-id fixed before its contents (a Python
 * symbol file, pysyms_cache.h) is filed with buildid_cache_put() instead:
 * copied at once, and again each time it has grown, each copy replacing
 * the one before, so a perf.data finished while recording goes on
 * (--switch-output) reads whole at once.
 *
 * Every copy is checked (the fd must carry the build-id it is filed under)
 * and written atomically (a temporary name, then rename), mode 0644 at
 * most (never more open than the original, never executable); a file
 * already cached is not copied again (but by buildid_cache_put()). Below DIR nothing is followed: every
 * directory is created and entered with O_NOFOLLOW, so a symlink planted in
 * the cache cannot redirect a write. Files larger than max_file_bytes are
 * skipped. Failures are counted and told to log, never a recording error.
 */
#ifndef RECORDER_BUILDID_CACHE_H
#define RECORDER_BUILDID_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct buildid_cache;

#define BUILDID_CACHE_MAX_FILE	(1ull << 30)	/* default bound on one file */
#define BUILDID_CACHE_MAX_HELD	1024		/* default bound on kept fds */

struct buildid_cache_opts {
	const char *dir;		/* NULL: $HOME/.debug */
	uint64_t max_file_bytes;	/* 0: BUILDID_CACHE_MAX_FILE */
	size_t max_held;		/* 0: BUILDID_CACHE_MAX_HELD */
	FILE *log;			/* one line per file skipped or failed; NULL: none */
	/*
	 * Told each file written into the cache (copied, or copied again over
	 * an earlier copy), by build-id: what a reader found under it before
	 * may have changed. NULL: nobody is told.
	 */
	void (*on_filed)(void *ctx, const uint8_t *build_id, size_t size);
	void *on_filed_ctx;
};

struct buildid_cache_stats {
	size_t copied;		/* new files in the cache */
	size_t present;		/* already there */
	size_t replaced;	/* copied again over an earlier copy (buildid_cache_put()) */
	size_t too_big;		/* over max_file_bytes */
	size_t failed;		/* could not be read, checked or written */
};

/* 0, -ENOENT when there is no HOME to put the cache in, -errno. */
int buildid_cache_new(const struct buildid_cache_opts *opts, struct buildid_cache **out);
/*
 * A file with samples: its path as recorded (" (deleted)" is dropped),
 * "[vdso]" for the vDSO, its build-id, and an fd to read it from, which the
 * cache takes (closed whatever happens). Once per build-id; later ones are
 * closed at once. Never fails: a file that cannot be kept is counted.
 */
void buildid_cache_add(struct buildid_cache *c, const char *path, const uint8_t *id, size_t size,
		       int fd);
/*
 * A file that grows under its build-id (see above), as buildid_cache_add()
 * takes it, copied now: a copy already in the cache under the build-id,
 * an earlier state of the file, is replaced (atomically: a reader opens
 * the old copy or the new one, whole). Takes fd (closed whatever
 * happens). 0 or -errno, also counted and told to log as for the others.
 */
int buildid_cache_put(struct buildid_cache *c, const char *path, const uint8_t *id, size_t size,
		      int fd);
/*
 * Whether a file with this build-id was handed over already (kept, copied,
 * or counted as failed): another is closed at once, so a caller need not
 * open one (a recorder starting a new file lists every build-id again).
 */
bool buildid_cache_has(const struct buildid_cache *c, const uint8_t *id, size_t size);
/* Copy every file kept so far and close their fds. */
void buildid_cache_flush(struct buildid_cache *c);
const struct buildid_cache_stats *buildid_cache_stats(const struct buildid_cache *c);
const char *buildid_cache_dir(const struct buildid_cache *c);
void buildid_cache_free(struct buildid_cache *c);

#endif /* RECORDER_BUILDID_CACHE_H */
