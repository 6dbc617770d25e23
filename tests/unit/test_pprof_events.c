// SPDX-License-Identifier: MIT
/* Unit tests for tools/pprof/events.c: event names, short names, --event matching, kinds. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

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

Test(events, heap_kinds_need_the_bpf_output_attr)
{
	struct perfdata_event alloc = ev(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, "alloc");
	struct perfdata_event inuse = ev(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, "inuse");
	struct perfdata_event other = ev(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "alloc");

	cr_assert_eq(pp_event_output_kind(&alloc, "alloc"), PP_OUTPUT_ALLOC);
	cr_assert_eq(pp_event_output_kind(&inuse, "inuse"), PP_OUTPUT_INUSE);
	cr_assert_eq(pp_event_output_kind(&alloc, "offcpu-time"), PP_OUTPUT_NONE);
	cr_assert_eq(pp_event_output_kind(&other, "alloc"), PP_OUTPUT_NONE, "not our event");
}

/* --event: by name, full or short; "heap" picks both allocation events only. */
Test(events, selected_by_event_option)
{
	struct perfdata_event alloc = ev(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, "alloc");
	struct perfdata_event inuse = ev(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, "inuse");
	struct perfdata_event clock = ev(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "cpu-clock");

	cr_assert(pp_event_selected(&clock, "cpu-clock", NULL), "no --event: every event");
	cr_assert(pp_event_selected(&clock, "cpu-clock:ppp", "cpu-clock"));
	cr_assert(!pp_event_selected(&clock, "cpu-clock", "cycles"));
	cr_assert(pp_event_selected(&alloc, "alloc", "heap"));
	cr_assert(pp_event_selected(&inuse, "inuse", "heap"));
	cr_assert(pp_event_selected(&alloc, "alloc", "alloc"));
	cr_assert(!pp_event_selected(&inuse, "inuse", "alloc"));
	cr_assert(!pp_event_selected(&clock, "cpu-clock", "heap"));
}

static void expect_size(const char *raw, size_t size, uint64_t want)
{
	cr_assert_eq(pp_heap_raw_size(raw, size), want, "'%.*s' (%zu bytes)", (int)size, raw, size);
}

/* "FUNC SIZE", space-padded and NUL-terminated; anything else is 0 ("unknown"). */
Test(events, heap_raw_size)
{
	static const char padded[] = "calloc 65536       ";
	static const char max[] = "malloc 18446744073709551615";

	expect_size("malloc 4096", 12, 4096);
	expect_size(padded, sizeof(padded), 65536);
	expect_size("mmap 1048576", 12, 1048576);	/* no NUL: the size bounds it */
	expect_size("realloc 24\0garbage", 18, 24);
	expect_size(max, sizeof(max), UINT64_MAX);
	expect_size("malloc 18446744073709551616", 28, 0);	/* overflows */
	expect_size("malloc 000000000000000000004096", 31, 0);	/* more than 20 digits */
	expect_size("malloc 4096", 9, 40);		/* cut by its size */
	expect_size("malloc 4096x", 13, 0);
	expect_size("malloc 40 96", 13, 0);
	expect_size("malloc  4096", 13, 0);
	expect_size("malloc", 7, 0);
	expect_size("malloc ", 8, 0);
	expect_size(" 4096", 6, 0);
	expect_size("4096", 5, 0);
	expect_size("mal\tloc 4096", 13, 0);
	expect_size("malloc 0", 9, 0);
	expect_size("", 0, 0);
	expect_size(NULL, 64, 0);
	char long_func[80];

	memset(long_func, 'f', 70);
	memcpy(long_func + 70, " 42", 4);
	expect_size(long_func, sizeof(long_func), 0);
	memcpy(long_func + 64, " 42", 4);
	expect_size(long_func, 68, 42);
}

Test(events, sched_delay_kind_needs_the_bpf_output_attr)
{
	struct perfdata_event sched = ev(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, "sched-delay");
	struct perfdata_event other = ev(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "sched-delay");

	cr_assert_eq(pp_event_output_kind(&sched, "sched-delay"), PP_OUTPUT_SCHED_DELAY);
	cr_assert(!pp_output_is_heap(PP_OUTPUT_SCHED_DELAY));
	cr_assert(pp_output_is_heap(PP_OUTPUT_ALLOC) && pp_output_is_heap(PP_OUTPUT_INUSE));
	cr_assert_eq(pp_event_output_kind(&other, "sched-delay"), PP_OUTPUT_NONE, "not our event");
}

/* The one tokenizer both RAW texts go through. */
Test(events, raw_words)
{
	struct pp_raw_word w[3];

	cr_assert_eq(pp_raw_words("a bc   ", 8, w, 3), 2);
	cr_assert_eq(w[0].len, 1);
	cr_assert_eq(w[1].len, 2);
	cr_assert_eq(memcmp(w[1].s, "bc", 2), 0);
	cr_assert_eq(pp_raw_words("a b c d", 8, w, 3), 0, "more words than asked for");
	cr_assert_eq(pp_raw_words("a\0\x01\x02", 4, w, 3), 1, "nothing is read after the NUL");
	cr_assert_eq(pp_raw_words("a \x01", 4, w, 3), 0, "padding is spaces only");
	cr_assert_eq(pp_raw_words("   ", 4, w, 3), 0, "no word");
	cr_assert_eq(pp_raw_words("abc", 2, w, 3), 1, "cut by its size");
	cr_assert_eq(w[0].len, 2);
	cr_assert_eq(pp_raw_words(NULL, 8, w, 3), 0);
	cr_assert_eq(pp_raw_words("x", 0, w, 3), 0);
}

static void expect_reason(const char *raw, size_t size, const char *want)
{
	const char *r = NULL;
	size_t n = pp_sched_raw_reason(raw, size, &r);

	if (!want) {
		cr_assert_eq(n, 0, "'%.*s' (%zu bytes) is no reason", (int)size, raw, size);
		return;
	}
	cr_assert_eq(n, strlen(want), "'%.*s' (%zu bytes)", (int)size, raw, size);
	cr_assert_eq(memcmp(r, want, n), 0);
}

/* One word of [a-z0-9_-], space-padded and NUL-terminated; anything else is none. */
Test(events, sched_raw_reason)
{
	static const char padded[] = "preempted      ";
	char long_word[80], longest[PP_RAW_WORD_MAX + 1];

	expect_reason(padded, sizeof(padded), "preempted");
	expect_reason("woken", 6, "woken");
	expect_reason("woken", 5, "woken");		/* no NUL: the size bounds it */
	expect_reason("woken\0preempted", 16, "woken");
	expect_reason("wok", 3, "wok");			/* cut by its size */
	expect_reason("io-wait_2", 10, "io-wait_2");
	expect_reason("pre empted", 11, NULL);
	expect_reason("Preempted", 10, NULL);
	expect_reason("woken!", 7, NULL);
	expect_reason(" woken", 7, NULL);
	expect_reason("woken \x01", 8, NULL);
	expect_reason("", 1, NULL);
	expect_reason("", 0, NULL);
	expect_reason(NULL, 16, NULL);
	memset(long_word, 'a', sizeof(long_word));
	expect_reason(long_word, sizeof(long_word), NULL);
	memset(longest, 'a', PP_RAW_WORD_MAX);
	longest[PP_RAW_WORD_MAX] = '\0';
	expect_reason(long_word, PP_RAW_WORD_MAX, longest);	/* the longest word */
}
