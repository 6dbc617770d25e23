/* SPDX-License-Identifier: MIT */
/*
 * alloc.h - what bpf/alloc.bpf.c (record --alloc) and recorder/alloc.c
 * share: the record of one sampled allocation, the allocator entries it
 * names, its counters, and the draw of the sampling countdown. Only
 * fixed-size kernel types and no libc, so both sides compile it.
 *
 * Records travel in the tracer's own ring buffer (alloc_events), not the
 * sampler's; only the used part of a record goes in:
 * ALLOC_SAMPLE_SIZE(nr_user). The same record, whole, is the value of the
 * map of sampled allocations still live (alloc_live), keyed by process and
 * address, so what is still held at the end is written with its stack.
 */
#ifndef BPFREC_ALLOC_H
#define BPFREC_ALLOC_H

#include "profile.h"

/* A kind neither the sampler nor the off-CPU tracer sends. */
#define ALLOC_KIND_SAMPLE	32

/* The allocator entries probed; their names are alloc_func_name()'s. */
enum alloc_func {
	ALLOC_FUNC_MALLOC = 0,
	ALLOC_FUNC_CALLOC,
	ALLOC_FUNC_REALLOC,
	ALLOC_FUNC_POSIX_MEMALIGN,
	ALLOC_FUNC_ALIGNED_ALLOC,
	ALLOC_FUNC_MEMALIGN,
	ALLOC_FUNC_MMAP,		/* anonymous mappings only */
	ALLOC_FUNC_FREE,		/* these two only end allocations */
	ALLOC_FUNC_MUNMAP,
	ALLOC_FUNC_MAX,
	/* A call the return probe ignores (a file mapping). */
	ALLOC_FUNC_NONE = 0xff,
};

/* Indexes into the per-CPU map `alloc_stats`. */
enum alloc_stat {
	ALLOC_STAT_CALLS = 0,		/* allocations by tasks in scope */
	ALLOC_STAT_SAMPLED = 1,		/* of those, sampled */
	ALLOC_STAT_LOST = 2,		/* sampled, dropped: ring buffer full */
	ALLOC_STAT_LIVE_FULL = 3,	/* sampled, not remembered: alloc_live full */
	ALLOC_STAT_FREED = 4,		/* sampled allocations freed again */
	ALLOC_STAT_NO_STORAGE = 5,	/* calls not followed: no task storage */
	ALLOC_STAT_MAX = 6,
};

struct alloc_sample {
	struct profile_hdr hdr;	/* kind ALLOC_KIND_SAMPLE; time: the call's entry */
	__u64 addr;		/* what the allocator returned */
	__u64 size;		/* bytes asked for (calloc: n * size) */
	__u32 func;		/* enum alloc_func */
	__u32 nr_user;		/* user frames, the allocator's entry first */
	char comm[PROFILE_COMM_LEN];
	__u64 frames[PROFILE_MAX_STACK];
};

#define ALLOC_SAMPLE_SIZE(nr_frames) \
	(__builtin_offsetof(struct alloc_sample, frames) + (nr_frames) * sizeof(__u64))

/* A sampled allocation still live: addresses are per process. */
struct alloc_live_key {
	__u32 pid;
	__u32 pad;
	__u64 addr;
};

/* Default bound of alloc_live (entries; each holds a whole record). */
#define ALLOC_LIVE_MAX		32768
/* The largest sampling interval: keeps interval * draw inside 64 bits. */
#define ALLOC_INTERVAL_MAX	(1ull << 40)

/*
 * log2(1 + (i + 0.5) / 64) in 1/65536, i = the 6 bits below the top set
 * bit of a number: the fraction of its logarithm, to within 1/128.
 */
#define ALLOC_LOG2_FRAC { \
	  736,  2190,  3623,  5034,  6425,  7795,  9146, 10477, \
	11791, 13086, 14363, 15624, 16868, 18096, 19308, 20505, \
	21687, 22854, 24007, 25146, 26272, 27384, 28484, 29571, \
	30645, 31707, 32758, 33797, 34825, 35841, 36847, 37842, \
	38827, 39802, 40767, 41722, 42667, 43603, 44530, 45448, \
	46357, 47258, 48150, 49034, 49909, 50776, 51636, 52488, \
	53332, 54169, 54998, 55820, 56635, 57443, 58245, 59039, \
	59827, 60609, 61384, 62152, 62915, 63671, 64421, 65166 }

/*
 * -ln(u) for u = (x + 1) / 2^32 (x uniform: bpf_get_prandom_u32()), in
 * 1/65536: an exponential draw with mean 1 to within the table's step.
 * log2 of x + 1 is its top bit's position plus the table's fraction; the
 * result is (32 - log2(x + 1)) * ln 2. Integer only, for BPF.
 */
static inline __u64 alloc_neg_log_q16(__u32 x, const __u32 *frac)
{
	__u64 v = (__u64)x + 1, t = v, log2q;
	__u32 k = 0, idx;

	if (v >> 32)
		return 0;	/* u = 1 */
	if (t >> 16) { t >>= 16; k += 16; }
	if (t >> 8) { t >>= 8; k += 8; }
	if (t >> 4) { t >>= 4; k += 4; }
	if (t >> 2) { t >>= 2; k += 2; }
	if (t >> 1) { k += 1; }
	idx = k >= 6 ? (__u32)(v >> (k - 6)) & 63 : (__u32)(v << (6 - k)) & 63;
	log2q = ((__u64)k << 16) + frac[idx & 63];
	if (log2q >= (32ull << 16))
		return 0;
	/* ln 2 = 45426 / 65536 */
	return ((32ull << 16) - log2q) * 45426 >> 16;
}

/* Bytes until the next sample, for a mean of interval bytes. */
static inline __u64 alloc_next_countdown(__u64 interval, __u32 x, const __u32 *frac)
{
	if (interval > ALLOC_INTERVAL_MAX)
		interval = ALLOC_INTERVAL_MAX;
	return (interval * alloc_neg_log_q16(x, frac) >> 16) + 1;
}

#endif /* BPFREC_ALLOC_H */
