// SPDX-License-Identifier: MIT
/* taskdesc.c - descriptions of tasks for the file (contract in taskdesc.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/taskdesc.h"
#include "tools/lib/array.h"

void task_desc_reset(struct task_desc *d)
{
	d->nr = 0;
	d->names.len = 0;
	d->names.failed = false;
	d->failed = false;
}

void task_desc_free(struct task_desc *d)
{
	free(d->recs);
	growbuf_free(&d->names);
	memset(d, 0, sizeof(*d));
}

/* A new record of kind with name copied, or NULL (out of memory, remembered). */
static struct task_desc_rec *add(struct task_desc *d, enum task_desc_kind kind, const char *name)
{
	struct task_desc_rec *r;

	if (ARRAY_RESERVE(d->recs, d->cap, d->nr + 1, 16)) {
		d->failed = true;
		return NULL;
	}
	r = &d->recs[d->nr];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->name = d->names.len;
	growbuf_put(&d->names, name ? name : "", strlen(name ? name : "") + 1);
	if (growbuf_error(&d->names)) {
		d->failed = true;
		return NULL;
	}
	d->nr++;
	return r;
}

int task_desc_add_comm(struct task_desc *d, uint32_t pid, uint32_t tid, const char *comm,
		       bool exec, uint64_t time, uint32_t cpu)
{
	struct task_desc_rec *r = add(d, TASK_DESC_COMM, comm);

	if (!r)
		return -ENOMEM;
	r->comm = (struct perfdata_comm){ .pid = pid, .tid = tid, .exec = exec };
	r->sid = (struct perfdata_sample_id){ .pid = pid, .tid = tid, .time = time, .cpu = cpu };
	return 0;
}

int task_desc_add_mmap2(struct task_desc *d, const struct perfdata_mmap *m,
			const struct perfdata_sample_id *sid)
{
	struct task_desc_rec *r = add(d, TASK_DESC_MMAP2, m->filename);

	if (!r)
		return -ENOMEM;
	r->mmap = *m;
	r->mmap.filename = NULL;
	r->sid = *sid;
	return 0;
}

int task_desc_add_build_id(struct task_desc *d, const uint8_t *id, size_t size, const char *path)
{
	struct task_desc_rec *r;

	if (size > sizeof(r->build_id))
		return -EINVAL;
	r = add(d, TASK_DESC_BUILD_ID, path);
	if (!r)
		return -ENOMEM;
	memcpy(r->build_id, id, size);
	r->build_id_size = (uint8_t)size;
	return 0;
}

int task_desc_error(const struct task_desc *d)
{
	return d->failed ? -ENOMEM : 0;
}

const struct task_desc_rec *task_desc_get(const struct task_desc *d, size_t i,
					  struct task_desc_rec *out)
{
	const char *name;

	if (i >= d->nr)
		return NULL;
	*out = d->recs[i];
	name = (const char *)d->names.data + out->name;
	out->comm.comm = out->kind == TASK_DESC_COMM ? name : NULL;
	out->mmap.filename = out->kind == TASK_DESC_MMAP2 ? name : NULL;
	out->path = out->kind == TASK_DESC_BUILD_ID ? name : NULL;
	return out;
}
