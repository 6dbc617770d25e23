// SPDX-License-Identifier: MIT
/*
 * aspace.c - the processes of a recording, replayed (see aspace.h).
 *
 * Each pid has a sorted array of disjoint [start, end) intervals; insertion
 * cuts the overlapped part out of the neighbours and splices the new
 * interval in. Processes map tens to hundreds of executable regions, so a
 * sorted array with binary search beats a tree here. Pids, tids and
 * mappings are found through pp_intern tables (key -> dense index).
 *
 * pp_aspace_record() decodes a record into those steps: an MMAP interns
 * its mapping and maps it, a COMM names a thread (and with exec empties
 * its process's maps), a FORK names the new thread and copies a new
 * process's maps. The executable of a pid is tracked beside its maps, so
 * fork and exec update both at once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "perfdata/records.h"
#include "tools/lib/sorted.h"
#include "aspace.h"
#include "tools/lib/array.h"

struct interval {
	uint64_t start, end;
	uint32_t value;
};

struct space {
	struct interval *iv;
	size_t nr, cap;
	uint32_t generation;
	bool exe_mapped;	/* its executable is mapped: later files are not it */
};

struct pp_aspace {
	struct pp_intern *strs;
	struct pp_intern pids;	/* key: uint32_t pid; id indexes spaces */
	struct space *spaces;
	size_t cap;
	struct pp_intern mappings;	/* key: struct pp_mapping */
	uint8_t *mapping_exe;	/* per mapping: pp_aspace_is_exe() */
	size_t mapping_exe_cap;
	struct pp_intern tids;	/* key: uint32_t tid; id indexes tid_comm */
	uint32_t *tid_comm;	/* sid + 1; 0 = unknown */
	size_t tid_comm_cap;
	uint32_t kernel_mapping;	/* id + 1 of [kernel.kallsyms]; 0 = none yet */
	uint64_t kernel_ref_addr;	/* its pgoff: the reference symbol's address */
	char kernel_ref_sym[64];
};

int pp_aspace_new(struct pp_intern *strs, struct pp_aspace **out)
{
	struct pp_aspace *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->strs = strs;
	*out = a;
	return 0;
}

void pp_aspace_free(struct pp_aspace *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < pp_intern_count(&a->pids); i++)
		free(a->spaces[i].iv);
	free(a->spaces);
	pp_intern_free(&a->pids);
	pp_intern_free(&a->mappings);
	free(a->mapping_exe);
	pp_intern_free(&a->tids);
	free(a->tid_comm);
	free(a);
}

static struct space *find_space(const struct pp_aspace *a, uint32_t pid)
{
	int64_t id = pp_intern_find(&a->pids, &pid, sizeof(pid));

	return id < 0 ? NULL : &a->spaces[id];
}

static struct space *get_space(struct pp_aspace *a, uint32_t pid)
{
	int64_t id;

	if (ARRAY_RESERVE(a->spaces, a->cap, pp_intern_count(&a->pids) + 1, 64))
		return NULL;
	bool added;

	id = pp_intern_put(&a->pids, &pid, sizeof(pid), &added);
	if (id < 0)
		return NULL;
	if (added) {
		memset(&a->spaces[id], 0, sizeof(a->spaces[id]));
		a->spaces[id].generation = 1;
	}
	return &a->spaces[id];
}

/* Index of the first interval whose end is above addr. */
static size_t first_ending_after(const struct space *s, uint64_t addr)
{
	return SORTED_PARTITION(s->nr, i, s->iv[i].end <= addr);
}

int pp_aspace_map(struct pp_aspace *a, uint32_t pid, uint64_t start, uint64_t len,
		  uint32_t value)
{
	struct space *s;
	uint64_t end = start + len;

	if (!len)
		return -EINVAL;
	if (end < start)	/* wraps: clamp to the top of the address space */
		end = UINT64_MAX;
	s = get_space(a, pid);
	if (!s)
		return -ENOMEM;
	if (ARRAY_RESERVE(s->iv, s->cap, s->nr + 2, 16))
		return -ENOMEM;

	/* [lo, hi) are the intervals that overlap [start, end). */
	size_t lo = first_ending_after(s, start), hi = lo;

	while (hi < s->nr && s->iv[hi].start < end)
		hi++;

	struct interval piece[3];
	size_t n = 0;

	if (lo < hi && s->iv[lo].start < start)
		piece[n++] = (struct interval){ s->iv[lo].start, start, s->iv[lo].value };
	piece[n++] = (struct interval){ start, end, value };
	if (lo < hi && s->iv[hi - 1].end > end)
		piece[n++] = (struct interval){ end, s->iv[hi - 1].end, s->iv[hi - 1].value };

	/* Replace iv[lo, hi) by the n pieces (n <= hi - lo + 2: room reserved above). */
	memmove(&s->iv[lo + n], &s->iv[hi], (s->nr - hi) * sizeof(*s->iv));
	memcpy(&s->iv[lo], piece, n * sizeof(*piece));
	s->nr = s->nr - (hi - lo) + n;
	s->generation++;
	return 0;
}

int pp_aspace_find(const struct pp_aspace *a, uint32_t pid, uint64_t addr, uint32_t *value)
{
	const struct space *s = find_space(a, pid);
	size_t i;

	if (!s)
		return -ENOENT;
	i = first_ending_after(s, addr);
	if (i == s->nr || s->iv[i].start > addr)
		return -ENOENT;
	*value = s->iv[i].value;
	return 0;
}

int pp_aspace_fork(struct pp_aspace *a, uint32_t child, uint32_t parent)
{
	struct space *c, *p;
	struct interval *iv = NULL;
	size_t nr;

	if (child == parent)
		return 0;
	/* get_space() may move the array: look the parent up after it. */
	c = get_space(a, child);
	if (!c)
		return -ENOMEM;
	p = find_space(a, parent);
	nr = p ? p->nr : 0;
	if (nr) {
		iv = malloc(nr * sizeof(*iv));
		if (!iv)
			return -ENOMEM;
		memcpy(iv, p->iv, nr * sizeof(*iv));
	}
	free(c->iv);
	c->iv = iv;
	c->nr = c->cap = nr;
	c->generation++;
	c->exe_mapped = true;
	return 0;
}

void pp_aspace_exec(struct pp_aspace *a, uint32_t pid)
{
	struct space *s = find_space(a, pid);

	if (s) {
		s->nr = 0;
		s->generation++;
		s->exe_mapped = false;
	}
}

bool pp_aspace_known(const struct pp_aspace *a, uint32_t pid)
{
	return find_space(a, pid) != NULL;
}

uint32_t pp_aspace_generation(const struct pp_aspace *a, uint32_t pid)
{
	const struct space *s = find_space(a, pid);

	return s ? s->generation : 0;
}

size_t pp_aspace_count(const struct pp_aspace *a, uint32_t pid)
{
	const struct space *s = find_space(a, pid);

	return s ? s->nr : 0;
}

int pp_aspace_at(const struct pp_aspace *a, uint32_t pid, size_t i, uint64_t *start,
		 uint64_t *end, uint32_t *value)
{
	const struct space *s = find_space(a, pid);

	if (!s || i >= s->nr)
		return -ENOENT;
	*start = s->iv[i].start;
	*end = s->iv[i].end;
	*value = s->iv[i].value;
	return 0;
}

/* ---- the records ---- */

size_t pp_aspace_nr_mappings(const struct pp_aspace *a)
{
	return pp_intern_count(&a->mappings);
}

const struct pp_mapping *pp_aspace_mapping(const struct pp_aspace *a, uint32_t id)
{
	return pp_intern_get(&a->mappings, id, NULL);
}

void pp_aspace_sym_mapping(const struct pp_aspace *a, uint32_t id, struct sym_mapping *out)
{
	const struct pp_mapping *m = pp_aspace_mapping(a, id);

	*out = (struct sym_mapping){
		.path = pp_intern_get(a->strs, m->filename, NULL),
		.start = m->start,
		.len = m->len,
		.pgoff = m->pgoff,
		.build_id = m->build_id_size ? m->build_id : NULL,
		.build_id_size = m->build_id_size,
	};
}

bool pp_aspace_is_exe(const struct pp_aspace *a, uint32_t id)
{
	return id < a->mapping_exe_cap && a->mapping_exe[id];
}

const char *pp_aspace_kernel_ref(const struct pp_aspace *a, uint64_t *addr)
{
	*addr = a->kernel_ref_addr;
	return a->kernel_ref_sym;
}

uint32_t pp_aspace_comm(const struct pp_aspace *a, uint32_t tid)
{
	int64_t id = pp_intern_find(&a->tids, &tid, sizeof(tid));

	return id < 0 ? 0 : a->tid_comm[id];
}

static int set_comm(struct pp_aspace *a, uint32_t tid, uint32_t sid_plus1)
{
	int64_t id;

	if (ARRAY_RESERVE(a->tid_comm, a->tid_comm_cap, pp_intern_count(&a->tids) + 1, 256))
		return -ENOMEM;
	id = pp_intern_put(&a->tids, &tid, sizeof(tid), NULL);
	if (id < 0)
		return id;
	a->tid_comm[id] = sid_plus1;
	return 0;
}

/*
 * pprof shows mapping 1 as "the" binary. The executable is the first file
 * a process maps after exec (the ELF loader maps it before the
 * interpreter; perf synthesizes /proc/PID/maps in address order, where it
 * comes first too), so remember which mappings were such a first file.
 */
static int mark_exe(struct pp_aspace *a, uint32_t pid, uint32_t id)
{
	struct space *s = get_space(a, pid);

	if (!s)
		return -ENOMEM;
	if (s->exe_mapped)
		return 0;
	s->exe_mapped = true;
	if (id >= a->mapping_exe_cap) {
		size_t old = a->mapping_exe_cap;

		if (ARRAY_RESERVE(a->mapping_exe, a->mapping_exe_cap, (size_t)id + 1, 256))
			return -ENOMEM;
		memset(a->mapping_exe + old, 0, a->mapping_exe_cap - old);
	}
	a->mapping_exe[id] = 1;
	return 0;
}

static bool is_anon_name(const char *f)
{
	return !f[0] || !strncmp(f, "//anon", 6) || !strncmp(f, "[anon", 5) ||
	       !strncmp(f, "/memfd:", 7) || !strncmp(f, "/dev/zero", 9) ||
	       !strncmp(f, "/anon_hugepage", 14);
}

/* The name of anonymous executable memory: "//anon" -> "[anon]",
 * "/memfd:jit (deleted)" -> "[memfd:jit]" (see aspace.h). */
static void anon_name(const char *f, char *out, size_t len)
{
	size_t n;

	while (*f == '/')
		f++;
	if (!*f || !strcmp(f, "anon") || !strcmp(f, "dev/zero")) {
		snprintf(out, len, "[anon]");
		return;
	}
	if (*f == '[') {
		snprintf(out, len, "%s", f);
		return;
	}
	n = strlen(f);
	if (n > 10 && !strcmp(f + n - 10, " (deleted)"))
		n -= 10;
	snprintf(out, len, "[%.*s]", (int)n, f);
	for (char *p = out; *p; p++)
		if (*p == '/')
			*p = '_';
}

static int on_mmap(struct pp_aspace *a, const struct perf_event_header *h)
{
	struct perfdata_mmap m;
	struct pp_mapping k = { 0 };
	bool kernel;
	int64_t fsid, id;
	int err;

	err = h->type == PERF_RECORD_MMAP ? perfdata_decode_mmap(h, &m) : perfdata_decode_mmap2(h, &m);
	if (err)
		return 1;
	/* Data mappings (perf record -d) never hold code. */
	if (h->misc & PERF_RECORD_MISC_MMAP_DATA)
		return 0;
	if (h->type == PERF_RECORD_MMAP2 && m.prot && !(m.prot & PROT_EXEC))
		return 0;
	if (!m.len)
		return 0;
	kernel = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL ||
		 m.pid == UINT32_MAX;

	const char *file = m.filename ? m.filename : "";
	char anon[256];

	k.start = m.start;
	k.len = m.len;
	k.pgoff = m.pgoff;
	if (kernel) {
		k.kind = PP_MAPPING_KERNEL;
		/* "[kernel.kallsyms]_text": the map of the kernel image; the suffix
		 * names the symbol whose address pgoff holds. */
		if (!strncmp(file, "[kernel.kallsyms]", 17)) {
			snprintf(a->kernel_ref_sym, sizeof(a->kernel_ref_sym), "%s", file + 17);
			a->kernel_ref_addr = m.pgoff;
			file = "[kernel.kallsyms]";
		}
	} else if (is_anon_name(file)) {
		k.kind = PP_MAPPING_ANON;
		k.pid = m.pid;
		anon_name(file, anon, sizeof(anon));
		file = anon;
	} else {
		k.kind = PP_MAPPING_FILE;
	}
	fsid = pp_intern_str(a->strs, file);
	if (fsid < 0)
		return fsid;
	k.filename = fsid;
	if (m.build_id_size) {
		k.build_id_size = m.build_id_size > PERFDATA_BUILD_ID_MAX ? PERFDATA_BUILD_ID_MAX
									   : m.build_id_size;
		memcpy(k.build_id, m.build_id, k.build_id_size);
	}
	id = pp_intern_put(&a->mappings, &k, sizeof(k), NULL);
	if (id < 0)
		return id;
	if (kernel && !strcmp(file, "[kernel.kallsyms]"))
		a->kernel_mapping = id + 1;
	if (k.kind == PP_MAPPING_FILE) {
		err = mark_exe(a, m.pid, id);
		if (err)
			return err;
	}
	return pp_aspace_map(a, kernel ? PP_ASPACE_KERNEL : m.pid, m.start, m.len, id);
}

int64_t pp_aspace_kernel_mapping(struct pp_aspace *a)
{
	struct pp_mapping k = { 0 };
	int64_t fsid, id;

	if (a->kernel_mapping)
		return a->kernel_mapping - 1;
	fsid = pp_intern_str(a->strs, "[kernel.kallsyms]");
	if (fsid < 0)
		return fsid;
	k.start = PERFDATA_KERNEL_ADDR_MIN;
	k.len = -PERFDATA_KERNEL_ADDR_MIN;
	k.kind = PP_MAPPING_KERNEL;
	k.filename = fsid;
	id = pp_intern_put(&a->mappings, &k, sizeof(k), NULL);
	if (id >= 0)
		a->kernel_mapping = id + 1;
	return id;
}

static int on_comm(struct pp_aspace *a, const struct perf_event_header *h)
{
	struct perfdata_comm cm;
	int64_t sid;

	if (perfdata_decode_comm(h, &cm))
		return 1;
	sid = pp_intern_str(a->strs, cm.comm ? cm.comm : "");
	if (sid < 0)
		return sid;
	if (cm.exec || (h->misc & PERF_RECORD_MISC_COMM_EXEC))
		pp_aspace_exec(a, cm.pid);
	return set_comm(a, cm.tid, sid + 1);
}

static int on_fork(struct pp_aspace *a, const struct perf_event_header *h)
{
	struct perfdata_task t;
	uint32_t comm;
	int err;

	if (perfdata_decode_task(h, &t))
		return 1;
	/* A new thread or process starts with its parent's comm. */
	comm = pp_aspace_comm(a, t.ptid);
	if (!comm)
		comm = pp_aspace_comm(a, t.ppid);
	if (comm) {
		err = set_comm(a, t.tid, comm);
		if (err)
			return err;
	}
	/* A new process (not a thread) starts with a copy of its parent's maps. */
	if (t.pid != t.ppid)
		return pp_aspace_fork(a, t.pid, t.ppid);
	return 0;
}

int pp_aspace_record(struct pp_aspace *a, const struct perf_event_header *h)
{
	switch (h->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return on_mmap(a, h);
	case PERF_RECORD_COMM:
		return on_comm(a, h);
	case PERF_RECORD_FORK:
		return on_fork(a, h);
	default:
		return 0;
	}
}
