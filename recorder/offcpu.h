/* SPDX-License-Identifier: MIT */
/*
 * offcpu.h - `bpfrec record --off-cpu`: load bpf/offcpu.bpf.c next to the
 * sampler and turn its records into samples of a second event,
 * "offcpu-time", as perf's own --off-cpu writes it.
 *
 * The event: PERF_TYPE_SOFTWARE / PERF_COUNT_SW_BPF_OUTPUT, one SAMPLE per
 * blocked interval with period = nanoseconds off CPU, time = the switch-in
 * time, the callchain taken at switch-out (kernel part: the schedule path;
 * user part: who waits) and as RAW data the task state at switch-out as
 * text, "S (sleeping)", "D (disk sleep)", "R (preempted)", ... (the letters
 * of ps), which `perf script` prints as the event's "BPF string". Its
 * trailer bits are the CPU event's, as the writer requires.
 *
 * The session owns the ring buffer and the batch; this module only
 *   - loads the tracer with the sampler's ring buffer and target maps
 *     (offcpu_new, after the sampler is loaded), attaches and detaches it;
 *   - recognizes its records in the shared ring buffer (offcpu_record_ok)
 *     and writes them (offcpu_write: a SAMPLE, or for a DESCRIBE record
 *     only the task tracker's COMM/MMAP2);
 *   - writes its losses as LOST_SAMPLES of its own event (offcpu_write_lost);
 *   - at the end puts the aggregated short intervals into the batch
 *     (offcpu_collect), stamped no earlier than what was already written so
 *     that perf reads them in order.
 * Every function returns 0 or -errno.
 */
#ifndef RECORDER_OFFCPU_H
#define RECORDER_OFFCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "perfdata/events.h"

struct batch;
struct load_log;
struct offcpu_tracer;
struct perfdata_writer;
struct task_tracker;

#define OFFCPU_EVENT_NAME	PERFDATA_OFFCPU_EVENT_NAME

struct offcpu_opts {
	int events_fd;		/* the sampler's ring buffer */
	int target_tgids_fd;	/* the sampler's target maps */
	int target_tids_fd;
	uint32_t filter_mode;	/* enum profile_filter, as the sampler's */
	uint64_t wakeup_bytes;	/* as the sampler's */
	uint64_t thresh_ns;	/* --off-cpu-thresh; 0 = every interval a sample */
	/*
	 * --call-graph dwarf: bytes of user stack per sample, 0 = none. The
	 * tracer keeps at most OFFCPU_USTACK_MAX (16 KiB) per blocked thread;
	 * the event's sample_stack_user says what it copies. Not with thresh_ns.
	 */
	uint32_t stack_user_size;
	/*
	 * Walk user stacks with the sampler's unwind tables (--call-graph cfi,
	 * the default): its maps, shared (recorder/unwind_bpf.h).
	 */
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

/* Open and load the tracer (not attached). */
int offcpu_new(const struct offcpu_opts *opts, struct offcpu_tracer **out);
void offcpu_free(struct offcpu_tracer *o);

int offcpu_attach(struct offcpu_tracer *o);
void offcpu_detach(struct offcpu_tracer *o);

/* Its BPF object, loaded (for progstats_add_object()). */
const struct bpf_object *offcpu_object(const struct offcpu_tracer *o);
/* The offcpu-time event for perfdata_writer_add_event(). */
const struct perf_event_attr *offcpu_attr(const struct offcpu_tracer *o);
const uint64_t *offcpu_event_id(const struct offcpu_tracer *o);

/* True when a ring-buffer record is one of ours and well-formed. */
bool offcpu_record_ok(const void *data, size_t size);
/* Write one of our records, size bytes (offcpu_record_ok() was true for it). */
int offcpu_write(struct offcpu_tracer *o, struct perfdata_writer *w, struct task_tracker *t,
		 const void *rec, size_t size);
/* LOST_SAMPLES for intervals dropped since the last call, stamped time. */
int offcpu_write_lost(struct offcpu_tracer *o, struct perfdata_writer *w, uint64_t time);
/* Intervals lost so far, as written. */
uint64_t offcpu_lost(const struct offcpu_tracer *o);
struct bpfrec_offcpu_stats;
/* What the tracer saw and what became of it so far (bpfrec_record.h). */
void offcpu_stats(const struct offcpu_tracer *o, struct bpfrec_offcpu_stats *out);

/*
 * Move every aggregate into the batch as a SAMPLE record (and empty the
 * map), stamped max(its last switch-in, min_time). Call after detaching.
 */
int offcpu_collect(struct offcpu_tracer *o, struct batch *b, uint64_t min_time);

/*
 * What --sched (recorder/sched.c) shares with this module: its records have
 * the off-CPU layout (bpf/sched.h), so they are checked, written and
 * collected by the same code with another event id, RAW text and kind.
 */
struct offcpu_emit_ctx {
	uint64_t id;				/* the event's sample id */
	const struct perf_event_attr *attr;	/* the event's attr */
	uint64_t sched_start, sched_end;	/* __schedule: where chains start */
};
struct bpf_map;
/* The layout checks of offcpu_record_ok(), whatever the record's kind. */
bool offcpu_record_shape_ok(const void *data, size_t size);
/* Write a record of that layout as a SAMPLE of c's event, raw as its RAW data. */
int offcpu_emit(struct perfdata_writer *w, struct task_tracker *t, const struct offcpu_emit_ctx *c,
		const void *rec, size_t size, const char *raw, uint32_t raw_size,
		bool describe_only);
/* offcpu_collect() over any map of aggregates, each batched as a record of kind. */
int offcpu_collect_map(struct bpf_map *aggs, uint32_t kind, struct batch *b, uint64_t min_time);
/*
 * text as a RAW payload: space-padded so that perf shows it as a string,
 * NUL-terminated. Returns its size (NUL included), or 0 when size <
 * OFFCPU_STATE_TEXT_MAX; longer text is cut.
 */
size_t offcpu_pad_text(const char *text, char *buf, size_t size);

/* Longest state text, NUL and padding included. */
#define OFFCPU_STATE_TEXT_MAX	32
/*
 * The RAW payload for a task state: text, space-padded so that perf shows
 * it as a string, NUL-terminated. Returns its size (NUL included), or 0
 * when size < OFFCPU_STATE_TEXT_MAX.
 */
size_t offcpu_state_text(uint32_t state, char *buf, size_t size);
/*
 * How many leading kernel frames are the tracer's own (the BPF program and
 * its tracepoint trampoline): those before the first frame inside
 * [sched_start, sched_end), looked for among the first 8. 0 when there is
 * none (or no range).
 */
size_t offcpu_trampoline_frames(const uint64_t *kernel, size_t nr, uint64_t sched_start,
				uint64_t sched_end);

/*
 * Pure helper, for tests: the attr of the offcpu-time event next to
 * cpu_attr. A cpu_attr with REGS_USER and STACK_USER (DWARF mode) gives the
 * same, with the stack size capped to what the tracer keeps.
 */
void offcpu_build_attr(const struct perf_event_attr *cpu_attr, struct perf_event_attr *out);

#endif /* RECORDER_OFFCPU_H */
