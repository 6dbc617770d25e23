/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * offcpu_sample.bpf.h - what the two sched_switch tracers that send struct
 * offcpu_sample (bpf/offcpu.h) do alike: offcpu.bpf.c for blocked
 * intervals, sched.bpf.c for run-queue waits. Each fills a record at a
 * task's switch-out (walk_stacks()), and when the interval ends sends it
 * (its used part: sample_size()) or, when shorter than thresh_ns, sums it
 * into `aggs` (aggregate()), which user space reads when recording ends.
 *
 * The tracers differ in the kinds they send and the counter a loss goes to:
 * the functions take them. An including object declares its counters with
 * STATS_MAP() (stats.bpf.h), and PY_STAT_CUT (python.bpf.h) before
 * including this; the ring buffer and submit_flags() are the sampler's
 * (scope.bpf.h), the user-stack walker unwind.bpf.h's, the Python walk
 * python.bpf.h's (py_procs shared with the sampler).
 */
#ifndef BPFREC_OFFCPU_SAMPLE_BPF_H
#define BPFREC_OFFCPU_SAMPLE_BPF_H

#include <bpf/bpf_helpers.h>

#include "offcpu.h"
#include "scope.bpf.h"
#include "stats.bpf.h"
#include "unwind.bpf.h"
#include "python.bpf.h"

/* Shorter intervals are summed in `aggs` (0: every interval is a sample). */
const volatile __u64 thresh_ns = 0;
/* User stacks walked with the unwind tables (unwind.bpf.h; maps shared with the sampler). */
const volatile bool unwind_cfi = false;

/* One sum per (pid, tid, state, stack): user space shrinks it to one entry without thresh_ns. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct offcpu_agg_key);
	__type(value, struct offcpu_sample);
} aggs SEC(".maps");

/*
 * prev's stacks into rec (prev is current, switching out), kernel frames
 * first, and their numbers. The user stack is walked with the unwind
 * tables (unwind_cfi; compat: the walker's bounded build), else by frame
 * pointers when user_fp, else not at all. A Python thread's Python frames
 * follow (python_frames; compat: the walk's bounded build), as the sampler
 * sends them.
 *
 * Both stacks, with or without -g: the kernel one says why the task waits,
 * the user one who waits; a lone ip would say neither. The kernel stack
 * starts with the frames of this program and its trampoline (how many
 * depends on the kernel); user space cuts them.
 */
static __always_inline void walk_stacks(void *ctx, struct task_struct *prev,
					struct offcpu_sample *rec, bool user_fp, bool compat)
{
	__u32 nr_kernel = 0, nr_user = 0;
	long n;

	n = bpf_get_stack(ctx, rec->frames, PROFILE_MAX_STACK * sizeof(__u64), 0);
	if (n > 0)
		nr_kernel = (n / sizeof(__u64)) & 0x7f;
	if (prev->mm && unwind_cfi) {
		/* current is still prev here: the walker reads prev's registers and stack. */
		nr_user = unwind_user_callchain_with(&rec->frames[nr_kernel], compat);
	} else if (prev->mm && user_fp) {
		n = bpf_get_stack(ctx, &rec->frames[nr_kernel], PROFILE_MAX_STACK * sizeof(__u64),
				  BPF_F_USER_STACK);
		if (n > 0)
			nr_user = (n / sizeof(__u64)) & 0x7f;
	}
	rec->nr_kernel = nr_kernel;
	rec->nr_user = nr_user;
	rec->nr_py = 0;
	/* current is prev: its thread's Python frames. */
	if (python_frames && prev->mm)
		rec->nr_py = py_frames_into(rec->frames, nr_kernel + nr_user, 2 * PROFILE_MAX_STACK,
					    PROFILE_PY_ROOM, prev->tgid, prev->pid, compat);
}

/* The words of b's frames, native and Python, bounded for the verifier. */
static __always_inline __u32 sample_frames(const struct offcpu_sample *b)
{
	return OFFCPU_SAMPLE_WORDS(b) & 0x3ff;
}

/* The bytes of a record with nr frames that go into the ring buffer (its used part). */
static __always_inline __u64 sample_size(__u32 nr)
{
	__u64 size = OFFCPU_SAMPLE_SIZE(nr);

	/* Never true; keeps the bound visible to the verifier. */
	if (size > sizeof(struct offcpu_sample))
		size = sizeof(struct offcpu_sample);
	return size;
}

/*
 * Sum a short interval of b (delta ns, ended at now) into its aggregate;
 * false when there is no room for one. b is the task's record, of the
 * tracer's sample kind `kind`, and stays so. The first interval of an
 * aggregate also goes out as describe_kind, to have user space describe the
 * process while it lives; a full ring buffer counts it as lost_stat.
 */
static __always_inline bool aggregate(struct offcpu_sample *b, __u64 delta, __u64 now,
				      __u32 kind, __u32 describe_kind, __u32 lost_stat)
{
	struct offcpu_agg_key key = {};
	struct offcpu_sample *a;
	__u32 nr = sample_frames(b);
	__u64 h = 0xcbf29ce484222325ull;	/* FNV-1a over whole frames */

	/* Every frame a record can carry (fewer Python ones than it has room for). */
	for (__u32 i = 0; i < 2 * PROFILE_MAX_STACK + PROFILE_PY_WORDS * PY_MAX_FRAMES; i++) {
		if (i >= nr)
			break;
		h = (h ^ b->frames[i]) * 0x100000001b3ull;
	}
	key.pid = b->hdr.pid;
	key.tid = b->hdr.tid;
	key.state = b->state;
	key.nr_kernel = b->nr_kernel;
	key.nr_user = b->nr_user;
	key.nr_py = b->nr_py;
	key.stack_hash = h;
	/* A sum has no room for a user stack copy (user space refuses the combination). */
	b->flags = 0;

	a = bpf_map_lookup_elem(&aggs, &key);
	if (a) {
		__sync_fetch_and_add(&a->period, delta);
		__sync_fetch_and_add(&a->count, 1);
		if (now > a->hdr.time)
			a->hdr.time = now;
		return true;
	}
	b->period = delta;
	b->count = 1;
	b->hdr.time = now;
	if (bpf_map_update_elem(&aggs, &key, b, BPF_NOEXIST)) {
		/* Another CPU inserted it meanwhile: add to theirs. */
		a = bpf_map_lookup_elem(&aggs, &key);
		if (!a)
			return false;	/* full */
		__sync_fetch_and_add(&a->period, delta);
		__sync_fetch_and_add(&a->count, 1);
		return true;
	}
	/* A new aggregate: have user space describe the process while it lives. */
	b->hdr.kind = describe_kind;
	if (bpf_ringbuf_output(&events, b, sample_size(nr), submit_flags()))
		count(lost_stat);
	b->hdr.kind = kind;	/* a later interval of the task is a sample again */
	return true;
}

#endif /* BPFREC_OFFCPU_SAMPLE_BPF_H */
