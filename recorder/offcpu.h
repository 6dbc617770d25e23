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
 * A tracer (tracer.h: offcpu_tracer): it loads with the sampler's ring
 * buffer, target maps and unwind tables; the session owns the batch and
 * the writer. Its records in the shared ring buffer (offcpu_record_ok())
 * become SAMPLEs through emit.h (for a DESCRIBE record only the task
 * tracker's COMM/MMAP2), its losses LOST_SAMPLES of its own event, and at
 * the end the aggregated short intervals go into the batch, stamped no
 * earlier than what was already written so that perf reads them in order.
 * Every function returns 0 or -errno.
 */
#ifndef RECORDER_OFFCPU_H
#define RECORDER_OFFCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "perfdata/events.h"
#include "recorder/tracer_build.h"

struct batch;
struct bpf_map;
struct bpf_object;
struct bpf_object_skeleton;
struct perfdata_writer;
struct py_frame;
struct record_session;
struct record_tracer_env;
struct record_tracer_ops;
struct record_tracer_shared;
struct task_tracker;

#define OFFCPU_EVENT_NAME	PERFDATA_OFFCPU_EVENT_NAME

/* --off-cpu: the tracer (tracer.h), in tracers.c's list. */
extern const struct record_tracer_ops offcpu_tracer;

/* True when a ring-buffer record is one of ours and well-formed. */
bool offcpu_record_ok(const void *data, size_t size);

/*
 * What --sched (recorder/sched.c) shares with this module: its records have
 * the off-CPU layout (bpf/sched.h), so they are checked, written and
 * collected by the same code with another event id, RAW text and kind.
 */
struct offcpu_emit_ctx {
	uint64_t id;				/* the event's sample id */
	const struct perf_event_attr *attr;	/* the event's attr */
	uint64_t sched_start, sched_end;	/* __schedule: where chains start */
	/* Records with Python frames are written through it (session_emit_python()); NULL = none. */
	struct record_session *py_session;
};
/* A record of that layout, whole (the checks of offcpu_record_ok()), of either kind. */
bool offcpu_record_of(const void *data, size_t size, uint32_t sample_kind,
		      uint32_t describe_kind);
/*
 * Write a record of that layout (the batch's copy: its Python frames are
 * named in it) as a SAMPLE of c's event, raw as its RAW data.
 */
int offcpu_emit(struct perfdata_writer *w, struct task_tracker *t, const struct offcpu_emit_ctx *c,
		void *rec, size_t size, const char *raw, uint32_t raw_size, bool describe_only);

/* What sets a tracer of that layout apart, for the ops both share (below). */
struct offcpu_core_desc {
	const char *event;	/* its event's name */
	uint64_t id_base;	/* its event's id, less the CPU event's */
	uint32_t kind;		/* of its samples: the sums are collected as such */
	uint32_t lost_stat;	/* its counter of records lost, in stats */
	uint32_t py_cut_stat;	/* its counter of Python walks cut, in stats */
};

/* Programs a tracer of that layout may have, and maps of one build (NULL after the last). */
#define OFFCPU_CORE_MAX_PROGS	3
#define OFFCPU_CORE_MAX_MAPS	2

/*
 * A tracer of that layout: what both keep alike, the first member of their
 * state, so that the offcpu_core_*() ops below serve as theirs (tracer.h;
 * t: the state). open() sets what it names, builds attr and loads with
 * OFFCPU_CORE_LOAD(); free() detaches it first.
 */
struct offcpu_core {
	const struct offcpu_core_desc *desc;
	const struct bpf_object *obj;
	struct bpf_map *stats;		/* its per-CPU counters (percpu.h) */
	struct bpf_map *aggs;		/* its sums of short intervals */
	uint64_t thresh_ns;		/* shorter intervals are summed (0: none) */
	struct tracer_build_prog progs[OFFCPU_CORE_MAX_PROGS];	/* in the order they attach */
	size_t nr_progs;
	/* The maps only one build uses (tracer_build_choose()): the other's shrink. */
	struct bpf_map *current_maps[OFFCPU_CORE_MAX_MAPS], *compat_maps[OFFCPU_CORE_MAX_MAPS];
	/* Set by offcpu_core_load(), and after. */
	struct perf_event_attr attr;	/* its event's (built by open()) */
	struct offcpu_emit_ctx emit;	/* its event: id, &attr, where chains start */
	bool compat;			/* which build is loaded (tracer_build.h) */
	struct bpf_link *links[OFFCPU_CORE_MAX_PROGS];
	uint64_t lost;			/* written as LOST_SAMPLES so far */
};

/*
 * The end of open(), the same for both: c's event next to the session's
 * CPU event, aggs shrunk to one entry when nothing is summed, the build
 * this kernel needs chosen (tracer_build_choose()), then the object loaded
 * on the source's maps (record_tracer_load(): m and skel as there). 0 or
 * libbpf's -errno.
 */
int offcpu_core_load(struct offcpu_core *c, struct record_session *s,
		     const struct record_tracer_env *env, const struct record_tracer_shared *m,
		     struct bpf_object_skeleton *skel);
/* The same for a skeleton that names the shared maps as the sampler does (tracer.h). */
#define OFFCPU_CORE_LOAD(c, s, env, skel)	\
	offcpu_core_load((c), (s), (env), RECORD_TRACER_SHARED(skel), (skel)->skeleton)
/* One of c's counters (its enum of stats); 0 when it cannot be read. */
uint64_t offcpu_core_stat(const struct offcpu_core *c, uint32_t key);
/* The ops both tracers share (tracer.h), t a state that starts with a struct offcpu_core. */
const struct bpf_object *offcpu_core_object(const void *t);
int offcpu_core_add_events(void *t, struct perfdata_writer *w);
int offcpu_core_attach(struct record_session *s, void *t);
void offcpu_core_detach(void *t);
int offcpu_core_write_lost(void *t, struct perfdata_writer *w, uint64_t time);
int offcpu_core_collect(void *t, struct batch *b, uint64_t min_time);
size_t offcpu_core_py_frames(void *rec, struct py_frame **py);
uint64_t offcpu_core_py_cut(const void *t);
/* Those ops in the initializer of a tracer's struct record_tracer_ops; it has both builds. */
#define OFFCPU_CORE_OPS					\
	.compat_build = true,				\
	.object = offcpu_core_object,			\
	.add_events = offcpu_core_add_events,		\
	.attach = offcpu_core_attach,			\
	.detach = offcpu_core_detach,			\
	.write_lost = offcpu_core_write_lost,		\
	.collect = offcpu_core_collect,			\
	.py_frames = offcpu_core_py_frames,		\
	.py_cut = offcpu_core_py_cut
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
