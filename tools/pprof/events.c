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

enum pp_output_kind pp_event_output_kind(const struct perfdata_event *ev, const char *name)
{
	if (ev->attr.type != PERF_TYPE_SOFTWARE || ev->attr.config != PERF_COUNT_SW_BPF_OUTPUT)
		return PP_OUTPUT_NONE;
	if (!strcmp(name, PERFDATA_ALLOC_EVENT_NAME))
		return PP_OUTPUT_ALLOC;
	if (!strcmp(name, PERFDATA_INUSE_EVENT_NAME))
		return PP_OUTPUT_INUSE;
	if (!strcmp(name, PERFDATA_SCHED_DELAY_EVENT_NAME))
		return PP_OUTPUT_SCHED_DELAY;
	return PP_OUTPUT_NONE;
}

static bool is_word_char(char ch)
{
	return ch > ' ' && ch <= '~';
}

size_t pp_raw_words(const void *raw, size_t size, struct pp_raw_word *words, size_t max)
{
	const char *s = raw;
	size_t i = 0, n = 0;

	if (!s)
		return 0;
	while (i < size && is_word_char(s[i])) {
		size_t start = i;

		while (i < size && is_word_char(s[i]) && i - start <= PP_RAW_WORD_MAX)
			i++;
		if (i - start > PP_RAW_WORD_MAX || n == max)
			return 0;
		words[n++] = (struct pp_raw_word){ .s = s + start, .len = i - start };
		if (i < size && s[i] == ' ')
			i++;	/* the separator, or the first space of the padding */
	}
	/* Only padding may follow, up to the NUL or the end. */
	for (; i < size && s[i]; i++)
		if (s[i] != ' ')
			return 0;
	return n;
}

/* A size has at most 20 digits (UINT64_MAX). */
#define HEAP_SIZE_DIGITS_MAX 20

uint64_t pp_heap_raw_size(const void *raw, size_t size)
{
	struct pp_raw_word w[2];
	uint64_t v = 0;

	if (pp_raw_words(raw, size, w, 2) != 2 || w[1].len > HEAP_SIZE_DIGITS_MAX)
		return 0;
	for (size_t i = 0; i < w[1].len; i++) {
		unsigned int d = (unsigned int)(w[1].s[i] - '0');

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return 0;
		v = v * 10 + d;
	}
	return v;
}

size_t pp_sched_raw_reason(const void *raw, size_t size, const char **reason)
{
	struct pp_raw_word w;

	if (pp_raw_words(raw, size, &w, 1) != 1)
		return 0;
	for (size_t i = 0; i < w.len; i++) {
		char ch = w.s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_'))
			return 0;
	}
	*reason = w.s;
	return w.len;
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

bool pp_event_selected(const struct perfdata_event *ev, const char *name, const char *want)
{
	if (!want)
		return true;
	if (pp_output_is_heap(pp_event_output_kind(ev, name)) && !strcmp(want, PP_HEAP_PROFILE_NAME))
		return true;
	return pp_event_matches(name, want);
}
