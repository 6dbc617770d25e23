/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * unwind.bpf.h - the user-stack walker over unwind tables, for BPF
 * (a prototype: nothing in the recorder includes it yet; unwind_check.bpf.c
 * compiles it and lets the verifier check it). The algorithm is the
 * reference walker's (symbolize/cfiwalk.c, Documentation/unwinding.md),
 * with the same layout and helpers (unwind.h); only the memory differs:
 *   - rows come from the array map unwind_rows (all tables back to back,
 *     user space places each one and fills unwind_procs to point at it);
 *   - stack words are read with bpf_probe_read_user from the live stack.
 * One frame per bpf_loop iteration, at most UNWIND_MAX_FRAMES; the state
 * lives in a per-CPU scratch value because the callback cannot keep map
 * pointers across iterations. Every walk's stop reason is counted per CPU
 * in unwind_stops.
 */
#ifndef BPFREC_UNWIND_BPF_H
#define BPFREC_UNWIND_BPF_H

#include "unwind.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << 20);	/* the memory bound in rows; resized by user space */
	__type(key, __u32);
	__type(value, struct unwind_row);
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);		/* tgid */
	__type(value, struct unwind_proc);
} unwind_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_walk_state);
} unwind_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UNWIND_STOP_MAX);
	__type(key, __u32);
	__type(value, __u64);
} unwind_stops SEC(".maps");

/*
 * The binary searches of UNWIND_LAST_LE, one step per bpf_loop iteration:
 * written as one bounded loop, the verifier follows every path through
 * its steps (2^steps) and gives up past a million instructions; a
 * bpf_loop callback is checked once. Same steps, same answer.
 */
struct unwind_search {
	const struct unwind_proc *proc;	/* mapping search: its maps */
	__u64 key;
	__u32 first;			/* row search: the table's first row */
	__u32 lo, hi;			/* the answer is lo - 1 */
};

static int unwind_row_step(__u32 step, void *ctx)
{
	struct unwind_search *s = ctx;
	const struct unwind_row *r;
	__u32 mid, idx;

	if (s->lo >= s->hi)
		return 1;
	mid = s->lo + (s->hi - s->lo) / 2;
	idx = s->first + mid;
	r = bpf_map_lookup_elem(&unwind_rows, &idx);
	if (r && r->pc <= s->key)
		s->lo = mid + 1;
	else
		s->hi = mid;	/* past the store's end counts as "after key" */
	return 0;
}

static int unwind_mapping_step(__u32 step, void *ctx)
{
	struct unwind_search *s = ctx;
	__u32 mid;

	if (s->lo >= s->hi || !s->proc)
		return 1;
	mid = s->lo + (s->hi - s->lo) / 2;
	if (s->proc->maps[mid & (UNWIND_MAX_MAPPINGS - 1)].start <= s->key)
		s->lo = mid + 1;
	else
		s->hi = mid;
	return 0;
}

/* One frame of st: -1 to go on with the caller's registers in st, or why it ends. */
static __always_inline int unwind_step(struct unwind_walk_state *st, __u32 frame)
{
	const struct unwind_mapping *m;
	const struct unwind_proc *proc;
	const struct unwind_row *row;
	struct unwind_search s;
	__u64 key, cfa, ra, slot;
	__u32 nr_maps, idx;
	int stop;

	proc = bpf_map_lookup_elem(&unwind_procs, &st->tgid);
	if (!proc)
		return UNWIND_STOP_NO_MAPPING;
	nr_maps = proc->nr < UNWIND_MAX_MAPPINGS ? proc->nr : UNWIND_MAX_MAPPINGS;
	s.proc = proc;
	s.key = st->pc;
	s.first = 0;
	s.lo = 0;
	s.hi = nr_maps;
	bpf_loop(UNWIND_MAPPING_STEPS, unwind_mapping_step, &s, 0);
	if (s.lo == 0)
		return UNWIND_STOP_NO_MAPPING;
	m = &proc->maps[(s.lo - 1) & (UNWIND_MAX_MAPPINGS - 1)];
	if (st->pc >= m->end)
		return UNWIND_STOP_NO_MAPPING;
	if (!m->nr_rows)
		return UNWIND_STOP_NO_TABLE;
	key = st->pc - (frame ? 1 : 0) - m->bias;
	if (key > 0xffffffffULL)
		return UNWIND_STOP_NO_ROW;
	s.proc = NULL;
	s.key = key;
	s.first = m->first_row;
	s.lo = 0;
	s.hi = m->nr_rows;
	bpf_loop(UNWIND_SEARCH_STEPS, unwind_row_step, &s, 0);
	if (s.lo == 0)
		return UNWIND_STOP_NO_ROW;
	idx = s.first + s.lo - 1;
	row = bpf_map_lookup_elem(&unwind_rows, &idx);
	if (!row)
		return UNWIND_STOP_NO_ROW;
	stop = unwind_frame_cfa(row->rule, st->pc, st->sp, st->bp, st->bp_known, &cfa);
	if (stop >= 0)
		return stop;
	if (cfa <= st->sp)
		return UNWIND_STOP_BAD_FRAME;
	if (bpf_probe_read_user(&ra, sizeof(ra), (const void *)(cfa - 8)))
		return UNWIND_STOP_STACK_READ;
	switch (unwind_rule_rbp(row->rule)) {
	case UNWIND_RBP_AT_CFA:
		slot = cfa + (__s64)unwind_rule_rbp_off(row->rule);
		if (slot < st->sp)
			break;	/* popped in an epilogue: the register holds it (cfiwalk.c) */
		if (bpf_probe_read_user(&st->bp, sizeof(st->bp), (const void *)slot))
			return UNWIND_STOP_STACK_READ;
		st->bp_known = 1;
		break;
	case UNWIND_RBP_LOST:
		st->bp_known = 0;
		break;
	}
	if (!ra)
		return UNWIND_STOP_ROOT;
	st->pc = ra;
	st->sp = cfa;
	return -1;
}

static int unwind_loop_cb(__u32 frame, void *unused)
{
	__u32 zero = 0;
	struct unwind_walk_state *st = bpf_map_lookup_elem(&unwind_scratch, &zero);
	int stop;

	if (!st)
		return 1;
	if (st->nr >= UNWIND_MAX_FRAMES) {
		st->stop = UNWIND_STOP_DEPTH;
		return 1;
	}
	st->pcs[st->nr & UNWIND_MAX_FRAMES] = st->pc;
	st->nr++;
	stop = unwind_step(st, frame);
	if (stop < 0)
		return 0;
	st->stop = (__u32)stop;
	return 1;
}

/*
 * Walk the current task's user stack from its user registers (also when
 * the sample interrupted the kernel). NULL for tasks without user memory;
 * else the per-CPU state with pcs[0, nr) and the stop reason, valid until
 * the next walk on this CPU.
 */
static __always_inline struct unwind_walk_state *unwind_user_stack(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct unwind_walk_state *st;
	struct pt_regs *regs;
	__u32 zero = 0, stop;
	__u64 *count;

	if (!task->mm)
		return NULL;
	st = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!st)
		return NULL;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	st->pc = regs->ip;
	st->sp = regs->sp;
	st->bp = regs->bp;
	st->tgid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	st->bp_known = 1;
	st->nr = 0;
	st->stop = UNWIND_STOP_DEPTH;
	bpf_loop(UNWIND_MAX_FRAMES + 1, unwind_loop_cb, NULL, 0);
	stop = st->stop < UNWIND_STOP_MAX ? st->stop : UNWIND_STOP_DEPTH;
	count = bpf_map_lookup_elem(&unwind_stops, &stop);
	if (count)
		(*count)++;
	return st;
}

/*
 * Walk the current task's user stack into frames[0, PROFILE_MAX_STACK) (a
 * sample's user callchain, pcs[0] = the user ip first); how many frames.
 */
static __always_inline __u32 unwind_user_callchain(__u64 *frames)
{
	struct unwind_walk_state *st = unwind_user_stack();
	__u32 n;

	if (!st)
		return 0;
	n = st->nr;
	if (n > UNWIND_MAX_FRAMES)
		n = UNWIND_MAX_FRAMES;
	if (bpf_probe_read_kernel(frames, n * sizeof(__u64), st->pcs))
		return 0;
	return n;
}

#endif /* BPFREC_UNWIND_BPF_H */
