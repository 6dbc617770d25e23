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
 * samples.
 */
#ifndef RECORDER_TASKS_H
#define RECORDER_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct perfdata_writer;
struct task_tracker;

struct task_tracker_opts {
	const char *proc_root;	/* NULL = "/proc"; tests point it at a fake tree */
	size_t max_pids;	/* bound on tracked pids; 0 = 65536 */
	/*
	 * Also describe readable non-executable file mappings (perf's
	 * mmap_data): DWARF unwinders find .eh_frame_hdr through them.
	 */
	bool data_maps;
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
 * The kernel map: MMAP "[kernel.kallsyms]_text" (pid -1, misc KERNEL,
 * start = pgoff = _text, len = _etext - _text) from kallsyms_path, then one
 * MMAP per module in modules_path (as perf does), and the kernel build-id
 * from notes_path. NULL paths = /proc/kallsyms, /proc/modules,
 * /sys/kernel/notes. Write it before anything else.
 */
int kernel_maps_write(struct perfdata_writer *w, const char *kallsyms_path,
		      const char *modules_path, const char *notes_path);

#endif /* RECORDER_TASKS_H */
