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
 *
 * Each record type has its decoder (bpfrec_perfdata_parse_*()); they
 * bound every field by the record's size and return 0 or -EINVAL. Strings
 * and arrays they return point into the record: valid until the next one.
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

/* Record types of perf's own (the kernel's are PERF_RECORD_*, below 64). */
enum bpfrec_perfdata_record_type {
	BPFREC_PERFDATA_RECORD_HEADER_ATTR = 64,	/* pipe: an event's attr and ids */
	BPFREC_PERFDATA_RECORD_HEADER_BUILD_ID = 67,	/* pipe: a build-id */
	BPFREC_PERFDATA_RECORD_FINISHED_ROUND = 68,	/* records before it are time-sorted */
	BPFREC_PERFDATA_RECORD_HEADER_FEATURE = 80,	/* pipe: a feature section */
	BPFREC_PERFDATA_RECORD_COMPRESSED = 81,		/* zstd-compressed records (-z) */
};

/* Feature sections (perf's HEADER_* ids) named by this API. */
enum bpfrec_perfdata_feature {
	BPFREC_PERFDATA_FEAT_BUILD_ID = 2,
	BPFREC_PERFDATA_FEAT_HOSTNAME = 3,
	BPFREC_PERFDATA_FEAT_OSRELEASE = 4,
	BPFREC_PERFDATA_FEAT_CMDLINE = 11,
};
/* Feature ids are below this (the header's bitmap). */
#define BPFREC_PERFDATA_FEAT_BITS	256

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

/* The sample_id trailer of a kernel record other than SAMPLE (sample_id_all). */
struct bpfrec_perfdata_sample_id {
	size_t sz;
	uint32_t pid, tid;
	uint64_t time, id, stream_id;
	uint32_t cpu;
};

/* MMAP and MMAP2; the MMAP2 fields are 0 for an MMAP. */
struct bpfrec_perfdata_mmap {
	size_t sz;
	uint16_t misc;		/* cpumode */
	uint32_t pid, tid;	/* pid -1: the kernel */
	uint64_t start, len, pgoff;
	uint8_t build_id_size;	/* MMAP2 with a build-id; else the inode fields below */
	uint8_t build_id[20];
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	const char *filename;	/* NUL-terminated inside the record */
};

/* COMM. */
struct bpfrec_perfdata_comm {
	size_t sz;
	uint32_t pid, tid;
	bool exec;		/* the name comes from an exec */
	const char *comm;
};

/* FORK and EXIT. */
struct bpfrec_perfdata_task {
	size_t sz;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

/* KSYMBOL: kernel code such as a JIT-compiled BPF function, by address. */
struct bpfrec_perfdata_ksymbol {
	size_t sz;
	uint64_t addr;
	uint32_t len;
	uint16_t ksym_type;	/* PERF_RECORD_KSYMBOL_TYPE_* (BPF: 1) */
	uint16_t flags;		/* PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER: it went away */
	const char *name;	/* NUL-terminated inside the record */
};

/* A build-id: a HEADER_BUILD_ID record, or an entry of the BUILD_ID feature. */
struct bpfrec_perfdata_build_id {
	size_t sz;
	uint16_t cpumode;
	int32_t pid;
	uint8_t size;		/* bytes of id */
	uint8_t id[20];
	const char *filename;	/* filename_len bytes, not NUL-terminated in a record */
	size_t filename_len;
};
/* Called for each build-id; a non-zero return stops the walk and is returned. */
typedef int (*bpfrec_perfdata_build_id_fn)(void *ctx, const struct bpfrec_perfdata_build_id *b);

/* The file header, file format only. */
struct bpfrec_perfdata_header {
	size_t sz;
	uint64_t size, attr_size;
	uint64_t attrs_offset, attrs_size;
	uint64_t data_offset, data_size;
	uint64_t event_types_offset, event_types_size;
	uint64_t features[4];	/* bit i set: feature section i is present */
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
/* The sample ids that select event i (*nr of them); NULL when none or out of range. */
BPFREC_API const uint64_t *bpfrec_perfdata_event_ids(const struct bpfrec_perfdata *r, size_t i,
						     size_t *nr);
/* -EINVAL in pipe format, which has no file header. */
BPFREC_API int bpfrec_perfdata_get_header(const struct bpfrec_perfdata *r,
					  struct bpfrec_perfdata_header *h);

/*
 * Decode a PERF_RECORD_SAMPLE. 0, -EINVAL (malformed, or not a sample) or
 * -ENOENT: its id belongs to no event (then only s->id is set, event -1).
 */
BPFREC_API int bpfrec_perfdata_parse_sample(const struct bpfrec_perfdata *r,
					    const struct perf_event_header *rec,
					    struct bpfrec_perfdata_sample *s);
/* The trailer of another kernel record: 0 with s zeroed when the file has none. */
BPFREC_API int bpfrec_perfdata_parse_sample_id(const struct bpfrec_perfdata *r,
					       const struct perf_event_header *rec,
					       struct bpfrec_perfdata_sample_id *s);
BPFREC_API int bpfrec_perfdata_parse_mmap(const struct perf_event_header *rec,
					  struct bpfrec_perfdata_mmap *m);
BPFREC_API int bpfrec_perfdata_parse_comm(const struct perf_event_header *rec,
					  struct bpfrec_perfdata_comm *c);
BPFREC_API int bpfrec_perfdata_parse_task(const struct perf_event_header *rec,
					  struct bpfrec_perfdata_task *t);
BPFREC_API int bpfrec_perfdata_parse_ksymbol(const struct perf_event_header *rec,
					     struct bpfrec_perfdata_ksymbol *k);
/* What a LOST (id, lost) or LOST_SAMPLES (id 0, lost) record counts. */
BPFREC_API int bpfrec_perfdata_parse_lost(const struct perf_event_header *rec, uint64_t *id,
					  uint64_t *lost);
/* A HEADER_BUILD_ID record. */
BPFREC_API int bpfrec_perfdata_parse_build_id(const struct perf_event_header *rec,
					      struct bpfrec_perfdata_build_id *b);

/* The build-ids the file lists: the BUILD_ID feature, and the records read so far. */
BPFREC_API int bpfrec_perfdata_for_each_build_id(const struct bpfrec_perfdata *r,
						 bpfrec_perfdata_build_id_fn fn, void *ctx);
/* A feature section's payload as stored (*size bytes), or NULL when absent. */
BPFREC_API const void *bpfrec_perfdata_feature(const struct bpfrec_perfdata *r,
					       unsigned int feature, size_t *size);
/* A string feature (BPFREC_PERFDATA_FEAT_HOSTNAME, _OSRELEASE, ...), or NULL. */
BPFREC_API const char *bpfrec_perfdata_feature_string(const struct bpfrec_perfdata *r,
						      unsigned int feature);
/*
 * A feature's content as one line of text, perf's values decoded ("available
 * 8 online 8", the command line, event names, clocks, ...; "N bytes" for
 * those it does not decode), for people: into buf as snprintf does. The
 * length it needed, or -ENOENT when the feature is absent. Strings from the
 * file are copied as they are: escape them before they reach a terminal.
 */
BPFREC_API int bpfrec_perfdata_describe_feature(const struct bpfrec_perfdata *r,
						unsigned int feature, char *buf, size_t len);

/* Names, for people: NULL for what this version does not know. */
BPFREC_API const char *bpfrec_perfdata_record_name(uint32_t type);	/* "SAMPLE", "FINISHED_ROUND" */
BPFREC_API const char *bpfrec_perfdata_feature_name(unsigned int feature);	/* "HOSTNAME" */
/* perf's name of a generic event: "cpu-clock", "cycles", ... */
BPFREC_API const char *bpfrec_perfdata_event_generic_name(uint32_t type, uint64_t config);

#ifdef __cplusplus
}
#endif

#endif /* BPFREC_PERFDATA_H */
