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

#endif /* TOOLS_PPROF_EVENTS_H */
