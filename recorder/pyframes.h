/* SPDX-License-Identifier: MIT */
/*
 * pyframes.h - Python frames in -g stacks: the recorder's side of
 * bpf/python.bpf.h (the walk) and of symbolize/py*.h (the names).
 *
 * As task tracker hooks (tasks.h), it looks at each executable file a
 * traced process maps for a CPython runtime (pyruntime.h): when one is
 * found, of a version pylayout.h describes, the process gets its BPF
 * py_procs entry (the runtime's address, the offsets of the walk) and a
 * reader of its code objects (pycode.h); another version is skipped,
 * counted, and said in one -v line naming it. The process's entry goes
 * when the tracker forgets it.
 *
 * Python functions become addresses in Python symbol files (symbolize/
 * pysyms.h), filed into the build-id cache (recorder/pysyms_cache.h) and
 * described by MMAP2s carrying their build-ids, so perf, hotspot and
 * bpfrec pprof name them from the file and the cache alone. A function is
 * placed once, when a frame first needs it: its range gets a row for each
 * line its code object's line table has (two bytes apart, from the lowest),
 * then a row of no line for any other line (a code object of the same
 * function with more lines), so its samples never split between two
 * symbols; its frame is its start plus its line's row, plus one.
 *
 * A process's symbol file is opened (its MMAP2 start and length, its
 * path and a build-id unique to this recording fixed) when its first
 * function is placed, takes functions as they come, and is written into
 * the cache once full (PY_GEN_RESERVE of addresses, then the next one
 * opens), when the process is forgotten, and at each py_frames_flush():
 * a process has one file unless its functions fill that, however many
 * rounds bring new ones. A file still open is filed as it stands, and
 * again, over its earlier copy (buildid_cache_put()), each time it has
 * gained functions since: a function keeps its address, so a later copy
 * names every frame an earlier one did, and a perf.data --switch-output
 * retires reads whole at once, while its processes still run.
 *
 * py_frames_prepare() names a sample's frames in place as it is delivered
 * (the process most likely still lives; a frame named then is remembered
 * for after it exits), and again at its write for any it could not name
 * then (a new process, not yet known to run Python); a code object read
 * from the process is taken as the same for PY_CODE_TRUST_NS of samples
 * (20 ms) before it is read again, so a sample costs hash lookups, not
 * reads. While py_frames_read_soon(), the recorder reads its rings every few
 * ms, so a process's frames are read while it lives; a frame whose object
 * can no longer be read (freed as the interpreter ends, or the process
 * gone) is named as its code object was last read, when that is the
 * object BPF saw (its first line), or as that frame was named before.
 * py_frames_describe() says the files' MMAP2s before a sample (again in
 * each new perf.data of --switch-output), py_frames_chain() gives the
 * sample's chain from the named frames. What cannot be named (unreadable,
 * or a code object whose first line is not the one BPF read: freed and
 * reused) is the process's `[python]` function. Without a build-id cache
 * (py_frames_set_cache()) nothing can be filed: samples keep their native
 * frames only.
 *
 * Not thread-safe: the recorder's reader calls everything.
 */
#ifndef RECORDER_PYFRAMES_H
#define RECORDER_PYFRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/python.h"

struct buildid_cache;
struct perfdata_sample_id;
struct task_desc;
struct task_tracker_hooks;

struct py_frames;

struct py_frames_opts {
	size_t sz;
	int procs_fd;		/* BPF map py_procs */
	const char *proc_root;	/* NULL = "/proc" */
	/* One line per process skipped for an unsupported CPython; NULL = none. */
	void (*note)(void *ctx, const char *msg);
	void *note_ctx;
	/* The line saying Python functions go unnamed for want of a build-id cache (ctx note_ctx). */
	void (*warn)(void *ctx, const char *msg);
};
#define py_frames_opts__last_field warn

struct py_frames_stats {
	uint64_t procs;		/* processes found running a CPython we walk */
	uint64_t procs_unsupported;	/* ... one we do not */
	uint64_t samples;	/* samples written with Python frames */
	uint64_t frames;	/* Python frames written */
	uint64_t unknown;	/* of those, [python]: not named */
	uint64_t unplaced;	/* of those, no eval-loop frame to go before (at the outer end) */
	uint64_t not_filed;	/* filings of symbol files that could not be made or copied */
	uint64_t files;		/* symbol files filed */
	uint64_t filings;	/* times they were written into the cache (grown: again) */
	uint64_t reads;		/* code objects read from a process to name a frame */
};

/*
 * Bits of py_frame.flags BPF never sets (bpf/python.h has the others):
 * py_frames_prepare() named the frame, its code is now its address (0:
 * none); it is the [python] one.
 */
#define PY_FRAME_NAMED		(1u << 30)
#define PY_FRAME_UNKNOWN	(1u << 31)

int py_frames_new(const struct py_frames_opts *opts, struct py_frames **out);
void py_frames_free(struct py_frames *pf);

/* The hooks, ctx = pf: they pass each call on to next (NULL = none). */
extern const struct task_tracker_hooks py_frames_hooks;
void py_frames_set_next(struct py_frames *pf, const struct task_tracker_hooks *next,
			void *next_ctx);

/* The build-id cache symbol files go into; NULL (the default): none, no Python frames. */
void py_frames_set_cache(struct py_frames *pf, struct buildid_cache *cache);

/*
 * Name the Python frames py[0, nr_py) of a sample of pid taken at time (ns,
 * the samples' clock) in place: each gets PY_FRAME_NAMED and its address
 * for py_frames_chain() (placing its function when new). Frames named
 * before are left as they are; nothing happens when pid is not known to
 * run a CPython we walk (yet).
 */
void py_frames_prepare(struct py_frames *pf, uint32_t pid, uint64_t time, struct py_frame *py,
		       size_t nr_py);

/*
 * Before a sample of pid: the MMAP2 and build-id of each of pid's symbol
 * files the perf.data started at file_id (any value that differs between
 * the recording's files) has not had, into d, stamped sid. 0 or -ENOMEM.
 */
int py_frames_describe(struct py_frames *pf, uint32_t pid, uint64_t file_id,
		       const struct perfdata_sample_id *sid, struct task_desc *d);

/*
 * pid's user chain with its Python frames py[0, nr_py) (named by
 * py_frames_prepare(); one that is not is left out) among its native ones
 * native[0, nr_native), into out[0, cap): how many, 0 when pid has no
 * runtime known here or no frame could be placed (the caller keeps its
 * native chain).
 */
size_t py_frames_chain(struct py_frames *pf, uint32_t pid, const uint64_t *native,
		       size_t nr_native, const struct py_frame *py, size_t nr_py, uint64_t *out,
		       size_t cap);

/*
 * Write every symbol file still open into the cache as it stands (one
 * that gained no function since its last filing is left alone), and keep
 * it open: before a perf.data is retired (--switch-output), so a reader
 * names its frames at once, and at the end of the recording. Its samples
 * are all written by then: the functions they name are in the files.
 */
void py_frames_flush(struct py_frames *pf);

/*
 * Whether the rings should be read every few ms at mono_ns() now: a
 * process known to run a CPython we walk lives, and one was found in the
 * last second or a sample with Python frames was taken in it. Frames are
 * named as their records are read, so a process's must be read while it
 * lives; one idle for longer had its functions read already (they are
 * named as last read once it exits).
 */
bool py_frames_read_soon(const struct py_frames *pf, uint64_t now);

void py_frames_stats(const struct py_frames *pf, struct py_frames_stats *out);

#endif /* RECORDER_PYFRAMES_H */
