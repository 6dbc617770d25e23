/* SPDX-License-Identifier: MIT */
/*
 * perfdata.h - the records bpfrec writes to and reads from perf.data.
 *
 * Types shared by the writer (writer.h), the reader (reader.h) and the
 * byte-level record encoders (records.h). Nothing here knows about BPF.
 *
 * A sample is described by struct perfdata_sample; which of its fields end
 * up in the file is decided by the sample_type of the event it belongs to,
 * exactly as perf_event_open(2) would decide it.
 */
#ifndef PERFDATA_PERFDATA_H
#define PERFDATA_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "format.h"

/*
 * The sample_id trailer of non-SAMPLE records when attr.sample_id_all is set:
 * {pid,tid} {time} {id} {stream_id} {cpu,res} {identifier}, each present when
 * its bit is in the event's sample_type. perf parses it from the record's end.
 */
struct perfdata_sample_id {
	uint32_t pid;
	uint32_t tid;
	uint64_t time;
	uint64_t id;		/* also used for IDENTIFIER */
	uint64_t stream_id;
	uint32_t cpu;
};

/*
 * One PERF_RECORD_SAMPLE. Pointers are borrowed: the writer copies what it
 * needs, the reader points into its own buffer (valid until the next record).
 */
struct perfdata_sample {
	uint16_t misc;		/* PERF_RECORD_MISC_KERNEL / _USER cpumode */
	uint64_t id;		/* IDENTIFIER and/or ID */
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint64_t stream_id;
	uint32_t cpu;
	uint64_t period;
	/* CALLCHAIN: leaf first, with PERF_CONTEXT_* markers as perf writes them */
	uint64_t nr_callchain;
	const uint64_t *callchain;
	/* RAW */
	uint32_t raw_size;
	const void *raw;
	/* REGS_USER: abi (PERF_SAMPLE_REGS_ABI_*), one u64 per bit of the attr's mask */
	uint64_t regs_abi;
	uint64_t nr_regs;
	const uint64_t *regs;
	/* STACK_USER: size bytes copied, dyn_size of them valid */
	uint64_t stack_size;
	const void *stack;
	uint64_t stack_dyn_size;
};

/* One event (perf "evsel"): its attr, its name and the sample ids that select it. */
struct perfdata_event {
	struct perf_event_attr attr;
	char *name;
	uint64_t *ids;
	uint32_t nr_ids;
};

/* The callchain context markers perf puts between kernel and user frames. */
static inline bool perfdata_is_context_marker(uint64_t ip)
{
	return ip >= (uint64_t)PERF_CONTEXT_MAX;
}

static inline uint64_t perfdata_align8(uint64_t n)
{
	return (n + 7) & ~(uint64_t)7;
}

#endif /* PERFDATA_PERFDATA_H */
