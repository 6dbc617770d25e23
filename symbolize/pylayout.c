// SPDX-License-Identifier: MIT
/* pylayout.c - CPython's struct offsets per minor version (pylayout.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "symbolize/pylayout.h"

#define NONE PY_LAYOUT_NONE

/* What no release changed: the object header, bytes objects, str's first fields. */
#define OBJECTS								\
	.object_type = 8, .var_size = 16, .bytes_data = 32,		\
	.unicode_length = 16, .unicode_state = 32

/*
 * 3.8 to 3.10: PyFrameObject frames, reached from the thread state; only
 * where f_lasti sits differs (and, with PEP 626 in 3.10, what it counts and
 * the line table's format).
 */
#define FRAME_OBJECTS(lasti)							\
	.runtime_interpreters_head = 32,					\
	.interp_next = 0, .interp_threads_head = 8,				\
	.tstate_next = 8, .tstate_thread_id = 176, .tstate_native_thread_id = NONE,	\
	.tstate_frame = 24, .cframe_current_frame = NONE,			\
	.frame_previous = 24, .frame_code = 32, .frame_instr = (lasti),	\
	.frame_owner = NONE, .frame_owner_cstack = 0,				\
	.code_name = 112, .code_qualname = NONE, .code_filename = 104,		\
	.code_firstlineno = 40, .code_lines = 120, .code_adaptive = NONE,	\
	.unicode_ascii_data = 48, .unicode_compact_data = 72,		\
	OBJECTS

/*
 * Read from the DWARF of CPython's own builds (3.8.18, 3.9.18, 3.10.13,
 * 3.11.7, 3.12.1, 3.13.0); tests/unit/test_pylayout.c checks every entry
 * against the DWARF of the builds it finds. str lost its wstr pointer in
 * 3.12, so its characters start 8 bytes earlier from then on.
 */
static const struct py_layout layouts[] = {
	{
		.major = 3, .minor = 8,
		.instr_kind = PY_INSTR_LASTI_BYTES, .lines_kind = PY_LINES_LNOTAB,
		FRAME_OBJECTS(104),
	},
	{
		.major = 3, .minor = 9,
		.instr_kind = PY_INSTR_LASTI_BYTES, .lines_kind = PY_LINES_LNOTAB,
		FRAME_OBJECTS(104),
	},
	{
		.major = 3, .minor = 10,
		.instr_kind = PY_INSTR_LASTI_UNITS, .lines_kind = PY_LINES_LINETABLE,
		FRAME_OBJECTS(96),
	},
	{
		/*
		 * Frames live in the thread's data stack (_PyInterpreterFrame),
		 * reached through the _PyCFrame of the C call that runs them;
		 * code objects carry their bytecode inline.
		 */
		.major = 3, .minor = 11,
		.instr_kind = PY_INSTR_CODE_PTR, .lines_kind = PY_LINES_LOCATIONS,
		.runtime_interpreters_head = 40,
		.interp_next = 0, .interp_threads_head = 16,
		.tstate_next = 8, .tstate_thread_id = 152, .tstate_native_thread_id = 160,
		.tstate_frame = 56, .cframe_current_frame = 8,
		.frame_previous = 48, .frame_code = 32, .frame_instr = 56,
		.frame_owner = NONE, .frame_owner_cstack = 0,
		.code_name = 120, .code_qualname = 128, .code_filename = 112,
		.code_firstlineno = 72, .code_lines = 136, .code_adaptive = 184,
		.unicode_ascii_data = 48, .unicode_compact_data = 72,
		OBJECTS,
	},
	{
		/* Shim frames of the C stack (owner) appear between Python ones. */
		.major = 3, .minor = 12,
		.instr_kind = PY_INSTR_CODE_PTR, .lines_kind = PY_LINES_LOCATIONS,
		.runtime_interpreters_head = 40,
		.interp_next = 0, .interp_threads_head = 72,
		.tstate_next = 8, .tstate_thread_id = 136, .tstate_native_thread_id = 144,
		.tstate_frame = 56, .cframe_current_frame = 0,
		.frame_previous = 8, .frame_code = 0, .frame_instr = 56,
		.frame_owner = 70, .frame_owner_cstack = 3,
		.code_name = 120, .code_qualname = 128, .code_filename = 112,
		.code_firstlineno = 68, .code_lines = 136, .code_adaptive = 192,
		.unicode_ascii_data = 40, .unicode_compact_data = 56,
		OBJECTS,
	},
	{
		/* The thread state points at its frame: _PyCFrame is gone. */
		.major = 3, .minor = 13,
		.instr_kind = PY_INSTR_CODE_PTR, .lines_kind = PY_LINES_LOCATIONS,
		.runtime_interpreters_head = 632,
		.interp_next = 7264, .interp_threads_head = 7344,
		.tstate_next = 8, .tstate_thread_id = 152, .tstate_native_thread_id = 160,
		.tstate_frame = 72, .cframe_current_frame = NONE,
		.frame_previous = 8, .frame_code = 0, .frame_instr = 56,
		.frame_owner = 70, .frame_owner_cstack = 3,
		.code_name = 120, .code_qualname = 128, .code_filename = 112,
		.code_firstlineno = 68, .code_lines = 136, .code_adaptive = 200,
		.unicode_ascii_data = 40, .unicode_compact_data = 56,
		OBJECTS,
	},
};

const struct py_layout *py_layout_table(unsigned int major, unsigned int minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].major == major && layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

/*
 * _Py_DebugOffsets as CPython 3.13 (final) lays it out: native 64-bit
 * words, each group led by the size of the struct its offsets are in.
 * Groups this module does not read are kept as anonymous words, in place.
 */
struct debug_offsets_313 {
	char cookie[8];
	uint64_t version;		/* PY_VERSION_HEX */
	uint64_t free_threaded;
	struct {
		uint64_t size, finalizing, interpreters_head;
	} runtime;
	struct {
		uint64_t size, id, next, threads_head;
		uint64_t gil_and_modules[9];
	} interp;
	struct {
		uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id;
		uint64_t datastack_chunk, status;
	} tstate;
	struct {
		uint64_t size, previous, executable, instr_ptr, localsplus, owner;
	} frame;
	struct {
		uint64_t size, filename, name, qualname, linetable, firstlineno;
		uint64_t argcount, localsplusnames, localspluskinds, co_code_adaptive;
	} code;
	struct {
		uint64_t size, ob_type;
	} object;
	uint64_t type_tuple_list_dict_float_long[4 + 3 + 3 + 3 + 2 + 3];
	struct {
		uint64_t size, ob_size, ob_sval;
	} bytes;
	struct {
		uint64_t size, state, length, asciiobject_size;
	} unicode;
	uint64_t gc[2];
};

_Static_assert(sizeof(struct debug_offsets_313) == PY_DEBUG_OFFSETS_313_SIZE,
	       "3.13's _Py_DebugOffsets is 73 words");

/* No CPython struct comes near this: a bigger size is not a real one. */
#define STRUCT_SIZE_MAX (16u << 20)

/*
 * Is a field of width bytes at offset inside a struct of size bytes? Then
 * *out is the offset. Every offset the walker will add to a pointer passes
 * here: one that points past its struct is a corrupt or foreign block.
 */
static bool field_in(uint64_t size, uint64_t offset, uint64_t width, uint32_t *out)
{
	if (size == 0 || size > STRUCT_SIZE_MAX || offset > size || width > size - offset)
		return false;
	*out = (uint32_t)offset;
	return true;
}

int py_layout_from_debug_offsets(const void *buf, size_t len, uint32_t hexversion,
				 uint64_t runtime_size, struct py_layout *out)
{
	const struct py_layout *base = py_layout_table(3, 13);
	struct debug_offsets_313 d;
	struct py_layout l = *base;
	bool ok = true;

	if (len < sizeof(d))
		return -EINVAL;
	memcpy(&d, buf, sizeof(d));
	if (memcmp(d.cookie, "xdebugpy", sizeof(d.cookie)) || d.version > UINT32_MAX)
		return -EINVAL;
	if (hexversion && d.version != hexversion)
		return -EINVAL;
	/* 3.14 has the same cookie and another layout; 3.13's pre-releases changed it too. */
	if (d.version >> 16 != 0x030d || (d.version >> 4 & 0xf) != 0xf)
		return -EOPNOTSUPP;
	if (d.free_threaded)
		return -EOPNOTSUPP;	/* another object header */
	if (runtime_size && d.runtime.size != runtime_size)
		return -EINVAL;

	ok &= field_in(d.runtime.size, d.runtime.interpreters_head, 8, &l.runtime_interpreters_head);
	ok &= field_in(d.interp.size, d.interp.next, 8, &l.interp_next);
	ok &= field_in(d.interp.size, d.interp.threads_head, 8, &l.interp_threads_head);
	ok &= field_in(d.tstate.size, d.tstate.next, 8, &l.tstate_next);
	ok &= field_in(d.tstate.size, d.tstate.thread_id, 8, &l.tstate_thread_id);
	ok &= field_in(d.tstate.size, d.tstate.native_thread_id, 8, &l.tstate_native_thread_id);
	ok &= field_in(d.tstate.size, d.tstate.current_frame, 8, &l.tstate_frame);
	ok &= field_in(d.frame.size, d.frame.previous, 8, &l.frame_previous);
	ok &= field_in(d.frame.size, d.frame.executable, 8, &l.frame_code);
	ok &= field_in(d.frame.size, d.frame.instr_ptr, 8, &l.frame_instr);
	ok &= field_in(d.frame.size, d.frame.owner, 1, &l.frame_owner);
	ok &= field_in(d.code.size, d.code.name, 8, &l.code_name);
	ok &= field_in(d.code.size, d.code.qualname, 8, &l.code_qualname);
	ok &= field_in(d.code.size, d.code.filename, 8, &l.code_filename);
	ok &= field_in(d.code.size, d.code.firstlineno, 4, &l.code_firstlineno);
	ok &= field_in(d.code.size, d.code.linetable, 8, &l.code_lines);
	/* The bytecode is the code object's last member: at least one code unit of it is inside. */
	ok &= field_in(d.code.size, d.code.co_code_adaptive, 2, &l.code_adaptive);
	ok &= field_in(d.object.size, d.object.ob_type, 8, &l.object_type);
	ok &= field_in(d.bytes.size, d.bytes.ob_size, 8, &l.var_size);
	ok &= field_in(d.bytes.size, d.bytes.ob_sval, 1, &l.bytes_data);
	ok &= field_in(d.unicode.size, d.unicode.length, 8, &l.unicode_length);
	ok &= field_in(d.unicode.size, d.unicode.state, 4, &l.unicode_state);
	/* The characters of a compact ASCII string follow its PyASCIIObject. */
	ok &= field_in(d.unicode.size, d.unicode.asciiobject_size, 0, &l.unicode_ascii_data);
	ok &= d.unicode.asciiobject_size >= d.unicode.state + 4 &&
	      d.unicode.asciiobject_size >= d.unicode.length + 8;
	/* The PyObject header every object starts with, str too. */
	ok &= d.object.size <= d.unicode.asciiobject_size;
	if (!ok)
		return -EINVAL;
	*out = l;
	return 0;
}
