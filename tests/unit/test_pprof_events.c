// SPDX-License-Identifier: MIT
/* Unit tests for tools/pprof/events.c: event names, short names, --event matching, kinds. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "tools/pprof/events.h"

static struct perfdata_event ev(uint32_t type, uint64_t config, const char *name)
{
	return (struct perfdata_event){ .attr = { .type = type, .config = config },
					.name = (char *)name };
}

static void expect_name(struct perfdata_event e, const char *want)
{
	char *n = pp_event_name(&e);

	cr_assert_str_eq(n, want);
	free(n);
}

Test(events, names_from_event_desc_or_attr)
{
	expect_name(ev(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "cpu-clock:u"), "cpu-clock:u");
	expect_name(ev(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, NULL), "cpu-clock");
	expect_name(ev(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, ""), "task-clock");
	expect_name(ev(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, NULL), "cycles");
	expect_name(ev(PERF_TYPE_RAW, 0x1c2, NULL), "raw-4-0x1c2");
	expect_name(ev(PERF_TYPE_SOFTWARE, 999, NULL), "raw-1-0x3e7");
}

static void expect_short(const char *name, const char *want)
{
	char *s = pp_event_short_name(name);

	cr_assert_str_eq(s, want, "%s", name);
	free(s);
}

Test(events, short_names)
{
	expect_short("cpu-clock", "cpu-clock");
	expect_short("sched:sched_switch", "sched:sched_switch");
	expect_short("page-faults/period=1/", "page-faults");
	expect_short("cpu/cycles/", "cycles");
	expect_short("cpu/cycles,period=1000/u", "cycles");
	expect_short("cpu/period=1000,instructions/", "instructions");
	expect_short("cpu/event=0x3c,umask=0x0/", "cpu");
	expect_short("odd/", "odd/");
}

Test(events, matching)
{
	cr_assert(pp_event_matches("cpu-clock", "cpu-clock"));
	cr_assert(pp_event_matches("cycles:u", "cycles"), "modifiers may be left out");
	cr_assert(!pp_event_matches("cycles:u", "cycles:k"));
	cr_assert(pp_event_matches("cycles:u", "cycles:u"));
	cr_assert(!pp_event_matches("cycles", "cyc"), "no prefix matches");
	cr_assert(pp_event_matches("page-faults/period=1/", "page-faults"), "by short name");
	cr_assert(pp_event_matches("page-faults/period=1/", "page-faults/period=1/"));
	cr_assert(!pp_event_matches("sched:sched_switch", "sched"));
}

Test(events, kinds)
{
	struct perfdata_event cpu = ev(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, NULL);
	struct perfdata_event task = ev(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, NULL);
	struct perfdata_event dummy = ev(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, "dummy:HG");
	struct perfdata_event cycles = ev(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, NULL);

	cr_assert(pp_event_is_timer(&cpu));
	cr_assert(pp_event_is_timer(&task));
	cr_assert(!pp_event_is_timer(&cycles));
	cr_assert(pp_event_is_dummy(&dummy));
	cr_assert(!pp_event_is_dummy(&cpu));
	cr_assert(pp_event_is_offcpu("offcpu-time"));
	cr_assert(!pp_event_is_offcpu("cpu-clock"));
}
