/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * unseen_switch.bpf.h - when did a task get the CPU back, if the kernel
 * never said so? For the sched_switch programs of offcpu.bpf.c and
 * sched.bpf.c.
 *
 * Some kernels leave out sched_switch events for switches away from some
 * tasks (seen on a VM's kernel, for its guest agent's threads): a task that
 * one of them handed the CPU to is switched in without an event naming it.
 * A program that pairs switch-outs with switch-ins then finds, at the
 * task's next switch-out, an interval still open. It closes it at the best
 * estimate of the switch-in: offcpu_unseen_switch_in() (offcpu.h, where a
 * unit test pins its bounds) from the task's own switch-out, the last
 * switch this program saw on this CPU (note_switch(), called at the end of
 * every sched_switch) and the scheduler's own clock (sched_ran()).
 *
 * Each including object gets its own last_switch map.
 *
 * The sched_switch step itself is one order for both tracers, so it is
 * here: on_switch_with() closes what an unseen switch-in left open (before
 * switch_out() overwrites it), then switches prev out and next in, then
 * notes the switch. The including object defines the three steps it calls
 * (close_unseen(), switch_out(), switch_in(), declared below) and builds
 * its two programs with UNSEEN_SWITCH_PROGRAMS(name).
 */
#ifndef BPFREC_UNSEEN_SWITCH_BPF_H
#define BPFREC_UNSEEN_SWITCH_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "offcpu.h"
#include "run_state.bpf.h"

/* When this program last saw a switch on this CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} last_switch SEC(".maps");

/* Remember that this CPU switched at `now`. */
static __always_inline void note_switch(__u64 now)
{
	__u32 zero = 0;
	__u64 *seen = bpf_map_lookup_elem(&last_switch, &zero);

	if (seen)
		*seen = now;
}

/*
 * How long prev has been on this CPU by the scheduler's clock (its last
 * arrival, CONFIG_SCHED_INFO, against the run queue's clock, which
 * __schedule() has just updated); 0 when the kernel does not keep it.
 */
static __always_inline __u64 sched_ran(struct task_struct *prev)
{
	__u64 arrival, clock;

	if (!bpf_core_field_exists(prev->sched_info.last_arrival) ||
	    !bpf_core_field_exists(struct cfs_rq, rq))
		return 0;
	arrival = BPF_CORE_READ(prev, sched_info.last_arrival);
	clock = BPF_CORE_READ(prev, se.cfs_rq, rq, clock);
	return arrival && clock > arrival ? clock - arrival : 0;
}

/*
 * prev, switching out now, got the CPU back unseen after `since`: when,
 * most likely (within [since, now]).
 */
static __always_inline __u64 unseen_switch_in(struct task_struct *prev, __u64 since, __u64 now)
{
	__u32 zero = 0;
	__u64 *seen = bpf_map_lookup_elem(&last_switch, &zero);

	return offcpu_unseen_switch_in(since, seen ? *seen : 0, sched_ran(prev), now);
}

/* The including tracer's steps (see the top of this file). */
static __always_inline void close_unseen(struct task_struct *prev, __u64 now, bool compat);
static __always_inline void switch_out(void *ctx, struct task_struct *prev, bool preempt,
				       unsigned int prev_state, __u64 now, bool compat);
static __always_inline void switch_in(struct task_struct *next, __u64 now, bool compat);

static __always_inline void on_switch_with(void *ctx, bool preempt, struct task_struct *prev,
					   struct task_struct *next, bool compat)
{
	unsigned int prev_state = task_run_state(prev);
	__u64 now = bpf_ktime_get_ns();

	/* Before switch_out() overwrites it, and whatever prev's state or scope now. */
	close_unseen(prev, now, compat);
	switch_out(ctx, prev, preempt, prev_state, now, compat);
	switch_in(next, now, compat);
	note_switch(now);
}

/*
 * The sched_switch program in two builds (task_state.bpf.h): `name`, with
 * task storage and bpf_loop (5.17+), and `name`_compat for older kernels.
 */
#define UNSEEN_SWITCH_PROGRAMS(name)						\
	SEC("tp_btf/sched_switch")						\
	int BPF_PROG(name, bool preempt, struct task_struct *prev,		\
		     struct task_struct *next)					\
	{									\
		on_switch_with(ctx, preempt, prev, next, false);		\
		return 0;							\
	}									\
	SEC("tp_btf/sched_switch")						\
	int BPF_PROG(name##_compat, bool preempt, struct task_struct *prev,	\
		     struct task_struct *next)					\
	{									\
		on_switch_with(ctx, preempt, prev, next, true);			\
		return 0;							\
	}

#endif /* BPFREC_UNSEEN_SWITCH_BPF_H */
