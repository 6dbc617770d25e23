/* SPDX-License-Identifier: MIT */
/*
 * sched.h - `bpfrec record --sched`: load bpf/sched.bpf.c next to the
 * sampler, write its run-queue waits as samples of the "sched-delay" event
 * (contract in perfdata/events.h) and read the per-thread metrics it keeps
 * in BPF (bpf/sched.h, <bpfrec/sched.h>).
 *
 * Like the off-CPU tracer (offcpu.h), whose record layout and code it
 * shares, it reuses the sampler's ring buffer, target maps and unwind
 * tables; the session owns the batch and the writer. This module only
 *   - loads, attaches and detaches the tracer;
 *   - recognizes its records (sched_record_ok) and writes them (sched_write);
 *   - writes its losses as LOST_SAMPLES of its event (sched_write_lost);
 *   - at the end puts the summed short waits into the batch (sched_collect)
 *     and writes the metrics (sched_write_metrics) after the last round;
 *   - reads the metrics at any time (sched_read_metrics).
 * Every function returns 0 or -errno.
 */
#ifndef RECORDER_SCHED_H
#define RECORDER_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "perfdata/events.h"

struct batch;
struct bpfrec_sched_metrics;
struct load_log;
struct perfdata_writer;
struct sched_tracer;
struct task_tracker;

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

struct sched_opts {
	int events_fd;		/* the sampler's ring buffer */
	int target_tgids_fd;	/* the sampler's target maps */
	int target_tids_fd;
	uint32_t filter_mode;	/* enum profile_filter, as the sampler's */
	uint64_t wakeup_bytes;	/* as the sampler's */
	uint64_t thresh_ns;	/* --sched-thresh; 0 = every wait a sample */
	bool no_stacks;		/* no callchains (the sampler records none either) */
	/* User stacks with the sampler's unwind tables (else frame pointers). */
	bool unwind_cfi;
	int unwind_rows_fd, unwind_procs_fd, unwind_stops_fd, unwind_stats_fd;
	/* The programs' compat build (recorder/tracer_build.h): before 5.17. */
	bool compat;
	/* The CPU event: the trailer bits and clock to share, and its id. */
	const struct perf_event_attr *cpu_attr;
	uint64_t cpu_event_id;
	/* Keeps the verifier's log of a failed load (recorder/loadlog.h); NULL = libbpf's. */
	struct load_log *load_log;
	/* Where __schedule lies (recorder/kmaps.h); 0, 0 when unknown. */
	uint64_t sched_start, sched_end;
};

int sched_new(const struct sched_opts *opts, struct sched_tracer **out);
void sched_free(struct sched_tracer *t);
int sched_attach(struct sched_tracer *t);
void sched_detach(struct sched_tracer *t);

/* Its BPF object, loaded (for progstats_add_object()). */
const struct bpf_object *sched_object(const struct sched_tracer *t);
/* The sched-delay event for perfdata_writer_add_event(). */
const struct perf_event_attr *sched_attr(const struct sched_tracer *t);
const uint64_t *sched_event_id(const struct sched_tracer *t);

/* True when a ring-buffer record is one of ours and well-formed. */
bool sched_record_ok(const void *data, size_t size);
int sched_write(struct sched_tracer *t, struct perfdata_writer *w, struct task_tracker *tt,
		const void *rec, size_t size);
int sched_write_lost(struct sched_tracer *t, struct perfdata_writer *w, uint64_t time);
uint64_t sched_lost(const struct sched_tracer *t);
/* The summed short waits into the batch, stamped max(last, min_time). After detaching. */
int sched_collect(struct sched_tracer *t, struct batch *b, uint64_t min_time);

/* Switches not counted in the metrics: their thread found the map full (bpf/sched.h). */
uint64_t sched_threads_dropped(struct sched_tracer *t);
/* The metrics so far, sorted by pid and tid; the caller frees *out. */
int sched_read_metrics(struct sched_tracer *t, struct bpfrec_sched_metrics **out);
/* The metrics so far into the file (after its last round). */
int sched_write_metrics(struct sched_tracer *t, struct perfdata_writer *w);

/* The RAW text of a wait's reason (SCHED_WAIT_*), padded as offcpu_pad_text(). */
size_t sched_reason_text(uint32_t reason, char *buf, size_t size);
/* The sched-delay attr next to cpu_attr (pure, for tests). */
void sched_build_attr(const struct perf_event_attr *cpu_attr, struct perf_event_attr *out);

#endif /* RECORDER_SCHED_H */
