/* SPDX-License-Identifier: MIT */
/*
 * csample.h - a SAMPLE record shrunk to what the converter keeps of it, as
 * it waits in the reorder queue (perfdata/reorder.h) between its reading
 * (convert.c) and its turn in time order. Internal to tools/pprof.
 *
 * One record, h.size bytes: struct csample, then nr_ips u64 (the
 * callchain; none: the sample's ip alone), then raw_size bytes of RAW data
 * (kept only for trace: labels), then, 8-aligned, ustack_len bytes of the
 * user registers and stack of a DWARF-mode sample (ustack.h). h.type is
 * CSAMPLE_TYPE, which no perf record uses.
 */
#ifndef TOOLS_PPROF_CSAMPLE_H
#define TOOLS_PPROF_CSAMPLE_H

#include <stdint.h>

#include "perfdata/perfdata.h"

#define CSAMPLE_TYPE 0x7fff

#define CSAMPLE_HAS_CPU 1
#define CSAMPLE_HAS_USTACK 2		/* user regs + stack follow (ustack.h) */

struct csample {
	struct perf_event_header h;	/* misc: the sample's cpumode */
	uint32_t flags;			/* CSAMPLE_HAS_* */
	uint32_t ustack_len;		/* bytes of packed user regs + stack */
	uint32_t event;			/* reader event index */
	uint32_t pid, tid, cpu;
	uint32_t nr_ips;
	uint32_t raw_size;
	uint64_t period;
	uint64_t ip;
	uint64_t alloc_size;		/* allocation samples: S from RAW; 0 = unknown */
	uint32_t reason;		/* sched-delay samples: sid + 1 of the RAW reason; 0 = none */
	uint32_t pad;
};

_Static_assert(sizeof(struct csample) % 8 == 0, "what follows a csample is 8-aligned");

static inline const uint64_t *csample_ips(const struct csample *s)
{
	return (const uint64_t *)(s + 1);
}

static inline const uint8_t *csample_raw(const struct csample *s)
{
	return (const uint8_t *)(s + 1) + (size_t)s->nr_ips * 8;
}

/* Bytes from the csample's start to its user registers and stack. */
static inline size_t csample_ustack_offset(uint32_t nr_ips, uint32_t raw_size)
{
	return sizeof(struct csample) + perfdata_align8((size_t)nr_ips * 8 + raw_size);
}

#endif /* TOOLS_PPROF_CSAMPLE_H */
