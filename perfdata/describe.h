/* SPDX-License-Identifier: MIT */
/*
 * describe.h - a feature section's payload as one line of text for people
 * (bpfrec_perfdata_describe_feature(), `bpfrec dump`): the payloads perf
 * writes decoded, bounded by their size, the others as "N bytes".
 */
#ifndef PERFDATA_DESCRIBE_H
#define PERFDATA_DESCRIBE_H

#include <stddef.h>

struct perfdata_reader;

/* Into buf as snprintf does: the length needed, or -ENOENT when absent. */
int perfdata_describe_feature(const struct perfdata_reader *r, unsigned int feat, char *buf,
			      size_t len);

/*
 * The describe ops of the feature table (features.h): each puts a payload
 * of size bytes as text, and says so when it is malformed.
 */
struct perfdata_text;

void perfdata_describe_string(struct perfdata_text *t, const void *data, size_t size);
void perfdata_describe_nrcpus(struct perfdata_text *t, const void *data, size_t size);
void perfdata_describe_total_mem(struct perfdata_text *t, const void *data, size_t size);
void perfdata_describe_cmdline(struct perfdata_text *t, const void *data, size_t size);
void perfdata_describe_event_desc(struct perfdata_text *t, const void *data, size_t size);
void perfdata_describe_sample_time(struct perfdata_text *t, const void *data, size_t size);
void perfdata_describe_clockid(struct perfdata_text *t, const void *data, size_t size);
void perfdata_describe_compressed(struct perfdata_text *t, const void *data, size_t size);
void perfdata_describe_clock_data(struct perfdata_text *t, const void *data, size_t size);

#endif /* PERFDATA_DESCRIBE_H */
