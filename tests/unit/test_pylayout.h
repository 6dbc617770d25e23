/* SPDX-License-Identifier: MIT */
/*
 * test_pylayout.h - checks of what symbolize/pyruntime.h and pylayout.h
 * find, shared by test_pylayout.c and test_pyruntime.c: two layouts field
 * by field, a runtime's addresses against nm. Header-only.
 */
#ifndef TEST_PYLAYOUT_H
#define TEST_PYLAYOUT_H

#include <criterion/criterion.h>

#include "symbolize/pylayout.h"
#include "symbolize/pyruntime.h"
#include "tests/unit/test_nm.h"

#define PY_LAYOUT_FIELDS(X)							\
	X(major) X(minor) X(instr_kind) X(lines_kind)				\
	X(runtime_interpreters_head) X(interp_next) X(interp_threads_head)	\
	X(tstate_next) X(tstate_thread_id) X(tstate_native_thread_id)		\
	X(tstate_frame) X(cframe_current_frame)					\
	X(frame_previous) X(frame_code) X(frame_instr) X(frame_owner)		\
	X(frame_owner_cstack)							\
	X(code_name) X(code_qualname) X(code_filename) X(code_firstlineno)	\
	X(code_lines) X(code_adaptive)						\
	X(object_type) X(var_size) X(bytes_data)				\
	X(unicode_length) X(unicode_state) X(unicode_ascii_data)		\
	X(unicode_compact_data)

static inline void expect_layout_eq(const struct py_layout *got, const struct py_layout *want,
				    const char *what)
{
#define EXPECT_FIELD(f)								\
	cr_expect_eq(got->f, want->f, "%s: " #f " is %llu, expected %llu", what,	\
		     (unsigned long long)got->f, (unsigned long long)want->f);
	PY_LAYOUT_FIELDS(EXPECT_FIELD)
#undef EXPECT_FIELD
}

/* _PyRuntime and PyCode_Type where the dynamic symbols of path say. */
static inline void expect_runtime_symbols(const char *path, const struct py_runtime_info *rt)
{
	uint64_t value, size;

	nm_symbol_of(path, true, "_PyRuntime", &value, &size);
	cr_expect_eq(rt->runtime_addr, value, "%s: _PyRuntime", path);
	cr_expect_eq(rt->runtime_size, size, "%s: _PyRuntime's size", path);
	nm_symbol_of(path, true, "PyCode_Type", &value, &size);
	cr_expect_eq(rt->code_type_addr, value, "%s: PyCode_Type", path);
}

#endif /* TEST_PYLAYOUT_H */
