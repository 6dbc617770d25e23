// SPDX-License-Identifier: MIT
/* test_callchain.c - BPF stacks to perf callchains (recorder/callchain.c). */
#include <criterion/criterion.h>
#include <linux/perf_event.h>

#include "recorder/callchain.h"

#define K(x) (0xffffffff81000000ULL + (x))
#define U(x) (0x0000555555554000ULL + (x))
#define MARK_K ((uint64_t)PERF_CONTEXT_KERNEL)
#define MARK_U ((uint64_t)PERF_CONTEXT_USER)
#define N(a) (sizeof(a) / sizeof((a)[0]))

static void expect_chain(const struct callchain *cc, const uint64_t *want, size_t nr)
{
	cr_assert_eq(cc->nr, nr, "chain has %zu entries, expected %zu", cc->nr, nr);
	for (size_t i = 0; i < nr; i++)
		cr_assert_eq(cc->ips[i], want[i], "entry %zu is %#llx, expected %#llx", i,
			     (unsigned long long)cc->ips[i], (unsigned long long)want[i]);
}

Test(callchain, kernel_sample_has_both_parts_with_markers)
{
	uint64_t k[] = { K(0x10), K(0x20), K(0x30) }, u[] = { U(1), U(2) };
	struct callchain_input in = { .kernel_mode = true, .ip = K(0x10), .kernel = k,
				      .nr_kernel = 3, .user = u, .nr_user = 2 };
	struct callchain cc;
	uint64_t want[] = { MARK_K, K(0x10), K(0x20), K(0x30), MARK_U, U(1), U(2) };

	callchain_build(&in, &cc);
	expect_chain(&cc, want, N(want));
	cr_assert_eq(cc.ip, K(0x10));
	cr_assert_eq(cc.misc, PERF_RECORD_MISC_KERNEL);
	cr_assert_eq(cc.nr_user, 2);
	cr_assert_eq(cc.user, &cc.ips[5]);
}

Test(callchain, user_sample_has_no_kernel_marker)
{
	uint64_t u[] = { U(1), U(2), U(3) };
	struct callchain_input in = { .ip = U(1), .user = u, .nr_user = 3 };
	struct callchain cc;
	uint64_t want[] = { MARK_U, U(1), U(2), U(3) };

	callchain_build(&in, &cc);
	expect_chain(&cc, want, N(want));
	cr_assert_eq(cc.ip, U(1));
	cr_assert_eq(cc.misc, PERF_RECORD_MISC_USER);
}

Test(callchain, kernel_thread_has_no_user_part)
{
	uint64_t k[] = { K(1), K(2) };
	struct callchain_input in = { .kernel_mode = true, .ip = K(1), .kernel = k, .nr_kernel = 2 };
	struct callchain cc;
	uint64_t want[] = { MARK_K, K(1), K(2) };

	callchain_build(&in, &cc);
	expect_chain(&cc, want, N(want));
	cr_assert_eq(cc.nr_user, 0);
	cr_assert_null(cc.user);
}

Test(callchain, markers_and_kernel_addresses_never_reach_the_user_part)
{
	/* What bpf_get_stack returns when the event has PERF_SAMPLE_CALLCHAIN. */
	uint64_t k[] = { K(5) };
	uint64_t u[] = { MARK_U, K(7), U(1), K(9), 0, U(2), MARK_K };
	struct callchain_input in = { .kernel_mode = true, .ip = K(5), .kernel = k,
				      .nr_kernel = 1, .user = u, .nr_user = N(u) };
	struct callchain cc;
	uint64_t want[] = { MARK_K, K(5), MARK_U, U(1), U(2) };

	callchain_build(&in, &cc);
	expect_chain(&cc, want, N(want));
}

Test(callchain, leaked_kernel_frames_fill_an_empty_kernel_part)
{
	uint64_t u[] = { MARK_K, K(1), K(2), MARK_U, U(1), U(2) };
	struct callchain_input in = { .kernel_mode = true, .ip = K(1), .user = u, .nr_user = N(u) };
	struct callchain cc;
	uint64_t want[] = { MARK_K, K(1), K(2), MARK_U, U(1), U(2) };

	callchain_build(&in, &cc);
	expect_chain(&cc, want, N(want));
	cr_assert_eq(cc.ip, K(1));
	cr_assert_eq(cc.misc, PERF_RECORD_MISC_KERNEL);
}

Test(callchain, user_mode_sample_ignores_kernel_addresses)
{
	uint64_t k[] = { K(1) }, u[] = { K(3), U(4), U(5) };
	struct callchain_input in = { .ip = U(4), .kernel = k, .nr_kernel = 1,
				      .user = u, .nr_user = 3 };
	struct callchain cc;
	uint64_t want[] = { MARK_U, U(4), U(5) };

	callchain_build(&in, &cc);
	expect_chain(&cc, want, N(want));
	cr_assert_eq(cc.ip, U(4));
	cr_assert_eq(cc.misc, PERF_RECORD_MISC_USER);
}

Test(callchain, interrupted_ip_stands_in_for_an_empty_stack)
{
	struct callchain_input kin = { .kernel_mode = true, .ip = K(0x42) };
	struct callchain_input uin = { .ip = U(0x42) };
	struct callchain cc;
	uint64_t kwant[] = { MARK_K, K(0x42) }, uwant[] = { MARK_U, U(0x42) };

	callchain_build(&kin, &cc);
	expect_chain(&cc, kwant, N(kwant));
	cr_assert_eq(cc.ip, K(0x42));
	callchain_build(&uin, &cc);
	expect_chain(&cc, uwant, N(uwant));
	cr_assert_eq(cc.ip, U(0x42));
	cr_assert_eq(cc.nr_user, 1);
}

Test(callchain, kernel_stack_of_only_markers_takes_the_ip)
{
	uint64_t k[] = { MARK_K }, u[] = { U(1) };
	struct callchain_input in = { .kernel_mode = true, .ip = K(0x99), .kernel = k,
				      .nr_kernel = 1, .user = u, .nr_user = 1 };
	struct callchain cc;
	uint64_t want[] = { MARK_K, K(0x99), MARK_U, U(1) };

	callchain_build(&in, &cc);
	expect_chain(&cc, want, N(want));
}

Test(callchain, nothing_at_all_gives_an_empty_chain_and_the_ip)
{
	struct callchain_input in = { .ip = 0 };
	struct callchain cc;

	callchain_build(&in, &cc);
	cr_assert_eq(cc.nr, 0);
	cr_assert_eq(cc.ip, 0);
	cr_assert_eq(cc.misc, PERF_RECORD_MISC_USER);
}

Test(callchain, full_stacks_fit_and_longer_ones_are_cut)
{
	static uint64_t k[CALLCHAIN_MAX_STACK + 10], u[CALLCHAIN_MAX_STACK + 10];
	struct callchain_input in = { .kernel_mode = true, .ip = K(0), .kernel = k,
				      .nr_kernel = N(k), .user = u, .nr_user = N(u) };
	struct callchain cc;

	for (size_t i = 0; i < N(k); i++) {
		k[i] = K(i * 16);
		u[i] = U(i * 16 + 1);
	}
	callchain_build(&in, &cc);
	cr_assert_eq(cc.nr, 2 + 2 * CALLCHAIN_MAX_STACK);
	cr_assert_eq(cc.ips[CALLCHAIN_MAX_STACK], K((CALLCHAIN_MAX_STACK - 1) * 16));
	cr_assert_eq(cc.ips[CALLCHAIN_MAX_STACK + 1], MARK_U);
	cr_assert_eq(cc.ips[cc.nr - 1], U((CALLCHAIN_MAX_STACK - 1) * 16 + 1));
	cr_assert_eq(cc.nr_user, CALLCHAIN_MAX_STACK);
}

Test(callchain, dwarf_mode_has_no_user_part)
{
	uint64_t k[] = { K(0x10), K(0x20) }, u[] = { U(1), U(2) };
	struct callchain_input in = { .kernel_mode = true, .ip = K(0x10), .kernel = k,
				      .nr_kernel = 2, .user = u, .nr_user = 2,
				      .no_user_part = true };
	struct callchain cc;
	uint64_t want[] = { MARK_K, K(0x10), K(0x20) };

	callchain_build(&in, &cc);
	expect_chain(&cc, want, N(want));
	cr_assert_eq(cc.nr_user, 0);

	/* A user-mode sample: an empty chain (as perf's exclude_callchain_user), ip kept. */
	in = (struct callchain_input){ .ip = U(7), .no_user_part = true };
	callchain_build(&in, &cc);
	cr_assert_eq(cc.nr, 0);
	cr_assert_eq(cc.ip, U(7));
	cr_assert_eq(cc.misc, PERF_RECORD_MISC_USER);
}
