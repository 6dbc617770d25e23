/* SPDX-License-Identifier: MIT */
/*
 * pylayout.h - where CPython 3.8 to 3.13 keep what a profiler reads to
 * name the Python functions of a thread: the struct member offsets, per
 * minor version, from the runtime down to a code object's names.
 *
 * The walk these offsets serve (no code here does it: it is the contract
 * of a later BPF walker and of the user-space code that names frames):
 *
 *   _PyRuntime + runtime_interpreters_head -> PyInterpreterState *
 *     + interp_next                         -> the next interpreter
 *     + interp_threads_head                 -> PyThreadState *
 *   PyThreadState + tstate_next             -> the next thread state
 *     + tstate_thread_id                    -> pthread_t (pthread_self(): on
 *                                              x86-64 glibc the thread's fs base)
 *     + tstate_native_thread_id             -> the thread's tid (3.11+)
 *     + tstate_frame                        -> its current frame, or (3.11,
 *                                              3.12) a _PyCFrame whose
 *                                              + cframe_current_frame is it
 *   frame + frame_previous                  -> the caller's frame
 *     + frame_code                          -> PyCodeObject * (3.13: may be
 *                                              another object: check ob_type)
 *     + frame_instr                         -> where it is (instr_kind)
 *     + frame_owner == frame_owner_cstack   -> a shim frame of the C stack
 *                                              (3.12+): no code to name
 *   PyCodeObject + code_qualname (3.11+) or code_name, code_filename
 *     -> str objects; + code_firstlineno (int); + code_lines -> bytes
 *     object of line_kind; + code_adaptive: its first instruction (3.11+)
 *
 * 3.8 to 3.10 have PyFrameObject frames (f_back, f_code, f_lasti); 3.11 on
 * have _PyInterpreterFrame ones (previous, f_code/f_executable,
 * prev_instr/instr_ptr, owner). Offsets come from a table for 3.8 to 3.12
 * (py_layout_table(); every entry is checked against the DWARF of real
 * builds by tests/unit/test_pylayout.c) and, for 3.13, from the
 * _Py_DebugOffsets block the runtime publishes at the start of _PyRuntime
 * (py_layout_from_debug_offsets()), which the 3.13 table entry only
 * completes with what that block does not say.
 *
 * The layouts are those of CPython's default build on x86-64 (GIL, no
 * Py_TRACE_REFS: that option puts two more pointers in every object's
 * header). CPython keeps them within a minor version's releases; 3.13's
 * pre-releases changed the debug block, so only 3.13 final ones are taken.
 */
#ifndef SYMBOLIZE_PYLAYOUT_H
#define SYMBOLIZE_PYLAYOUT_H

#include <stddef.h>
#include <stdint.h>

/* An offset the version does not have. */
#define PY_LAYOUT_NONE UINT32_MAX

/* How a frame says where it is (frame_instr). */
enum py_instr_kind {
	/* int f_lasti: byte offset in co_code of the last instruction started (3.8, 3.9) */
	PY_INSTR_LASTI_BYTES,
	/* int f_lasti: the same in 2-byte code units (3.10) */
	PY_INSTR_LASTI_UNITS,
	/*
	 * A pointer to the instruction started, inside the code object from
	 * code_adaptive on: (ptr - (code + code_adaptive)) / 2 is its index in
	 * code units (3.11, 3.12 prev_instr; 3.13 instr_ptr). -1 before the
	 * first instruction.
	 */
	PY_INSTR_CODE_PTR,
};

/* The format of the bytes object at code_lines, from an instruction's byte offset to its line. */
enum py_lines_kind {
	PY_LINES_LNOTAB,	/* co_lnotab: (byte delta, signed line delta) pairs (3.8, 3.9) */
	PY_LINES_LINETABLE,	/* co_linetable of PEP 626, line delta -128: no line (3.10) */
	PY_LINES_LOCATIONS,	/* co_linetable, the location table of 3.11 on */
};

/*
 * PyASCIIObject.state, the same in 3.8 to 3.13 (a bit-field that GCC lays
 * out from bit 0 on x86-64): kind (1, 2 or 4 bytes a character), compact
 * (the characters follow the object), ascii (and are ASCII). A compact
 * ASCII string's characters start at unicode_ascii_data, another compact
 * string's at unicode_compact_data.
 */
#define PY_UNICODE_KIND_SHIFT	2
#define PY_UNICODE_KIND_MASK	7u
#define PY_UNICODE_COMPACT_BIT	5
#define PY_UNICODE_ASCII_BIT	6

struct py_layout {
	uint8_t major, minor;
	enum py_instr_kind instr_kind;
	enum py_lines_kind lines_kind;
	/* _PyRuntimeState */
	uint32_t runtime_interpreters_head;	/* interpreters.head */
	/* PyInterpreterState */
	uint32_t interp_next;
	uint32_t interp_threads_head;		/* tstate_head (3.8-3.10), threads.head */
	/* PyThreadState */
	uint32_t tstate_next;
	uint32_t tstate_thread_id;		/* unsigned long, a pthread_t */
	uint32_t tstate_native_thread_id;	/* unsigned long tid (3.11+) */
	uint32_t tstate_frame;			/* frame (3.8-3.10), cframe (3.11, 3.12), current_frame */
	uint32_t cframe_current_frame;		/* _PyCFrame.current_frame (3.11, 3.12) */
	/* PyFrameObject (3.8-3.10) or _PyInterpreterFrame */
	uint32_t frame_previous;		/* f_back, previous */
	uint32_t frame_code;			/* f_code, f_executable (3.13) */
	uint32_t frame_instr;			/* f_lasti, prev_instr, instr_ptr (3.13) */
	uint32_t frame_owner;			/* char owner (3.12+) */
	uint8_t frame_owner_cstack;		/* FRAME_OWNED_BY_CSTACK */
	/* PyCodeObject */
	uint32_t code_name;			/* co_name */
	uint32_t code_qualname;			/* co_qualname (3.11+) */
	uint32_t code_filename;			/* co_filename */
	uint32_t code_firstlineno;		/* int co_firstlineno */
	uint32_t code_lines;			/* co_lnotab (3.8, 3.9), co_linetable */
	uint32_t code_adaptive;			/* co_code_adaptive (3.11+) */
	/* objects */
	uint32_t object_type;			/* PyObject.ob_type */
	uint32_t var_size;			/* PyVarObject.ob_size */
	uint32_t bytes_data;			/* PyBytesObject.ob_sval */
	uint32_t unicode_length;		/* PyASCIIObject.length, in characters */
	uint32_t unicode_state;			/* PyASCIIObject.state (PY_UNICODE_*) */
	uint32_t unicode_ascii_data;		/* sizeof(PyASCIIObject) */
	uint32_t unicode_compact_data;		/* sizeof(PyCompactUnicodeObject) */
};

/* The table's layout of CPython major.minor (3.8 to 3.13), or NULL. */
const struct py_layout *py_layout_table(unsigned int major, unsigned int minor);

/* The size of 3.13's _Py_DebugOffsets: the bytes to read at _PyRuntime. */
#define PY_DEBUG_OFFSETS_313_SIZE 584

/*
 * The layout of a CPython 3.13 runtime from the len bytes at the start of
 * its _PyRuntime (from the file's .data or from the process), checked
 * before use: the cookie "xdebugpy", a version of 3.13 final, a default
 * (not free-threaded) build, and every offset inside the struct it is an
 * offset of. hexversion (Py_Version) and runtime_size (_PyRuntime's
 * st_size), when not 0, must be what the block says: else they are not
 * this runtime's bytes. 0; -EINVAL when the bytes are not such a block or
 * contradict themselves or the caller; -EOPNOTSUPP for a well-formed block
 * of another version or of a free-threaded build.
 */
int py_layout_from_debug_offsets(const void *buf, size_t len, uint32_t hexversion,
				 uint64_t runtime_size, struct py_layout *out);

#endif /* SYMBOLIZE_PYLAYOUT_H */
