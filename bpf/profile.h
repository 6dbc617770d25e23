/* SPDX-License-Identifier: MIT */
/*
 * profile.h - the records bpf/profile.bpf.c sends to user space, and the
 * maps' keys. Shared by the BPF program and the recorder (loop.c,
 * sampler.c), so it uses only fixed-size kernel types (__u32, __u64) and
 * no libc.
 *
 * Every ring-buffer record starts with struct profile_hdr; `kind` says which
 * struct follows. A sample is built in a per-CPU scratch buffer and only its
 * used part goes into the ring buffer: the fixed fields, then nr_kernel
 * kernel frames, then nr_user user frames, so its size is
 * PROFILE_SAMPLE_SIZE(nr_kernel + nr_user); a sample of a Python thread
 * has nr_py struct py_frame after them (python.h). A sample without stacks is 80
 * bytes instead of 2 KiB, which is what keeps high rates from overflowing.
 *
 * With --call-graph dwarf (PROFILE_SAMPLE_USTACK) the frames are followed
 * by struct profile_ustack (the user registers) and then the user stack
 * copied from SP: at least `dyn_size` bytes, of which only the first
 * dyn_size are valid (the ring reservation is rounded up to whole copy
 * chunks, see profile.bpf.c).
 */
#ifndef BPFREC_PROFILE_H
#define BPFREC_PROFILE_H

#include "python.h"

/* A struct py_frame in the frames array takes this many of its words. */
#define PROFILE_PY_WORDS	3
/* Room for Python frames in a sample: a power of two >= PY_MAX_FRAMES (a mask bounds the copy). */
#define PROFILE_PY_ROOM		128

/* perf_event_max_stack's default; bpf_get_stack() never returns more. */
#define PROFILE_MAX_STACK	127
#define PROFILE_COMM_LEN	16

enum profile_kind {
	PROFILE_KIND_SAMPLE = 1,
	PROFILE_KIND_FORK = 2,	/* a task in scope created a task */
	PROFILE_KIND_EXIT = 3,	/* a task in scope exited */
	PROFILE_KIND_EXEC = 4,	/* a task in scope replaced its image */
};

/* Which tasks the sampler keeps (rodata `filter_mode`). */
enum profile_filter {
	PROFILE_FILTER_ALL = 0,		/* -a: everything, kernel threads and idle too */
	PROFILE_FILTER_TGID = 1,	/* pids in map target_tgids, and their children */
	PROFILE_FILTER_TID = 2,		/* tids in map target_tids, and their children */
};

/* Indexes into the per-CPU map `stats`. */
enum profile_stat {
	PROFILE_STAT_SAMPLES = 0,	/* samples in scope */
	PROFILE_STAT_LOST = 1,		/* of those, dropped: ring buffer full */
	PROFILE_STAT_LOST_TASK = 2,	/* fork/exit/exec records dropped */
	PROFILE_STAT_LATE = 3,		/* samples sent with PROFILE_SAMPLE_LATE */
	PROFILE_STAT_LATE_SPENT = 4,	/* would have been, but their process had used its copies */
	PROFILE_STAT_LATE_BUSY = 5,	/* would have been, but the ring buffer was too full */
	PROFILE_STAT_PY_SAMPLES = 6,	/* samples sent with Python frames (python.h) */
	PROFILE_STAT_PY_CUT = 7,	/* of those, walks cut: too deep, or a frame unreadable */
	PROFILE_STAT_MAX = 8,
};

struct profile_hdr {
	__u32 kind;	/* enum profile_kind */
	__u32 cpu;
	__u64 time;	/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 pid;	/* tgid */
	__u32 tid;
};

/* Bits of profile_sample.flags. */
#define PROFILE_SAMPLE_KERNEL	1u	/* the sample interrupted kernel code */
/*
 * The first sample of a user process since it started, exec'd or was last
 * seen (map `seen_tgids`): user space is woken at once so it can read
 * /proc/PID/maps while the process still lives (a 50 ms process is gone by
 * the next timed flush).
 */
#define PROFILE_SAMPLE_NEW_PROC	2u
/* A struct profile_ustack and the user stack follow the frames. */
#define PROFILE_SAMPLE_USTACK	4u
/*
 * -g: the in-kernel walk met code in no mapping its tables know (the
 * process has none yet, or a library was mapped since): the user frames
 * are that walk, and a struct profile_ustack with a copy of the user stack
 * follows them as with PROFILE_SAMPLE_USTACK, so user space can walk the
 * stack again once the process's tables are built. The file never carries
 * the copy: the sample is written with the better of the two callchains.
 */
#define PROFILE_SAMPLE_LATE	8u
/* Whether a sample carries a struct profile_ustack and a stack copy. */
#define PROFILE_SAMPLE_HAS_USTACK(flags) (((flags) & (PROFILE_SAMPLE_USTACK | PROFILE_SAMPLE_LATE)) != 0)
/*
 * Stack copies for PROFILE_SAMPLE_LATE per process (since it started or
 * exec'd): a process whose code stays unknown (JIT code mapped after its
 * description) costs a bounded number of copies, then walks as before.
 * Each copy the recorder walked again no better than the kernel did, or
 * gave up waiting for, takes PROFILE_LATE_UNHELPFUL more of them (sixteen
 * such spend them all).
 */
#define PROFILE_LATE_COPIES	4096
#define PROFILE_LATE_UNHELPFUL	(PROFILE_LATE_COPIES / 16)
/* Processes remembered in `seen_tgids` (LRU: an evicted one just wakes again). */
#define PROFILE_SEEN_TGIDS	16384

struct profile_sample {
	struct profile_hdr hdr;
	__u64 period;	/* ctx->sample_period */
	__u64 ip;	/* interrupted ip (kernel ip in kernel mode) */
	__u64 user_ip;	/* user ip of the task (0 for kernel threads) */
	__u32 flags;
	__u32 nr_kernel;	/* kernel frames (0 without -g) */
	__u32 nr_user;		/* user frames after them (0 without -g) */
	char comm[PROFILE_COMM_LEN];
	__u32 nr_py;		/* struct py_frame after the user frames (python.h) */
	/* kernel frames, then user frames, then nr_py Python frames of PROFILE_PY_WORDS each */
	__u64 frames[2 * PROFILE_MAX_STACK + PROFILE_PY_WORDS * PROFILE_PY_ROOM];
};

#define PROFILE_SAMPLE_SIZE(nr_frames) \
	(__builtin_offsetof(struct profile_sample, frames) + (nr_frames) * sizeof(__u64))
/* The used part of a sample with nr_py Python frames after its native ones. */
#define PROFILE_SAMPLE_SIZE_PY(nr_frames, nr_py) \
	PROFILE_SAMPLE_SIZE((nr_frames) + PROFILE_PY_WORDS * (nr_py))

/*
 * The user registers perf's x86_64 DWARF mode records (sample_regs_user
 * 0xff0fff): AX BX CX DX SI DI BP SP IP FLAGS CS SS (perf_regs bits 0-11),
 * then R8..R15 (bits 16-23), in that order.
 */
#define PROFILE_UREGS_MASK	0xff0fffull
#define PROFILE_NR_UREGS	20
#define PROFILE_UREG_BP		6	/* indexes into profile_ustack.regs */
#define PROFILE_UREG_SP		7
#define PROFILE_UREG_IP		8
/* perf's PERF_SAMPLE_REGS_ABI_64 and _NONE (no user registers: kernel threads). */
#define PROFILE_UREGS_ABI_64	2
#define PROFILE_UREGS_ABI_NONE	0
/* The largest user stack copy perf allows (sample_stack_user). */
#define PROFILE_USTACK_MAX	65528
/* The user stack is copied in pieces of this size; a fault ends the copy. */
#define PROFILE_USTACK_CHUNK	1024

struct profile_ustack {
	__u64 abi;		/* PROFILE_UREGS_ABI_64, or _NONE: no regs, no stack */
	__u64 size;		/* bytes asked for: STACK_USER's size */
	__u64 dyn_size;		/* of those, copied from SP (<= size); they follow */
	__u64 regs[PROFILE_NR_UREGS];
};

/* FORK, EXIT and EXEC. For FORK, hdr.pid/tid are the child's. */
struct profile_task {
	struct profile_hdr hdr;
	__u32 ppid;	/* FORK: parent tgid */
	__u32 ptid;	/* FORK: parent tid */
	__u32 group_dead;	/* EXIT: the last thread of the process exited */
	char comm[PROFILE_COMM_LEN];
	__u32 pad;
};

#endif /* BPFREC_PROFILE_H */
