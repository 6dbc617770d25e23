/* SPDX-License-Identifier: MIT */
/*
 * session.h - one `bpfrec record` run: perf events, the BPF sampler, an
 * optional launched command, and the perf.data writer they feed.
 *
 * Life cycle (each step returns 0 or -errno; on failure
 * record_session_error() holds a one-line message naming the problem and
 * the fix):
 *
 *   record_session_new()    copy and check the options (no side effects)
 *   record_session_open()   everything that can fail early, in this order:
 *                           privileges (CAP_BPF, CAP_PERFMON), kernel BTF,
 *                           targets (pids, tids and whether we may read
 *                           their maps, CPUs, the command on PATH), the
 *                           output directory, kernel addresses (CAP_SYSLOG),
 *                           the perf events (opened disabled), the BPF
 *                           sampler loaded; only then the output file is
 *                           created (an existing one becomes NAME.old) and
 *                           a command forked and held before exec
 *   record_session_start()  attach (which enables sampling), write the file
 *                           header and the kernel maps, let the command exec
 *   record_session_poll()   drain the ring buffer; every flush interval sort
 *                           what arrived by time and write it as one round
 *                           (sooner when a new process is sampled, so it is
 *                           described from /proc while it lives); rotate
 *                           the output when --switch-output says so
 *   record_session_stop()   detach, drain, write the lost count, finish the
 *                           file (with --switch-output, rename it);
 *                           SIGTERM and reap a command still running
 *   record_session_close()  free; an output file that was not finished is
 *                           unlinked, so a failed run leaves nothing behind
 *
 * The steps form the recording's one state machine (bpfrec/record.h
 * documents it to callers; bpfrec_record.c adds nothing to it); a step out
 * of order changes nothing and returns (with record_session_error()
 * saying why):
 *   open     once, after new: else -EALREADY
 *   start    once: after new it opens first; -EALREADY when started,
 *            -EINVAL after stop or after a failed new, open or start
 *   poll, switch_output   only while started: -EINVAL before start and
 *            after stop
 *   stop     while started; after stop 0 (nothing done); -EINVAL otherwise
 *   close    in any state, NULL included: detaches, terminates the
 *            command, unlinks a file that was not finished
 * A failed new, open or start leaves the session failed: only close is left.
 *
 * The samples come from an event source (recorder/source.h): the BPF
 * sampler unless record_opts.source names another (tests). What the source
 * owns (privileges, BTF, kallsyms, perf events, BPF) is skipped with
 * another one; the rest of open and everything after behave the same.
 *
 * Reliability: every sample the BPF program takes is written or counted in
 * a LOST_SAMPLES record (bpfrec_record_stats: samples + lost == seen after a clean
 * stop). The file is checkpointed after every round, so a killed recorder
 * leaves it readable. A write error (ENOSPC, EIO, EPIPE) makes poll return
 * it: stop then detaches, cuts the file back to its last checkpoint and
 * finishes it, and bpfrec_record_stats.write_failed is set.
 *
 * Nothing is written to the output before the sampler is loaded and
 * attached. A step the kernel refuses for want of a privilege fails with a
 * message naming the capability (recorder/privs.h); processes whose maps
 * a recording without CAP_SYS_PTRACE may not read are kept with raw
 * addresses, and one warning says so. The session installs no signal handlers: the caller blocks the
 * signals it wants and passes a signalfd as wake_fd so poll returns at once.
 * The launched command gets every signal unblocked and at its default.
 */
#ifndef RECORDER_SESSION_H
#define RECORDER_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <bpfrec/record.h>

#include "recorder/buildid_cache.h"
#include "recorder/rotate.h"

struct record_session;
struct record_source_ops;

/*
 * How call graphs are recorded (--call-graph MODE). A new mode is a new
 * value here, a name in record_args.c and a capture path in the sampler.
 */
enum record_callgraph {
	RECORD_CALLGRAPH_NONE = 0,	/* only the sampled ip */
	RECORD_CALLGRAPH_FP,		/* both stacks walked by frame pointers in BPF */
	/*
	 * Kernel stack in the callchain; user registers and a copy of the user
	 * stack (REGS_USER, STACK_USER) that perf, hotspot and bpfrec pprof
	 * unwind with the binaries' CFI, as perf record --call-graph dwarf.
	 */
	RECORD_CALLGRAPH_DWARF,
	/*
	 * Kernel stack and user stack in the callchain, the user one walked
	 * in BPF with unwind tables built from each file's .eh_frame
	 * (recorder/unwind_bpf.h): DWARF-quality stacks at the size of fp.
	 */
	RECORD_CALLGRAPH_CFI,
};

/* perf's default and limits for --call-graph dwarf,SIZE. */
#define RECORD_STACK_USER_DEFAULT	8192u	/* BPFREC_STACK_USER_DEFAULT */
#define RECORD_STACK_USER_MAX		65528u	/* BPFREC_STACK_USER_MAX */

/*
 * Where the session's messages go: warnings (a target whose maps cannot be
 * read, ...) and, with verbose, notes. The message has no prefix and no
 * newline. NULL = nowhere: the session never prints by itself.
 */
enum record_log_level {
	RECORD_LOG_WARN = 0,
	RECORD_LOG_INFO,	/* notes: what a missing privilege left out */
	RECORD_LOG_DEBUG,	/* per-file details (the build-id cache) */
};
typedef void (*record_log_fn)(void *ctx, enum record_log_level level, const char *msg);

/*
 * A sink for the pipe-format stream instead of an fd: called with each
 * buffer in order; returns 0 when all of it was taken, else -errno (the
 * recording then stops as on a failed write).
 */
typedef int (*record_write_fn)(void *ctx, const void *buf, size_t len);

/* Arrays are copied; strings and argv vectors must outlive the session. */
struct record_opts {
	const char *output;	/* file; "-" = pipe mode on stdout; NULL = "perf.data" */
	/*
	 * Instead of output: an fd the caller opened (not closed by the
	 * session). A regular file without O_APPEND is written in file
	 * format from offset 0 (truncated first); anything else (a pipe, a
	 * socket, an O_APPEND file) gets the pipe format.
	 */
	bool use_output_fd;
	int output_fd;
	/* Instead of output: the pipe format through this callback. */
	record_write_fn output_write;
	void *output_write_ctx;
	record_log_fn log;	/* NULL = silent */
	void *log_ctx;
	const char *event;	/* "cpu-clock" (NULL), or a hardware event name */
	uint64_t freq;		/* samples/s per CPU; ignored when period is set */
	uint64_t period;	/* -c: event units (ns for cpu-clock) per sample */
	enum record_callgraph callgraph;	/* -g / --call-graph */
	uint32_t stack_user_size;	/* --call-graph dwarf,SIZE: bytes of user stack per sample */
	/*
	 * --unwind-tables: bytes for the unwind tables of --call-graph cfi
	 * (and of --off-cpu, which walks user stacks with them unless
	 * --call-graph fp or dwarf is given); 0 = UNWIND_BPF_DEFAULT_BYTES.
	 */
	uint64_t unwind_table_bytes;
	bool system_wide;	/* -a: every task, kernel threads and idle included */
	const pid_t *pids;	/* -p: processes, followed into their children */
	size_t nr_pids;
	const pid_t *tids;	/* -t: threads */
	size_t nr_tids;
	const int *cpus;	/* -C: CPUs to sample; NULL = every online CPU */
	size_t nr_cpus;
	char *const *command;	/* argv (NULL-terminated) of a command to launch, or NULL */
	int argc;		/* bpfrec's own command line, for the CMDLINE feature */
	const char *const *argv;
	size_t ring_buffer_bytes;	/* power of two >= 4096; 0 = default */
	unsigned int flush_interval_ms;	/* 0 = 100 */
	int wake_fd;		/* readable fd that makes poll return early; -1 = none */
	bool quiet;		/* no warnings on stderr */
	bool verbose;		/* also notes (what a missing privilege left out) */
	/*
	 * --switch-output: finish the file and start a new one (rotate.h names
	 * them) by size, by age, or only on record_session_switch_output();
	 * ROTATE_NONE (0) = one file. Not with the pipe.
	 */
	struct rotate_spec switch_output;
	unsigned int switch_max_files;	/* keep the newest N finished files; 0 = all */
	/* Called with the final name of each finished file; NULL = nothing. */
	void (*on_switch)(void *ctx, const char *path);
	void *on_switch_ctx;
	bool off_cpu;		/* --off-cpu: also the offcpu-time event (recorder/offcpu.h) */
	uint64_t off_cpu_thresh_ns;	/* --off-cpu-thresh: shorter intervals are summed */
	/*
	 * --alloc[=BYTES]: also the alloc and inuse events (recorder/alloc.h),
	 * one sample per this many bytes allocated on average; 1 = every
	 * allocation; 0 = off.
	 */
	uint64_t alloc_interval;
	int compression_level;	/* -z: zstd level 1..22 (perfdata/writer.h); 0 = none */
	/*
	 * Copy the files with samples into $HOME/.debug (buildid_cache.h), at
	 * stop; -N turns it off. A cache that cannot be used is a note in the log.
	 */
	bool no_buildid_cache;
	FILE *buildid_cache_log;	/* files skipped or failed (-v); NULL = none */
	/* Each file written into the build-id cache, by build-id (buildid_cache_opts.on_filed). */
	void (*on_filed)(void *ctx, const uint8_t *build_id, size_t size);
	void *on_filed_ctx;
	/* -g: no Python frames (recorder/pyframes.h) in the stacks of CPython processes. */
	bool no_python;
	/* --sched: the sched-delay event and per-thread metrics (recorder/sched.h). */
	bool sched;
	uint64_t sched_thresh_ns;	/* --sched-thresh: shorter waits are summed */
	/*
	 * Internal (not in bpfrec/record.h): where the records come from.
	 * NULL = the BPF sampler; tests pass a fake (recorder/source.h) and
	 * its state in source_ctx.
	 */
	const struct record_source_ops *source;
	void *source_ctx;
};


int record_session_new(const struct record_opts *opts, struct record_session **out);
int record_session_open(struct record_session *s);
int record_session_start(struct record_session *s);
/*
 * Wait up to timeout_ms for samples (or wake_fd), consume, and write a round
 * when the flush interval has passed. Returns 1 once the workload is done,
 * 0 otherwise, -errno on a write error.
 */
int record_session_poll(struct record_session *s, int timeout_ms);
int record_session_stop(struct record_session *s);
/*
 * Finish the current file now and go on in a new one (--switch-output;
 * SIGUSR2 in perf). -EINVAL without switch_output, else 0 or -errno.
 */
int record_session_switch_output(struct record_session *s);
void record_session_close(struct record_session *s);

/*
 * The statistics snapshot the public API hands out (bpfrec/record.h): all
 * of it, whatever st->sz says; file and buildid_cache_dir point into the
 * session.
 */
/*
 * Where the session is in its life cycle: the one state machine of a
 * recording (bpfrec_record_state() hands it out as its public enum).
 */
enum session_state {
	SESSION_NEW = 0,	/* after record_session_new() */
	SESSION_OPEN,		/* open succeeded */
	SESSION_STARTED,	/* start succeeded */
	SESSION_STOPPED,	/* stop ran (whatever it returned) */
	SESSION_FAILED,		/* new, open or start failed: only close is left */
};
enum session_state record_session_state(const struct record_session *s);

/*
 * The recording's counters and its tracers', filled at once: a tracer's
 * losses count in rec.lost, so its part comes with the recording's.
 */
struct record_status {
	struct bpfrec_record_stats rec;
	struct bpfrec_alloc_stats alloc;
	struct bpfrec_offcpu_stats offcpu;
};
void record_session_status(const struct record_session *s, struct record_status *st);
/*
 * The in-kernel unwinder's counters (enabled false without it). Apart from
 * the rest: they are summed over per-CPU maps under the worker's lock, work
 * a status line read every poll need not pay for.
 */
void record_session_unwind_status(const struct record_session *s, struct bpfrec_unwind_stats *u);
/*
 * --sched: the per-thread metrics so far (the caller frees *out with
 * bpfrec_sched_metrics_free). -ENOENT without --sched or before open.
 */
struct bpfrec_sched_metrics;
int record_session_sched_metrics(struct record_session *s, struct bpfrec_sched_metrics **out);
/* The last error, "" when none. */
const char *record_session_error(const struct record_session *s);
/*
 * Milliseconds until poll should run again to write the next round on time
 * (sooner while new processes are being described); -1 when not started.
 */
int record_session_next_poll_ms(const struct record_session *s);
/* The fd poll waits on (ring buffers, sideband, wake_fd) after open; -1 before. */
int record_session_poll_fd(const struct record_session *s);
/* The output's name as given ("-" for the pipe). */
const char *record_session_output(const struct record_session *s);
/* Suggested exit code after a failed step: 127/126 for the command, else 1. */
int record_session_failure_code(const struct record_session *s);

#endif /* RECORDER_SESSION_H */
