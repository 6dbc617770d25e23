// SPDX-License-Identifier: MIT
/*
 * fuzz_pyruntime.c - libFuzzer harness for telling CPython runtimes in ELF
 * files (symbolize/pyruntime.c, over util.c's symbol and byte readers) and
 * for the parser of 3.13's _Py_DebugOffsets (symbolize/pylayout.c). The
 * input is both an ELF file, as a memfd (a traced process maps whatever it
 * likes), and a debug block as it could be read from a process's memory.
 * What is accepted must keep the contract the walker will rely on: a
 * version the tables have, and every offset inside its struct.
 */
#include <errno.h>
#include <stdlib.h>

#include "symbolize/pyruntime.h"
#include "fuzz.h"

/* An accepted layout: its version's, and every offset a plausible one. */
static void check_layout(const struct py_layout *l, unsigned int minor)
{
	const uint32_t offsets[] = {
		l->runtime_interpreters_head, l->interp_next, l->interp_threads_head,
		l->tstate_next, l->tstate_thread_id, l->tstate_native_thread_id,
		l->tstate_frame, l->cframe_current_frame, l->frame_previous, l->frame_code,
		l->frame_instr, l->frame_owner, l->code_name, l->code_qualname,
		l->code_filename, l->code_firstlineno, l->code_lines, l->code_adaptive,
		l->object_type, l->var_size, l->bytes_data, l->unicode_length,
		l->unicode_state, l->unicode_ascii_data, l->unicode_compact_data,
	};

	if (l->major != 3 || l->minor != minor)
		abort();
	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++)
		if (offsets[i] != PY_LAYOUT_NONE && offsets[i] > (16u << 20))
			abort();
}

static void fuzz_elf(const uint8_t *data, size_t size)
{
	struct py_runtime_info rt;
	struct py_layout l;
	int fd = fuzz_fd(data, size);
	Elf *elf;
	int err;

	if (fd < 0)
		return;
	if (elf_open_fd(fd, &elf) == 0) {
		err = py_runtime_detect(elf, &rt);
		if (err != 0 && err != -ENOENT && err != -EOPNOTSUPP && err != -EINVAL)
			abort();
		if (err == 0) {
			if (rt.major != 3 || rt.minor < 8 || rt.minor > 13 ||
			    rt.micro_known != (rt.minor >= 11) || (rt.hexversion != 0) != rt.micro_known)
				abort();
			if (py_runtime_layout(elf, &rt, &l) == 0) {
				check_layout(&l, rt.minor);
				/* The walk starts inside _PyRuntime. */
				if (l.runtime_interpreters_head + 8ull > rt.runtime_size)
					abort();
			}
		}
		elf_end(elf);
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct py_layout l;
	uint32_t own = 0;

	/* The same bytes as read from memory: alone, and with a Py_Version
	 * that agrees with the block's own version word. */
	if (py_layout_from_debug_offsets(data, size, 0, 0, &l) == 0)
		check_layout(&l, 13);
	if (size >= 12)
		memcpy(&own, data + 8, sizeof(own));
	if (own && py_layout_from_debug_offsets(data, size, own, 0, &l) == 0)
		check_layout(&l, 13);
	fuzz_elf(data, size);
	return 0;
}
