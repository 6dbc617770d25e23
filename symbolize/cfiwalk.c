// SPDX-License-Identifier: MIT
/* cfiwalk.c - the reference user-stack walker over unwind tables (cfiwalk.h). */
#include <string.h>

#include "symbolize/cfiwalk.h"

/* A u64 of the copied stack: 0, or -1 outside the copy (the BPF walker's fault). */
static int read_u64(const struct cfi_stack *s, uint64_t addr, uint64_t *val)
{
	if (addr < s->base || addr - s->base > s->size || s->size - (addr - s->base) < 8)
		return -1;
	memcpy(val, s->data + (addr - s->base), 8);
	return 0;
}

/* One frame: -1 with the caller's registers in pc/sp/bp, or why the walk ends. */
static int step(cfi_rows_fn rows_of, void *ctx, const struct unwind_mapping *maps,
		uint32_t nr_maps, const struct cfi_stack *stack, int first, uint64_t *pc,
		uint64_t *sp, uint64_t *bp, int *bp_known)
{
	const struct unwind_mapping *m;
	const struct unwind_row *rows;
	uint64_t key, ra, slot;
	uint32_t nr = 0;
	__u64 cfa;
	__u32 rule;
	int i, stop;

	i = unwind_find_mapping(maps, nr_maps, *pc);
	if (i < 0)
		return UNWIND_STOP_NO_MAPPING;
	m = &maps[i];
	key = *pc - (first ? 0 : 1) - m->bias;
	rows = m->nr_rows ? rows_of(ctx, m, key > UINT32_MAX ? UINT32_MAX : (uint32_t)key, &nr) :
			    NULL;
	if (!rows)
		return UNWIND_STOP_NO_TABLE;
	if (key > UINT32_MAX)
		return UNWIND_STOP_NO_ROW;
	i = unwind_search(rows, nr, (__u32)key);
	if (i < 0)
		return UNWIND_STOP_NO_ROW;
	rule = rows[(uint32_t)i].rule;
	stop = unwind_frame_cfa(rule, *pc, *sp, *bp, *bp_known, &cfa);
	if (stop >= 0)
		return stop;
	if (cfa <= *sp)
		return UNWIND_STOP_BAD_FRAME;	/* a frame must move up the stack */
	if (read_u64(stack, cfa - 8, &ra))
		return UNWIND_STOP_STACK_READ;
	switch (unwind_rule_rbp(rule)) {
	case UNWIND_RBP_AT_CFA:
		slot = cfa + (int64_t)unwind_rule_rbp_off(rule);
		/*
		 * In an epilogue gcc leaves "rbp at CFA-n" in place after the pop:
		 * a slot below sp is no longer part of the frame and the register
		 * already holds the caller's value.
		 */
		if (slot < *sp)
			break;
		if (read_u64(stack, slot, bp))
			return UNWIND_STOP_STACK_READ;
		*bp_known = 1;
		break;
	case UNWIND_RBP_LOST:
		*bp_known = 0;
		break;
	}
	if (!ra)
		return UNWIND_STOP_ROOT;
	*pc = ra;
	*sp = cfa;
	return -1;
}

/*
 * The frame-pointer step, for a frame the tables cannot describe: 0 with
 * the caller's registers (return address at rbp + 8, its rbp at rbp, its
 * rsp at rbp + 16), or -1 where rbp cannot be followed.
 */
static int fp_step(const struct cfi_stack *stack, uint64_t *pc, uint64_t *sp, uint64_t *bp,
		   int bp_known)
{
	uint64_t ra, caller_bp;

	if (!bp_known || !unwind_fp_usable(*bp, *sp))
		return -1;
	if (read_u64(stack, *bp, &caller_bp) || read_u64(stack, *bp + 8, &ra) || !ra)
		return -1;
	*pc = ra;
	*sp = *bp + 16;
	*bp = caller_bp;
	return 0;
}

/* A flat row store of store_rows rows: a mapping's table is a range of it. */
struct flat_store {
	const struct unwind_row *rows;
	uint32_t nr;
};

static const struct unwind_row *flat_rows_of(void *ctx, const struct unwind_mapping *m,
					     uint32_t key, uint32_t *nr)
{
	const struct flat_store *f = ctx;

	(void)key;
	if (m->first_row > f->nr || m->nr_rows > f->nr - m->first_row)
		return NULL;
	*nr = m->nr_rows;
	return f->rows + m->first_row;
}

void cfi_page_run(const uint32_t *page_pcs, uint32_t page_rows, uint32_t first, uint32_t nr,
		  uint32_t key, uint32_t *run_first, uint32_t *run_nr)
{
	uint64_t per = page_rows, end = (uint64_t)first + nr, start = first, next;
	/* The pages that start inside the table: [lo, hi). */
	uint64_t lo = ((uint64_t)first + per - 1) / per, hi = nr ? (end - 1) / per + 1 : lo;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (page_pcs[mid] <= key) {
			start = mid * per;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	next = (start / per + 1) * per;
	*run_first = (uint32_t)start;
	*run_nr = (uint32_t)((next < end ? next : end) - start);
}

void cfi_walk_stack(const struct unwind_row *rows, uint32_t store_rows,
		    const struct unwind_mapping *maps, uint32_t nr_maps,
		    const struct cfi_regs *regs, const struct cfi_stack *stack, struct cfi_walk *out)
{
	struct flat_store f = { .rows = rows, .nr = store_rows };

	cfi_walk_stack_with(flat_rows_of, &f, maps, nr_maps, regs, stack, out);
}

void cfi_walk_stack_with(cfi_rows_fn rows_of, void *ctx, const struct unwind_mapping *maps,
			 uint32_t nr_maps, const struct cfi_regs *regs,
			 const struct cfi_stack *stack, struct cfi_walk *out)
{
	uint64_t pc = regs->ip, sp = regs->sp, bp = regs->bp;
	int bp_known = 1, stop = UNWIND_STOP_DEPTH, by_fp = 0;

	out->nr = 0;
	out->fp_frames = 0;
	for (uint32_t n = 0; n < UNWIND_MAX_FRAMES; n++) {
		out->pcs[out->nr++] = pc;
		out->fp_frames += (uint32_t)by_fp;
		stop = step(rows_of, ctx, maps, nr_maps, stack, n == 0, &pc, &sp, &bp, &bp_known);
		if (stop >= 0 && unwind_stop_takes_fp(stop) &&
		    unwind_fp_chain_ends(by_fp, bp_known, bp))
			stop = UNWIND_STOP_ROOT;
		by_fp = stop >= 0 && unwind_stop_takes_fp(stop) &&
			!fp_step(stack, &pc, &sp, &bp, bp_known);
		if (stop >= 0 && !by_fp)
			break;
		stop = UNWIND_STOP_DEPTH;
	}
	out->stop = (enum unwind_stop)stop;
}

const char *cfi_walk_stat_name(enum unwind_stat stat)
{
	static const char *const names[UNWIND_STAT_MAX] = {
		[UNWIND_STAT_WALKS] = "walks",
		[UNWIND_STAT_NO_PROC] = "no-proc",
		[UNWIND_STAT_FP_WALKS] = "fp-walks",
		[UNWIND_STAT_FP_FRAMES] = "fp-frames",
		[UNWIND_STAT_FRAMES] = "frames",
	};

	return (unsigned int)stat < UNWIND_STAT_MAX ? names[stat] : "?";
}

const char *cfi_walk_stop_name(enum unwind_stop stop)
{
	static const char *const names[UNWIND_STOP_MAX] = {
		[UNWIND_STOP_ROOT] = "root",
		[UNWIND_STOP_SIGNAL] = "signal",
		[UNWIND_STOP_NO_MAPPING] = "no-mapping",
		[UNWIND_STOP_NO_TABLE] = "no-table",
		[UNWIND_STOP_NO_ROW] = "no-row",
		[UNWIND_STOP_UNSUPPORTED] = "unsupported",
		[UNWIND_STOP_NO_RBP] = "no-rbp",
		[UNWIND_STOP_STACK_READ] = "stack-read",
		[UNWIND_STOP_BAD_FRAME] = "bad-frame",
		[UNWIND_STOP_DEPTH] = "depth",
	};

	return (unsigned int)stop < UNWIND_STOP_MAX ? names[stop] : "?";
}
