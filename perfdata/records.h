/* SPDX-License-Identifier: MIT */
/*
 * records.h - encode and decode single perf.data records, byte for byte.
 *
 * Pure functions over caller-provided buffers: no I/O, no allocation, so each
 * layout can be unit-tested against a hand-computed byte image.
 *
 * Encoders return the record size in bytes (always a multiple of 8 unless
 * stated) or -E2BIG when `cap` is too small, -EINVAL for values that cannot
 * be encoded (a record over 64 KiB, a build-id over 20 bytes). Records of
 * kernel types (< 64) carry the sample_id trailer selected by `id_type`: pass
 * the event's sample_type when attr.sample_id_all is set, 0 otherwise.
 *
 * Decoders take a whole record (header->size bytes, already bounds-checked by
 * the caller) and return 0 or -EINVAL when the record is malformed for its
 * type; strings point into the record.
 */
#ifndef PERFDATA_RECORDS_H
#define PERFDATA_RECORDS_H

#include <sys/types.h>

#include "perfdata.h"

/* MMAP (type 1) and MMAP2 (type 10). */
struct perfdata_mmap {
	uint16_t misc;		/* cpumode; MMAP2 adds PERF_RECORD_MISC_MMAP_BUILD_ID itself */
	uint32_t pid, tid;	/* pid = tgid; -1 for the kernel map */
	uint64_t start, len, pgoff;
	/* MMAP2 only: either a build-id ... */
	uint8_t build_id_size;	/* 0 = no build-id: maj/min/ino are written */
	uint8_t build_id[PERFDATA_BUILD_ID_MAX];
	/* ... or the inode triple */
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;	/* PROT_*, MAP_* */
	const char *filename;
};

/* COMM (type 3); exec sets PERF_RECORD_MISC_COMM_EXEC. */
struct perfdata_comm {
	uint32_t pid, tid;
	bool exec;
	const char *comm;
};

/* FORK (type 7) and EXIT (type 4). */
struct perfdata_task {
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

/*
 * KSYMBOL (type 17): kernel code that neither kallsyms at report time nor a
 * module map can name, such as a JIT-compiled BPF function. perf maps
 * [addr, addr + len) to a symbol called name (and, outside every kernel
 * map, to a map of that name too).
 */
struct perfdata_ksymbol {
	uint64_t addr;
	uint32_t len;
	uint16_t ksym_type;	/* PERF_RECORD_KSYMBOL_TYPE_* */
	uint16_t flags;		/* PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER: the code went away */
	const char *name;	/* decoded: NUL-terminated inside the record */
};

/* A build-id entry (BUILD_ID feature) or HEADER_BUILD_ID record. */
struct perfdata_build_id {
	uint16_t cpumode;
	int32_t pid;
	uint8_t size;
	uint8_t id[PERFDATA_BUILD_ID_MAX];
	const char *filename;	/* decoded: filename_len bytes in the record, no NUL */
};

/* Size of the sample_id trailer for these sample_type bits. */
size_t perfdata_sample_id_size(uint64_t id_type);
/* Size of a SAMPLE record for this attr, or 0 if it cannot be encoded. */
size_t perfdata_sample_size(const struct perf_event_attr *attr, const struct perfdata_sample *s);

ssize_t perfdata_encode_mmap(void *buf, size_t cap, const struct perfdata_mmap *m,
			     uint64_t id_type, const struct perfdata_sample_id *sid);
ssize_t perfdata_encode_mmap2(void *buf, size_t cap, const struct perfdata_mmap *m,
			      uint64_t id_type, const struct perfdata_sample_id *sid);
ssize_t perfdata_encode_comm(void *buf, size_t cap, const struct perfdata_comm *c,
			     uint64_t id_type, const struct perfdata_sample_id *sid);
/* The name is NUL-terminated and zero-padded to 8 bytes, then the trailer. */
ssize_t perfdata_encode_ksymbol(void *buf, size_t cap, const struct perfdata_ksymbol *k,
				uint64_t id_type, const struct perfdata_sample_id *sid);
/* type is PERF_RECORD_FORK or PERF_RECORD_EXIT */
ssize_t perfdata_encode_task(void *buf, size_t cap, uint32_t type, const struct perfdata_task *t,
			     uint64_t id_type, const struct perfdata_sample_id *sid);
ssize_t perfdata_encode_lost(void *buf, size_t cap, uint64_t id, uint64_t lost,
			     uint64_t id_type, const struct perfdata_sample_id *sid);
ssize_t perfdata_encode_lost_samples(void *buf, size_t cap, uint64_t lost,
				     uint64_t id_type, const struct perfdata_sample_id *sid);
/* The fields present are chosen by attr->sample_type; s->nr_regs must equal
 * popcount(attr->sample_regs_user) when REGS_USER is set. STACK_USER reads
 * only stack_dyn_size bytes from s->stack and writes zeros up to stack_size. */
ssize_t perfdata_encode_sample(void *buf, size_t cap, const struct perf_event_attr *attr,
			       const struct perfdata_sample *s);
/*
 * Cut STACK_USER (stack_size, and dyn_size with it) so the SAMPLE fits in a
 * record's 64 KiB, as the kernel cuts sample_stack_user; a multiple of 8.
 */
void perfdata_sample_fit_stack(const struct perf_event_attr *attr, struct perfdata_sample *s);
ssize_t perfdata_encode_finished_round(void *buf, size_t cap);
/*
 * A SAMPLE's callchain as perf reads it: PERF_CONTEXT_KERNEL and the kernel
 * frames, then PERF_CONTEXT_USER and the user frames, each leaf first; a
 * part with no frames is left out with its marker (perf would otherwise
 * show an empty context). out has room for nr_kernel + nr_user + 2
 * entries; returns how many were written.
 */
size_t perfdata_callchain_join(const uint64_t *kernel, size_t nr_kernel, const uint64_t *user,
			       size_t nr_user, uint64_t *out);
/*
 * Make the len bytes of text in buf (size bytes) a RAW payload that perf
 * prints as a string ("BPF string" in perf script): perf does so only when
 * everything up to a final NUL is printable, and a SAMPLE pads RAW so that
 * 4 + its size is a multiple of 8, so spaces go in until the NUL is the
 * last byte. Returns the payload's size, NUL included.
 */
size_t perfdata_raw_text_pad(char *buf, size_t len, size_t size);
/* The cpumode bits of a SAMPLE's misc: where the sampled ip was. */
uint16_t perfdata_sample_cpumode(bool kernel);
/* HEADER_ATTR (64): the attr (PERFDATA_ATTR_SIZE bytes) then its ids. */
ssize_t perfdata_encode_header_attr(void *buf, size_t cap, const struct perf_event_attr *attr,
				    const uint64_t *ids, uint32_t nr_ids);
/* HEADER_FEATURE (80): u64 feature id then the feature's payload. */
ssize_t perfdata_encode_header_feature(void *buf, size_t cap, uint32_t feat,
				       const void *payload, size_t size);
/*
 * A build-id record. type 0 inside the BUILD_ID feature (name padded to 64
 * as perf does, so the size is 36 + 64*k), PERFDATA_RECORD_HEADER_BUILD_ID in
 * a pipe (padded further so the record size is a multiple of 8).
 */
ssize_t perfdata_encode_build_id(void *buf, size_t cap, uint32_t type, uint16_t cpumode,
				 int32_t pid, const uint8_t *build_id, size_t size,
				 const char *filename);

/* Decoders (see above). */
int perfdata_decode_sample_id(const struct perf_event_header *h, uint64_t id_type,
			      struct perfdata_sample_id *sid);
int perfdata_decode_sample(const struct perf_event_header *h, const struct perf_event_attr *attr,
			   struct perfdata_sample *s);
int perfdata_decode_mmap(const struct perf_event_header *h, struct perfdata_mmap *m);
int perfdata_decode_mmap2(const struct perf_event_header *h, struct perfdata_mmap *m);
int perfdata_decode_comm(const struct perf_event_header *h, struct perfdata_comm *c);
int perfdata_decode_task(const struct perf_event_header *h, struct perfdata_task *t);
int perfdata_decode_ksymbol(const struct perf_event_header *h, struct perfdata_ksymbol *k);
/* What a LOST (u64 id, u64 lost: a ring buffer overflowed) or LOST_SAMPLES
 * (u64 lost: samples the kernel or the BPF side dropped) record counts;
 * *id is 0 for LOST_SAMPLES. -EINVAL for another type or a short record. */
int perfdata_decode_lost(const struct perf_event_header *h, uint64_t *id, uint64_t *lost);
/*
 * A build-id entry of size bytes at rec (the record's own header.size may
 * be a feature's padding): -EINVAL when shorter than the fixed part or the
 * id is over 20 bytes. Without PERFDATA_MISC_BUILD_ID_SIZE (perf before
 * 5.12) the id is a 20-byte SHA-1. The name is the rest, up to its NUL.
 */
int perfdata_decode_build_id(const void *rec, size_t size, struct perfdata_build_id *b,
			     size_t *filename_len);
/* The u64 id of a SAMPLE, from IDENTIFIER (first word) or ID, or 0. Needed to
 * pick the event before the rest can be decoded. */
int perfdata_decode_sample_event_id(const struct perf_event_header *h, uint64_t sample_type,
				    uint64_t *id);

#endif /* PERFDATA_RECORDS_H */
