/* SPDX-License-Identifier: MIT */
/*
 * alloc.h - `bpfrec record --alloc[=BYTES]`: load bpf/alloc.bpf.c next to
 * the sampler, probe the allocators of the processes in scope, and write
 * the sampled allocations as the "alloc" and "inuse" events (their
 * contract is in perfdata/events.h, above PERFDATA_ALLOC_EVENT_NAME).
 *
 * A path of its own, apart from the CPU samples: the tracer's ring buffer
 * is its own, alloc_consume() drains it into its own batch, and
 * alloc_flush() writes that batch (sorted by time) in the session's round
 * through emit.h: each (process, thread) is described once per batch
 * (emit_task(), with every user address its records hold, so a library
 * loaded late is found), then the SAMPLEs follow (emit_sample_alone()). Records the ring buffer dropped
 * are LOST_SAMPLES of the alloc event. alloc_write_inuse() writes, at the
 * end of a file, one inuse SAMPLE per sampled allocation still live.
 *
 * Probes for -p, -a and anything not launched (uprobe at each entry, uretprobe at each return, per library
 * FILE, for every process that maps it): the C library the recorder runs
 * with is probed from the start (alloc_attach), so a launched command's
 * first allocations count; other files as the task tracker reports the
 * mappings of processes in scope (alloc_tracker_hooks): a C library
 * (libc.so*), jemalloc (libjemalloc*) or tcmalloc (libtcmalloc*). Each
 * file once, by device and inode; each address of it once (aliases such as
 * aligned_alloc and memalign share one).
 *
 * Every function returns 0 or -errno.
 */
#ifndef RECORDER_ALLOC_H
#define RECORDER_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "perfdata/events.h"

struct alloc_tracer;
struct load_log;
struct perfdata_writer;
struct task_tracker;
struct task_tracker_hooks;

/* --alloc without a value: bytes between samples, on average (tcmalloc's and Go's). */
#define ALLOC_DEFAULT_INTERVAL	(512u * 1024)

struct alloc_opts {
	uint64_t interval;	/* mean bytes between samples; 1 = every allocation */
	int events_fd;		/* the sampler's ring buffer (only shared, never used) */
	int target_tgids_fd;	/* the sampler's target maps */
	int target_tids_fd;
	uint32_t filter_mode;	/* enum profile_filter, as the sampler's */
	size_t ring_bytes;	/* of the tracer's own ring buffer (power of two) */
	uint32_t live_max;	/* bound of live sampled allocations; 0 = ALLOC_LIVE_MAX */
	/*
	 * Preallocate the live map: uprobe programs on kernels before 6.1
	 * may use a hash that allocates on update, but the kernel warns (a
	 * WARN_ONCE with a backtrace in its log) when one is loaded
	 * (kfeatures.h, hash_nonprealloc).
	 */
	bool live_prealloc;
	/* Walk stacks with the sampler's unwind tables (recorder/unwind_bpf.h); else fp. */
	bool unwind_cfi;
	int unwind_rows_fd, unwind_procs_fd, unwind_stops_fd, unwind_stats_fd;
	/* The CPU event: the trailer bits and clock to share, and its id. */
	const struct perf_event_attr *cpu_attr;
	uint64_t cpu_event_id;
	/* Keeps the verifier's log of a failed load (recorder/loadlog.h); NULL = libbpf's. */
	struct load_log *load_log;
	/* Where the targets' maps and files are (the tracker's); NULL = "/proc". */
	const char *proc_root;
	/* Hooks the tracer's own pass on to (the unwinder's); NULL = none. */
	const struct task_tracker_hooks *next_hooks;
	void *next_hooks_ctx;
};

/* Open and load the tracer (nothing attached). */
int alloc_new(const struct alloc_opts *opts, struct alloc_tracer **out);
void alloc_free(struct alloc_tracer *a);

/* Probe the recorder's own C library (see above). */
int alloc_attach(struct alloc_tracer *a);

/*
 * The fast path for a command the recorder launches: the command runs with
 * libbpfrec-alloc.so preloaded (recorder/alloc_preload.c), which samples in
 * process and calls two marker functions; only those are probed, and no C
 * library is (not alloc_attach(), nor through the tracker's hooks).
 *
 * alloc_preload_find() puts the library's path in path: next to the
 * recorder's executable, else in the install directory. -ENOENT when
 * neither has it (the caller then stays on the uprobes).
 * alloc_preload_env() fills the "LD_PRELOAD=..." (after any the recorder
 * has) and "BPFREC_ALLOC_INTERVAL=..." strings for the command.
 * alloc_attach_preload() probes the markers of the library at path.
 */
#define ALLOC_PRELOAD_LIB	"libbpfrec-alloc.so"
#define ALLOC_PRELOAD_ENV_MAX	8192
int alloc_preload_find(char *path, size_t size);
int alloc_preload_env(const char *path, uint64_t interval, char *preload, size_t preload_len,
		      char *interval_env, size_t interval_len);
int alloc_attach_preload(struct alloc_tracer *a, const char *path);
/* Remove every probe. */
void alloc_detach(struct alloc_tracer *a);
/* Its BPF object, loaded (for progstats_add_object()). */
struct bpf_object;
const struct bpf_object *alloc_object(const struct alloc_tracer *a);

/*
 * For task_tracker_opts.hooks, ctx = the tracer: probes the allocator
 * files of processes whose mappings change, then calls next_hooks.
 */
extern const struct task_tracker_hooks alloc_tracker_hooks;

/* The events for perfdata_writer_add_event(). */
const struct perf_event_attr *alloc_attr(const struct alloc_tracer *a);
const uint64_t *alloc_event_id(const struct alloc_tracer *a);
const struct perf_event_attr *alloc_inuse_attr(const struct alloc_tracer *a);
const uint64_t *alloc_inuse_event_id(const struct alloc_tracer *a);

/* The fd that turns readable when records wait (for epoll). */
int alloc_epoll_fd(const struct alloc_tracer *a);
/* Move what the ring buffer holds into the tracer's batch. */
int alloc_consume(struct alloc_tracer *a);
/*
 * Write the batch: describe its tasks, its SAMPLEs in time order, then
 * LOST_SAMPLES for records dropped since the last call. *last_time is
 * raised to the latest time written.
 */
int alloc_flush(struct alloc_tracer *a, struct perfdata_writer *w, struct task_tracker *t,
		uint64_t *last_time);
/*
 * One inuse SAMPLE per sampled allocation still live, stamped no earlier
 * than *last_time (raised to what is written). Drains and writes alloc
 * records first, so none is older than an inuse one.
 */
int alloc_write_inuse(struct alloc_tracer *a, struct perfdata_writer *w, struct task_tracker *t,
		      uint64_t *last_time);

/* What the -v summary and the stats snapshot say (struct bpfrec_alloc_stats). */
struct bpfrec_alloc_stats;
void alloc_stats(struct alloc_tracer *a, struct bpfrec_alloc_stats *out);

/* ---- pure helpers, for tests ---- */

/* "malloc", "calloc", ..., for enum alloc_func; NULL past the last. */
const char *alloc_func_name(uint32_t func);
/*
 * The bytes a sampled allocation of size bytes stands for at a sampling
 * interval: size / (1 - exp(-size / interval)), rounded; size itself at
 * interval 1 (and 0 for size 0).
 */
uint64_t alloc_weight(uint64_t size, uint64_t interval);
/*
 * The RAW text "FUNC SIZE", space-padded so that 4 + the length is a
 * multiple of 8 and NUL-terminated (what perf prints as a BPF string).
 * Returns its size, NUL included, or 0 when buf is too small.
 */
#define ALLOC_RAW_TEXT_MAX	48
size_t alloc_raw_text(uint32_t func, uint64_t size, char *buf, size_t len);
/* The attr of the alloc (or inuse) event next to cpu_attr, at interval. */
void alloc_build_attr(const struct perf_event_attr *cpu_attr, uint64_t interval,
		      struct perf_event_attr *out);
/* Is this library (a path) an allocator the tracer probes? */
bool alloc_is_allocator_lib(const char *path);

#endif /* RECORDER_ALLOC_H */
