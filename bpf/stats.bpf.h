/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * stats.bpf.h - a BPF object's counters: a per-CPU array of u64, indexed by
 * the object's enum of stats (PROFILE_STAT_*, OFFCPU_STAT_*, ...), which
 * user space sums over CPUs when it reads (recorder/percpu.h). Each CPU
 * adds to its own copy: no atomics on the hot path.
 *
 * STATS_MAP(name, nr) declares the map `name` (user space finds it by that
 * name in the skeleton) and defines count(stat), which adds one to a
 * counter of it: an object has one such map. count() is declared here so
 * that the headers an object shares with another (offcpu_sample.bpf.h) can
 * count into whichever map the object declares.
 */
#ifndef BPFREC_STATS_BPF_H
#define BPFREC_STATS_BPF_H

#include <bpf/bpf_helpers.h>

static __always_inline void count(__u32 stat);

#define STATS_MAP(name, nr)							\
	struct {								\
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);			\
		__uint(max_entries, nr);					\
		__type(key, __u32);						\
		__type(value, __u64);						\
	} name SEC(".maps");							\
	static __always_inline void count(__u32 stat)				\
	{									\
		__u64 *v = bpf_map_lookup_elem(&name, &stat);			\
										\
		if (v)								\
			*v += 1;						\
	}

#endif /* BPFREC_STATS_BPF_H */
