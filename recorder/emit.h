/* SPDX-License-Identifier: MIT */
/*
 * emit.h - write one sample that BPF captured (CPU or off-CPU) to the file.
 *
 * The order is the file's contract: the task tracker first writes whatever
 * the file still lacks for the sample's pid/tid (COMM, MMAP2s), stamped no
 * later than the sample, then the SAMPLE itself follows with its callchain
 * split into kernel and user parts (callchain.h).
 */
#ifndef RECORDER_EMIT_H
#define RECORDER_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "recorder/callchain.h"

struct perfdata_writer;
struct task_tracker;

struct emit_sample {
	uint32_t pid, tid, cpu;
	uint64_t time, period;
	uint64_t id;			/* the event's sample id */
	const char *comm;		/* as BPF copied it: maybe not NUL-terminated */
	size_t comm_len;
	struct callchain_input chain;
	const void *raw;		/* PERF_SAMPLE_RAW payload, when the event has it */
	uint32_t raw_size;
};

/* Describe the sample's task; with describe_only, write no SAMPLE. 0 or -errno. */
int emit_sample(struct perfdata_writer *w, struct task_tracker *t, const struct emit_sample *e,
		bool describe_only);

#endif /* RECORDER_EMIT_H */
