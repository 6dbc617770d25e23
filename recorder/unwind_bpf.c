// SPDX-License-Identifier: MIT
/* unwind_bpf.c - the table manager on the sampler's maps (contract in unwind_bpf.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/types.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <bpfrec/record.h>

#include "bpf/unwind.h"
#include "recorder/percpu.h"
#include "recorder/procmaps.h"
#include "recorder/tasks.h"
#include "recorder/unwind_bpf.h"
#include "recorder/unwind_tables.h"
#include "symbolize/cfiwalk.h"

/*
 * A process's mappings to give the manager, or (drop) a process to forget.
 * maps[].path point into strings, the job's own copy.
 */
struct unwind_job {
	struct unwind_job *next;
	uint32_t pid;
	bool drop;
	size_t nr;
	struct procmaps_entry *maps;
	char *strings;
};

struct unwind_bpf {
	/* The worker's: only the worker thread (or warm, under mgr_lock) uses it. */
	struct unwind_tables *tables;
	pthread_mutex_t mgr_lock;
	int procs_fd, stops_fd, stats_fd;
	struct unwind_row *rows;	/* the mmap()ed row store */
	size_t rows_len;		/* its length in bytes */
	uint32_t store_rows;
	uint64_t budget_bytes;		/* as given: what the store was sized from */

	/* Shared with the recorder's thread, under lock. */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t worker;
	bool worker_started, stopping;
	struct unwind_job *head, *tail;
	size_t queued_sets;		/* set jobs waiting */
	uint64_t requested;		/* set jobs accepted into the queue */
	uint64_t peak_rows, write_errors, jobs_dropped;
	struct unwind_tables_stats snap;	/* the manager's stats after the last job */
	uint32_t busy_pid;		/* the set job the worker is on, when busy */
	bool busy;

	/* The recorder thread's only: user-space walks of late samples. */
	uint64_t late_walks, late_expired, late_stops[UNWIND_STOP_MAX];
	struct unwind_proc late_proc;	/* a copy of the entry walked with (16 KiB) */
};

static void *worker_main(void *arg);
static void job_free(struct unwind_job *j);

int unwind_bpf_size_maps(struct bpf_map *rows, struct bpf_map *procs, uint64_t bytes,
			 bool preallocated)
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
		err = bpf_map__set_max_entries(procs, preallocated ? UNWIND_BPF_MAX_PROCS_PREALLOC :
								     UNWIND_BPF_MAX_PROCS);
	/* 16 KiB a process, only for the processes that have one. */
	if (!err && !preallocated)
		err = bpf_map__set_map_flags(procs, bpf_map__map_flags(procs) | BPF_F_NO_PREALLOC);
	return err;
}

int unwind_bpf_share_maps(struct bpf_map *rows, struct bpf_map *procs, struct bpf_map *stops,
			  struct bpf_map *stats, bool share, int rows_fd, int procs_fd,
			  int stops_fd, int stats_fd)
{
	int err;

	if (!share)
		return unwind_bpf_size_maps(rows, procs, 0, true);
	err = bpf_map__reuse_fd(rows, rows_fd);
	if (!err)
		err = bpf_map__reuse_fd(procs, procs_fd);
	if (!err)
		err = bpf_map__reuse_fd(stops, stops_fd);
	return err ? err : bpf_map__reuse_fd(stats, stats_fd);
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
	pthread_mutex_init(&u->mgr_lock, NULL);
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->wake, NULL);
	u->procs_fd = opts->procs_fd;
	u->stops_fd = opts->stops_fd;
	u->stats_fd = opts->stats_fd;
	u->store_rows = (uint32_t)nr;
	u->budget_bytes = opts->bytes;
	u->rows_len = ((size_t)nr * sizeof(struct unwind_row) + (size_t)page - 1) &
		      ~((size_t)page - 1);
	u->rows = mmap(NULL, u->rows_len, PROT_READ | PROT_WRITE, MAP_SHARED, opts->rows_fd, 0);
	if (u->rows == MAP_FAILED) {
		err = -errno;
		u->rows = NULL;
		unwind_bpf_free(u);
		return err;
	}
	to.proc_root = opts->proc_root;
	to.store_rows = u->store_rows;
	to.max_procs = opts->max_procs ? opts->max_procs : UNWIND_BPF_MAX_PROCS;
	to.ops = &store_ops;
	to.ctx = u;
	err = unwind_tables_new(&to, &u->tables);
	if (!err)
		err = -pthread_create(&u->worker, NULL, worker_main, u);
	if (err) {
		unwind_bpf_free(u);
		return err;
	}
	u->worker_started = true;
	*out = u;
	return 0;
}

void unwind_bpf_free(struct unwind_bpf *u)
{
	if (!u)
		return;
	if (u->worker_started) {
		pthread_mutex_lock(&u->lock);
		u->stopping = true;
		pthread_cond_signal(&u->wake);
		pthread_mutex_unlock(&u->lock);
		pthread_join(u->worker, NULL);
	}
	while (u->head) {
		struct unwind_job *j = u->head;

		u->head = j->next;
		job_free(j);
	}
	pthread_cond_destroy(&u->wake);
	pthread_mutex_destroy(&u->lock);
	pthread_mutex_destroy(&u->mgr_lock);
	unwind_tables_free(u->tables);
	if (u->rows)
		munmap(u->rows, u->rows_len);
	free(u);
}

int unwind_bpf_warm(struct unwind_bpf *u, int fd)
{
	int err;

	pthread_mutex_lock(&u->mgr_lock);
	err = unwind_tables_warm(u->tables, fd);
	pthread_mutex_lock(&u->lock);
	unwind_tables_stats(u->tables, &u->snap);
	pthread_mutex_unlock(&u->lock);
	pthread_mutex_unlock(&u->mgr_lock);
	return err;
}

uint64_t unwind_bpf_requests(struct unwind_bpf *u)
{
	uint64_t n;

	pthread_mutex_lock(&u->lock);
	n = u->requested;
	pthread_mutex_unlock(&u->lock);
	return n;
}

bool unwind_bpf_pending(struct unwind_bpf *u, uint32_t pid)
{
	bool pending;

	pthread_mutex_lock(&u->lock);
	pending = u->busy && u->busy_pid == pid;
	for (const struct unwind_job *j = u->head; j && !pending; j = j->next)
		pending = j->pid == pid && !j->drop;
	pthread_mutex_unlock(&u->lock);
	return pending;
}

void unwind_bpf_walk(struct unwind_bpf *u, uint32_t pid, const struct cfi_regs *regs,
		     const struct cfi_stack *stack, bool expired, struct cfi_walk *out)
{
	struct unwind_proc *p = &u->late_proc;
	uint32_t nr = 0;

	/*
	 * The kernel's copy of the entry, whole (a lookup copies it under
	 * the map's lock); the rows are read live, as the BPF walker reads
	 * them, and a range rewritten meanwhile gives a bounded bad frame.
	 */
	if (!bpf_map_lookup_elem(u->procs_fd, &pid, p))
		nr = p->nr < UNWIND_MAX_MAPPINGS ? p->nr : UNWIND_MAX_MAPPINGS;
	cfi_walk_stack(u->rows, u->rows ? u->store_rows : 0, p->maps, nr, regs, stack, out);
	u->late_walks++;
	u->late_expired += expired;
	if ((unsigned int)out->stop < UNWIND_STOP_MAX)
		u->late_stops[out->stop]++;
}

/* ---- the worker: builds tables off the recorder's thread ------------------- */

static void job_free(struct unwind_job *j)
{
	free(j->maps);
	free(j->strings);
	free(j);
}

/* Take pid's waiting set jobs out of the queue (lock held): a newer job supersedes them. */
static void unqueue_sets(struct unwind_bpf *u, uint32_t pid)
{
	struct unwind_job **pp = &u->head, *prev = NULL;

	while (*pp) {
		struct unwind_job *j = *pp;

		if (j->pid == pid && !j->drop) {
			*pp = j->next;
			u->queued_sets--;
			job_free(j);
			continue;
		}
		prev = j;
		pp = &j->next;
	}
	u->tail = prev;
}

/* Queue j for the worker; NULL (no memory for one) or too many waiting: counted as dropped. */
static void enqueue(struct unwind_bpf *u, struct unwind_job *j)
{
	pthread_mutex_lock(&u->lock);
	if (j)
		unqueue_sets(u, j->pid);
	if (!j || (!j->drop && u->queued_sets >= UNWIND_BPF_MAX_QUEUED)) {
		/* A storm of new processes: this one keeps frame pointers, counted. */
		u->jobs_dropped++;
		pthread_mutex_unlock(&u->lock);
		if (j)
			job_free(j);
		return;
	}
	if (u->tail)
		u->tail->next = j;
	else
		u->head = j;
	u->tail = j;
	u->queued_sets += !j->drop;
	u->requested += !j->drop;
	pthread_cond_signal(&u->wake);
	pthread_mutex_unlock(&u->lock);
}

static void *worker_main(void *arg)
{
	struct unwind_bpf *u = arg;

	for (;;) {
		struct unwind_tables_stats st;
		struct unwind_job *j;
		int err = 0;

		pthread_mutex_lock(&u->lock);
		while (!u->head && !u->stopping)
			pthread_cond_wait(&u->wake, &u->lock);
		if (u->stopping) {
			pthread_mutex_unlock(&u->lock);
			return NULL;
		}
		j = u->head;
		u->head = j->next;
		if (!u->head)
			u->tail = NULL;
		u->queued_sets -= !j->drop;
		u->busy = !j->drop;
		u->busy_pid = j->pid;
		pthread_mutex_unlock(&u->lock);

		pthread_mutex_lock(&u->mgr_lock);
		if (j->drop)
			unwind_tables_drop_proc(u->tables, j->pid);
		else
			err = unwind_tables_set_proc(u->tables, j->pid, j->maps, j->nr);
		unwind_tables_stats(u->tables, &st);
		pthread_mutex_unlock(&u->mgr_lock);

		pthread_mutex_lock(&u->lock);
		u->snap = st;
		if (st.rows_used > u->peak_rows)
			u->peak_rows = st.rows_used;
		u->write_errors += err != 0;
		u->busy = false;
		pthread_mutex_unlock(&u->lock);
		job_free(j);
	}
}

static void hook_maps_changed(void *ctx, uint32_t pid, const struct procmaps_entry *maps,
			      size_t nr)
{
	struct unwind_bpf *u = ctx;
	struct unwind_job *j = calloc(1, sizeof(*j));
	size_t len = 0, off = 0;

	for (size_t i = 0; i < nr; i++)
		len += strlen(maps[i].path) + 1;
	if (j) {
		j->maps = calloc(nr ? nr : 1, sizeof(*j->maps));
		j->strings = malloc(len ? len : 1);
	}
	if (!j || !j->maps || !j->strings) {
		if (j)
			job_free(j);
		enqueue(u, NULL);
		return;
	}
	j->pid = pid;
	j->nr = nr;
	for (size_t i = 0; i < nr; i++) {
		size_t n = strlen(maps[i].path) + 1;

		j->maps[i] = maps[i];
		memcpy(j->strings + off, maps[i].path, n);
		j->maps[i].path = j->strings + off;
		off += n;
	}
	enqueue(u, j);
}

static void hook_forget(void *ctx, uint32_t pid)
{
	struct unwind_bpf *u = ctx;
	struct unwind_job *j = calloc(1, sizeof(*j));

	/* Without memory its entry stays until the pid's next description replaces it. */
	if (j) {
		j->pid = pid;
		j->drop = true;
	}
	enqueue(u, j);
}

const struct task_tracker_hooks unwind_bpf_hooks = {
	.maps_changed = hook_maps_changed,
	.forget = hook_forget,
};

/* Entries [0, n) of a per-CPU counter map, each summed over CPUs. */
static int sum_entries(int fd, uint64_t *out, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		int err = percpu_sum(fd, k, &out[k]);

		if (err)
			return err;
	}
	return 0;
}

int unwind_bpf_stats(struct unwind_bpf *u, struct bpfrec_unwind_stats *out)
{
	uint64_t stats[UNWIND_STAT_MAX], stops[UNWIND_STOP_MAX];
	int err;

	memset(out, 0, sizeof(*out));
	out->enabled = true;
	out->budget_bytes = u->budget_bytes;
	pthread_mutex_lock(&u->lock);
	out->tables_built = u->snap.files_built;
	out->over_budget = u->snap.mappings_over_budget;
	out->no_cfi = u->snap.files_no_cfi;
	out->peak_bytes = u->peak_rows * sizeof(struct unwind_row);
	out->not_loaded = u->write_errors + u->jobs_dropped;
	pthread_mutex_unlock(&u->lock);
	err = sum_entries(u->stops_fd, stops, UNWIND_STOP_MAX);
	if (!err)
		err = sum_entries(u->stats_fd, stats, UNWIND_STAT_MAX);
	if (err)
		return err;
	memcpy(out->stops, stops, sizeof(stops));
	out->walks = stats[UNWIND_STAT_WALKS];
	out->root = stops[UNWIND_STOP_ROOT];
	out->fp_walks = stats[UNWIND_STAT_FP_WALKS];
	out->fp_frames = stats[UNWIND_STAT_FP_FRAMES];
	out->no_proc = stats[UNWIND_STAT_NO_PROC];
	out->frames = stats[UNWIND_STAT_FRAMES];
	out->late_walks = u->late_walks;
	out->late_expired = u->late_expired;
	memcpy(out->late_stops, u->late_stops, sizeof(u->late_stops));
	return 0;
}
