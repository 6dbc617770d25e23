/* SPDX-License-Identifier: MIT */
/*
 * source.h - where a recording's records come from: the seam between the
 * session (batching, the writer, rotation, the life cycle) and the thing
 * that samples.
 *
 * The default source is the BPF sampler (recorder/sampler.h): perf events
 * per CPU and bpf/profile.bpf.c. A test hands the session another one in
 * record_opts.source (an internal field: bpfrec/record.h has no such thing)
 * and drives it without BPF or root.
 *
 * What belongs to a source, and so is skipped with a fake one: the
 * privileges BPF and perf events need and the kernel's BTF (check), the
 * kernel's text range and __schedule from /proc/kallsyms (s->ktext: left
 * empty, the file then has no kernel map), the perf events and their id
 * (s->event_id, default 1), the BPF programs and maps, the target maps, the tracers
 * that ride on them (tracer.h: --off-cpu, --alloc, --sched; a new one goes
 * there and in tracers.c's list, not here), the in-kernel unwind tables
 * and the mmap side-band (s->tracers, s->unwind, s->sideband: none without
 * them). The source opens the tracers the options ask for
 * (record_tracer_registered(), session_add_tracer()), attaches and
 * detaches them with its own programs (session_tracers_attach(),
 * session_tracers_detach()) and frees them (session_tracers_free()); the
 * session calls them at every other step. What stays with the session
 * whatever the source: the options, the targets checked in /proc, the
 * output, the writer, the task tracker, the batch and its rounds, the lost
 * accounting, rotation and the launched command.
 *
 * A source frees in free() what it set in the session (and NULLs or
 * empties it): the session uses those only between open and close.
 *
 * Every op gets the session and src, the source's own state: open() starts
 * with *src = record_opts.source_ctx and may replace it. An op that fails
 * returns -errno with the session's message set (session_fail() of
 * session_int.h; a fake may leave it empty). Ops that cannot fail may be
 * NULL where marked.
 */
#ifndef RECORDER_SOURCE_H
#define RECORDER_SOURCE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct record_session;

/* The source's own counts, read at each round. */
struct record_source_counters {
	uint64_t seen;		/* samples in scope the source took */
	uint64_t lost;		/* of those, never delivered (a full ring buffer) */
	uint64_t lost_task;	/* fork/exit/exec notices never delivered */
	/* -g: samples that had no stack copy left for a late walk (PROFILE_STAT_LATE_SPENT). */
	uint64_t late_spent;
	/* -g: samples that got no stack copy for a late walk: the ring buffer was too full. */
	uint64_t late_busy;
	/* -g: Python walks cut (PROFILE_STAT_PY_CUT). */
	uint64_t py_cut;
	/* The source's BPF programs, when the kernel counts their time. */
	bool bpf_counted;
	uint64_t bpf_run_ns, bpf_runs;
};

struct record_source_ops {
	/* Before the targets are looked at: what nothing works without. NULL = none. */
	int (*check)(struct record_session *s, void *src);
	/*
	 * Everything the kernel may refuse, before the output is touched
	 * (s->cpus and s->attr are set by then). May set the session fields
	 * named above and raise s->batch_max.
	 */
	int (*open)(struct record_session *s, void **src);
	/* The launched command's pid joins the targets (not with -a). NULL = none. */
	int (*add_target)(struct record_session *s, void *src, pid_t pid);
	/* Start delivering (sampling begins). */
	int (*attach)(struct record_session *s, void *src);
	/* Stop taking samples; what was taken can still be consumed. Idempotent. */
	void (*detach)(struct record_session *s, void *src);
	/* The fd that is readable when records wait; -1 = none (poll just sleeps). */
	int (*poll_fd)(const struct record_session *s, const void *src);
	/*
	 * Hand every record waiting to record_source_deliver(s, ...), in
	 * order, until it returns non-zero. Returns >= 0, the value
	 * record_source_deliver() stopped with, or another -errno.
	 */
	int (*consume)(struct record_session *s, void *src);
	void (*counters)(const struct record_session *s, const void *src,
			 struct record_source_counters *c);
	/* Free src (after detach). NULL = nothing to free. */
	void (*free)(struct record_session *s, void *src);
	/*
	 * -g: a late sample of pid, walked again once its tables were in, got
	 * no further than the walk that came with it (its stack leaves every
	 * mapped file: JIT code), or its tables took too long to come. Its
	 * copies cost and do not help: send fewer of them. NULL = none.
	 */
	void (*late_unhelpful)(struct record_session *s, void *src, uint32_t pid);
};

/*
 * One record into the session's batch (a struct profile_hdr first, bpf/profile.h;
 * malformed ones are dropped). 0 = go on; RECORD_SOURCE_BATCH_FULL = stop
 * consuming (this record is taken); -ENOMEM. The signature of libbpf's
 * ring_buffer_sample_fn, ctx being the session.
 */
int record_source_deliver(void *session, void *data, size_t size);
#define RECORD_SOURCE_BATCH_FULL	(-ECANCELED)

#endif /* RECORDER_SOURCE_H */
