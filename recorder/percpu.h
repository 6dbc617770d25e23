/* SPDX-License-Identifier: MIT */
/*
 * percpu.h - the sum over CPUs of one entry of a per-CPU array of u64
 * counters (BPF_MAP_TYPE_PERCPU_ARRAY), as the sampler, the off-CPU tracer
 * and the in-kernel unwinder keep their counts: each CPU counts in its own
 * copy without atomics, and user space adds them up when it reads.
 */
#ifndef RECORDER_PERCPU_H
#define RECORDER_PERCPU_H

#include <stdint.h>

struct bpf_map;

/* *sum = entry key of the map map_fd summed over every possible CPU. 0 or -errno. */
int percpu_sum(int map_fd, uint32_t key, uint64_t *sum);
/*
 * A counter: entry key of map summed over every possible CPU, or 0 when it
 * cannot be read (a stats line shows nothing rather than failing).
 */
uint64_t percpu_count(const struct bpf_map *map, uint32_t key);

#endif /* RECORDER_PERCPU_H */
