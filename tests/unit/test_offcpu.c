// SPDX-License-Identifier: MIT
/* test_offcpu.c - the user-space side of --off-cpu (recorder/offcpu.c) that needs no BPF. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "perfdata/writer.h"
#include "recorder/offcpu.h"
#include "bpf/offcpu.h"

#define TRAILER (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
		 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

static void expect_state(uint32_t state, const char *text)
{
	char buf[OFFCPU_STATE_TEXT_MAX];
	size_t n = offcpu_state_text(state, buf, sizeof(buf));

	cr_assert_gt(n, 0);
	cr_assert_eq(strncmp(buf, text, strlen(text)), 0, "state %#x reads '%s', want '%s'",
		     state, buf, text);
	/* perf shows RAW as a string only when the NUL is its last byte after padding. */
	cr_assert_eq((n + 4) % 8, 0, "state %#x: %zu bytes do not fill the padded RAW", state, n);
	cr_assert_eq(buf[n - 1], '\0');
	for (size_t i = 0; i + 1 < n; i++)
		cr_assert(isprint((unsigned char)buf[i]), "byte %zu of '%s' is not printable", i, buf);
}

Test(offcpu, state_text_names_the_states_like_ps)
{
	expect_state(OFFCPU_STATE_RUNNING, "R (preempted)");
	expect_state(OFFCPU_STATE_INTERRUPTIBLE, "S (sleeping)");
	expect_state(OFFCPU_STATE_UNINTERRUPTIBLE, "D (disk sleep)");
	expect_state(OFFCPU_STATE_IDLE, "I (idle)");
	expect_state(OFFCPU_STATE_STOPPED, "T (stopped)");
	expect_state(OFFCPU_STATE_TRACED, "t (tracing stop)");
	expect_state(0x100, "? (state 0x100)");
}

Test(offcpu, state_text_refuses_a_short_buffer)
{
	char buf[8];

	cr_assert_eq(offcpu_state_text(OFFCPU_STATE_INTERRUPTIBLE, buf, sizeof(buf)), 0);
}

Test(offcpu, trampoline_frames_end_at_schedule)
{
	uint64_t start = 0xffffffff821fa6c0ull, end = 0xffffffff821fb610ull;
	uint64_t two[] = { 0xffffffffc00261fcull, 0xffffffff814ba9d6ull, start + 0x618,
			   0xffffffff821fb643ull };
	uint64_t none[] = { 0xffffffff814ba9d6ull, 0xffffffff821fb643ull };
	uint64_t deep[10];

	cr_assert_eq(offcpu_trampoline_frames(two, 4, start, end), 2);
	cr_assert_eq(offcpu_trampoline_frames(two + 2, 2, start, end), 0);
	cr_assert_eq(offcpu_trampoline_frames(none, 2, start, end), 0, "no __schedule: keep all");
	cr_assert_eq(offcpu_trampoline_frames(two, 4, 0, 0), 0, "no range: keep all");
	for (size_t i = 0; i < 10; i++)
		deep[i] = 0xffffffff81000000ull + i;
	deep[9] = start + 1;
	cr_assert_eq(offcpu_trampoline_frames(deep, 10, start, end), 0,
		     "__schedule far down the stack is not the trampoline's end");
}

/*
 * A switch-in the kernel did not report: the interval still ends inside
 * what is known of it, never before the task's own switch-out or the last
 * switch seen on its CPU, never after its next switch-out.
 */
Test(offcpu, unseen_switch_in_stays_within_what_is_known)
{
	uint64_t ms = 1000000;

	/* The scheduler says it ran 2 ms: back 2 ms before now. */
	cr_assert_eq(offcpu_unseen_switch_in(100 * ms, 140 * ms, 2 * ms, 150 * ms), 148 * ms);
	/* Unknown run time: the last switch seen on the CPU. */
	cr_assert_eq(offcpu_unseen_switch_in(100 * ms, 140 * ms, 0, 150 * ms), 140 * ms);
	/* Nothing seen on the CPU since the switch-out: from the switch-out on. */
	cr_assert_eq(offcpu_unseen_switch_in(100 * ms, 90 * ms, 0, 150 * ms), 100 * ms);
	/* A run time longer than the CPU was free for is a stale clock: the bound holds. */
	cr_assert_eq(offcpu_unseen_switch_in(100 * ms, 140 * ms, 20 * ms, 150 * ms), 140 * ms);
	cr_assert_eq(offcpu_unseen_switch_in(100 * ms, 90 * ms, 60 * ms, 150 * ms), 100 * ms);
	/* Never after now, whatever the other CPUs' clocks said. */
	cr_assert_eq(offcpu_unseen_switch_in(100 * ms, 151 * ms, 0, 150 * ms), 150 * ms);
	cr_assert_eq(offcpu_unseen_switch_in(150 * ms, 0, 1 * ms, 150 * ms), 150 * ms);
}

Test(offcpu, attr_is_perfs_offcpu_event_and_the_writer_takes_both)
{
	struct perf_event_attr cpu = {
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD,
		.sample_id_all = 1, .use_clockid = 1, .clockid = 1, .freq = 1,
		.sample_freq = 4000, .mmap = 1, .comm = 1,
	}, off;
	struct perfdata_writer_opts wo = { 0 };
	struct perfdata_writer *w;
	uint64_t cpu_id = 7, off_id = (1ull << 48) + 7;
	FILE *f = tmpfile();

	offcpu_build_attr(&cpu, &off);
	cr_assert_eq(off.type, PERF_TYPE_SOFTWARE);
	cr_assert_eq(off.config, PERF_COUNT_SW_BPF_OUTPUT);
	cr_assert_eq(off.sample_type & TRAILER, cpu.sample_type & TRAILER);
	cr_assert(off.sample_type & PERF_SAMPLE_PERIOD);
	cr_assert(off.sample_type & PERF_SAMPLE_CALLCHAIN, "off-CPU chains even without -g");
	cr_assert(off.sample_type & PERF_SAMPLE_RAW);
	cr_assert_eq(off.sample_id_all, 1);
	cr_assert_eq(off.use_clockid, 1);
	cr_assert_eq(off.clockid, 1);
	cr_assert_eq(off.freq, 0);
	cr_assert_eq(off.sample_period, 1);
	cr_assert_eq(off.mmap | off.comm | off.task, 0, "only the CPU event asks for side records");

	cr_assert_not_null(f);
	cr_assert_eq(perfdata_writer_new(fileno(f), &wo, &w), 0);
	cr_assert_eq(perfdata_writer_add_event(w, "cpu-clock", &cpu, &cpu_id, 1), 0);
	cr_assert_eq(perfdata_writer_add_event(w, OFFCPU_EVENT_NAME, &off, &off_id, 1), 0,
		     "the writer rejects the pair");
	perfdata_writer_free(w);
	fclose(f);
}

Test(offcpu, records_are_checked_before_use)
{
	struct offcpu_sample *r = calloc(1, sizeof(*r));

	cr_assert_not_null(r);
	r->hdr.kind = OFFCPU_KIND_SAMPLE;
	r->nr_kernel = 3;
	r->nr_user = 2;
	cr_assert(offcpu_record_ok(r, OFFCPU_SAMPLE_SIZE(5)));
	cr_assert_not(offcpu_record_ok(r, OFFCPU_SAMPLE_SIZE(4)), "frames past the record");
	cr_assert_not(offcpu_record_ok(r, OFFCPU_SAMPLE_SIZE(0) - 8), "short header");
	r->hdr.kind = OFFCPU_KIND_DESCRIBE;
	cr_assert(offcpu_record_ok(r, OFFCPU_SAMPLE_SIZE(5)));
	r->hdr.kind = PROFILE_KIND_SAMPLE;
	cr_assert_not(offcpu_record_ok(r, sizeof(*r)), "a CPU sample is not ours");
	r->hdr.kind = OFFCPU_KIND_SAMPLE;
	r->nr_user = PROFILE_MAX_STACK + 1;
	cr_assert_not(offcpu_record_ok(r, sizeof(*r)), "more frames than BPF can give");
	free(r);
}

Test(offcpu, dwarf_mode_attr_follows_the_cpu_event_with_a_capped_stack)
{
	struct perf_event_attr cpu = {
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
			       PERF_SAMPLE_STACK_USER,
		.sample_regs_user = 0xff0fff, .sample_stack_user = 8192,
		.exclude_callchain_user = 1, .sample_id_all = 1,
	}, off;

	offcpu_build_attr(&cpu, &off);
	cr_assert(off.sample_type & PERF_SAMPLE_REGS_USER);
	cr_assert(off.sample_type & PERF_SAMPLE_STACK_USER);
	cr_assert_eq(off.sample_regs_user, 0xff0fff);
	cr_assert_eq(off.sample_stack_user, 8192);
	cr_assert_eq(off.exclude_callchain_user, 1);

	cpu.sample_stack_user = 65528;
	offcpu_build_attr(&cpu, &off);
	cr_assert_eq(off.sample_stack_user, OFFCPU_USTACK_MAX, "what task storage keeps");

	cpu.sample_type &= ~(uint64_t)(PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
	offcpu_build_attr(&cpu, &off);
	cr_assert_eq(off.sample_type & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER), 0);
	cr_assert_eq(off.exclude_callchain_user, 0);
}

Test(offcpu, records_with_a_user_stack_are_checked_too)
{
	size_t head = OFFCPU_SAMPLE_SIZE(2);
	char *buf = calloc(1, sizeof(struct offcpu_sample) + sizeof(struct profile_ustack) + 64);
	struct offcpu_sample *r = (struct offcpu_sample *)buf;
	struct profile_ustack *u = (struct profile_ustack *)(buf + head);

	cr_assert_not_null(buf);
	r->hdr.kind = OFFCPU_KIND_SAMPLE;
	r->nr_kernel = 2;
	r->flags = PROFILE_SAMPLE_USTACK;
	u->abi = PROFILE_UREGS_ABI_64;
	u->size = 8192;
	u->dyn_size = 64;
	cr_assert(offcpu_record_ok(r, head + sizeof(*u) + 64));
	cr_assert_not(offcpu_record_ok(r, head + sizeof(*u) + 56), "stack past the record");
	cr_assert_not(offcpu_record_ok(r, head + 8), "registers past the record");
	u->dyn_size = 8200;
	cr_assert_not(offcpu_record_ok(r, head + sizeof(*u) + 64), "dyn_size above size");
	u->abi = PROFILE_UREGS_ABI_NONE;
	cr_assert(offcpu_record_ok(r, head + sizeof(*u)), "no user regs: nothing follows");
	free(buf);
}
