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
static int step(const struct unwind_row *rows, const struct unwind_mapping *maps,
		uint32_t nr_maps, const struct cfi_stack *stack, int first, uint64_t *pc,
		uint64_t *sp, uint64_t *bp, int *bp_known)
{
	const struct unwind_mapping *m;
	uint64_t key, ra, slot;
	__u64 cfa;
	__u32 rule;
	int i, stop;

	i = unwind_find_mapping(maps, nr_maps, *pc);
	if (i < 0)
		return UNWIND_STOP_NO_MAPPING;
	m = &maps[i];
	if (!m->nr_rows)
		return UNWIND_STOP_NO_TABLE;
	key = *pc - (first ? 0 : 1) - m->bias;
	if (key > UINT32_MAX)
		return UNWIND_STOP_NO_ROW;
	i = unwind_search(rows + m->first_row, m->nr_rows, (__u32)key);
	if (i < 0)
		return UNWIND_STOP_NO_ROW;
	rule = rows[m->first_row + (uint32_t)i].rule;
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

void cfi_walk_stack(const struct unwind_row *rows, const struct unwind_mapping *maps,
		    uint32_t nr_maps, const struct cfi_regs *regs, const struct cfi_stack *stack,
		    struct cfi_walk *out)
{
	uint64_t pc = regs->ip, sp = regs->sp, bp = regs->bp;
	int bp_known = 1, stop = UNWIND_STOP_DEPTH;

	out->nr = 0;
	for (uint32_t n = 0; n < UNWIND_MAX_FRAMES; n++) {
		out->pcs[out->nr++] = pc;
		stop = step(rows, maps, nr_maps, stack, n == 0, &pc, &sp, &bp, &bp_known);
		if (stop >= 0)
			break;
		stop = UNWIND_STOP_DEPTH;
	}
	out->stop = (enum unwind_stop)stop;
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
