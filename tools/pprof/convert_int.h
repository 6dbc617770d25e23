/* SPDX-License-Identifier: MIT */
/*
 * convert_int.h - the converter's state, shared by the files of its two
 * phases (convert.h): convert.c reads and dispatches (phase 1), aggregate.c
 * fills the tables below, labels.c the label sets, build.c makes the
 * profiles from them (phase 2). Each part of struct pp_convert says which
 * file owns it. Not for other users: convert.h is the interface.
 *
 * Tables (all pp_intern sets, ids dense):
 *   strs     NUL-terminated strings (comms, file names, symbol names)
 *   frames   (mapping, address, leaf/caller, kernel) of every distinct frame
 *   stacks   arrays of frame ids, leaf first
 *   labelsets arrays of label values (struct label_val)
 *   samples  (event, stack, labelset, group) -> counts
 *   groups   the group names (opts.group); gpids: (pid, comm) -> group, its cache
 * The mappings themselves are the process replay's (aspace.h).
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
#include "tools/lib/errbuf.h"

enum { FRAME_CALLER = 1, FRAME_KERNEL = 2, FRAME_GUEST = 4 };

struct frame_key {
	uint64_t addr;
	uint32_t cmap;			/* mapping id (aspace.h) + 1; 0 = no mapping */
	uint32_t pid;			/* unmapped user frames: whose (perf-PID.map) */
	uint32_t flags;
	uint32_t pad;
};

struct sample_key {
	uint32_t event, stack, labels;
	uint32_t group;			/* id in c->groups; 0 without a group callback */
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
	bool heap;			/* the alloc + inuse events' heap profile */
};

/* A profile phase 2 builds: the samples of one event profile and one group. */
struct out_profile {
	uint32_t profile;		/* into c->profiles */
	uint32_t group;			/* id in c->groups (0 without groups) */
	uint64_t samples;
	size_t first, nr;		/* its sample ids: c->out_samples[first .. first + nr) */
};

#define PP_GROUP_DROPPED UINT32_MAX	/* the callback said NULL: the pid's samples go */

struct pp_convert {
	/* convert.c: the input, its reading, and what is shared by all */
	struct pp_convert_opts opts;
	struct perfdata_reader *r;
	struct perfdata_reorder *q;
	struct pp_aspace *as;		/* the processes, replayed (aspace.h) */
	struct pp_intern strs;
	int8_t *ev_sel;			/* reader event index -> selected? -1 = not known yet */
	uint8_t *ev_output;		/* reader event index -> enum pp_output_kind (once ev_sel is known) */
	size_t nr_ev_sel;
	uint64_t max_time;
	uint8_t *rec_buf;		/* the csample being made, 64 KiB */
	/* the one symbolizer: naming (phase 2) and DWARF unwinding share its files */
	struct symbolizer *sym;		/* made by pp_cv_symbolizer() without opts.shared_sym */
	/* The one phase 2 names frames with, sym or opts.shared_sym (not owned);
	 * NULL until symbolizer_ready() (build.c), or without symbolization. */
	struct symbolizer *namer;
	bool sym_reset;			/* opts.shared_sym told of the next recording */
	struct pp_ustack *ustack;	/* DWARF-mode samples (ustack.h) */
	struct pp_convert_stats stats;
	char warning[512];
	char err[512];

	/* aggregate.c */
	struct pp_intern frames, stacks, samples;
	struct counts *counts;		/* per sample */
	size_t counts_cap;
	uint64_t first_time, last_time;
	bool have_time;
	/* raw callchain (+ pid, map generations) -> stack id, a shortcut past
	 * the per-frame lookups; emptied when it outgrows the stacks. */
	struct pp_intern rawstacks;
	uint32_t *raw_stack;
	size_t raw_stack_cap;
	void *raw_key;			/* scratch: the key being looked up */
	uint32_t *stack_buf;		/* scratch: the frames being interned */
	size_t stack_cap;

	/* convert.c: groups (opts.group) */
	struct pp_intern groups;	/* group names, NUL included */
	struct pp_intern gpids;		/* (pid, comm sid + 1) asked about */
	uint32_t *gpid_group;		/* per gpids id: group id or PP_GROUP_DROPPED */
	size_t gpid_cap;

	/* labels.c */
	struct pp_intern labelsets;
	struct perfdata_trace *trace;
	bool trace_tried;

	/* build.c: the profile list */
	struct profile_info *profiles;
	size_t nr_profiles;
	bool profiles_made;
	uint32_t *ev_profile;		/* reader event index -> profile, UINT32_MAX = none */
	size_t nr_ev_profile;
	struct out_profile *outs;	/* what pp_convert_nr_profiles() counts */
	size_t nr_outs;
	uint32_t *out_samples;		/* sample ids, by out profile, ascending in each */
	/* build.c: symbolization */
	bool sym_tried;
	struct resolved *resolved;
	struct rline *lines;
	size_t nr_lines, lines_cap;
	struct pp_intern build_ids;	/* key: struct bid_key; value in bid_vals */
	struct bid_val *bid_vals;
	size_t bid_cap;
	bool build_ids_loaded;
	int64_t kernel_delta;		/* add to recorded kernel addresses for kallsyms */
	bool kernel_ok;			/* kallsyms usable for this recording */
	bool kernel_checked;
};

/* c->err, and err (tools/lib/errbuf.h). */
#define pp_cv_fail(c, e, ...) ERRBUF_FAIL(c, e, __VA_ARGS__)
/* The id of string s in c->strs (added when new), or -ENOMEM. */
int64_t pp_cv_sid(struct pp_convert *c, const char *s);
const char *pp_cv_str(const struct pp_convert *c, uint32_t sid);
/* The conversion's symbolizer, made on first use. 0 or -errno. */
int pp_cv_symbolizer(struct pp_convert *c, struct symbolizer **out);

#endif /* TOOLS_PPROF_CONVERT_INT_H */
