/* SPDX-License-Identifier: MIT */
/*
 * test_pylayout.h - checks of what symbolize/pyruntime.h and pylayout.h
 * find, shared by test_pylayout.c, test_pyruntime.c and test_pycode.c: two
 * layouts field by field, a runtime's addresses against nm, where pyenv
 * keeps its builds. Header-only.
 */
#ifndef TEST_PYLAYOUT_H
#define TEST_PYLAYOUT_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* `pyenv root`: $PYENV_ROOT, else what the command says, else ~/.pyenv. */
static inline void pyenv_root(char *out, size_t size)
{
	const char *env = getenv("PYENV_ROOT");
	FILE *p;

	if (env && *env) {
		snprintf(out, size, "%s", env);
		return;
	}
	out[0] = '\0';
	p = popen("pyenv root 2>/dev/null", "r");
	if (p) {
		if (!fgets(out, (int)size, p))
			out[0] = '\0';
		pclose(p);
		out[strcspn(out, "\n")] = '\0';
	}
	if (!out[0])
		snprintf(out, size, "%s/.pyenv", getenv("HOME") ? getenv("HOME") : "");
}

/* Is name "3.<minor>.<micro>" (no suffix: "3.13.0t" is another build)? Then *micro. */
static inline bool release_dir(const char *name, unsigned int minor, unsigned int *micro)
{
	char want[16];
	size_t n = (size_t)snprintf(want, sizeof(want), "3.%u.", minor);
	char *end;

	if (strncmp(name, want, n) || !name[n] || name[n] < '0' || name[n] > '9')
		return false;
	*micro = (unsigned int)strtoul(name + n, &end, 10);
	return *end == '\0';
}

typedef void (*build_fn)(const char *root, unsigned int minor, unsigned int micro);

/*
 * fn for every installed pyenv build 3.<minor>.* with a shared library
 * (libpython3.<minor><abiflags>.so.1.0), or a skip that names the version.
 */
static inline void for_each_build(unsigned int minor, const char *abiflags, build_fn fn)
{
	char root[PATH_MAX - 64], versions[PATH_MAX];
	unsigned int checked = 0, micro;
	struct dirent *de;
	DIR *d;

	pyenv_root(root, sizeof(root));
	snprintf(versions, sizeof(versions), "%s/versions", root);
	d = opendir(versions);
	while (d && (de = readdir(d)) != NULL) {
		char lib[PATH_MAX + 300];

		if (!release_dir(de->d_name, minor, &micro))
			continue;
		snprintf(lib, sizeof(lib), "%s/%s/lib/libpython3.%u%s.so.1.0", versions, de->d_name,
			 minor, abiflags);
		if (access(lib, R_OK))
			continue;	/* a static build: no library with DWARF to read */
		fn(root, minor, micro);
		checked++;
	}
	if (d)
		closedir(d);
	if (!checked)
		cr_skip_test("no pyenv build of CPython 3.%u with libpython3.%u%s.so (pyenv root %s)",
			     minor, minor, abiflags, root);
}

#endif /* TEST_PYLAYOUT_H */
