/* SPDX-License-Identifier: MIT */
/*
 * batch.h - records collected between two flushes, sorted by time.
 *
 * The ring buffer delivers records roughly, not exactly, in time order
 * (CPUs race to reserve). perf wants each round it reads sorted, so the
 * recorder copies what arrives into a batch and sorts it before writing.
 * Records keep their arrival order when their times are equal. Each record
 * is stored 8-byte aligned; one arena and one index grow as needed and are
 * reused after batch_clear(), so a steady recording stops allocating.
 * They are mappings of their own, not the heap, and shrink again when a
 * burst is over: after BATCH_SHRINK_ROUNDS rounds that all used under a
 * quarter of them, to twice the most those rounds used (the memory of a
 * recording follows its rate, not its worst moment).
 */
#ifndef RECORDER_BATCH_H
#define RECORDER_BATCH_H

#include <stddef.h>
#include <stdint.h>

struct batch_entry {
	uint64_t time;
	uint64_t seq;		/* arrival order, the tie-breaker */
	size_t off, len;
};

struct batch {
	uint8_t *data;
	size_t len, cap;
	struct batch_entry *ents;
	size_t nr, cap_ents;
	uint64_t seq;
	/* The most bytes and records held at a round's end since the last shrink check. */
	size_t round_peak, round_peak_nr;
	unsigned int rounds;
};

#define BATCH_SHRINK_ROUNDS	32

/* Reserve len bytes for a record stamped time; NULL on ENOMEM. Fill it at once. */
void *batch_add(struct batch *b, uint64_t time, size_t len);
/* Sort by time, stable. */
void batch_sort(struct batch *b);
/* The i-th record (after batch_sort: in time order). */
const void *batch_get(const struct batch *b, size_t i, size_t *len);
/* Bytes held; the caller flushes early when a batch grows past its bound. */
static inline size_t batch_bytes(const struct batch *b) { return b->len; }
/* Forget every record (the end of a round). */
void batch_clear(struct batch *b);
/*
 * After batch_sort(): keep records [from, nr) of the sorted order for the
 * next round (they stay sorted, ahead of what is added next, with their
 * arrival order for ties) and forget the others. The room of the records
 * forgotten is reclaimed, in one copy of those kept, once it is most of
 * the arena, so records kept round after round are not copied each time.
 * Always 0 (a reclaim without memory is left for later).
 */
int batch_keep_from(struct batch *b, size_t from);
/* Shorten record i (sorted order) to its first len bytes: what is kept of it. */
void batch_set_len(struct batch *b, size_t i, size_t len);
void batch_free(struct batch *b);

#endif /* RECORDER_BATCH_H */
