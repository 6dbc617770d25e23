/* SPDX-License-Identifier: MIT */
/*
 * convert.h - perf.data records in, one pprof profile per event out.
 *
 * Two phases, so memory follows the number of distinct stacks, not the
 * number of samples:
 *
 *  1. pp_convert_read() streams the file (convert.c). Records are
 *     replayed in time order (reorder.h) through the processes they
 *     describe (aspace.h); DWARF-mode samples are unwound (ustack.h); each
 *     sample becomes a stack of frames (mapping, address, leaf or caller)
 *     and is aggregated with the identical (event, stack, labels, group)
 *     samples seen before (aggregate.h, labels.h). Filters (--event,
 *     --pid, --tid, --comm) apply here.
 *
 *  2. pp_convert_build() makes the profile of one event (build.c): each
 *     distinct frame is symbolized once (shared by all events) and becomes
 *     a Location; mappings carry the recorded file, offset and build-id.
 *
 * With a group callback (opts.group), each sample's process also gets a
 * group (asked once per pid and command name in phase 1), the group is
 * part of what samples aggregate by, and phase 2 makes one profile per
 * (event, group) from the same tables: the file is read once whatever the
 * groups.
 *
 * One symbolizer serves both phases: unwinding and naming find and open
 * each file once.
 *
 * The converter keeps a pointer to the reader: it must outlive both phases
 * (pipe-mode build-ids and the event list are read from it at the end).
 */
#ifndef TOOLS_PPROF_CONVERT_H
#define TOOLS_PPROF_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/symbolize.h"
#include "symbolize/unwind.h"

struct perfdata_reader;
struct pprof_builder;
struct pp_convert;

enum pp_label_kind {
	PP_LABEL_PID,
	PP_LABEL_TID,
	PP_LABEL_COMM,
	PP_LABEL_CPU,
	PP_LABEL_TRACE,		/* a tracepoint field, by name */
};

struct pp_label_spec {
	enum pp_label_kind kind;
	const char *field;	/* PP_LABEL_TRACE only */
};

struct pp_convert_opts {
	const char *input_name;		/* for messages */
	const char *event;		/* only this event (by name); NULL = every event */
	const uint32_t *pids, *tids;	/* filters; NULL/0 = no filter */
	size_t nr_pids, nr_tids;
	const char *const *comms;
	size_t nr_comms;
	const struct pp_label_spec *labels;
	size_t nr_labels;
	bool no_symbolize;		/* keep addresses and build-ids, no names */
	struct symbolizer_opts sym;
	/* Wall-clock time (ns since the epoch) of the last sample, used for
	 * time_nanos when the file has no CLOCK_DATA; 0 = unknown. */
	uint64_t wall_clock_at_end;
	size_t reorder_mem_limit;	/* 0 = default */
	/* The group of a process (bpfrec_pprof_opts.group); NULL = no groups. */
	const char *(*group)(void *ctx, uint32_t pid, const char *comm);
	void *group_ctx;
	/* A symbolizer kept across conversions (not freed); NULL = one of our own from sym. */
	struct symbolizer *shared_sym;
};

/* What happened, for the summary on stderr. */
struct pp_convert_stats {
	uint64_t samples;		/* SAMPLE records read */
	uint64_t kept;			/* aggregated into a profile */
	uint64_t filtered;		/* dropped by --event/--pid/--tid/--comm */
	uint64_t unknown_event;		/* id matches no event */
	uint64_t unknown_pid;		/* kept, but no COMM/MMAP ever described the process */
	uint64_t lost;			/* LOST / LOST_SAMPLES from the recording */
	uint64_t bad_records;		/* malformed MMAP/COMM/FORK/SAMPLE records skipped */
	uint64_t frames;		/* distinct frames */
	uint64_t stacks;		/* distinct stacks */
	uint64_t unsymbolized;		/* distinct frames left as addresses */
	/* DWARF-mode samples (user registers + stack, unwound here) */
	uint64_t unwind_samples;	/* samples unwound */
	uint64_t unwind_frames;		/* user frames they gave */
	uint64_t unwind_stop[UNW_STOP_NR];	/* why each walk ended */
	uint64_t unwind_no_stack;	/* DWARF-mode samples without user regs or stack bytes */
	uint64_t unwind_cut;		/* stacks cut to fit a 64 KiB record */
	uint64_t unwind_files_missing;	/* mappings whose file was not found (per space) */
};

int pp_convert_new(const struct pp_convert_opts *opts, struct perfdata_reader *r,
		   struct pp_convert **out);
void pp_convert_free(struct pp_convert *c);
/* Phase 1. 0 or -errno; pp_convert_error() then says what, where. */
int pp_convert_read(struct pp_convert *c);

/* The wall-clock reference (see opts), once it is known: after reading a pipe. */
void pp_convert_set_wall_clock(struct pp_convert *c, uint64_t wall_clock_at_end);

/*
 * The profiles phase 2 can build: one per (selected) event, in file order;
 * with a group callback one per (event, group) with samples, by event,
 * then by group in order of first sample.
 */
size_t pp_convert_nr_profiles(const struct pp_convert *c);
/* The selected events' profiles (heap: one for alloc and inuse), groups aside. */
size_t pp_convert_nr_event_profiles(const struct pp_convert *c);
const char *pp_convert_profile_name(const struct pp_convert *c, size_t i);	/* short */
const char *pp_convert_profile_event(const struct pp_convert *c, size_t i);	/* full */
const char *pp_convert_profile_group(const struct pp_convert *c, size_t i);	/* NULL = none */
uint64_t pp_convert_profile_samples(const struct pp_convert *c, size_t i);
/* Phase 2 for profile i. The caller frees *out with pprof_builder_free(). */
int pp_convert_build(struct pp_convert *c, size_t i, struct pprof_builder **out);

const struct pp_convert_stats *pp_convert_stats(const struct pp_convert *c);
const char *pp_convert_error(const struct pp_convert *c);
/* A one-line warning about the whole conversion (e.g. kernel mismatch), or NULL. */
const char *pp_convert_warning(const struct pp_convert *c);

#endif /* TOOLS_PPROF_CONVERT_H */
