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
 * bpfrec pprof name them from the file and the cache alone. A function's
 * frame is its start plus twice its line's distance from the lowest line
 * its rows cover (one row per line, two bytes apart), plus one. A process
 * gets a new file whenever its frames need a function, or a line of one,
 * that its files do not have yet: py_frames_prepare() names a sample's
 * frames as it is delivered (the process most likely still lives; a frame
 * named then is remembered for after it exits) and notes what they need,
 * py_frames_describe() files that at the first sample written after (one
 * file for a round's worth) and says the files' MMAP2s before it,
 * py_frames_chain() gives the sample's chain. Earlier files stay mapped
 * where they are (each file maps clear of the others), so earlier samples
 * keep their names. What cannot be named (unreadable, or a code object
 * whose first line is not the one BPF read: freed and reused) is the
 * process's `[python]` function. Without a build-id cache (-N) nothing can
 * be filed: samples keep their native frames only.
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
};
#define py_frames_opts__last_field note_ctx

struct py_frames_stats {
	uint64_t procs;		/* processes found running a CPython we walk */
	uint64_t procs_unsupported;	/* ... one we do not */
	uint64_t samples;	/* samples written with Python frames */
	uint64_t frames;	/* Python frames written */
	uint64_t unknown;	/* of those, [python]: not named */
	uint64_t unplaced;	/* of those, no eval-loop frame to go before (at the outer end) */
	uint64_t not_filed;	/* symbol files that could not be made or filed */
};

int py_frames_new(const struct py_frames_opts *opts, struct py_frames **out);
void py_frames_free(struct py_frames *pf);

/* The hooks, ctx = pf: they pass each call on to next (NULL = none). */
extern const struct task_tracker_hooks py_frames_hooks;
void py_frames_set_next(struct py_frames *pf, const struct task_tracker_hooks *next,
			void *next_ctx);

/* The functions and lines the Python frames py[0, nr_py) of a sample of pid need. */
void py_frames_prepare(struct py_frames *pf, uint32_t pid, const struct py_frame *py,
		       size_t nr_py);

/*
 * Before a sample of pid: what the file still lacks of pid's symbol files
 * into d, stamped sid: a file of what py_frames_prepare() found missing,
 * filed into cache now, and the MMAP2 and build-id of each file the
 * perf.data started at file_id (any value that differs between the
 * recording's files) has not had. 0, or -ENOMEM from d; a file that cannot
 * be made is counted (not_filed), its frames are then left out.
 */
int py_frames_describe(struct py_frames *pf, uint32_t pid, struct buildid_cache *cache,
		       uint64_t file_id, const struct perfdata_sample_id *sid, struct task_desc *d);

/*
 * pid's user chain with its Python frames py[0, nr_py) (as BPF sent them)
 * among its native ones native[0, nr_native), into out[0, cap): how many,
 * 0 when pid has no runtime known here or no frame could be placed (the
 * caller keeps its native chain).
 */
size_t py_frames_chain(struct py_frames *pf, uint32_t pid, const uint64_t *native,
		       size_t nr_native, const struct py_frame *py, size_t nr_py, uint64_t *out,
		       size_t cap);

void py_frames_stats(const struct py_frames *pf, struct py_frames_stats *out);

#endif /* RECORDER_PYFRAMES_H */
