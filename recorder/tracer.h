/* SPDX-License-Identifier: MIT */
/*
 * tracer.h - what a tracer implements: BPF programs loaded next to the
 * event source's, on its maps (target maps, ring buffer, unwind tables),
 * that add events of their own to the recording. --off-cpu (offcpu.c),
 * --alloc (alloc.c) and --sched (sched.c) are tracers; the session holds
 * those a recording asks for (s->tracers, session_int.h) and knows them
 * only through these ops.
 *
 * A new tracer is one file and one line: the file implements the ops below
 * as `const struct record_tracer_ops NAME_tracer` (and includes
 * session_int.h for the session's options and messages); the line names it
 * in RECORD_TRACERS in tracers.c, whose order is the order tracers load,
 * attach, add their events to the header and write at each step. What
 * asks for it (its option in record_opts, the CLI, kfeatures.c if it needs
 * a newer kernel) is the rest of the work.
 *
 * Life cycle (who calls each op):
 *   wanted()      session.c, before anything opens: the CPU event then has
 *                 the trailer bits the tracers' events share (perfdata/attr.h)
 *   open()        the event source's open (sampler.c), on its maps (env)
 *   command_env() session.c, before the command is launched
 *   add_events()  output.c, in each file's header (--switch-output: every file)
 *   attach()      the source's attach, before sampling starts; detach() its
 *                 detach
 *   a round (loop.c): records of the source's ring buffer that record_ok()
 *                 says are the tracer's go through write() in time order;
 *                 a ring buffer of its own is read (consume(), poll_fd() in
 *                 the session's poll set) into a batch of its own, written
 *                 after them (flush()); then its losses (write_lost())
 *   collect()     session.c at stop, after the rings are drained: what BPF
 *                 still holds, written as one more round
 *   file_end()    after each file's last round (last: the recording's end)
 *   stats()       record_session_status()
 *   free()        the source's free
 *
 * Every record a tracer writes (samples, task descriptions, LOST_SAMPLES,
 * what ends a file) goes through emit.h, as the CPU event's do. Every op
 * that can fail returns 0 or -errno, and the caller says what failed; the
 * ops that take the session may say more in its log (session_warn(),
 * session_note()). Ops marked "NULL = none" may be left out.
 */
#ifndef RECORDER_TRACER_H
#define RECORDER_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

struct batch;
struct bpf_map;
struct bpf_object;
struct bpf_object_skeleton;
struct record_status;
struct load_log;
struct perfdata_writer;
struct py_frame;
struct record_opts;
struct record_session;
struct task_tracker;
struct task_tracker_hooks;

/* What the event source lends a tracer at open: its maps, and how it uses them. */
struct record_tracer_env {
	int events_fd;		/* the source's ring buffer */
	size_t ring_bytes;	/* its size (a power of two) */
	int target_tgids_fd;	/* its target maps */
	int target_tids_fd;
	uint32_t filter_mode;	/* which of them it checks (enum profile_filter) */
	/* --call-graph dwarf: the bytes of user stack a sample copies; 0 = none. */
	uint32_t stack_user_size;
	/* User stacks walk with the source's unwind tables (unwind_bpf.h), on these maps. */
	bool unwind_cfi;
	int unwind_rows_fd, unwind_procs_fd, unwind_stops_fd, unwind_stats_fd;
	/*
	 * The source's py_procs (bpf/python.bpf.h): its tracers' records of a
	 * Python thread carry its Python frames too (the compat build's
	 * from the bounded walk); -1 = none (no -g, --no-python).
	 */
	int py_procs_fd;
	/* Keeps the verifier's log of a failed load (loadlog.h). */
	struct load_log *load_log;
	/* The task tracker's hooks before this tracer's (NULL = none): a tracer with hooks passes every call on. */
	const struct task_tracker_hooks *next_hooks;
	void *next_hooks_ctx;
};

struct record_tracer_ops {
	const char *option;	/* the option that asks for it, for messages: "--off-cpu" */
	const char *what;	/* what it is, for messages: "the off-CPU tracer" */
	bool compat_build;	/* it has a build for kernels before 5.17 (tracer_build.h) */

	/* The options (record_opts, session.h) ask for it. */
	bool (*wanted)(const struct record_opts *opts);
	/*
	 * Load it, not attached: *t is its state (NULL on failure). The options,
	 * the kernel's features and the CPU event's attr and id are the
	 * session's (s->opts, s->kfeatures, s->attr, s->event_id). The caller
	 * says what failed.
	 */
	int (*open)(struct record_session *s, const struct record_tracer_env *env, void **t);
	/* Its BPF object, loaded: its programs' run time is counted with the source's. */
	const struct bpf_object *(*object)(const void *t);
	/*
	 * Told first of the tracker's process changes (tasks.h), ctx = t, and
	 * passes each on to env->next_hooks. NULL = none.
	 */
	const struct task_tracker_hooks *hooks;
	/*
	 * "NAME=VALUE" strings for the launched command's environment,
	 * NULL-terminated, kept in t (NULL: none to add). NULL = none.
	 */
	char *const *(*command_env)(struct record_session *s, void *t);
	/* Its events into a file's header (perfdata_writer_add_event()). */
	int (*add_events)(void *t, struct perfdata_writer *w);
	/*
	 * Start tracing. A refusal (privs.h) is said as the privilege it lacks,
	 * another error as "cannot attach"; a tracer that goes on without some
	 * of its probes warns and returns 0.
	 */
	int (*attach)(struct record_session *s, void *t);
	/* Stop; what was traced can still be read. Idempotent. */
	void (*detach)(void *t);

	/*
	 * A record of the source's ring buffer (a struct profile_hdr first) is
	 * one of the tracer's, whole: asked as it is delivered and in its
	 * round. NULL = it sends none there.
	 */
	bool (*record_ok)(const void *rec, size_t size);
	/*
	 * The Python frames (bpf/python.h) of such a record, record_ok() said
	 * so: how many, *py where they are. Named as the record is delivered,
	 * while its process most likely lives (pyframes.h). NULL = none.
	 */
	size_t (*py_frames)(void *rec, struct py_frame **py);
	/* Python walks its BPF cut (too deep, or a frame unreadable) so far. NULL = none. */
	uint64_t (*py_cut)(const void *t);
	/*
	 * Write one (record_ok() said so), its task described first (emit.h).
	 * rec is the batch's copy: its Python frames are named in it.
	 */
	int (*write)(void *t, struct perfdata_writer *w, struct task_tracker *tt, void *rec,
		     size_t size);
	/* A ring buffer of its own: readable when records wait, for the poll set. NULL = none. */
	int (*poll_fd)(const void *t);
	/* Read that ring buffer into a batch of its own. NULL = none. */
	int (*consume)(void *t);
	/*
	 * Write that batch's records stamped up to `upto` in the round, after
	 * the source's records, and keep the rest for a later round (the
	 * source's records after upto wait too: writing a later record first
	 * would put them out of perf's order). Raises *last_time. NULL = none.
	 */
	int (*flush)(void *t, struct perfdata_writer *w, struct task_tracker *tt, uint64_t upto,
		     uint64_t *last_time);
	/*
	 * What its BPF dropped since the last call as LOST_SAMPLES of its event,
	 * stamped time (emit_lost()): 1 when a record was written, 0 when
	 * nothing was new, or -errno. NULL = none.
	 */
	int (*write_lost)(void *t, struct perfdata_writer *w, uint64_t time);

	/*
	 * Detached, the rings drained: what BPF still holds (sums of short
	 * intervals) into the batch, stamped no earlier than min_time. NULL =
	 * nothing.
	 */
	int (*collect)(void *t, struct batch *b, uint64_t min_time);
	/*
	 * After a file's last round (s->w, s->tracker): what ends it (last: the
	 * recording's end, else --switch-output's). 0 or the writer's -errno.
	 * NULL = nothing.
	 */
	int (*file_end)(struct record_session *s, void *t, bool last);
	/* Its part of the recording's stats; its losses are added to st->rec.lost. NULL = none. */
	void (*stats)(const void *t, struct record_status *st);
	/* Detach and free it. */
	void (*free)(void *t);
};

/*
 * What of a tracer's BPF object is the source's: its ring buffer, target
 * maps, unwind tables and Python processes, and the settings in its rodata
 * that go with them (scope.bpf.h: which target map it checks, when it
 * wakes user space; whether user stacks walk with the unwind tables;
 * python.bpf.h: whether Python frames follow them).
 */
struct record_tracer_shared {
	struct bpf_map *events, *target_tgids, *target_tids;
	struct bpf_map *unwind_rows, *unwind_procs, *unwind_stops, *unwind_stats;
	struct bpf_map *py_procs;
	__u32 *filter_mode;
	__u64 *wakeup_bytes;
	bool *unwind_cfi;
	bool *python_frames;
};
/* Those of a libbpf skeleton whose object names them as the sampler does (bpf/profile.h). */
#define RECORD_TRACER_SHARED(skel)						\
	(&(struct record_tracer_shared){					\
		(skel)->maps.events, (skel)->maps.target_tgids, (skel)->maps.target_tids,	\
		(skel)->maps.unwind_rows, (skel)->maps.unwind_procs,			\
		(skel)->maps.unwind_stops, (skel)->maps.unwind_stats,		\
		(skel)->maps.py_procs,							\
		&(skel)->rodata->filter_mode, &(skel)->rodata->wakeup_bytes,		\
		&(skel)->rodata->unwind_cfi, &(skel)->rodata->python_frames,		\
	})

/*
 * For open(), the step every tracer shares: load its BPF object on the
 * source's maps and settings. skel is its libbpf skeleton, opened, its own
 * rodata set and its own maps and programs chosen (tracer_build.h); the
 * maps of m reuse the source's fds (with env->unwind_cfi the unwind tables,
 * without, those shrink unused; py_procs likewise with env->py_procs_fd),
 * its settings are the source's (its filter, a wakeup at half its ring's
 * size, its way of walking user stacks, Python frames or not), then
 * the object loads, env->load_log keeping what the verifier said of a
 * failure (loadlog.h). 0 or libbpf's -errno; the skeleton stays the
 * caller's to destroy, loaded or not.
 */
int record_tracer_load(const struct record_tracer_env *env, const struct record_tracer_shared *m,
		       struct bpf_object_skeleton *skel);
/* The same for a skeleton whose object names the shared maps and settings as the sampler does. */
#define RECORD_TRACER_LOAD(env, skel)	\
	record_tracer_load((env), RECORD_TRACER_SHARED(skel), (skel)->skeleton)

#endif /* RECORDER_TRACER_H */
