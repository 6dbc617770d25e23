/* SPDX-License-Identifier: MIT */
/*
 * tasks.h - which processes the file already describes, and describing the
 * ones it does not yet (COMM, MMAP2 with build-ids), lazily.
 *
 * The tracker decides; it writes nothing itself. For every sample, before the
 * sample is written, task_tracker_describe() says what the file still lacks
 * for it as a description (taskdesc.h), which the emitter (emit.h) writes,
 * then the sample. The first time a pid (tgid) appears that is one COMM for
 * it and one MMAP2 per executable mapping of /proc/PID/maps; the first time a
 * tid appears, a COMM for that thread. All are stamped with the sample's time
 * (never later than the sample that needs them). Later samples:
 *   - a user ip outside every known mapping of that pid (a dlopen): re-read
 *     the maps and write the MMAP2s not yet written;
 *   - a different comm for a tid (exec): COMM with the exec flag and a fresh
 *     set of MMAP2s for the pid.
 * A process already gone (no /proc/PID) still gets its COMM from the comm
 * the sample carries. Nothing walks all of /proc.
 *
 * The kernel's own reports, when the recorder has them (a side-band perf
 * event, recorder/sideband.h), close the race with processes that exit
 * before /proc/PID/maps can be read: task_tracker_exec_begin() and
 * task_tracker_mmap() collect a process's executable mappings as they
 * happen, written (stamped with the sample's time) only if a sample of it
 * comes; until then nothing is written for it.
 *
 * Lifetime, all bounded: a process's state lives from its first report or
 * sample until the end of the round after its exit (task_tracker_exit(),
 * task_tracker_round_end()): samples stamped before the exit can arrive one
 * batch late, and the kernel samples the exit path itself. A process that
 * exits unsampled leaves nothing behind either. At most max_pids processes
 * and threads are kept (least recently seen go first).
 *
 * Build-ids of every mapped file are read from the file's ELF notes and go
 * into the description (for the BUILD_ID list) once per file that has
 * samples; then, with a build-id cache that lacks that build-id, the file
 * is opened once more through the process's root and handed to the cache.
 * Files are only ever opened with safeopen_mapped() (symbolize/safeopen.h).
 */
#ifndef RECORDER_TASKS_H
#define RECORDER_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buildid_cache;
struct perfdata_writer;
struct task_desc;
struct task_tracker;

struct procmaps_entry;
struct task_file;

/*
 * What the in-kernel unwinder (recorder/unwind_tables.h) needs to follow:
 * the executable mappings of every process in scope, as early as the
 * tracker knows them (the kernel's mmap reports after an exec or fork,
 * /proc at the first sample, a dlopen found later), and when a process is
 * forgotten (exit, exec, evicted). Processes outside the scope (-a: every
 * process the kernel reports) are told only once sampled.
 */
struct task_tracker_hooks {
	/*
	 * pid's executable mappings are now maps[0, nr) (sorted by start);
	 * files[i] is the tracker's entry of maps[i]'s file (taskfiles.h),
	 * whose hook_data a hook may read and fill (see file_new).
	 */
	void (*maps_changed)(void *ctx, uint32_t pid, const struct procmaps_entry *maps,
			     struct task_file *const *files, size_t nr);
	/*
	 * A file is first mapped (a new entry of the tracker's file table),
	 * open as fd, the descriptor the tracker read its build-id from
	 * (safeopen_mapped(); not to be closed, and read with pread or mmap
	 * only): what one hook learns of it goes in f->hook_data, one block of
	 * malloc'd memory, kept with the entry (freed by the tracker) and
	 * handed back with each maps_changed(). One open per file for all of
	 * them. Called only for files that can be opened.
	 */
	void (*file_new)(void *ctx, uint32_t pid, const struct procmaps_entry *e, int fd,
			 struct task_file *f);
	/* pid is gone from the tracker: what was kept for it can go. */
	void (*forget)(void *ctx, uint32_t pid);
	/*
	 * pid exec'd at time (each report of it: the kernel's COMM exec and
	 * the BPF notice may both tell of one exec), whether or not the tracker
	 * knows it: what pid held before time belonged to the old image.
	 */
	void (*exec)(void *ctx, uint32_t pid, uint64_t time);
};

struct task_tracker_opts {
	const char *proc_root;	/* NULL = "/proc"; tests point it at a fake tree */
	size_t max_pids;	/* bound on tracked pids; 0 = 65536 */
	/*
	 * Every process is in scope (-a): task_tracker_mmap() and
	 * task_tracker_exec_begin() keep state for any pid; otherwise only for
	 * pids announced by task_tracker_fork() or already sampled.
	 */
	bool track_all;
	/* Files with samples are handed to it (buildid_cache.h); NULL = none. */
	struct buildid_cache *cache;
	/*
	 * Also describe readable non-executable file mappings (perf's
	 * mmap_data): DWARF unwinders find .eh_frame_hdr through them.
	 */
	bool data_maps;
	/* Told when a process's executable mappings change or it is forgotten; NULL = none. */
	const struct task_tracker_hooks *hooks;
	void *hooks_ctx;
	/*
	 * The records' clock (CLOCK_MONOTONIC) now, taken before each read of
	 * /proc/PID/maps: an exec reported with an earlier time is in what was
	 * read. NULL = the real one; tests give theirs.
	 */
	uint64_t (*now)(void);
};

int task_tracker_new(const struct task_tracker_opts *opts, struct task_tracker **out);
void task_tracker_free(struct task_tracker *t);
/*
 * A new file begins (--switch-output): it describes nothing yet, so every
 * process and thread is described again at its next sample, and every
 * file's build-id listed again, but what is known of each process stays:
 * one that exits before its first sample in the new file, when /proc can
 * no longer tell, still gets its mappings (the kernel's reports, or what
 * /proc said while it lived), where a fresh tracker had none to give.
 * A sample of a process carried
 * over stamped before its description in the new file (an --alloc record
 * that waited behind a later CPU sample) has the description written
 * again at its time: in time order, no sample of it precedes its COMM.
 */
void task_tracker_new_file(struct task_tracker *t);
/*
 * The file is about to end (its last round, the tracers' end of file and
 * task_tracker_new_file() follow): what exited is kept until the new
 * file's first round ends, not the round after its exit. The last samples
 * of a process can come after the switch (an --alloc batch, what a ring
 * still held) and the new file then still has its mappings to describe it.
 */
void task_tracker_file_ending(struct task_tracker *t);

/*
 * A sample of (pid, tid) at time on cpu is about to be written; comm is the
 * thread's comm as BPF saw it (NUL-terminated, at most 16 bytes);
 * user_ips are the sample's user-space addresses. *desc is what the file
 * still lacks for it (empty when nothing), valid until the next call on t;
 * the tracker counts it as written. 0 or -ENOMEM (a process that vanished
 * is not an error).
 */
int task_tracker_describe(struct task_tracker *t, uint32_t pid, uint32_t tid, const char *comm,
			  uint64_t time, uint32_t cpu, const uint64_t *user_ips, size_t nr_user,
			  const struct task_desc **desc);
/*
 * The process (tgid == tid) or thread exited: forgotten at the end of the
 * next round (its late samples still find it).
 */
void task_tracker_exit(struct task_tracker *t, uint32_t pid, uint32_t tid);
/*
 * pid exec'd (the BPF exec notice, after the new image is mapped; also when
 * the comm stays the same): forget its threads and mappings; its next
 * sample writes a COMM with the exec flag and the new image's MMAP2s. A
 * no-op when task_tracker_exec_begin() already reported this exec. time:
 * the exec's; a process not yet described whose mappings were read from
 * /proc after it (a report handed over in its turn, behind a sample read
 * ahead) has the new image already: it is kept, its tables and the hooks'
 * state with it, and its COMM gets the exec flag.
 */
void task_tracker_exec(struct task_tracker *t, uint32_t pid, uint64_t time);
/*
 * The kernel began an exec of pid (its COMM with the exec flag, before the
 * new image is mapped): as task_tracker_exec(), and the task_tracker_mmap()
 * calls that follow describe the whole new image (over the prefetched
 * one, where it is kept: the same mappings).
 */
void task_tracker_exec_begin(struct task_tracker *t, uint32_t pid, uint64_t time);
/*
 * A task was created by ppid (tid == pid: a new process, maybe under a
 * reused pid; it starts with a copy of its parent's known mappings).
 */
void task_tracker_fork(struct task_tracker *t, uint32_t pid, uint32_t tid, uint32_t ppid);

struct procmaps_entry;
/*
 * The kernel mapped e (an MMAP2 record of tid at time on cpu: any
 * protection, the path as the kernel gives it) into pid. Kept until pid's
 * first sample, whose description has it; when pid already has samples,
 * *desc has it now (stamped time; else *desc is empty), valid and counted
 * as by task_tracker_describe(). 0 or -errno.
 */
int task_tracker_mmap(struct task_tracker *t, uint32_t pid, uint32_t tid,
		      const struct procmaps_entry *e, uint64_t time, uint32_t cpu,
		      const struct task_desc **desc);
/*
 * pid's samples wait to be written (a late sample, walked again once pid's
 * unwind tables are built, holds the round): read its mappings from /proc
 * now, while it may still run, keep them for its description as the
 * kernel's reports would be kept, and tell the hooks (the unwind tables
 * start) also under track_all, where a process is otherwise told only once
 * described. comm: thread tid's in the sample (16 bytes, BPF's copy): a
 * process whose thread has another name now exec'd since and is left
 * alone. Nothing is written. Where the kernel reported its mappings since
 * its exec, only the hooks are told (once); a process already described is
 * left alone.
 */
void task_tracker_prefetch(struct task_tracker *t, uint32_t pid, uint32_t tid, const char *comm);
/*
 * The kernel mapped e into pid, and the report waits behind a late sample
 * (it is handed to task_tracker_mmap() again in its turn): an executable
 * mapping of a process not described yet joins its mappings now, and its
 * unwind tables start. Nothing is written; a process not known yet, or
 * already described, is left to the report's turn.
 */
void task_tracker_mmap_early(struct task_tracker *t, uint32_t pid,
			     const struct procmaps_entry *e);
/*
 * A round of records (one sorted batch) is written: the state of tasks
 * that exited before this round is freed.
 */
void task_tracker_round_end(struct task_tracker *t);

/* What the tracker holds, to check that it stays bounded. */
struct task_tracker_stats {
	size_t procs;		/* processes, sampled or not yet, alive or exited */
	size_t threads;
	size_t dead;		/* of those, exited, waiting for the next round */
	size_t maps;		/* executable mappings held */
	size_t files;		/* mapped files (with their build-ids) */
	size_t bytes;		/* the heap all of it takes, allocator overhead aside */
};
void task_tracker_stats(const struct task_tracker *t, struct task_tracker_stats *st);

/*
 * What /proc refused the tracker (EACCES/EPERM: a privilege the process
 * lacks, privs.h). A process whose maps are refused is described like one
 * already gone (COMM only, raw addresses); a refused map_files falls back
 * to the mapped path for the build-id.
 */
struct task_tracker_denied {
	size_t maps;		/* reads of /proc/PID/maps refused */
	uint32_t maps_pid;	/* the first refused pid */
	int maps_err;		/* and its -errno */
	size_t map_files;	/* opens of /proc/PID/map_files/... refused */
	int map_files_err;
};
void task_tracker_denied(const struct task_tracker *t, struct task_tracker_denied *out);

#endif /* RECORDER_TASKS_H */
