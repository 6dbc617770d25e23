/* SPDX-License-Identifier: MIT */
/*
 * python.h - what the BPF sampler needs to walk the Python frames of a
 * CPython 3.8-3.13 thread (bpf/python.bpf.h), and what it sends for each
 * frame. Shared by the BPF program and the recorder (recorder/pyframes.c),
 * so it uses only fixed-size kernel types.
 *
 * User space fills one struct py_proc per process that maps a CPython
 * runtime (map py_procs, keyed by tgid): the runtime's address in that
 * process and the offsets of symbolize/pylayout.h the walk reads. A sample
 * of such a process then carries, after its native frames, nr_py struct
 * py_frame (profile.h), innermost first: the code object and instruction
 * of each Python frame the sampled thread runs. user space names them
 * (symbolize/pycode.h) and interleaves them with the native frames.
 */
#ifndef BPFREC_PYTHON_H
#define BPFREC_PYTHON_H

/* Python frames walked per sample at most; a deeper stack is cut (PROFILE_STAT_PY_CUT). */
#define PY_MAX_FRAMES		96
/* Interpreters, and thread states in each, looked at to find the sampled thread. */
#define PY_MAX_INTERPS		4
#define PY_MAX_THREADS		64
/* Bytes of a frame read at once: every frame field the walk reads lies below this. */
#define PY_FRAME_READ		120
/* Frame offsets are masked with this in BPF (user space checks they are below PY_FRAME_READ - 8). */
#define PY_FRAME_MASK		0x7f
/* An offset the version does not have (pylayout.h's PY_LAYOUT_NONE, narrowed). */
#define PY_OFF_NONE		0xffffu
/* Processes with a runtime at once. */
#define PY_MAX_PROCS		4096

/* Bits of py_proc.flags. */
#define PY_PROC_NATIVE_TID	1u	/* match tstate_native_thread_id with the tid (3.11+); else thread_id with fs base */
#define PY_PROC_CFRAME		2u	/* tstate_frame is a _PyCFrame (3.11, 3.12) */
#define PY_PROC_OWNER		4u	/* frames have an owner; cstack ones are shims (3.12+) */
#define PY_PROC_IS_ENTRY	8u	/* frames have is_entry (3.11) */
#define PY_PROC_FRAME_OBJECTS	16u	/* PyFrameObject frames, one per eval call (3.8-3.10) */

struct py_proc {
	__u64 runtime;			/* _PyRuntime in the process */
	__u32 flags;			/* PY_PROC_* */
	__u16 version;			/* major << 8 | minor */
	__u16 runtime_interpreters_head;
	__u16 interp_next;
	__u16 interp_threads_head;
	__u16 tstate_next;
	__u16 tstate_id;		/* native_thread_id (PY_PROC_NATIVE_TID) or thread_id */
	__u16 tstate_frame;
	__u16 cframe_current_frame;	/* PY_PROC_CFRAME */
	__u16 frame_previous;		/* all frame offsets < PY_FRAME_READ - 8 */
	__u16 frame_code;
	__u16 frame_instr;
	__u16 frame_owner;		/* PY_PROC_OWNER */
	__u16 frame_is_entry;		/* PY_PROC_IS_ENTRY */
	__u16 code_firstlineno;
	__u8 frame_owner_cstack;
	__u8 instr_is_int;		/* frame_instr is an int (f_lasti), else a pointer */
	__u16 pad;
};

/* Bits of py_frame.flags. */
/*
 * The outermost Python frame of one native call of the eval loop: the
 * frames from the previous such one (or the innermost) up to this one are
 * what that call runs.
 */
#define PY_FRAME_ENTRY		1u
/*
 * A shim frame of the C stack (3.12+, owner FRAME_OWNED_BY_CSTACK), pushed
 * by each native call of the eval loop below the frames it runs: no code of
 * its own; the frame sent before it is that call's entry.
 */
#define PY_FRAME_SHIM		2u

struct py_frame {
	__u64 code;		/* PyCodeObject * (3.13: f_executable, maybe not code) */
	__u64 instr;		/* f_lasti sign-extended, or the instruction pointer */
	__s32 firstlineno;	/* co_firstlineno as BPF read it: whether code is still that object */
	__u32 flags;		/* PY_FRAME_* */
};

#endif /* BPFREC_PYTHON_H */
