// SPDX-License-Identifier: MIT
/* events.c - the generic events' names (see events.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <linux/perf_event.h>

#include "events.h"

/* Not in older kernel headers; the number is the kernel's ABI. */
#define SW_CGROUP_SWITCHES	11

/*
 * perf's names (tools/perf/util/parse-events.c's event_symbols_hw/_sw),
 * the one it shows first; an alias (shown: false) is only accepted.
 */
static const struct {
	const char *name;
	uint32_t type;
	uint64_t config;
	bool shown;
} generic_events[] = {
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, true },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, true },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, true },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, true },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, false },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, true },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, true },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
	  true },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, true },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, true },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, true },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, true },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, false },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, false },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, true },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, false },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, true },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, true },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, true },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, true },
	{ "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, true },
	{ "bpf-output", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, true },
	{ "cgroup-switches", PERF_TYPE_SOFTWARE, SW_CGROUP_SWITCHES, true },
};

#define NR_GENERIC_EVENTS (sizeof(generic_events) / sizeof(generic_events[0]))

const char *perfdata_event_generic_name(uint32_t type, uint64_t config)
{
	for (size_t i = 0; i < NR_GENERIC_EVENTS; i++)
		if (generic_events[i].shown && generic_events[i].type == type &&
		    generic_events[i].config == config)
			return generic_events[i].name;
	return NULL;
}

int perfdata_event_by_name(const char *name, uint32_t *type, uint64_t *config)
{
	for (size_t i = 0; i < NR_GENERIC_EVENTS; i++) {
		if (strcmp(generic_events[i].name, name))
			continue;
		*type = generic_events[i].type;
		*config = generic_events[i].config;
		return 0;
	}
	return -ENOENT;
}
