/* SPDX-License-Identifier: MIT */
/*
 * pyruntime.h - is an ELF file a CPython interpreter, which version, and
 * where is its runtime state: for naming the Python functions a process
 * runs (the offsets to walk from there are pylayout.h's).
 *
 * The interpreter is either in the executable (Debian's /usr/bin/python3.11
 * links it statically) or in libpython3.X.so; a python executable that
 * needs libpython defines none of it and is not one. Everything comes from
 * the file's dynamic symbols, which CPython must export for its extension
 * modules (so even a stripped binary has them), never from its name: an
 * embedding program or a renamed copy is recognized all the same.
 *
 *   CPython 3.7+    defines the object _PyRuntime (the runtime state);
 *   the version     3.11+: the constant Py_Version (PY_VERSION_HEX), read
 *                   from the file; before, the newest of the functions each
 *                   release added to the API: Py_BytesMain (3.8),
 *                   PyFrame_GetCode (3.9), Py_NewRef (3.10). A release never
 *                   drops such a function, so they must appear in that
 *                   order, and all of them with Py_Version. Older releases
 *                   leave the micro version in .rodata only as the text
 *                   PY_VERSION, which nothing points to but code, and which
 *                   the linker may merge into the tail of another string
 *                   (the pyenv builds' "3.8.18" is the end of their prefix
 *                   path): the micro version is unknown there, and no layout
 *                   depends on it.
 *
 * Addresses are ELF addresses (st_value): in a process, add the load bias
 * of the file's mapping. The file is untrusted: every symbol and every
 * byte read is bounded by what the file holds (util.h).
 */
#ifndef SYMBOLIZE_PYRUNTIME_H
#define SYMBOLIZE_PYRUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "symbolize/pylayout.h"
#include "symbolize/util.h"

struct py_runtime_info {
	uint8_t major, minor, micro;
	bool micro_known;	/* from Py_Version (3.11+); else micro is 0 */
	uint32_t hexversion;	/* Py_Version (PY_VERSION_HEX) when the file has it, else 0 */
	uint64_t runtime_addr;	/* _PyRuntime */
	uint64_t runtime_size;	/* its st_size: sizeof(_PyRuntimeState) */
	uint64_t code_type_addr;	/* PyCode_Type, what a code object's ob_type is; 0 when absent */
};

/*
 * Is elf a CPython runtime that pylayout.h describes (3.8 to 3.13, x86-64,
 * no Py_TRACE_REFS)? 0 and *out; -ENOENT when it is no CPython runtime
 * (no _PyRuntime object defined); -EOPNOTSUPP for one of another version
 * or kind (*out holds what is known: the version from 3.7 on); -EINVAL
 * when its symbols contradict each other or Py_Version cannot be read.
 */
int py_runtime_detect(Elf *elf, struct py_runtime_info *out);

/*
 * The layout of the runtime rt that py_runtime_detect() found in elf: the
 * table's (pylayout.h), or for 3.13 the one the runtime publishes, read
 * from the initialized _PyRuntime in the file. 0; -EOPNOTSUPP; for 3.13
 * also -ENOENT when the file does not hold those bytes and -EINVAL when
 * they are not a valid block (py_layout_from_debug_offsets()).
 */
int py_runtime_layout(Elf *elf, const struct py_runtime_info *rt, struct py_layout *out);

#endif /* SYMBOLIZE_PYRUNTIME_H */
