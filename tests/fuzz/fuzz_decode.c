// SPDX-License-Identifier: MIT
/*
 * fuzz_decode.c - libFuzzer harness for the record decoders of
 * perfdata/decode.c. The input is an attr (its first bytes: sample_type,
 * read_format, branch_sample_type, regs masks, ...) followed by one record;
 * the record's header.size is set to what is left, as the reader guarantees
 * it, and the record is copied to an 8-byte aligned buffer like the reader's.
 */
#include <stdlib.h>

#include "perfdata/records.h"
#include "perfdata/schedstats.h"
#include "fuzz.h"

#define RECORD_MAX 65535

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t rec[(RECORD_MAX + 7) / 8];	/* aligned as the reader's */
	struct perf_event_header *h = (struct perf_event_header *)rec;
	struct perf_event_attr attr = { 0 };
	struct perfdata_sample_id sid;
	struct perfdata_sample s;
	struct perfdata_mmap m;
	struct perfdata_comm c;
	struct perfdata_task t;
	struct perfdata_ksymbol k;
	size_t n;
	uint64_t id;

	if (size < sizeof(attr) + sizeof(*h))
		return 0;
	memcpy(&attr, data, sizeof(attr));
	data += sizeof(attr);
	size -= sizeof(attr);
	n = size < RECORD_MAX ? size : RECORD_MAX;
	memcpy(rec, data, n);
	h->size = (uint16_t)n;

	perfdata_decode_sample_event_id(h, attr.sample_type, &id);
	perfdata_decode_sample_id(h, attr.sample_type, &sid);
	if (!perfdata_decode_sample(h, &attr, &s)) {
		/* Every array handed out must lie inside the record: read it all. */
		volatile uint64_t sum = 0;

		for (uint64_t i = 0; i < s.nr_callchain; i++)
			sum += s.callchain[i];
		for (uint32_t i = 0; s.raw && i < s.raw_size; i++)
			sum += ((const uint8_t *)s.raw)[i];
		for (uint64_t i = 0; s.regs && i < s.nr_regs; i++)
			sum += s.regs[i];
		for (uint64_t i = 0; s.stack && i < s.stack_size; i++)
			sum += ((const uint8_t *)s.stack)[i];
		(void)sum;
	}
	perfdata_decode_mmap(h, &m);
	perfdata_decode_mmap2(h, &m);
	if (!perfdata_decode_comm(h, &c))
		(void)strlen(c.comm);
	perfdata_decode_task(h, &t);
	if (!perfdata_decode_ksymbol(h, &k))
		(void)strlen(k.name);
	/* record --sched's metrics: every entry it accepts lies inside the record. */
	{
		struct bpfrec_sched_metrics *sm = perfdata_sched_metrics_new();

		if (sm && !perfdata_sched_decode(h, sm))
			for (size_t i = 0; i < bpfrec_sched_metrics_nr_threads(sm); i++)
				(void)strlen(bpfrec_sched_metrics_thread(sm, i)->comm);
		bpfrec_sched_metrics_free(sm);
	}
	return 0;
}
