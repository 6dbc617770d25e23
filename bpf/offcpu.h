/* SPDX-License-Identifier: MIT */
/*
 * offcpu.h - the record bpf/offcpu.bpf.c sends to user space for one
 * blocked interval (or the sum of many short ones), and the keys of its
 * maps. Shared by the BPF program and recorder/offcpu.c, so it uses only
 * fixed-size kernel types and no libc.
 *
 * Off-CPU records travel in the sampler's own ring buffer (the map is
 * shared, see offcpu.bpf.c), so they start with struct profile_hdr and use
 * a kind the sampler never sends. Like a profile_sample, only the used part
 * goes into the ring buffer: OFFCPU_SAMPLE_SIZE(nr_kernel + nr_user +
 * PROFILE_PY_WORDS * nr_py), the Python frames of a Python thread after
 * its native ones as in a profile_sample (python.h), then, with
 * PROFILE_SAMPLE_USTACK in flags, a struct profile_ustack and its dyn_size
 * bytes of user stack.
 */
#ifndef BPFREC_OFFCPU_H
#define BPFREC_OFFCPU_H

#include "profile.h"

enum offcpu_kind {
	/* One blocked interval (count 1), or short ones summed (count > 1). */
	OFFCPU_KIND_SAMPLE = 16,
	/*
	 * The first short interval of a new (task, stack) aggregate: not a
	 * sample, only a request to describe the process now (COMM, MMAP2),
	 * while /proc still has it; the sum is written when recording ends.
	 */
	OFFCPU_KIND_DESCRIBE = 17,
};

/*
 * Indexes into the per-CPU map `offcpu_stats`. Each switch-out counted in
 * BLOCKED is an interval that is closed (INTERVALS: sent, summed, or lost
 * to a full ring buffer), lost for want of task storage, or still open
 * when recording stops (a task blocked at the end); so the intervals
 * written, plus LOST, plus those open, make BLOCKED.
 */
enum offcpu_stat {
	OFFCPU_STAT_INTERVALS = 0,	/* blocked intervals of tasks in scope, closed */
	OFFCPU_STAT_LOST = 1,		/* intervals lost: ring buffer full, or no task storage */
	OFFCPU_STAT_NO_STORAGE = 2,	/* switch-outs or stack copies without task storage */
	OFFCPU_STAT_BLOCKED = 3,	/* switch-outs of tasks in scope */
	OFFCPU_STAT_UNPAIRED = 4,	/* of the intervals, closed at a switch-out (below) */
	OFFCPU_STAT_PY_CUT = 5,		/* Python walks cut: too deep, or a frame unreadable */
	OFFCPU_STAT_MAX = 6,
};

/*
 * A blocked task got the CPU back without a sched_switch event naming it
 * (some kernels leave out switches away from some tasks: seen on a VM's
 * kernel, for the threads of its guest agent), so its interval is closed
 * when it switches out again. When did it get the CPU back? After `since` (its own
 * switch-out) and after `seen` (the last switch the program saw on this
 * CPU, which it has run on since: a running task does not move); `ran` ns
 * before `now` by the scheduler's own clock, when that is known (0: not
 * known, or 0 ns). The answer lies in [max(since, seen), now].
 */
static inline __u64 offcpu_unseen_switch_in(__u64 since, __u64 seen, __u64 ran, __u64 now)
{
	__u64 low = seen > since ? seen : since;

	if (low >= now)
		return now;
	if (ran && ran < now - low)
		return now - ran;
	return low;
}

/*
 * Task states as struct offcpu_sample.state carries them (the kernel's
 * TASK_* bits, masked with OFFCPU_STATE_MASK; preemption is reported as 0
 * like a running task).
 */
#define OFFCPU_STATE_RUNNING		0x00	/* preempted or yielded: runnable */
#define OFFCPU_STATE_INTERRUPTIBLE	0x01	/* S: sleeping */
#define OFFCPU_STATE_UNINTERRUPTIBLE	0x02	/* D: disk sleep */
#define OFFCPU_STATE_STOPPED		0x04	/* T */
#define OFFCPU_STATE_TRACED		0x08	/* t */
#define OFFCPU_STATE_PARKED		0x40	/* P, kthreads only */
#define OFFCPU_STATE_DEAD		0x80	/* never switches back in */
#define OFFCPU_STATE_IDLE		0x402	/* I: D without load (kthreads) */
#define OFFCPU_STATE_MASK		0xfff

struct offcpu_sample {
	/* time: the switch-out time while blocked, the switch-in time once sent */
	struct profile_hdr hdr;
	__u64 period;		/* ns off CPU (summed for an aggregate) */
	__u64 count;		/* intervals summed */
	__u32 state;		/* OFFCPU_STATE_* at switch-out */
	__u32 nr_kernel;	/* kernel frames at switch-out */
	__u32 nr_user;		/* user frames after them */
	char comm[PROFILE_COMM_LEN];
	__u32 flags;		/* PROFILE_SAMPLE_USTACK or 0 */
	__u32 nr_py;		/* struct py_frame after the user frames (python.h) */
	/* kernel frames, then user frames, then nr_py Python frames of PROFILE_PY_WORDS each */
	__u64 frames[2 * PROFILE_MAX_STACK + PROFILE_PY_WORDS * PROFILE_PY_ROOM];
};

/*
 * --call-graph dwarf: the user registers and stack at switch-out, kept in
 * task-local storage next to the sample until the task runs again. Every
 * thread in scope that blocked once holds one, so the copy is capped lower
 * than the sampler's (the storage is sized for the largest).
 */
#define OFFCPU_USTACK_MAX	16384

struct offcpu_ustack {
	struct profile_ustack u;
	__u8 data[OFFCPU_USTACK_MAX];
};

#define OFFCPU_SAMPLE_SIZE(nr_frames) \
	(__builtin_offsetof(struct offcpu_sample, frames) + (nr_frames) * sizeof(__u64))
/* Words of frames a record uses: native ones, then its Python frames'. */
#define OFFCPU_SAMPLE_WORDS(r) \
	((r)->nr_kernel + (r)->nr_user + PROFILE_PY_WORDS * (r)->nr_py)

/* An aggregate of short intervals: one per task, state and stack. */
struct offcpu_agg_key {
	__u32 pid;
	__u32 tid;
	__u32 state;
	__u16 nr_kernel;
	__u16 nr_user;
	__u16 nr_py;
	__u16 pad;
	__u32 pad2;
	__u64 stack_hash;	/* of every frame, kernel, user and Python */
};

#endif /* BPFREC_OFFCPU_H */
