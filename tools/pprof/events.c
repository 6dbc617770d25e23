// SPDX-License-Identifier: MIT
/*
 * events.c - what an event is called and what kind of profile it makes
 * (see events.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata/events.h"
#include "events.h"

/* The event's name as perf shows it: EVENT_DESC's, else made from the attr. */
char *pp_event_name(const struct perfdata_event *ev)
{
	const struct perf_event_attr *a = &ev->attr;
	char buf[64];
	const char *n;

	if (ev->name && ev->name[0])
		return strdup(ev->name);
	n = perfdata_event_generic_name(a->type, a->config);
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
	return !strcmp(name, PERFDATA_OFFCPU_EVENT_NAME);
}

enum pp_heap_kind pp_event_heap_kind(const struct perfdata_event *ev, const char *name)
{
	if (ev->attr.type != PERF_TYPE_SOFTWARE || ev->attr.config != PERF_COUNT_SW_BPF_OUTPUT)
		return PP_HEAP_NONE;
	if (!strcmp(name, PERFDATA_ALLOC_EVENT_NAME))
		return PP_HEAP_ALLOC;
	if (!strcmp(name, PERFDATA_INUSE_EVENT_NAME))
		return PP_HEAP_INUSE;
	return PP_HEAP_NONE;
}

/* Names are short identifiers; a size has at most 20 digits. */
#define HEAP_FUNC_MAX 64
#define HEAP_SIZE_DIGITS_MAX 20

uint64_t pp_heap_raw_size(const void *raw, size_t size)
{
	const char *s = raw;
	size_t i = 0, func = 0, digits = 0;
	uint64_t v = 0;

	if (!s)
		return 0;
	while (i < size && s[i] > ' ' && s[i] <= '~' && func <= HEAP_FUNC_MAX) {
		i++;
		func++;
	}
	if (!func || func > HEAP_FUNC_MAX || i >= size || s[i] != ' ')
		return 0;
	i++;
	for (; i < size && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
		unsigned int d = (unsigned int)(s[i] - '0');

		if (digits == HEAP_SIZE_DIGITS_MAX || v > (UINT64_MAX - d) / 10)
			return 0;
		v = v * 10 + d;
	}
	if (!digits)
		return 0;
	/* Only padding may follow, up to the NUL or the end. */
	for (; i < size && s[i]; i++)
		if (s[i] != ' ')
			return 0;
	return v;
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
