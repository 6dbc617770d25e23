/* SPDX-License-Identifier: MIT */
/*
 * progstats.h - what the recording's BPF programs cost the CPUs: their run
 * time and number of runs, as the kernel counts them.
 *
 * The kernel counts only while someone holds BPF_STATS_RUN_TIME enabled
 * (bpf_enable_stats(), or the sysctl kernel.bpf_stats_enabled). progstats
 * holds it from progstats_new() to progstats_free(): created before the
 * programs are attached, it counts them from their first run on. Counting
 * costs each run two clock reads. It needs CAP_SYS_ADMIN (or the sysctl
 * set by an administrator) and Linux 5.8: without them the numbers are
 * simply unavailable (progstats_read() says so) and nothing else changes.
 */
#ifndef RECORDER_PROGSTATS_H
#define RECORDER_PROGSTATS_H

#include <stdbool.h>
#include <stdint.h>

struct bpf_object;
struct progstats;

struct progstats_sum {
	bool counted;		/* false: the kernel did not count (see above) */
	uint64_t run_ns;	/* summed over the programs added */
	uint64_t runs;
};

/* 0 or -ENOMEM; a kernel that refuses to count is not an error. */
int progstats_new(struct progstats **out);
void progstats_free(struct progstats *p);

/* Count every loaded program of obj (a skeleton's obj). 0 or -ENOMEM. */
int progstats_add_object(struct progstats *p, const struct bpf_object *obj);

/* The sums so far; p NULL or not counting: *sum zeroed, counted false. */
void progstats_read(const struct progstats *p, struct progstats_sum *sum);

#endif /* RECORDER_PROGSTATS_H */
