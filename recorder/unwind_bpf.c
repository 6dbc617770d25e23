// SPDX-License-Identifier: MIT
/* unwind_bpf.c - the table manager on the sampler's maps (contract in unwind_bpf.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/types.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/unwind.h"
#include "recorder/tasks.h"
#include "recorder/unwind_bpf.h"
#include "recorder/unwind_tables.h"

struct unwind_bpf {
	struct unwind_tables *tables;
	int procs_fd, stops_fd, stats_fd;
	struct unwind_row *rows;	/* the mmap()ed row store */
	size_t rows_len;		/* its length in bytes */
	uint32_t store_rows;
	int nr_cpus;
	uint64_t peak_rows, write_errors;
};

int unwind_bpf_size_maps(struct bpf_map *rows, struct bpf_map *procs, uint64_t bytes)
{
	uint64_t nr = bytes / sizeof(struct unwind_row);
	int err;

	if (!bytes) {
		err = bpf_map__set_max_entries(rows, 1);
		return err ? err : bpf_map__set_max_entries(procs, 1);
	}
	if (nr > UINT32_MAX)
		return -E2BIG;
	err = bpf_map__set_max_entries(rows, (uint32_t)nr);
	if (!err)
		err = bpf_map__set_map_flags(rows, bpf_map__map_flags(rows) | BPF_F_MMAPABLE);
	if (!err)
		err = bpf_map__set_max_entries(procs, UNWIND_BPF_MAX_PROCS);
	/* 16 KiB a process, only for the processes that have one. */
	if (!err)
		err = bpf_map__set_map_flags(procs, bpf_map__map_flags(procs) | BPF_F_NO_PREALLOC);
	return err;
}

static int store_write_rows(void *ctx, uint32_t first, const struct unwind_row *rows, uint32_t nr)
{
	struct unwind_bpf *u = ctx;

	if (first > u->store_rows || nr > u->store_rows - first)
		return -ERANGE;
	memcpy(u->rows + first, rows, (size_t)nr * sizeof(*rows));
	return 0;
}

static int store_write_proc(void *ctx, uint32_t pid, const struct unwind_proc *proc)
{
	struct unwind_bpf *u = ctx;

	if (bpf_map_update_elem(u->procs_fd, &pid, proc, BPF_ANY))
		return -errno;
	return 0;
}

static int store_delete_proc(void *ctx, uint32_t pid)
{
	struct unwind_bpf *u = ctx;

	if (bpf_map_delete_elem(u->procs_fd, &pid) && errno != ENOENT)
		return -errno;
	return 0;
}

static const struct unwind_store_ops store_ops = {
	.write_rows = store_write_rows,
	.write_proc = store_write_proc,
	.delete_proc = store_delete_proc,
};

int unwind_bpf_new(const struct unwind_bpf_opts *opts, struct unwind_bpf **out)
{
	uint64_t nr = opts->bytes / sizeof(struct unwind_row);
	struct unwind_tables_opts to = { 0 };
	long page = sysconf(_SC_PAGESIZE);
	struct unwind_bpf *u;
	int err;

	*out = NULL;
	if (!nr || nr > UINT32_MAX || page <= 0)
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->procs_fd = opts->procs_fd;
	u->stops_fd = opts->stops_fd;
	u->stats_fd = opts->stats_fd;
	u->store_rows = (uint32_t)nr;
	u->nr_cpus = libbpf_num_possible_cpus();
	u->rows_len = ((size_t)nr * sizeof(struct unwind_row) + (size_t)page - 1) &
		      ~((size_t)page - 1);
	u->rows = mmap(NULL, u->rows_len, PROT_READ | PROT_WRITE, MAP_SHARED, opts->rows_fd, 0);
	if (u->rows == MAP_FAILED) {
		err = -errno;
		u->rows = NULL;
		unwind_bpf_free(u);
		return err;
	}
	if (u->nr_cpus <= 0) {
		unwind_bpf_free(u);
		return -EINVAL;
	}
	to.proc_root = opts->proc_root;
	to.store_rows = u->store_rows;
	to.max_procs = UNWIND_BPF_MAX_PROCS;
	to.ops = &store_ops;
	to.ctx = u;
	err = unwind_tables_new(&to, &u->tables);
	if (err) {
		unwind_bpf_free(u);
		return err;
	}
	*out = u;
	return 0;
}

void unwind_bpf_free(struct unwind_bpf *u)
{
	if (!u)
		return;
	unwind_tables_free(u->tables);
	if (u->rows)
		munmap(u->rows, u->rows_len);
	free(u);
}

struct unwind_tables *unwind_bpf_tables(struct unwind_bpf *u)
{
	return u->tables;
}

static void hook_maps_changed(void *ctx, uint32_t pid, const struct procmaps_entry *maps,
			      size_t nr)
{
	struct unwind_bpf *u = ctx;
	struct unwind_tables_stats st;

	if (unwind_tables_set_proc(u->tables, pid, maps, nr))
		u->write_errors++;
	unwind_tables_stats(u->tables, &st);
	if (st.rows_used > u->peak_rows)
		u->peak_rows = st.rows_used;
}

static void hook_forget(void *ctx, uint32_t pid)
{
	struct unwind_bpf *u = ctx;

	unwind_tables_drop_proc(u->tables, pid);
}

const struct task_tracker_hooks unwind_bpf_hooks = {
	.maps_changed = hook_maps_changed,
	.forget = hook_forget,
};

/* The sum over CPUs of a per-CPU array of counters, n entries (<= max). */
static int sum_percpu(int fd, int nr_cpus, uint64_t *out, uint32_t n)
{
	uint64_t *v = calloc((size_t)nr_cpus, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (uint32_t k = 0; k < n; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(fd, &k, v)) {
			int err = -errno;

			free(v);
			return err;
		}
		for (int c = 0; c < nr_cpus; c++)
			out[k] += v[c];
	}
	free(v);
	return 0;
}

int unwind_bpf_counts(const struct unwind_bpf *u, struct unwind_bpf_counts *c)
{
	uint64_t stats[UNWIND_STAT_MAX];
	int err;

	memset(c, 0, sizeof(*c));
	_Static_assert(UNWIND_STOP_MAX <= sizeof(c->stops) / sizeof(c->stops[0]), "stops");
	err = sum_percpu(u->stops_fd, u->nr_cpus, c->stops, UNWIND_STOP_MAX);
	if (!err)
		err = sum_percpu(u->stats_fd, u->nr_cpus, stats, UNWIND_STAT_MAX);
	if (err)
		return err;
	c->walks = stats[UNWIND_STAT_WALKS];
	c->no_proc = stats[UNWIND_STAT_NO_PROC];
	c->fp_walks = stats[UNWIND_STAT_FP_WALKS];
	c->fp_frames = stats[UNWIND_STAT_FP_FRAMES];
	c->frames = stats[UNWIND_STAT_FRAMES];
	c->root = c->stops[UNWIND_STOP_ROOT];
	c->peak_rows = u->peak_rows;
	c->write_errors = u->write_errors;
	return 0;
}
