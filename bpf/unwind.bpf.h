/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * unwind.bpf.h - the user-stack walker over unwind tables, for BPF
 * programs that sample user stacks (unwind_check.bpf.c compiles it with
 * every build and lets the verifier check it). The algorithm is the
 * reference walker's (symbolize/cfiwalk.c, Documentation/unwinding.md),
 * with the same layout and helpers (unwind.h); only the memory differs:
 *   - rows come from the array map unwind_rows (all tables back to back,
 *     user space places each one and fills unwind_procs to point at it);
 *   - stack words are read with bpf_probe_read_user from the live stack
 *     (a fault is a failed read, as outside the reference's copy).
 * Maps user space fills: unwind_rows, unwind_procs; reads: unwind_stops,
 * unwind_stats (and unwind_scratch for the last walk); its own:
 * unwind_walk_cache. A program that includes this header gets all of them.
 * One frame per bpf_loop iteration, at most UNWIND_MAX_FRAMES, in a
 * per-CPU scratch value (too big for the BPF stack). A frame the tables
 * cannot describe is stepped over by frame pointer while rbp is known, as
 * in the reference walker. Every walk's stop reason is counted per CPU in
 * unwind_stops, its frames and fallbacks in unwind_stats.
 *
 * Cost (Documentation/unwinding.md): the process's mappings are looked up
 * once per walk, the last frame's mapping is tried before searching them
 * (consecutive frames are mostly in one file), the row a search found is
 * remembered per CPU as a hint for the next search of the same address,
 * and the stack is read 1 KiB at a time (struct unwind_walk_cache).
 */
#ifndef BPFREC_UNWIND_BPF_H
#define BPFREC_UNWIND_BPF_H

#include "unwind.h"
#include "task_regs.bpf.h"

/* Mmapable: user space reads a table back from here (recorder/unwind_bpf.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
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
 * Per-CPU memory of the walker that is not part of its answer:
 *   - hint: for a hash of (table, ELF address), the row the last search
 *     found. Only a guess, kept across walks: a hint is used only after
 *     checking against the live rows that it is the row a search would
 *     find (inside the table, pc <= key < next pc), so a table moved or
 *     replaced by user space can make it miss, never answer wrongly.
 *   - win: a copy of the user stack at [win_base, win_base + win_len),
 *     valid during one walk: one bpf_probe_read_user serves the words of
 *     several frames (each call costs about as much as a search).
 */
#define UNWIND_HINT_BITS	10
#define UNWIND_BOUNDED_FRAMES	48
#define UNWIND_WIN_BYTES	1024

/* One binary search: the answer is lo - 1. */
struct unwind_range {
	__u32 lo, hi;
};

struct unwind_search {
	const struct unwind_proc *proc;	/* mapping search: its maps */
	__u64 key;
	__u32 first;			/* row search: the table's first row */
	struct unwind_range r;
};

struct unwind_walk_cache {
	struct unwind_range range;	/* a bounded search's: see unwind_search_rows() */
	__u32 hint[1 << UNWIND_HINT_BITS];	/* row store indexes */
	__u64 win_base;
	__u64 win_len;
	__u64 win[UNWIND_WIN_BYTES / 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_walk_cache);
} unwind_walk_cache SEC(".maps");

/*
 * The binary searches of UNWIND_LAST_LE, one step per bpf_loop iteration:
 * a bpf_loop callback is checked once. Kernels before 5.17 have no
 * bpf_loop: there the same steps run as a bounded loop (`bounded`, a
 * constant in each program, so a program holds one kind or the other).
 * Same steps, same answer.
 */
static __always_inline int unwind_row_step_at(struct unwind_range *r, __u32 first, __u64 key)
{
	const struct unwind_row *row;
	__u32 mid, idx;

	if (r->lo >= r->hi)
		return 1;
	mid = r->lo + (r->hi - r->lo) / 2;
	idx = first + mid;
	row = bpf_map_lookup_elem(&unwind_rows, &idx);
	if (row && row->pc <= key)
		r->lo = mid + 1;
	else
		r->hi = mid;	/* past the store's end counts as "after key" */
	return 0;
}

static __always_inline int unwind_mapping_step_at(struct unwind_range *r,
						  const struct unwind_proc *proc, __u64 key)
{
	__u32 mid;

	if (r->lo >= r->hi || !proc)
		return 1;
	mid = r->lo + (r->hi - r->lo) / 2;
	if (proc->maps[mid & (UNWIND_MAX_MAPPINGS - 1)].start <= key)
		r->lo = mid + 1;
	else
		r->hi = mid;
	return 0;
}

static int unwind_row_step(__u32 step, void *ctx)
{
	struct unwind_search *s = ctx;

	return unwind_row_step_at(&s->r, s->first, s->key);
}

static int unwind_mapping_step(__u32 step, void *ctx)
{
	struct unwind_search *s = ctx;

	return unwind_mapping_step_at(&s->r, s->proc, s->key);
}

/*
 * The bounded loops keep lo and hi in map memory (k->range) and read them
 * back each step: the verifier knows nothing of map memory, so both sides
 * of a step reach the next one in the same state and it checks one path,
 * not 2^steps (it would track them exactly in registers).
 */
static __always_inline void unwind_search_rows(struct unwind_search *s,
					       struct unwind_walk_cache *k, bool bounded)
{
	if (!bounded) {
		bpf_loop(UNWIND_SEARCH_STEPS, unwind_row_step, s, 0);
		return;
	}
	k->range = s->r;
	for (__u32 i = 0; i < UNWIND_SEARCH_STEPS; i++) {
		asm volatile("" ::: "memory");
		if (unwind_row_step_at(&k->range, s->first, s->key))
			break;
	}
	s->r.lo = k->range.lo;
}

static __always_inline void unwind_search_mappings(struct unwind_search *s,
						   struct unwind_walk_cache *k, bool bounded)
{
	if (!bounded) {
		bpf_loop(UNWIND_MAPPING_STEPS, unwind_mapping_step, s, 0);
		return;
	}
	k->range = s->r;
	for (__u32 i = 0; i < UNWIND_MAPPING_STEPS; i++) {
		asm volatile("" ::: "memory");
		if (unwind_mapping_step_at(&k->range, s->proc, s->key))
			break;
	}
	s->r.lo = k->range.lo;
}

/* What every frame of one walk needs, on the walker's stack (bpf_loop's ctx). */
struct unwind_walk_ctx {
	struct unwind_walk_state *st;
	struct unwind_walk_cache *cache;
	const struct unwind_proc *proc;	/* NULL: the process has no tables */
	__u32 nr_maps;
};

/* The mapping holding pc, or NULL: the last frame's first, else a binary search. */
static __always_inline const struct unwind_mapping *unwind_mapping_of(struct unwind_walk_ctx *c,
								       __u64 pc, bool bounded)
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
	s.r.lo = 0;
	s.r.hi = c->nr_maps;
	unwind_search_mappings(&s, c->cache, bounded);
	if (s.r.lo == 0)
		return NULL;
	idx = (s.r.lo - 1) & (UNWIND_MAX_MAPPINGS - 1);
	m = &proc->maps[idx];
	if (pc >= m->end)
		return NULL;
	st->map_idx = idx;
	return m;
}

/*
 * The u64 of the user stack at addr: 0, or -1 where it cannot be read.
 * From the window when it holds addr, else the window moves to addr: a
 * full window, or up to the end of addr's page where the full one faults
 * (the top of the stack), or a direct read if addr is not 8-aligned.
 */
static __always_inline int unwind_read(struct unwind_walk_cache *k, __u64 addr, __u64 *val)
{
	__u64 off = addr - k->win_base, len;

	if (addr & 7)
		return bpf_probe_read_user(val, sizeof(*val), (const void *)addr) ? -1 : 0;
	if (addr < k->win_base || off >= k->win_len) {	/* both multiples of 8 */
		k->win_base = addr;
		k->win_len = 0;
		if (bpf_probe_read_user(k->win, sizeof(k->win), (const void *)addr)) {
			/*
			 * Only a window that crosses into the next page can
			 * fault where a shorter one would not: len is what is
			 * left of addr's page. barrier_var() and the mask keep
			 * the bound in the register the helper gets: clang
			 * would otherwise drop the mask as implied by the
			 * check, and older verifiers (6.1) lose the check's
			 * bound when len is spilled across the first call.
			 */
			len = -addr & 4095;
			if (!len || len >= sizeof(k->win))
				return -1;
			k->win_len = len;
			barrier_var(len);
			if (bpf_probe_read_user(k->win, len & (UNWIND_WIN_BYTES - 1),
						(const void *)addr)) {
				k->win_len = 0;
				return -1;
			}
		} else {
			k->win_len = sizeof(k->win);
		}
		off = 0;
	}
	*val = k->win[(off / 8) & (UNWIND_WIN_BYTES / 8 - 1)];
	return 0;
}

/* The row of rows[first, first + nr) covering key, or -1: a checked hint, else a search. */
static __always_inline int unwind_find_row(struct unwind_walk_cache *k, __u32 first, __u32 nr,
					   __u32 key, bool bounded)
{
	__u32 slot = ((key ^ first) * 2654435761u) >> (32 - UNWIND_HINT_BITS);
	const struct unwind_row *r;
	struct unwind_search s;
	__u32 idx, next;

	idx = k->hint[slot & ((1 << UNWIND_HINT_BITS) - 1)];
	r = bpf_map_lookup_elem(&unwind_rows, &idx);
	if (r && idx >= first && idx - first < nr && r->pc <= key) {
		next = idx + 1;
		if (next - first == nr)
			return (int)(idx - first);
		r = bpf_map_lookup_elem(&unwind_rows, &next);
		if (r && r->pc > key)
			return (int)(idx - first);
	}
	s.proc = NULL;
	s.key = key;
	s.first = first;
	s.r.lo = 0;
	s.r.hi = nr;
	unwind_search_rows(&s, k, bounded);
	if (s.r.lo == 0)
		return -1;
	k->hint[slot & ((1 << UNWIND_HINT_BITS) - 1)] = first + s.r.lo - 1;
	return (int)(s.r.lo - 1);
}

/* One frame by its table: -1 to go on with the caller's registers in st, or why it ends. */
static __always_inline int unwind_table_step(struct unwind_walk_ctx *c, bool bounded)
{
	struct unwind_walk_state *st = c->st;
	struct unwind_walk_cache *k = c->cache;
	const struct unwind_mapping *m;
	const struct unwind_row *row;
	__u64 key, cfa, ra, slot;
	__u32 idx, rule;
	int i, stop;

	if (!k)
		return UNWIND_STOP_NO_ROW;

	m = unwind_mapping_of(c, st->pc, bounded);
	if (!m)
		return UNWIND_STOP_NO_MAPPING;
	if (!m->nr_rows)
		return UNWIND_STOP_NO_TABLE;
	key = st->pc - st->ret_addr - m->bias;
	if (key > 0xffffffffULL)
		return UNWIND_STOP_NO_ROW;
	i = unwind_find_row(k, m->first_row, m->nr_rows, (__u32)key, bounded);
	if (i < 0)
		return UNWIND_STOP_NO_ROW;
	idx = m->first_row + (__u32)i;
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
		if (unwind_read(k, slot, &st->bp))
			return UNWIND_STOP_STACK_READ;
		st->bp_known = 1;
		break;
	case UNWIND_RBP_LOST:
		st->bp_known = 0;
		break;
	}
	if (unwind_read(k, cfa - 8, &ra))
		return UNWIND_STOP_STACK_READ;
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
static __always_inline int unwind_fp_step(struct unwind_walk_ctx *c)
{
	struct unwind_walk_state *st = c->st;
	__u64 caller_bp, ra;

	if (!c->cache || !st->bp_known || !unwind_fp_usable(st->bp, st->sp))
		return -1;
	if (unwind_read(c->cache, st->bp, &caller_bp) ||
	    unwind_read(c->cache, st->bp + 8, &ra) || !ra)
		return -1;
	st->pc = ra;
	st->sp = st->bp + 16;
	st->bp = caller_bp;
	return 0;
}

/* One frame of the walk: 0 to go on, 1 when it has ended (st->stop says why). */
static __always_inline int unwind_frame(struct unwind_walk_ctx *c, bool bounded)
{
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
	st->fp_frames += st->by_fp;
	stop = unwind_table_step(c, bounded);
	st->ret_addr = 1;
	if (stop < 0)
		return 0;
	st->unmapped += stop == UNWIND_STOP_NO_MAPPING;
	if (unwind_stop_takes_fp(stop) && unwind_fp_chain_ends(st->by_fp, st->bp_known, st->bp))
		stop = UNWIND_STOP_ROOT;
	st->by_fp = unwind_stop_takes_fp(stop) && !unwind_fp_step(c);
	if (st->by_fp)
		return 0;
	st->stop = (__u32)stop;
	return 1;
}

static int unwind_loop_cb(__u32 frame, void *ctx)
{
	return unwind_frame(ctx, false);
}

static __always_inline void unwind_count(__u32 stat, __u64 n)
{
	__u64 *count = bpf_map_lookup_elem(&unwind_stats, &stat);

	if (count)
		*count += n;
}

/*
 * The start of a walk of the current task's user stack: the per-CPU state
 * set to its user registers (also when the sample interrupted the kernel,
 * and in tp_btf/sched_switch, where the current task is the one switched
 * out), or NULL for tasks without user memory.
 */
static __always_inline struct unwind_walk_state *unwind_walk_begin(void)
{
	struct task_struct *task = current_task();
	struct unwind_walk_state *st;
	struct pt_regs *regs;
	__u32 zero = 0;

	if (!BPF_CORE_READ(task, mm))
		return NULL;
	st = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!st)
		return NULL;
	/* The walk's state starts at zero but for these; pcs[] is written as frames are found. */
	__builtin_memset(st, 0, __builtin_offsetof(struct unwind_walk_state, pcs));
	regs = task_user_regs(task);
	st->pc = BPF_CORE_READ(regs, ip);
	st->sp = BPF_CORE_READ(regs, sp);
	st->bp = BPF_CORE_READ(regs, bp);
	st->tgid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	st->bp_known = 1;
	st->stop = UNWIND_STOP_DEPTH;
	return st;
}

/*
 * Frames of the walk in st, from where it stands: to its end with bpf_loop,
 * else UNWIND_BOUNDED_FRAMES + 1 more at most (st->stop stays
 * UNWIND_STOP_DEPTH when they did not end it).
 */
static __always_inline void unwind_walk_frames(struct unwind_walk_state *st, bool bounded)
{
	struct unwind_walk_ctx c;
	__u32 zero = 0;

	c.st = st;
	c.cache = bpf_map_lookup_elem(&unwind_walk_cache, &zero);
	c.proc = bpf_map_lookup_elem(&unwind_procs, &st->tgid);
	c.nr_maps = 0;
	if (c.proc)
		c.nr_maps = c.proc->nr < UNWIND_MAX_MAPPINGS ? c.proc->nr : UNWIND_MAX_MAPPINGS;
	if (!st->nr) {
		/* The walk's first piece: no stack window yet, and one count of a process without tables. */
		if (c.cache)
			c.cache->win_len = 0;
		if (!c.proc)
			unwind_count(UNWIND_STAT_NO_PROC, 1);
	}
	if (bounded) {
		for (__u32 frame = 0; frame < UNWIND_BOUNDED_FRAMES + 1; frame++)
			if (unwind_frame(&c, true))
				break;
	} else {
		bpf_loop(UNWIND_MAX_FRAMES + 1, unwind_loop_cb, &c, 0);
	}
}

/* The end of a walk: its stop reason and frames into the counters. */
static __always_inline void unwind_walk_end(struct unwind_walk_state *st)
{
	__u32 stop = st->stop < UNWIND_STOP_MAX ? st->stop : UNWIND_STOP_DEPTH;
	__u64 *count = bpf_map_lookup_elem(&unwind_stops, &stop);

	if (count)
		(*count)++;
	unwind_count(UNWIND_STAT_WALKS, 1);
	unwind_count(UNWIND_STAT_FRAMES, st->nr);
	if (st->fp_frames) {
		unwind_count(UNWIND_STAT_FP_WALKS, 1);
		unwind_count(UNWIND_STAT_FP_FRAMES, st->fp_frames);
	}
}

/*
 * A piece of a bounded walk, from where the walk in unwind_scratch stands,
 * as a function of its own: a global function, which the verifier checks
 * once, alone, however often it is called. Inlined, it is checked once for
 * every way the program reached it that left different registers or stack
 * behind: in a sched_switch tracer, with its branches before the walk,
 * that passes the verifier's million instructions. And a piece is all one
 * function holds: the verifier follows every frame of a bounded loop, and
 * 5.10's rejects a loop of 128 frames. Returns 0.
 */
__noinline int unwind_walk_bounded(void)
{
	struct unwind_walk_state *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (st)
		unwind_walk_frames(st, true);
	return 0;
}

/* Pieces of a bounded walk: enough for UNWIND_MAX_FRAMES. */
#define UNWIND_BOUNDED_PIECES	((UNWIND_MAX_FRAMES + UNWIND_BOUNDED_FRAMES) / (UNWIND_BOUNDED_FRAMES + 1))

/*
 * Walk the current task's user stack from its user registers. NULL for
 * tasks without user memory; else the per-CPU state with pcs[0, nr), the
 * stop reason and fp_frames, valid until the next walk on this CPU.
 * bounded: without bpf_loop, for kernels before 5.17, in pieces of
 * UNWIND_BOUNDED_FRAMES + 1 frames.
 */
static __always_inline struct unwind_walk_state *unwind_user_stack_with(bool bounded)
{
	struct unwind_walk_state *st;

	st = unwind_walk_begin();
	if (!st)
		return NULL;
	if (bounded) {
		for (__u32 piece = 0; piece < UNWIND_BOUNDED_PIECES; piece++) {
			if (st->stop != UNWIND_STOP_DEPTH || st->nr >= UNWIND_MAX_FRAMES)
				break;
			unwind_walk_bounded();
		}
	} else {
		unwind_walk_frames(st, false);
	}
	unwind_walk_end(st);
	return st;
}

static __always_inline struct unwind_walk_state *unwind_user_stack(void)
{
	return unwind_user_stack_with(false);
}

/*
 * Walk the current task's user stack into frames[0, PROFILE_MAX_STACK) (a
 * sample's user callchain, pcs[0] = the user ip first); how many frames.
 */
static __always_inline __u32 unwind_user_callchain_with(__u64 *frames, bool bounded)
{
	struct unwind_walk_state *st;
	__u32 n;

	st = unwind_user_stack_with(bounded);
	if (!st)
		return 0;
	n = st->nr;
	if (n > UNWIND_MAX_FRAMES)
		n = UNWIND_MAX_FRAMES;
	if (bpf_probe_read_kernel(frames, n * sizeof(__u64), st->pcs))
		return 0;
	return n;
}

static __always_inline __u32 unwind_user_callchain(__u64 *frames)
{
	return unwind_user_callchain_with(frames, false);
}

#endif /* BPFREC_UNWIND_BPF_H */
