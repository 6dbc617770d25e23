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

/*
 * bpfrec's allocation profile (record --alloc[=BYTES]): two events, both
 * PERF_TYPE_SOFTWARE / PERF_COUNT_SW_BPF_OUTPUT with the CPU event's
 * trailer bits plus PERF_SAMPLE_RAW, attr.sample_period = the sampling
 * interval in bytes (1 = every allocation), attr.freq = 0.
 *
 *   "alloc"  one SAMPLE per sampled allocation, at its time, by the
 *            allocating thread, with the allocation's callchain (the
 *            allocator's entry first, then its callers).
 *   "inuse"  at the end of the recording and of each --switch-output file:
 *            one SAMPLE per sampled allocation still live, with its
 *            allocating thread and callchain, stamped no earlier than what
 *            the file already holds.
 *
 * In both, period = the bytes the sample stands for: with interval R and
 * requested size S (Poisson sampling, as tcmalloc and Go), S / (1 -
 * exp(-S/R)), rounded; S itself when R is 1. The RAW data is text, "FUNC
 * SIZE" (the allocator entry and S in decimal: "malloc 4096", "calloc
 * 65536", "realloc 24", "mmap 1048576"), space-padded and NUL-terminated
 * as offcpu-time's, which perf script prints as the event's BPF string.
 * The objects a sample stands for are period / S.
 */
#define PERFDATA_ALLOC_EVENT_NAME	"alloc"
#define PERFDATA_INUSE_EVENT_NAME	"inuse"

/*
 * bpfrec's run-queue waits (record --sched): PERF_TYPE_SOFTWARE /
 * PERF_COUNT_SW_BPF_OUTPUT with the CPU event's trailer bits plus
 * PERF_SAMPLE_RAW, attr.sample_period 1. One SAMPLE per wait for a CPU at
 * least --sched-thresh long (shorter ones are summed per stack and reason
 * in BPF and written at the end as one SAMPLE each), by the waiting
 * thread, at the time it got the CPU back, with period = the nanoseconds
 * it was runnable but not running, the callchain where it stopped running
 * (preempted) or where it was woken, and as RAW text the reason, "preempted"
 * or "woken" ("woken" also for a new task's first wait), space-padded and
 * NUL-terminated as offcpu-time's.
 */
#define PERFDATA_SCHED_DELAY_EVENT_NAME	"sched-delay"

/* The name perf shows for a generic event ("cycles", "cpu-clock"), or NULL. */
const char *perfdata_event_generic_name(uint32_t type, uint64_t config);
/* The type and config of a generic event by any name perf accepts for it
 * ("cycles" or "cpu-cycles"): 0, or -ENOENT. */
int perfdata_event_by_name(const char *name, uint32_t *type, uint64_t *config);

#endif /* PERFDATA_EVENTS_H */
