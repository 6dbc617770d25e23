/* SPDX-License-Identifier: MIT */
/*
 * ustack.h - the user stacks of DWARF-mode samples (`perf record
 * --call-graph dwarf`, `bpfrec record --call-graph dwarf`): the perf.data
 * side of symbolize/unwind.h. Internal to the converter, which calls it;
 * it calls nothing of the converter's, only what it is handed: the process
 * replay (aspace.h) and the symbolizer.
 *
 * Such samples carry REGS_USER (the user registers, in the order of the
 * attr's sample_regs_user bits) and STACK_USER (bytes copied from the user
 * stack pointer up); CALLCHAIN then holds the kernel part only
 * (exclude_callchain_user). When reading, the converter packs registers and
 * the valid stack bytes behind the csample (pp_ustack_size(),
 * pp_ustack_pack()), so they travel through the reorder queue, and unwinds
 * when the sample's turn comes (pp_ustack_unwind()): the process's
 * mappings are then those it had at that time.
 *
 * The unwound sample is a csample whose callchain is what perf report shows
 * for the same record: the kernel part, then PERF_CONTEXT_USER and the
 * user frames, leaf first (a frame interrupted by a signal starts a new
 * PERF_CONTEXT_USER context, since it is not a return address). At most
 * PP_USTACK_MAX_FRAMES user frames, perf's default limit.
 *
 * One unwinding space (a libdw Dwfl with the process's files) per pid, kept
 * while that pid's maps keep their generation; at most PP_USTACK_SPACES
 * of them, the least recently used one is dropped first. Files come from
 * the symbolizer, which opens each once for naming and unwinding alike.
 */
#ifndef TOOLS_PPROF_USTACK_H
#define TOOLS_PPROF_USTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdata/perfdata.h"
#include "symbolize/symbolize.h"
#include "symbolize/unwind.h"
#include "aspace.h"
#include "csample.h"

#define PP_USTACK_MAX_FRAMES 127
#define PP_USTACK_SPACES 16

/* perf's x86_64 sample_regs_user order (mask bits, arch/x86 perf_regs.h) of
 * each DWARF register: the regs array holds one u64 per set bit, in bit order. */
void pp_ustack_regs(uint64_t mask, const uint64_t *regs, uint64_t nr, struct unw_regs *out);

/*
 * The bytes a sample's user registers and stack take behind its csample: 0
 * when the event does not record both or the sample has no registers (abi
 * NONE: a kernel thread) or no valid stack bytes; else at most room
 * (the stack is cut at the top to fit; *cut tells). 8-byte multiple.
 */
size_t pp_ustack_size(const struct perf_event_attr *attr, const struct perfdata_sample *s,
		      size_t room, bool *cut);
/* Write those bytes (len from pp_ustack_size()) at dst. */
void pp_ustack_pack(const struct perf_event_attr *attr, const struct perfdata_sample *s,
		    void *dst, size_t len);

struct pp_ustack;

/* Unwinding through the mappings of as, with the files of sym; both must
 * outlive it. 0 or -ENOMEM. */
int pp_ustack_new(struct symbolizer *sym, const struct pp_aspace *as, struct pp_ustack **out);
void pp_ustack_free(struct pp_ustack *u);

/* What one unwind did, for the caller's statistics. */
struct pp_ustack_walk {
	size_t frames;			/* user frames found */
	enum unw_stop stop;		/* why the walk ended */
	size_t files_missing;		/* mappings without a file, when this walk
					 * (re)built its pid's space; else 0 */
};

/*
 * Unwind csample s (which has CSAMPLE_HAS_USTACK) through its pid's current
 * mappings: *out is the csample with the combined callchain (valid until
 * the next call), *walk what it took. 0 or -ENOMEM / -errno.
 */
int pp_ustack_unwind(struct pp_ustack *u, const struct csample *s, const struct csample **out,
		     struct pp_ustack_walk *walk);

#endif /* TOOLS_PPROF_USTACK_H */
