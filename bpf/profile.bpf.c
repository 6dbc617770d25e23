// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * profile.bpf.c - the sampler behind `bpfrec record`.
 *
 * on_sample (or on_sample_cfi, for -g) runs on every cpu-clock (or
 * hardware) perf event tick of every CPU it is attached to. It decides whether the interrupted task is in scope
 * (filter_mode and the target maps), then fills a per-CPU profile_sample
 * with who, where, when and, with capture_stacks, both stacks, and copies
 * its used part into the ring buffer (bpf_ringbuf_output: reservations
 * must have a constant size, samples do not). The perf event itself carries no PERF_SAMPLE_CALLCHAIN: with
 * it, bpf_get_stack() would hand back perf's prepared chain with context
 * markers in it.
 *
 * Scope follows the target processes: a fork of a target adds the child
 * (sched_process_fork), like perf's inherit=1. Exits and execs of tasks in
 * scope are reported so user space can forget or re-describe the process.
 *
 * Nothing here blocks or allocates. Every sample in scope is counted
 * (PROFILE_STAT_SAMPLES) before anything can fail, and one the ring buffer
 * has no room for is counted as lost (PROFILE_STAT_LOST), which user space
 * turns into LOST_SAMPLES records: written + lost = seen.
 * Ring-buffer wakeups are only forced when the buffer is half full, or for
 * the first sample of a process (see PROFILE_SAMPLE_NEW_PROC): user space
 * drains it on a timer anyway, and waking it per sample costs more than the
 * sample.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "profile.h"
#include "scope.bpf.h"
#include "stats.bpf.h"
#include "ustack.bpf.h"
#include "unwind.bpf.h"
#include "perf_ctx.bpf.h"
#include "python.bpf.h"

/* bpf_get_stack() is GPL-only: the kernel accepts this dual licence as GPL-compatible. */
char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* -g: both stacks; without it only the interrupted ip and the user ip. */
const volatile bool capture_stacks = false;
/*
 * --call-graph dwarf: bytes of user stack per sample (0: none). The user
 * frames are then not walked (perf's exclude_callchain_user): the user
 * registers and stack follow the kernel frames instead.
 */
const volatile __u32 stack_user_size = 0;
/*
 * Without bpf_ringbuf_reserve_dynptr (before 6.0) a ring-buffer record has a
 * constant size: each DWARF sample then reserves its longest form
 * (send_with_ustack_fixed), and user space keeps the used part.
 */
const volatile bool ustack_fixed = false;
/*
 * -g: bytes of user stack to send with a sample whose walk met code the
 * tables do not know yet (PROFILE_SAMPLE_LATE); 0: never.
 */
const volatile __u32 late_stack_size = 0;
/*
 * A stack copy only while the ring buffer holds less than this (a quarter
 * of it): copies are 16 KiB and come in bursts (every sample of a starting
 * process), and they must never crowd out samples.
 */
const volatile __u64 late_ring_room = 0;
/*
 * Fork, exit and exec notices have a ring of their own: a flood of samples
 * must not crowd them out, or the recorder would miss an exit and describe a
 * reused pid with the old program's maps.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 10);
} task_events SEC(".maps");

/* User processes that already had a sample: see PROFILE_SAMPLE_NEW_PROC. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PROFILE_SEEN_TGIDS);
	__type(key, __u32);
	__type(value, __u8);
} seen_tgids SEC(".maps");

/* Where a sample is put together before its used part goes to the ring buffer. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct profile_sample);
} scratch SEC(".maps");

STATS_MAP(stats, PROFILE_STAT_MAX)

/* True the first time a user process is sampled (since exec, or eviction). */
static __always_inline bool first_sample_of(__u32 tgid)
{
	__u8 one = 1;

	if (bpf_map_lookup_elem(&seen_tgids, &tgid))
		return false;
	bpf_map_update_elem(&seen_tgids, &tgid, &one, BPF_ANY);
	return true;
}

/* Stack copies left per process for PROFILE_SAMPLE_LATE (see PROFILE_LATE_COPIES). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PROFILE_SEEN_TGIDS);
	__type(key, __u32);
	__type(value, __u32);
} late_copies SEC(".maps");

/*
 * Whether the walk just made (unwind_scratch) met code in no known
 * mapping, and tgid may still send a stack copy for it; takes one copy.
 */
static __always_inline bool late_copy_wanted(__u32 tgid)
{
	struct unwind_walk_state *st;
	__u32 zero = 0, left = PROFILE_LATE_COPIES, *n;

	st = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!st || !st->unmapped)
		return false;
	n = bpf_map_lookup_elem(&late_copies, &tgid);
	if (!n) {
		bpf_map_update_elem(&late_copies, &tgid, &left, BPF_ANY);
		n = bpf_map_lookup_elem(&late_copies, &tgid);
		if (!n)
			return false;
	}
	if (!*n) {
		count(PROFILE_STAT_LATE_SPENT);
		return false;
	}
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > late_ring_room) {
		count(PROFILE_STAT_LATE_BUSY);
		return false;
	}
	*n -= 1;
	count(PROFILE_STAT_LATE);
	return true;
}

/* The user registers of the current task, for send_with_ustack(). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct profile_ustack);
} ustack_hdr SEC(".maps");

/*
 * The sample's used part (size bytes of s), its user registers and stack,
 * straight into a ring-buffer record: the stack is copied from user memory
 * into the record, never through the scratch buffer. Returns 0, or an
 * error when nothing was sent (the ring buffer is full).
 */
static __always_inline long send_with_ustack(struct profile_sample *s, __u64 size, __u64 flags,
					     __u32 stack_size, __u32 flag)
{
	struct bpf_dynptr rec;
	struct profile_ustack *u;
	__u32 zero = 0, room = 0;
	__u64 sp;
	long err;

	u = bpf_map_lookup_elem(&ustack_hdr, &zero);
	if (!u || size > sizeof(*s))	/* never true; a sample not sent is counted lost */
		return -1;
	sp = ustack_read_regs(current_task(), u, stack_size);
	if (u->abi != PROFILE_UREGS_ABI_NONE)
		room = ustack_room(stack_size);
	s->flags |= flag;
	err = bpf_ringbuf_reserve_dynptr(&events, size + sizeof(*u) + room, 0, &rec);
	if (err) {
		bpf_ringbuf_discard_dynptr(&rec, 0);
		return err;
	}
	bpf_dynptr_write(&rec, 0, s, size, 0);
	if (room)
		u->dyn_size = ustack_copy(&rec, size + sizeof(*u), sp, stack_size);
	bpf_dynptr_write(&rec, size, u, sizeof(*u), 0);
	bpf_ringbuf_submit_dynptr(&rec, flags);
	return 0;
}

/*
 * send_with_ustack() for kernels without dynptrs: the same layout (the
 * sample's used part, the registers, the copy) in a record reserved at its
 * longest; the sample's frame counts and dyn_size say where each part ends.
 */
static __always_inline long send_with_ustack_fixed(struct profile_sample *s, __u64 size,
						   __u64 flags, __u32 stack_size, __u32 flag)
{
	const __u32 room = ustack_room(stack_size);
	struct profile_ustack *u;
	__u32 zero = 0;
	char *rec;
	__u64 sp;

	u = bpf_map_lookup_elem(&ustack_hdr, &zero);
	if (!u || size > sizeof(*s))	/* never true; a sample not sent is counted lost */
		return -1;
	sp = ustack_read_regs(current_task(), u, stack_size);
	s->flags |= flag;
	rec = bpf_ringbuf_reserve(&events, sizeof(*s) + sizeof(*u) + room, 0);
	if (!rec)
		return -1;
	size &= 0xffff;		/* a bound the verifier keeps at each use below */
	if (size > sizeof(*s)) {
		bpf_ringbuf_discard(rec, 0);
		return -1;
	}
	bpf_probe_read_kernel(rec, size, s);
	if (u->abi != PROFILE_UREGS_ABI_NONE)
		u->dyn_size = ustack_copy_mem(rec + size + sizeof(*u), room, sp, stack_size);
	bpf_probe_read_kernel(rec + size, sizeof(*u), u);
	bpf_ringbuf_submit(rec, flags);
	return 0;
}

/*
 * The Python frames of the current thread (python.bpf.h) into s after its
 * `at` native frames: how many.
 */
static __always_inline __u32 python_frames_into(struct profile_sample *s, __u32 tgid, __u32 tid,
						__u64 at, bool bounded)
{
	__u32 n = py_frames_into(s->frames, at, 2 * PROFILE_MAX_STACK, PROFILE_PY_ROOM,
				 tgid, tid, bounded);

	if (n)
		count(PROFILE_STAT_PY_SAMPLES);
	return n;
}

/* How a sample program walks user stacks with the tables (a constant in each). */
enum sample_walk {
	SAMPLE_WALK_NONE,	/* it does not: no -g, fp or dwarf */
	SAMPLE_WALK_LOOP,	/* with bpf_loop (5.17+) */
	SAMPLE_WALK_BOUNDED,	/* with bounded loops, for older kernels */
};

/*
 * One sample. walk compiles the table walker in or out: a program that
 * merely contains bpf_loop() does not load before 5.17.
 */
static __always_inline int sample(void *ctx, enum sample_walk walk)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	__u32 zero = 0, nr_kernel = 0, nr_user = 0;
	const struct bpfrec_perf_ctx *pctx = (const void *)ctx;
	struct profile_sample *s;
	struct task_struct *task;
	struct pt_regs *uregs;
	__u64 ip, size, flags;
	bool late = false;
	long n, err;

	if (!in_scope(tgid, tid))
		return 0;
	count(PROFILE_STAT_SAMPLES);

	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	s->hdr.kind = PROFILE_KIND_SAMPLE;
	s->hdr.cpu = bpf_get_smp_processor_id();
	s->hdr.time = bpf_ktime_get_ns();
	s->hdr.pid = tgid;
	s->hdr.tid = tid;
	s->period = pctx->sample_period;
	ip = pctx->ip;
	s->ip = ip;
	s->flags = perf_ctx_in_kernel(ctx) ? PROFILE_SAMPLE_KERNEL : 0;
	s->user_ip = 0;
	s->nr_py = 0;
	bpf_get_current_comm(s->comm, sizeof(s->comm));

	/* The user ip, also for samples taken in kernel mode; none for kernel threads. */
	task = current_task();
	if (BPF_CORE_READ(task, mm)) {
		if (first_sample_of(tgid))
			s->flags |= PROFILE_SAMPLE_NEW_PROC;
		if (s->flags & PROFILE_SAMPLE_KERNEL) {
			uregs = task_user_regs(task);
			s->user_ip = BPF_CORE_READ(uregs, ip);
		} else {
			s->user_ip = ip;
		}
	}

	if (capture_stacks) {
		if (s->flags & PROFILE_SAMPLE_KERNEL) {
			n = bpf_get_stack(ctx, s->frames, PROFILE_MAX_STACK * sizeof(__u64), 0);
			if (n > 0)
				nr_kernel = (n / sizeof(__u64)) & 0x7f;	/* <= 127 */
		}
		if (s->user_ip && walk != SAMPLE_WALK_NONE) {
			nr_user = unwind_user_callchain_with(&s->frames[nr_kernel],
							     walk == SAMPLE_WALK_BOUNDED);
			late = late_stack_size && late_copy_wanted(tgid);
		} else if (s->user_ip && !stack_user_size) {
			n = bpf_get_stack(ctx, &s->frames[nr_kernel],
					  PROFILE_MAX_STACK * sizeof(__u64), BPF_F_USER_STACK);
			if (n > 0)
				nr_user = (n / sizeof(__u64)) & 0x7f;
		}
	}
	s->nr_kernel = nr_kernel;
	s->nr_user = nr_user;
	/* Python frames with -g, walked as bounded loops where the table walk is (python.bpf.h). */
	if (python_frames && walk != SAMPLE_WALK_NONE && s->user_ip)
		s->nr_py = python_frames_into(s, tgid, tid, nr_kernel + nr_user,
					      walk == SAMPLE_WALK_BOUNDED);
	size = PROFILE_SAMPLE_SIZE_PY(nr_kernel + nr_user, s->nr_py);
	if (size > sizeof(*s))	/* never true; keeps the bound visible to the verifier */
		return 0;
	flags = (s->flags & PROFILE_SAMPLE_NEW_PROC) ? BPF_RB_FORCE_WAKEUP : submit_flags();
	if (stack_user_size && ustack_fixed)
		err = send_with_ustack_fixed(s, size, flags, stack_user_size, PROFILE_SAMPLE_USTACK);
	else if (stack_user_size)
		err = send_with_ustack(s, size, flags, stack_user_size, PROFILE_SAMPLE_USTACK);
	else if (late && ustack_fixed)
		err = send_with_ustack_fixed(s, size, flags, late_stack_size, PROFILE_SAMPLE_LATE);
	else if (late)
		err = send_with_ustack(s, size, flags, late_stack_size, PROFILE_SAMPLE_LATE);
	else
		err = bpf_ringbuf_output(&events, s, size, flags);
	/* No room for the copy: the sample still goes, with the walk made here. */
	if (err && late) {
		count(PROFILE_STAT_LATE_BUSY);
		s->flags &= ~PROFILE_SAMPLE_LATE;
		err = bpf_ringbuf_output(&events, s, size, flags);
	}
	if (err)
		count(PROFILE_STAT_LOST);
	return 0;
}

/* Without -g, with --call-graph fp or dwarf: loads on every supported kernel. */
SEC("perf_event")
int on_sample(void *ctx)
{
	return sample(ctx, SAMPLE_WALK_NONE);
}

/*
 * -g (--call-graph cfi): the user stack is walked here with the unwind
 * tables user space loads from each file's .eh_frame (unwind.bpf.h), frame
 * pointers only where a frame has no table; an ordinary callchain results.
 */
SEC("perf_event")
int on_sample_cfi(void *ctx)
{
	return sample(ctx, SAMPLE_WALK_LOOP);
}

/* The same on kernels without bpf_loop (before 5.17). */
SEC("perf_event")
int on_sample_cfi_bounded(void *ctx)
{
	return sample(ctx, SAMPLE_WALK_BOUNDED);
}

static __always_inline void send_task(__u32 kind, struct task_struct *p, __u32 ppid,
				      __u32 ptid, __u32 group_dead)
{
	struct profile_task *t;

	t = bpf_ringbuf_reserve(&task_events, sizeof(*t), 0);
	if (!t) {
		count(PROFILE_STAT_LOST_TASK);
		return;
	}
	t->hdr.kind = kind;
	t->hdr.cpu = bpf_get_smp_processor_id();
	t->hdr.time = bpf_ktime_get_ns();
	t->hdr.pid = BPF_CORE_READ(p, tgid);
	t->hdr.tid = BPF_CORE_READ(p, pid);
	t->ppid = ppid;
	t->ptid = ptid;
	t->group_dead = group_dead;
	t->pad = 0;
	BPF_CORE_READ_STR_INTO(&t->comm, p, comm);
	bpf_ringbuf_submit(t, submit_flags());
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ptid = parent->pid;
	__u32 ctgid = child->tgid, ctid = child->pid;
	__u8 one = 1;

	if (!in_scope(ptgid, ptid))
		return 0;
	if (filter_mode == PROFILE_FILTER_TGID && ctgid != ptgid)
		bpf_map_update_elem(&target_tgids, &ctgid, &one, BPF_ANY);
	else if (filter_mode == PROFILE_FILTER_TID)
		bpf_map_update_elem(&target_tids, &ctid, &one, BPF_ANY);
	send_task(PROFILE_KIND_FORK, child, ptgid, ptid, 0);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid, tid = p->pid;
	/* do_exit() has already dropped this thread from signal->live. */
	__u32 group_dead = BPF_CORE_READ(p, signal, live.counter) == 0;

	if (!in_scope(tgid, tid))
		return 0;
	send_task(PROFILE_KIND_EXIT, p, 0, 0, group_dead);
	/* A reused pid is a new process: its first sample wakes user space again. */
	if (group_dead) {
		bpf_map_delete_elem(&seen_tgids, &tgid);
		bpf_map_delete_elem(&late_copies, &tgid);
	}
	/* Keep the maps bounded and a reused pid out of scope. */
	if (filter_mode == PROFILE_FILTER_TGID && group_dead)
		bpf_map_delete_elem(&target_tgids, &tgid);
	else if (filter_mode == PROFILE_FILTER_TID)
		bpf_map_delete_elem(&target_tids, &tid);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	if (!in_scope(tgid, p->pid))
		return 0;
	/* A new image: describe it while it runs, like a new process. */
	bpf_map_delete_elem(&seen_tgids, &tgid);
	bpf_map_delete_elem(&late_copies, &tgid);
	send_task(PROFILE_KIND_EXEC, p, 0, 0, 0);
	return 0;
}
