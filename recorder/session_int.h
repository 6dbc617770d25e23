/* SPDX-License-Identifier: MIT */
/*
 * session_int.h - the state one recording shares between its files; private
 * to recorder/session*.c and the event sources (contract of the whole in
 * session.h).
 *
 *   session.c   the life cycle: new, open, start, poll, stop, close, status
 *   targets.c   -p/-t/-C and the command checked; targets described, gone
 *   output.c    where the file goes, creating it, the writer of each file,
 *               write errors, --switch-output
 *   loop.c      ring records into the batch, a batch written as one round
 *               (samples, tasks, lost counts, FINISHED_ROUND, checkpoint)
 *   sampler.c   the default event source: perf events and the BPF sampler
 *   source.h    what any event source provides (the seam tests fake)
 *   tracers.c   the tracers a recording asked for (tracer.h), called at
 *               each step
 *
 * Messages: the helpers below fill s->err (session_fail) or go to the log
 * callback (session_warn, session_note); nothing prints by itself.
 */
#ifndef RECORDER_SESSION_INT_H
#define RECORDER_SESSION_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "recorder/batch.h"
#include "recorder/kfeatures.h"
#include "recorder/kmaps.h"
#include "recorder/launch.h"
#include "recorder/pidset.h"
#include "recorder/privs.h"
#include "recorder/rotate.h"
#include "recorder/session.h"
#include "recorder/source.h"
#include "recorder/tasks.h"
#include "symbolize/cfiwalk.h"
#include "tools/lib/errbuf.h"

/*
 * Write a round early when a batch holds this much (a slow disk, a storm),
 * or twice the ring buffer when that is more (the source raises
 * s->batch_max): a batch cut short leaves the task-notice ring unread for
 * that round, and DWARF samples (8 KiB each) would cut nearly every batch
 * at 16 MiB, so FORK/EXIT notices would fall rounds behind and perf would
 * count them out of order.
 */
#define BATCH_MAX_BYTES		(8u << 20)
/* The largest ring buffer record_opts.ring_buffer_bytes may ask for. */
#define RECORD_RING_MAX_BYTES	(1u << 30)
/* Tracers one recording may hold (tracers.c checks its list fits). */
#define RECORD_TRACERS_MAX	8
/* Environment variables the tracers may give a launched command. */
#define RECORD_CMD_ENV_MAX	8

struct emit_sample;
struct py_frame;

/* A tracer the recording asked for (tracer.h): its ops and its state. */
struct record_tracer_ops;
struct record_tracer {
	const struct record_tracer_ops *ops;
	void *t;
};

struct record_session {
	struct record_opts opts;	/* arrays below are our own copies */
	pid_t *pids, *tids;
	int *cpus;
	size_t nr_cpus;
	char *output;
	bool pipe;
	bool external;		/* the caller's fd or write callback: never created, closed or unlinked */
	bool to_stdout;		/* the pipe on fd 1: a launched command's stdout goes to stderr */
	enum session_state state;

	char err[512];
	int failure_code;
	struct privs_facts privs;
	struct kfeatures kfeatures;	/* what the kernel's BPF can do: probed at open, before check */
	char exe[PATH_MAX];
	struct kernel_text ktext;	/* set by the source; empty = no kernel map */
	bool warned_maps, noted_map_files;	/* said once per recording */
	bool noted_bpf_ksyms;			/* likewise */

	/* The event sampled, and the attr the file describes (perfdata/attr.h). */
	uint32_t event_type;
	uint64_t event_config;
	struct perf_event_attr attr;
	const char *event_name;
	uint64_t event_id;	/* the source's; 1 when it has none */

	/* The event source (source.h) and what it may hand the session. */
	const struct record_source_ops *src_ops;
	void *src;
	bool src_opened;	/* src_ops->open() was called: detach and free are due */
	/* The tracers, in the order of tracers.c; opened and freed by the source. */
	struct record_tracer tracers[RECORD_TRACERS_MAX];
	size_t nr_tracers;
	struct unwind_bpf *unwind;	/* cfi: the tables of the in-kernel unwinder */
	struct py_frames *py;		/* cfi: Python frames (pyframes.h); NULL = none */
	struct sideband *sideband;	/* NULL: processes are described from /proc only */
	struct cfi_walk late_walk;	/* the late sample at hand's second walk (loop.c): 1 KiB */
	bool late_ok;			/* late_walk holds it */
	bool late_spin;			/* this round may still wait a moment for a walk */
	size_t round_done;		/* batch bytes before the record at hand (this round) */
	uint64_t early_done;		/* held mmap reports told early up to this time */
	/* The late sample the last round ended at, still waiting for its walk (loop.c). */
	bool wait_set;
	uint32_t wait_tid;
	uint64_t wait_time;
	size_t held_nr;			/* batch records looked at while it waits */
	uint64_t consume_start;		/* when this reading of the rings began */
	uint64_t consumed;		/* records read, for checking the clock now and then */
	int epfd;

	/* Output. */
	int out_fd;
	bool created, finished;
	char *old_path;
	struct perfdata_writer *w;
	struct task_tracker *tracker;
	struct buildid_cache *bcache;	/* NULL with -N or when unusable */

	/* The launched command. */
	char cmd_path[PATH_MAX];
	struct launch child;
	/* What the tracers add to its environment (NULL-terminated; their strings). */
	char *cmd_env[RECORD_CMD_ENV_MAX + 1];

	struct batch batch;
	size_t batch_max;	/* bytes: see BATCH_MAX_BYTES */
	/*
	 * Where this round ends (CLOCK_MONOTONIC ns): when the rings were last
	 * read whole. The side-band is read after them, to the present, so past
	 * that time it may hold reports that belong after records the rings
	 * still hold (an exec's, before the notice of its process's fork):
	 * records past it wait in the batch for the next round.
	 */
	uint64_t horizon;
	uint64_t last_delivered;	/* the time of the last record the source delivered */
	bool draining;		/* detached: the rings hold everything there is */
	int cb_err;
	uint64_t next_flush_ns, last_flush_ns;
	/* When the last FINISHED_ROUND was written; records written since without one. */
	uint64_t round_mark_ns;
	bool round_unmarked;
	bool describe_soon;	/* a new process arrived: write a round early */
	uint64_t unwind_requests;	/* unwind_bpf_requests() after the last round */
	uint64_t unwind_settle_ns;	/* rounds come early until then */
	uint64_t last_time;
	uint64_t seen, lost, lost_task;
	uint64_t late_spent, late_busy;	/* record_source_counters' */
	uint64_t py_cut;		/* record_source_counters' */
	bool workload_done, write_failed;
	struct pidset pids_seen;

	/* --switch-output. */
	struct rotator rot;
	uint64_t file_start_ns;
	uint64_t samples_done, bytes_done;	/* of the files already finished */
	/* The current file at its last checkpoint: what a write error leaves. */
	uint64_t ckpt_samples, ckpt_bytes;
	/* CPU-event samples written (all files), now and at the last checkpoint. */
	uint64_t cpu_written, ckpt_cpu_written;
	char *final_name;			/* the last file's name after stop */
};

/* session.c: messages (the clock is tools/lib/clock.h). */
/* s->err, and err (tools/lib/errbuf.h). */
#define session_fail(s, e, ...) ERRBUF_FAIL(s, e, __VA_ARGS__)
void session_warn(const struct record_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void session_note(const struct record_session *s, const char *msg);
/* A step refused for want of a privilege: say which one (privs.h). */
int session_priv_fail(struct record_session *s, enum priv_step step, int err, const char *what);

/* targets.c */
int session_check_targets(struct record_session *s);
/* Stamp the -p/-t targets' COMM as of time (before the first sample). */
int session_describe_targets(struct record_session *s, uint64_t time);
/* Every -p/-t target exited (false without -p/-t). */
bool session_targets_gone(const struct record_session *s);

/* output.c */
int session_choose_output(struct record_session *s, const struct record_opts *opts);
int session_check_output_dir(struct record_session *s);
int session_create_output(struct record_session *s);
/* Header, events, kernel maps, a fresh task tracker, the targets (as of describe_time). */
int session_open_writer(struct record_session *s, uint64_t describe_time);
/* Forget the current file's writer and tracker; keep its counts. */
void session_free_writer(struct record_session *s);
/* A failed write ends the recording: s->err says where and why. Returns err. */
int session_write_error(struct record_session *s, int err);
/* --switch-output: the rotation due at now (mono ns), if any. 0 or -errno. */
int session_switch_if_due(struct record_session *s, uint64_t now);
/* Finish the file and go on in a new one. */
int session_switch_output(struct record_session *s);
/* --switch-output: give the finished file its final name. */
int session_retire_file(struct record_session *s);

/* tracers.c: the tracers (tracer.h) in their order, and the session's tracers at each step. */
/* The i-th tracer there is; NULL past the last. */
const struct record_tracer_ops *record_tracer_registered(size_t i);
/* Whether opts ask for any tracer. */
bool record_tracers_wanted(const struct record_opts *opts);
/* The source opened the tracer of ops: the session holds it (t, its state) from now on. */
void session_add_tracer(struct record_session *s, const struct record_tracer_ops *ops, void *t);
/* The state of the session's tracer of ops; NULL when the recording has none. */
void *session_tracer(const struct record_session *s, const struct record_tracer_ops *ops);
/* The tracer a record of the source's ring buffer belongs to; NULL = none. */
const struct record_tracer *session_tracer_of(const struct record_session *s, const void *rec,
					      size_t size);
/* The task tracker's first hooks: the last tracer's that has some, else the unwinder's. */
void session_tracker_hooks(const struct record_session *s,
			   const struct task_tracker_hooks **hooks, void **ctx);
/* s->cmd_env from the tracers. 0, or -E2BIG with s->err set. */
int session_tracers_command_env(struct record_session *s);
/* Their events into the header of s->w. 0 or the writer's -errno. */
int session_tracers_add_events(struct record_session *s);
/* Attach each; 0, or -errno with s->err set. */
int session_tracers_attach(struct record_session *s);
void session_tracers_detach(struct record_session *s);
/* Free each (the source's free: after the tracker that used their hooks). */
void session_tracers_free(struct record_session *s);
/* The fds of their own ring buffers, at most max into fds: how many. */
int session_tracers_poll_fds(const struct record_session *s, int *fds, size_t max);
/* Read their own ring buffers. 0 or -errno. */
int session_tracers_consume(struct record_session *s);
/*
 * The end of a round whose records up to `upto` are written: their own
 * batches as far, then their losses (*wrote set when any).
 */
int session_tracers_round(struct record_session *s, uint64_t upto, bool *wrote);
/* What ends a file, after its last round (last: the recording's). 0 or the writer's -errno. */
int session_tracers_file_end(struct record_session *s, bool last);
void session_tracers_stats(const struct record_session *s, struct record_status *st);
/* The Python walks the tracers' BPF cut, summed. */
uint64_t session_tracers_py_cut(const struct record_session *s);

/* loop.c */
/*
 * A sample e with Python frames py[0, nr_py) (bpf/python.h, in the batch's
 * copy of its record; s->py set): its task described from its native
 * frames, the frames not named at delivery named in place (pyframes.h), then, unless describe_only, the symbol files
 * they need (a new one filed when they need more) and the sample with both
 * interleaved in its user chain. Used for the source's samples and the
 * tracers' records alike. 0 or the writer's -errno.
 */
int session_emit_python(struct record_session *s, struct emit_sample *e, struct py_frame *py,
			size_t nr_py, bool describe_only);
/* Name the Python frames py[0, nr_py) of a record of pid as it is delivered (s->py set). */
void session_python_prepare(struct record_session *s, uint32_t pid, uint64_t time,
			    struct py_frame *py, size_t nr_py);
/* Take what the source has (and the side-band); 0, or -errno with s->err set. */
int session_consume(struct record_session *s, bool *batch_full);
/* Write the batch as one time-sorted round, with the samples lost meanwhile. */
int session_flush_batch(struct record_session *s);
/* When the next round is due: the flush interval, or soon for a new process. */
uint64_t session_flush_due_ns(const struct record_session *s);

#endif /* RECORDER_SESSION_INT_H */
