// SPDX-License-Identifier: MIT
/*
 * tasks.c - the task tracker of tasks.h: describe each process the first
 * time one of its samples is written (COMM, MMAP2 with build-ids), and again
 * when it changes (dlopen, exec), reading only /proc/PID of that process.
 *
 * State, all bounded:
 *   - processes (by pid) and threads (by tid) in two hash tables with an LRU
 *     list each, at most max_pids entries apiece; the least recently seen
 *     is evicted (and simply described again should it come back). A thread
 *     belongs to one process and goes with it.
 *   - per process, its executable mappings sorted by start, so "is this ip
 *     mapped" is a binary search: it runs for every user ip of every sample.
 *   - mapped files by (device, inode, path), shared by the processes that map
 *     them, so each file's build-id is read once; unreferenced ones are swept
 *     when there are many. "[vdso]" gets this process's vDSO build-id, as
 *     perf does; "//anon" none.
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
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "perfdata/writer.h"
#include "recorder/procmaps.h"
#include "recorder/tasks.h"
#include "symbolize/buildid.h"

#define DEFAULT_MAX_PIDS	65536
#define COMM_LEN		16	/* the kernel's TASK_COMM_LEN, NUL included */
#define REREAD_MIN_NS		(100ull * 1000000)
#define REREAD_MAX_NS		(1600ull * 1000000)
#define UNMAPPED_SLOTS		32
#define UNMAPPED_TTL_NS		(1000ull * 1000000)
#define UNMAPPED_PAGE_SHIFT	12
#define FILES_SWEEP_MIN		4096

#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

/* ---- hash table of u32 keys with an LRU list ---------------------------- */

struct lru_link {
	struct lru_link *prev, *next;
};

struct tt_entry {
	struct tt_entry *hnext;
	struct lru_link lru;	/* most recently seen first */
	uint32_t key;
};

struct tt_table {
	struct tt_entry **buckets;
	unsigned int bits;
	size_t count;
	struct lru_link lru;	/* sentinel */
};

static void link_init(struct lru_link *l)
{
	l->prev = l->next = l;
}

static void link_del(struct lru_link *l)
{
	l->prev->next = l->next;
	l->next->prev = l->prev;
	link_init(l);
}

static void link_add_front(struct lru_link *head, struct lru_link *l)
{
	l->next = head->next;
	l->prev = head;
	head->next->prev = l;
	head->next = l;
}

static size_t tt_bucket(const struct tt_table *t, uint32_t key)
{
	return (uint32_t)(key * 2654435761u) >> (32 - t->bits);
}

static int tt_init(struct tt_table *t)
{
	t->bits = 8;
	t->count = 0;
	t->buckets = calloc((size_t)1 << t->bits, sizeof(*t->buckets));
	link_init(&t->lru);
	return t->buckets ? 0 : -ENOMEM;
}

static struct tt_entry *tt_find(const struct tt_table *t, uint32_t key)
{
	struct tt_entry *e;

	for (e = t->buckets[tt_bucket(t, key)]; e; e = e->hnext)
		if (e->key == key)
			return e;
	return NULL;
}

static void tt_touch(struct tt_table *t, struct tt_entry *e)
{
	link_del(&e->lru);
	link_add_front(&t->lru, &e->lru);
}

/* Keep chains short: double the buckets when there are more entries. */
static void tt_grow(struct tt_table *t)
{
	unsigned int old_bits = t->bits;
	struct tt_entry **old = t->buckets, **nb;
	size_t i;

	if (t->count <= ((size_t)1 << t->bits) || t->bits >= 24)
		return;
	nb = calloc((size_t)1 << (old_bits + 1), sizeof(*nb));
	if (!nb)
		return;	/* longer chains, still correct */
	t->buckets = nb;
	t->bits = old_bits + 1;
	for (i = 0; i < ((size_t)1 << old_bits); i++) {
		struct tt_entry *e = old[i], *next;

		for (; e; e = next) {
			size_t b = tt_bucket(t, e->key);

			next = e->hnext;
			e->hnext = nb[b];
			nb[b] = e;
		}
	}
	free(old);
}

static void tt_insert(struct tt_table *t, struct tt_entry *e)
{
	size_t b = tt_bucket(t, e->key);

	e->hnext = t->buckets[b];
	t->buckets[b] = e;
	link_add_front(&t->lru, &e->lru);
	t->count++;
	tt_grow(t);
}

static void tt_remove(struct tt_table *t, struct tt_entry *e)
{
	struct tt_entry **pp = &t->buckets[tt_bucket(t, e->key)];

	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
	link_del(&e->lru);
	t->count--;
}

static struct tt_entry *tt_oldest(const struct tt_table *t)
{
	return t->lru.prev == &t->lru ? NULL : container_of(t->lru.prev, struct tt_entry, lru);
}

/* ---- tracker state ------------------------------------------------------- */

/* A mapped file (or "//anon", "[vdso]"), shared by every process mapping it. */
struct task_file {
	struct task_file *hnext;
	uint64_t hash;
	uint32_t maj, min;
	uint64_t ino;
	bool vdso32;		/* a [vdso] of a 32-bit process: not our image */
	uint32_t refs;		/* task_maps pointing here */
	bool registered;	/* build-id given to the writer (the file has samples) */
	uint8_t build_id_size;	/* 0: none found, MMAP2 carries maj/min/ino */
	uint8_t build_id[BUILDID_MAX];
	char path[];
};

struct task_map {
	uint64_t start, end, pgoff;
	uint32_t prot, flags;
	struct task_file *file;
};

struct task_proc {
	struct tt_entry e;	/* key: pid */
	struct lru_link threads;	/* its task_thread.sibling */
	struct task_map *maps;	/* sorted by start, disjoint */
	size_t nr_maps;
	uint64_t next_reread, reread_interval;
	/* Pages (ip >> 12) found outside every mapping by the last re-reads. */
	uint64_t unmapped[UNMAPPED_SLOTS];
	unsigned int nr_unmapped, unmapped_next;
	uint64_t unmapped_since;
};

struct task_thread {
	struct tt_entry e;	/* key: tid */
	struct lru_link sibling;
	struct task_proc *proc;
	char comm[COMM_LEN];	/* the comm the file has for it */
};

/* Pids whose exec was reported but whose new image is not described yet. */
#define EXEC_PENDING_SLOTS 64

struct task_tracker {
	struct perfdata_writer *w;
	uint32_t exec_pending[EXEC_PENDING_SLOTS];
	unsigned int exec_pending_next;
	char *proc_root;
	size_t max_pids;
	unsigned int maps_flags;	/* PROCMAPS_DATA with data_maps */
	struct tt_table procs, threads;
	struct task_file **files;
	size_t files_nbuckets, nr_files, files_sweep_at;
	/* This process's vDSO build-id: the kernel maps the same image into every 64-bit process. */
	uint8_t vdso_id[BUILDID_MAX];
	size_t vdso_id_size;
};

/* ---- files and their build-ids ------------------------------------------ */

static uint64_t file_hash(uint32_t maj, uint32_t min, uint64_t ino, const char *path)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */

	for (const char *p = path; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	h ^= ino * 0x9e3779b97f4a7c15ull;
	h ^= ((uint64_t)maj << 32 | min) * 0xc2b2ae3d27d4eb4full;
	return h;
}

/* x86_64 maps the vDSO of 32-bit (and x32) processes below 4 GiB: a different image. */
static bool is_vdso32(const struct procmaps_entry *e)
{
	return !strcmp(e->path, "[vdso]") && e->end <= (1ull << 32);
}

/* The build-id of our own vDSO, from its ELF notes in memory. */
static void read_self_vdso_build_id(struct task_tracker *t)
{
	const unsigned char *base = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const void *)base;
	const Elf64_Phdr *ph;

	if (!base || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return;
	ph = (const void *)(base + eh->e_phoff);
	for (unsigned int i = 0; i < eh->e_phnum; i++) {
		/* The image is mapped as laid out in the file: offsets are addresses. */
		if (ph[i].p_type == PT_NOTE &&
		    !buildid_parse_notes(base + ph[i].p_offset, ph[i].p_filesz, t->vdso_id,
					 &t->vdso_id_size))
			return;
	}
	t->vdso_id_size = 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/*
 * The build-id of the file mapped at e in pid. Tried in order: the mapping
 * itself through map_files (right even for deleted files and memfds; needs
 * root), the path inside the process's root (other mount namespaces), the
 * path as printed.
 */
static void read_build_id(const struct task_tracker *t, uint32_t pid,
			  const struct procmaps_entry *e, struct task_file *f)
{
	char path[PATH_MAX];
	size_t size = 0;
	int err = -ENOENT;

	if (!strcmp(e->path, "[vdso]")) {
		/* perf, too, takes the image from its own process. */
		if (!f->vdso32 && t->vdso_id_size) {
			memcpy(f->build_id, t->vdso_id, t->vdso_id_size);
			f->build_id_size = (uint8_t)t->vdso_id_size;
		}
		return;
	}
	if (e->path[0] != '/' || !strcmp(e->path, PROCMAPS_ANON_NAME))
		return;	/* "//anon": no file to read */
	if (snprintf(path, sizeof(path), "%s/%u/map_files/%lx-%lx", t->proc_root, pid,
		     (unsigned long)e->start, (unsigned long)e->end) < (int)sizeof(path))
		err = buildid_read_file(path, f->build_id, &size);
	if (err && !ends_with(e->path, " (deleted)")) {
		if (snprintf(path, sizeof(path), "%s/%u/root%s", t->proc_root, pid, e->path) <
		    (int)sizeof(path))
			err = buildid_read_file(path, f->build_id, &size);
		if (err)
			err = buildid_read_file(e->path, f->build_id, &size);
	}
	if (!err && size > 0 && size <= BUILDID_MAX)
		f->build_id_size = (uint8_t)size;
}

static void files_sweep(struct task_tracker *t)
{
	size_t i;

	for (i = 0; i < t->files_nbuckets; i++) {
		struct task_file **pp = &t->files[i];

		while (*pp) {
			struct task_file *f = *pp;

			if (f->refs) {
				pp = &f->hnext;
				continue;
			}
			*pp = f->hnext;
			free(f);
			t->nr_files--;
		}
	}
	t->files_sweep_at = t->nr_files * 2 > FILES_SWEEP_MIN ? t->nr_files * 2 : FILES_SWEEP_MIN;
}

static void files_grow(struct task_tracker *t)
{
	size_t n = t->files_nbuckets * 2, i;
	struct task_file **nb;

	if (t->nr_files <= t->files_nbuckets)
		return;
	nb = calloc(n, sizeof(*nb));
	if (!nb)
		return;
	for (i = 0; i < t->files_nbuckets; i++) {
		struct task_file *f = t->files[i], *next;

		for (; f; f = next) {
			next = f->hnext;
			f->hnext = nb[f->hash & (n - 1)];
			nb[f->hash & (n - 1)] = f;
		}
	}
	free(t->files);
	t->files = nb;
	t->files_nbuckets = n;
}

/* The file of mapping e in pid, with a reference taken; NULL on ENOMEM. */
static struct task_file *file_get(struct task_tracker *t, uint32_t pid,
				  const struct procmaps_entry *e)
{
	bool vdso32 = is_vdso32(e);
	uint64_t h = file_hash(e->maj, e->min, e->ino, e->path) + vdso32;
	struct task_file *f;
	size_t len;

	for (f = t->files[h & (t->files_nbuckets - 1)]; f; f = f->hnext) {
		if (f->hash == h && f->maj == e->maj && f->min == e->min && f->ino == e->ino &&
		    f->vdso32 == vdso32 && !strcmp(f->path, e->path)) {
			f->refs++;
			return f;
		}
	}
	if (t->nr_files >= t->files_sweep_at)
		files_sweep(t);
	len = strlen(e->path) + 1;
	f = calloc(1, sizeof(*f) + len);
	if (!f)
		return NULL;
	f->hash = h;
	f->maj = e->maj;
	f->min = e->min;
	f->ino = e->ino;
	f->vdso32 = vdso32;
	f->refs = 1;
	memcpy(f->path, e->path, len);
	read_build_id(t, pid, e, f);
	f->hnext = t->files[h & (t->files_nbuckets - 1)];
	t->files[h & (t->files_nbuckets - 1)] = f;
	t->nr_files++;
	files_grow(t);
	return f;
}

static void file_put(struct task_file *f)
{
	if (f && f->refs)
		f->refs--;
}

/* A sample hit this file: its build-id goes to the BUILD_ID list, once. */
static int file_hit(struct task_tracker *t, struct task_file *f)
{
	int err;

	if (f->registered || !f->build_id_size)
		return 0;
	err = perfdata_writer_add_build_id(t->w, PERF_RECORD_MISC_USER, f->build_id,
					   f->build_id_size, f->path);
	if (!err)
		f->registered = true;
	return err;
}

/* ---- records ---------------------------------------------------------------- */

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

	return perfdata_write_comm(t->w, &c, &sid);
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
	return perfdata_write_mmap2(t->w, &r, &sid);
}

/* ---- processes and threads -------------------------------------------------- */

static struct task_proc *proc_of(struct tt_entry *e)
{
	return container_of(e, struct task_proc, e);
}

static struct task_thread *thread_of(struct tt_entry *e)
{
	return container_of(e, struct task_thread, e);
}

static void thread_remove(struct task_tracker *t, struct task_thread *th)
{
	tt_remove(&t->threads, &th->e);
	link_del(&th->sibling);
	free(th);
}

static void proc_drop_maps(struct task_proc *p)
{
	for (size_t i = 0; i < p->nr_maps; i++)
		file_put(p->maps[i].file);
	free(p->maps);
	p->maps = NULL;
	p->nr_maps = 0;
	p->nr_unmapped = 0;
	p->unmapped_next = 0;
	p->reread_interval = REREAD_MIN_NS;
}

static void proc_remove(struct task_tracker *t, struct task_proc *p)
{
	while (p->threads.next != &p->threads)
		thread_remove(t, container_of(p->threads.next, struct task_thread, sibling));
	proc_drop_maps(p);
	tt_remove(&t->procs, &p->e);
	free(p);
}

static struct task_proc *proc_new(struct task_tracker *t, uint32_t pid)
{
	struct task_proc *p;

	if (t->procs.count >= t->max_pids)
		proc_remove(t, proc_of(tt_oldest(&t->procs)));
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->e.key = pid;
	link_init(&p->threads);
	p->reread_interval = REREAD_MIN_NS;
	tt_insert(&t->procs, &p->e);
	return p;
}

static struct task_thread *thread_new(struct task_tracker *t, struct task_proc *p, uint32_t tid,
				      const char *comm)
{
	struct task_thread *th;
	struct tt_entry *old = tt_find(&t->threads, tid);

	if (old)	/* the tid was reused by another process */
		thread_remove(t, thread_of(old));
	if (t->threads.count >= t->max_pids)
		thread_remove(t, thread_of(tt_oldest(&t->threads)));
	th = calloc(1, sizeof(*th));
	if (!th)
		return NULL;
	th->e.key = tid;
	th->proc = p;
	snprintf(th->comm, sizeof(th->comm), "%s", comm);
	link_add_front(&p->threads, &th->sibling);
	tt_insert(&t->threads, &th->e);
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
	size_t lo = 0, hi = p->nr_maps;

	/* The last mapping starting at or below ip. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || ip >= p->maps[lo - 1].end)
		return NULL;
	return &p->maps[lo - 1];
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

		m->file = file_get(t, p->e.key, e);
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
			file_put(maps[i].file);
		free(maps);
		return err;
	}
	for (i = 0; i < p->nr_maps; i++)
		file_put(p->maps[i].file);
	free(p->maps);
	p->maps = maps;
	p->nr_maps = n;
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
			*err = file_hit(t, m->file);
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

/* Read /proc/PID/comm of the main thread; false when the process is gone. */
static bool read_proc_comm(const struct task_tracker *t, uint32_t pid, char comm[COMM_LEN])
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%u/comm", t->proc_root, pid) >= (int)sizeof(path))
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

/* First sight of pid: COMMs for the process and the thread, then its mappings. */
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
	err = thread_add(t, p, pid, main_comm, take_exec_pending(t, pid), time, cpu);
	if (!err && tid != pid)
		err = thread_add(t, p, tid, comm, false, time, cpu);
	if (err)
		return err;

	p->next_reread = time + p->reread_interval;
	/* A process already gone keeps its COMM and raw addresses. */
	if (procmaps_read(t->proc_root, pid, t->maps_flags, &pm))
		return 0;
	err = proc_set_maps(t, p, &pm, pid, time, cpu, true, &nr_new);
	procmaps_release(&pm);
	return err;
}

/* Re-read the maps of p and write the new mappings; *found says whether there were any. */
static int reread_maps(struct task_tracker *t, struct task_proc *p, uint32_t tid, uint64_t time,
		       uint32_t cpu)
{
	struct procmaps pm;
	size_t nr_new = 0;
	int err = 0;

	if (!procmaps_read(t->proc_root, p->e.key, t->maps_flags, &pm)) {
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

	readable = !procmaps_read(t->proc_root, pid, t->maps_flags, &pm);
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

int task_tracker_new(struct perfdata_writer *w, const struct task_tracker_opts *opts,
		     struct task_tracker **out)
{
	struct task_tracker *t;

	*out = NULL;
	if (!w)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->w = w;
	t->proc_root = strdup(opts && opts->proc_root ? opts->proc_root : "/proc");
	t->max_pids = opts && opts->max_pids ? opts->max_pids : DEFAULT_MAX_PIDS;
	t->maps_flags = opts && opts->data_maps ? PROCMAPS_DATA : 0;
	t->files_nbuckets = 256;
	t->files = calloc(t->files_nbuckets, sizeof(*t->files));
	t->files_sweep_at = FILES_SWEEP_MIN;
	read_self_vdso_build_id(t);
	if (!t->proc_root || !t->files || tt_init(&t->procs) || tt_init(&t->threads)) {
		task_tracker_free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void task_tracker_free(struct task_tracker *t)
{
	struct tt_entry *e;

	if (!t)
		return;
	if (t->procs.buckets)
		while ((e = tt_oldest(&t->procs)))
			proc_remove(t, proc_of(e));
	if (t->files) {
		for (size_t i = 0; i < t->files_nbuckets; i++) {
			struct task_file *f = t->files[i], *next;

			for (; f; f = next) {
				next = f->hnext;
				free(f);
			}
		}
	}
	free(t->files);
	free(t->procs.buckets);
	free(t->threads.buckets);
	free(t->proc_root);
	free(t);
}

int task_tracker_see(struct task_tracker *t, uint32_t pid, uint32_t tid, const char *comm,
		     uint64_t time, uint32_t cpu, const uint64_t *user_ips, size_t nr_user)
{
	char name[COMM_LEN];
	struct task_proc *p;
	struct task_thread *th;
	struct tt_entry *e;
	int err = 0;

	/*
	 * pid 0 is the idle task of every CPU ("swapper/N", all tid 0): perf
	 * names it "swapper" itself, and one comm per CPU would flap.
	 */
	if (pid == 0)
		return 0;
	/* At most 16 bytes from BPF, maybe without a NUL at the end. */
	snprintf(name, sizeof(name), "%.*s", COMM_LEN - 1, comm ? comm : "");

	e = tt_find(&t->procs, pid);
	if (e) {
		p = proc_of(e);
		tt_touch(&t->procs, e);
	} else {
		p = proc_new(t, pid);
		if (!p)
			return -ENOMEM;
		err = describe_process(t, p, tid, name, time, cpu);
		if (err)
			return err;
	}

	e = tt_find(&t->threads, tid);
	th = e ? thread_of(e) : NULL;
	if (!th || th->proc != p) {
		err = thread_add(t, p, tid, name, false, time, cpu);
	} else {
		tt_touch(&t->threads, &th->e);
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

void task_tracker_exit(struct task_tracker *t, uint32_t pid, uint32_t tid)
{
	struct tt_entry *e;

	if (tid == pid) {
		e = tt_find(&t->procs, pid);
		if (e)
			proc_remove(t, proc_of(e));
		return;
	}
	e = tt_find(&t->threads, tid);
	if (e && thread_of(e)->proc->e.key == pid)
		thread_remove(t, thread_of(e));
}

void task_tracker_exec(struct task_tracker *t, uint32_t pid)
{
	if (!pid)
		return;
	task_tracker_exit(t, pid, pid);
	take_exec_pending(t, pid);	/* one slot per pid */
	t->exec_pending[t->exec_pending_next++ % EXEC_PENDING_SLOTS] = pid;
}
