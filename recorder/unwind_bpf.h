/* SPDX-License-Identifier: MIT */
/*
 * unwind_bpf.h - the in-kernel unwinder's side in the recorder
 * (--call-graph cfi, and the user stacks of --off-cpu): the table manager
 * (recorder/unwind_tables.h) on the BPF maps of bpf/unwind.bpf.h, and the
 * walkers' counters.
 *
 * The row store is the array map unwind_rows, sized to the memory bound
 * before the sampler is loaded (unwind_bpf_size_maps); tables are written
 * into it with batch updates, and it is their only copy: the manager keeps
 * no rows of a table in the store. The kernel allocates the whole bound
 * when the map is created: that is the price of a lookup the verifier can
 * inline. The map is mmapable (BPF_F_MMAPABLE) but never mapped whole
 * (the kernel maps every page at once: all of the bound would count in
 * the recorder's resident memory from the start; whole tables, cc1's 3.7
 * MB, at once): a copied stack is walked with the one page of each table
 * its search needs, mapped read only for the walk and unmapped after (the
 * first row of every page of the store is remembered for the search: 4
 * bytes a page).
 * unwind_procs is allocated per process (BPF_F_NO_PREALLOC): 16 KiB each.
 *
 * The off-CPU tracer shares these maps (bpf_map__reuse_fd): one set of
 * tables and counters serves both programs.
 */
#ifndef RECORDER_UNWIND_BPF_H
#define RECORDER_UNWIND_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_map;
struct unwind_bpf;
struct unwind_tables;

/* --unwind-tables: the default bound of the row store (limits: bpfrec/record.h). */
#define UNWIND_BPF_DEFAULT_BYTES	(32ull << 20)
/* Processes with tables at once (unwind_procs entries). */
#define UNWIND_BPF_MAX_PROCS		4096
/*
 * The same where unwind_procs must be preallocated (16 KiB an entry, used
 * or not): kernels before 6.1 refuse perf_event programs a hash map that
 * allocates on update (kfeatures.h, hash_nonprealloc).
 */
#define UNWIND_BPF_MAX_PROCS_PREALLOC	512

/*
 * Before load: size the maps of one BPF object that includes unwind.bpf.h.
 * bytes 0 = the walker is not used: every map shrinks to one entry.
 * preallocated: unwind_procs is allocated whole, with fewer entries.
 * 0 or -errno.
 */
int unwind_bpf_size_maps(struct bpf_map *rows, struct bpf_map *procs, uint64_t bytes,
			 bool preallocated);

/*
 * Before load: make another BPF object that includes unwind.bpf.h (the
 * off-CPU or allocation tracer) walk with the sampler's tables: its maps
 * reuse the sampler's fds; share false: its maps shrink to one entry, its
 * walker unused. 0 or -errno.
 */
int unwind_bpf_share_maps(struct bpf_map *rows, struct bpf_map *procs, struct bpf_map *stops,
			  struct bpf_map *stats, bool share, int rows_fd, int procs_fd,
			  int stops_fd, int stats_fd);

struct unwind_bpf_opts {
	int rows_fd;		/* unwind_rows, loaded */
	int procs_fd;		/* unwind_procs */
	int stops_fd;		/* unwind_stops (per CPU) */
	int stats_fd;		/* unwind_stats (per CPU) */
	uint64_t bytes;		/* what unwind_bpf_size_maps() was given */
	uint32_t max_procs;	/* unwind_procs' entries */
	const char *proc_root;	/* NULL = "/proc" */
};

/*
 * Map the row store and start a table manager on it, with a worker thread
 * that builds and loads tables (50-450 ms for a big file) off the
 * recorder's thread, which must keep draining the ring buffer meanwhile.
 * 0 or -errno.
 */
int unwind_bpf_new(const struct unwind_bpf_opts *opts, struct unwind_bpf **out);
/* Stop the worker (what it had not done yet is dropped) and free. */
void unwind_bpf_free(struct unwind_bpf *u);
/* unwind_tables_warm() on the manager, now, on the caller's thread. */
int unwind_bpf_warm(struct unwind_bpf *u, int fd);
/*
 * The task tracker's hooks (recorder/tasks.h) that keep the tables in step
 * with the processes, ctx = u. They queue the work for the worker: a newer
 * description of a pid replaces a waiting one, forgetting a pid cancels
 * its waiting descriptions, and at most UNWIND_BPF_MAX_QUEUED descriptions
 * wait (more are dropped, counted: those processes keep frame pointers).
 */
extern const struct task_tracker_hooks unwind_bpf_hooks;
#define UNWIND_BPF_MAX_QUEUED	1024
/*
 * How many descriptions the task tracker has handed the worker so far
 * (counted when queued, not when loaded: the recorder asks right after the
 * round that queued them, while the worker may still be building). While
 * it grows, a process is starting up and maps its libraries one after the
 * other, so the recorder writes rounds early and each library's table
 * follows within milliseconds instead of one flush interval late.
 */
uint64_t unwind_bpf_requests(struct unwind_bpf *u);

struct cfi_regs;
struct cfi_stack;
struct cfi_walk;
/*
 * Late samples (PROFILE_SAMPLE_LATE, bpf/profile.h): walk a copied user
 * stack of (pid, tid), sampled at time, with pid's tables, on the worker's
 * thread once pid's descriptions queued so far are loaded: pid's waiting
 * description is built next, ahead of other processes', and the walk
 * right after it (or first, with none waiting). The copy is taken. 0,
 * -EBUSY when UNWIND_BPF_MAX_WALKS walks are outstanding, -ENOMEM.
 */
int unwind_bpf_walk_later(struct unwind_bpf *u, uint32_t pid, uint32_t tid, uint64_t time,
			  const struct cfi_regs *regs, const struct cfi_stack *stack);
#define UNWIND_BPF_MAX_WALKS	2048
/*
 * The walk asked for (tid, time): 1 with *out when it is done (and
 * forgotten then; counted in late_walks and late_stops), 0 while it waits
 * (after waiting up to wait_ns for it), -ENOENT when none was asked.
 */
int unwind_bpf_walk_done(struct unwind_bpf *u, uint32_t tid, uint64_t time,
			 uint64_t wait_ns, struct cfi_walk *out);
/*
 * Whether the walk of (tid, time) is next and the worker is building
 * nothing: it is then done within microseconds, worth waiting for.
 */
bool unwind_bpf_walk_soon(struct unwind_bpf *u, uint32_t tid, uint64_t time);
/* Whether the walk of (tid, time) is asked for and not done yet (nothing is taken). */
bool unwind_bpf_walk_pending(struct unwind_bpf *u, uint32_t tid, uint64_t time);
/* Stop waiting for the walk of (tid, time) (counted in late_expired): it is dropped. */
void unwind_bpf_walk_cancel(struct unwind_bpf *u, uint32_t tid, uint64_t time);

/*
 * What the recorder reports of the unwinder (struct bpfrec_unwind_stats,
 * <bpfrec/record.h>): the walks summed over CPUs and both programs, the
 * manager's tables as of the worker's last job, the most bytes loaded at
 * once and the budget. 0, or -errno when the walk counters could not be
 * read (they are left 0: nothing to report is better than a wrong sum).
 */
struct bpfrec_unwind_stats;
int unwind_bpf_stats(struct unwind_bpf *u, struct bpfrec_unwind_stats *out);

#endif /* RECORDER_UNWIND_BPF_H */
