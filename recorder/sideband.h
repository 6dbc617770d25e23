/* SPDX-License-Identifier: MIT */
/*
 * sideband.h - the kernel's own reports of executable mmaps and execs, as
 * they happen, so that a process that exits before the recorder reads
 * /proc/PID/maps still resolves.
 *
 * One dummy software event per recorded CPU (no samples: attr.mmap,
 * mmap2, comm, comm_exec, stamped with CLOCK_MONOTONIC like the BPF
 * records), read through libbpf's perf_buffer. Each MMAP2 of an executable
 * mapping and each COMM with the exec flag becomes a compact record in the
 * recorder's batch, sorted with the samples by time; sideband_apply() then
 * hands it to the task tracker, which keeps it for the pid until that
 * pid's first sample or its exit (tasks.h). Nothing is written for a
 * process that has no samples.
 *
 * The event sees every process: the tracker drops reports for pids out of
 * scope. Records the perf buffer had no room for are counted
 * (sideband_lost()); their processes are described from /proc instead.
 */
#ifndef RECORDER_SIDEBAND_H
#define RECORDER_SIDEBAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct batch;
struct sideband;
struct task_desc;
struct task_tracker;

/*
 * Open the events on cpus and map their buffers; records go into b as
 * sideband_consume() reads them. data: also report mappings of files that
 * are not executable (perf's mmap_data: DWARF unwinders read .eh_frame_hdr
 * through them). 0 or -errno.
 */
int sideband_new(const int *cpus, size_t nr_cpus, struct batch *b, bool data,
		 struct sideband **out);
/* Move everything the kernel reported so far into the batch. 0 or -errno. */
int sideband_consume(struct sideband *sb);
/* Readable when a buffer is half full: for the recorder's epoll set. */
int sideband_epoll_fd(const struct sideband *sb);
/* Reports lost to a full buffer. */
uint64_t sideband_lost(const struct sideband *sb);
void sideband_free(struct sideband *sb);

/* Is this batch record (len bytes) one of ours, whole? */
bool sideband_record_ok(const void *rec, size_t len);
/*
 * Give one of our records to the tracker: *desc is what the file lacks now
 * (task_tracker_mmap(); NULL = nothing), for the caller to write
 * (emit_desc()). 0 or -ENOMEM.
 */
int sideband_apply(const void *rec, struct task_tracker *t, const struct task_desc **desc);
/*
 * A report that waits behind a late sample: an executable mapping of a
 * process not described yet is told to the tracker now, for its unwind
 * tables (task_tracker_mmap_early()); sideband_apply() still comes in its
 * turn. Nothing is written.
 */
void sideband_apply_early(const void *rec, struct task_tracker *t);

#endif /* RECORDER_SIDEBAND_H */
