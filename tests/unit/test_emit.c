// SPDX-License-Identifier: MIT
/* test_emit.c - the user registers and stack block of a BPF sample (recorder/emit.c). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "recorder/emit.h"

#include "bpf/profile.h"

Test(emit, ustack_block_is_bounded_by_the_record)
{
	size_t len = sizeof(struct profile_ustack) + 1024;
	struct profile_ustack *in = calloc(1, len);
	struct emit_ustack u;

	cr_assert_not_null(in);
	in->abi = PROFILE_UREGS_ABI_64;
	in->size = 8192;
	in->dyn_size = 1000;
	for (int i = 0; i < PROFILE_NR_UREGS; i++)
		in->regs[i] = 100 + (uint64_t)i;
	cr_assert_eq(emit_ustack_parse(in, len, &u), sizeof(*in) + 1000);
	cr_assert(u.present);
	cr_assert_eq(u.abi, PROFILE_UREGS_ABI_64);
	cr_assert_eq(u.size, 8192);
	cr_assert_eq(u.dyn_size, 1000);
	cr_assert_eq(u.regs[PROFILE_UREG_IP], 100 + PROFILE_UREG_IP);
	cr_assert_eq(u.stack, (const void *)(in + 1));

	/* Whole chunks follow in the ring buffer: more than dyn_size is fine, less is not. */
	cr_assert_eq(emit_ustack_parse(in, sizeof(*in) + 999, &u), 0);
	cr_assert_eq(emit_ustack_parse(in, sizeof(*in) - 8, &u), 0);
	in->dyn_size = 8200;
	cr_assert_eq(emit_ustack_parse(in, len, &u), 0, "dyn_size above size");
	in->dyn_size = 8;
	in->size = 12;
	cr_assert_eq(emit_ustack_parse(in, len, &u), 0, "size not a multiple of 8");
	in->size = PROFILE_USTACK_MAX + 8;
	cr_assert_eq(emit_ustack_parse(in, len, &u), 0, "size above perf's maximum");
	in->size = 8192;
	in->abi = 1;	/* 32-bit: never from our sampler */
	cr_assert_eq(emit_ustack_parse(in, len, &u), 0);

	/* A kernel thread: abi NONE, nothing after the registers. */
	in->abi = PROFILE_UREGS_ABI_NONE;
	cr_assert_eq(emit_ustack_parse(in, sizeof(*in), &u), sizeof(*in));
	cr_assert(u.present);
	cr_assert_eq(u.abi, PROFILE_UREGS_ABI_NONE);
	cr_assert_eq(u.size, 0);
	free(in);
}
