/* SPDX-License-Identifier: MIT */
/*
 * bpfrec/perfdata.h - read any perf.data record by record: file or pipe
 * format, perf's or ours, compressed (-z) or not.
 *
 * Installed as <bpfrec/perfdata.h>. Records are the kernel's own layout
 * (struct perf_event_header and what follows, <linux/perf_event.h>);
 * samples can be decoded with their event's sample_type. Memory does not
 * grow with the file: one record buffer and a read-ahead buffer.
 *
 *   bpfrec_perfdata_open_path/_fd()   read the header (and, in file mode,
 *                                     the attrs and features)
 *   bpfrec_perfdata_next()            1 and a record, 0 at the end, -errno
 *   bpfrec_perfdata_free()
 *
 * In pipe format the events arrive as records: the event list grows while
 * reading. COMPRESSED records are yielded, then the records inside them
 * (bpfrec_perfdata_in_compressed() tells which is which). Errors say what
 * and at which offset (bpfrec_perfdata_error()); a file cut short is an
 * error where it ends, after the records before it.
 */
#ifndef BPFREC_PERFDATA_H
#define BPFREC_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include <bpfrec/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bpfrec_perfdata;

/*
 * A decoded PERF_RECORD_SAMPLE; fields the event's sample_type lacks are 0.
 * Pointers point into the reader's buffer: valid until the next record.
 * Declare with BPFREC_OPTS(bpfrec_perfdata_sample, s) so sz is set.
 */
struct bpfrec_perfdata_sample {
	size_t sz;
	int event;		/* index of its event, -1 when its id is unknown */
	uint16_t misc;		/* PERF_RECORD_MISC_KERNEL / _USER cpumode */
	uint64_t id, ip;
	uint32_t pid, tid;
	uint64_t time, addr, stream_id;
	uint32_t cpu;
	uint64_t period;
	uint64_t nr_callchain;	/* leaf first, PERF_CONTEXT_* markers included */
	const uint64_t *callchain;
	uint32_t raw_size;
	const void *raw;
	uint64_t regs_abi, nr_regs;	/* REGS_USER */
	const uint64_t *regs;
	uint64_t stack_size, stack_dyn_size;	/* STACK_USER */
	const void *stack;
};

BPFREC_API int bpfrec_perfdata_open_path(const char *path, struct bpfrec_perfdata **r);
/* name is for messages; the fd is not closed. *r is set unless -ENOMEM: free it. */
BPFREC_API int bpfrec_perfdata_open_fd(int fd, const char *name, struct bpfrec_perfdata **r);
BPFREC_API void bpfrec_perfdata_free(struct bpfrec_perfdata *r);
BPFREC_API const char *bpfrec_perfdata_error(const struct bpfrec_perfdata *r);

BPFREC_API bool bpfrec_perfdata_is_pipe(const struct bpfrec_perfdata *r);
BPFREC_API int bpfrec_perfdata_next(struct bpfrec_perfdata *r,
				    const struct perf_event_header **rec);
/* Offset of the last record (for one from a COMPRESSED record, that one's). */
BPFREC_API uint64_t bpfrec_perfdata_offset(const struct bpfrec_perfdata *r);
BPFREC_API bool bpfrec_perfdata_in_compressed(const struct bpfrec_perfdata *r);

BPFREC_API size_t bpfrec_perfdata_nr_events(const struct bpfrec_perfdata *r);
/* NULL when the file does not name the event, or i is out of range. */
BPFREC_API const char *bpfrec_perfdata_event_name(const struct bpfrec_perfdata *r, size_t i);
BPFREC_API const struct perf_event_attr *bpfrec_perfdata_event_attr(const struct bpfrec_perfdata *r,
								    size_t i);
/* Decode a PERF_RECORD_SAMPLE. 0 or -EINVAL (malformed, or not a sample). */
BPFREC_API int bpfrec_perfdata_parse_sample(const struct bpfrec_perfdata *r,
					    const struct perf_event_header *rec,
					    struct bpfrec_perfdata_sample *s);
/* A string feature (HEADER_HOSTNAME, HEADER_OSRELEASE, ...), or NULL. */
BPFREC_API const char *bpfrec_perfdata_feature_string(const struct bpfrec_perfdata *r,
						      unsigned int feature);

#ifdef __cplusplus
}
#endif

#endif /* BPFREC_PERFDATA_H */
