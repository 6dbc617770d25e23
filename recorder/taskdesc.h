/* SPDX-License-Identifier: MIT */
/*
 * taskdesc.h - what the file still lacks before a sample of a task can be
 * written: COMMs of its threads, MMAP2s of its process's mappings, the
 * build-ids of the files its samples hit.
 *
 * The task tracker (tasks.h) decides what goes in one; the emitter
 * (emit.h, emit_desc()) writes it, records in the order they were added,
 * before the sample that needed them. A description holds copies (names
 * in its own buffer), so it stays valid whatever the tracker frees, until
 * task_desc_reset().
 */
#ifndef RECORDER_TASKDESC_H
#define RECORDER_TASKDESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdata/records.h"
#include "tools/lib/buf.h"

enum task_desc_kind {
	TASK_DESC_COMM,		/* a thread's name (exec: its process's new image) */
	TASK_DESC_MMAP2,	/* a mapping of its process */
	TASK_DESC_BUILD_ID,	/* a file with samples, for the BUILD_ID list */
};

struct task_desc_rec {
	enum task_desc_kind kind;
	struct perfdata_sample_id sid;	/* COMM and MMAP2: who and when */
	struct perfdata_comm comm;	/* COMM; .comm is NULL here, see task_desc_get() */
	struct perfdata_mmap mmap;	/* MMAP2; .filename likewise */
	uint8_t build_id[PERFDATA_BUILD_ID_MAX];	/* BUILD_ID, of the file at path */
	uint8_t build_id_size;
	const char *path;		/* BUILD_ID; NULL here too, see task_desc_get() */
	size_t name;			/* offset of the comm or file name in names */
};

struct task_desc {
	struct task_desc_rec *recs;
	size_t nr, cap;
	struct growbuf names;	/* NUL-terminated strings */
	bool failed;			/* an add ran out of memory: -ENOMEM at the end */
};

/* Empty (a zeroed struct is one too); reset keeps the memory for the next. */
void task_desc_reset(struct task_desc *d);
void task_desc_free(struct task_desc *d);

/* 0 or -ENOMEM; after -ENOMEM the description is incomplete (task_desc_error()). */
int task_desc_add_comm(struct task_desc *d, uint32_t pid, uint32_t tid, const char *comm,
		       bool exec, uint64_t time, uint32_t cpu);
/* m->filename is copied; m->misc is the writer's business (MMAP2 sets it). */
int task_desc_add_mmap2(struct task_desc *d, const struct perfdata_mmap *m,
			const struct perfdata_sample_id *sid);
int task_desc_add_build_id(struct task_desc *d, const uint8_t *id, size_t size, const char *path);
int task_desc_error(const struct task_desc *d);

/*
 * Record i, with its comm or file name resolved into *out (a copy whose
 * pointers stay valid until the next add or reset). NULL past the end.
 */
const struct task_desc_rec *task_desc_get(const struct task_desc *d, size_t i,
					  struct task_desc_rec *out);

#endif /* RECORDER_TASKDESC_H */
