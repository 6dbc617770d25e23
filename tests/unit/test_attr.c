// SPDX-License-Identifier: MIT
/*
 * test_attr.c - the attr a recording's file describes (perfdata/attr.h),
 * from what is captured: the sample_type bits and flags perf record would
 * set, and a sample written with it read back by the reader.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perfdata/attr.h"
#include "perfdata/format.h"
#include "perfdata/reader.h"
#include "perfdata/writer.h"
#include "tests/unit/test_roundtrip.h"

#define ALWAYS (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD)

Test(attr, a_plain_sample_has_what_perf_record_puts_in_it_and_no_more)
{
	struct perfdata_capture c = {
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK, .freq = 999,
		.inherit = true,
	};
	struct perf_event_attr a;

	memset(&a, 0xff, sizeof(a));	/* every field is set, none left over */
	perfdata_sample_attr(&c, &a);
	cr_assert_eq(a.type, PERF_TYPE_SOFTWARE);
	cr_assert_eq(a.config, PERF_COUNT_SW_CPU_CLOCK);
	cr_assert_eq(a.size, PERFDATA_ATTR_SIZE);
	cr_assert_eq(a.sample_type, ALWAYS);
	cr_assert(a.freq);
	cr_assert_eq(a.sample_freq, 999);
	cr_assert(a.sample_id_all && a.mmap && a.mmap2 && a.comm && a.comm_exec && a.task);
	cr_assert_not(a.mmap_data);
	cr_assert(a.use_clockid);
	cr_assert_eq(a.clockid, CLOCK_MONOTONIC);
	cr_assert(a.inherit);
	cr_assert_not(a.disabled);
	cr_assert_not(a.exclude_callchain_user);
	cr_assert_eq(a.sample_regs_user, 0);
	cr_assert_eq(a.sample_stack_user, 0);
}

Test(attr, each_capture_adds_its_bits)
{
	struct perfdata_capture c = {
		.type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_CPU_CYCLES, .period = 100000,
		.cpu = true, .shared = true, .callchain = true,
	};
	struct perf_event_attr a;

	perfdata_sample_attr(&c, &a);
	cr_assert_eq(a.sample_type, ALWAYS | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER |
				    PERF_SAMPLE_CALLCHAIN);
	cr_assert_not(a.freq);
	cr_assert_eq(a.sample_period, 100000);
	cr_assert_not(a.inherit);
	cr_assert_not(a.exclude_callchain_user, "fp: the user stack is in the callchain");

	/* --call-graph dwarf: registers and a stack copy, the callchain kernel-only. */
	c.regs_user = 0xff0fff;
	c.stack_user = 8192;
	perfdata_sample_attr(&c, &a);
	cr_assert_eq(a.sample_type & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER),
		     PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
	cr_assert_eq(a.sample_regs_user, 0xff0fff);
	cr_assert_eq(a.sample_stack_user, 8192);
	cr_assert(a.exclude_callchain_user);
	cr_assert(a.mmap_data, "DWARF unwinders read data mappings too");
}

/* The writer encodes and the reader decodes a sample by this attr alone. */
Test(attr, a_sample_written_with_it_reads_back)
{
	struct perfdata_capture c = {
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK, .freq = 4000,
		.cpu = true, .callchain = true, .regs_user = 0x3, .stack_user = 64,
	};
	uint64_t chain[] = { PERF_CONTEXT_KERNEL, 0xffffffff81000000ull }, regs[] = { 1, 2 };
	uint8_t stack[64] = { 7 };
	struct perfdata_sample in = {
		.misc = PERF_RECORD_MISC_USER, .ip = 0x401000, .pid = 10, .tid = 11, .time = 5,
		.cpu = 3, .period = 250000, .nr_callchain = 2, .callchain = chain,
		.regs_abi = PERF_SAMPLE_REGS_ABI_64, .nr_regs = 2, .regs = regs,
		.stack_size = sizeof(stack), .stack = stack, .stack_dyn_size = 16,
	}, out;
	const struct perf_event_header *h;
	struct perfdata_writer *w;
	struct perfdata_reader *r;
	struct perf_event_attr a;
	uint64_t id = 1;
	int fd = trip_memfd("attr"), rc;

	perfdata_sample_attr(&c, &a);
	w = trip_writer(fd, NULL, "cpu-clock", &a, &id, 1);
	cr_assert_eq(perfdata_write_sample(w, &in), 0);
	trip_finish(w, fd);

	r = trip_reader(fd, "attr.data");
	while ((rc = perfdata_reader_next(r, &h)) == 1 && h->type != PERF_RECORD_SAMPLE)
		;
	cr_assert_eq(rc, 1, "%s", perfdata_reader_error(r));
	cr_assert_eq(perfdata_reader_parse_sample(r, h, &out, NULL), 0);
	cr_assert_eq(out.ip, in.ip);
	cr_assert_eq(out.tid, in.tid);
	cr_assert_eq(out.cpu, 3);
	cr_assert_eq(out.nr_callchain, 2);
	cr_assert_eq(out.callchain[1], chain[1]);
	cr_assert_eq(out.nr_regs, 2);
	cr_assert_eq(out.regs[1], 2);
	cr_assert_eq(out.stack_dyn_size, 16);
	perfdata_reader_free(r);
	close(fd);
}
