// SPDX-License-Identifier: MIT
/* Python frames among native ones (recorder/pystack.h). */
#include <criterion/criterion.h>
#include <linux/types.h>

#include "bpf/python.h"
#include "recorder/pystack.h"

/* Native addresses 0xe00..0xeff are the eval loop's. */
static bool is_eval(void *ctx, uint64_t pc)
{
	(void)ctx;
	return pc >= 0xe00 && pc < 0xf00;
}

static size_t run(const uint64_t *native, size_t nn, const uint64_t *py, const uint32_t *flags,
		  size_t np, uint64_t *out, size_t cap, size_t *unplaced)
{
	struct pystack_input in = {
		.native = native, .nr_native = nn, .py = py, .py_flags = flags, .nr_py = np,
		.is_eval = is_eval,
	};

	return pystack_interleave(&in, out, cap, unplaced);
}

/* 3.8-3.10: one Python frame per eval call, each before its call, leaf first. */
Test(pystack, one_frame_per_eval_call)
{
	const uint64_t native[] = { 0x100, 0xe10, 0x200, 0xe20, 0x300 };
	const uint64_t py[] = { 0xa1, 0xa2 };
	const uint32_t flags[] = { PY_FRAME_ENTRY, PY_FRAME_ENTRY };
	const uint64_t want[] = { 0x100, 0xa1, 0xe10, 0x200, 0xa2, 0xe20, 0x300 };
	uint64_t out[16];
	size_t unplaced = 9, n = run(native, 5, py, flags, 2, out, 16, &unplaced);

	cr_assert_eq(n, 7);
	cr_assert_arr_eq(out, want, sizeof(want));
	cr_assert_eq(unplaced, 0);
}

/* 3.11+: one eval call runs frames up to its entry one; the next call gets the rest. */
Test(pystack, several_frames_per_eval_call)
{
	const uint64_t native[] = { 0x100, 0xe10, 0x200, 0xe20, 0x300 };
	const uint64_t py[] = { 0xa1, 0xa2, 0xa3, 0xa4 };
	const uint32_t flags[] = { 0, PY_FRAME_ENTRY, 0, PY_FRAME_ENTRY };
	const uint64_t want[] = { 0x100, 0xa1, 0xa2, 0xe10, 0x200, 0xa3, 0xa4, 0xe20, 0x300 };
	uint64_t out[16];
	size_t n = run(native, 5, py, flags, 4, out, 16, NULL);

	cr_assert_eq(n, 9);
	cr_assert_arr_eq(out, want, sizeof(want));
}

/* A return address right after a call at the end of the eval loop is still its frame (ip - 1). */
Test(pystack, return_address_past_the_end)
{
	const uint64_t native[] = { 0xf00, 0xf00 };
	const uint64_t py[] = { 0xa1 };
	const uint32_t flags[] = { PY_FRAME_ENTRY };
	const uint64_t want[] = { 0xf00, 0xa1, 0xf00 };
	uint64_t out[4];

	cr_assert_eq(run(native, 2, py, flags, 1, out, 4, NULL), 3);
	cr_assert_arr_eq(out, want, sizeof(want));
}

/* More Python frames than eval calls: the rest at the outer end, counted. */
Test(pystack, unplaced_at_the_outer_end)
{
	const uint64_t native[] = { 0x100, 0x200 };
	const uint64_t py[] = { 0xa1, 0xa2 };
	const uint32_t flags[] = { PY_FRAME_ENTRY, PY_FRAME_ENTRY };
	const uint64_t want[] = { 0x100, 0x200, 0xa1, 0xa2 };
	uint64_t out[8];
	size_t unplaced = 0;

	cr_assert_eq(run(native, 2, py, flags, 2, out, 8, &unplaced), 4);
	cr_assert_arr_eq(out, want, sizeof(want));
	cr_assert_eq(unplaced, 2);
}

/* A chain longer than out loses its outer end. */
Test(pystack, cut_at_cap)
{
	const uint64_t native[] = { 0x100, 0xe10, 0x300 };
	const uint64_t py[] = { 0xa1, 0xa2 };
	const uint32_t flags[] = { 0, 0 };
	const uint64_t want[] = { 0x100, 0xa1, 0xa2 };
	uint64_t out[3];

	cr_assert_eq(run(native, 3, py, flags, 2, out, 3, NULL), 3);
	cr_assert_arr_eq(out, want, sizeof(want));
}

/* 3.12+: a shim marks the frame before it as its call's entry, and goes. */
Test(pystack, shims_dropped)
{
	const struct py_frame in[] = {
		{ .code = 1 }, { .code = 2 }, { .flags = PY_FRAME_SHIM }, { .code = 3 },
		{ .flags = PY_FRAME_SHIM },
	};
	struct py_frame out[5];

	cr_assert_eq(pystack_drop_shims(in, 5, out), 3);
	cr_assert_eq(out[0].code, 1);
	cr_assert_eq(out[0].flags, 0);
	cr_assert_eq(out[1].code, 2);
	cr_assert_eq(out[1].flags, PY_FRAME_ENTRY);
	cr_assert_eq(out[2].code, 3);
	cr_assert_eq(out[2].flags, PY_FRAME_ENTRY);
}

/* A shim first (a call that runs no frame yet) marks nothing. */
Test(pystack, leading_shim)
{
	const struct py_frame in[] = { { .flags = PY_FRAME_SHIM }, { .code = 7 } };
	struct py_frame out[2];

	cr_assert_eq(pystack_drop_shims(in, 2, out), 1);
	cr_assert_eq(out[0].code, 7);
	cr_assert_eq(out[0].flags, 0);
}
