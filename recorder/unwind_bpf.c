// SPDX-License-Identifier: MIT
/* unwind_bpf.c - the table manager on the sampler's maps (contract in unwind_bpf.h). */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/types.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <bpfrec/record.h>

#include "bpf/unwind.h"
#include "recorder/percpu.h"
#include "recorder/tasks.h"
#include "recorder/unwind_bpf.h"
#include "recorder/unwind_tables.h"
#include "symbolize/cfiwalk.h"
#include "symbolize/procmaps.h"

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
	/*
	 * walk: a copied stack of (pid, tid) at time to walk with pid's
	 * tables once the jobs before it are done (unwind_bpf_walk_later());
	 * then it waits in the done list until the recorder takes its result.
	 */
	bool walk, cancelled;
	uint32_t tid;
	uint64_t time;
	struct cfi_regs regs;
	uint8_t *stack;
	size_t stack_size;
	struct cfi_walk *result;
};

/* Rows written to the store per batch update (the keys are a buffer of this many). */
#define STORE_BATCH_ROWS	8192
/*
 * Pages of tables a walk keeps mapped at once (a frame's search needs one;
 * the frames of a loop or of nearby functions share theirs).
 */
#define WALK_WINDOWS		16

/* Rows [first, first + nr) of the store, mapped read-only (one page of a table). */
struct store_window {
	void *base;
	size_t len;
	uint32_t first, nr;
	const struct unwind_row *rows;
};

struct unwind_bpf {
	/* The worker's: only the worker thread (or warm, under mgr_lock) uses it. */
	struct unwind_tables *tables;
	pthread_mutex_t mgr_lock;
	int rows_fd, procs_fd, stops_fd, stats_fd;
	uint32_t store_rows;
	uint64_t budget_bytes;		/* as given: what the store was sized from */
	uint32_t *keys;			/* STORE_BATCH_ROWS keys for batch updates */
	/*
	 * The pc of the first row of every page of the store, as last
	 * written: a walk maps the one page of a table its search needs, not
	 * the table (cc1's is 3.7 MB, all of it resident while mapped).
	 */
	uint32_t *page_pcs;
	uint32_t page_rows;		/* rows a page */
	size_t page;
	bool no_batch;			/* the kernel refused batch updates: one row a call */
	struct unwind_proc walk_proc;	/* a walk's copy of its process's entry (16 KiB) */
	struct store_window windows[WALK_WINDOWS];	/* the pages the walk in hand mapped */
	size_t nr_windows, next_window;

	/* Shared with the recorder's thread, under lock. */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_cond_t walked;		/* a walk went to the done list (CLOCK_MONOTONIC) */
	pthread_t worker;
	bool worker_started, stopping;
	struct unwind_job *head, *tail;
	struct unwind_job *busy;	/* the job the worker is on: in no list meanwhile */
	size_t queued_sets;		/* set jobs waiting */
	uint64_t requested;		/* set jobs accepted into the queue */
	uint64_t peak_rows, write_errors, jobs_dropped;
	struct unwind_tables_stats snap;	/* the manager's stats after the last job */
	size_t trimmed_at;		/* files_built when the worker last gave memory back */
	struct unwind_job *done;	/* walks done, their results not taken yet */
	size_t walks;			/* walk jobs queued, in hand or done */
	uint64_t late_walks, late_expired, late_stops[UNWIND_STOP_MAX];
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

/*
 * Rows into the store with batch updates (5.6+), STORE_BATCH_ROWS a call;
 * one row a call where the kernel refuses batches. The store is not
 * mapped into the recorder: mapped, all of it (32 MiB by default) counted
 * in its resident memory from the start, whatever the tables need.
 */
static int store_write_rows(void *ctx, uint32_t first, const struct unwind_row *rows, uint32_t nr)
{
	struct unwind_bpf *u = ctx;
	LIBBPF_OPTS(bpf_map_batch_opts, opts);

	if (first > u->store_rows || nr > u->store_rows - first)
		return -ERANGE;
	for (uint64_t i = ((uint64_t)first + u->page_rows - 1) / u->page_rows * u->page_rows;
	     i < (uint64_t)first + nr; i += u->page_rows)
		u->page_pcs[i / u->page_rows] = rows[i - first].pc;
	while (nr) {
		uint32_t n = nr < STORE_BATCH_ROWS ? nr : STORE_BATCH_ROWS, count = n;

		for (uint32_t i = 0; i < n; i++)
			u->keys[i] = first + i;
		if (u->no_batch || bpf_map_update_batch(u->rows_fd, u->keys, rows, &count, &opts)) {
			if (!u->no_batch && errno != EINVAL && errno != ENOTSUP && errno != EOPNOTSUPP)
				return -errno;
			u->no_batch = true;
			for (uint32_t i = 0; i < n; i++)
				if (bpf_map_update_elem(u->rows_fd, &u->keys[i], &rows[i], BPF_ANY))
					return -errno;
		}
		first += n;
		rows += n;
		nr -= n;
	}
	return 0;
}

/* Map store rows [first, first + nr) read-only: 0 or -errno. */
static int window_map(struct unwind_bpf *u, uint32_t first, uint32_t nr, struct store_window *w)
{
	uint64_t page = u->page;
	uint64_t start = (uint64_t)first * sizeof(struct unwind_row);
	uint64_t end = ((uint64_t)first + nr) * sizeof(struct unwind_row);
	uint64_t off = start / page * page;
	void *base;

	if (first > u->store_rows || nr > u->store_rows - first || !nr)
		return -ERANGE;
	base = mmap(NULL, end - off, PROT_READ, MAP_SHARED, u->rows_fd, (off_t)off);
	if (base == MAP_FAILED)
		return -errno;
	*w = (struct store_window){ .base = base, .len = end - off, .first = first, .nr = nr,
				    .rows = (const void *)((const char *)base + (start - off)) };
	return 0;
}

static void window_unmap(struct store_window *w)
{
	if (w->base)
		munmap(w->base, w->len);
	w->base = NULL;
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
	struct unwind_bpf *u;
	int err;

	*out = NULL;
	if (!nr || nr > UINT32_MAX)
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	pthread_mutex_init(&u->mgr_lock, NULL);
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->wake, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&u->walked, &ca);
		pthread_condattr_destroy(&ca);
	}
	u->rows_fd = opts->rows_fd;
	u->procs_fd = opts->procs_fd;
	u->stops_fd = opts->stops_fd;
	u->stats_fd = opts->stats_fd;
	u->store_rows = (uint32_t)nr;
	u->budget_bytes = opts->bytes;
	u->keys = malloc(STORE_BATCH_ROWS * sizeof(*u->keys));
	u->page = (size_t)sysconf(_SC_PAGESIZE);
	u->page_rows = (uint32_t)(u->page / sizeof(struct unwind_row));
	/* 4 bytes a page of the store: 32 KiB for the default 32 MiB, touched as it fills. */
	u->page_pcs = calloc(nr / u->page_rows + 1, sizeof(*u->page_pcs));
	if (!u->keys || !u->page_pcs) {
		unwind_bpf_free(u);
		return -ENOMEM;
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
	while (u->done) {
		struct unwind_job *j = u->done;

		u->done = j->next;
		job_free(j);
	}
	pthread_cond_destroy(&u->wake);
	pthread_cond_destroy(&u->walked);
	pthread_mutex_destroy(&u->lock);
	pthread_mutex_destroy(&u->mgr_lock);
	unwind_tables_free(u->tables);
	free(u->keys);
	free(u->page_pcs);
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

/* ---- the worker: builds tables off the recorder's thread ------------------- */

static void job_free(struct unwind_job *j)
{
	free(j->maps);
	free(j->strings);
	free(j->stack);
	free(j->result);
	free(j);
}

/* A set job: a process's mappings to load (not a drop, not a walk). */
static bool is_set(const struct unwind_job *j)
{
	return !j->drop && !j->walk;
}

/*
 * Put the set job j where pid's waiting set job is (lock held): a newer
 * description supersedes it in its place, so a walk queued behind the old
 * one still runs after pid's mappings are loaded. true when it did.
 */
static bool replace_set(struct unwind_bpf *u, struct unwind_job *j)
{
	for (struct unwind_job **pp = &u->head; *pp; pp = &(*pp)->next) {
		struct unwind_job *old = *pp;

		if (old->pid != j->pid || !is_set(old))
			continue;
		j->next = old->next;
		*pp = j;
		if (u->tail == old)
			u->tail = j;
		job_free(old);
		return true;
	}
	return false;
}

/* Take pid's waiting set jobs out of the queue (lock held): pid is forgotten. */
static void unqueue_sets(struct unwind_bpf *u, uint32_t pid)
{
	struct unwind_job **pp = &u->head, *prev = NULL;

	while (*pp) {
		struct unwind_job *j = *pp;

		if (j->pid == pid && is_set(j)) {
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
	if (j && j->drop)
		unqueue_sets(u, j->pid);
	if (j && is_set(j) && replace_set(u, j)) {
		u->requested++;
		pthread_mutex_unlock(&u->lock);
		return;
	}
	if (!j || (is_set(j) && u->queued_sets >= UNWIND_BPF_MAX_QUEUED)) {
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
	u->queued_sets += is_set(j);
	u->requested += is_set(j);
	pthread_cond_signal(&u->wake);
	pthread_mutex_unlock(&u->lock);
}

/*
 * Queue the walk job j where it runs soonest with its process's tables
 * (lock held). pid's waiting set job moves to the front with the walk
 * right behind it, unless a drop of pid is queued before it (the set is
 * then a new process's of the same pid); with no set job of pid waiting
 * (its tables are in, or being built now) the walk goes first. A sample
 * waiting for its walk holds up the recording, and its process is one
 * being sampled; the tables of the others only wait a little longer.
 */
static void enqueue_walk(struct unwind_bpf *u, struct unwind_job *j)
{
	struct unwind_job *set = NULL, *set_prev = NULL, *prev = NULL;
	bool dropped = false;

	for (struct unwind_job *q = u->head; q; prev = q, q = q->next) {
		if (q->pid != j->pid)
			continue;
		if (q->drop) {
			dropped = true;
		} else if (is_set(q)) {
			set = q;
			set_prev = prev;
			break;
		}
	}
	if (set && !dropped && set_prev) {
		set_prev->next = set->next;
		if (u->tail == set)
			u->tail = set_prev;
		set->next = u->head;
		u->head = set;
	}
	if (set) {
		j->next = set->next;
		set->next = j;
		if (u->tail == set)
			u->tail = j;
	} else {
		j->next = u->head;
		u->head = j;
		if (!u->tail)
			u->tail = j;
	}
	pthread_cond_signal(&u->wake);
}

int unwind_bpf_walk_later(struct unwind_bpf *u, uint32_t pid, uint32_t tid, uint64_t time,
			  const struct cfi_regs *regs, const struct cfi_stack *stack)
{
	struct unwind_job *j;

	pthread_mutex_lock(&u->lock);
	if (u->walks >= UNWIND_BPF_MAX_WALKS) {
		pthread_mutex_unlock(&u->lock);
		return -EBUSY;
	}
	u->walks++;
	pthread_mutex_unlock(&u->lock);
	j = calloc(1, sizeof(*j));
	if (j) {
		j->stack = malloc(stack->size ? stack->size : 1);
		j->result = malloc(sizeof(*j->result));
	}
	if (!j || !j->stack || !j->result) {
		if (j)
			job_free(j);
		pthread_mutex_lock(&u->lock);
		u->walks--;
		pthread_mutex_unlock(&u->lock);
		return -ENOMEM;
	}
	j->walk = true;
	j->pid = pid;
	j->tid = tid;
	j->time = time;
	j->regs = *regs;
	memcpy(j->stack, stack->data, stack->size);
	j->stack_size = stack->size;
	pthread_mutex_lock(&u->lock);
	enqueue_walk(u, j);
	pthread_mutex_unlock(&u->lock);
	return 0;
}

/* Whether j is the walk job of the sample of tid at time. */
static bool is_walk_of(const struct unwind_job *j, uint32_t tid, uint64_t time)
{
	return j && j->walk && j->tid == tid && j->time == time;
}

/* The walk job of (tid, time) in list *pp, as the link that points to it, or NULL (lock held). */
static struct unwind_job **find_walk(struct unwind_job **pp, uint32_t tid, uint64_t time)
{
	for (; *pp; pp = &(*pp)->next)
		if (is_walk_of(*pp, tid, time))
			return pp;
	return NULL;
}

/* The walk of (tid, time) is queued or being walked (lock held). */
static bool walk_pending(struct unwind_bpf *u, uint32_t tid, uint64_t time)
{
	return find_walk(&u->head, tid, time) || is_walk_of(u->busy, tid, time);
}

int unwind_bpf_walk_done(struct unwind_bpf *u, uint32_t tid, uint64_t time,
			 uint64_t wait_ns, struct cfi_walk *out)
{
	struct unwind_job **pp, *j;
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)(wait_ns / 1000000000);
	until.tv_nsec += (long)(wait_ns % 1000000000);
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&u->lock);
	while (!(pp = find_walk(&u->done, tid, time))) {
		bool waiting = walk_pending(u, tid, time);

		if (!waiting || !wait_ns ||
		    pthread_cond_timedwait(&u->walked, &u->lock, &until) == ETIMEDOUT) {
			pthread_mutex_unlock(&u->lock);
			return waiting ? 0 : -ENOENT;
		}
	}
	j = *pp;
	*pp = j->next;
	u->walks--;
	*out = *j->result;
	u->late_walks++;
	if ((unsigned int)out->stop < UNWIND_STOP_MAX)
		u->late_stops[out->stop]++;
	pthread_mutex_unlock(&u->lock);
	job_free(j);
	return 1;
}

bool unwind_bpf_walk_soon(struct unwind_bpf *u, uint32_t tid, uint64_t time)
{
	bool soon;

	pthread_mutex_lock(&u->lock);
	soon = is_walk_of(u->head, tid, time) && (!u->busy || u->busy->walk);
	pthread_mutex_unlock(&u->lock);
	return soon;
}

bool unwind_bpf_walk_pending(struct unwind_bpf *u, uint32_t tid, uint64_t time)
{
	bool pending;

	pthread_mutex_lock(&u->lock);
	pending = walk_pending(u, tid, time);
	pthread_mutex_unlock(&u->lock);
	return pending;
}

void unwind_bpf_walk_cancel(struct unwind_bpf *u, uint32_t tid, uint64_t time)
{
	struct unwind_job **pp, *j = NULL;

	pthread_mutex_lock(&u->lock);
	u->late_expired++;
	pp = find_walk(&u->head, tid, time);
	if (pp) {
		j = *pp;
		*pp = j->next;
		if (u->tail == j) {
			struct unwind_job *t = u->head;

			while (t && t->next)
				t = t->next;
			u->tail = t;
		}
	} else if ((pp = find_walk(&u->done, tid, time))) {
		j = *pp;
		*pp = j->next;
	} else if (is_walk_of(u->busy, tid, time)) {
		u->busy->cancelled = true;	/* the worker drops it when done */
	}
	if (j)
		u->walks--;
	pthread_mutex_unlock(&u->lock);
	if (j)
		job_free(j);
}

/*
 * The rows of a mapping of the walked process to search for key, mapped
 * from the store when the manager has a table exactly there: one page of
 * them (cfi_page_run()), kept mapped for the rest of the walk (the oldest
 * window goes when WALK_WINDOWS are: the walker uses the rows of one frame
 * at a time).
 */
static const struct unwind_row *manager_rows(void *ctx, const struct unwind_mapping *m,
					     uint32_t key, uint32_t *nr)
{
	struct unwind_bpf *u = ctx;
	struct store_window *w;
	uint32_t first, n;

	if (!unwind_tables_placed_at(u->tables, m->first_row, m->nr_rows))
		return NULL;
	cfi_page_run(u->page_pcs, u->page_rows, m->first_row, m->nr_rows, key, &first, &n);
	*nr = n;
	for (size_t i = 0; i < u->nr_windows; i++)
		if (u->windows[i].first == first && u->windows[i].nr == n)
			return u->windows[i].rows;
	if (u->nr_windows < WALK_WINDOWS) {
		w = &u->windows[u->nr_windows++];
	} else {
		w = &u->windows[u->next_window];
		u->next_window = (u->next_window + 1) % WALK_WINDOWS;
		window_unmap(w);
	}
	if (window_map(u, first, n, w)) {
		*w = u->windows[--u->nr_windows];	/* keep the windows in use packed */
		return NULL;
	}
	return w->rows;
}

/*
 * A walk job, on the worker's thread with the manager's lock held: pid's
 * entry as the kernel has it (none: frame pointers only), the rows from
 * the manager's copies of the tables it names.
 */
static void walk_job(struct unwind_bpf *u, struct unwind_job *j)
{
	struct unwind_proc *p = &u->walk_proc;
	struct cfi_stack stack = { .base = j->regs.sp, .data = j->stack, .size = j->stack_size };
	uint32_t nr = 0;

	if (!bpf_map_lookup_elem(u->procs_fd, &j->pid, p))
		nr = p->nr < UNWIND_MAX_MAPPINGS ? p->nr : UNWIND_MAX_MAPPINGS;
	cfi_walk_stack_with(manager_rows, u, p->maps, nr, &j->regs, &stack, j->result);
	for (size_t i = 0; i < u->nr_windows; i++)
		window_unmap(&u->windows[i]);
	u->nr_windows = 0;
	u->next_window = 0;
}

static void *worker_main(void *arg)
{
	struct unwind_bpf *u = arg;

	for (;;) {
		struct unwind_tables_stats st;
		struct unwind_job *j;
		bool trim;
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
		u->queued_sets -= is_set(j);
		u->busy = j;
		pthread_mutex_unlock(&u->lock);

		pthread_mutex_lock(&u->mgr_lock);
		if (j->walk)
			walk_job(u, j);
		else if (j->drop)
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
		u->busy = NULL;
		if (j->walk && !j->cancelled) {
			j->next = u->done;	/* the recorder takes it (unwind_bpf_walk_done) */
			u->done = j;
			j = NULL;
			pthread_cond_broadcast(&u->walked);
		} else if (j->walk) {
			u->walks--;
		}
		/*
		 * libdw frees what it took to build a table, and glibc keeps the
		 * pages in this thread's arena (megabytes for libc or python3):
		 * give them back after every job that built one (a build takes
		 * tens of milliseconds, the trim well under one), not only when
		 * the queue is empty: system-wide on a busy machine it seldom is.
		 */
		trim = st.files_built != u->trimmed_at;
		if (trim)
			u->trimmed_at = st.files_built;
		pthread_mutex_unlock(&u->lock);
		if (j)
			job_free(j);
		if (trim)
			malloc_trim(0);
	}
}

static void hook_maps_changed(void *ctx, uint32_t pid, const struct procmaps_entry *maps,
			      struct task_file *const *files, size_t nr)
{
	struct unwind_bpf *u = ctx;
	struct unwind_job *j = calloc(1, sizeof(*j));
	size_t len = 0, off = 0;

	(void)files;	/* the worker opens what it builds from, on its own thread */
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

	*out = (struct bpfrec_unwind_stats){ .sz = sizeof(*out), .enabled = true };
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
