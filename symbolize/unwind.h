/* SPDX-License-Identifier: MIT */
/*
 * unwind.h - user stacks from a copy of a thread's registers and the top of
 * its stack, by the DWARF call frame information (.eh_frame/.debug_frame)
 * of the files it had mapped. This is what `perf record --call-graph dwarf`
 * records; the caller decodes its records, this module knows nothing of
 * perf.data.
 *
 * One unw_space is one address space (a process at one point in time):
 * the caller adds the file mappings it knows, then unwinds any number of
 * samples of that process through it. It holds one libdw Dwfl with every
 * file reported at its load bias and the Dwfl frame API attached, so the
 * CFI of a file is parsed once per space, not once per sample. When the
 * process's mappings change the caller builds a new space (the CFI is
 * parsed again: keep spaces while mappings hold).
 *
 * Files come from the symbolizer, the very ones symbolize_user() reads
 * (symfs, build-id caches, build-id checked; found and opened once per
 * symbolizer, a space holds duplicates of their fds); a mapping whose file is
 * not found is still known as a range, so a frame inside it ends the walk
 * as UNW_STOP_NO_FILE instead of being mistaken for something else.
 *
 * Memory reads during the walk are served from the stack copy only:
 * [sp, sp + stack_len), sp being the sample's own stack pointer. A read
 * elsewhere ends the walk (UNW_STOP_OUTSIDE_STACK); CFI never needs more
 * for the code compilers emit.
 *
 * x86_64 only: registers are the 17 DWARF registers of the x86_64 psABI,
 * in DWARF order (see UNW_REG_*).
 */
#ifndef SYMBOLIZE_UNWIND_H
#define SYMBOLIZE_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/symbolize.h"

/* x86_64 DWARF register numbers (psABI table 3.36). */
enum {
	UNW_REG_RAX, UNW_REG_RDX, UNW_REG_RCX, UNW_REG_RBX, UNW_REG_RSI, UNW_REG_RDI,
	UNW_REG_RBP, UNW_REG_RSP, UNW_REG_R8, UNW_REG_R9, UNW_REG_R10, UNW_REG_R11,
	UNW_REG_R12, UNW_REG_R13, UNW_REG_R14, UNW_REG_R15, UNW_REG_RIP,
	UNW_NR_REGS
};

struct unw_regs {
	uint64_t r[UNW_NR_REGS];
	uint32_t valid;		/* bit i: r[i] is known; RIP and RSP are required */
};

/* Why a walk ended. */
enum unw_stop {
	UNW_STOP_END,		/* the outermost frame: CFI says there is no caller */
	UNW_STOP_NO_CFI,	/* no rule for a pc inside a known file */
	UNW_STOP_NO_FILE,	/* a pc in no mapping, or in one whose file was not found */
	UNW_STOP_OUTSIDE_STACK,	/* a rule needed memory outside the copied stack */
	UNW_STOP_DEPTH,		/* max frames reached */
	UNW_STOP_NO_REGS,	/* RIP or RSP missing: nothing to start from */
	UNW_STOP_NR
};

/* One frame, innermost first. */
struct unw_frame {
	uint64_t pc;
	/* false for the first frame and for frames interrupted by a signal:
	 * pc is where execution was. true: pc is a return address, the call is
	 * at pc - 1 (symbolize callers there). */
	bool is_return;
};

struct unw_space;

/* A space whose files are found through s (which must outlive it). pid is
 * only a label (libdw wants a positive one). 0 or -ENOMEM. */
int unw_space_new(struct symbolizer *s, int pid, struct unw_space **out);
void unw_space_free(struct unw_space *sp);

/* Add one executable mapping. Call before the first unwind; mappings added
 * later are ignored (-EBUSY). 0 also when its file is not found (counted in
 * unw_space_files()); -EINVAL for a mapping that has no path. */
int unw_space_add(struct unw_space *sp, const struct sym_mapping *m);

/* Files reported and mappings whose file was not found, for statistics. */
void unw_space_files(const struct unw_space *sp, size_t *found, size_t *missing);

/*
 * Walk the stack of one sample: frames[0] is regs RIP, then the callers.
 * stack holds stack_len bytes copied from address regs->r[UNW_REG_RSP].
 * *nr frames are written (at most max); *stop says why the walk ended.
 * Returns 0 (also when it ended early: see *stop) or -ENOMEM.
 */
int unw_space_unwind(struct unw_space *sp, const struct unw_regs *regs, const void *stack,
		     size_t stack_len, struct unw_frame *frames, size_t max, size_t *nr,
		     enum unw_stop *stop);

#endif /* SYMBOLIZE_UNWIND_H */
