/* SPDX-License-Identifier: MIT */
/*
 * trace.h - tracepoint fields of a sample's RAW data, by name.
 *
 * perf stores the format of every tracepoint it recorded in the
 * HEADER_TRACING_DATA feature (file mode) or the HEADER_TRACING_DATA
 * record (pipe mode): a small container of tracefs files (header_page,
 * header_event, the format file of each event, kallsyms, printk formats).
 * perfdata_trace_new() parses that container and hands every event format to
 * libtraceevent (tep_parse_event), which then decodes RAW sample data.
 */
#ifndef PERFDATA_TRACE_H
#define PERFDATA_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct perfdata_trace;

struct perfdata_trace_value {
	bool is_str;
	char str[256];		/* strings (char arrays, __data_loc strings), NUL-terminated */
	int64_t num;		/* integers, sign-extended as the field is signed */
};

/* Parse a tracing-data payload. err (errlen bytes) says what is wrong. */
int perfdata_trace_new(const void *data, size_t size, struct perfdata_trace **out, char *err, size_t errlen);
void perfdata_trace_free(struct perfdata_trace *t);

/* Whether tracepoint `id` (attr.config) has a field `name`. */
bool perfdata_trace_has_field(struct perfdata_trace *t, uint64_t id, const char *name);
/* The value of field `name` of tracepoint `id` in raw. 0, -ENOENT (no such
 * event or field), -EINVAL (raw too short). */
int perfdata_trace_field(struct perfdata_trace *t, uint64_t id, const char *name, const void *raw,
		   size_t raw_size, struct perfdata_trace_value *v);
/* "system:name" of tracepoint id, or NULL. */
const char *perfdata_trace_event_name(struct perfdata_trace *t, uint64_t id, char *buf, size_t len);

#endif /* PERFDATA_TRACE_H */
