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
 * bpfrec's allocation events ("alloc", "inuse": perfdata/events.h) make one
 * heap profile together, named PP_HEAP_PROFILE_NAME, with Go's four sample
 * types. Recognized by name and by their BPF_OUTPUT attr, so that another
 * event that happens to be called "alloc" keeps a profile of its own.
 */
#define PP_HEAP_PROFILE_NAME "heap"

enum pp_heap_kind { PP_HEAP_NONE, PP_HEAP_ALLOC, PP_HEAP_INUSE };

enum pp_heap_kind pp_event_heap_kind(const struct perfdata_event *ev, const char *name);
/*
 * The requested size S of an allocation sample's RAW text "FUNC SIZE"
 * (space-padded, NUL-terminated; perfdata/events.h). Reads at most size
 * bytes and never past a NUL. 0 when the text is not of that form or S is
 * 0: the caller then counts the sample as one object.
 */
uint64_t pp_heap_raw_size(const void *raw, size_t size);

#endif /* TOOLS_PPROF_EVENTS_H */
