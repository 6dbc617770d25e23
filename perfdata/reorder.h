/* SPDX-License-Identifier: MIT */
/*
 * reorder.h - replay records in timestamp order, as perf report does.
 *
 * perf writes each CPU's ring buffer in turn, so an MMAP on one CPU can
 * land in the file after a sample on another CPU that needs it. perf marks
 * the end of each pass with FINISHED_ROUND and promises that nothing after
 * round n+1 is older than the newest record before round n. So: queue
 * copies of the records; at each round end deliver, in (time, file order),
 * everything up to the newest time seen at the previous round end; deliver
 * the rest at the end. Memory is about two rounds of records; when a file
 * has no rounds at all, the queue delivers its oldest half whenever it holds
 * more than mem_limit bytes (perf does the same).
 *
 * Callbacks get the record (8-byte aligned copy, valid during the call)
 * and its time; a non-zero return stops delivery and is returned.
 */
#ifndef PERFDATA_REORDER_H
#define PERFDATA_REORDER_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct perfdata_reorder;

typedef int (*perfdata_reorder_fn)(const struct perf_event_header *h, uint64_t time, void *ctx);

/* mem_limit 0 = 256 MiB. */
int perfdata_reorder_new(size_t mem_limit, perfdata_reorder_fn fn, void *ctx, struct perfdata_reorder **out);
void perfdata_reorder_free(struct perfdata_reorder *q);

/* Queue a copy of h (h->size bytes) stamped with time. */
int perfdata_reorder_push(struct perfdata_reorder *q, uint64_t time, const struct perf_event_header *h);
/* A FINISHED_ROUND record was read. */
int perfdata_reorder_round(struct perfdata_reorder *q);
/* End of input: deliver everything. */
int perfdata_reorder_flush(struct perfdata_reorder *q);
/* Records queued right now. */
size_t perfdata_reorder_queued(const struct perfdata_reorder *q);

#endif /* PERFDATA_REORDER_H */
