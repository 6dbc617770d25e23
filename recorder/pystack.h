/* SPDX-License-Identifier: MIT */
/*
 * pystack.h - one callchain from a sample's native user frames and its
 * Python frames (bpf/python.h), as a Python developer reads it: the Python
 * functions where the interpreter runs them, leaf first, so that
 * "hot_alpha <- run_round <- main <- <module> <- _PyEval_EvalFrameDefault
 * <- ... <- main" comes out of one native stack and one Python stack.
 *
 * The rule: the native frames of the eval loop (is_eval) are met leaf
 * first; each one gets the next group of Python frames, in their order
 * (innermost first), placed right before it (on its leaf side). A group
 * runs up to and including the next frame flagged PY_FRAME_ENTRY (the
 * outermost frame one eval call runs: one frame per call before 3.11,
 * several from 3.11 on), or to the end when none is flagged. Python
 * frames left when the native frames end (a native walk cut short, or the
 * eval loop not found in it) go at the outer end, and are counted: they
 * are right in order among themselves, not placed among the native ones.
 *
 * Pure: no I/O, no state; is_eval says which addresses lie in the eval
 * loop (a return address is the one after the call: it is tested as ip - 1
 * for every frame but the leaf).
 */
#ifndef RECORDER_PYSTACK_H
#define RECORDER_PYSTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pystack_input {
	const uint64_t *native;		/* user frames, leaf first */
	size_t nr_native;
	const uint64_t *py;		/* the Python frames as addresses, innermost first */
	const uint32_t *py_flags;	/* PY_FRAME_* of each */
	size_t nr_py;
	bool (*is_eval)(void *ctx, uint64_t pc);
	void *ctx;
};

struct py_frame;

/*
 * The frames BPF sent, in[0, n), without their shims (PY_FRAME_SHIM), into
 * out[0, n): the frame before a shim (its call's outermost) gets
 * PY_FRAME_ENTRY. How many are left.
 */
size_t pystack_drop_shims(const struct py_frame *in, size_t n, struct py_frame *out);

/*
 * The interleaved chain into out[0, cap): how many entries (frames past
 * cap are dropped from the outer end). *unplaced (may be NULL): how many
 * Python frames went to the outer end for want of an eval frame.
 */
size_t pystack_interleave(const struct pystack_input *in, uint64_t *out, size_t cap,
			  size_t *unplaced);

#endif /* RECORDER_PYSTACK_H */
