/* SPDX-License-Identifier: MIT */
/*
 * convert_int.h - the converter's state, shared by its two phases:
 * convert.c (reading, phase 1) and build.c (profiles, phase 2). Not for
 * other users: convert.h is the interface.
 */
#ifndef TOOLS_PPROF_CONVERT_INT_H
#define TOOLS_PPROF_CONVERT_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "perfdata/perfdata.h"
#include "perfdata/reorder.h"
#include "aspace.h"
#include "convert.h"
#include "csample.h"
#include "intern.h"
#include "labels.h"

enum { FRAME_CALLER = 1, FRAME_KERNEL = 2, FRAME_GUEST = 4 };

struct frame_key {
	uint64_t addr;
	uint32_t cmap;			/* mapping id (aspace.h) + 1; 0 = no mapping */
	uint32_t pid;			/* unmapped user frames: whose (perf-PID.map) */
	uint32_t flags;
	uint32_t pad;
};

struct sample_key {
	uint32_t event, stack, labels, pad;
};

struct counts {
	uint64_t count, weight;
	double objects;			/* allocation samples: the objects they stand for */
};

struct rline {
	uint32_t function, file;	/* sids */
	int64_t line;
};

struct resolved {
	uint32_t first, nr;		/* into c->lines */
	uint8_t flags;			/* PPROF_HAS_* */
	bool done;
};

struct bid_key {
	uint32_t filename;		/* sid */
	uint32_t kernel;
};

struct bid_val {
	uint8_t size;
	uint8_t id[PERFDATA_BUILD_ID_MAX];
	uint32_t hex;			/* sid of the hex form */
};

struct profile_info {
	uint32_t event;
	char *name;			/* the event's full name */
	char *short_name;		/* for sample types and file names */
	uint64_t samples;
	bool heap;			/* the alloc + inuse events' heap profile */
};

struct pp_convert {
	struct pp_convert_opts opts;
	struct perfdata_reader *r;
	struct perfdata_reorder *q;
	struct pp_aspace *as;
	struct pp_intern strs, frames, stacks, labelsets, samples;
	/* raw callchain (+ pid, map generations) -> stack id, a shortcut past
	 * the per-frame lookups; emptied when it outgrows the stacks. */
	struct pp_intern rawstacks;
	uint32_t *raw_stack;
	size_t raw_stack_cap;
	struct counts *counts;
	size_t counts_cap;
	uint64_t first_time, last_time;
	bool have_time;
	uint64_t max_time;
	struct profile_info *profiles;
	size_t nr_profiles;
	bool profiles_made;
	/* the one symbolizer: naming (phase 2) and DWARF unwinding share its files */
	struct symbolizer *sym;
	/* phase 2 */
	bool sym_tried;
	struct resolved *resolved;
	struct rline *lines;
	size_t nr_lines, lines_cap;
	struct pp_intern build_ids;	/* key: struct bid_key; value in bid_vals */
	struct bid_val *bid_vals;
	size_t bid_cap;
	bool build_ids_loaded;
	uint32_t *ev_profile;		/* reader event index -> profile, UINT32_MAX = none */
	int8_t *ev_sel;			/* reader event index -> selected? -1 = not known yet */
	uint8_t *ev_output;		/* reader event index -> enum pp_output_kind (once ev_sel is known) */
	size_t nr_ev_sel;
	size_t nr_ev_profile;
	int64_t kernel_delta;		/* add to recorded kernel addresses for kallsyms */
	bool kernel_ok;			/* kallsyms usable for this recording */
	bool kernel_checked;
	struct perfdata_trace *trace;
	bool trace_tried;
	/* DWARF-mode samples (ustack.h) */
	struct pp_ustack *ustack;
	/* scratch */
	uint32_t *stack_buf;
	size_t stack_cap;
	uint8_t *rec_buf;
	size_t rec_cap;
	struct pp_convert_stats stats;
	char warning[512];
	char err[512];
};

int pp_cv_fail(struct pp_convert *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The id of string s in c->strs (added when new), or -ENOMEM. */
int64_t pp_cv_sid(struct pp_convert *c, const char *s);
const char *pp_cv_str(const struct pp_convert *c, uint32_t sid);
/* The conversion's symbolizer, made on first use. 0 or -errno. */
int pp_cv_symbolizer(struct pp_convert *c, struct symbolizer **out);

#endif /* TOOLS_PPROF_CONVERT_INT_H */
