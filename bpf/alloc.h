/* SPDX-License-Identifier: MIT */
/*
 * alloc.h - what bpf/alloc.bpf.c (record --alloc) and recorder/alloc.c
 * share: the record of one sampled allocation, the allocator entries it
 * names, its counters, and the draw of the sampling countdown. Only
 * fixed-size kernel types and no libc, so both sides compile it.
 *
 * Records travel in the tracer's own ring buffer (alloc_events), not the
 * sampler's; only the used part of a record goes in:
 * ALLOC_SAMPLE_SIZE(nr_user + PROFILE_PY_WORDS * nr_py): a Python thread's
 * Python frames follow its native ones, as in a profile_sample
 * (profile.h), ALLOC_PY_ROOM of them at most. The same record, whole, is the value of the
 * map of sampled allocations still live (alloc_live), keyed by process and
 * address, so what is still held at the end is written with its stack.
 */
#ifndef BPFREC_ALLOC_H
#define BPFREC_ALLOC_H

#include "profile.h"

/* A kind neither the sampler nor the off-CPU tracer sends. */
#define ALLOC_KIND_SAMPLE	32
/*
 * Python frames a record keeps at most (innermost first; the walk's others
 * are cut): fewer than PY_MAX_FRAMES, because alloc_live holds each live
 * sampled block's record whole, preallocated on kernels before 6.1.
 */
#define ALLOC_PY_ROOM		48

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
	ALLOC_STAT_PY_CUT = 6,		/* Python walks cut: too deep, or a frame unreadable */
	ALLOC_STAT_MAX = 7,
};

struct alloc_sample {
	struct profile_hdr hdr;	/* kind ALLOC_KIND_SAMPLE; time: when the block was returned */
	__u64 addr;		/* what the allocator returned */
	__u64 size;		/* bytes asked for (calloc: n * size) */
	__u32 func;		/* enum alloc_func */
	__u32 nr_user;		/* user frames, the allocator's entry first */
	char comm[PROFILE_COMM_LEN];
	__u32 nr_py;		/* struct py_frame after the user frames (python.h) */
	__u32 pad;
	/* user frames, then nr_py Python frames of PROFILE_PY_WORDS each */
	__u64 frames[PROFILE_MAX_STACK + PROFILE_PY_WORDS * ALLOC_PY_ROOM];
};

#define ALLOC_SAMPLE_SIZE(nr_frames) \
	(__builtin_offsetof(struct alloc_sample, frames) + (nr_frames) * sizeof(__u64))
/* Words of frames a record uses: native ones, then its Python frames'. */
#define ALLOC_SAMPLE_WORDS(r)	((r)->nr_user + PROFILE_PY_WORDS * (r)->nr_py)

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
 * log2(1 + i / 64) in 1/65536, i = 0..64: the fraction of a logarithm at
 * the edges of 64 steps of the mantissa, interpolated in between.
 */
#define ALLOC_LOG2_FRAC_LEN	65
#define ALLOC_LOG2_FRAC { \
	    0,  1466,  2909,  4331,  5732,  7112,  8473,  9814, \
	11136, 12440, 13727, 14996, 16248, 17484, 18704, 19909, \
	21098, 22272, 23433, 24579, 25711, 26830, 27936, 29029, \
	30109, 31178, 32234, 33279, 34312, 35334, 36346, 37346, \
	38336, 39316, 40286, 41246, 42196, 43137, 44068, 44990, \
	45904, 46809, 47705, 48593, 49472, 50344, 51207, 52063, \
	52911, 53751, 54584, 55410, 56229, 57040, 57845, 58643, \
	59434, 60219, 60997, 61769, 62534, 63294, 64047, 64794, \
	65536 }

/*
 * -ln(u) for u = (x + 1) / 2^32 (x uniform: bpf_get_prandom_u32()), in
 * 1/65536: an exponential draw with mean 1. log2(x + 1) is the top bit's
 * position k plus the mantissa's log2, from the table at its 6 leading
 * bits and linear between table entries over the next 10 (error below
 * 1e-4: also the short draws, which decide whether a block near the
 * interval's size is sampled, are right); the result is
 * (32 - log2(x + 1)) * ln 2. Integer only, for BPF.
 */
static inline __u64 alloc_neg_log_q16(__u32 x, const __u32 *frac)
{
	__u64 v = (__u64)x + 1, t = v, m, log2q;
	__u32 k = 0, idx, f;

	if (v >> 32)
		return 0;	/* u = 1 */
	if (t >> 16) { t >>= 16; k += 16; }
	if (t >> 8) { t >>= 8; k += 8; }
	if (t >> 4) { t >>= 4; k += 4; }
	if (t >> 2) { t >>= 2; k += 2; }
	if (t >> 1) { k += 1; }
	/* The mantissa with its top bit at 2^16: 6 bits of step, 10 of interpolation. */
	m = k >= 16 ? v >> (k - 16) : v << (16 - k);
	idx = (__u32)(m >> 10) & 63;
	f = (__u32)m & 1023;
	log2q = ((__u64)k << 16) + frac[idx] +
		(((__u64)(frac[idx + 1] - frac[idx]) * f) >> 10);
	if (log2q >= (32ull << 16))
		return 0;
	/* ln 2 = 45426.09 / 65536 */
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
