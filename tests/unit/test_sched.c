// SPDX-License-Identifier: MIT
/* test_sched.c - the user-space side of --sched (recorder/sched.c) that needs no BPF. */
#include <criterion/criterion.h>
#include <string.h>
#include <linux/perf_event.h>

#include "recorder/offcpu.h"
#include "recorder/sched.h"
#include "bpf/sched.h"

Test(sched, reasons_are_padded_strings_perf_prints)
{
	char buf[OFFCPU_STATE_TEXT_MAX];
	size_t n = sched_reason_text(SCHED_WAIT_PREEMPTED, buf, sizeof(buf));

	cr_assert_eq(strncmp(buf, "preempted", 9), 0);
	cr_assert_eq((n + 4) % 8, 0);
	cr_assert_eq(buf[n - 1], '\0');
	n = sched_reason_text(SCHED_WAIT_WOKEN, buf, sizeof(buf));
	cr_assert_eq(strncmp(buf, "woken", 5), 0);
	cr_assert_eq((n + 4) % 8, 0);
}

Test(sched, the_event_is_bpf_output_with_the_cpu_events_trailer_and_no_stack_copy)
{
	struct perf_event_attr cpu = {
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_REGS_USER |
			       PERF_SAMPLE_STACK_USER | PERF_SAMPLE_CPU,
		.sample_regs_user = 0xff0fff, .sample_stack_user = 8192,
		.sample_id_all = 1, .use_clockid = 1, .clockid = 1,
	}, a;

	sched_build_attr(&cpu, &a);
	cr_assert_eq(a.type, PERF_TYPE_SOFTWARE);
	cr_assert_eq(a.config, PERF_COUNT_SW_BPF_OUTPUT);
	cr_assert_eq(a.sample_period, 1);
	cr_assert(a.sample_type & PERF_SAMPLE_RAW);
	cr_assert(a.sample_type & PERF_SAMPLE_CALLCHAIN);
	cr_assert(a.sample_type & PERF_SAMPLE_PERIOD);
	cr_assert(a.sample_type & PERF_SAMPLE_CPU, "the CPU event's trailer bits");
	cr_assert_not(a.sample_type & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER));
	cr_assert_eq(a.use_clockid, 1);
}
