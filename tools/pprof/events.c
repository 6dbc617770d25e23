// SPDX-License-Identifier: MIT
/*
 * events.c - what an event is called and what kind of profile it makes
 * (see events.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"

static const char *sw_names[] = {
	[PERF_COUNT_SW_CPU_CLOCK] = "cpu-clock",
	[PERF_COUNT_SW_TASK_CLOCK] = "task-clock",
	[PERF_COUNT_SW_PAGE_FAULTS] = "page-faults",
	[PERF_COUNT_SW_CONTEXT_SWITCHES] = "context-switches",
	[PERF_COUNT_SW_CPU_MIGRATIONS] = "cpu-migrations",
	[PERF_COUNT_SW_PAGE_FAULTS_MIN] = "minor-faults",
	[PERF_COUNT_SW_PAGE_FAULTS_MAJ] = "major-faults",
	[PERF_COUNT_SW_ALIGNMENT_FAULTS] = "alignment-faults",
	[PERF_COUNT_SW_EMULATION_FAULTS] = "emulation-faults",
	[PERF_COUNT_SW_DUMMY] = "dummy",
	[PERF_COUNT_SW_BPF_OUTPUT] = "bpf-output",
};

static const char *hw_names[] = {
	[PERF_COUNT_HW_CPU_CYCLES] = "cycles",
	[PERF_COUNT_HW_INSTRUCTIONS] = "instructions",
	[PERF_COUNT_HW_CACHE_REFERENCES] = "cache-references",
	[PERF_COUNT_HW_CACHE_MISSES] = "cache-misses",
	[PERF_COUNT_HW_BRANCH_INSTRUCTIONS] = "branches",
	[PERF_COUNT_HW_BRANCH_MISSES] = "branch-misses",
	[PERF_COUNT_HW_BUS_CYCLES] = "bus-cycles",
	[PERF_COUNT_HW_STALLED_CYCLES_FRONTEND] = "stalled-cycles-frontend",
	[PERF_COUNT_HW_STALLED_CYCLES_BACKEND] = "stalled-cycles-backend",
	[PERF_COUNT_HW_REF_CPU_CYCLES] = "ref-cycles",
};

/* The event's name as perf shows it: EVENT_DESC's, else made from the attr. */
char *pp_event_name(const struct perfdata_event *ev)
{
	const struct perf_event_attr *a = &ev->attr;
	char buf[64];
	const char *n = NULL;

	if (ev->name && ev->name[0])
		return strdup(ev->name);
	if (a->type == PERF_TYPE_SOFTWARE && a->config < sizeof(sw_names) / sizeof(sw_names[0]))
		n = sw_names[a->config];
	else if (a->type == PERF_TYPE_HARDWARE && a->config < sizeof(hw_names) / sizeof(hw_names[0]))
		n = hw_names[a->config];
	if (n)
		return strdup(n);
	snprintf(buf, sizeof(buf), "raw-%u-0x%llx", a->type, (unsigned long long)a->config);
	return strdup(buf);
}

bool pp_event_is_dummy(const struct perfdata_event *ev)
{
	return ev->attr.type == PERF_TYPE_SOFTWARE && ev->attr.config == PERF_COUNT_SW_DUMMY;
}

bool pp_event_is_timer(const struct perfdata_event *ev)
{
	return ev->attr.type == PERF_TYPE_SOFTWARE &&
	       (ev->attr.config == PERF_COUNT_SW_CPU_CLOCK ||
		ev->attr.config == PERF_COUNT_SW_TASK_CLOCK);
}

bool pp_event_is_offcpu(const char *name)
{
	return !strcmp(name, "offcpu-time");
}

/*
 * perf names events with config terms as written on its command line:
 * "page-faults/period=1/", "cpu/cycles,period=1000/u". The short name is
 * the event proper: the first term without '=' ("cycles"), else the part
 * before the first '/' ("page-faults"). Other names are kept.
 */
char *pp_event_short_name(const char *name)
{
	const char *open = strchr(name, '/'), *close = open ? strrchr(name, '/') : NULL;

	if (!open || close == open)
		return strdup(name);
	for (const char *t = open + 1; t < close;) {
		size_t n = strcspn(t, ",/");

		if (n && !memchr(t, '=', n))
			return strndup(t, n);
		t += n + 1;
	}
	return strndup(name, open - name);
}

/* Modifiers (":u", ":ppp", ":HG") may be left out of want. Only perf's
 * modifier letters count: "sched:sched_switch" is not "sched" modified. */
static bool name_matches(const char *name, const char *want)
{
	size_t n = strlen(want);

	if (!strcmp(name, want))
		return true;
	return !strncmp(name, want, n) && name[n] == ':' && name[n + 1] &&
	       strspn(name + n + 1, "ukhpGHIPSDWebr") == strlen(name + n + 1);
}

bool pp_event_matches(const char *name, const char *want)
{
	char *short_name;
	bool ok;

	if (name_matches(name, want))
		return true;
	short_name = pp_event_short_name(name);
	ok = short_name && name_matches(short_name, want);
	free(short_name);
	return ok;
}
