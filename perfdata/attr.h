/* SPDX-License-Identifier: MIT */
/*
 * attr.h - the perf_event_attr a recording's file describes, from what the
 * recorder captures: the recorder says *what* is in each sample, this says
 * how perf encodes it (sample_type bits, the sample_id trailer of the
 * other records, the side-band flags perf record sets).
 *
 * What perf record puts in a sample and no more, since it is paid per
 * sample: IP, TID, TIME and PERIOD always; the CPU only when CPUs are the
 * target (-a, -C); an IDENTIFIER only when a second event shares the file
 * (one event takes every sample without an id); the callchain when stacks
 * are captured; the user registers and a copy of the user stack as perf
 * record --call-graph dwarf asks for them (the callchain then holds only
 * the kernel part: exclude_callchain_user). Every record carries the
 * sample_id trailer (sample_id_all), times are CLOCK_MONOTONIC, and the
 * side-band flags say which records describe tasks (mmap, mmap2, comm,
 * comm_exec, task; mmap_data with a stack copy, whose unwinders read data
 * mappings too).
 */
#ifndef PERFDATA_ATTR_H
#define PERFDATA_ATTR_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct perfdata_capture {
	uint32_t type;		/* the event: PERF_TYPE_* */
	uint64_t config;
	uint64_t period;	/* events per sample; 0 = freq */
	uint64_t freq;		/* samples per second (when period is 0) */
	bool cpu;		/* the samples say on which CPU */
	bool shared;		/* another event shares the file: samples carry an id */
	bool callchain;		/* stacks */
	uint64_t regs_user;	/* user registers (perf_regs mask) and ... */
	uint32_t stack_user;	/* ... bytes of user stack per sample; 0 = no copies */
	bool inherit;		/* the targets' children are followed */
};

/* Fill *a (all of it) for the file. */
void perfdata_sample_attr(const struct perfdata_capture *c, struct perf_event_attr *a);

/*
 * The attr of a BPF_OUTPUT event (offcpu-time, alloc, inuse, sched-delay)
 * that shares the file with the CPU event cpu_attr: the same trailer bits,
 * clock and inheritance (perf requires one trailer layout per file), and
 * IDENTIFIER, IP, PERIOD, CALLCHAIN and RAW; sample_period 1.
 */
void perfdata_bpf_output_attr(const struct perf_event_attr *cpu_attr, struct perf_event_attr *out);

#endif /* PERFDATA_ATTR_H */
