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

#endif /* PERFDATA_DESCRIBE_H */
