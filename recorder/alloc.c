// SPDX-License-Identifier: MIT
/* alloc.c - the allocation tracer and its events (contract in alloc.h). */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <libelf.h>

#include <bpfrec/record.h>

#include "perfdata/attr.h"
#include "perfdata/records.h"
#include "perfdata/writer.h"
#include "recorder/alloc.h"
#include "recorder/batch.h"
#include "recorder/emit.h"
#include "recorder/percpu.h"
#include "recorder/privs.h"
#include "recorder/ringbuf.h"
#include "recorder/session_int.h"
#include "recorder/tasks.h"
#include "recorder/tracer.h"
#include "symbolize/procmaps.h"
#include "symbolize/safeopen.h"
#include "symbolize/util.h"
#include "tools/lib/array.h"

#include "bpf/alloc.h"
#include "alloc.skel.h"

/*
 * Our ids for the two events: like offcpu-time's, far above the kernel's
 * ids of real perf events, and apart from it.
 */
#define ALLOC_ID_BASE	(2ull << 48)
#define INUSE_ID_BASE	(3ull << 48)

/* A record in our batch that is an inuse sample (BPF never sends it). */
#define ALLOC_KIND_INUSE	33

/* Files probed at once: more are counted as probe errors. */
#define MAX_FILES	256
/* User addresses handed to the tracker for one task of one batch. */
#define MAX_DESCRIBE_IPS	65536

struct probed_file {
	dev_t dev;
	uint64_t ino;
};

struct alloc_tracer {
	struct alloc *skel;
	char *proc_root;	/* where the targets' maps and files are found */
	struct ringbufs *rb;
	struct batch batch;
	int cb_err;
	uint64_t interval;
	struct perf_event_attr attr, inuse_attr;
	uint64_t id, inuse_id;
	uint64_t lost_written;		/* LOST_SAMPLES written so far */
	uint64_t written, inuse;	/* SAMPLEs written, of each event */
	const struct task_tracker_hooks *next_hooks;
	void *next_hooks_ctx;
	/* Records with Python frames are written through it (session_emit_python()); NULL = none. */
	struct record_session *py_session;
	struct probed_file files[MAX_FILES];
	size_t nr_files, probe_errors;
	struct bpf_link **links;
	size_t nr_links, cap_links;
	bool preload;		/* the fast path: only its markers are probed */
	/* The fast path's library (command_env: "" = none), and the command's environment for it. */
	char preload_path[PATH_MAX];
	char env_preload[2 * PATH_MAX], env_interval[64];
	char *env[3];
	/* Scratch of alloc_flush(), kept between batches. */
	size_t *order;
	size_t cap_order;
	uint64_t *ips;
	/*
	 * The execs reported since the last inuse walk (hook_exec): the
	 * blocks a process allocated before its exec went with its old image,
	 * without a free the probes could see. Sorted and used by write_inuse().
	 */
	struct exec_mark {
		uint32_t pid;
		uint64_t time;
	} *execs;
	size_t nr_execs, cap_execs;
};

/* The names probed, in enum alloc_func order. */
static const char *const func_names[ALLOC_FUNC_MAX] = {
	[ALLOC_FUNC_MALLOC] = "malloc",
	[ALLOC_FUNC_CALLOC] = "calloc",
	[ALLOC_FUNC_REALLOC] = "realloc",
	[ALLOC_FUNC_POSIX_MEMALIGN] = "posix_memalign",
	[ALLOC_FUNC_ALIGNED_ALLOC] = "aligned_alloc",
	[ALLOC_FUNC_MEMALIGN] = "memalign",
	[ALLOC_FUNC_MMAP] = "mmap",
	[ALLOC_FUNC_FREE] = "free",
	[ALLOC_FUNC_MUNMAP] = "munmap",
};

const char *alloc_func_name(uint32_t func)
{
	return func < ALLOC_FUNC_MAX ? func_names[func] : NULL;
}

/*
 * 1 - exp(-r) for r > 0, to a few ulps, without libm: linking it costs
 * every bpfrec process ~0.3 MB resident from the start (its IFUNC
 * relocations fault in its text), and that start is the recorder's peak
 * (the BPF load, sampler.c). r is halved until small, where the series
 * of expm1 converges in a few terms, then doubled back with
 * expm1(2y) = expm1(y) * (expm1(y) + 2), which never grows the relative
 * error of a negative argument's result.
 */
static double one_minus_exp_neg(double r)
{
	double y = -r, e;
	int halvings = 0;

	/* exp(-40) is below half an ulp of 1. */
	if (r > 40)
		return 1;
	while (y < -0x1p-8) {
		y /= 2;
		halvings++;
	}
	e = y * (1 + y / 2 * (1 + y / 3 * (1 + y / 4 * (1 + y / 5 * (1 + y / 6 * (1 + y / 7))))));
	while (halvings--)
		e *= e + 2;
	return -e;
}

uint64_t alloc_weight(uint64_t size, uint64_t interval)
{
	double r, w;

	if (!size || interval <= 1)
		return size;
	r = (double)size / (double)interval;
	w = (double)size / one_minus_exp_neg(r);
	/* w >= size >= 1: adding a half and truncating rounds it. */
	return w >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)(w + 0.5);
}

size_t alloc_raw_text(uint32_t func, uint64_t size, char *buf, size_t len)
{
	const char *name = alloc_func_name(func);
	int ret;

	if (len < ALLOC_RAW_TEXT_MAX)
		return 0;
	ret = snprintf(buf, len, "%s %llu", name ? name : "?", (unsigned long long)size);
	if (ret < 0 || (size_t)ret >= len)
		return 0;
	return perfdata_raw_text_pad(buf, (size_t)ret, len);
}

void alloc_build_attr(const struct perf_event_attr *cpu_attr, uint64_t interval,
		      struct perf_event_attr *a)
{
	perfdata_bpf_output_attr(cpu_attr, a);
	a->sample_period = interval ? interval : 1;
}

static const char *base_name(const char *path)
{
	const char *base = strrchr(path, '/');

	return base ? base + 1 : path;
}

static bool is_c_library(const char *path)
{
	const char *base = base_name(path);

	return !strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5);
}

bool alloc_is_allocator_lib(const char *path)
{
	const char *base = base_name(path);

	return is_c_library(path) || !strncmp(base, "libjemalloc", 11) ||
	       !strncmp(base, "libtcmalloc", 11);
}

/* Whether a record's counts are in bounds (its size aside). */
static bool record_ok(const struct alloc_sample *r)
{
	return r->nr_user <= PROFILE_MAX_STACK && r->nr_py <= ALLOC_PY_ROOM &&
	       r->func < ALLOC_FUNC_FREE;
}

/* A record's Python frames, after its native ones (record_ok() and the size checked they are there). */
static struct py_frame *record_py_frames(struct alloc_sample *r)
{
	return (struct py_frame *)(r->frames + r->nr_user);
}

static int on_alloc_record(void *ctx, void *data, size_t size)
{
	struct alloc_tracer *a = ctx;
	const struct alloc_sample *r = data;
	void *p;

	/* Drop anything malformed rather than read past it. */
	if (size < ALLOC_SAMPLE_SIZE(0) || r->hdr.kind != ALLOC_KIND_SAMPLE || !record_ok(r) ||
	    size < ALLOC_SAMPLE_SIZE(ALLOC_SAMPLE_WORDS(r)))
		return 0;
	size = ALLOC_SAMPLE_SIZE(ALLOC_SAMPLE_WORDS(r));
	p = batch_add(&a->batch, r->hdr.time, size);
	if (!p)
		return a->cb_err = -ENOMEM;
	memcpy(p, data, size);
	/* Its Python frames are named now, in the batch's copy, while the process most likely lives (pyframes.h). */
	if (r->nr_py && a->py_session) {
		struct alloc_sample *c = p;

		session_python_prepare(a->py_session, c->hdr.pid, c->hdr.time, record_py_frames(c),
				       c->nr_py);
	}
	return 0;
}

static void alloc_free(void *t);

static bool alloc_wanted(const struct record_opts *opts)
{
	return opts->alloc_interval != 0;
}

/* On the sampler's target and unwind maps, with its own ring buffer (as big as the sampler's). */
static int alloc_open(struct record_session *s, const struct record_tracer_env *env, void **out)
{
	struct alloc_tracer *a = calloc(1, sizeof(*a));
	struct alloc *skel;
	int err;

	*out = NULL;
	if (!a)
		return -ENOMEM;
	a->interval = s->opts.alloc_interval ? s->opts.alloc_interval : ALLOC_DEFAULT_INTERVAL;
	if (a->interval > ALLOC_INTERVAL_MAX)
		a->interval = ALLOC_INTERVAL_MAX;
	alloc_build_attr(&s->attr, a->interval, &a->attr);
	a->inuse_attr = a->attr;
	a->id = ALLOC_ID_BASE + s->event_id;
	a->inuse_id = INUSE_ID_BASE + s->event_id;
	a->next_hooks = env->next_hooks;
	a->next_hooks_ctx = env->next_hooks_ctx;
	a->py_session = s->py ? s : NULL;
	/* Where the targets' maps and files are: the tracker's. */
	a->proc_root = strdup("/proc");
	if (!a->proc_root) {
		err = -ENOMEM;
		goto fail;
	}

	skel = alloc__open();
	if (!skel) {
		err = errno ? -errno : -EINVAL;
		goto fail;
	}
	a->skel = skel;
	skel->rodata->interval = a->interval;
	skel->rodata->self_tgid = (uint32_t)getpid();
	err = bpf_map__set_max_entries(skel->maps.alloc_events, (uint32_t)env->ring_bytes);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.alloc_live, ALLOC_LIVE_MAX);
	/*
	 * Preallocate the live map: uprobe programs on kernels before 6.1 may
	 * use a hash that allocates on update, but the kernel warns (a
	 * WARN_ONCE with a backtrace in its log) when one is loaded.
	 */
	if (!err && !s->kfeatures.hash_nonprealloc)
		err = bpf_map__set_map_flags(skel->maps.alloc_live,
					     bpf_map__map_flags(skel->maps.alloc_live) &
						     ~BPF_F_NO_PREALLOC);
	/* The sampler's ring buffer is only shared, never used: the records come in our own. */
	if (!err)
		err = RECORD_TRACER_LOAD(env, skel);
	if (err)
		goto fail;
	err = ringbufs_new(&a->rb);
	if (!err)
		err = ringbufs_add(a->rb, bpf_map__fd(skel->maps.alloc_events), on_alloc_record, a);
	if (err)
		goto fail;
	*out = a;
	return 0;
fail:
	alloc_free(a);
	return err;
}

static const struct bpf_object *alloc_object(const void *t)
{
	const struct alloc_tracer *a = t;

	return a->skel->obj;
}

static void alloc_detach(void *t);

static void alloc_free(void *t)
{
	struct alloc_tracer *a = t;

	if (!a)
		return;
	alloc_detach(a);
	ringbufs_free(a->rb);
	alloc__destroy(a->skel);
	batch_free(&a->batch);
	free(a->links);
	free(a->order);
	free(a->ips);
	free(a->execs);
	free(a->proc_root);
	free(a);
}

static void alloc_detach(void *t)
{
	struct alloc_tracer *a = t;

	for (size_t i = 0; i < a->nr_links; i++)
		bpf_link__destroy(a->links[i]);
	a->nr_links = 0;
}

static int add_link(struct alloc_tracer *a, struct bpf_link *l)
{
	if (ARRAY_RESERVE(a->links, a->cap_links, a->nr_links + 1, 32)) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	a->links[a->nr_links++] = l;
	return 0;
}

static int attach_one(struct alloc_tracer *a, struct bpf_program *prog, const char *path,
		      uint64_t offset, bool retprobe)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .retprobe = retprobe);
	struct bpf_link *l;

	/* pid -1: every process that maps the file; the programs keep those in scope. */
	l = bpf_program__attach_uprobe_opts(prog, -1, path, (size_t)offset, &uo);
	if (!l)
		return errno ? -errno : -EINVAL;
	return add_link(a, l);
}

/*
 * Probe the allocator entries of one file, open as fd; path names it for
 * the kernel (this process's path, or /proc/self/fd/N).
 */
static int probe_file(struct alloc_tracer *a, int fd, const char *path)
{
	struct bpf_program *entry[ALLOC_FUNC_MAX] = {
		[ALLOC_FUNC_MALLOC] = a->skel->progs.malloc_entry,
		[ALLOC_FUNC_CALLOC] = a->skel->progs.calloc_entry,
		[ALLOC_FUNC_REALLOC] = a->skel->progs.realloc_entry,
		[ALLOC_FUNC_POSIX_MEMALIGN] = a->skel->progs.posix_memalign_entry,
		[ALLOC_FUNC_ALIGNED_ALLOC] = a->skel->progs.aligned_alloc_entry,
		[ALLOC_FUNC_MEMALIGN] = a->skel->progs.memalign_entry,
		[ALLOC_FUNC_MMAP] = a->skel->progs.mmap_entry,
		[ALLOC_FUNC_FREE] = a->skel->progs.free_entry,
		[ALLOC_FUNC_MUNMAP] = a->skel->progs.munmap_entry,
	};
	uint64_t offsets[ALLOC_FUNC_MAX];
	Elf *elf;
	int err;

	err = elf_open_fd(fd, &elf);
	if (err)
		return err;
	err = elf_func_offsets(elf, func_names, ALLOC_FUNC_MAX, offsets);
	elf_end(elf);
	if (err)
		return err;
	for (uint32_t f = 0; f < ALLOC_FUNC_MAX && !err; f++) {
		bool alias = false;

		for (uint32_t g = 0; g < f; g++)
			alias |= offsets[g] == offsets[f];
		if (!offsets[f] || alias)
			continue;	/* absent, or already probed under another name */
		/* The return probe first: an entry seen always has its return. */
		if (f < ALLOC_FUNC_FREE)
			err = attach_one(a, a->skel->progs.alloc_return, path, offsets[f], true);
		if (!err)
			err = attach_one(a, entry[f], path, offsets[f], false);
	}
	return err;
}

/* The file (by device and inode) was probed already, or tried. */
static bool probed(const struct alloc_tracer *a, dev_t dev, uint64_t ino)
{
	for (size_t i = 0; i < a->nr_files; i++)
		if (a->files[i].dev == dev && a->files[i].ino == ino)
			return true;
	return false;
}

/*
 * Probe a file once (by device and inode), open as fd and named name where
 * the process maps it: failures are counted, not retried. The kernel is
 * told name when that is the same file here (so bpftool and dmesg show
 * it), else /proc/self/fd/N, the very file opened.
 */
static int probe_once(struct alloc_tracer *a, int fd, const char *name, dev_t dev,
		      uint64_t ino)
{
	char path[PATH_MAX];
	struct stat st;
	int err;

	if (probed(a, dev, ino))
		return 0;
	if (a->nr_files == MAX_FILES) {
		a->probe_errors++;
		return -E2BIG;
	}
	a->files[a->nr_files++] = (struct probed_file){ .dev = dev, .ino = ino };
	if (stat(name, &st) || st.st_dev != dev || st.st_ino != ino ||
	    snprintf(path, sizeof(path), "%s", name) >= (int)sizeof(path))
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err = probe_file(a, fd, path);
	a->probe_errors += err != 0;
	return err;
}

/* Probe the recorder's own C library: a launched command's first allocations count. */
static int attach_libc(struct alloc_tracer *a)
{
	Dl_info libc;
	struct stat st;
	int fd, err;

	if (!dladdr((void *)(uintptr_t)free, &libc) || !libc.dli_fname ||
	    libc.dli_fname[0] != '/')
		return 0;	/* a static recorder: the targets' maps name their library */
	err = safeopen(-1, libc.dli_fname, NULL, &fd, &st);
	if (err)
		return err;
	err = probe_once(a, fd, libc.dli_fname, st.st_dev, st.st_ino);
	close(fd);
	return err;
}

#ifndef BPFREC_ALLOC_LIBDIR
#define BPFREC_ALLOC_LIBDIR	"/usr/local/lib/bpfrec"
#endif

/*
 * The fast path's library in path: next to the recorder's executable, else
 * in the install directory. -ENOENT when neither has it.
 */
static int preload_find(char *path, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;
	int len;

	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			len = snprintf(path, size, "%s/%s", exe, ALLOC_PRELOAD_LIB);
			if (len > 0 && (size_t)len < size && !access(path, R_OK))
				return 0;
		}
	}
	len = snprintf(path, size, "%s/%s", BPFREC_ALLOC_LIBDIR, ALLOC_PRELOAD_LIB);
	if (len > 0 && (size_t)len < size && !access(path, R_OK))
		return 0;
	path[0] = '\0';
	return -ENOENT;
}

/* "LD_PRELOAD=..." (after any the recorder has) and "BPFREC_ALLOC_INTERVAL=..." for the command. */
static int preload_env(const char *path, uint64_t interval, char *preload, size_t preload_len,
		       char *interval_env, size_t interval_len)
{
	const char *old = getenv("LD_PRELOAD");
	int n;

	/* Appended: a library the user preloads keeps its place first. */
	if (old && *old)
		n = snprintf(preload, preload_len, "LD_PRELOAD=%s:%s", old, path);
	else
		n = snprintf(preload, preload_len, "LD_PRELOAD=%s", path);
	if (n < 0 || (size_t)n >= preload_len)
		return -ENAMETOOLONG;
	n = snprintf(interval_env, interval_len, "BPFREC_ALLOC_INTERVAL=%llu",
		     (unsigned long long)(interval ? interval : ALLOC_DEFAULT_INTERVAL));
	if (n < 0 || (size_t)n >= interval_len)
		return -ENAMETOOLONG;
	return 0;
}

/* Probe the markers of the library at path (the fast path). */
static int attach_preload(struct alloc_tracer *a, const char *path)
{
	static const char *const names[] = { "bpfrec_alloc_sampled", "bpfrec_alloc_freed" };
	struct bpf_program *progs[] = { a->skel->progs.marker_sampled,
					a->skel->progs.marker_freed };
	uint64_t offsets[2];
	Elf *elf;
	int fd, err;

	a->preload = true;
	err = elf_open_path(path, &fd, &elf);
	if (err)
		return err;
	err = elf_func_offsets(elf, names, 2, offsets);
	elf_end(elf);
	close(fd);
	for (size_t i = 0; i < 2 && !err; i++)
		err = offsets[i] ? attach_one(a, progs[i], path, offsets[i], false) : -ENOENT;
	return err;
}

static void hook_maps_changed(void *ctx, uint32_t pid, const struct procmaps_entry *maps,
			      struct task_file *const *files, size_t nr)
{
	struct alloc_tracer *a = ctx;

	for (size_t i = 0; i < nr; i++) {
		const struct procmaps_entry *e = &maps[i];
		int fd;

		if (e->path[0] != '/' || !alloc_is_allocator_lib(e->path))
			continue;
		/*
		 * The fast path: the preloaded library calls the C library's
		 * allocator, which a probe would count twice and slow down for
		 * every call. Another allocator (jemalloc, tcmalloc preloaded by
		 * the command itself) replaces ours, so it is still probed.
		 */
		if (a->preload && is_c_library(e->path))
			continue;
		if (probed(a, makedev(e->maj, e->min), e->ino))
			continue;
		/* The very file the process maps (its map_files, or its root: a container). */
		if (safeopen_mapped(a->proc_root, pid, e->start, e->end, e->path, e->maj, e->min,
				    e->ino, &fd, NULL))
			continue;
		probe_once(a, fd, e->path, makedev(e->maj, e->min), e->ino);
		close(fd);
	}
	if (a->next_hooks && a->next_hooks->maps_changed)
		a->next_hooks->maps_changed(a->next_hooks_ctx, pid, maps, files, nr);
}

static void hook_file_new(void *ctx, uint32_t pid, const struct procmaps_entry *e, int fd,
			  struct task_file *f)
{
	struct alloc_tracer *a = ctx;

	if (a->next_hooks && a->next_hooks->file_new)
		a->next_hooks->file_new(a->next_hooks_ctx, pid, e, fd, f);
}

static void hook_forget(void *ctx, uint32_t pid)
{
	struct alloc_tracer *a = ctx;

	if (a->next_hooks && a->next_hooks->forget)
		a->next_hooks->forget(a->next_hooks_ctx, pid);
}

static void hook_exec(void *ctx, uint32_t pid, uint64_t time)
{
	struct alloc_tracer *a = ctx;

	/* Out of memory: that process's old blocks stay reported, as before. */
	if (!ARRAY_RESERVE(a->execs, a->cap_execs, a->nr_execs + 1, 64))
		a->execs[a->nr_execs++] = (struct exec_mark){ .pid = pid, .time = time };
	if (a->next_hooks && a->next_hooks->exec)
		a->next_hooks->exec(a->next_hooks_ctx, pid, time);
}

/* Probes the allocator files of processes whose mappings change, then calls next_hooks. */
static const struct task_tracker_hooks alloc_tracker_hooks = {
	.maps_changed = hook_maps_changed,
	.file_new = hook_file_new,
	.forget = hook_forget,
	.exec = hook_exec,
};

/*
 * --alloc for a command the recorder launches alone (no -p, -t, -a): the
 * in-process fast path, when its library is found (else the uprobes, noted).
 */
static char *const *alloc_command_env(struct record_session *s, void *t)
{
	struct alloc_tracer *a = t;

	if (s->opts.system_wide || s->opts.nr_pids || s->opts.nr_tids)
		return NULL;
	if (preload_find(a->preload_path, sizeof(a->preload_path))) {
		session_note(s, "--alloc: " ALLOC_PRELOAD_LIB " not found next to bpfrec nor "
			     "installed; the allocator is probed with uprobes (slower)");
		return NULL;
	}
	if (preload_env(a->preload_path, s->opts.alloc_interval, a->env_preload,
			sizeof(a->env_preload), a->env_interval, sizeof(a->env_interval))) {
		session_note(s, "--alloc: LD_PRELOAD too long; the allocator is probed with "
			     "uprobes (slower)");
		a->preload_path[0] = '\0';
		return NULL;
	}
	a->env[0] = a->env_preload;
	a->env[1] = a->env_interval;
	a->env[2] = NULL;
	return a->env;
}

static int alloc_attach(struct record_session *s, void *t)
{
	struct alloc_tracer *a = t;
	/* A launched command with the preloaded library: its markers only. */
	int err = a->preload_path[0] ? attach_preload(a, a->preload_path) : attach_libc(a);

	if (privs_is_denial(err))
		return err;
	/* The targets' own allocator files are still probed as they are seen. */
	if (err && a->preload_path[0])
		session_warn(s, "cannot probe the markers of %s: %s; the command's "
			     "allocations are not recorded", a->preload_path, strerror(-err));
	else if (err)
		session_warn(s, "cannot probe the C library's allocator: %s%s; allocations "
			     "through it are not recorded", strerror(-err), err == -EINVAL ?
			     " (another tracer's uprobe on the same functions, with a "
			     "semaphore, makes the kernel refuse ours: see dmesg)" : "");
	return 0;
}

static int alloc_add_events(void *t, struct perfdata_writer *w)
{
	struct alloc_tracer *a = t;
	int err = perfdata_writer_add_event(w, PERFDATA_ALLOC_EVENT_NAME, &a->attr, &a->id, 1);

	return err ? err : perfdata_writer_add_event(w, PERFDATA_INUSE_EVENT_NAME, &a->inuse_attr,
						      &a->inuse_id, 1);
}

static int alloc_poll_fd(const void *t)
{
	const struct alloc_tracer *a = t;

	return ringbufs_epoll_fd(a->rb);
}

static int alloc_consume(void *t)
{
	struct alloc_tracer *a = t;
	int n = ringbufs_consume(a->rb);

	if (a->cb_err)
		return a->cb_err;
	return n < 0 ? n : 0;
}

/* A tracer counter (enum alloc_stat); 0 when it cannot be read. */
static uint64_t read_stat(const struct alloc_tracer *a, uint32_t key)
{
	return percpu_count(a->skel->maps.alloc_stats, key);
}

/* Batch indexes ordered by (pid, tid), then by time (the batch's order). */
static int by_task(const void *pa, const void *pb, void *ctx)
{
	size_t ia = *(const size_t *)pa, ib = *(const size_t *)pb, len;
	const struct alloc_sample *x = batch_get(ctx, ia, &len);
	const struct alloc_sample *y = batch_get(ctx, ib, &len);

	if (x->hdr.pid != y->hdr.pid)
		return x->hdr.pid < y->hdr.pid ? -1 : 1;
	if (x->hdr.tid != y->hdr.tid)
		return x->hdr.tid < y->hdr.tid ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

/*
 * Describe each (pid, tid) of the batch's first nr records once, at its first record's time,
 * with the user addresses of all its records: what the file lacks for
 * them (COMM, MMAP2s, a library loaded since) comes before any of them.
 */
static int describe_batch(struct alloc_tracer *a, struct perfdata_writer *w,
			  struct task_tracker *t, size_t nr)
{
	int err = 0;

	if (!nr)
		return 0;	/* nothing to describe, and order may still be NULL: not for qsort_r() */
	if (nr > a->cap_order) {
		size_t *p = realloc(a->order, nr * sizeof(*p));

		if (!p)
			return -ENOMEM;
		a->order = p;
		a->cap_order = nr;
	}
	if (!a->ips) {
		a->ips = malloc(MAX_DESCRIBE_IPS * sizeof(*a->ips));
		if (!a->ips)
			return -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++)
		a->order[i] = i;
	qsort_r(a->order, nr, sizeof(*a->order), by_task, &a->batch);
	for (size_t i = 0; i < nr && !err;) {
		size_t len, j, nr_ips = 0;
		const struct alloc_sample *first = batch_get(&a->batch, a->order[i], &len);
		char comm[PROFILE_COMM_LEN + 1];
		uint64_t time = first->hdr.time;

		for (j = i; j < nr; j++) {
			const struct alloc_sample *r = batch_get(&a->batch, a->order[j], &len);
			size_t n = r->nr_user;

			if (r->hdr.pid != first->hdr.pid || r->hdr.tid != first->hdr.tid)
				break;
			if (r->hdr.time < time)
				time = r->hdr.time;
			if (n > MAX_DESCRIBE_IPS - nr_ips)
				n = MAX_DESCRIBE_IPS - nr_ips;
			memcpy(a->ips + nr_ips, r->frames, n * sizeof(*a->ips));
			nr_ips += n;
		}
		memcpy(comm, first->comm, PROFILE_COMM_LEN);
		comm[PROFILE_COMM_LEN] = '\0';
		err = emit_task(w, t, first->hdr.pid, first->hdr.tid, comm, time, first->hdr.cpu,
				a->ips, nr_ips);
		i = j;
	}
	return err;
}

/* r: the batch's copy, its Python frames named in it. */
static int write_record(struct alloc_tracer *a, struct perfdata_writer *w, struct alloc_sample *r)
{
	bool inuse = r->hdr.kind == ALLOC_KIND_INUSE;
	char raw[ALLOC_RAW_TEXT_MAX];
	/* Its task was described with the batch's (describe_batch()). */
	struct emit_sample e = {
		.pid = r->hdr.pid, .tid = r->hdr.tid, .cpu = r->hdr.cpu, .time = r->hdr.time,
		.period = alloc_weight(r->size, a->interval), .id = inuse ? a->inuse_id : a->id,
		.comm = r->comm, .comm_len = sizeof(r->comm),
		.chain = {
			.ip = r->nr_user ? r->frames[0] : 0,
			.user = (const uint64_t *)r->frames,
			.nr_user = r->nr_user,
		},
		.raw = raw, .raw_size = (uint32_t)alloc_raw_text(r->func, r->size, raw, sizeof(raw)),
	};
	int err;

	if (r->nr_py && a->py_session)
		err = session_emit_python(a->py_session, &e, record_py_frames(r), r->nr_py, false);
	else
		err = emit_sample_alone(w, &e);

	if (!err) {
		a->written += !inuse;
		a->inuse += inuse;
	}
	return err;
}

/*
 * The batch's records stamped up to upto: their tasks described, then
 * their SAMPLEs in time order. The later ones wait for a round that
 * reaches them (the round's own records end at upto).
 */
static int alloc_flush(void *tr, struct perfdata_writer *w, struct task_tracker *t,
		       uint64_t upto, uint64_t *last_time)
{
	struct alloc_tracer *a = tr;
	size_t nr = 0, len;
	int err;

	batch_sort(&a->batch);
	while (nr < a->batch.nr &&
	       ((const struct alloc_sample *)batch_get(&a->batch, nr, &len))->hdr.time <= upto)
		nr++;
	err = describe_batch(a, w, t, nr);
	for (size_t i = 0; i < nr && !err; i++) {
		/* Our own copy: its Python frames are named in it. */
		struct alloc_sample *r = (struct alloc_sample *)batch_get(&a->batch, i, &len);

		err = write_record(a, w, r);
		if (r->hdr.time > *last_time)
			*last_time = r->hdr.time;
	}
	if (err)
		batch_clear(&a->batch);
	else
		batch_keep_from(&a->batch, nr);
	return err;
}

/* Records the ring buffer dropped since the last call: LOST_SAMPLES of the alloc event. */
static int alloc_write_lost(void *t, struct perfdata_writer *w, uint64_t time)
{
	struct alloc_tracer *a = t;

	return emit_lost(w, a->id, read_stat(a, ALLOC_STAT_LOST), &a->lost_written, time);
}

static int key_cmp(const void *pa, const void *pb)
{
	const struct alloc_live_key *x = pa, *y = pb;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int exec_mark_cmp(const void *pa, const void *pb)
{
	const struct exec_mark *x = pa, *y = pb;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->time < y->time ? -1 : x->time > y->time;
}

static int exec_mark_pid_cmp(const void *pa, const void *pb)
{
	const struct exec_mark *x = pa, *y = pb;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The execs since the last walk, one per pid (its latest), sorted by pid. */
static void execs_sort(struct alloc_tracer *a)
{
	size_t n = 0;

	qsort(a->execs, a->nr_execs, sizeof(*a->execs), exec_mark_cmp);
	for (size_t i = 0; i < a->nr_execs; i++) {
		if (n && a->execs[n - 1].pid == a->execs[i].pid)
			n--;
		a->execs[n++] = a->execs[i];
	}
	a->nr_execs = n;
}

/* When pid last exec'd since the last walk; 0 = it did not. */
static uint64_t exec_time(const struct alloc_tracer *a, uint32_t pid)
{
	struct exec_mark k = { .pid = pid }, *m;

	m = bsearch(&k, a->execs, a->nr_execs, sizeof(k), exec_mark_pid_cmp);
	return m ? m->time : 0;
}

/*
 * One inuse SAMPLE per sampled allocation still live, stamped no earlier
 * than *last_time (raised to what is written). Drains and writes alloc
 * records first (and their losses), so none is older than an inuse one.
 */
static int write_inuse(struct alloc_tracer *a, struct perfdata_writer *w, struct task_tracker *t,
		       uint64_t *last_time, bool drop_dead)
{
	struct bpf_map *map = a->skel->maps.alloc_live;
	size_t max = bpf_map__max_entries(map), nr = 0;
	struct alloc_live_key *keys, key, next;
	struct alloc_sample *v;
	bool first = true, dead = false;
	uint64_t exec = 0;
	int err;

	/* What the ring buffer still holds is older than any inuse sample. */
	err = alloc_consume(a);
	if (!err)
		err = alloc_flush(a, w, t, UINT64_MAX, last_time);
	if (!err)
		err = alloc_write_lost(a, w, *last_time);
	if (err < 0)
		return err;
	err = 0;
	keys = calloc(max ? max : 1, sizeof(*keys));
	v = malloc(sizeof(*v));
	if (!keys || !v) {
		free(keys);
		free(v);
		return -ENOMEM;
	}
	/*
	 * The keys first: the map may still change (--switch-output), and a
	 * walk whose key was deleted restarts, so duplicates are dropped.
	 */
	while (nr < max && !bpf_map__get_next_key(map, first ? NULL : &key, &next, sizeof(next))) {
		first = false;
		key = next;
		keys[nr++] = next;
	}
	qsort(keys, nr, sizeof(*keys), key_cmp);
	execs_sort(a);
	for (size_t i = 0; i < nr && !err; i++) {
		void *p;

		if (i && !key_cmp(&keys[i - 1], &keys[i]))
			continue;
		/* Keys are sorted by pid: what is known of a process, once per process. */
		if (!i || keys[i - 1].pid != keys[i].pid) {
			exec = exec_time(a, keys[i].pid);
			/*
			 * A process gone is reported what it held at its exit in
			 * this file, then no more: a later file (--switch-output)
			 * has neither the memory nor the mappings to place it, and
			 * a long recording would keep every exited process's
			 * blocks in alloc_live until the map is full.
			 */
			dead = drop_dead && kill((pid_t)keys[i].pid, 0) && errno == ESRCH;
		}
		if (bpf_map__lookup_elem(map, &keys[i], sizeof(keys[i]), v, sizeof(*v), 0))
			continue;
		/*
		 * A block allocated before its process's exec went with the old
		 * image: not held, and its stack names an image no file of the
		 * process maps any more (perf: [unknown]; pprof: no main binary).
		 */
		if (exec && v->hdr.time < exec) {
			bpf_map__delete_elem(map, &keys[i], sizeof(keys[i]), 0);
			continue;
		}
		if (dead)
			bpf_map__delete_elem(map, &keys[i], sizeof(keys[i]), 0);
		if (!record_ok(v))
			continue;
		v->hdr.kind = ALLOC_KIND_INUSE;
		if (v->hdr.time < *last_time)
			v->hdr.time = *last_time;
		p = batch_add(&a->batch, v->hdr.time, ALLOC_SAMPLE_SIZE(ALLOC_SAMPLE_WORDS(v)));
		if (!p)
			err = -ENOMEM;
		else
			memcpy(p, v, ALLOC_SAMPLE_SIZE(ALLOC_SAMPLE_WORDS(v)));
	}
	free(keys);
	free(v);
	a->nr_execs = 0;
	if (!err)
		err = alloc_flush(a, w, t, UINT64_MAX, last_time);
	batch_clear(&a->batch);
	return err;
}

/* The end of every file: what is still held (by the processes gone, once). */
static int alloc_file_end(struct record_session *s, void *t, bool last)
{
	return write_inuse(t, s->w, s->tracker, &s->last_time, !last);
}

static void alloc_stats(const void *t, struct record_status *st)
{
	const struct alloc_tracer *a = t;
	struct bpfrec_alloc_stats *out = &st->alloc;

	*out = (struct bpfrec_alloc_stats){
		.sz = sizeof(*out),
		.enabled = true,
		.interval = a->interval,
		.calls = read_stat(a, ALLOC_STAT_CALLS),
		.sampled = read_stat(a, ALLOC_STAT_SAMPLED),
		.written = a->written,
		.lost = read_stat(a, ALLOC_STAT_LOST),
		.live_full = read_stat(a, ALLOC_STAT_LIVE_FULL),
		.freed = read_stat(a, ALLOC_STAT_FREED),
		.inuse = a->inuse,
		.no_storage = read_stat(a, ALLOC_STAT_NO_STORAGE),
		.files_probed = a->nr_files - (a->probe_errors < a->nr_files ? a->probe_errors :
					       a->nr_files),
		.probe_errors = a->probe_errors,
	};
	st->rec.lost += out->lost;
}

static uint64_t alloc_py_cut(const void *t)
{
	return read_stat(t, ALLOC_STAT_PY_CUT);
}

const struct record_tracer_ops alloc_tracer = {
	.option = "--alloc",
	.what = "the allocation tracer",
	.wanted = alloc_wanted,
	.open = alloc_open,
	.object = alloc_object,
	.hooks = &alloc_tracker_hooks,
	.command_env = alloc_command_env,
	.add_events = alloc_add_events,
	.attach = alloc_attach,
	.detach = alloc_detach,
	.poll_fd = alloc_poll_fd,
	.consume = alloc_consume,
	.flush = alloc_flush,
	.write_lost = alloc_write_lost,
	.file_end = alloc_file_end,
	.stats = alloc_stats,
	.py_cut = alloc_py_cut,
	.free = alloc_free,
};
