/* SPDX-License-Identifier: MIT */
/*
 * spool.h - a bounded on-disk queue of finished push request bodies, kept
 * while the server cannot take them and replayed oldest first, also by the
 * next agent after a restart or a kill -9.
 *
 * One file per entry, NNNNNNNNNNNNNNNN.push (16 hex digits: the sequence
 * number, so names sort by age), holding a 24-byte header then the body:
 *   magic "BPSP" | u16 version (1) | u16 api | u64 body length | u32 crc32 (zlib) | u32 0
 * (integers little-endian). An entry is written to a temporary name
 * (.tmp-NNNN...), fsync'ed and renamed: it is whole or absent. A crash
 * leaves at most a temporary, removed by the next agent_spool_open().
 *
 * The directory is ours alone: created 0700 when missing, refused when it
 * is a symlink (-ELOOP), owned by another user than us or root, or writable
 * by group or others (-EPERM); every file is opened relative to it with
 * O_NOFOLLOW.
 * An advisory lock on it (flock) keeps a second agent out: -EBUSY.
 *
 * Sizes count whole files (header + body). Errors are -errno.
 */
#ifndef TOOLS_AGENT_SPOOL_H
#define TOOLS_AGENT_SPOOL_H

#include <stdint.h>

#include "request.h"

struct agent_spool;

/*
 * Open (creating dir 0700 if needed; its parent must exist) and scan the
 * entries there, oldest first by sequence number; stale temporaries are
 * removed. Entries already over max_bytes are kept until the next put.
 */
int agent_spool_open(const char *dir, uint64_t max_bytes, struct agent_spool **sp);

/*
 * Store one body. To stay within max_bytes the oldest entries go first
 * (counted in evicted); a body that alone is over max_bytes is refused with
 * -EFBIG (counted in too_big). A full disk (ENOSPC, EDQUOT) leaves nothing
 * behind and returns -ENOSPC (counted in full).
 */
int agent_spool_put(struct agent_spool *sp, enum agent_api api, const void *body, size_t len);

/*
 * The oldest entry, read into a malloc'd *body the caller frees; -ENOENT
 * when the spool is empty. A corrupt entry (bad header, length or crc, or
 * unreadable) is removed, counted in corrupt, and skipped; one removed by
 * someone else is skipped. Peeking again without a pop
 * returns the same entry.
 */
int agent_spool_peek(struct agent_spool *sp, enum agent_api *api, void **body, size_t *len);
/* Remove the entry the last peek returned (counted in replayed); -ENOENT if none. */
int agent_spool_pop(struct agent_spool *sp);

struct agent_spool_stats {
	uint64_t entries, bytes;	/* in the spool now */
	uint64_t stored, replayed;	/* puts that worked; pops */
	uint64_t evicted, too_big, full, corrupt;	/* bodies lost, by cause */
};
void agent_spool_stats(const struct agent_spool *sp, struct agent_spool_stats *st);

void agent_spool_close(struct agent_spool *sp);

#endif /* TOOLS_AGENT_SPOOL_H */
