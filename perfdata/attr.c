// SPDX-License-Identifier: MIT
/*
 * attr.c - the attr a recording's file describes (contract in attr.h).
 */
#include <string.h>
#include <time.h>

#include "perfdata/attr.h"
#include "perfdata/format.h"

void perfdata_sample_attr(const struct perfdata_capture *c, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = c->type;
	a->config = c->config;
	a->size = PERFDATA_ATTR_SIZE;
	if (c->period) {
		a->sample_period = c->period;
	} else {
		a->freq = 1;
		a->sample_freq = c->freq;
	}
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	if (c->cpu)
		a->sample_type |= PERF_SAMPLE_CPU;
	if (c->shared)
		a->sample_type |= PERF_SAMPLE_IDENTIFIER;
	if (c->callchain)
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (c->stack_user) {
		/* perf unwinds these itself: the callchain keeps only the kernel part. */
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = c->regs_user;
		a->sample_stack_user = c->stack_user;
		a->exclude_callchain_user = 1;
		a->mmap_data = 1;
	}
	a->sample_id_all = 1;
	a->mmap = 1;
	a->comm = 1;
	a->mmap2 = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->inherit = c->inherit;
}

/* The sample_id trailer bits, which every event of a file must share. */
#define TRAILER_BITS (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
		      PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

void perfdata_bpf_output_attr(const struct perf_event_attr *cpu_attr, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_BPF_OUTPUT;
	a->size = sizeof(*a) < 128 ? sizeof(*a) : 128;
	a->sample_period = 1;
	a->sample_type = (cpu_attr->sample_type & TRAILER_BITS) | PERF_SAMPLE_IDENTIFIER |
			 PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
			 PERF_SAMPLE_RAW;
	a->sample_id_all = cpu_attr->sample_id_all;
	a->use_clockid = cpu_attr->use_clockid;
	a->clockid = cpu_attr->clockid;
	a->inherit = cpu_attr->inherit;
}
