// SPDX-License-Identifier: MIT
/*
 * tasks.c - the task tracker of tasks.h: describe each process the first
 * time one of its samples is written (COMM, MMAP2 with build-ids), and again
 * when it changes (dlopen, exec), reading only /proc/PID of that process.
 *
 * State, all bounded:
 *   - processes (by pid) and threads (by tid) in two LRU tables (lru.h),
 *     at most max_pids entries apiece; the least recently seen
 *     is evicted (and simply described again should it come back). A thread
 *     belongs to one process and goes with it.
 *   - per process, its executable mappings sorted by start, so "is this ip
 *     mapped" is a binary search: it runs for every user ip of every sample.
 *   - mapped files by (device, inode, path), shared by the processes that map
 *     them, so each file's build-id is read once (taskfiles.h).
 *
 * Change detection:
 *   - an ip outside every known mapping re-reads the maps, at most once per
 *     REREAD_MIN_NS of sample time per process, backing off up to
 *     REREAD_MAX_NS while re-reads find nothing (garbage frame-pointer ips);
 *     pages found unmapped are remembered for UNMAPPED_TTL_NS so a region the
 *     maps do not describe costs nothing per sample;
 *   - a new comm on a thread: a COMM. On the main thread it may be an exec:
 *     the maps are re-read, and if a known mapping is gone the address space
 *     was replaced: COMM with the exec flag and a fresh set of MMAP2s. A
 *     rename (prctl PR_SET_NAME) keeps its mappings and gets a plain COMM;
 *     a non-main thread cannot exec (exec makes the thread the leader).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "recorder/buildid_cache.h"
#include "recorder/lru.h"
#include "recorder/privs.h"
#include "recorder/taskdesc.h"
#include "recorder/taskfiles.h"
#include "recorder/tasks.h"
#include "symbolize/buildid.h"
#include "symbolize/procmaps.h"
#include "symbolize/safeopen.h"
#include "symbolize/vdso.h"
#include "tools/lib/clock.h"
#include "tools/lib/hash.h"
#include "tools/lib/sorted.h"

#define DEFAULT_MAX_PIDS	65536
/* Files kept open for the build-id cache (taskfiles.h): at most this many... */
#define KEPT_FILES_MAX		256

/* ...and a quarter of the fds the process may open, for everything else it opens. */
static size_t kept_files_max(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur / 4 >= KEPT_FILES_MAX)
		return KEPT_FILES_MAX;
	return (size_t)(rl.rlim_cur / 4);
}
#define COMM_LEN		16	/* the kernel's TASK_COMM_LEN, NUL included */
#define REREAD_MIN_NS		(100ull * 1000000)
#define REREAD_MAX_NS		(1600ull * 1000000)
#define UNMAPPED_SLOTS		32
#define UNMAPPED_TTL_NS		(1000ull * 1000000)
#define UNMAPPED_PAGE_SHIFT	12
/* Mappings the kernel may report for a process before its first sample. */
#define PENDING_MAX_MAPS	4096

/* ---- tracker state ------------------------------------------------------- */

struct task_map {
	uint64_t start, end, pgoff;
	uint32_t prot, flags;
	struct task_file *file;
};

struct task_proc {
	struct lru_entry e;	/* key: pid */
	struct lru_link threads;	/* its task_thread.sibling */
	/*
	 * Sorted by start, disjoint. Before the first sample (!described) the
	 * mappings the kernel reported (task_tracker_mmap()), nothing written
	 * yet; complete when they started with the exec of this image.
	 */
	struct task_map *maps;
	size_t nr_maps;
	bool described;		/* COMM and MMAP2s are in the file */
	uint64_t described_time;	/* the earliest time they are stamped with */
	/*
	 * Tracked when the current file began (task_tracker_new_file()) and
	 * not exec'd since (an exec makes a new entry): every sample of it in
	 * this file, however early, is of the image it runs now.
	 */
	bool carried;
	bool complete;
	bool exec_reported;	/* task_tracker_exec_begin() saw this image's exec */
	bool execd;		/* this image began with an exec: its COMM says so */
	bool hooked;		/* hooks->maps_changed was told about it */
	/*
	 * When the mappings held were read from /proc (opts.now; 0: never):
	 * an exec before it, reported in its turn, is already in them.
	 */
	uint64_t maps_read_time;
	uint64_t next_reread, reread_interval;
	/* Pages (ip >> 12) found outside every mapping by the last re-reads. */
	uint64_t unmapped[UNMAPPED_SLOTS];
	unsigned int nr_unmapped, unmapped_next;
	uint64_t unmapped_since;
};

struct task_thread {
	struct lru_entry e;	/* key: tid */
	struct lru_link sibling;
	struct task_proc *proc;
	char comm[COMM_LEN];	/* the comm the file has for it */
};

/* Pids whose exec was reported but whose new image is not described yet. */
#define EXEC_PENDING_SLOTS 64

struct task_tracker {
	struct task_desc desc;		/* what the current call found the file lacks */
	bool track_all;
	uint64_t round;		/* task_tracker_round_end() calls so far */
	struct buildid_cache *cache;	/* NULL: no copies */
	uint32_t exec_pending[EXEC_PENDING_SLOTS];
	unsigned int exec_pending_next;
	char *proc_root;
	uint64_t (*now)(void);	/* opts.now */
	size_t max_pids;
	unsigned int maps_flags;	/* PROCMAPS_DATA with data_maps */
	struct lru_table procs, threads;
	struct task_files files;	/* the mapped files (taskfiles.h) */
	struct task_tracker_denied denied;
	const struct task_tracker_hooks *hooks;
	void *hooks_ctx;
	bool freeing;		/* task_tracker_free(): the processes live on */
};

/* procmaps_read(), remembering a refusal: the caller goes on as if pid were gone. */
static int read_maps(struct task_tracker *t, uint32_t pid, struct procmaps *pm)
{
	int err = procmaps_read(t->proc_root, pid, t->maps_flags, pm);

	if (privs_is_denial(err) && !t->denied.maps++) {
		t->denied.maps_pid = pid;
		t->denied.maps_err = err;
	}
	return err;
}

/*
 * read_maps() of p, remembering when: an exec reported before that is in
 * what it read (exec_already_read(), which asks only of a process not yet
 * described: the read ahead of task_tracker_prefetch()).
 */
static int read_maps_of(struct task_tracker *t, struct task_proc *p, struct procmaps *pm)
{
	uint64_t at = t->now();
	int err = read_maps(t, p->e.key, pm);

	if (!err)
		p->maps_read_time = at;
	return err;
}

/*
 * Hand the file of mapping m in pid to the build-id cache, opened again
 * through the process's root and checked against the maps line (the
 * build-id read earlier came from a file that is closed now).
 */
static void cache_file(struct task_tracker *t, uint32_t pid, const struct task_map *m)
{
	struct task_file *f = m->file;
	/* The file its build-id was read from, while pid lived (taskfiles.h). */
	int fd = task_file_take_fd(&t->files, f);

	/* Every new file lists the build-ids again: the cache has most of them already. */
	if (buildid_cache_has(t->cache, f->build_id, f->build_id_size)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	if (fd >= 0) {
		buildid_cache_add(t->cache, f->path, f->build_id, f->build_id_size, fd);
		return;
	}
	if (!strcmp(f->path, "[vdso]")) {
		/* The image is ours too: read_build_id() took our own vDSO's build-id. */
		if (!vdso_open_self(&fd))
			buildid_cache_add(t->cache, f->path, f->build_id, f->build_id_size, fd);
		return;
	}
	if (!safeopen_mapped(t->proc_root, pid, m->start, m->end, f->path, f->maj, f->min, f->ino,
			     &fd, NULL))
		buildid_cache_add(t->cache, f->path, f->build_id, f->build_id_size, fd);
}

/*
 * A sample of pid hit mapping m: its file's build-id goes to the BUILD_ID
 * list, and the file to the build-id cache, once.
 */
static int file_hit(struct task_tracker *t, uint32_t pid, const struct task_map *m)
{
	struct task_file *f = m->file;
	int err;

	if (f->registered || !f->build_id_size)
		return 0;
	err = task_desc_add_build_id(&t->desc, f->build_id, f->build_id_size, f->path);
	if (err)
		return err;
	f->registered = true;
	if (t->cache)
		cache_file(t, pid, m);
	return 0;
}

/* ---- the description: what the file lacks (emit.h writes it) ---------------- */

static struct perfdata_sample_id sample_id(uint32_t pid, uint32_t tid, uint64_t time,
					   uint32_t cpu)
{
	return (struct perfdata_sample_id){ .pid = pid, .tid = tid, .time = time, .cpu = cpu };
}

static int write_comm(struct task_tracker *t, uint32_t pid, uint32_t tid, const char *comm,
		      bool exec, uint64_t time, uint32_t cpu)
{
	struct perfdata_comm c = { .pid = pid, .tid = tid, .exec = exec, .comm = comm };
	struct perfdata_sample_id sid = sample_id(pid, tid, time, cpu);

	return task_desc_add_comm(&t->desc, c.pid, c.tid, c.comm, c.exec, sid.time, sid.cpu);
}

static int write_mmap2(struct task_tracker *t, uint32_t pid, uint32_t tid,
		       const struct task_map *m, uint64_t time, uint32_t cpu)
{
	const struct task_file *f = m->file;
	struct perfdata_sample_id sid = sample_id(pid, tid, time, cpu);
	struct perfdata_mmap r = {
		.misc = PERF_RECORD_MISC_USER,
		.pid = pid,
		.tid = tid,
		.start = m->start,
		.len = m->end - m->start,
		.pgoff = m->pgoff,
		.prot = m->prot,
		.flags = m->flags,
		.filename = f->path,
	};

	if (f->build_id_size) {
		r.build_id_size = f->build_id_size;
		memcpy(r.build_id, f->build_id, f->build_id_size);
	} else {
		r.maj = f->maj;
		r.min = f->min;
		r.ino = f->ino;
	}
	return task_desc_add_mmap2(&t->desc, &r, &sid);
}

/* ---- processes and threads -------------------------------------------------- */

static struct task_proc *proc_of(struct lru_entry *e)
{
	return container_of(e, struct task_proc, e);
}

static struct task_thread *thread_of(struct lru_entry *e)
{
	return container_of(e, struct task_thread, e);
}

static void thread_remove(struct task_tracker *t, struct task_thread *th)
{
	lru_table_remove(&t->threads, &th->e);
	lru_link_del(&th->sibling);
	free(th);
}

static void proc_drop_maps(struct task_proc *p)
{
	for (size_t i = 0; i < p->nr_maps; i++)
		task_file_put(p->maps[i].file);
	free(p->maps);
	p->maps = NULL;
	p->nr_maps = 0;
	p->nr_unmapped = 0;
	p->unmapped_next = 0;
	p->reread_interval = REREAD_MIN_NS;
}

static void proc_remove(struct task_tracker *t, struct task_proc *p)
{
	if (p->hooked && !t->freeing)
		t->hooks->forget(t->hooks_ctx, p->e.key);
	while (p->threads.next != &p->threads)
		thread_remove(t, container_of(p->threads.next, struct task_thread, sibling));
	proc_drop_maps(p);
	lru_table_remove(&t->procs, &p->e);
	free(p);
}

static struct task_proc *proc_new(struct task_tracker *t, uint32_t pid)
{
	struct task_proc *p;

	if (t->procs.map.nr >= t->max_pids)
		proc_remove(t, proc_of(lru_table_oldest(&t->procs)));
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->e.key = pid;
	lru_link_init(&p->threads);
	p->reread_interval = REREAD_MIN_NS;
	if (lru_table_insert(&t->procs, &p->e)) {
		free(p);
		return NULL;
	}
	return p;
}

static struct task_thread *thread_new(struct task_tracker *t, struct task_proc *p, uint32_t tid,
				      const char *comm)
{
	struct task_thread *th;
	struct lru_entry *old = lru_table_find(&t->threads, tid);

	if (old)	/* the tid was reused by another process */
		thread_remove(t, thread_of(old));
	if (t->threads.map.nr >= t->max_pids)
		thread_remove(t, thread_of(lru_table_oldest(&t->threads)));
	th = calloc(1, sizeof(*th));
	if (!th)
		return NULL;
	th->e.key = tid;
	th->proc = p;
	snprintf(th->comm, sizeof(th->comm), "%s", comm);
	if (lru_table_insert(&t->threads, &th->e)) {
		free(th);
		return NULL;
	}
	lru_link_add_front(&p->threads, &th->sibling);
	return th;
}

/* The thread's comm as the file should name it, and remember it. */
static int thread_add(struct task_tracker *t, struct task_proc *p, uint32_t tid,
		      const char *comm, bool exec, uint64_t time, uint32_t cpu)
{
	uint32_t pid = p->e.key;
	int err = write_comm(t, pid, tid, comm, exec, time, cpu);

	if (err)
		return err;
	return thread_new(t, p, tid, comm) ? 0 : -ENOMEM;
}

/* ---- mappings ------------------------------------------------------------------ */

/* The mapping holding ip, in O(log n). */
static struct task_map *map_find(const struct task_proc *p, uint64_t ip)
{
	/* The last mapping starting at or below ip. */
	size_t n = SORTED_COUNT_LE(p->maps, p->nr_maps, start, ip);

	if (n == 0 || ip >= p->maps[n - 1].end)
		return NULL;
	return &p->maps[n - 1];
}

/*
 * Tell the hooks p's executable mappings (see task_tracker_hooks): only
 * for processes in scope, whose mappings are known (described, or
 * complete from an exec or fork of a process in scope).
 */
static void hook_maps(struct task_tracker *t, struct task_proc *p);

static void maps_changed(struct task_tracker *t, struct task_proc *p)
{
	if (!t->hooks || !(p->described || (p->complete && !t->track_all)))
		return;
	hook_maps(t, p);
}

/* Tell the hooks p's executable mappings, whatever p is. */
static void hook_maps(struct task_tracker *t, struct task_proc *p)
{
	struct procmaps_entry *e;
	struct task_file **files;
	size_t n = 0;

	if (!t->hooks)
		return;
	e = calloc(p->nr_maps ? p->nr_maps : 1, sizeof(*e) + sizeof(*files));
	if (!e)
		return;	/* the unwinder falls back to frame pointers for it */
	files = (struct task_file **)(e + (p->nr_maps ? p->nr_maps : 1));
	for (size_t i = 0; i < p->nr_maps; i++) {
		const struct task_map *m = &p->maps[i];

		if (!(m->prot & PROT_EXEC))
			continue;
		files[n] = m->file;
		e[n++] = (struct procmaps_entry){
			.start = m->start, .end = m->end, .pgoff = m->pgoff,
			.maj = m->file->maj, .min = m->file->min, .ino = m->file->ino,
			.prot = m->prot, .flags = m->flags, .path = m->file->path,
		};
	}
	t->hooks->maps_changed(t->hooks_ctx, p->e.key, e, files, n);
	p->hooked = true;
	free(e);
}

/*
 * Make p's mappings those of pm: keep the ones already written, write an
 * MMAP2 for each new one (all of them when fresh). *nr_new counts those.
 */
static int proc_set_maps(struct task_tracker *t, struct task_proc *p, const struct procmaps *pm,
			 uint32_t tid, uint64_t time, uint32_t cpu, bool fresh, size_t *nr_new)
{
	struct task_map *maps = NULL;
	size_t i, j = 0, n = 0;
	int err = 0;

	*nr_new = 0;
	if (fresh)
		proc_drop_maps(p);
	if (pm->nr) {
		maps = calloc(pm->nr, sizeof(*maps));
		if (!maps)
			return -ENOMEM;
	}
	for (i = 0; i < pm->nr; i++) {
		const struct procmaps_entry *e = &pm->entries[i];
		struct task_map *m = &maps[n];
		bool known = false;

		m->file = task_file_get(&t->files, p->e.key, e);
		if (!m->file) {
			err = -ENOMEM;
			break;
		}
		m->start = e->start;
		m->end = e->end;
		m->pgoff = e->pgoff;
		m->prot = e->prot;
		m->flags = e->flags;
		n++;
		/* Both lists are sorted by start: walk the old one along. */
		while (j < p->nr_maps && p->maps[j].start < e->start)
			j++;
		if (j < p->nr_maps) {
			const struct task_map *o = &p->maps[j];

			known = o->start == m->start && o->end == m->end && o->pgoff == m->pgoff &&
				o->file == m->file;
		}
		if (!known) {
			err = write_mmap2(t, p->e.key, tid, m, time, cpu);
			if (err)
				break;
			(*nr_new)++;
		}
	}
	if (err) {
		for (i = 0; i < n; i++)
			task_file_put(maps[i].file);
		free(maps);
		return err;
	}
	for (i = 0; i < p->nr_maps; i++)
		task_file_put(p->maps[i].file);
	free(p->maps);
	p->maps = maps;
	p->nr_maps = n;
	if (fresh || *nr_new)
		maps_changed(t, p);
	return 0;
}

/* Did an exec replace the address space? True when a known mapping is gone. */
static bool maps_replaced(const struct task_proc *p, const struct procmaps *pm)
{
	size_t i, j = 0;

	for (i = 0; i < p->nr_maps; i++) {
		const struct task_map *o = &p->maps[i];

		while (j < pm->nr && pm->entries[j].start < o->start)
			j++;
		if (j == pm->nr || pm->entries[j].start != o->start ||
		    pm->entries[j].end != o->end || pm->entries[j].pgoff != o->pgoff ||
		    pm->entries[j].ino != o->file->ino || strcmp(pm->entries[j].path, o->file->path))
			return true;
	}
	return false;
}

static bool unmapped_has(struct task_proc *p, uint64_t page, uint64_t time)
{
	unsigned int i;

	/* Old news: the page may be mapped by now. */
	if (p->nr_unmapped && time - p->unmapped_since > UNMAPPED_TTL_NS && time > p->unmapped_since)
		p->nr_unmapped = p->unmapped_next = 0;
	for (i = 0; i < p->nr_unmapped; i++)
		if (p->unmapped[i] == page)
			return true;
	return false;
}

static void unmapped_add(struct task_proc *p, uint64_t page, uint64_t time)
{
	if (!p->nr_unmapped)
		p->unmapped_since = time;
	p->unmapped[p->unmapped_next] = page;
	p->unmapped_next = (p->unmapped_next + 1) % UNMAPPED_SLOTS;
	if (p->nr_unmapped < UNMAPPED_SLOTS)
		p->nr_unmapped++;
}

static bool is_user_ip(uint64_t ip)
{
	return ip && ip < PERFDATA_KERNEL_ADDR_MIN;
}

/*
 * Mark the files the ips hit. Returns 1 when some ip is outside every known
 * mapping and not known to be unmapped, 0 when all are accounted for.
 * With remember, those ips' pages are recorded as unmapped instead.
 */
static int check_ips(struct task_tracker *t, struct task_proc *p, const uint64_t *ips, size_t nr,
		     uint64_t time, bool remember, int *err)
{
	int missing = 0;

	for (size_t i = 0; i < nr && !*err; i++) {
		struct task_map *m;
		uint64_t page;

		if (!is_user_ip(ips[i]))
			continue;
		m = map_find(p, ips[i]);
		if (m) {
			*err = file_hit(t, p->e.key, m);
			continue;
		}
		page = ips[i] >> UNMAPPED_PAGE_SHIFT;
		if (unmapped_has(p, page, time))
			continue;
		if (remember)
			unmapped_add(p, page, time);
		else
			missing = 1;
	}
	return missing;
}

/* Read a comm file of /proc (path, or "" when it did not fit); false when it is gone. */
static bool read_comm_file(const char *path, char comm[COMM_LEN])
{
	ssize_t n;
	int fd;

	if (!*path)
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, comm, COMM_LEN - 1);
	close(fd);
	if (n <= 0)
		return false;
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	return comm[0] != '\0';
}

/* /proc/PID/comm: the main thread's; false when the process is gone. */
static bool read_proc_comm(const struct task_tracker *t, uint32_t pid, char comm[COMM_LEN])
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%u/comm", t->proc_root, pid) >= (int)sizeof(path))
		path[0] = '\0';
	return read_comm_file(path, comm);
}

/* /proc/PID/task/TID/comm; false when the thread is gone. */
static bool read_thread_comm(const struct task_tracker *t, uint32_t pid, uint32_t tid,
			     char comm[COMM_LEN])
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%u/task/%u/comm", t->proc_root, pid, tid) >=
	    (int)sizeof(path))
		path[0] = '\0';
	return read_comm_file(path, comm);
}

/* Was an exec of pid reported since it was last described? Forgets it. */
static bool take_exec_pending(struct task_tracker *t, uint32_t pid)
{
	for (unsigned int i = 0; i < EXEC_PENDING_SLOTS; i++) {
		if (t->exec_pending[i] == pid) {
			t->exec_pending[i] = 0;
			return true;
		}
	}
	return false;
}

/* An MMAP2 for each mapping p already holds (those the kernel reported). */
static int write_known_maps(struct task_tracker *t, struct task_proc *p, uint32_t tid,
			    uint64_t time, uint32_t cpu)
{
	int err = 0;

	for (size_t i = 0; i < p->nr_maps && !err; i++)
		err = write_mmap2(t, p->e.key, tid, &p->maps[i], time, cpu);
	return err;
}

/*
 * The kernel mapped e in p: keep it, sorted, cutting whatever it covers out
 * of the mappings p already has (a mapping over another replaces it).
 */
static int maps_insert(struct task_tracker *t, struct task_proc *p,
		       const struct procmaps_entry *e)
{
	struct task_map m = {
		.start = e->start, .end = e->end, .pgoff = e->pgoff,
		.prot = e->prot, .flags = e->flags,
	};
	struct task_map *maps;
	bool placed = false;
	size_t n = 0;

	if (p->nr_maps >= PENDING_MAX_MAPS) {
		p->complete = false;	/* /proc will have to tell */
		return 0;
	}
	maps = calloc(p->nr_maps + 2, sizeof(*maps));
	if (!maps)
		return -ENOMEM;
	m.file = task_file_get(&t->files, p->e.key, e);
	if (!m.file) {
		free(maps);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->nr_maps; i++) {
		struct task_map o = p->maps[i];
		unsigned int kept = 0;

		if (o.end <= m.start) {
			maps[n++] = o;
			continue;
		}
		if (o.start < m.start) {	/* the part below m */
			maps[n] = o;
			maps[n++].end = m.start;
			kept++;
		}
		if (!placed) {
			maps[n++] = m;
			placed = true;
		}
		if (o.start >= m.end) {
			maps[n++] = o;
			continue;
		}
		if (o.end > m.end) {		/* the part above m */
			maps[n] = o;
			maps[n].pgoff += m.end - o.start;
			maps[n++].start = m.end;
			kept++;
		}
		if (kept == 0)
			task_file_put(o.file);
		else if (kept == 2)
			o.file->refs++;
	}
	if (!placed)
		maps[n++] = m;
	free(p->maps);
	p->maps = maps;
	p->nr_maps = n;
	return 0;
}

/* First sight of pid: COMMs for the process and the thread, then its mappings. */
static int describe_process(struct task_tracker *t, struct task_proc *p, uint32_t tid,
			    const char *comm, uint64_t time, uint32_t cpu)
{
	uint32_t pid = p->e.key;
	char main_comm[COMM_LEN];
	struct procmaps pm;
	size_t nr_new;
	int err;

	if (tid == pid || !read_proc_comm(t, pid, main_comm))
		snprintf(main_comm, sizeof(main_comm), "%s", comm);
	err = thread_add(t, p, pid, main_comm, take_exec_pending(t, pid) || p->execd, time, cpu);
	if (!err && tid != pid)
		err = thread_add(t, p, tid, comm, false, time, cpu);
	if (err)
		return err;

	p->next_reread = time + p->reread_interval;
	p->described = true;
	p->described_time = time;
	/*
	 * What the kernel reported since the exec is exact as of this sample's
	 * time; /proc is as of now, and gone for a process that already exited.
	 */
	if (p->complete || read_maps(t, pid, &pm)) {
		err = write_known_maps(t, p, pid, time, cpu);
		if (!err)
			maps_changed(t, p);
		return err;
	}
	err = proc_set_maps(t, p, &pm, pid, time, cpu, true, &nr_new);
	procmaps_release(&pm);
	return err;
}

/*
 * A sample of p stamped before the description the file has of it: records
 * of another source that waited (--alloc's batch, what a ring still held
 * at a switch) can follow a CPU sample stamped later, which described p
 * in this file. For a process carried over from the previous file the
 * description is written again at this earlier time (the COMM of the
 * process and of the thread, the mappings known), so that a reader
 * replaying in time order knows the sample's process.
 */
static int describe_earlier(struct task_tracker *t, struct task_proc *p, uint32_t tid,
			    const char *comm, uint64_t time, uint32_t cpu)
{
	uint32_t pid = p->e.key;
	struct lru_entry *e = lru_table_find(&t->threads, pid);
	const char *main_comm = e && thread_of(e)->proc == p ? thread_of(e)->comm : comm;
	int err = write_comm(t, pid, pid, main_comm, false, time, cpu);

	if (!err && tid != pid)
		err = write_comm(t, pid, tid, comm, false, time, cpu);
	if (!err)
		err = write_known_maps(t, p, pid, time, cpu);
	if (!err)
		p->described_time = time;
	return err;
}

/* Re-read the maps of p and write the new mappings; *found says whether there were any. */
static int reread_maps(struct task_tracker *t, struct task_proc *p, uint32_t tid, uint64_t time,
		       uint32_t cpu)
{
	struct procmaps pm;
	size_t nr_new = 0;
	int err = 0;

	if (!read_maps(t, p->e.key, &pm)) {
		err = proc_set_maps(t, p, &pm, tid, time, cpu, false, &nr_new);
		procmaps_release(&pm);
	}
	/* Nothing new: garbage ips, most likely; look less often. */
	if (nr_new)
		p->reread_interval = REREAD_MIN_NS;
	else if (p->reread_interval < REREAD_MAX_NS)
		p->reread_interval *= 2;
	p->next_reread = time + p->reread_interval;
	return err;
}

/* The comm of tid changed since it was written. */
static int comm_changed(struct task_tracker *t, struct task_proc *p, struct task_thread *th,
			const char *comm, uint64_t time, uint32_t cpu)
{
	uint32_t pid = p->e.key, tid = th->e.key;
	struct procmaps pm;
	bool exec = false, readable;
	size_t nr_new;
	int err;

	snprintf(th->comm, sizeof(th->comm), "%s", comm);
	if (tid != pid)
		return write_comm(t, pid, tid, comm, false, time, cpu);

	readable = !read_maps(t, pid, &pm);
	exec = !readable || maps_replaced(p, &pm);
	err = write_comm(t, pid, tid, comm, exec, time, cpu);
	if (exec) {
		/* exec leaves one thread, this one, in a new address space. */
		struct lru_link *l, *next;

		for (l = p->threads.next; l != &p->threads; l = next) {
			next = l->next;
			if (container_of(l, struct task_thread, sibling) != th)
				thread_remove(t, container_of(l, struct task_thread, sibling));
		}
		proc_drop_maps(p);
	}
	if (readable) {
		if (!err)
			err = proc_set_maps(t, p, &pm, tid, time, cpu, exec, &nr_new);
		procmaps_release(&pm);
	}
	p->next_reread = time + p->reread_interval;
	return err;
}

/* ---- API ------------------------------------------------------------------------ */

void task_tracker_denied(const struct task_tracker *t, struct task_tracker_denied *out)
{
	*out = t->denied;
}

int task_tracker_new(const struct task_tracker_opts *opts, struct task_tracker **out)
{
	struct task_tracker *t;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->cache = opts ? opts->cache : NULL;
	t->proc_root = strdup(opts && opts->proc_root ? opts->proc_root : "/proc");
	t->max_pids = opts && opts->max_pids ? opts->max_pids : DEFAULT_MAX_PIDS;
	t->track_all = opts && opts->track_all;
	t->maps_flags = opts && opts->data_maps ? PROCMAPS_DATA : 0;
	t->hooks = opts ? opts->hooks : NULL;
	t->hooks_ctx = opts ? opts->hooks_ctx : NULL;
	t->now = opts && opts->now ? opts->now : mono_ns;
	task_files_init(&t->files, t->proc_root, &t->denied, t->hooks, t->hooks_ctx);
	if (t->cache)
		task_files_keep(&t->files, kept_files_max(), t->cache);
	lru_table_init(&t->procs);
	lru_table_init(&t->threads);
	if (!t->proc_root) {
		task_tracker_free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void task_tracker_free(struct task_tracker *t)
{
	struct lru_entry *e;

	if (!t)
		return;
	t->freeing = true;
	while ((e = lru_table_oldest(&t->procs)))
		proc_remove(t, proc_of(e));
	task_files_free(&t->files);
	hash_table_free(&t->procs.map);
	hash_table_free(&t->threads.map);
	task_desc_free(&t->desc);
	free(t->proc_root);
	free(t);
}

void task_tracker_file_ending(struct task_tracker *t)
{
	lru_table_dead_renew(&t->procs, t->round);
	lru_table_dead_renew(&t->threads, t->round);
}

void task_tracker_new_file(struct task_tracker *t)
{
	struct hash_node *n, *tmp;
	size_t i;

	for (struct lru_link *l = t->procs.lru.next; l != &t->procs.lru; l = l->next) {
		struct task_proc *p = container_of(l, struct task_proc, e.lru);

		/* Threads are only their COMM in the file: made again with the process. */
		while (p->threads.next != &p->threads)
			thread_remove(t, container_of(p->threads.next, struct task_thread, sibling));
		p->described = false;
		p->carried = true;
	}
	hash_table_for_each_safe(&t->files.map, n, tmp, i)
		container_of(n, struct task_file, node)->registered = false;
}

static int see(struct task_tracker *t, uint32_t pid, uint32_t tid, const char *comm,
	       uint64_t time, uint32_t cpu, const uint64_t *user_ips, size_t nr_user)
{
	char name[COMM_LEN];
	struct task_proc *p;
	struct task_thread *th;
	struct lru_entry *e;
	int err = 0;

	/*
	 * pid 0 is the idle task of every CPU ("swapper/N", all tid 0): perf
	 * names it "swapper" itself, and one comm per CPU would flap.
	 */
	if (pid == 0)
		return 0;
	/* At most 16 bytes from BPF, maybe without a NUL at the end. */
	snprintf(name, sizeof(name), "%.*s", COMM_LEN - 1, comm ? comm : "");

	e = lru_table_find(&t->procs, pid);
	if (e) {
		p = proc_of(e);
		lru_table_touch(&t->procs, e);
	} else {
		p = proc_new(t, pid);
		if (!p)
			return -ENOMEM;
	}
	if (!p->described) {
		err = describe_process(t, p, tid, name, time, cpu);
		if (err)
			return err;
	} else if (p->carried && time < p->described_time) {
		err = describe_earlier(t, p, tid, name, time, cpu);
		if (err)
			return err;
	}

	e = lru_table_find(&t->threads, tid);
	th = e ? thread_of(e) : NULL;
	if (!th || th->proc != p) {
		err = thread_add(t, p, tid, name, false, time, cpu);
	} else {
		lru_table_touch(&t->threads, &th->e);
		if (strcmp(th->comm, name))
			err = comm_changed(t, p, th, name, time, cpu);
	}
	if (err || !nr_user)
		return err;

	if (check_ips(t, p, user_ips, nr_user, time, false, &err) && !err &&
	    time >= p->next_reread) {
		err = reread_maps(t, p, tid, time, cpu);
		if (!err)
			check_ips(t, p, user_ips, nr_user, time, true, &err);
	}
	return err;
}

int task_tracker_describe(struct task_tracker *t, uint32_t pid, uint32_t tid, const char *comm,
			  uint64_t time, uint32_t cpu, const uint64_t *user_ips, size_t nr_user,
			  const struct task_desc **desc)
{
	int err;

	task_desc_reset(&t->desc);
	err = see(t, pid, tid, comm, time, cpu, user_ips, nr_user);
	*desc = &t->desc;
	return err ? err : task_desc_error(&t->desc);
}

void task_tracker_exit(struct task_tracker *t, uint32_t pid, uint32_t tid)
{
	struct lru_entry *e;

	if (!pid)
		return;
	if (tid == pid) {
		/*
		 * Samples taken before the exit may still be in the next batch,
		 * and the kernel samples the exit path itself: keep the process
		 * for them (an entry for one never seen, too, so they do not
		 * make one that would outlive it).
		 */
		e = lru_table_find(&t->procs, pid);
		if (!e) {
			struct task_proc *p = proc_new(t, pid);

			if (!p)
				return;
			e = &p->e;
		}
		lru_table_mark_dead(&t->procs, e, t->round);
		return;
	}
	e = lru_table_find(&t->threads, tid);
	if (e && thread_of(e)->proc->e.key == pid)
		lru_table_mark_dead(&t->threads, e, t->round);
}

static void exec_pending_add(struct task_tracker *t, uint32_t pid)
{
	take_exec_pending(t, pid);	/* one slot per pid */
	t->exec_pending[t->exec_pending_next++ % EXEC_PENDING_SLOTS] = pid;
}

/*
 * Whether an exec of time is what p's mappings were read after: read from
 * /proc ahead of their turn for a later sample (early_turns(), a new
 * process's first sample), and nothing of it written yet. Forgetting it
 * then would drop what the hooks built from the new image (unwind tables,
 * Python frames) for as long as the exec's mmap reports take to build it
 * again, and a short burst of work falls entirely in that gap.
 */
static bool exec_already_read(struct task_proc *p, uint64_t time)
{
	/*
	 * Described already (its launcher's last sample, written a round
	 * before the exec's): forgotten, so that its next record describes
	 * it afresh with the new name; a COMM exec only at its next sample
	 * left a window of tracer records (off-CPU) under the launcher's.
	 */
	if (p->described || p->maps_read_time <= time)
		return false;
	p->execd = true;	/* its COMM says it exec'd */
	return true;
}

static void exec_told(struct task_tracker *t, uint32_t pid, uint64_t time)
{
	if (t->hooks && t->hooks->exec)
		t->hooks->exec(t->hooks_ctx, pid, time);
}

void task_tracker_exec(struct task_tracker *t, uint32_t pid, uint64_t time)
{
	struct lru_entry *e;

	if (!pid)
		return;
	exec_told(t, pid, time);
	e = lru_table_find(&t->procs, pid);
	if (e && exec_already_read(proc_of(e), time))
		return;
	if (e && proc_of(e)->exec_reported) {
		/* task_tracker_exec_begin() already started this image afresh. */
		proc_of(e)->exec_reported = false;
		return;
	}
	if (e)
		proc_remove(t, proc_of(e));
	exec_pending_add(t, pid);
}

void task_tracker_exec_begin(struct task_tracker *t, uint32_t pid, uint64_t time)
{
	struct lru_entry *e;
	struct task_proc *p;

	if (!pid)
		return;
	exec_told(t, pid, time);
	e = lru_table_find(&t->procs, pid);
	if (!e && !t->track_all)
		return;	/* not a process in scope */
	if (e && exec_already_read(proc_of(e), time))
		return;
	if (e)
		proc_remove(t, proc_of(e));
	p = proc_new(t, pid);
	if (!p)
		return;	/* described from /proc instead */
	p->complete = true;
	p->exec_reported = true;
	p->execd = true;
}

void task_tracker_fork(struct task_tracker *t, uint32_t pid, uint32_t tid, uint32_t ppid)
{
	struct task_proc *p, *parent;
	struct lru_entry *e;

	if (!pid || tid != pid)
		return;	/* a thread: its process is already known, or not */
	/* A new process under a reused pid: nothing of the old one applies. */
	e = lru_table_find(&t->procs, pid);
	if (e)
		proc_remove(t, proc_of(e));
	p = proc_new(t, pid);
	if (!p)
		return;	/* its mmaps go unheard: /proc tells */
	e = ppid != pid ? lru_table_find(&t->procs, ppid) : NULL;
	parent = e ? proc_of(e) : NULL;
	if (!parent || !parent->nr_maps || !(parent->described || parent->complete))
		return;
	/* A copy of the parent's address space: what a child that never execs runs. */
	p->maps = calloc(parent->nr_maps, sizeof(*p->maps));
	if (!p->maps)
		return;
	memcpy(p->maps, parent->maps, parent->nr_maps * sizeof(*p->maps));
	p->nr_maps = parent->nr_maps;
	for (size_t i = 0; i < p->nr_maps; i++)
		p->maps[i].file->refs++;
	p->complete = true;
	maps_changed(t, p);
}

/* e as the tracker keeps it (under its kept name, kept); false when it keeps nothing of it. */
static bool kept_entry(const struct task_tracker *t, const struct procmaps_entry *e,
		       struct procmaps_entry *kept)
{
	*kept = *e;
	kept->path = procmaps_kept_name(e->path, e->prot, t->maps_flags);
	return kept->path && e->end > e->start;
}

static int add_mapping(struct task_tracker *t, uint32_t pid, uint32_t tid,
		       const struct procmaps_entry *e, uint64_t time, uint32_t cpu)
{
	struct procmaps_entry kept;
	struct lru_entry *te;
	struct task_proc *p;
	struct task_map *m;
	int err;

	if (!pid || !kept_entry(t, e, &kept))
		return 0;
	te = lru_table_find(&t->procs, pid);
	if (te) {
		p = proc_of(te);
	} else {
		if (!t->track_all)
			return 0;	/* not a process in scope */
		p = proc_new(t, pid);
		if (!p)
			return -ENOMEM;
	}
	err = maps_insert(t, p, &kept);
	if (err)
		return err;
	if (kept.prot & PROT_EXEC)
		maps_changed(t, p);
	if (!p->described)
		return 0;
	/*
	 * Already in the file (sampled in the middle of its exec, or a
	 * dlopen): the mapping goes in now, before the samples that follow.
	 */
	m = map_find(p, kept.start);
	if (!m || m->start != kept.start)
		return 0;	/* over the bound: a re-read of /proc writes it */
	return write_mmap2(t, pid, tid, m, time, cpu);
}

void task_tracker_prefetch(struct task_tracker *t, uint32_t pid, uint32_t tid, const char *comm)
{
	struct lru_entry *e = pid ? lru_table_find(&t->procs, pid) : NULL;
	char now[COMM_LEN];
	struct task_proc *p;
	struct procmaps pm;

	if (!pid)
		return;
	if (e) {
		p = proc_of(e);
		if (p->described)
			return;	/* the file has them, the hooks were told */
		if (p->complete) {
			/*
			 * The kernel's reports have them (-a: not told yet),
			 * applied in time order up to this sample: the sampled
			 * image's, whether it still runs or not. A process of a
			 * few ms is gone by its first late sample, and its walk
			 * found no mappings at all.
			 */
			if (!p->hooked)
				hook_maps(t, p);
			return;
		}
	}
	/*
	 * Another name now: it exec'd since (a launched command's samples
	 * before its exec): /proc has the next image, not the sampled one.
	 */
	if (!read_thread_comm(t, pid, tid, now) || strncmp(now, comm, COMM_LEN - 1))
		return;
	if (!e) {
		p = proc_new(t, pid);
		if (!p)
			return;
	}
	if (read_maps_of(t, p, &pm))
		return;	/* gone already: described from its samples' comm */
	/* Complete unless maps_insert() finds it over the bound: /proc again at the description. */
	p->complete = true;
	for (size_t i = 0; i < pm.nr; i++) {
		struct procmaps_entry kept;

		if (!kept_entry(t, &pm.entries[i], &kept))
			continue;
		if (maps_insert(t, p, &kept)) {
			p->complete = false;
			break;
		}
	}
	procmaps_release(&pm);
	hook_maps(t, p);
}

void task_tracker_mmap_early(struct task_tracker *t, uint32_t pid,
			     const struct procmaps_entry *e)
{
	struct lru_entry *te = pid ? lru_table_find(&t->procs, pid) : NULL;
	struct procmaps_entry kept;
	struct task_proc *p;

	if (!te)
		return;	/* its fork or exec comes first, in order */
	p = proc_of(te);
	if (p->described)
		return;	/* its MMAP2 goes in in order */
	if (!kept_entry(t, e, &kept) || !(kept.prot & PROT_EXEC))
		return;
	if (maps_insert(t, p, &kept))
		return;
	if (p->hooked)
		hook_maps(t, p);
	else
		maps_changed(t, p);
}

int task_tracker_mmap(struct task_tracker *t, uint32_t pid, uint32_t tid,
		      const struct procmaps_entry *e, uint64_t time, uint32_t cpu,
		      const struct task_desc **desc)
{
	int err;

	task_desc_reset(&t->desc);
	err = add_mapping(t, pid, tid, e, time, cpu);
	*desc = &t->desc;
	return err ? err : task_desc_error(&t->desc);
}

void task_tracker_round_end(struct task_tracker *t)
{
	struct lru_entry *e;

	while ((e = lru_table_dead_before(&t->threads, t->round)))
		thread_remove(t, thread_of(e));
	while ((e = lru_table_dead_before(&t->procs, t->round)))
		proc_remove(t, proc_of(e));
	hash_table_fit(&t->procs.map);
	hash_table_fit(&t->threads.map);
	t->round++;
}

void task_tracker_stats(const struct task_tracker *t, struct task_tracker_stats *st)
{
	const struct lru_link *l;

	memset(st, 0, sizeof(*st));
	st->procs = t->procs.map.nr;
	st->threads = t->threads.map.nr;
	st->dead = t->procs.nr_dead + t->threads.nr_dead;
	st->files = t->files.map.nr;
	for (l = t->procs.lru.next; l != &t->procs.lru; l = l->next)
		st->maps += proc_of(container_of(l, struct lru_entry, lru))->nr_maps;
	st->bytes = sizeof(*t) + strlen(t->proc_root) + 1 +
		    (t->procs.map.nr_buckets + t->threads.map.nr_buckets) * sizeof(void *) +
		    st->procs * sizeof(struct task_proc) + st->threads * sizeof(struct task_thread) +
		    st->maps * sizeof(struct task_map);
	st->bytes += task_files_bytes(&t->files);
}
