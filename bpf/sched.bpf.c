// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * sched.bpf.c - run-queue waits and per-thread scheduler metrics:
 * `bpfrec record --sched`.
 *
 * Three tracepoints (tp_btf: no tracefs needed):
 *   sched_switch      prev leaves the CPU: its on-CPU time since it came in
 *                     and the reason it left are counted; its stacks are
 *                     kept in its task state (the stack a later wait is
 *                     charged to); when it is still runnable (preempted) its
 *                     wait starts now. next gets the CPU: a wait ends, its
 *                     length goes into the thread's count, total, max and
 *                     log2 histogram, and, when at least thresh_ns, one
 *                     record into the ring buffer (shorter ones are summed
 *                     per stack and reason in `aggs`, with the code
 *                     offcpu.bpf.c sums with: offcpu_sample.bpf.h).
 *   sched_wakeup(_new) a task in scope becomes runnable: its wait starts.
 *
 * A task the kernel switched in without a sched_switch event naming it
 * (unseen_switch.bpf.h) still has its wait open when it switches out: the
 * wait ends there, at the best estimate of when it got the CPU, rather than
 * being overwritten and lost.
 *
 * The metrics stay in BPF (`sched_threads`, keyed by tid) and user space
 * reads them when it wants them: nothing per event crosses to user space
 * but the waits above the threshold.
 *
 * It shares the sampler's ring buffer, target maps and unwind tables
 * (bpf_map__reuse_fd, like offcpu.bpf.c).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "sched.h"
/* Python walks cut count here (python.bpf.h, through offcpu_sample.bpf.h). */
#define PY_STAT_CUT SCHED_STAT_PY_CUT
#include "scope.bpf.h"
#include "stats.bpf.h"
#include "unwind.bpf.h"
#include "offcpu_sample.bpf.h"
#include "unseen_switch.bpf.h"
#include "task_state.bpf.h"
#include "run_state.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* No callchains at all (the sampler records none either). */
const volatile bool no_stacks = false;

/* What a task in scope carries between tracepoints. */
struct sched_task {
	__u64 last_in;		/* switch-in time; 0 = not seen on a CPU */
	__u64 runnable_since;	/* start of the current wait; 0 = not waiting */
	struct offcpu_sample rec;	/* stacks at the last switch-out; state = SCHED_WAIT_* */
};

TASK_STATE_MAPS(sched_tasks, struct sched_task);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SCHED_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct sched_thread);
} sched_threads SEC(".maps");

STATS_MAP(sched_stats, SCHED_STAT_MAX)

/* The thread's metrics, created on first use; NULL when the map is full. */
static __always_inline struct sched_thread *thread_of(struct task_struct *t)
{
	__u32 tid = t->pid;
	struct sched_thread *m = bpf_map_lookup_elem(&sched_threads, &tid);
	struct sched_thread zero = {};

	if (m)
		return m;
	zero.pid = t->tgid;
	zero.tid = tid;
	bpf_probe_read_kernel_str(zero.comm, sizeof(zero.comm), t->comm);
	bpf_map_update_elem(&sched_threads, &tid, &zero, BPF_NOEXIST);
	m = bpf_map_lookup_elem(&sched_threads, &tid);
	if (!m)
		count(SCHED_STAT_NO_THREAD);
	return m;
}

static __always_inline __u32 log2_slot(__u64 us)
{
	__u32 slot = 0;

	for (int i = 0; i < SCHED_HIST_SLOTS - 1; i++) {
		if (us < 2)
			break;
		us >>= 1;
		slot++;
	}
	return slot;
}

static __always_inline enum sched_switch_reason switch_reason(bool preempt, unsigned int state)
{
	state &= OFFCPU_STATE_MASK;
	if (preempt || state == OFFCPU_STATE_RUNNING)
		return SCHED_SW_PREEMPTED;
	if (state & OFFCPU_STATE_DEAD)
		return SCHED_SW_EXIT;
	if ((state & OFFCPU_STATE_UNINTERRUPTIBLE) && state != OFFCPU_STATE_IDLE)
		return SCHED_SW_IO;
	return SCHED_SW_SLEEP;
}

/* prev (current) leaves the CPU. */
static __always_inline void switch_out(void *ctx, struct task_struct *prev, bool preempt,
				       unsigned int prev_state, __u64 now, bool compat)
{
	__u32 tgid = prev->tgid, tid = prev->pid;
	enum sched_switch_reason why = switch_reason(preempt, prev_state);
	struct sched_thread *m;
	struct sched_task *st;

	if (!tid)
		return;
	if (why == SCHED_SW_EXIT) {
		/*
		 * The sampler's exit hook may have taken the task out of the
		 * target maps already: a thread we counted is still ours.
		 */
		m = bpf_map_lookup_elem(&sched_threads, &tid);
		st = task_state_get(sched_tasks, prev, false, compat);
	} else {
		if (!in_scope(tgid, tid))
			return;
		m = thread_of(prev);
		st = task_state_get(sched_tasks, prev, true, compat);
	}
	if (m) {
		__sync_fetch_and_add(&m->switches[why & 3], 1);
		if (st && st->last_in && now > st->last_in)
			__sync_fetch_and_add(&m->oncpu_ns, now - st->last_in);
		bpf_get_current_comm(m->comm, sizeof(m->comm));
	}
	if (!st) {
		if (why != SCHED_SW_EXIT)
			count(SCHED_STAT_NO_STORAGE);
		return;
	}
	st->last_in = 0;
	st->runnable_since = why == SCHED_SW_PREEMPTED ? now : 0;
	if (why == SCHED_SW_EXIT) {
		task_state_drop(sched_tasks, prev, compat);
		return;
	}

	/* The stacks a later wait is charged to: where it was preempted or fell asleep. */
	st->rec.hdr.kind = SCHED_KIND_SAMPLE;
	st->rec.hdr.pid = tgid;
	st->rec.hdr.tid = tid;
	st->rec.state = why == SCHED_SW_PREEMPTED ? SCHED_WAIT_PREEMPTED : SCHED_WAIT_WOKEN;
	st->rec.flags = 0;
	bpf_get_current_comm(st->rec.comm, sizeof(st->rec.comm));
	if (no_stacks) {
		st->rec.nr_kernel = 0;
		st->rec.nr_user = 0;
		st->rec.nr_py = 0;
	} else {
		walk_stacks(ctx, prev, &st->rec, true, compat);
	}
}

/* task (st its state) got the CPU at `back`: its wait, if one is open, ends then. */
static __always_inline void end_wait(struct task_struct *task, struct sched_task *st, __u64 back)
{
	struct sched_thread *m;
	__u64 delta;

	st->last_in = back;
	if (!st->runnable_since || back < st->runnable_since) {
		st->runnable_since = 0;
		return;
	}
	delta = back - st->runnable_since;
	st->runnable_since = 0;
	count(SCHED_STAT_WAITS);
	m = thread_of(task);
	if (m) {
		__u32 slot = log2_slot(delta / 1000);

		__sync_fetch_and_add(&m->runq_count, 1);
		__sync_fetch_and_add(&m->runq_total_ns, delta);
		if (delta > m->runq_max_ns)
			m->runq_max_ns = delta;
		if (slot < SCHED_HIST_SLOTS)
			__sync_fetch_and_add(&m->hist[slot], 1);
	}
	if (st->rec.hdr.kind != SCHED_KIND_SAMPLE)
		return;		/* never switched out while we watched: no stack to charge */
	st->rec.hdr.cpu = bpf_get_smp_processor_id();
	if (delta < thresh_ns &&
	    aggregate(&st->rec, delta, back, SCHED_KIND_SAMPLE, SCHED_KIND_DESCRIBE, SCHED_STAT_LOST))
		return;
	st->rec.hdr.time = back;
	st->rec.period = delta;
	st->rec.count = 1;
	if (bpf_ringbuf_output(&events, &st->rec, sample_size(sample_frames(&st->rec)),
			       submit_flags()))
		count(SCHED_STAT_LOST);
}

/* next gets the CPU: its wait, if any, ends now. */
static __always_inline void switch_in(struct task_struct *next, __u64 now, bool compat)
{
	__u32 tgid = next->tgid, tid = next->pid;
	struct sched_task *st;

	if (!tid || !in_scope(tgid, tid))
		return;
	st = task_state_get(sched_tasks, next, true, compat);
	if (!st) {
		count(SCHED_STAT_NO_STORAGE);
		return;
	}
	end_wait(next, st, now);
}

/*
 * prev switches out with a wait still open and no switch-in seen since:
 * the kernel gave it the CPU without a sched_switch event naming it. The
 * wait ended then (unseen_switch_in()); its on-CPU time runs from there.
 */
static __always_inline void close_unseen(struct task_struct *prev, __u64 now, bool compat)
{
	struct sched_task *st;

	if (!prev->pid)
		return;
	st = task_state_get(sched_tasks, prev, false, compat);
	if (!st || !st->runnable_since || st->last_in)
		return;
	count(SCHED_STAT_UNPAIRED);
	end_wait(prev, st, unseen_switch_in(prev, st->runnable_since, now));
}

/* p is runnable again: its wait starts, charged to where it fell asleep. */
static __always_inline void woken(struct task_struct *p, bool is_new, bool compat)
{
	__u32 tgid = p->tgid, tid = p->pid;
	struct sched_task *st;

	if (!tid || !in_scope(tgid, tid))
		return;
	st = task_state_get(sched_tasks, p, true, compat);
	if (!st) {
		count(SCHED_STAT_NO_STORAGE);
		return;
	}
	if (st->runnable_since)
		return;
	st->runnable_since = bpf_ktime_get_ns();
	if (is_new || st->rec.hdr.kind != SCHED_KIND_SAMPLE) {
		/* Never switched out while we watched: a wait without a stack. */
		st->rec.hdr.kind = SCHED_KIND_SAMPLE;
		st->rec.hdr.pid = tgid;
		st->rec.hdr.tid = tid;
		st->rec.nr_kernel = 0;
		st->rec.nr_user = 0;
		st->rec.nr_py = 0;
		st->rec.flags = 0;
		bpf_probe_read_kernel_str(st->rec.comm, sizeof(st->rec.comm), p->comm);
	}
	st->rec.state = SCHED_WAIT_WOKEN;
}

/*
 * The programs, in two builds (task_state.bpf.h): task storage and
 * bpf_loop (5.17+), and the compat build for older kernels.
 */
UNSEEN_SWITCH_PROGRAMS(sched_on_switch)

SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_on_wakeup, struct task_struct *p)
{
	woken(p, false, false);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sched_on_wakeup_new, struct task_struct *p)
{
	woken(p, true, false);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_on_wakeup_compat, struct task_struct *p)
{
	woken(p, false, true);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sched_on_wakeup_new_compat, struct task_struct *p)
{
	woken(p, true, true);
	return 0;
}
