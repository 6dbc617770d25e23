// SPDX-License-Identifier: MIT
/*
 * fuzz_tracing.c - libFuzzer harness for perfdata/trace.c: parse any
 * bytes as a tracing-data payload (HEADER_TRACING_DATA), then ask for every
 * common field and a few sched_switch fields of every event id it names.
 */
#include <stdlib.h>

#include "perfdata/trace.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const fields[] = { "common_pid", "common_type", "prev_comm",
					      "prev_pid", "next_comm", "prev_state", "filename" };
	static const uint8_t raw[64] = { 1, 2, 3, 4, 5, 6, 7, 8, 0xff, 0xff, 0xff, 0x7f };
	struct perfdata_trace *t = NULL;
	char err[256], name[256];

	if (perfdata_trace_new(data, size, &t, err, sizeof(err)))
		return 0;
	/* Event ids are small numbers in practice; probe the first few hundred. */
	for (uint64_t id = 0; id < 512; id++) {
		if (!perfdata_trace_event_name(t, id, name, sizeof(name)))
			continue;
		for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
			struct perfdata_trace_value v;

			if (perfdata_trace_has_field(t, id, fields[f])) {
				perfdata_trace_field(t, id, fields[f], raw, sizeof(raw), &v);
				perfdata_trace_field(t, id, fields[f], raw, 5, &v);
			}
		}
	}
	perfdata_trace_free(t);
	return 0;
}
