/* SPDX-License-Identifier: MIT */
/*
 * taskfiles.h - the task tracker's table of mapped files: one entry per
 * file (device, inode, path; a 32-bit process's "[vdso]" apart), shared by
 * every process that maps it, so each file's build-id is read once.
 *
 * A build-id is read only through safeopen_mapped(), and the same open file
 * is shown to the tracker's hooks (file_new: Python's probe), so a new file
 * is opened once on the reader thread; what they learn is kept with the
 * entry (hook_data). A build-id is read only through safeopen_mapped() (the mapping itself,
 * else the path inside the process's root, and only a file with the maps
 * line's device and inode); "[vdso]" gets this process's own vDSO
 * build-id, as perf does; "//anon" and other pseudo-files get none. A file
 * without one is described by MMAP2's maj/min/ino, never by another
 * file's build-id.
 *
 * Entries are counted by the mappings that point at them; those nobody
 * maps any more are swept once the table doubles (at least
 * TASK_FILES_SWEEP_MIN entries).
 *
 * With task_files_keep(), the file a build-id was read from stays open
 * (up to a bound) until task_file_take_fd() or the sweep: its copy for the
 * build-id cache is made when a sample of it is written, which on a slow
 * machine can come after its process exited, and then neither map_files
 * nor the process's root (a chroot, a container) can open it again. A refused map_files open is counted in
 * the denied counters the caller passes, so the tracker can say which
 * capability was missing.
 */
#ifndef RECORDER_TASKFILES_H
#define RECORDER_TASKFILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/buildid.h"
#include "tools/lib/hash.h"

struct buildid_cache;

struct procmaps_entry;
struct task_tracker_denied;

#define TASK_FILES_SWEEP_MIN	4096

/* A mapped file (or "//anon", "[vdso]"), shared by every process mapping it. */
struct task_file {
	struct hash_node node;
	uint32_t maj, min;
	uint64_t ino;
	bool vdso32;		/* a [vdso] of a 32-bit process: not our image */
	uint32_t refs;		/* task_maps pointing here */
	bool registered;	/* build-id given to the writer (the file has samples) */
	uint8_t build_id_size;	/* 0: none found, MMAP2 carries maj/min/ino */
	uint8_t build_id[BUILDID_MAX];
	int fd;			/* the file its build-id came from, kept; -1: none */
	/* The tracker's hooks' facts about the file (task_tracker_hooks.file_new); freed with it. */
	void *hook_data;
	char path[];
};

struct task_files {
	const char *proc_root;	/* the tracker's; outlives the table */
	struct task_tracker_denied *denied;	/* the tracker's refusal counters */
	/* Told of each new file while it is open (task_tracker_hooks.file_new); NULL: none. */
	const struct task_tracker_hooks *hooks;
	void *hooks_ctx;
	struct hash_table map;	/* struct task_file by (maj, min, ino, path, vdso32) */
	size_t sweep_at;
	/* This process's vDSO build-id: the kernel maps the same image into every 64-bit process. */
	uint8_t vdso_id[BUILDID_MAX];
	size_t vdso_id_size;
	size_t max_kept, nr_kept;	/* task_files_keep(): how many fds at most, held */
	const struct buildid_cache *keep_for;	/* task_files_keep(): what it has is not kept */
};

void task_files_init(struct task_files *tf, const char *proc_root,
		     struct task_tracker_denied *denied, const struct task_tracker_hooks *hooks,
		     void *hooks_ctx);
/* Frees every entry, referenced or not: the mappings pointing at them must be gone. */
void task_files_free(struct task_files *tf);
/* The file of mapping e in pid, with a reference taken; NULL on ENOMEM. */
struct task_file *task_file_get(struct task_files *tf, uint32_t pid, const struct procmaps_entry *e);
void task_file_put(struct task_file *f);
/*
 * Keep up to max files open after their build-id is read (0: none, the
 * default), those whose build-id cache (NULL: none) lacks it.
 */
void task_files_keep(struct task_files *tf, size_t max, const struct buildid_cache *cache);
/* f's kept fd, now the caller's; -1 when none was kept. */
int task_file_take_fd(struct task_files *tf, struct task_file *f);
/* Bytes the table holds (entries and buckets), for the tracker's stats. */
size_t task_files_bytes(const struct task_files *tf);

#endif /* RECORDER_TASKFILES_H */
