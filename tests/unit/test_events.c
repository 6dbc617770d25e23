// SPDX-License-Identifier: MIT
/*
 * test_events.c - the generic events' names (perfdata/events.h): names
 * and attrs both ways, aliases, and what is not a generic event.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/perf_event.h>

#include "perfdata/events.h"

static void expect_both_ways(const char *name, uint32_t type, uint64_t config)
{
	uint32_t t = ~0u;
	uint64_t c = ~0ull;

	cr_assert_eq(perfdata_event_by_name(name, &t, &c), 0, "%s", name);
	cr_assert_eq(t, type, "%s", name);
	cr_assert_eq(c, config, "%s", name);
	cr_assert_str_eq(perfdata_event_generic_name(type, config), name);
}

Test(events, shown_names_round_trip)
{
	expect_both_ways("cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	expect_both_ways("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	expect_both_ways("dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	expect_both_ways("bpf-output", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT);
	expect_both_ways("cgroup-switches", PERF_TYPE_SOFTWARE, 11);
	expect_both_ways("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	expect_both_ways("branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
	expect_both_ways("ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES);
}

Test(events, aliases_are_accepted_but_not_shown)
{
	static const struct {
		const char *alias, *shown;
	} pairs[] = {
		{ "cpu-cycles", "cycles" },
		{ "branch-instructions", "branches" },
		{ "cs", "context-switches" },
		{ "migrations", "cpu-migrations" },
		{ "faults", "page-faults" },
	};

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		uint32_t t;
		uint64_t c;

		cr_assert_eq(perfdata_event_by_name(pairs[i].alias, &t, &c), 0);
		cr_assert_str_eq(perfdata_event_generic_name(t, c), pairs[i].shown);
	}
}

Test(events, not_generic)
{
	uint32_t t;
	uint64_t c;

	cr_assert_eq(perfdata_event_by_name("sched:sched_switch", &t, &c), -ENOENT);
	cr_assert_eq(perfdata_event_by_name("", &t, &c), -ENOENT);
	cr_assert_eq(perfdata_event_by_name("CYCLES", &t, &c), -ENOENT, "perf's names are lower case");
	cr_assert_null(perfdata_event_generic_name(PERF_TYPE_HARDWARE, 999));
	cr_assert_null(perfdata_event_generic_name(PERF_TYPE_SOFTWARE, 999));
	cr_assert_null(perfdata_event_generic_name(PERF_TYPE_RAW, PERF_COUNT_HW_CPU_CYCLES));
	cr_assert_null(perfdata_event_generic_name(PERF_TYPE_TRACEPOINT, 0));
	cr_assert_str_eq(PERFDATA_OFFCPU_EVENT_NAME, "offcpu-time");
}
