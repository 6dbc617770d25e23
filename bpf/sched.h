/* SPDX-License-Identifier: MIT */
/*
 * sched.h - what bpf/sched.bpf.c (`bpfrec record --sched`) shares with
 * recorder/sched.c: the kinds of its ring-buffer records, the switch-out
 * reasons, its counters and the per-thread metrics it aggregates.
 *
 * A run-queue wait travels as a struct offcpu_sample (bpf/offcpu.h) with a
 * kind of its own: same layout, same size rule, so one parser checks both.
 * `state` then holds the wait's reason (SCHED_WAIT_*), `period` the
 * nanoseconds the thread was runnable but not running.
 */
#ifndef BPFREC_BPF_SCHED_H
#define BPFREC_BPF_SCHED_H

#include "offcpu.h"

enum sched_kind {
	/* One wait for a CPU (count 1), or short ones summed (count > 1). */
	SCHED_KIND_SAMPLE = 18,
	/* The first short wait of a new aggregate: describe the process now. */
	SCHED_KIND_DESCRIBE = 19,
};

/* Why a thread was runnable: struct offcpu_sample.state of a sched record. */
#define SCHED_WAIT_PREEMPTED	0	/* switched out while still runnable */
#define SCHED_WAIT_WOKEN	1	/* woken (or new) and queued */

/* Switch-outs by reason: indexes into sched_thread.switches. */
enum sched_switch_reason {
	SCHED_SW_PREEMPTED = 0,	/* still TASK_RUNNING: preempted or yielded */
	SCHED_SW_SLEEP = 1,	/* S (and T, t, I): waits for an event */
	SCHED_SW_IO = 2,	/* D: uninterruptible, mostly I/O */
	SCHED_SW_EXIT = 3,	/* dead: its last switch */
	SCHED_SW_MAX = 4,
};

/* Slots of the run-queue latency histogram: slot i counts waits in [2^i, 2^(i+1)) us (0: < 2 us). */
#define SCHED_HIST_SLOTS	32

/* One thread's metrics, in the hash map `sched_threads` keyed by tid. */
struct sched_thread {
	__u32 pid;		/* tgid */
	__u32 tid;
	char comm[PROFILE_COMM_LEN];
	__u64 oncpu_ns;		/* time on a CPU, switch-in to switch-out */
	__u64 runq_count;	/* waits for a CPU */
	__u64 runq_total_ns;
	__u64 runq_max_ns;
	__u64 switches[SCHED_SW_MAX];
	__u32 hist[SCHED_HIST_SLOTS];	/* runq waits, log2 microseconds */
};

/* Indexes into the per-CPU map `sched_stats`. */
enum sched_stat {
	SCHED_STAT_WAITS = 0,		/* run-queue waits of tasks in scope */
	SCHED_STAT_LOST = 1,		/* waits whose sample was lost: ring buffer full */
	SCHED_STAT_NO_STORAGE = 2,	/* switches not tracked: no task storage */
	SCHED_STAT_NO_THREAD = 3,	/* threads not counted: sched_threads full */
	SCHED_STAT_UNPAIRED = 4,	/* waits ended by a switch-in the kernel did not report */
	SCHED_STAT_PY_CUT = 5,		/* Python walks cut: too deep, or a frame unreadable */
	SCHED_STAT_MAX = 6,
};

/* Threads the metrics map holds (user space may raise it). */
#define SCHED_MAX_THREADS	16384

#endif /* BPFREC_BPF_SCHED_H */
