/* SPDX-License-Identifier: MIT */
/*
 * events.h - the names perf gives its generic events, both ways: the one
 * table of them, for `record -e NAME`, for the names `dump` and `pprof`
 * show for an attr that came without an EVENT_DESC name, and the name of
 * the off-CPU event perf's own --off-cpu writes.
 *
 * Generic events are PERF_TYPE_HARDWARE and PERF_TYPE_SOFTWARE ones with
 * the kernel's fixed config numbers; everything else (tracepoints, PMU
 * events, raw) has names only in sysfs or in the file.
 */
#ifndef PERFDATA_EVENTS_H
#define PERFDATA_EVENTS_H

#include <stdint.h>

/* The SAMPLEs of perf's --off-cpu, and of bpfrec's: one per blocked interval. */
#define PERFDATA_OFFCPU_EVENT_NAME	"offcpu-time"

/* The name perf shows for a generic event ("cycles", "cpu-clock"), or NULL. */
const char *perfdata_event_generic_name(uint32_t type, uint64_t config);
/* The type and config of a generic event by any name perf accepts for it
 * ("cycles" or "cpu-cycles"): 0, or -ENOENT. */
int perfdata_event_by_name(const char *name, uint32_t *type, uint64_t *config);

#endif /* PERFDATA_EVENTS_H */
