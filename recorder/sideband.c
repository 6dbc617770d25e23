// SPDX-License-Identifier: MIT
/*
 * sideband.c - the kernel's mmap and exec reports for the task tracker
 * (contract in sideband.h).
 *
 * Records in the batch start with struct profile_hdr like the BPF ones;
 * their kinds are past those of bpf/profile.h and bpf/offcpu.h.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "recorder/batch.h"
#include "recorder/sideband.h"
#include "recorder/tasks.h"
#include "symbolize/procmaps.h"

#include "bpf/profile.h"

/* Per CPU: a build starting a process every few ms maps well under this between flushes. */
#define SIDEBAND_PAGES		64
/* The sample_id trailer of every record: {pid, tid}, time. */
#define TRAILER_SIZE		16
/* MMAP2: header, pid, tid, addr, len, pgoff, maj, min, ino, ino_generation, prot, flags. */
#define MMAP2_FILENAME_OFF	72

enum sideband_kind {
	SIDEBAND_KIND_MMAP = 32,	/* an executable mapping */
	SIDEBAND_KIND_EXEC = 33,	/* an exec began */
};

struct sideband_rec {
	struct profile_hdr hdr;
	uint64_t start, len, pgoff, ino;
	uint32_t maj, min, prot, flags;
	char path[];		/* MMAP: NUL-terminated */
};

struct sideband {
	struct perf_buffer *pb;
	int map_fd;
	struct batch *batch;
	bool data;		/* also readable data mappings (--call-graph dwarf) */
	int err;
	uint64_t lost;
};

static uint32_t u32_at(const void *base, size_t off)
{
	uint32_t v;

	memcpy(&v, (const char *)base + off, sizeof(v));
	return v;
}

static uint64_t u64_at(const void *base, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)base + off, sizeof(v));
	return v;
}

/* A batch record of kind for the kernel record h (its trailer: pid, tid, time). */
static struct sideband_rec *add_rec(struct sideband *sb, const struct perf_event_header *h,
				    uint32_t kind, uint32_t cpu, size_t size)
{
	uint64_t time = u64_at(h, h->size - 8);
	struct sideband_rec *r = batch_add(sb->batch, time, size);

	if (!r)
		return NULL;
	memset(r, 0, sizeof(*r));
	r->hdr.kind = kind;
	r->hdr.cpu = cpu;
	r->hdr.time = time;
	r->hdr.pid = u32_at(h, 8);
	r->hdr.tid = u32_at(h, 12);
	return r;
}

static int add_mmap2(struct sideband *sb, const struct perf_event_header *h, uint32_t cpu)
{
	size_t name_max = h->size - TRAILER_SIZE - MMAP2_FILENAME_OFF, name_len;
	const char *name = (const char *)h + MMAP2_FILENAME_OFF;
	uint32_t prot = u32_at(h, 64);
	struct sideband_rec *r;

	name_len = strnlen(name, name_max);
	if (name_len == name_max)
		return 0;	/* not terminated: malformed */
	/* What the tracker would drop (procmaps.h) is not worth a batch record. */
	if (!procmaps_kept_name(name, prot, sb->data ? PROCMAPS_DATA : 0))
		return 0;
	r = add_rec(sb, h, SIDEBAND_KIND_MMAP, cpu, sizeof(*r) + name_len + 1);
	if (!r)
		return -ENOMEM;
	r->start = u64_at(h, 16);
	r->len = u64_at(h, 24);
	r->pgoff = u64_at(h, 32);
	r->maj = u32_at(h, 40);
	r->min = u32_at(h, 44);
	r->ino = u64_at(h, 48);
	r->prot = prot;
	r->flags = u32_at(h, 68);
	memcpy(r->path, name, name_len + 1);
	return 0;
}

static enum bpf_perf_event_ret on_record(void *ctx, int cpu, struct perf_event_header *h)
{
	struct sideband *sb = ctx;
	int err = 0;

	/* The kernel writes whole records; still, never read past one. */
	if (h->type == PERF_RECORD_MMAP2 && h->size >= MMAP2_FILENAME_OFF + TRAILER_SIZE + 1)
		err = add_mmap2(sb, h, (uint32_t)cpu);
	else if (h->type == PERF_RECORD_COMM && (h->misc & PERF_RECORD_MISC_COMM_EXEC) &&
		 h->size >= 16 + TRAILER_SIZE)
		err = add_rec(sb, h, SIDEBAND_KIND_EXEC, (uint32_t)cpu, sizeof(struct sideband_rec)) ?
		      0 : -ENOMEM;
	else if (h->type == PERF_RECORD_LOST && h->size >= 24)
		sb->lost += u64_at(h, 16);
	if (err) {
		sb->err = err;
		return LIBBPF_PERF_EVENT_ERROR;
	}
	return LIBBPF_PERF_EVENT_CONT;
}

int sideband_new(const int *cpus, size_t nr_cpus, struct batch *b, bool data,
		 struct sideband **out)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.size = sizeof(attr),
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.sample_id_all = 1,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.mmap_data = data,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		/* The recorder drains on its timer: wake it only when half full. */
		.watermark = 1,
		.wakeup_watermark = SIDEBAND_PAGES * 4096 / 2,
	};
	struct perf_buffer_raw_opts o = { .sz = sizeof(o) };
	struct sideband *sb;
	int *keys, err;

	*out = NULL;
	if (!nr_cpus || nr_cpus > INT32_MAX)
		return -EINVAL;
	sb = calloc(1, sizeof(*sb));
	keys = calloc(nr_cpus, sizeof(*keys));
	if (!sb || !keys) {
		free(sb);
		free(keys);
		return -ENOMEM;
	}
	sb->batch = b;
	sb->data = data;
	for (size_t i = 0; i < nr_cpus; i++)
		keys[i] = (int)i;
	/* perf_buffer keeps its per-CPU event fds in a perf event array. */
	sb->map_fd = bpf_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, "bpfrec_sideband", 4, 4,
				    (uint32_t)nr_cpus, NULL);
	if (sb->map_fd < 0) {
		err = -errno;
		goto fail;
	}
	o.cpu_cnt = (int)nr_cpus;
	o.cpus = (int *)cpus;
	o.map_keys = keys;
	sb->pb = perf_buffer__new_raw(sb->map_fd, SIDEBAND_PAGES, &attr, on_record, sb, &o);
	if (!sb->pb) {
		err = -errno ? -errno : -EINVAL;
		goto fail;
	}
	free(keys);
	*out = sb;
	return 0;
fail:
	free(keys);
	sideband_free(sb);
	return err;
}

int sideband_consume(struct sideband *sb)
{
	int n = perf_buffer__consume(sb->pb);

	if (sb->err) {
		n = sb->err;
		sb->err = 0;
	}
	return n < 0 ? n : 0;
}

int sideband_epoll_fd(const struct sideband *sb)
{
	return perf_buffer__epoll_fd(sb->pb);
}

uint64_t sideband_lost(const struct sideband *sb)
{
	return sb ? sb->lost : 0;
}

void sideband_free(struct sideband *sb)
{
	if (!sb)
		return;
	perf_buffer__free(sb->pb);
	if (sb->map_fd >= 0)
		close(sb->map_fd);
	free(sb);
}

bool sideband_record_ok(const void *rec, size_t len)
{
	const struct sideband_rec *r = rec;

	if (len < sizeof(*r))
		return false;
	if (r->hdr.kind == SIDEBAND_KIND_EXEC)
		return true;
	return r->hdr.kind == SIDEBAND_KIND_MMAP && memchr(r->path, '\0', len - sizeof(*r));
}

/* An mmap report as the task tracker takes mappings (the path stays r's). */
static struct procmaps_entry entry_of(const struct sideband_rec *r)
{
	return (struct procmaps_entry){
		.start = r->start, .end = r->start + r->len, .pgoff = r->pgoff,
		.maj = r->maj, .min = r->min, .ino = r->ino,
		.prot = r->prot, .flags = r->flags, .path = r->path,
	};
}

void sideband_apply_early(const void *rec, struct task_tracker *t)
{
	const struct sideband_rec *r = rec;
	struct procmaps_entry e = entry_of(r);

	if (r->hdr.kind == SIDEBAND_KIND_MMAP)
		task_tracker_mmap_early(t, r->hdr.pid, &e);
}

int sideband_apply(const void *rec, struct task_tracker *t, const struct task_desc **desc)
{
	const struct sideband_rec *r = rec;
	struct procmaps_entry e = entry_of(r);

	*desc = NULL;
	if (r->hdr.kind == SIDEBAND_KIND_EXEC) {
		task_tracker_exec_begin(t, r->hdr.pid, r->hdr.time);
		return 0;
	}
	/* A length that wraps is refused there, with empty ones. */
	return task_tracker_mmap(t, r->hdr.pid, r->hdr.tid, &e, r->hdr.time, r->hdr.cpu, desc);
}
