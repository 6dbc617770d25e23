/* SPDX-License-Identifier: MIT */
/*
 * sched.h - `bpfrec record --sched`: load bpf/sched.bpf.c next to the
 * sampler, write its run-queue waits as samples of the "sched-delay" event
 * (contract in perfdata/events.h) and read the per-thread metrics it keeps
 * in BPF (bpf/sched.h, <bpfrec/sched.h>).
 *
 * A tracer (tracer.h: sched_tracer) like the off-CPU one (offcpu.h), whose
 * record layout and code it shares: it reuses the sampler's ring buffer,
 * target maps and unwind tables; the session owns the batch and the
 * writer. Its waits are written as SAMPLEs, its losses as LOST_SAMPLES of
 * its event, the summed short waits go into the batch at the end, and the
 * metrics follow the recording's last round; sched_read_metrics() reads
 * them at any time. Every function returns 0 or -errno.
 */
#ifndef RECORDER_SCHED_H
#define RECORDER_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "perfdata/events.h"

struct bpfrec_sched_metrics;
struct record_tracer_ops;

#define SCHED_EVENT_NAME	PERFDATA_SCHED_DELAY_EVENT_NAME
/*
 * --sched-thresh's default: waits shorter than a millisecond are summed per
 * stack in BPF. A millisecond is the order of a scheduler tick and of the
 * base slice a CPU-bound task gets before the next runnable one: waits under
 * it are the normal cost of sharing a CPU, counted in the metrics anyway
 * (runqlat's histogram shows them); a wait longer than that is a thread
 * that lost whole slices, which is what one looks for in `perf report`.
 */
#define SCHED_DEFAULT_THRESH_NS	1000000ull

/* --sched: the tracer (tracer.h), in tracers.c's list; its state is a struct sched_tracer. */
extern const struct record_tracer_ops sched_tracer;
struct sched_tracer;

/* The metrics so far, sorted by pid and tid; the caller frees *out. */
int sched_read_metrics(struct sched_tracer *t, struct bpfrec_sched_metrics **out);

/* The RAW text of a wait's reason (SCHED_WAIT_*), padded as offcpu_pad_text(). */
size_t sched_reason_text(uint32_t reason, char *buf, size_t size);
/* The sched-delay attr next to cpu_attr (pure, for tests). */
void sched_build_attr(const struct perf_event_attr *cpu_attr, struct perf_event_attr *out);

#endif /* RECORDER_SCHED_H */
