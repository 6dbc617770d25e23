/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * python.bpf.h - the Python frames of the current thread, for a process
 * that runs CPython 3.8-3.13 (bpf/python.h says what user space gives and
 * gets; symbolize/pylayout.h documents the walk and its offsets).
 *
 * py_walk() finds the thread's thread state by its own id, never "the GIL
 * holder": from 3.11 its native_thread_id is the tid; before, its
 * thread_id is pthread_self(), which on x86-64 glibc is the thread's fs
 * base (task->thread.fsbase, saved at each switch and set once at clone).
 * It looks at PY_MAX_INTERPS interpreters and PY_MAX_THREADS thread states
 * in each at most, then follows the frame chain from the thread's current
 * frame, PY_MAX_FRAMES frames at most (a longer chain is cut and counted).
 * Each frame costs two reads of user memory: PY_FRAME_READ bytes of the
 * frame (every field the walk needs), and the code object's first line,
 * which lets user space tell a code object from another one later put at
 * the same address.
 *
 * Which native call of the eval loop runs which frames (PY_FRAME_ENTRY):
 * before 3.11 each frame has its own call; 3.11 marks the outermost frame
 * of each call is_entry; from 3.12 each call pushes a shim frame owned by
 * the C stack below its first frame: it is sent flagged PY_FRAME_SHIM
 * (no branch in the loop for it), and user space drops it and marks the
 * frame above it as the entry (recorder/pystack.h).
 *
 * py_walk() is a global function (the verifier checks it once, apart from
 * the program and the table walker's loops that call it) whose two loops
 * are bpf_loop() callbacks: as bounded loops over values read from user
 * memory, every iteration and path was a state of its own and the walk
 * alone passed the verifier's million instructions. So it needs 5.17; a
 * program for older kernels must not call it. Its result is in the per-CPU
 * py_scratch buffer.
 *
 * py_frames_into() copies the result after a record's native frames, the
 * one layout every record with Python frames uses (profile.h): the
 * sampler's, and the tracers' (offcpu.h, alloc.h) that walk user stacks.
 * Each object that includes this gets the rodata switch python_frames and
 * the maps py_procs (user space shares the sampler's with the tracers) and
 * py_scratch.
 *
 * The object that includes this has the stats map (stats.bpf.h) with a
 * counter for cut walks: PY_STAT_CUT, PROFILE_STAT_PY_CUT (profile.h)
 * unless it defines it before including this.
 */
#ifndef BPFREC_PYTHON_BPF_H
#define BPFREC_PYTHON_BPF_H

#include "profile.h"
#include "python.h"
#include "task_regs.bpf.h"

#ifndef PY_STAT_CUT
#define PY_STAT_CUT PROFILE_STAT_PY_CUT
#endif

/* -g: Python frames for processes in py_procs; false with --no-python or before 5.17. */
const volatile bool python_frames = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PY_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct py_proc);
} py_procs SEC(".maps");

struct py_walk_buf {
	struct py_frame frames[PY_MAX_FRAMES];
	/* A frame's first PY_FRAME_READ bytes; a field at an offset masked to 7 bits stays inside. */
	__u8 frame[PY_FRAME_MASK + 1 + 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_walk_buf);
} py_scratch SEC(".maps");

static __always_inline __u64 py_read_ptr(__u64 addr)
{
	__u64 v = 0;

	bpf_probe_read_user(&v, sizeof(v), (const void *)addr);
	return v;
}

/* A field of the frame copy (no branch: every branch in the walk's loop costs the verifier). */
static __always_inline __u64 py_field64(const struct py_walk_buf *b, __u64 off)
{
	__u64 v;

	__builtin_memcpy(&v, &b->frame[off & PY_FRAME_MASK], sizeof(v));
	return v;
}

/* py_find_tstate()'s state between its steps (bpf_loop callbacks take scalars). */
struct py_find_ctx {
	struct py_proc p;
	__u64 want, interp, ts, found;
	__u32 interps;
};

/* One step: the next thread state, or the next interpreter's first. 1 ends the loop. */
static long py_find_step(__u64 i, void *ctx)
{
	struct py_find_ctx *c = ctx;

	if (!c->ts) {
		if (++c->interps > PY_MAX_INTERPS)
			return 1;
		c->interp = py_read_ptr(c->interp + c->p.interp_next);
		if (!c->interp)
			return 1;
		c->ts = py_read_ptr(c->interp + c->p.interp_threads_head);
		return 0;
	}
	if (py_read_ptr(c->ts + c->p.tstate_id) == c->want) {
		c->found = c->ts;
		return 1;
	}
	c->ts = py_read_ptr(c->ts + c->p.tstate_next);
	return 0;
}

/* The walk's state between its steps. */
struct py_walk_ctx {
	struct py_proc p;
	__u64 frame;
	__u32 n, always, entry_bit, shim_bit;
};

/* One frame into py_scratch. 1 ends the walk. */
static long py_walk_step(__u64 i, void *ctx)
{
	struct py_walk_ctx *c = ctx;
	struct py_walk_buf *b;
	struct py_frame *f;
	__u32 zero = 0;
	__u64 code, n = c->n;
	__u8 owner, is_entry;

	b = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!b || !c->frame || n >= PY_MAX_FRAMES)
		return 1;
	if (bpf_probe_read_user(b->frame, PY_FRAME_READ, (const void *)c->frame))
		return 1;
	f = &b->frames[n];
	code = py_field64(b, c->p.frame_code);
	f->code = code;
	f->instr = py_field64(b, c->p.frame_instr);
	c->frame = py_field64(b, c->p.frame_previous);
	owner = b->frame[c->p.frame_owner & PY_FRAME_MASK];
	is_entry = b->frame[c->p.frame_is_entry & PY_FRAME_MASK];
	f->flags = c->always | (c->entry_bit & (is_entry != 0)) * PY_FRAME_ENTRY |
		   (c->shim_bit & (owner == c->p.frame_owner_cstack)) * PY_FRAME_SHIM;
	f->firstlineno = 0;
	bpf_probe_read_user(&f->firstlineno, sizeof(f->firstlineno),
			    (const void *)(code + c->p.code_firstlineno));
	c->n = n + 1;
	return 0;
}

/*
 * The current thread's frames into py_scratch, innermost first: how many
 * (0: none, or the process runs no Python known here). Shim frames are
 * sent too (PY_FRAME_SHIM: user space drops them, marking the frame before
 * as its call's entry). Counts PROFILE_STAT_PY_CUT when the chain went on
 * past PY_MAX_FRAMES or a frame could not be read. Both loops are
 * bpf_loop() ones (5.17+): bounded loops over unknown user memory cost the
 * verifier a state per iteration and path, past its limit.
 */
__noinline int py_walk(__u32 tgid, __u32 tid)
{
	/*
	 * One after the other in the same bytes: the whole call chain of a
	 * tracer (its program, this, a loop's step) has 512 bytes of stack,
	 * and --sched's went over (6.1: "combined stack size of 3 calls is
	 * 544"). Both begin with the same py_proc.
	 */
	union {
		struct py_find_ctx fc;
		struct py_walk_ctx wc;
	} u = { .fc = { .interps = 1 } };
	struct py_find_ctx *fcp = &u.fc;
	struct py_walk_ctx *wcp = &u.wc;
	struct py_proc *p;
	__u64 frame;
	__u32 flags;

	p = bpf_map_lookup_elem(&py_procs, &tgid);
	if (!p)
		return 0;
	fcp->p = *p;
	fcp->want = tid;
	if (!(fcp->p.flags & PY_PROC_NATIVE_TID)) {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();

		fcp->want = BPF_CORE_READ(task, thread.fsbase);
	}
	fcp->interp = py_read_ptr(fcp->p.runtime + fcp->p.runtime_interpreters_head);
	if (!fcp->interp)
		return 0;
	fcp->ts = py_read_ptr(fcp->interp + fcp->p.interp_threads_head);
	bpf_loop(PY_MAX_INTERPS * PY_MAX_THREADS, py_find_step, fcp, 0);
	if (!fcp->found)
		return 0;
	frame = py_read_ptr(fcp->found + fcp->p.tstate_frame);
	if (frame && (fcp->p.flags & PY_PROC_CFRAME))
		frame = py_read_ptr(frame + fcp->p.cframe_current_frame);
	/* wc.p is fc.p already (the same bytes); the rest is the walk's. */
	flags = fcp->p.flags;
	wcp->frame = frame;
	wcp->n = 0;
	wcp->always = flags & PY_PROC_FRAME_OBJECTS ? PY_FRAME_ENTRY : 0;
	wcp->entry_bit = flags & PY_PROC_IS_ENTRY ? 1 : 0;
	wcp->shim_bit = flags & PY_PROC_OWNER ? 1 : 0;
	bpf_loop(PY_MAX_FRAMES, py_walk_step, wcp, 0);
	if (wcp->frame)
		count(PY_STAT_CUT);
	return wcp->n;
}

/*
 * The current thread's Python frames (py_walk()) into frames[at...], after
 * a record's `at` native frames: how many. frames has room for max_at
 * native frames and `room` Python ones after them (a constant); a walk
 * with more keeps its innermost `room` frames.
 * Only for a program built for 5.17+ (bpf_loop), and only when
 * python_frames: the caller tests both, so older kernels' builds never
 * contain the call.
 */
static __always_inline __u32 py_frames_into(__u64 *frames, __u64 at, __u64 max_at, __u64 room,
					    __u32 tgid, __u32 tid)
{
	struct py_walk_buf *b;
	__u32 zero = 0;
	__u64 n, bytes;

	n = (__u32)py_walk(tgid, tid);
	if (!n || n > PY_MAX_FRAMES)
		return 0;
	if (n > room)
		n = room;
	b = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!b)
		return 0;
	/*
	 * The bounds the verifier keeps to the copy (frames has room for it);
	 * the empty asm keeps the compiler from dropping the tests as known,
	 * or from testing another copy of the value than the one used.
	 */
	asm volatile("" : "+r"(n), "+r"(at));
	if (n > room || at >= max_at)
		return 0;
	bytes = n * sizeof(struct py_frame);
	if (bpf_probe_read_kernel(&frames[at], bytes, b->frames))
		return 0;
	return n;
}

#endif /* BPFREC_PYTHON_BPF_H */
