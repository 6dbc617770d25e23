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
 * One frame per bpf_loop iteration, at most UNWIND_MAX_FRAMES, in a
 * per-CPU scratch value (too big for the BPF stack). A frame the tables
 * cannot describe is stepped over by frame pointer while rbp is known, as
 * in the reference walker. Every walk's stop reason is counted per CPU in
 * unwind_stops, its frames and fallbacks in unwind_stats.
 *
 * Cost (Documentation/unwinding.md): the process's mappings are looked up
 * once per walk, the last frame's mapping is tried before searching them
 * (consecutive frames are mostly in one file), and a saved rbp next to the
 * return address is read with it in one bpf_probe_read_user.
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

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UNWIND_STAT_MAX);
	__type(key, __u32);		/* enum unwind_stat */
	__type(value, __u64);
} unwind_stats SEC(".maps");

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

/* What every frame of one walk needs, on the walker's stack (bpf_loop's ctx). */
struct unwind_walk_ctx {
	struct unwind_walk_state *st;
	const struct unwind_proc *proc;	/* NULL: the process has no tables */
	__u32 nr_maps;
	__u32 by_fp;			/* st->pc was found by frame pointer */
};

/* The mapping holding pc, or NULL: the last frame's first, else a binary search. */
static __always_inline const struct unwind_mapping *unwind_mapping_of(struct unwind_walk_ctx *c,
								       __u64 pc)
{
	const struct unwind_proc *proc = c->proc;
	struct unwind_walk_state *st = c->st;
	const struct unwind_mapping *m;
	struct unwind_search s;
	__u32 idx;

	if (!proc)
		return NULL;
	idx = st->map_idx & (UNWIND_MAX_MAPPINGS - 1);
	m = &proc->maps[idx];
	if (idx < c->nr_maps && pc >= m->start && pc < m->end)
		return m;
	s.proc = proc;
	s.key = pc;
	s.first = 0;
	s.lo = 0;
	s.hi = c->nr_maps;
	bpf_loop(UNWIND_MAPPING_STEPS, unwind_mapping_step, &s, 0);
	if (s.lo == 0)
		return NULL;
	idx = (s.lo - 1) & (UNWIND_MAX_MAPPINGS - 1);
	m = &proc->maps[idx];
	if (pc >= m->end)
		return NULL;
	st->map_idx = idx;
	return m;
}

/* One frame by its table: -1 to go on with the caller's registers in st, or why it ends. */
static __always_inline int unwind_table_step(struct unwind_walk_ctx *c, __u32 frame)
{
	struct unwind_walk_state *st = c->st;
	const struct unwind_mapping *m;
	const struct unwind_row *row;
	struct unwind_search s;
	__u64 key, cfa, ra, slot, pair[2];
	__u32 idx, rule;
	int stop;

	m = unwind_mapping_of(c, st->pc);
	if (!m)
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
	rule = row->rule;
	stop = unwind_frame_cfa(rule, st->pc, st->sp, st->bp, st->bp_known, &cfa);
	if (stop >= 0)
		return stop;
	if (cfa <= st->sp)
		return UNWIND_STOP_BAD_FRAME;
	switch (unwind_rule_rbp(rule)) {
	case UNWIND_RBP_AT_CFA:
		slot = cfa + (__s64)unwind_rule_rbp_off(rule);
		if (slot < st->sp)
			break;	/* popped in an epilogue: the register holds it (cfiwalk.c) */
		if (slot == cfa - 16) {
			/* The usual "push %rbp" first: one read for both words. */
			if (bpf_probe_read_user(pair, sizeof(pair), (const void *)slot))
				return UNWIND_STOP_STACK_READ;
			st->bp = pair[0];
			st->bp_known = 1;
			ra = pair[1];
			goto have_ra;
		}
		if (bpf_probe_read_user(&st->bp, sizeof(st->bp), (const void *)slot))
			return UNWIND_STOP_STACK_READ;
		st->bp_known = 1;
		break;
	case UNWIND_RBP_LOST:
		st->bp_known = 0;
		break;
	}
	if (bpf_probe_read_user(&ra, sizeof(ra), (const void *)(cfa - 8)))
		return UNWIND_STOP_STACK_READ;
have_ra:
	if (!ra)
		return UNWIND_STOP_ROOT;
	st->pc = ra;
	st->sp = cfa;
	return -1;
}

/*
 * One frame by frame pointer (cfiwalk.c's fp_step): 0 with the caller's
 * registers in st, -1 where rbp cannot be followed.
 */
static __always_inline int unwind_fp_step(struct unwind_walk_state *st)
{
	__u64 pair[2];	/* the caller's rbp, the return address */

	if (!st->bp_known || !unwind_fp_usable(st->bp, st->sp))
		return -1;
	if (bpf_probe_read_user(pair, sizeof(pair), (const void *)st->bp) || !pair[1])
		return -1;
	st->pc = pair[1];
	st->sp = st->bp + 16;
	st->bp = pair[0];
	return 0;
}

static int unwind_loop_cb(__u32 frame, void *ctx)
{
	struct unwind_walk_ctx *c = ctx;
	struct unwind_walk_state *st = c->st;
	int stop;

	if (!st)
		return 1;
	if (st->nr >= UNWIND_MAX_FRAMES) {
		st->stop = UNWIND_STOP_DEPTH;
		return 1;
	}
	st->pcs[st->nr & UNWIND_MAX_FRAMES] = st->pc;
	st->nr++;
	st->fp_frames += c->by_fp;
	stop = unwind_table_step(c, frame);
	c->by_fp = stop >= 0 && unwind_stop_takes_fp(stop) && !unwind_fp_step(st);
	if (stop < 0 || c->by_fp)
		return 0;
	st->stop = (__u32)stop;
	return 1;
}

static __always_inline void unwind_count(__u32 stat, __u64 n)
{
	__u64 *count = bpf_map_lookup_elem(&unwind_stats, &stat);

	if (count)
		*count += n;
}

/*
 * Walk the current task's user stack from its user registers (also when
 * the sample interrupted the kernel, and in tp_btf/sched_switch, where the
 * current task is the one switched out). NULL for tasks without user
 * memory; else the per-CPU state with pcs[0, nr), the stop reason and
 * fp_frames, valid until the next walk on this CPU.
 */
static __always_inline struct unwind_walk_state *unwind_user_stack(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct unwind_walk_ctx c;
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
	st->fp_frames = 0;
	st->map_idx = 0;
	c.st = st;
	c.proc = bpf_map_lookup_elem(&unwind_procs, &st->tgid);
	c.nr_maps = 0;
	c.by_fp = 0;
	if (c.proc)
		c.nr_maps = c.proc->nr < UNWIND_MAX_MAPPINGS ? c.proc->nr : UNWIND_MAX_MAPPINGS;
	else
		unwind_count(UNWIND_STAT_NO_PROC, 1);
	bpf_loop(UNWIND_MAX_FRAMES + 1, unwind_loop_cb, &c, 0);
	stop = st->stop < UNWIND_STOP_MAX ? st->stop : UNWIND_STOP_DEPTH;
	count = bpf_map_lookup_elem(&unwind_stops, &stop);
	if (count)
		(*count)++;
	unwind_count(UNWIND_STAT_WALKS, 1);
	unwind_count(UNWIND_STAT_FRAMES, st->nr);
	if (st->fp_frames) {
		unwind_count(UNWIND_STAT_FP_WALKS, 1);
		unwind_count(UNWIND_STAT_FP_FRAMES, st->fp_frames);
	}
	return st;
}

#endif /* BPFREC_UNWIND_BPF_H */
