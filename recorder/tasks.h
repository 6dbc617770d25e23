/* SPDX-License-Identifier: MIT */
/*
 * tasks.h - which processes the file already describes, and describing the
 * ones it does not yet (COMM, MMAP2 with build-ids), lazily.
 *
 * The recorder calls task_tracker_see() for every sample *before* writing the
 * sample. The first time a pid (tgid) appears the tracker writes one COMM for
 * it and one MMAP2 per executable mapping of /proc/PID/maps; the first time a
 * tid appears, a COMM for that thread. All are stamped with the sample's time
 * (never later than the sample that needs them). Later samples:
 *   - a user ip outside every known mapping of that pid (a dlopen): re-read
 *     the maps and write the MMAP2s not yet written;
 *   - a different comm for a tid (exec): COMM with the exec flag and a fresh
 *     set of MMAP2s for the pid.
 * A process already gone (no /proc/PID) still gets its COMM from the comm
 * the sample carries; its addresses stay raw. Nothing walks all of /proc.
 * task_tracker_exit() frees a pid's state when it exits; state is bounded.
 *
 * Build-ids of every mapped file are read from the file's ELF notes and
 * registered with perfdata_writer_add_build_id() once per file that has
 * samples; then, with a build-id cache, the file is opened once more
 * through the process's root and handed to the cache. Files are only ever
 * opened with safeopen_mapped() (symbolize/safeopen.h).
 */
#ifndef RECORDER_TASKS_H
#define RECORDER_TASKS_H

#include <stddef.h>
#include <stdint.h>

struct buildid_cache;
struct perfdata_writer;
struct task_tracker;

struct task_tracker_opts {
	const char *proc_root;	/* NULL = "/proc"; tests point it at a fake tree */
	size_t max_pids;	/* bound on tracked pids; 0 = 65536 */
	/* Files with samples are handed to it (buildid_cache.h); NULL = none. */
	struct buildid_cache *cache;
};

int task_tracker_new(struct perfdata_writer *w, const struct task_tracker_opts *opts,
		     struct task_tracker **out);
void task_tracker_free(struct task_tracker *t);

/*
 * A sample of (pid, tid) at time on cpu is about to be written; comm is the
 * thread's comm as BPF saw it (NUL-terminated, at most 16 bytes);
 * user_ips are the sample's user-space addresses. Writes what the file
 * still lacks. Returns 0 or -errno (writer errors only: a process that
 * vanished is not an error).
 */
int task_tracker_see(struct task_tracker *t, uint32_t pid, uint32_t tid, const char *comm,
		     uint64_t time, uint32_t cpu, const uint64_t *user_ips, size_t nr_user);
/* The process (tgid == tid) or thread exited: forget it (a reused pid starts fresh). */
void task_tracker_exit(struct task_tracker *t, uint32_t pid, uint32_t tid);
/*
 * pid exec'd (reported by the kernel, so also when the comm stays the same):
 * forget its threads and mappings; its next sample writes a COMM with the
 * exec flag and the new image's MMAP2s.
 */
void task_tracker_exec(struct task_tracker *t, uint32_t pid);

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

/* The kernel's text, [_text, _etext), as /proc/kallsyms gives it. */
struct kernel_text {
	uint64_t start, end;
};

/*
 * Read _text and _etext from kallsyms_path (NULL = /proc/kallsyms). Prints
 * nothing; returns 0, -EPERM when the addresses read as zero (hidden by
 * kernel.kptr_restrict from this process: a privilege problem, privs.h),
 * -ENOENT when the symbols (or the file) are missing, -EINVAL when _etext
 * is not above _text, or another -errno from opening the file.
 */
int kernel_text_read(const char *kallsyms_path, struct kernel_text *kt);

/*
 * The kernel map: MMAP "[kernel.kallsyms]_text" (pid -1, misc KERNEL,
 * start = pgoff = _text, len = _etext - _text) from kt, then one MMAP per
 * module in modules_path (as perf does; modules whose addresses are hidden
 * are left out), and the kernel build-id from notes_path. NULL paths =
 * /proc/modules, /sys/kernel/notes. Write it before anything else. Fails
 * only with the writer's errors.
 */
int kernel_maps_write(struct perfdata_writer *w, const struct kernel_text *kt,
		      const char *modules_path, const char *notes_path);

#endif /* RECORDER_TASKS_H */
