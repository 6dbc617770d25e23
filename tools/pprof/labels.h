/* SPDX-License-Identifier: MIT */
/*
 * labels.h - the labels of each sample: those --labels asks for (pid, tid,
 * comm, cpu, trace:FIELD) and a sched-delay sample's reason. Parsed from
 * their option string, taken from each sample as the converter aggregates
 * it, and named when its profile is built. Internal to tools/pprof.
 *
 * A label a sample cannot have is left out rather than made up: cpu when
 * the event did not record it, trace:FIELD on samples of other events or
 * without that field. trace:FIELD values are read from the RAW data of
 * tracepoint samples through libtraceevent (perfdata/trace.h), with the
 * formats of the file's tracing data; a file without usable tracing data
 * gets no trace: labels and a warning (pp_convert_warning()).
 */
#ifndef TOOLS_PPROF_LABELS_H
#define TOOLS_PPROF_LABELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convert.h"

/* Labels per sample, at most: --labels' first ones, then the reason. */
#define PP_LABELS_MAX 16

/* label_val.spec of a sched-delay sample's reason (not one of opts.labels) */
#define LABEL_SPEC_SCHED_REASON UINT32_MAX

/* One label of a sample; a label set (the converter's labelsets) is an
 * array of them, in the order of opts.labels, the reason last. */
struct label_val {
	uint32_t spec;			/* index into opts.labels, or LABEL_SPEC_SCHED_REASON */
	uint32_t is_str;
	uint64_t value;			/* number, or sid */
};

struct pp_convert;
struct csample;

/* Parse "pid,tid,comm,cpu,trace:FIELD" into specs (fields point into s).
 * 0; -EINVAL for anything else; -E2BIG for more than cap. */
int pp_parse_labels(char *s, struct pp_label_spec *specs, size_t cap, size_t *nr);

/* Whether some label is read from the samples' RAW data (trace:). */
bool pp_cv_labels_want_raw(const struct pp_convert *c);
/* The label set of sample s, whose thread's name is comm (sid + 1; 0 =
 * unknown): its id in the converter's labelsets, or -errno. */
int64_t pp_cv_labelset(struct pp_convert *c, const struct csample *s, uint32_t comm);
/* The key (name) of a label_val's spec in the profile. */
const char *pp_cv_label_key(const struct pp_convert *c, uint32_t spec);

#endif /* TOOLS_PPROF_LABELS_H */
