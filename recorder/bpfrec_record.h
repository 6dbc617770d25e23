/* SPDX-License-Identifier: MIT */
/*
 * bpfrec/record.h - record CPU samples with BPF into perf.data, from inside
 * a program: what `bpfrec record` does, as a library.
 *
 * Installed as <bpfrec/record.h>. Recording needs CAP_BPF and CAP_PERFMON
 * (or root) and a kernel with BTF; the BPF programs are built into the
 * library, so it works from any directory.
 *
 * State machine (bpfrec_record_state() tells where a handle is):
 *
 *   NEW --open()--> OPEN --start()--> STARTED --stop()--> STOPPED
 *
 *   bpfrec_record_new()   checks and copies the options: NEW.
 *   bpfrec_record_open()  NEW -> OPEN: everything that can fail early
 *                         (privileges, BTF, targets, output, events, BPF
 *                         loaded; a command forked and held before exec).
 *                         In any other state: -EALREADY.
 *   bpfrec_record_start() OPEN -> STARTED (NEW: opens first): sampling
 *                         on, file header written, the command runs.
 *                         STARTED: -EALREADY. STOPPED: -EINVAL (a
 *                         recording starts once; make a new handle).
 *   bpfrec_record_poll()  STARTED only (else -EINVAL): wait up to
 *                         timeout_ms, write what arrived. 1 once the
 *                         workload is done (the command exited, or every
 *                         -p/-t target), 0 otherwise, -errno after a write
 *                         error (then call stop: it keeps what was written).
 *   bpfrec_record_stop()  STARTED -> STOPPED: detach, drain, finish the
 *                         output. STOPPED: 0, nothing done. NEW/OPEN: -EINVAL.
 *   bpfrec_record_free()  any state; a recording not stopped is discarded
 *                         (an output file it created is removed).
 *
 * A step that fails leaves the state as it was, except open/start, which
 * move to FAILED: then only _error(), _get_stats() and _free() work.
 *
 * Event-loop integration: bpfrec_record_poll_fd() (after open) is an fd
 * that becomes readable when samples wait; poll it with your other fds,
 * with a timeout no longer than bpfrec_record_timeout_ms(), and call
 * bpfrec_record_poll(rec, 0) when it is readable or the timeout passed, so
 * rounds are written on time (the flush interval, sooner while new
 * processes are described: their unwind tables depend on it).
 *
 * The library installs no signal handlers and does not touch libbpf's
 * global print callback. It raises RLIMIT_NOFILE's soft limit to the hard
 * limit at open: a system-wide recording holds more fds than 1024.
 */
#ifndef BPFREC_RECORD_H
#define BPFREC_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <bpfrec/common.h>
#include <bpfrec/sched.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bpfrec_record;

/* CALLGRAPH_DWARF's user stack copy: perf's default and largest size. */
#define BPFREC_STACK_USER_DEFAULT	8192u
#define BPFREC_STACK_USER_MAX		65528u
/* The bounds of unwind_table_bytes (when not 0). */
#define BPFREC_UNWIND_TABLE_MIN_BYTES	(4ull << 10)
#define BPFREC_UNWIND_TABLE_MAX_BYTES	(4ull << 30)

enum bpfrec_callgraph {
	BPFREC_CALLGRAPH_NONE = 0,	/* the sampled ip only */
	BPFREC_CALLGRAPH_FP,		/* both stacks by frame pointers, in BPF (--call-graph fp) */
	BPFREC_CALLGRAPH_DWARF,		/* user registers + stack copy, unwound later */
	BPFREC_CALLGRAPH_CFI,		/* user stack walked in BPF with .eh_frame tables (-g) */
};

enum bpfrec_output {
	BPFREC_OUTPUT_PATH = 0,		/* output_path */
	BPFREC_OUTPUT_FD,		/* output_fd */
	BPFREC_OUTPUT_CALLBACK,		/* output_write */
};

/* --switch-output: when to finish the file and start a new one (PATH only). */
enum bpfrec_switch {
	BPFREC_SWITCH_NONE = 0,
	BPFREC_SWITCH_MANUAL,		/* on bpfrec_record_switch_output() only */
	BPFREC_SWITCH_SIZE,		/* when the file reaches switch_bytes */
	BPFREC_SWITCH_TIME,		/* when the file is switch_ns old */
};

/*
 * Declare with BPFREC_OPTS(bpfrec_record_opts, o, ...). Zero is the default
 * of every field. Arrays are copied; strings, argv vectors and callback
 * contexts must outlive the handle.
 */
struct bpfrec_record_opts {
	size_t sz;
	/*
	 * Where perf.data goes. PATH: output_path (NULL = "perf.data"; "-" =
	 * pipe format on stdout); an existing file becomes NAME.old.
	 * FD: output_fd, not closed by the library; a regular file without
	 * O_APPEND is truncated and written in file format, anything else (a
	 * pipe, a socket) gets the pipe format. CALLBACK: the pipe format,
	 * through output_write(output_ctx, ...).
	 */
	enum bpfrec_output output;
	const char *output_path;
	int output_fd;
	bpfrec_write_fn output_write;
	void *output_ctx;
	/* What to sample: one of a command, pids, tids or system_wide. */
	char *const *command;		/* argv, NULL-terminated: launched and followed */
	const pid_t *pids;		/* processes, followed into their children */
	size_t nr_pids;
	const pid_t *tids;		/* threads */
	size_t nr_tids;
	bool system_wide;		/* every task, kernel threads and idle included */
	const int *cpus;		/* only these CPUs; NULL = every online CPU */
	size_t nr_cpus;
	/* How often: freq per CPU (0 = 4000 Hz), or every period event units. */
	const char *event;		/* NULL = "cpu-clock", or a hardware event name */
	uint64_t freq;
	uint64_t period;
	/* Stacks. */
	enum bpfrec_callgraph callgraph;
	uint32_t stack_user_bytes;	/* DWARF: user stack bytes per sample; 0 = 8192 */
	uint64_t unwind_table_bytes;	/* CFI (and off-CPU): table budget; 0 = default */
	/* Off-CPU time: the offcpu-time event, one sample per blocked interval. */
	bool off_cpu;
	uint64_t off_cpu_thresh_ns;	/* shorter intervals are summed per stack */
	/* The file. */
	int compression_level;		/* zstd 1..22 (perf record -z); 0 = none */
	bool no_buildid_cache;		/* do not copy sampled files into ~/.debug */
	enum bpfrec_switch switch_output;
	uint64_t switch_bytes;
	uint64_t switch_ns;
	unsigned int switch_max_files;	/* keep the newest N finished files; 0 = all */
	void (*on_switch)(void *ctx, const char *path);	/* each finished file's name */
	void *on_switch_ctx;
	/* Tuning. */
	size_t ring_buffer_bytes;	/* power of two, 4 KiB..1 GiB; 0 = default */
	unsigned int flush_interval_ms;	/* rounds are written this often; 0 = 100 */
	/* The CMDLINE feature (what perf report shows as the command line). */
	int argc;
	const char *const *argv;
	/* Warnings and notes; NULL = silent. */
	bpfrec_log_fn log;
	void *log_ctx;
	/*
	 * Allocations: the "alloc" and "inuse" events (uprobes on the
	 * allocators), one sample per alloc_interval bytes on average
	 * (Poisson); 1 = every allocation; 0 = off.
	 */
	uint64_t alloc_interval;
	/*
	 * Scheduler metrics and run-queue waits (bpfrec/sched.h): per-thread
	 * metrics kept in BPF (bpfrec_record_sched_metrics) and written at the
	 * end of the file, and the sched-delay event, one sample per wait of
	 * at least sched_thresh_ns (0 = 1 ms; 1 = every wait), shorter ones
	 * summed per stack.
	 */
	bool sched;
	uint64_t sched_thresh_ns;
	/*
	 * With CALLGRAPH_CFI, the stacks of a process running CPython 3.8 to
	 * 3.13 carry its Python functions where its interpreter runs them;
	 * true turns that off.
	 */
	bool no_python;
	/*
	 * Each file written into the build-id cache (copied, or a Python symbol
	 * file copied again, grown, over its earlier copy), by build-id, from
	 * the recording's thread: for a converter that keeps symbol tables
	 * across files (bpfrec_pprof_symbols_filed()). NULL: nobody is told.
	 */
	void (*on_filed)(void *ctx, const uint8_t *build_id, size_t size);
	void *on_filed_ctx;
};
/* The last field (what the library checks up to; move it with each new field). */
#define bpfrec_record_opts__last_field on_filed_ctx

enum bpfrec_record_state {
	BPFREC_RECORD_NEW = 0,
	BPFREC_RECORD_OPEN,
	BPFREC_RECORD_STARTED,
	BPFREC_RECORD_STOPPED,
	BPFREC_RECORD_FAILED,
};

/* Room for the in-kernel unwinder's reasons to end a walk (root, no-row, ...). */
#define BPFREC_UNWIND_STOPS	16

/*
 * The in-kernel unwinder (CALLGRAPH_CFI, or off-CPU), when used:
 * bpfrec_record_get_unwind_stats(). Declare with
 * BPFREC_OPTS(bpfrec_unwind_stats, u) so sz is set.
 */
struct bpfrec_unwind_stats {
	size_t sz;
	bool enabled;
	uint64_t walks;		/* user stacks walked */
	uint64_t root;		/* of those, ended at the thread's root */
	uint64_t fp_walks;	/* used frame pointers for some frames (no table there) */
	uint64_t fp_frames;	/* frames found that way */
	uint64_t no_proc;	/* walks before the process had tables */
	uint64_t frames;
	/* Walks by how they ended; bpfrec_unwind_stop_name() names each index. */
	uint64_t stops[BPFREC_UNWIND_STOPS];
	size_t tables_built;	/* files whose table was built */
	uint64_t peak_bytes;	/* most bytes of tables loaded at once */
	uint64_t budget_bytes;	/* unwind_table_bytes in effect */
	size_t over_budget;	/* mappings that got no table for want of room */
	size_t no_cfi;		/* files without usable .eh_frame */
	/*
	 * Process descriptions the worker never loaded (a storm of new
	 * processes, no memory, a map write that failed): those processes'
	 * walks use frame pointers only.
	 */
	uint64_t not_loaded;
	/*
	 * Samples whose walk met code the tables did not know yet (a process
	 * starting, a library just mapped): each came with a copy of its user
	 * stack, was held until its process's tables were built, and was
	 * walked again in user space with them. late_expired of those waited
	 * as long as a sample may and were walked with what there was;
	 * late_stops says how the walks ended (bpfrec_unwind_stop_name()).
	 * late_spent: samples that would have come with a copy, but their
	 * process had used all it may; late_busy: but the ring buffer was a
	 * quarter full (their walks stand as the kernel made them).
	 */
	uint64_t late_walks, late_expired, late_spent, late_busy;
	uint64_t late_stops[BPFREC_UNWIND_STOPS];
	/*
	 * Python frames (no_python off): processes found running a CPython
	 * that is walked, and one that is not (each also said in the log);
	 * samples written with Python frames; walks BPF cut (too deep, or a
	 * frame unreadable); Python frames written, of which py_unknown could
	 * not be named ([python]) and py_unplaced found no eval-loop frame to
	 * go before (they sit at the outer end of their stack).
	 */
	uint64_t py_procs, py_procs_unsupported, py_samples, py_cut, py_frames, py_unknown,
		py_unplaced;
	/*
	 * Python symbol files filed into the build-id cache, and code objects
	 * read from the processes' memory to name frames (a frame seen again
	 * soon after is named without a read).
	 */
	uint64_t py_files, py_reads;
	/*
	 * Times symbol files were written into the cache: a file still open
	 * is written again, whole, before each --switch-output file is
	 * retired and at the end, when it has gained functions since.
	 */
	uint64_t py_filings;
};

/* Allocation sampling (alloc_interval), when used: bpfrec_record_get_alloc_stats(). */
struct bpfrec_alloc_stats {
	size_t sz;
	bool enabled;
	uint64_t interval;	/* mean bytes between samples in effect */
	uint64_t calls;		/* allocations by tasks in scope */
	uint64_t sampled;	/* of those, sampled */
	uint64_t written;	/* "alloc" samples written, all files */
	uint64_t lost;		/* sampled, dropped by a full ring buffer */
	/* Sampled but not remembered (the bound of live ones): missing from "inuse". */
	uint64_t live_full;
	uint64_t freed;		/* sampled allocations freed again */
	uint64_t inuse;		/* "inuse" samples written, all files */
	uint64_t no_storage;	/* calls not followed: no per-thread storage */
	size_t files_probed;	/* allocator files with probes */
	size_t probe_errors;	/* allocator files that could not be probed */
};

/* Off-CPU intervals (off_cpu), when used: bpfrec_record_get_offcpu_stats(). */
struct bpfrec_offcpu_stats {
	size_t sz;
	bool enabled;
	/*
	 * Switch-outs of tasks in scope. Each is an interval that ends written
	 * (alone or in a sum), lost (in lost too), or still open when recording
	 * stops (a task blocked at the end): for a command whose threads all
	 * exited first, blocked == written + lost.
	 */
	uint64_t blocked;
	uint64_t written;	/* intervals in offcpu-time samples, all files */
	uint64_t lost;		/* ring buffer full, or no task storage for it */
	/* Of those closed, how many the kernel gave the CPU back to unreported. */
	uint64_t unpaired;
};

/*
 * Declare with BPFREC_OPTS(bpfrec_record_stats, st) so sz is set. The
 * unwinder's, the allocation and the off-CPU tracers' counters are
 * structs of their own with their own getters, so each can grow at its
 * end without moving another's fields.
 */
struct bpfrec_record_stats {
	size_t sz;
	/* Over all files. After a clean stop cpu_samples + cpu_lost == seen. */
	uint64_t seen;		/* CPU-event samples the BPF program took */
	uint64_t cpu_samples;	/* of those, written */
	uint64_t cpu_lost;	/* of those, dropped by a full ring buffer */
	uint64_t samples;	/* SAMPLE records written, every event */
	uint64_t lost;		/* samples lost, every event */
	uint64_t lost_task;	/* fork/exit/exec notices dropped */
	uint64_t bytes;		/* bytes written, all files */
	uint64_t file_bytes;	/* size of the current (last) file */
	const char *file;	/* the current file's name; valid until the next call */
	unsigned int nr_files;	/* files finished by switch_output */
	size_t nr_processes;	/* distinct processes sampled */
	bool write_failed;	/* stopped by a write error (ENOSPC, EIO, EPIPE) */
	bool workload_done;
	int exit_code;		/* the command's exit code (128 + signal); -1: none yet */
	/* The build-id cache after stop (dir NULL: not used). */
	const char *buildid_cache_dir;
	size_t buildid_copied, buildid_present, buildid_too_big, buildid_failed;
	/*
	 * What the BPF programs (the sampler, the task notices, the off-CPU
	 * tracer) cost: CPU time in them and their runs, summed over CPUs, as
	 * the kernel counts it while the recording holds BPF_STATS_RUN_TIME on.
	 * bpf_counted false: the kernel would not count (it needs
	 * CAP_SYS_ADMIN or the sysctl kernel.bpf_stats_enabled=1, Linux 5.8).
	 */
	bool bpf_counted;
	uint64_t bpf_run_ns;
	uint64_t bpf_runs;
};

/*
 * Copy and check opts (NULL = defaults, which record nothing: a target is
 * needed). On failure other than -ENOMEM *rec is still set, so its
 * _error() can be read; free it either way.
 */
BPFREC_API int bpfrec_record_new(const struct bpfrec_record_opts *opts,
				 struct bpfrec_record **rec);
BPFREC_API int bpfrec_record_open(struct bpfrec_record *rec);
BPFREC_API int bpfrec_record_start(struct bpfrec_record *rec);
BPFREC_API int bpfrec_record_poll(struct bpfrec_record *rec, int timeout_ms);
/* Readable when samples wait (after open); -EINVAL before. Not to be closed. */
BPFREC_API int bpfrec_record_poll_fd(const struct bpfrec_record *rec);
/* Milliseconds until bpfrec_record_poll() is due (0: now); -EINVAL unless STARTED. */
BPFREC_API int bpfrec_record_timeout_ms(const struct bpfrec_record *rec);
BPFREC_API int bpfrec_record_stop(struct bpfrec_record *rec);
/* Finish the file now, go on in a new one (switch_output set; STARTED). */
BPFREC_API int bpfrec_record_switch_output(struct bpfrec_record *rec);
BPFREC_API void bpfrec_record_free(struct bpfrec_record *rec);

BPFREC_API enum bpfrec_record_state bpfrec_record_state(const struct bpfrec_record *rec);
/*
 * Snapshots, at any time. Each struct's sz says how much of it the caller
 * has; 0, or -EINVAL for a sz too small to hold sz. A part not in use
 * (no unwinder, no alloc_interval, no off_cpu) has enabled false.
 */
BPFREC_API int bpfrec_record_get_stats(const struct bpfrec_record *rec,
				       struct bpfrec_record_stats *stats);
BPFREC_API int bpfrec_record_get_unwind_stats(const struct bpfrec_record *rec,
					      struct bpfrec_unwind_stats *stats);
BPFREC_API int bpfrec_record_get_alloc_stats(const struct bpfrec_record *rec,
					     struct bpfrec_alloc_stats *stats);
BPFREC_API int bpfrec_record_get_offcpu_stats(const struct bpfrec_record *rec,
					      struct bpfrec_offcpu_stats *stats);
/*
 * With opts.sched, after open: the per-thread scheduler metrics so far, a
 * snapshot the caller frees with bpfrec_sched_metrics_free(). -ENOENT
 * without sched or before open.
 */
BPFREC_API int bpfrec_record_sched_metrics(struct bpfrec_record *rec,
					   struct bpfrec_sched_metrics **out);
/* "root", "no-row", ... for an index of bpfrec_unwind_stats.stops; NULL past the last. */
BPFREC_API const char *bpfrec_unwind_stop_name(unsigned int stop);
/* The last error's message, "" when none. */
BPFREC_API const char *bpfrec_record_error(const struct bpfrec_record *rec);
/* After a failed open/start: 127 (command not found), 126 (not executable), else 1. */
BPFREC_API int bpfrec_record_failure_code(const struct bpfrec_record *rec);

/*
 * Option values as perf record's command line spells them, for programs
 * that take them from their users. Each returns 0, or -EINVAL (the text is
 * malformed or out of range; nothing is set) or -ENOMEM.
 */
/* "0,2-3" (up to CPU 8191): sorted, no duplicates, *cpus malloc'ed (free() it). */
BPFREC_API int bpfrec_cpulist_parse(const char *s, int **cpus, size_t *nr);
/* A size with a B/K/M/G suffix (powers of 1024): "64M". */
BPFREC_API int bpfrec_size_parse(const char *s, uint64_t *bytes);
/*
 * --switch-output's value: NULL or "signal" (BPFREC_SWITCH_MANUAL), a size
 * "100M" (SIZE, *bytes) or an age with an s/m/h/d suffix "30s" (TIME, *ns).
 */
BPFREC_API int bpfrec_switch_output_parse(const char *arg, enum bpfrec_switch *mode,
					  uint64_t *bytes, uint64_t *ns);

#ifdef __cplusplus
}
#endif

#endif /* BPFREC_RECORD_H */
