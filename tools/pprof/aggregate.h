/* SPDX-License-Identifier: MIT */
/*
 * aggregate.h - a sample, at its turn in time order, into the converter's
 * tables (phase 1; convert_int.h): its frames and stack, its label set
 * (labels.h), and one count more for its (event, stack, label set, group).
 * Memory follows the distinct stacks and samples, not the samples read.
 * Internal to tools/pprof.
 *
 * A frame is (mapping, address, leaf or caller, kernel or guest): the
 * mapping that covers the address in the process's maps at the sample's
 * time (aspace.h), the kernel image's for kernel addresses no map covers,
 * none for guests; a user address no mapping covers keeps its pid instead
 * (perf-PID.map may know it). A stack is the frames of a callchain, leaf
 * first, context markers dropped; the first address of each context is
 * where execution was, the others return addresses (looked up at
 * address - 1 when symbolized).
 */
#ifndef TOOLS_PPROF_AGGREGATE_H
#define TOOLS_PPROF_AGGREGATE_H

#include <stdint.h>

struct pp_convert;
struct csample;

/* Aggregate sample s (its user stack unwound already, if it had one), of a
 * thread named comm (sid + 1; 0 = unknown), of a process in group (id in
 * c->groups; 0 without groups), at time (0 = unknown). 0 or -errno. */
int pp_cv_aggregate(struct pp_convert *c, const struct csample *s, uint32_t comm, uint32_t group,
		    uint64_t time);

#endif /* TOOLS_PPROF_AGGREGATE_H */
