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
 * At write time, py_frames_chain() names a sample's Python frames and
 * interleaves them with its native user frames (pystack.h): each Python
 * function becomes an address in the process's synthetic range
 * [PY_SYNTH_BASE, + PY_SYNTH_LEN) (non-canonical: no real mapping can be
 * there, on 4- or 5-level page tables), one function per PY_SYNTH_SPAN
 * bytes, a line at its offset from the function's first line. What cannot
 * be named (unreadable, or a code object whose first line is not the one
 * BPF read: freed and reused) is the process's one `[python]` function.
 *
 * How perf learns those names (py_frames_mmap() says what to write before
 * a sample that uses the range): TEMPORARY, until the Python symbol file
 * (an ELF with symbols and lines, kept in the build-id cache) lands: the
 * range is an anonymous executable mapping, which perf names from its perf
 * map, /tmp/perf-PID.map ("START SIZE NAME" lines), written here, appended
 * to (a process started with python -X perf writes its own lines there too).
 * That file is on this machine only.
 *
 * Not thread-safe: the recorder's reader calls everything.
 */
#ifndef RECORDER_PYFRAMES_H
#define RECORDER_PYFRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/python.h"

struct perfdata_mmap;
struct task_tracker_hooks;

#define PY_SYNTH_BASE	0x4000000000000000ull
#define PY_SYNTH_SPAN	0x10000ull	/* per function: lines past 64 Ki from its first share the last */
#define PY_SYNTH_LEN	(PY_SYNTH_SPAN << 20)

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
};

int py_frames_new(const struct py_frames_opts *opts, struct py_frames **out);
void py_frames_free(struct py_frames *pf);

/* The hooks, ctx = pf: they pass each call on to next (NULL = none). */
extern const struct task_tracker_hooks py_frames_hooks;
void py_frames_set_next(struct py_frames *pf, const struct task_tracker_hooks *next,
			void *next_ctx);

/*
 * pid's user chain with its Python frames py[0, nr_py) (as BPF sent them)
 * among its native ones native[0, nr_native), into out[0, cap): how many,
 * 0 when pid has no runtime known here (the caller keeps its native
 * chain).
 */
size_t py_frames_chain(struct py_frames *pf, uint32_t pid, const uint64_t *native,
		       size_t nr_native, const struct py_frame *py, size_t nr_py, uint64_t *out,
		       size_t cap);

/*
 * Whether pid's synthetic range must be described in the file started at
 * file_id (any value that differs between the recording's files) before
 * its next Python sample: true once per file and process, with *m filled
 * (its filename a constant).
 */
bool py_frames_mmap(struct py_frames *pf, uint32_t pid, uint64_t file_id, struct perfdata_mmap *m);

void py_frames_stats(const struct py_frames *pf, struct py_frames_stats *out);

#endif /* RECORDER_PYFRAMES_H */
