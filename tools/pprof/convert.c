// SPDX-License-Identifier: MIT
/*
 * convert.c - perf.data to pprof profiles (see convert.h).
 *
 * Phase 1 tables (all pp_intern sets, ids dense):
 *   strs     NUL-terminated strings (comms, file names, symbol names)
 *   cmaps    mappings as recorded (file, start, len, pgoff, build-id)
 *   frames   (mapping, address, leaf/caller, kernel) of every distinct frame
 *   stacks   arrays of frame ids, leaf first
 *   labelsets arrays of label values
 *   samples  (event, stack, labelset) -> count and summed period
 * SAMPLE records are shrunk to what the profile needs (struct csample)
 * before they are queued for time ordering; other records are queued as
 * they are and decoded when their turn comes.
 *
 * Phase 2 resolves each frame once (cache shared by all events) and feeds
 * the pprof builder of the requested event.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "perfdata/reader.h"
#include "convert.h"
#include "intern.h"
#include "aspace.h"
#include "profile.h"
#include "reorder.h"
#include "trace.h"
#include "zstd.h"

/* Our own record type for shrunk samples inside the reorder queue. */
#define CSAMPLE_TYPE 0x7fff

#define CSAMPLE_HAS_CPU 1

struct csample {
	struct perf_event_header h;	/* misc: the sample's cpumode */
	uint32_t flags;			/* CSAMPLE_HAS_CPU */
	uint32_t pad;
	uint32_t event;			/* reader event index */
	uint32_t pid, tid, cpu;
	uint32_t nr_ips;
	uint32_t raw_size;
	uint64_t period;
	uint64_t ip;
	/* then nr_ips u64, then raw_size bytes */
};

enum cmap_kind { CMAP_FILE, CMAP_KERNEL, CMAP_ANON };

struct cmap_key {
	uint64_t start, len, pgoff;
	uint32_t filename;		/* sid */
	uint32_t pid;			/* owner of anonymous memory, else 0 */
	uint8_t kind;
	uint8_t build_id_size;
	uint8_t build_id[PERFDATA_BUILD_ID_MAX];
	uint8_t pad[2];
};

enum { FRAME_CALLER = 1, FRAME_KERNEL = 2, FRAME_GUEST = 4 };

struct frame_key {
	uint64_t addr;
	uint32_t cmap;			/* cmap id + 1; 0 = no mapping */
	uint32_t pid;			/* unmapped user frames: whose (perf-PID.map) */
	uint32_t flags;
	uint32_t pad;
};

struct sample_key {
	uint32_t event, stack, labels, pad;
};

struct label_val {
	uint32_t spec;			/* index into opts.labels */
	uint32_t is_str;
	uint64_t value;			/* number, or sid */
};

struct counts {
	uint64_t count, weight;
};

struct rline {
	uint32_t function, file;	/* sids */
	int64_t line;
};

struct resolved {
	uint32_t first, nr;		/* into c->lines */
	uint8_t flags;			/* PPROF_HAS_* */
	bool done;
};

struct bid_key {
	uint32_t filename;		/* sid */
	uint32_t kernel;
};

struct bid_val {
	uint8_t size;
	uint8_t id[PERFDATA_BUILD_ID_MAX];
	uint32_t hex;			/* sid of the hex form */
};

struct profile_info {
	uint32_t event;
	char *name;			/* the event's full name */
	char *short_name;		/* for sample types and file names */
	uint64_t samples;
};

struct pp_convert {
	struct pp_convert_opts opts;
	struct perfdata_reader *r;
	struct pp_reorder *q;
	struct pp_aspace *as;
	struct pp_intern strs, cmaps, frames, stacks, labelsets, samples, tids;
	/* raw callchain (+ pid, map generations) -> stack id, a shortcut past
	 * the per-frame lookups; emptied when it outgrows the stacks. */
	struct pp_intern rawstacks;
	uint32_t *raw_stack;
	size_t raw_stack_cap;
	uint32_t *tid_comm;		/* sid + 1 per tids entry; 0 = unknown */
	size_t tid_comm_cap;
	struct counts *counts;
	size_t counts_cap;
	uint8_t *cmap_exe;		/* per cmap: the first file a process mapped after exec */
	size_t cmap_exe_cap;
	struct pp_intern exe_pids;	/* key: pid; exe_seen[id] */
	bool *exe_seen;
	size_t exe_seen_cap;
	uint32_t kernel_cmap;		/* cmap id + 1 of [kernel.kallsyms]; 0 = none yet */
	uint64_t kernel_ref_addr;	/* its pgoff: the reference symbol's address */
	char kernel_ref_sym[64];
	uint64_t first_time, last_time;
	bool have_time;
	uint64_t max_time;
	struct profile_info *profiles;
	size_t nr_profiles;
	bool profiles_made;
	/* phase 2 */
	struct symbolizer *sym;
	bool sym_tried;
	struct resolved *resolved;
	struct rline *lines;
	size_t nr_lines, lines_cap;
	struct pp_intern build_ids;	/* key: struct bid_key; value in bid_vals */
	struct bid_val *bid_vals;
	size_t bid_cap;
	bool build_ids_loaded;
	uint32_t *ev_profile;		/* reader event index -> profile, UINT32_MAX = none */
	int8_t *ev_sel;			/* reader event index -> selected? -1 = not known yet */
	size_t nr_ev_sel;
	size_t nr_ev_profile;
	int64_t kernel_delta;		/* add to recorded kernel addresses for kallsyms */
	bool kernel_ok;			/* kallsyms usable for this recording */
	bool kernel_checked;
	struct pp_trace *trace;
	bool trace_tried;
	/* perf record -z: the zstd stream and the records it yielded so far */
	struct pp_zstd *zstd;
	unsigned char *zbuf;
	size_t zlen, zcap;
	/* scratch */
	uint32_t *stack_buf;
	size_t stack_cap;
	uint8_t *rec_buf;
	size_t rec_cap;
	struct pp_convert_stats stats;
	char warning[512];
	char err[512];
};

static int fail(struct pp_convert *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct pp_convert *c, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return err;
}

const char *pp_convert_error(const struct pp_convert *c)
{
	return c->err[0] ? c->err : "unknown error";
}

const struct pp_convert_stats *pp_convert_stats(const struct pp_convert *c)
{
	return &c->stats;
}

/* ---- strings ---- */

static int64_t sid_of(struct pp_convert *c, const char *s)
{
	return pp_intern_put(&c->strs, s, strlen(s) + 1, NULL);
}

static const char *str_of(const struct pp_convert *c, uint32_t sid)
{
	return pp_intern_get(&c->strs, sid, NULL);
}

/* ---- setup ---- */

static int deliver(const struct perf_event_header *h, uint64_t time, void *ctx);

int pp_convert_new(const struct pp_convert_opts *opts, struct perfdata_reader *r,
		   struct pp_convert **out)
{
	struct pp_convert *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return -ENOMEM;
	c->opts = *opts;
	if (!c->opts.input_name)
		c->opts.input_name = "perf.data";
	c->r = r;
	err = pp_reorder_new(opts->reorder_mem_limit, deliver, c, &c->q);
	if (!err)
		err = pp_aspace_new(&c->as);
	if (!err && sid_of(c, "") != 0)
		err = -ENOMEM;
	if (err) {
		pp_convert_free(c);
		return err;
	}
	*out = c;
	return 0;
}

void pp_convert_free(struct pp_convert *c)
{
	if (!c)
		return;
	pp_reorder_free(c->q);
	pp_aspace_free(c->as);
	pp_intern_free(&c->strs);
	pp_intern_free(&c->cmaps);
	pp_intern_free(&c->frames);
	pp_intern_free(&c->stacks);
	pp_intern_free(&c->labelsets);
	pp_intern_free(&c->samples);
	pp_intern_free(&c->tids);
	pp_intern_free(&c->rawstacks);
	free(c->raw_stack);
	pp_intern_free(&c->build_ids);
	pp_intern_free(&c->exe_pids);
	free(c->exe_seen);
	free(c->cmap_exe);
	free(c->bid_vals);
	free(c->ev_profile);
	free(c->ev_sel);
	free(c->tid_comm);
	free(c->counts);
	for (size_t i = 0; i < c->nr_profiles; i++) {
		free(c->profiles[i].name);
		free(c->profiles[i].short_name);
	}
	free(c->profiles);
	if (c->sym)
		symbolizer_free(c->sym);
	pp_trace_free(c->trace);
	free(c->resolved);
	free(c->lines);
	pp_zstd_free(c->zstd);
	free(c->zbuf);
	free(c->stack_buf);
	free(c->rec_buf);
	free(c);
}

/* ---- events ---- */

static const char *sw_names[] = {
	[PERF_COUNT_SW_CPU_CLOCK] = "cpu-clock",
	[PERF_COUNT_SW_TASK_CLOCK] = "task-clock",
	[PERF_COUNT_SW_PAGE_FAULTS] = "page-faults",
	[PERF_COUNT_SW_CONTEXT_SWITCHES] = "context-switches",
	[PERF_COUNT_SW_CPU_MIGRATIONS] = "cpu-migrations",
	[PERF_COUNT_SW_PAGE_FAULTS_MIN] = "minor-faults",
	[PERF_COUNT_SW_PAGE_FAULTS_MAJ] = "major-faults",
	[PERF_COUNT_SW_ALIGNMENT_FAULTS] = "alignment-faults",
	[PERF_COUNT_SW_EMULATION_FAULTS] = "emulation-faults",
	[PERF_COUNT_SW_DUMMY] = "dummy",
	[PERF_COUNT_SW_BPF_OUTPUT] = "bpf-output",
};

static const char *hw_names[] = {
	[PERF_COUNT_HW_CPU_CYCLES] = "cycles",
	[PERF_COUNT_HW_INSTRUCTIONS] = "instructions",
	[PERF_COUNT_HW_CACHE_REFERENCES] = "cache-references",
	[PERF_COUNT_HW_CACHE_MISSES] = "cache-misses",
	[PERF_COUNT_HW_BRANCH_INSTRUCTIONS] = "branches",
	[PERF_COUNT_HW_BRANCH_MISSES] = "branch-misses",
	[PERF_COUNT_HW_BUS_CYCLES] = "bus-cycles",
	[PERF_COUNT_HW_STALLED_CYCLES_FRONTEND] = "stalled-cycles-frontend",
	[PERF_COUNT_HW_STALLED_CYCLES_BACKEND] = "stalled-cycles-backend",
	[PERF_COUNT_HW_REF_CPU_CYCLES] = "ref-cycles",
};

/* The event's name as perf shows it: EVENT_DESC's, else made from the attr. */
static char *event_name(const struct perfdata_event *ev)
{
	const struct perf_event_attr *a = &ev->attr;
	char buf[64];
	const char *n = NULL;

	if (ev->name && ev->name[0])
		return strdup(ev->name);
	if (a->type == PERF_TYPE_SOFTWARE && a->config < sizeof(sw_names) / sizeof(sw_names[0]))
		n = sw_names[a->config];
	else if (a->type == PERF_TYPE_HARDWARE && a->config < sizeof(hw_names) / sizeof(hw_names[0]))
		n = hw_names[a->config];
	if (n)
		return strdup(n);
	snprintf(buf, sizeof(buf), "raw-%u-0x%llx", a->type, (unsigned long long)a->config);
	return strdup(buf);
}

static bool is_dummy(const struct perfdata_event *ev)
{
	return ev->attr.type == PERF_TYPE_SOFTWARE && ev->attr.config == PERF_COUNT_SW_DUMMY;
}

static bool is_timer(const struct perfdata_event *ev)
{
	return ev->attr.type == PERF_TYPE_SOFTWARE &&
	       (ev->attr.config == PERF_COUNT_SW_CPU_CLOCK ||
		ev->attr.config == PERF_COUNT_SW_TASK_CLOCK);
}

static bool is_offcpu(const char *name)
{
	return !strcmp(name, "offcpu-time");
}

/* Does this event name match --event? Modifiers (":u", ":ppp") may be left out. */
static bool event_matches(const char *name, const char *want)
{
	size_t n = strlen(want);

	if (!strcmp(name, want))
		return true;
	return !strncmp(name, want, n) && name[n] == ':' && !strchr(want, ':');
}

/*
 * perf names events with config terms as written on its command line:
 * "page-faults/period=1/", "cpu/cycles,period=1000/u". The short name is
 * the event proper: the first term without '=' ("cycles"), else the part
 * before the first '/' ("page-faults"). Other names are kept.
 */
static char *short_event_name(const char *name)
{
	const char *open = strchr(name, '/'), *close = open ? strrchr(name, '/') : NULL;

	if (!open || close == open)
		return strdup(name);
	for (const char *t = open + 1; t < close;) {
		size_t n = strcspn(t, ",/");

		if (n && !memchr(t, '=', n))
			return strndup(t, n);
		t += n + 1;
	}
	return strndup(name, open - name);
}

static size_t event_index(const struct pp_convert *c, const struct perfdata_event *ev)
{
	size_t n = perfdata_reader_nr_events(c->r);

	for (size_t i = 0; i < n; i++)
		if (perfdata_reader_event(c->r, i) == ev)
			return i;
	return SIZE_MAX;
}

/* --event: decided per sample, since a pipe announces events as it goes. */
static bool event_selected(const struct pp_convert *c, const struct perfdata_event *ev)
{
	bool ok;
	char *name;

	if (!c->opts.event)
		return true;
	name = event_name(ev);
	ok = name && event_matches(name, c->opts.event);
	if (name && !ok) {
		char *short_name = short_event_name(name);

		ok = short_name && event_matches(short_name, c->opts.event);
		free(short_name);
	}
	free(name);
	return ok;
}

/* event_selected() and event_index() of a sample's event, cached per event. */
static int sample_event(struct pp_convert *c, const struct perfdata_event *ev, size_t *idx)
{
	size_t n = perfdata_reader_nr_events(c->r);

	if (n > c->nr_ev_sel) {
		int8_t *sel = realloc(c->ev_sel, n);

		if (!sel)
			return -ENOMEM;
		memset(sel + c->nr_ev_sel, -1, n - c->nr_ev_sel);
		c->ev_sel = sel;
		c->nr_ev_sel = n;
	}
	*idx = event_index(c, ev);
	if (*idx == SIZE_MAX)
		return -ENOENT;
	if (c->ev_sel[*idx] < 0)
		c->ev_sel[*idx] = event_selected(c, ev) && !is_dummy(ev);
	return c->ev_sel[*idx];
}

/* ---- tid -> comm ---- */

static int set_comm(struct pp_convert *c, uint32_t tid, uint32_t sid_plus1)
{
	int64_t id;

	if (pp_intern_count(&c->tids) >= c->tid_comm_cap) {
		size_t cap = c->tid_comm_cap ? c->tid_comm_cap * 2 : 256;
		uint32_t *t = realloc(c->tid_comm, cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		c->tid_comm = t;
		c->tid_comm_cap = cap;
	}
	id = pp_intern_put(&c->tids, &tid, sizeof(tid), NULL);
	if (id < 0)
		return id;
	c->tid_comm[id] = sid_plus1;
	return 0;
}

/* sid + 1 of tid's comm, 0 when unknown. */
static uint32_t comm_of(const struct pp_convert *c, uint32_t tid)
{
	int64_t id = pp_intern_find(&c->tids, &tid, sizeof(tid));

	return id < 0 ? 0 : c->tid_comm[id];
}

/* ---- mappings ---- */

static bool is_anon_name(const char *f)
{
	return !f[0] || !strncmp(f, "//anon", 6) || !strncmp(f, "[anon", 5) ||
	       !strncmp(f, "/memfd:", 7) || !strncmp(f, "/dev/zero", 9) ||
	       !strncmp(f, "/anon_hugepage", 14);
}

/*
 * pprof shows mapping 1 as "the" binary. The executable is the first file
 * a process maps after exec (the ELF loader maps it before the
 * interpreter; perf synthesizes /proc/PID/maps in address order, where it
 * comes first too), so remember which mappings were such a first file.
 */
static int exe_state(struct pp_convert *c, uint32_t pid, bool **seen)
{
	bool added;
	int64_t id;

	if (pp_intern_count(&c->exe_pids) >= c->exe_seen_cap) {
		size_t cap = c->exe_seen_cap ? c->exe_seen_cap * 2 : 256;
		bool *n = realloc(c->exe_seen, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->exe_seen = n;
		c->exe_seen_cap = cap;
	}
	id = pp_intern_put(&c->exe_pids, &pid, sizeof(pid), &added);
	if (id < 0)
		return id;
	if (added)
		c->exe_seen[id] = false;
	*seen = &c->exe_seen[id];
	return 0;
}

static int mark_exe(struct pp_convert *c, uint32_t pid, uint32_t cmap)
{
	bool *seen;
	int err = exe_state(c, pid, &seen);

	if (err || *seen)
		return err;
	*seen = true;
	if (cmap >= c->cmap_exe_cap) {
		size_t cap = c->cmap_exe_cap ? c->cmap_exe_cap : 256;
		uint8_t *n;

		while (cap <= cmap)
			cap *= 2;
		n = realloc(c->cmap_exe, cap);
		if (!n)
			return -ENOMEM;
		memset(n + c->cmap_exe_cap, 0, cap - c->cmap_exe_cap);
		c->cmap_exe = n;
		c->cmap_exe_cap = cap;
	}
	c->cmap_exe[cmap] = 1;
	return 0;
}

static bool is_exe(const struct pp_convert *c, uint32_t cmap)
{
	return cmap < c->cmap_exe_cap && c->cmap_exe[cmap];
}

/*
 * Anonymous executable memory (JIT code) has no file to read symbols from.
 * Its mapping gets a bracketed name without '/', as [vdso] has: pprof then
 * knows not to look for it on disk ("//anon" -> "[anon]",
 * "/memfd:jit (deleted)" -> "[memfd:jit]").
 */
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

static int on_mmap(struct pp_convert *c, const struct perf_event_header *h)
{
	struct perfdata_mmap m;
	struct cmap_key k = { 0 };
	bool kernel;
	int64_t fsid, id;
	int err;

	err = h->type == PERF_RECORD_MMAP ? perfdata_decode_mmap(h, &m) : perfdata_decode_mmap2(h, &m);
	if (err) {
		c->stats.bad_records++;
		return 0;
	}
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
		k.kind = CMAP_KERNEL;
		/* "[kernel.kallsyms]_text": the map of the kernel image; the suffix
		 * names the symbol whose address pgoff holds. */
		if (!strncmp(file, "[kernel.kallsyms]", 17)) {
			snprintf(c->kernel_ref_sym, sizeof(c->kernel_ref_sym), "%s", file + 17);
			c->kernel_ref_addr = m.pgoff;
			file = "[kernel.kallsyms]";
		}
	} else if (is_anon_name(file)) {
		k.kind = CMAP_ANON;
		k.pid = m.pid;
		anon_name(file, anon, sizeof(anon));
		file = anon;
	} else {
		k.kind = CMAP_FILE;
	}
	fsid = sid_of(c, file);
	if (fsid < 0)
		return fsid;
	k.filename = fsid;
	if (m.build_id_size) {
		k.build_id_size = m.build_id_size > PERFDATA_BUILD_ID_MAX ? PERFDATA_BUILD_ID_MAX
									   : m.build_id_size;
		memcpy(k.build_id, m.build_id, k.build_id_size);
	}
	id = pp_intern_put(&c->cmaps, &k, sizeof(k), NULL);
	if (id < 0)
		return id;
	if (kernel && !strcmp(file, "[kernel.kallsyms]"))
		c->kernel_cmap = id + 1;
	if (k.kind == CMAP_FILE) {
		err = mark_exe(c, m.pid, id);
		if (err)
			return err;
	}
	return pp_aspace_map(c->as, kernel ? PP_ASPACE_KERNEL : m.pid, m.start, m.len, id);
}

/* The catch-all kernel mapping for kernel addresses no MMAP describes. */
static int64_t kernel_catch_all(struct pp_convert *c)
{
	struct cmap_key k = { 0 };
	int64_t fsid, id;

	if (c->kernel_cmap)
		return c->kernel_cmap - 1;
	fsid = sid_of(c, "[kernel.kallsyms]");
	if (fsid < 0)
		return fsid;
	k.start = PERFDATA_KERNEL_ADDR_MIN;
	k.len = -PERFDATA_KERNEL_ADDR_MIN;
	k.kind = CMAP_KERNEL;
	k.filename = fsid;
	id = pp_intern_put(&c->cmaps, &k, sizeof(k), NULL);
	if (id >= 0)
		c->kernel_cmap = id + 1;
	return id;
}

/* ---- records other than samples ---- */

static int on_comm(struct pp_convert *c, const struct perf_event_header *h)
{
	struct perfdata_comm cm;
	int64_t sid;

	if (perfdata_decode_comm(h, &cm)) {
		c->stats.bad_records++;
		return 0;
	}
	sid = sid_of(c, cm.comm ? cm.comm : "");
	if (sid < 0)
		return sid;
	if (cm.exec || (h->misc & PERF_RECORD_MISC_COMM_EXEC)) {
		bool *seen;
		int err = exe_state(c, cm.pid, &seen);

		if (err)
			return err;
		*seen = false;
		pp_aspace_exec(c->as, cm.pid);
	}
	return set_comm(c, cm.tid, sid + 1);
}

static int on_fork(struct pp_convert *c, const struct perf_event_header *h)
{
	struct perfdata_task t;
	uint32_t comm;
	int err;

	if (perfdata_decode_task(h, &t)) {
		c->stats.bad_records++;
		return 0;
	}
	/* A new thread or process starts with its parent's comm. */
	comm = comm_of(c, t.ptid);
	if (!comm)
		comm = comm_of(c, t.ppid);
	if (comm) {
		err = set_comm(c, t.tid, comm);
		if (err)
			return err;
	}
	/* A new process (not a thread) starts with a copy of its parent's maps,
	 * executable included. */
	if (t.pid != t.ppid) {
		bool *seen;

		err = exe_state(c, t.pid, &seen);
		if (err)
			return err;
		*seen = true;
		return pp_aspace_fork(c->as, t.pid, t.ppid);
	}
	return 0;
}

/* ---- samples ---- */

static int grow_stack(struct pp_convert *c, size_t n)
{
	if (n <= c->stack_cap)
		return 0;

	size_t cap = c->stack_cap ? c->stack_cap : 256;

	while (cap < n)
		cap *= 2;
	uint32_t *s = realloc(c->stack_buf, cap * sizeof(*s));

	if (!s)
		return -ENOMEM;
	c->stack_buf = s;
	c->stack_cap = cap;
	return 0;
}

static int64_t intern_frame(struct pp_convert *c, uint64_t addr, uint32_t pid, uint32_t flags)
{
	struct frame_key k = { .addr = addr, .flags = flags };
	uint32_t cm;

	if (flags & FRAME_GUEST) {
		/* No maps of guests: the address is all we have. */
	} else if (flags & FRAME_KERNEL) {
		if (!pp_aspace_find(c->as, PP_ASPACE_KERNEL, addr, &cm)) {
			k.cmap = cm + 1;
		} else {
			int64_t id = kernel_catch_all(c);

			if (id < 0)
				return id;
			k.cmap = id + 1;
		}
	} else if (!pp_aspace_find(c->as, pid, addr, &cm)) {
		k.cmap = cm + 1;
	} else {
		k.pid = pid;	/* maybe JIT code: perf-PID.map may know it */
	}
	return pp_intern_put(&c->frames, &k, sizeof(k), NULL);
}

/* The frames of a sample, leaf first, context markers dropped. */
static int64_t intern_stack_slow(struct pp_convert *c, const struct csample *s)
{
	const uint64_t *ips = (const uint64_t *)(s + 1);
	size_t n = 0, nr = s->nr_ips ? s->nr_ips : 1;
	unsigned int mode = s->h.misc & PERF_RECORD_MISC_CPUMODE_MASK;
	bool first_in_context = true;
	int err = grow_stack(c, nr);

	if (err)
		return err;
	for (size_t i = 0; i < nr; i++) {
		uint64_t ip = s->nr_ips ? ips[i] : s->ip;
		uint32_t flags = 0;
		int64_t fid;

		if (s->nr_ips && perfdata_is_context_marker(ip)) {
			switch (ip) {
			case PERF_CONTEXT_KERNEL:
				mode = PERF_RECORD_MISC_KERNEL;
				break;
			case PERF_CONTEXT_USER:
				mode = PERF_RECORD_MISC_USER;
				break;
			case PERF_CONTEXT_GUEST_KERNEL:
				mode = PERF_RECORD_MISC_GUEST_KERNEL;
				break;
			case PERF_CONTEXT_GUEST_USER:
				mode = PERF_RECORD_MISC_GUEST_USER;
				break;
			case PERF_CONTEXT_HV:
				mode = PERF_RECORD_MISC_HYPERVISOR;
				break;
			default:
				break;
			}
			first_in_context = true;
			continue;
		}
		if (mode == PERF_RECORD_MISC_GUEST_KERNEL || mode == PERF_RECORD_MISC_GUEST_USER ||
		    mode == PERF_RECORD_MISC_HYPERVISOR)
			flags |= FRAME_GUEST;
		else if (mode == PERF_RECORD_MISC_KERNEL || ip >= PERFDATA_KERNEL_ADDR_MIN)
			flags |= FRAME_KERNEL;
		/* The first address of each context is where execution was; the
		 * others are return addresses, looked up at address - 1. */
		if (!first_in_context)
			flags |= FRAME_CALLER;
		first_in_context = false;
		fid = intern_frame(c, ip, s->pid, flags);
		if (fid < 0)
			return fid;
		c->stack_buf[n++] = fid;
	}
	/* A callchain of markers only (the unwinder found nothing): the sample
	 * still has its ip, which is where perf report puts its time too. */
	if (!n && s->nr_ips) {
		uint32_t flags = 0;
		int64_t fid;

		mode = s->h.misc & PERF_RECORD_MISC_CPUMODE_MASK;
		if (mode == PERF_RECORD_MISC_GUEST_KERNEL || mode == PERF_RECORD_MISC_GUEST_USER ||
		    mode == PERF_RECORD_MISC_HYPERVISOR)
			flags |= FRAME_GUEST;
		else if (mode == PERF_RECORD_MISC_KERNEL || s->ip >= PERFDATA_KERNEL_ADDR_MIN)
			flags |= FRAME_KERNEL;
		fid = intern_frame(c, s->ip, s->pid, flags);
		if (fid < 0)
			return fid;
		c->stack_buf[n++] = fid;
	}
	return pp_intern_put(&c->stacks, c->stack_buf, n * sizeof(uint32_t), NULL);
}

/*
 * The same raw callchain of the same process, while neither its maps nor
 * the kernel's changed, is the same stack: look the whole chain up once
 * instead of each frame. The key is the csample from `pid` on (pid, tid,
 * cpu... are not all part of it: tid, cpu and period are zeroed).
 */
struct raw_key_head {
	uint32_t pid, generation, kernel_generation;
	uint16_t mode, pad;
	uint64_t ip, nr_ips;
};

static int64_t intern_stack(struct pp_convert *c, const struct csample *s)
{
	size_t len = sizeof(struct raw_key_head) + (size_t)s->nr_ips * 8;
	struct raw_key_head *k;
	bool added;
	int64_t id, stack;

	if (len > c->rec_cap - c->rec_cap / 2 || !c->rec_buf)
		return intern_stack_slow(c, s);
	/* The upper half of the record scratch buffer holds the key. */
	k = (struct raw_key_head *)(c->rec_buf + c->rec_cap / 2);
	*k = (struct raw_key_head){
		.pid = s->pid,
		.generation = pp_aspace_generation(c->as, s->pid),
		.kernel_generation = pp_aspace_generation(c->as, PP_ASPACE_KERNEL),
		.mode = s->h.misc & PERF_RECORD_MISC_CPUMODE_MASK,
		.ip = s->ip,
		.nr_ips = s->nr_ips,
	};
	memcpy(k + 1, s + 1, (size_t)s->nr_ips * 8);

	if (pp_intern_count(&c->rawstacks) > 4 * pp_intern_count(&c->stacks) + 65536) {
		pp_intern_free(&c->rawstacks);	/* stale generations: start over */
		pp_intern_init(&c->rawstacks);
	}
	if (pp_intern_count(&c->rawstacks) >= c->raw_stack_cap) {
		size_t cap = c->raw_stack_cap ? c->raw_stack_cap * 2 : 4096;
		uint32_t *n = realloc(c->raw_stack, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->raw_stack = n;
		c->raw_stack_cap = cap;
	}
	id = pp_intern_put(&c->rawstacks, k, len, &added);
	if (id < 0)
		return id;
	if (!added)
		return c->raw_stack[id];
	stack = intern_stack_slow(c, s);
	if (stack < 0)
		return stack;
	c->raw_stack[id] = stack;
	return stack;
}

static bool in_list(const uint32_t *list, size_t n, uint32_t v)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == v)
			return true;
	return false;
}

static int trace_value(struct pp_convert *c, const struct csample *s, const char *field,
		       struct label_val *lv);

static int on_sample(struct pp_convert *c, const struct csample *s, uint64_t time)
{
	struct label_val lv[16];
	uint32_t comm = comm_of(c, s->tid);
	size_t nl = 0;
	int64_t stack, labels, id;
	bool added;

	if (!comm)
		comm = comm_of(c, s->pid);
	if (c->opts.nr_comms) {
		const char *name = comm ? str_of(c, comm - 1) : "";
		bool ok = false;

		for (size_t i = 0; i < c->opts.nr_comms && !ok; i++)
			ok = !strcmp(name, c->opts.comms[i]);
		if (!ok) {
			c->stats.filtered++;
			return 0;
		}
	}
	if (s->pid && !comm && !pp_aspace_known(c->as, s->pid))
		c->stats.unknown_pid++;

	stack = intern_stack(c, s);
	if (stack < 0)
		return stack;

	for (size_t i = 0; i < c->opts.nr_labels && nl < 16; i++) {
		struct label_val *l = &lv[nl];
		char buf[32];
		int64_t sid;
		int err;

		memset(l, 0, sizeof(*l));
		l->spec = i;
		switch (c->opts.labels[i].kind) {
		case PP_LABEL_PID:
			l->value = s->pid;
			break;
		case PP_LABEL_TID:
			l->value = s->tid;
			break;
		case PP_LABEL_CPU:
			if (!(s->flags & CSAMPLE_HAS_CPU))
				continue;	/* not recorded: no label rather than a wrong one */
			l->value = s->cpu;
			break;
		case PP_LABEL_COMM:
			if (comm) {
				sid = comm - 1;
			} else {
				snprintf(buf, sizeof(buf), s->pid ? ":%u" : "swapper", s->tid);
				sid = sid_of(c, buf);
				if (sid < 0)
					return sid;
			}
			l->is_str = 1;
			l->value = sid;
			break;
		case PP_LABEL_TRACE:
			err = trace_value(c, s, c->opts.labels[i].field, l);
			if (err == -ENOENT)
				continue;	/* not a field of this event: no label */
			if (err)
				return err;
			break;
		}
		nl++;
	}
	labels = pp_intern_put(&c->labelsets, lv, nl * sizeof(lv[0]), NULL);
	if (labels < 0)
		return labels;

	struct sample_key k = { .event = s->event, .stack = stack, .labels = labels };

	if (pp_intern_count(&c->samples) >= c->counts_cap) {
		size_t cap = c->counts_cap ? c->counts_cap * 2 : 1024;
		struct counts *n = realloc(c->counts, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->counts = n;
		c->counts_cap = cap;
	}
	id = pp_intern_put(&c->samples, &k, sizeof(k), &added);
	if (id < 0)
		return id;
	if (added)
		c->counts[id] = (struct counts){ 0, 0 };
	c->counts[id].count++;
	c->counts[id].weight += s->period;
	c->stats.kept++;
	if (time) {
		if (!c->have_time || time < c->first_time)
			c->first_time = time;
		if (time > c->last_time)
			c->last_time = time;
		c->have_time = true;
	}
	return 0;
}

static int deliver(const struct perf_event_header *h, uint64_t time, void *ctx)
{
	struct pp_convert *c = ctx;

	switch (h->type) {
	case CSAMPLE_TYPE:
		return on_sample(c, (const struct csample *)h, time);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return on_mmap(c, h);
	case PERF_RECORD_COMM:
		return on_comm(c, h);
	case PERF_RECORD_FORK:
		return on_fork(c, h);
	default:
		return 0;
	}
}

static bool wants_raw(const struct pp_convert *c)
{
	for (size_t i = 0; i < c->opts.nr_labels; i++)
		if (c->opts.labels[i].kind == PP_LABEL_TRACE)
			return true;
	return false;
}

/* Shrink a SAMPLE to a csample and queue it. */
static int read_sample(struct pp_convert *c, const struct perf_event_header *h)
{
	struct perfdata_sample s;
	const struct perfdata_event *ev = NULL;
	size_t idx, size, nr_ips, raw;
	struct csample *cs;
	int ret;

	c->stats.samples++;
	if (!perfdata_reader_sample_event(c->r, h)) {
		c->stats.unknown_event++;
		return 0;
	}
	if (perfdata_reader_parse_sample(c->r, h, &s, &ev) || !ev) {
		c->stats.bad_records++;
		return 0;
	}
	ret = sample_event(c, ev, &idx);
	if (ret == -ENOENT) {
		c->stats.unknown_event++;
		return 0;
	}
	if (ret < 0)
		return ret;
	if (!ret || (c->opts.nr_pids && !in_list(c->opts.pids, c->opts.nr_pids, s.pid)) ||
	    (c->opts.nr_tids && !in_list(c->opts.tids, c->opts.nr_tids, s.tid))) {
		c->stats.filtered++;
		return 0;
	}
	nr_ips = (ev->attr.sample_type & PERF_SAMPLE_CALLCHAIN) ? s.nr_callchain : 0;
	raw = wants_raw(c) && (ev->attr.sample_type & PERF_SAMPLE_RAW) ? s.raw_size : 0;
	size = perfdata_align8(sizeof(*cs) + nr_ips * 8 + raw);
	if (size > UINT16_MAX) {
		/* Cannot happen for records perf writes (they are <= 64 KiB and
		 * carry more than we keep); drop the outermost frames if it does. */
		raw = 0;
		nr_ips = (UINT16_MAX - sizeof(*cs)) / 8;
		size = perfdata_align8(sizeof(*cs) + nr_ips * 8);
	}
	if (!c->rec_buf) {
		/* Lower half: the csample being built; upper half: its raw-stack key. */
		c->rec_buf = malloc(2 << 16);
		if (!c->rec_buf)
			return -ENOMEM;
		c->rec_cap = 2 << 16;
	}
	cs = (struct csample *)c->rec_buf;
	memset(cs, 0, size);
	cs->h.type = CSAMPLE_TYPE;
	cs->h.misc = s.misc;
	cs->h.size = size;
	cs->event = idx;
	cs->pid = s.pid;
	cs->tid = s.tid;
	cs->cpu = s.cpu;
	if (ev->attr.sample_type & PERF_SAMPLE_CPU)
		cs->flags |= CSAMPLE_HAS_CPU;
	cs->nr_ips = nr_ips;
	cs->raw_size = raw;
	cs->ip = s.ip;
	if (ev->attr.sample_type & PERF_SAMPLE_PERIOD)
		cs->period = s.period;
	else
		cs->period = ev->attr.freq ? 1 : ev->attr.sample_period;
	if (nr_ips)
		memcpy(cs + 1, s.callchain, nr_ips * 8);
	if (raw)
		memcpy((uint8_t *)(cs + 1) + nr_ips * 8, s.raw, raw);

	uint64_t time = (ev->attr.sample_type & PERF_SAMPLE_TIME) ? s.time : c->max_time;

	if (time > c->max_time)
		c->max_time = time;
	return pp_reorder_push(c->q, time, &cs->h);
}

static int read_other(struct pp_convert *c, const struct perf_event_header *h)
{
	struct perfdata_sample_id sid;
	uint64_t time = c->max_time;

	/* Records without a time trailer keep their place in the stream. */
	if (!perfdata_reader_parse_sample_id(c->r, h, &sid) && sid.time)
		time = sid.time;
	if (time > c->max_time)
		c->max_time = time;
	return pp_reorder_push(c->q, time, h);
}

static int read_compressed(struct pp_convert *c, const struct perf_event_header *h);

/* One record from the file, or from inside a COMPRESSED one. */
static int dispatch(struct pp_convert *c, const struct perf_event_header *h, bool inner)
{
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		return read_sample(c, h);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
		return read_other(c, h);
	case PERF_RECORD_LOST:
		if (h->size >= sizeof(*h) + 16)
			c->stats.lost += ((const uint64_t *)(h + 1))[1];
		return 0;
	case PERF_RECORD_LOST_SAMPLES:
		if (h->size >= sizeof(*h) + 8)
			c->stats.lost += ((const uint64_t *)(h + 1))[0];
		return 0;
	case PERFDATA_RECORD_FINISHED_ROUND:
		return pp_reorder_round(c->q);
	case PERFDATA_RECORD_COMPRESSED:
		return inner ? fail(c, -EINVAL, "%s: compressed record inside a compressed record "
				    "near offset %#llx", c->opts.input_name,
				    (unsigned long long)perfdata_reader_offset(c->r))
			     : read_compressed(c, h);
	default:
		return 0;
	}
}

/*
 * perf record -z: COMPRESSED records carry consecutive pieces of one zstd
 * stream of ordinary records; a record may straddle two of them, so what
 * is left over waits for the next piece (as perf does).
 */
static int read_compressed(struct pp_convert *c, const struct perf_event_header *h)
{
	unsigned long long at = perfdata_reader_offset(c->r);
	char msg[256] = "";
	size_t off = 0;
	int err;

	if (!c->zstd) {
		err = pp_zstd_new(&c->zstd, msg, sizeof(msg));
		if (err)
			return fail(c, err, "%s: record at offset %#llx is compressed (perf record -z) "
				    "but %s", c->opts.input_name, at, msg);
	}
	err = pp_zstd_decompress(c->zstd, h + 1, h->size - sizeof(*h), &c->zbuf, &c->zlen,
				 &c->zcap, msg, sizeof(msg));
	if (err)
		return fail(c, err, "%s: compressed record at offset %#llx: %s", c->opts.input_name,
			    at, err == -ENOMEM ? "out of memory" : msg);
	while (c->zlen - off >= sizeof(*h)) {
		const struct perf_event_header *ih = (const void *)(c->zbuf + off);

		if (ih->size < sizeof(*ih) || ih->size % 8)
			return fail(c, -EINVAL, "%s: compressed record at offset %#llx holds a record "
				    "of size %u", c->opts.input_name, at, ih->size);
		if (ih->size > c->zlen - off)
			break;
		err = dispatch(c, ih, true);
		if (err)
			return err;
		off += ih->size;
	}
	memmove(c->zbuf, c->zbuf + off, c->zlen - off);
	c->zlen -= off;
	return 0;
}

int pp_convert_read(struct pp_convert *c)
{
	const struct perf_event_header *h;
	int ret, err = 0;

	while (!err && (ret = perfdata_reader_next(c->r, &h)) > 0)
		err = dispatch(c, h, false);
	if (err)
		return c->err[0] ? err : fail(c, err, "%s: %s", c->opts.input_name, strerror(-err));
	if (ret < 0)
		return fail(c, ret, "%s", perfdata_reader_error(c->r));
	if (c->zlen)
		return fail(c, -EINVAL, "%s: the compressed records end inside a record (%zu bytes "
			    "left over)", c->opts.input_name, c->zlen);
	err = pp_reorder_flush(c->q);
	if (err)
		return fail(c, err, "%s: %s", c->opts.input_name, strerror(-err));
	c->stats.frames = pp_intern_count(&c->frames);
	c->stats.stacks = pp_intern_count(&c->stacks);
	return 0;
}

/* ---- the profile list ---- */

static int make_profiles(struct pp_convert *c)
{
	size_t n = perfdata_reader_nr_events(c->r);

	if (c->profiles_made)
		return 0;
	c->profiles = calloc(n ? n : 1, sizeof(*c->profiles));
	c->ev_profile = calloc(n ? n : 1, sizeof(*c->ev_profile));
	if (!c->profiles || !c->ev_profile)
		return -ENOMEM;
	c->nr_ev_profile = n;
	for (size_t i = 0; i < n; i++) {
		const struct perfdata_event *ev = perfdata_reader_event(c->r, i);
		size_t p;
		char *name;

		c->ev_profile[i] = UINT32_MAX;
		if (is_dummy(ev) || !event_selected(c, ev))
			continue;
		name = event_name(ev);
		if (!name)
			return -ENOMEM;
		/* Two attrs with one name (perf does this per PMU) share a profile. */
		for (p = 0; p < c->nr_profiles; p++)
			if (!strcmp(c->profiles[p].name, name))
				break;
		if (p < c->nr_profiles)
			free(name);
		else
			c->profiles[c->nr_profiles++] = (struct profile_info){ .event = i, .name = name };
		c->ev_profile[i] = p;
	}
	/* Short names, unless two events would share one. */
	for (size_t p = 0; p < c->nr_profiles; p++) {
		c->profiles[p].short_name = short_event_name(c->profiles[p].name);
		if (!c->profiles[p].short_name)
			return -ENOMEM;
	}
	for (size_t p = 0; p < c->nr_profiles; p++) {
		bool clash = false;

		for (size_t q = 0; q < c->nr_profiles; q++)
			clash |= q != p && !strcmp(c->profiles[p].short_name, c->profiles[q].short_name);
		if (clash) {
			free(c->profiles[p].short_name);
			c->profiles[p].short_name = strdup(c->profiles[p].name);
			if (!c->profiles[p].short_name)
				return -ENOMEM;
		}
	}
	for (size_t i = 0; i < pp_intern_count(&c->samples); i++) {
		const struct sample_key *k = pp_intern_get(&c->samples, i, NULL);

		if (k->event < n && c->ev_profile[k->event] != UINT32_MAX)
			c->profiles[c->ev_profile[k->event]].samples += c->counts[i].count;
	}
	c->profiles_made = true;
	return 0;
}

size_t pp_convert_nr_profiles(const struct pp_convert *c)
{
	if (make_profiles((struct pp_convert *)c))
		return 0;
	return c->nr_profiles;
}

const char *pp_convert_profile_name(const struct pp_convert *c, size_t i)
{
	return i < c->nr_profiles ? c->profiles[i].short_name : NULL;
}

uint64_t pp_convert_profile_samples(const struct pp_convert *c, size_t i)
{
	return i < c->nr_profiles ? c->profiles[i].samples : 0;
}

void pp_convert_set_wall_clock(struct pp_convert *c, uint64_t wall_clock_at_end)
{
	c->opts.wall_clock_at_end = wall_clock_at_end;
}

const char *pp_convert_warning(const struct pp_convert *c)
{
	return c->warning[0] ? c->warning : NULL;
}

/* ---- phase 2: build-ids ---- */

static int add_build_id(const struct perfdata_build_id *b, void *ctx)
{
	struct pp_convert *c = ctx;
	struct bid_key k = { 0 };
	char hex[2 * PERFDATA_BUILD_ID_MAX + 1];
	bool added;
	int64_t fsid, hsid, id;
	size_t n = b->size > PERFDATA_BUILD_ID_MAX ? PERFDATA_BUILD_ID_MAX : b->size;

	if (!b->filename || !n)
		return 0;
	fsid = sid_of(c, b->filename);
	if (fsid < 0)
		return fsid;
	buildid_to_hex(b->id, n, hex);
	hsid = sid_of(c, hex);
	if (hsid < 0)
		return hsid;
	k.filename = fsid;
	k.kernel = (b->cpumode & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	if (pp_intern_count(&c->build_ids) >= c->bid_cap) {
		size_t cap = c->bid_cap ? c->bid_cap * 2 : 64;
		struct bid_val *v = realloc(c->bid_vals, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->bid_vals = v;
		c->bid_cap = cap;
	}
	id = pp_intern_put(&c->build_ids, &k, sizeof(k), &added);
	if (id < 0)
		return id;
	if (added) {	/* the first one recorded wins */
		c->bid_vals[id].size = n;
		memcpy(c->bid_vals[id].id, b->id, n);
		c->bid_vals[id].hex = hsid;
	}
	return 0;
}

static int load_build_ids(struct pp_convert *c)
{
	if (c->build_ids_loaded)
		return 0;
	c->build_ids_loaded = true;
	return perfdata_reader_for_each_build_id(c->r, add_build_id, c);
}

/* The build-id of a mapping: its MMAP2's, else the one recorded for its file. */
static const struct bid_val *build_id_of(struct pp_convert *c, const struct cmap_key *m,
					 struct bid_val *tmp)
{
	struct bid_key k = { .filename = m->filename, .kernel = m->kind == CMAP_KERNEL };
	int64_t id;

	if (m->build_id_size) {
		char hex[2 * PERFDATA_BUILD_ID_MAX + 1];
		int64_t hsid;

		buildid_to_hex(m->build_id, m->build_id_size, hex);
		hsid = sid_of(c, hex);
		tmp->size = m->build_id_size;
		memcpy(tmp->id, m->build_id, m->build_id_size);
		tmp->hex = hsid < 0 ? 0 : hsid;
		return tmp;
	}
	id = pp_intern_find(&c->build_ids, &k, sizeof(k));
	return id < 0 ? NULL : &c->bid_vals[id];
}

/* ---- phase 2: the kernel ---- */

/* Address of symbol `name` in a kallsyms file, 0 when absent or hidden. */
static uint64_t kallsyms_address(const char *path, const char *name)
{
	FILE *f = fopen(path, "r");
	char line[512], sym[256], type;
	unsigned long long addr;
	uint64_t found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 && !strcmp(sym, name)) {
			found = addr;
			break;
		}
	}
	fclose(f);
	return found;
}

/*
 * Kernel addresses are looked up in kallsyms. When the reference symbol of
 * the recorded kernel map (_text) sits elsewhere in that kallsyms, the
 * recording comes from another boot (KASLR) or another machine: shift by
 * the difference if it is the same kernel, give up on names if it is not.
 */
static void check_kernel(struct pp_convert *c)
{
	const char *path = c->opts.sym.kallsyms ? c->opts.sym.kallsyms : "/proc/kallsyms";
	uint64_t now;

	if (c->kernel_checked)
		return;
	c->kernel_checked = true;
	c->kernel_ok = true;
	if (!c->kernel_ref_addr || !c->kernel_ref_sym[0])
		return;
	now = kallsyms_address(path, c->kernel_ref_sym);
	if (!now || now == c->kernel_ref_addr)
		return;
	if (!c->opts.sym.kallsyms) {
		int64_t ksid = pp_intern_find(&c->strs, "[kernel.kallsyms]", 18);
		struct bid_key k = { .filename = ksid < 0 ? 0 : ksid, .kernel = 1 };
		int64_t id = ksid < 0 ? -1 : pp_intern_find(&c->build_ids, &k, sizeof(k));
		uint8_t running[BUILDID_MAX];
		size_t size = 0;

		if (id >= 0 && !buildid_read_kernel(NULL, running, &size) &&
		    (size != c->bid_vals[id].size || memcmp(running, c->bid_vals[id].id, size))) {
			c->kernel_ok = false;
			snprintf(c->warning, sizeof(c->warning),
				 "%s was recorded on another kernel: kernel frames are left as "
				 "addresses; pass --kallsyms with that machine's /proc/kallsyms",
				 c->opts.input_name);
			return;
		}
	}
	c->kernel_delta = (int64_t)(now - c->kernel_ref_addr);
}

/* ---- phase 2: frames ---- */

static int symbolizer_ready(struct pp_convert *c)
{
	int err;

	if (c->opts.no_symbolize || c->sym_tried)
		return 0;
	c->sym_tried = true;
	err = symbolizer_new(&c->opts.sym, &c->sym);
	if (err)
		return fail(c, err, "cannot set up symbolization: %s", strerror(-err));
	return 0;
}

static int add_line(struct pp_convert *c, const char *function, const char *file, int64_t line)
{
	int64_t fs = sid_of(c, function ? function : ""), ls = sid_of(c, file ? file : "");

	if (fs < 0 || ls < 0)
		return -ENOMEM;
	if (c->nr_lines == c->lines_cap) {
		size_t cap = c->lines_cap ? c->lines_cap * 2 : 1024;
		struct rline *l = realloc(c->lines, cap * sizeof(*l));

		if (!l)
			return -ENOMEM;
		c->lines = l;
		c->lines_cap = cap;
	}
	c->lines[c->nr_lines++] = (struct rline){ fs, ls, line };
	return 0;
}

static unsigned int result_flags(const struct sym_result *r)
{
	return (r->has_functions ? PPROF_HAS_FUNCTIONS : 0) |
	       (r->has_filenames ? PPROF_HAS_FILENAMES : 0) |
	       (r->has_line_numbers ? PPROF_HAS_LINE_NUMBERS : 0) |
	       (r->has_inline_frames ? PPROF_HAS_INLINE_FRAMES : 0);
}

/* Symbolize frame fid once: its Lines, innermost first, or the 0x... fallback. */
static int resolve(struct pp_convert *c, uint32_t fid)
{
	struct resolved *rs = &c->resolved[fid];
	const struct frame_key *k = pp_intern_get(&c->frames, fid, NULL);
	const struct cmap_key *m = k->cmap ? pp_intern_get(&c->cmaps, k->cmap - 1, NULL) : NULL;
	uint64_t look = (k->flags & FRAME_CALLER) && k->addr ? k->addr - 1 : k->addr;
	struct sym_result res;
	int ret = -ENOENT, err;

	if (rs->done)
		return 0;
	memset(&res, 0, sizeof(res));
	rs->first = c->nr_lines;
	rs->nr = 0;
	rs->flags = 0;
	rs->done = true;
	if (c->opts.no_symbolize)
		return 0;

	if (!c->sym || (k->flags & FRAME_GUEST)) {
		/* nothing to ask */
	} else if (k->flags & FRAME_KERNEL) {
		check_kernel(c);
		if (c->kernel_ok)
			ret = symbolize_kernel(c->sym, look + c->kernel_delta, &res);
	} else if (m && m->kind == CMAP_FILE) {
		struct bid_val tmp;
		const struct bid_val *b = build_id_of(c, m, &tmp);
		struct sym_mapping sm = {
			.path = str_of(c, m->filename),
			.start = m->start,
			.len = m->len,
			.pgoff = m->pgoff,
			.build_id = b ? b->id : NULL,
			.build_id_size = b ? b->size : 0,
		};

		ret = symbolize_user(c->sym, &sm, look, &res);
	} else {
		ret = symbolize_jit(c->sym, m ? (int)m->pid : (int)k->pid, look, &res);
	}

	if (!ret && res.nr_frames) {
		char hex[32];

		snprintf(hex, sizeof(hex), "0x%" PRIx64, k->addr);
		for (size_t i = 0; i < res.nr_frames && i < SYM_MAX_FRAMES; i++) {
			const struct sym_frame *f = &res.frames[i];

			err = add_line(c, f->function ? f->function : hex, f->file, f->line);
			if (err)
				return err;
		}
		rs->nr = c->nr_lines - rs->first;
		rs->flags = result_flags(&res);
		if (rs->nr > 1)
			rs->flags |= PPROF_HAS_INLINE_FRAMES;
		return 0;
	}
	/* Never drop a frame: name it by its address. */
	char hex[32];

	snprintf(hex, sizeof(hex), "0x%" PRIx64, k->addr);
	c->stats.unsymbolized++;
	err = add_line(c, hex, NULL, 0);
	if (err)
		return err;
	rs->nr = 1;
	return 0;
}

/* ---- phase 2: one profile ---- */

struct build_ctx {
	struct pprof_builder *b;
	uint64_t *loc_of;		/* per frame, 0 = not yet in this profile */
	uint64_t *map_of;		/* per cmap */
};

static int mapping_id(struct pp_convert *c, struct build_ctx *bc, uint32_t cmap, uint64_t *id)
{
	const struct cmap_key *m = pp_intern_get(&c->cmaps, cmap, NULL);
	struct bid_val tmp;
	const struct bid_val *b;
	uint64_t limit = m->start + m->len;
	int err;

	if (bc->map_of[cmap]) {
		*id = bc->map_of[cmap];
		return 0;
	}
	b = build_id_of(c, m, &tmp);
	if (limit < m->start)
		limit = UINT64_MAX;

	struct pprof_mapping pm = {
		.memory_start = m->start,
		.memory_limit = limit,
		/* The kernel map's pgoff is an address (_text), not a file offset. */
		.file_offset = m->kind == CMAP_KERNEL ? 0 : m->pgoff,
		.filename = str_of(c, m->filename),
		.build_id = b ? str_of(c, b->hex) : NULL,
		.discriminator = m->kind == CMAP_ANON ? (uint64_t)m->pid + 1 : 0,
	};

	err = pprof_mapping(bc->b, &pm, id);
	if (!err)
		bc->map_of[cmap] = *id;
	return err;
}

static int location_id(struct pp_convert *c, struct build_ctx *bc, uint32_t fid, uint64_t *id)
{
	const struct frame_key *k;
	const struct resolved *rs;
	uint64_t mid = 0;
	int err;

	if (bc->loc_of[fid]) {
		*id = bc->loc_of[fid];
		return 0;
	}
	err = resolve(c, fid);
	if (err)
		return err;
	k = pp_intern_get(&c->frames, fid, NULL);
	rs = &c->resolved[fid];
	if (k->cmap) {
		err = mapping_id(c, bc, k->cmap - 1, &mid);
		if (!err && rs->flags)
			err = pprof_mapping_add_flags(bc->b, mid, rs->flags);
		if (err)
			return err;
	}

	struct pprof_line lines[SYM_MAX_FRAMES];

	for (uint32_t i = 0; i < rs->nr && i < SYM_MAX_FRAMES; i++) {
		const struct rline *l = &c->lines[rs->first + i];

		lines[i] = (struct pprof_line){
			.function = str_of(c, l->function),
			.filename = str_of(c, l->file),
			.line = l->line,
		};
	}
	err = pprof_location(bc->b, mid, k->addr, lines, rs->nr, id);
	if (!err)
		bc->loc_of[fid] = *id;
	return err;
}

static const char *label_key(const struct pp_convert *c, uint32_t spec)
{
	const struct pp_label_spec *s = &c->opts.labels[spec];

	switch (s->kind) {
	case PP_LABEL_PID:
		return "pid";
	case PP_LABEL_TID:
		return "tid";
	case PP_LABEL_COMM:
		return "comm";
	case PP_LABEL_CPU:
		return "cpu";
	case PP_LABEL_TRACE:
		return s->field;
	}
	return "";
}

/* Wall-clock ns of a sample time: from CLOCK_DATA, else from the caller's reference. */
static int64_t wall_time(const struct pp_convert *c, uint64_t t)
{
	size_t size = 0;
	const uint8_t *cd = perfdata_reader_feature(c->r, PERFDATA_FEAT_CLOCK_DATA, &size);

	if (cd && size >= 24) {
		uint64_t tod, ref;

		memcpy(&tod, cd + 8, 8);
		memcpy(&ref, cd + 16, 8);
		return (int64_t)(tod + (t - ref));
	}
	if (c->opts.wall_clock_at_end && c->opts.wall_clock_at_end > c->last_time - t)
		return (int64_t)(c->opts.wall_clock_at_end - (c->last_time - t));
	return 0;
}

static int setup_header(struct pp_convert *c, struct pprof_builder *b,
			const struct perfdata_event *ev, const char *name, const char *full_name)
{
	const struct perf_event_attr *a = &ev->attr;
	int err = pprof_add_sample_type(b, "samples", "count");

	if (err)
		return err;
	if (is_offcpu(name)) {
		err = pprof_add_sample_type(b, "off_cpu", "nanoseconds");
		if (!err)
			err = pprof_set_period(b, "off_cpu", "nanoseconds", 0);
	} else if (is_timer(ev)) {
		int64_t period = a->freq ? (a->sample_freq ? (int64_t)(1000000000ULL / a->sample_freq) : 0)
					 : (int64_t)a->sample_period;

		err = pprof_add_sample_type(b, "cpu", "nanoseconds");
		if (!err)
			err = pprof_set_period(b, "cpu", "nanoseconds", period);
	} else {
		err = pprof_add_sample_type(b, name, "count");
		if (!err)
			err = pprof_set_period(b, name, "count", a->freq ? 0 : (int64_t)a->sample_period);
	}
	if (err)
		return err;
	if (c->have_time)
		pprof_set_time(b, wall_time(c, c->first_time),
			       (int64_t)(c->last_time - c->first_time));

	char comment[256];

	snprintf(comment, sizeof(comment), "converted by bpfrec pprof from %s, event %s",
		 c->opts.input_name, full_name);
	return pprof_add_comment(b, comment);
}

/* Make the executable with the most samples in profile i mapping 1. */
static int main_mapping_first(struct pp_convert *c, struct build_ctx *bc, size_t i)
{
	size_t n = pp_intern_count(&c->cmaps), best = SIZE_MAX;
	uint64_t *hits = calloc(n ? n : 1, sizeof(*hits));
	uint64_t id;
	int err = 0;

	if (!hits)
		return -ENOMEM;
	for (size_t s = 0; s < pp_intern_count(&c->samples); s++) {
		const struct sample_key *k = pp_intern_get(&c->samples, s, NULL);
		size_t len;
		const uint32_t *stack;

		if (k->event >= c->nr_ev_profile || c->ev_profile[k->event] != i)
			continue;
		stack = pp_intern_get(&c->stacks, k->stack, &len);
		for (size_t f = 0; f < len / sizeof(uint32_t); f++) {
			const struct frame_key *fk = pp_intern_get(&c->frames, stack[f], NULL);

			if (fk->cmap && is_exe(c, fk->cmap - 1)) {
				hits[fk->cmap - 1] += c->counts[s].count;
				break;
			}
		}
	}
	for (size_t m = 0; m < n; m++)
		if (hits[m] && (best == SIZE_MAX || hits[m] > hits[best]))
			best = m;
	if (best != SIZE_MAX)
		err = mapping_id(c, bc, best, &id);
	free(hits);
	return err;
}

int pp_convert_build(struct pp_convert *c, size_t i, struct pprof_builder **out)
{
	struct build_ctx bc = { 0 };
	const struct perfdata_event *ev;
	size_t nframes;
	int err;

	err = make_profiles(c);
	if (err)
		return fail(c, err, "%s", strerror(-err));
	if (i >= c->nr_profiles)
		return fail(c, -EINVAL, "no profile %zu", i);
	err = load_build_ids(c);
	if (!err)
		err = symbolizer_ready(c);
	if (err)
		return c->err[0] ? err : fail(c, err, "%s", strerror(-err));

	nframes = pp_intern_count(&c->frames);
	if (!c->resolved) {
		c->resolved = calloc(nframes ? nframes : 1, sizeof(*c->resolved));
		if (!c->resolved)
			return fail(c, -ENOMEM, "out of memory");
	}
	bc.loc_of = calloc(nframes ? nframes : 1, sizeof(*bc.loc_of));
	bc.map_of = calloc(pp_intern_count(&c->cmaps) + 1, sizeof(*bc.map_of));
	err = bc.loc_of && bc.map_of ? pprof_builder_new(&bc.b) : -ENOMEM;
	if (err)
		goto out;
	ev = perfdata_reader_event(c->r, c->profiles[i].event);
	err = setup_header(c, bc.b, ev, c->profiles[i].short_name, c->profiles[i].name);
	if (!err)
		err = main_mapping_first(c, &bc, i);

	uint64_t *locs = NULL;
	size_t locs_cap = 0;

	for (size_t s = 0; !err && s < pp_intern_count(&c->samples); s++) {
		const struct sample_key *k = pp_intern_get(&c->samples, s, NULL);
		size_t stack_len, nl;
		const uint32_t *stack = pp_intern_get(&c->stacks, k->stack, &stack_len);
		const struct label_val *lv = pp_intern_get(&c->labelsets, k->labels, &nl);
		struct pprof_label labels[16];
		int64_t values[2] = { (int64_t)c->counts[s].count, (int64_t)c->counts[s].weight };

		if (k->event >= c->nr_ev_profile || c->ev_profile[k->event] != i)
			continue;
		stack_len /= sizeof(uint32_t);
		nl /= sizeof(*lv);
		if (stack_len > locs_cap) {
			uint64_t *n = realloc(locs, stack_len * sizeof(*n));

			if (!n) {
				err = -ENOMEM;
				break;
			}
			locs = n;
			locs_cap = stack_len;
		}
		for (size_t f = 0; !err && f < stack_len; f++)
			err = location_id(c, &bc, stack[f], &locs[f]);
		for (size_t l = 0; l < nl && l < 16; l++) {
			const char *key = label_key(c, lv[l].spec);

			labels[l] = (struct pprof_label){
				.key = key,
				.str = lv[l].is_str ? str_of(c, lv[l].value) : NULL,
				.num = lv[l].is_str ? 0 : (int64_t)lv[l].value,
				/* A unit keeps pprof from dropping numeric labels of value 0. */
				.num_unit = lv[l].is_str ? NULL : key,
			};
		}
		if (!err)
			err = pprof_add_sample(bc.b, locs, stack_len, values, labels, nl);
	}
	free(locs);
out:
	free(bc.loc_of);
	free(bc.map_of);
	if (err) {
		pprof_builder_free(bc.b);
		return c->err[0] ? err : fail(c, err, "building the %s profile: %s",
					      c->profiles[i].name, strerror(-err));
	}
	*out = bc.b;
	return 0;
}

/* ---- tracepoint fields ---- */

static int trace_value(struct pp_convert *c, const struct csample *s, const char *field,
		       struct label_val *lv)
{
	const struct perfdata_event *ev = perfdata_reader_event(c->r, s->event);
	struct pp_trace_value v;
	int err;

	if (!ev || ev->attr.type != PERF_TYPE_TRACEPOINT || !s->raw_size)
		return -ENOENT;
	if (!c->trace_tried) {
		size_t size = 0;
		const void *td = perfdata_reader_feature(c->r, PERFDATA_FEAT_TRACING_DATA, &size);
		char msg[256] = "";

		c->trace_tried = true;
		if (!td || !size) {
			snprintf(c->warning, sizeof(c->warning),
				 "%s has no tracing data (HEADER_TRACING_DATA): trace: labels are left out",
				 c->opts.input_name);
		} else if (pp_trace_new(td, size, &c->trace, msg, sizeof(msg))) {
			snprintf(c->warning, sizeof(c->warning),
				 "%s: tracing data unusable (%s): trace: labels are left out",
				 c->opts.input_name, msg);
		}
	}
	if (!c->trace)
		return -ENOENT;
	err = pp_trace_field(c->trace, ev->attr.config, field,
			     (const uint8_t *)(s + 1) + (size_t)s->nr_ips * 8, s->raw_size, &v);
	if (err)
		return err == -ENOENT || err == -EINVAL ? -ENOENT : err;
	if (v.is_str) {
		int64_t sid = sid_of(c, v.str);

		if (sid < 0)
			return sid;
		lv->is_str = 1;
		lv->value = sid;
	} else {
		lv->value = (uint64_t)v.num;
	}
	return 0;
}

/* ---- --labels ---- */

int pp_parse_labels(char *s, struct pp_label_spec *specs, size_t cap, size_t *nr)
{
	char *save = NULL, *tok;

	*nr = 0;
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct pp_label_spec sp = { 0 };

		if (!strcmp(tok, "pid"))
			sp.kind = PP_LABEL_PID;
		else if (!strcmp(tok, "tid"))
			sp.kind = PP_LABEL_TID;
		else if (!strcmp(tok, "comm"))
			sp.kind = PP_LABEL_COMM;
		else if (!strcmp(tok, "cpu"))
			sp.kind = PP_LABEL_CPU;
		else if (!strncmp(tok, "trace:", 6) && tok[6]) {
			sp.kind = PP_LABEL_TRACE;
			sp.field = tok + 6;
		} else
			return -EINVAL;
		if (*nr == cap)
			return -E2BIG;
		specs[(*nr)++] = sp;
	}
	return 0;
}
