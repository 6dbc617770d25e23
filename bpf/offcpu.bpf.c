// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * offcpu.bpf.c - where tasks in scope wait: `bpfrec record --off-cpu`.
 *
 * on_switch runs on every context switch (tp_btf/sched_switch: no tracefs
 * needed). When a task in scope switches out, its switch-out time, its
 * state and both stacks go into its task state (task_state.bpf.h: task
 * storage, or a tid-keyed hash in on_switch_compat for kernels before
 * 5.17, so nothing leaks when a task dies blocked). When
 * it switches back in, the blocked time becomes the sample's period and
 * the stored record, already in its final layout, is copied into the ring
 * buffer as is: the stacks are walked once, at switch-out. A switch-in the
 * kernel does not report is noticed at the task's next switch-out, which
 * closes the interval first (close_unseen()): no interval is overwritten.
 *
 * This is a separate BPF object from profile.bpf.c, so a recording without
 * --off-cpu loads nothing of it and the sampler stays as it was. It shares
 * the sampler's maps through bpf_map__reuse_fd(): the ring buffer (one
 * consumer, one time-sorted stream, one batch in user space) and the target
 * maps (the same pid/tid filter, including the children the sampler's fork
 * hook adds). Its own losses go into its own stats map so that they can be
 * written as LOST_SAMPLES of the offcpu-time event.
 *
 * With thresh_ns set, intervals shorter than it are summed per (pid, tid,
 * state, stack) in `aggs` and user space writes one sample per entry when
 * recording ends; the first interval of each entry sends a DESCRIBE record
 * so the process gets described while it still exists.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "offcpu.h"
/* Python walks cut count here (python.bpf.h, through offcpu_sample.bpf.h). */
#define PY_STAT_CUT OFFCPU_STAT_PY_CUT
#include "scope.bpf.h"
#include "stats.bpf.h"
#include "ustack.bpf.h"
#include "unwind.bpf.h"
#include "offcpu_sample.bpf.h"
#include "unseen_switch.bpf.h"
#include "task_state.bpf.h"
#include "run_state.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* --call-graph dwarf: bytes of user stack (<= OFFCPU_USTACK_MAX; 0: none). */
const volatile __u32 stack_user_size = 0;

/* Our own (events and the target maps are in scope.bpf.h, aggs in offcpu_sample.bpf.h). */
TASK_STATE_MAPS(blocked, struct offcpu_sample);

/* --call-graph dwarf (current build only): the user registers and stack at switch-out. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_ustack);
} blocked_ustack SEC(".maps");

STATS_MAP(offcpu_stats, OFFCPU_STAT_MAX)

/* --call-graph dwarf: keep prev's user registers and stack with its sample. */
static __always_inline void save_ustack(struct task_struct *prev, struct offcpu_sample *b)
{
	struct offcpu_ustack *us;
	struct bpf_dynptr data;
	__u64 sp;

	us = bpf_task_storage_get(&blocked_ustack, prev, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!us) {
		count(OFFCPU_STAT_NO_STORAGE);
		return;
	}
	sp = ustack_read_regs(prev, &us->u, stack_user_size);
	bpf_dynptr_from_mem(us->data, sizeof(us->data), 0, &data);
	if (us->u.abi != PROFILE_UREGS_ABI_NONE)
		us->u.dyn_size = ustack_copy(&data, 0, sp, stack_user_size);
	b->flags = PROFILE_SAMPLE_USTACK;
}

/* prev (current) is switching out: remember when, why and where. */
static __always_inline void switch_out(void *ctx, struct task_struct *prev, bool preempt,
				       unsigned int prev_state, __u64 now, bool compat)
{
	__u32 tgid = prev->tgid, tid = prev->pid, state;
	struct offcpu_sample *b;

	/* The idle task does not wait, and a dead task never comes back. */
	if (!tid)
		return;
	state = preempt ? OFFCPU_STATE_RUNNING : prev_state & OFFCPU_STATE_MASK;
	if (state & OFFCPU_STATE_DEAD) {
		task_state_drop(blocked, prev, compat);
		return;
	}
	if (!in_scope(tgid, tid))
		return;
	count(OFFCPU_STAT_BLOCKED);
	b = task_state_get(blocked, prev, true, compat);
	if (!b) {
		/* Nowhere to keep it: this interval is lost, and said so. */
		count(OFFCPU_STAT_NO_STORAGE);
		count(OFFCPU_STAT_LOST);
		return;
	}
	b->hdr.kind = OFFCPU_KIND_SAMPLE;
	b->hdr.time = now;
	b->hdr.pid = tgid;
	b->hdr.tid = tid;
	b->period = 0;
	b->count = 1;
	b->state = state;
	b->flags = 0;
	bpf_get_current_comm(b->comm, sizeof(b->comm));
	/* The user stack by frame pointers unless it is copied (save_ustack()). */
	walk_stacks(ctx, prev, b, !stack_user_size, compat);
	/* (--off-cpu with dwarf needs 6.0: user space never asks the compat build.) */
	if (stack_user_size && !compat)
		save_ustack(prev, b);
}

/*
 * The sample (size bytes of b) followed by the user registers and the valid
 * part of the stack saved at switch-out. Returns the reservation's error.
 */
static __always_inline long send_with_ustack(struct task_struct *task, struct offcpu_sample *b,
					     __u64 size)
{
	struct offcpu_ustack *us = bpf_task_storage_get(&blocked_ustack, task, NULL, 0);
	struct bpf_dynptr rec;
	__u64 len;
	long err;

	if (!us) {
		b->flags = 0;
		return bpf_ringbuf_output(&events, b, size, submit_flags());
	}
	len = sizeof(us->u) + us->u.dyn_size;
	if (len > sizeof(*us))	/* never true; keeps the bound visible to the verifier */
		len = sizeof(*us);
	err = bpf_ringbuf_reserve_dynptr(&events, size + len, 0, &rec);
	if (err) {
		bpf_ringbuf_discard_dynptr(&rec, 0);
		return err;
	}
	bpf_dynptr_write(&rec, 0, b, size, 0);
	bpf_dynptr_write(&rec, size, us, len, 0);
	bpf_ringbuf_submit_dynptr(&rec, submit_flags());
	return 0;
}

/* task's stored switch-out, if it has one not yet sent. */
static __always_inline struct offcpu_sample *open_interval(struct task_struct *task, bool compat)
{
	struct offcpu_sample *b = task_state_get(blocked, task, false, compat);

	if (!b || !b->hdr.time || b->hdr.kind != OFFCPU_KIND_SAMPLE)
		return NULL;
	return b;
}

/* task (b its stored switch-out) got the CPU back at `back`: send how long it was away. */
static __always_inline void close_interval(struct task_struct *task, struct offcpu_sample *b,
					   __u64 back, bool compat)
{
	__u64 delta, size;
	long err;

	delta = back - b->hdr.time;
	b->hdr.cpu = bpf_get_smp_processor_id();
	count(OFFCPU_STAT_INTERVALS);
	if (delta < thresh_ns &&
	    aggregate(b, delta, back, OFFCPU_KIND_SAMPLE, OFFCPU_KIND_DESCRIBE, OFFCPU_STAT_LOST)) {
		b->hdr.time = 0;
		return;
	}
	b->hdr.kind = OFFCPU_KIND_SAMPLE;
	b->hdr.time = back;
	b->period = delta;
	b->count = 1;
	size = sample_size(sample_frames(b));
	if ((b->flags & PROFILE_SAMPLE_USTACK) && !compat)
		err = send_with_ustack(task, b, size);
	else
		err = bpf_ringbuf_output(&events, b, size, submit_flags());
	if (err)
		count(OFFCPU_STAT_LOST);
	b->hdr.time = 0;	/* sent: a second switch-in must not send it again */
}

/*
 * prev is switching out while its last switch-out is still open: the
 * kernel gave it the CPU back without a sched_switch event naming it, and
 * the next switch-out would overwrite the interval. Close it first, ended
 * when the task most likely got the CPU back (offcpu_unseen_switch_in()).
 */
static __always_inline void close_unseen(struct task_struct *prev, __u64 now, bool compat)
{
	struct offcpu_sample *b = open_interval(prev, compat);

	if (!b)
		return;
	count(OFFCPU_STAT_UNPAIRED);
	close_interval(prev, b, unseen_switch_in(prev, b->hdr.time, now), compat);
}

/* next is switching in: send how long it was away, from where. */
static __always_inline void switch_in(struct task_struct *next, __u64 now, bool compat)
{
	struct offcpu_sample *b = open_interval(next, compat);

	if (b)
		close_interval(next, b, now, compat);
}

/*
 * on_switch (task storage and bpf_loop, 5.17+) and on_switch_compat (state
 * keyed by tid, stacks walked with bounded loops).
 */
UNSEEN_SWITCH_PROGRAMS(on_switch)
