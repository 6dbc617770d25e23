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
 * are bpf_loop() callbacks (5.17+): inlined into the programs as bounded
 * loops over values read from user memory, every iteration and path was a
 * state of its own and the walk alone passed the verifier's million
 * instructions. py_walk_bounded() is the same walk for kernels without
 * bpf_loop (5.10-5.16): the same steps as bounded loops in small global
 * functions of their own, called in turn (a piece of the thread search,
 * PY_BOUNDED_FRAMES frames), each checked once: some 20K instructions on
 * 6.18 and 30K on 5.10 (the bounded programs: 0.8M and 0.5M in all), and
 * the same PY_MAX_FRAMES frames as py_walk().
 * A program calls one or the other, chosen when it is compiled (the
 * sampler's on_sample_cfi_bounded, the tracers' compat builds). The result
 * is in the per-CPU py_scratch buffer.
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

static __always_inline __u64 py_read_ptr(__u64 addr)
{
	__u64 v = 0;

	bpf_probe_read_user(&v, sizeof(v), (const void *)addr);
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

/* py_walk()'s two loop states, one after the other in the same bytes. */
union py_walk_state {
	struct py_find_ctx fc;
	struct py_walk_ctx wc;
};

struct py_walk_buf {
	struct py_frame frames[PY_MAX_FRAMES];
	/* A frame's first PY_FRAME_READ bytes; a field at an offset masked to 7 bits stays inside. */
	__u8 frame[PY_FRAME_MASK + 1 + 8];
	/* The bounded walk's state (py_walk_bounded()): its pieces are functions of their own. */
	union py_walk_state u;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_walk_buf);
} py_scratch SEC(".maps");

/* A field of the frame copy (no branch: every branch in the walk's loop costs the verifier). */
static __always_inline __u64 py_field64(const struct py_walk_buf *b, __u64 off)
{
	__u64 v;

	__builtin_memcpy(&v, &b->frame[off & PY_FRAME_MASK], sizeof(v));
	return v;
}

/* One frame into py_scratch. 1 ends the walk. */
static long py_walk_step(__u64 i, void *ctx)
{
	struct py_walk_ctx *c = ctx;
	struct py_walk_buf *b;
	struct py_frame *f;
	__u32 zero = 0;
	__u64 code, n;
	__u8 owner, is_entry;

	b = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!b || !c->frame)
		return 1;
	/*
	 * n tested and used in one register, and the slot taken before the
	 * read: 5.10's verifier keeps no bound on a copy of n spilled
	 * across a call, nor on one tested in another register
	 * ("unbounded memory access").
	 */
	n = c->n;
	asm volatile("" : "+r"(n));
	if (n >= PY_MAX_FRAMES)
		return 1;
	f = &b->frames[n];
	asm volatile("" : "+r"(f));
	if (bpf_probe_read_user(b->frame, PY_FRAME_READ, (const void *)c->frame))
		return 1;
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
 * The start of the thread search for tgid's thread tid, in u: false when
 * there is nothing to search (no runtime known, or no interpreter yet).
 */
static __always_inline bool py_find_begin(union py_walk_state *u, __u32 tgid, __u32 tid)
{
	struct py_find_ctx *fc = &u->fc;
	struct py_proc *p;

	p = bpf_map_lookup_elem(&py_procs, &tgid);
	if (!p)
		return false;
	fc->p = *p;
	fc->want = tid;
	if (!(fc->p.flags & PY_PROC_NATIVE_TID)) {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();

		fc->want = BPF_CORE_READ(task, thread.fsbase);
	}
	fc->interps = 1;
	fc->found = 0;
	fc->interp = py_read_ptr(fc->p.runtime + fc->p.runtime_interpreters_head);
	if (!fc->interp)
		return false;
	fc->ts = py_read_ptr(fc->interp + fc->p.interp_threads_head);
	return true;
}

/*
 * After the search: the frame walk's start in the same bytes (u->wc.p is
 * u->fc.p), false when the thread was not found.
 */
static __always_inline bool py_walk_begin(union py_walk_state *u)
{
	__u64 found = u->fc.found, frame;
	__u32 flags = u->fc.p.flags;

	if (!found)
		return false;
	frame = py_read_ptr(found + u->fc.p.tstate_frame);
	if (frame && (flags & PY_PROC_CFRAME))
		frame = py_read_ptr(frame + u->fc.p.cframe_current_frame);
	u->wc.frame = frame;
	u->wc.n = 0;
	u->wc.always = flags & PY_PROC_FRAME_OBJECTS ? PY_FRAME_ENTRY : 0;
	u->wc.entry_bit = flags & PY_PROC_IS_ENTRY ? 1 : 0;
	u->wc.shim_bit = flags & PY_PROC_OWNER ? 1 : 0;
	return true;
}

/* After the walk: how many frames; a chain that went on is counted cut. */
static __always_inline int py_walk_end(const struct py_walk_ctx *wc)
{
	if (wc->frame)
		count(PY_STAT_CUT);
	return wc->n;
}

/*
 * The current thread's frames into py_scratch, innermost first: how many
 * (0: none, or the process runs no Python known here). Shim frames are
 * sent too (PY_FRAME_SHIM: user space drops them, marking the frame before
 * as its call's entry). Counts PY_STAT_CUT when the chain went on past
 * PY_MAX_FRAMES or a frame could not be read. Both loops are bpf_loop()
 * ones (5.17+); py_walk_bounded() is the same walk for older kernels.
 */
__noinline int py_walk(__u32 tgid, __u32 tid)
{
	/*
	 * One after the other in the same bytes: the whole call chain of a
	 * tracer (its program, this, a loop's step) has 512 bytes of stack,
	 * and --sched's went over (6.1: "combined stack size of 3 calls is
	 * 544"). Both begin with the same py_proc.
	 */
	union py_walk_state u;

	if (!py_find_begin(&u, tgid, tid))
		return 0;
	bpf_loop(PY_MAX_INTERPS * PY_MAX_THREADS, py_find_step, &u.fc, 0);
	if (!py_walk_begin(&u))
		return 0;
	bpf_loop(PY_MAX_FRAMES, py_walk_step, &u.wc, 0);
	return py_walk_end(&u.wc);
}

/*
 * The bounded walk (kernels before 5.17, without bpf_loop) runs the same
 * steps as bounded loops, in pieces that are global functions: the
 * verifier checks each once, alone, whatever calls it how often, so the
 * walk costs it a piece's loop (PY_BOUNDED_FRAMES frames), not a state per
 * frame, path and caller. Their state is in py_scratch (u), not on the
 * stack: a global function cannot take a pointer to it.
 */
#define PY_BOUNDED_FRAMES	32
#define PY_BOUNDED_PIECES	(PY_MAX_FRAMES / PY_BOUNDED_FRAMES)

/* PY_MAX_THREADS + 1 steps of the thread search (an interpreter's worth): 1 when it ended. */
__noinline int py_find_bounded(void)
{
	struct py_walk_buf *b;
	__u32 zero = 0;

	b = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!b)
		return 1;
	for (__u32 i = 0; i < PY_MAX_THREADS + 1; i++)
		if (py_find_step(i, &b->u.fc))
			return 1;
	return 0;
}

/* PY_BOUNDED_FRAMES frames at most: 1 when the walk ended. */
__noinline int py_walk_piece_bounded(void)
{
	struct py_walk_buf *b;
	__u32 zero = 0;

	b = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!b)
		return 1;
	for (__u32 i = 0; i < PY_BOUNDED_FRAMES; i++)
		if (py_walk_step(i, &b->u.wc))
			return 1;
	return 0;
}

/* py_walk() without bpf_loop: the same frames (PY_BOUNDED_PIECES * PY_BOUNDED_FRAMES of them). */
__noinline int py_walk_bounded(__u32 tgid, __u32 tid)
{
	struct py_walk_buf *b;
	__u32 zero = 0;

	b = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!b || !py_find_begin(&b->u, tgid, tid))
		return 0;
	for (__u32 i = 0; i < PY_MAX_INTERPS; i++)
		if (py_find_bounded())
			break;
	if (!py_walk_begin(&b->u))
		return 0;
	for (__u32 i = 0; i < PY_BOUNDED_PIECES; i++)
		if (py_walk_piece_bounded())
			break;
	return py_walk_end(&b->u.wc);
}

/*
 * The current thread's Python frames (py_walk()) into frames[at...], after
 * a record's `at` native frames: how many. frames has room for max_at
 * native frames and `room` Python ones after them (a constant); a walk
 * with more keeps its innermost `room` frames.
 * Only when python_frames (the caller tests it). bounded: the walk for
 * kernels without bpf_loop (py_walk_bounded()), a constant in each
 * program, so a build for them never contains bpf_loop.
 */
static __always_inline __u32 py_frames_into(__u64 *frames, __u64 at, __u64 max_at, __u64 room,
					    __u32 tgid, __u32 tid, bool bounded)
{
	struct py_walk_buf *b;
	__u32 zero = 0;
	__u64 n, bytes;

	n = (__u32)(bounded ? py_walk_bounded(tgid, tid) : py_walk(tgid, tid));
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
