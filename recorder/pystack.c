// SPDX-License-Identifier: MIT
/* pystack.c - Python frames among native ones; the rule is in pystack.h. */
#include <linux/types.h>

#include "bpf/python.h"
#include "recorder/pystack.h"

static void put(uint64_t *out, size_t cap, size_t *n, uint64_t v)
{
	if (*n < cap)
		out[*n] = v;
	(*n)++;
}

size_t pystack_drop_shims(const struct py_frame *in, size_t n, struct py_frame *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (!(in[i].flags & PY_FRAME_SHIM)) {
			out[k++] = in[i];
			continue;
		}
		if (k)
			out[k - 1].flags |= PY_FRAME_ENTRY;
	}
	return k;
}

size_t pystack_interleave(const struct pystack_input *in, uint64_t *out, size_t cap,
			  size_t *unplaced)
{
	size_t n = 0, next = 0;

	for (size_t i = 0; i < in->nr_native; i++) {
		uint64_t ip = in->native[i];
		uint64_t pc = i ? ip - 1 : ip;

		if (next < in->nr_py && in->is_eval(in->ctx, pc)) {
			/* This call's frames: up to its entry frame, that one included. */
			while (next < in->nr_py) {
				bool entry = in->py_flags[next] & PY_FRAME_ENTRY;

				put(out, cap, &n, in->py[next++]);
				if (entry)
					break;
			}
		}
		put(out, cap, &n, ip);
	}
	if (unplaced)
		*unplaced = in->nr_py - next;
	while (next < in->nr_py)
		put(out, cap, &n, in->py[next++]);
	return n < cap ? n : cap;
}
