/* SPDX-License-Identifier: MIT */
/*
 * events.h - names and kinds of perf events, for profile names, sample
 * types and --event. Pure functions of the attr and the recorded name.
 */
#ifndef TOOLS_PPROF_EVENTS_H
#define TOOLS_PPROF_EVENTS_H

#include <stdbool.h>

#include "perfdata/perfdata.h"

/* The event's name as perf shows it: EVENT_DESC's, else made from the
 * attr ("cpu-clock", "cycles", "raw-TYPE-0xCONFIG"). malloc'ed, NULL = ENOMEM. */
char *pp_event_name(const struct perfdata_event *ev);
/* The name without perf's config terms: "page-faults/period=1/" ->
 * "page-faults", "cpu/cycles,period=1000/u" -> "cycles". malloc'ed. */
char *pp_event_short_name(const char *name);
/* Does name (full or short) match what --event asked for? Modifiers such
 * as ":u" may be left out of want. */
bool pp_event_matches(const char *name, const char *want);

bool pp_event_is_dummy(const struct perfdata_event *ev);	/* perf's tracking event */
bool pp_event_is_timer(const struct perfdata_event *ev);	/* cpu-clock, task-clock */
bool pp_event_is_offcpu(const char *name);			/* "offcpu-time" */

/*
 * bpfrec's BPF_OUTPUT events whose RAW text the converter reads
 * (perfdata/events.h). Recognized by name and by their BPF_OUTPUT attr, so
 * that another event that happens to be called "alloc" or "sched-delay"
 * converts as any other event.
 *
 * The allocation events ("alloc", "inuse") make one heap profile together,
 * named PP_HEAP_PROFILE_NAME, with Go's four sample types. "sched-delay"
 * makes a profile of run-queue waits: runq_delay/nanoseconds, with the
 * reason for each wait as the string label PP_SCHED_REASON_LABEL.
 */
#define PP_HEAP_PROFILE_NAME "heap"
#define PP_SCHED_REASON_LABEL "reason"

enum pp_output_kind { PP_OUTPUT_NONE, PP_OUTPUT_ALLOC, PP_OUTPUT_INUSE, PP_OUTPUT_SCHED_DELAY };

enum pp_output_kind pp_event_output_kind(const struct perfdata_event *ev, const char *name);

static inline bool pp_output_is_heap(enum pp_output_kind k)
{
	return k == PP_OUTPUT_ALLOC || k == PP_OUTPUT_INUSE;
}

/* Does --event want (NULL: every event) select event ev, named name? By
 * its name (pp_event_matches()), or PP_HEAP_PROFILE_NAME for both
 * allocation events. */
bool pp_event_selected(const struct perfdata_event *ev, const char *name, const char *want);

/*
 * The RAW texts of these events are words separated by one space, then
 * only space padding up to a NUL or the end of the data (perfdata/events.h).
 * A word is 1 to PP_RAW_WORD_MAX printable characters other than space.
 */
#define PP_RAW_WORD_MAX 64

struct pp_raw_word {
	const char *s;			/* into the RAW data, not NUL-terminated */
	size_t len;
};

/*
 * Split raw (size bytes; never read past them or past a NUL) into its
 * words. Returns how many there are, 1 to max, or 0 when the text is not
 * of that form or has more than max words.
 */
size_t pp_raw_words(const void *raw, size_t size, struct pp_raw_word *words, size_t max);
/*
 * The requested size S of an allocation sample's RAW text "FUNC SIZE".
 * 0 when the text is not of that form or S is 0: the caller then counts
 * the sample as one object.
 */
uint64_t pp_heap_raw_size(const void *raw, size_t size);
/*
 * The reason of a sched-delay sample's RAW text ("preempted", "woken"):
 * one word of lowercase letters, digits, '-' and '_'. Returns its length
 * and points *reason into raw, or 0 when the text is not of that form
 * (the sample then gets no reason label).
 */
size_t pp_sched_raw_reason(const void *raw, size_t size, const char **reason);

#endif /* TOOLS_PPROF_EVENTS_H */
