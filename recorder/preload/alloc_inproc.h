/* SPDX-License-Identifier: MIT */
/*
 * alloc_inproc.h - the state of `record --alloc`'s in-process fast path
 * (recorder/preload/alloc_preload.c, libbpfrec-alloc.so), apart from the library
 * so that it is tested on its own. No allocation, no lock, no libc call
 * beyond what the caller passes in: it runs inside malloc and free.
 *
 * The countdown: one per thread, the Poisson sampling of bpf/alloc.bpf.c
 * with the same draw (alloc_next_countdown() of bpf/alloc.h), its uniform
 * numbers from a per-thread xorshift instead of bpf_get_prandom_u32().
 *
 * The set: the addresses of sampled blocks still live, so that free() asks
 * one question of a few ns and only a sampled block's free is reported.
 * Open addressing over a fixed table, lock-free (compare-and-swap per
 * slot), a bounded probe. An address that finds no slot in its probe marks
 * the set saturated: from then on every free is reported (correct, slow)
 * rather than a sampled block staying live forever in the recording.
 */
#ifndef RECORDER_PRELOAD_ALLOC_INPROC_H
#define RECORDER_PRELOAD_ALLOC_INPROC_H

#include <stdbool.h>
#include <stdint.h>

/* Slots of the set (a power of two) and the longest probe. */
#define ALLOC_SET_SLOTS		65536u
#define ALLOC_SET_PROBE		64u

struct alloc_set {
	uint64_t used;		/* addresses held (0: free() asks nothing) */
	uint32_t saturated;	/* an insert found no slot: report every free */
	uint32_t pad;
	uint64_t slots[ALLOC_SET_SLOTS];	/* 0 empty, 1 removed, else an address */
};

/* Remember addr (not 0 or 1). -ENOSPC: no slot, the set is now saturated. */
int alloc_set_add(struct alloc_set *s, uint64_t addr);
/* Forget addr: true when it was held (or the set is saturated: unknown). */
bool alloc_set_take(struct alloc_set *s, uint64_t addr);

struct alloc_countdown {
	int64_t left;		/* bytes until the next sample; 0 = not drawn yet */
	uint64_t rng;		/* xorshift state; 0 = not seeded */
};

/*
 * One allocation of size bytes at interval (1 = every allocation of at
 * least a byte): true when it is sampled. seed starts the thread's random
 * numbers the first time (any value; mixed so that 0 works).
 */
bool alloc_countdown_take(struct alloc_countdown *c, uint64_t size, uint64_t interval,
			  uint64_t seed);

#endif /* RECORDER_PRELOAD_ALLOC_INPROC_H */
