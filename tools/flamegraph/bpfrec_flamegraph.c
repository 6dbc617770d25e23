// SPDX-License-Identifier: MIT
/*
 * bpfrec_flamegraph.c - the public flame graph API (bpfrec/flamegraph.h).
 *
 * The input is read, filtered and symbolized by the pprof converter
 * (bpfrec/pprof.h, with pid, tid and comm labels); each of its profiles is
 * then walked once (profile.h's read-back accessors) into a call tree per
 * event (tree.h), and the converter is freed before the next input. So
 * there is one perf.data reader and one symbolizer, the converter's, and
 * the graph holds what a profile holds: distinct stacks per thread.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpfrec/flamegraph.h>
#include <bpfrec/pprof.h>

#include "tools/lib/opts.h"
#include "tools/pprof/outfile.h"
#include "tools/pprof/pprof_int.h"
#include "tools/lib/errbuf.h"
#include "tools/pprof/profile.h"
#include "graph.h"
#include "tree.h"
#include "tools/lib/array.h"

#define DEFAULT_MIN_SHARE 0.0001

struct bpfrec_flamegraph {
	struct bpfrec_flamegraph_opts opts;
	char *input_name, *base_name, *title;
	bool read, base_read;
	bool failed;			/* a read failed: the graph is incomplete */
	struct pp_intern strs;		/* names, modules, comms: bytes without NUL */
	struct pp_intern labels;	/* struct fg_labels */
	struct fg_view *views;
	size_t nr_views;
	/* scratch for one profile */
	struct fg_frame *path;
	size_t path_cap;
	uint32_t *loc_first;		/* per location id: its frames in loc_frames, +1 */
	uint32_t *loc_nr;		/* and how many */
	struct fg_frame *loc_frames;
	size_t nr_loc_frames, loc_frames_cap;
	char err[512];
};

#define fail(fg, e, ...) ERRBUF_FAIL(fg, e, __VA_ARGS__)

int bpfrec_flamegraph_new(const struct bpfrec_flamegraph_opts *opts, struct bpfrec_flamegraph **out)
{
	struct bpfrec_flamegraph *fg = calloc(1, sizeof(*fg));

	*out = fg;
	if (!fg)
		return -ENOMEM;
	if (OPTS_COPY(&fg->opts, bpfrec_flamegraph_opts, opts))
		return ERRBUF_OPTS_REFUSED(fg, bpfrec_flamegraph_opts, opts);
	if (fg->opts.format != BPFREC_FLAMEGRAPH_HTML && fg->opts.format != BPFREC_FLAMEGRAPH_SVG)
		return fail(fg, -EINVAL, "unknown output format %d: HTML or SVG",
			    (int)fg->opts.format);
	if (fg->opts.min_share >= 1)
		return fail(fg, -EINVAL, "min_share %g folds everything: give a share below 1 "
			    "(0.0001 = 0.01 %%)", fg->opts.min_share);
	if (!fg->opts.min_share)
		fg->opts.min_share = DEFAULT_MIN_SHARE;
	return 0;
}

/* The string id of s[0..len) in the graph's table. */
static int64_t sid(struct bpfrec_flamegraph *fg, const char *s, size_t len)
{
	return pp_intern_put(&fg->strs, s, len, NULL);
}

static int64_t builder_sid(struct bpfrec_flamegraph *fg, const struct pprof_builder *b, int64_t idx)
{
	size_t len;
	const char *s = pprof_string_at(b, idx, &len);

	return sid(fg, s, len);
}

static bool builder_str_is(const struct pprof_builder *b, int64_t idx, const char *want)
{
	size_t len;
	const char *s = pprof_string_at(b, idx, &len);

	return len == strlen(want) && !memcmp(s, want, len);
}

/*
 * What kind of code a location is. The builder keeps no cpumode, but the
 * converter keeps kernel frames at their recorded addresses, which on the
 * 64-bit machines perf.data comes from sit in the upper half; JIT code is
 * what lies in anonymous memory (mappings kept apart by their owner, the
 * discriminator) or in no mapping at all (perf-PID.map).
 */
static enum fg_kind location_kind(const struct pprof_builder *b, uint64_t map, uint64_t addr,
				  int64_t *module)
{
	uint64_t disc = 0;

	*module = 0;
	if (map)
		pprof_mapping_at(b, map, module, &disc);
	if (addr >> 63)
		return FG_KIND_KERNEL;
	if (*module && builder_str_is(b, *module, "[kernel.kallsyms]"))
		return FG_KIND_KERNEL;
	return !map || disc ? FG_KIND_JIT : FG_KIND_NATIVE;
}

/* The file name's last component: "libc.so.6", "[kernel.kallsyms]". */
static int64_t module_sid(struct bpfrec_flamegraph *fg, const struct pprof_builder *b,
			  int64_t module, enum fg_kind kind)
{
	size_t len;
	const char *s = module ? pprof_string_at(b, module, &len) : NULL;
	const char *slash;

	if (!s || !len) {
		s = kind == FG_KIND_KERNEL ? "[kernel.kallsyms]" : kind == FG_KIND_JIT ? "[jit]"
									      : "[unknown]";
		len = strlen(s);
	}
	slash = memrchr(s, '/', len);
	if (slash && (size_t)(slash - s) + 1 < len) {
		len -= slash + 1 - s;
		s = slash + 1;
	}
	return sid(fg, s, len);
}

static int push_loc_frame(struct bpfrec_flamegraph *fg, struct fg_frame f)
{
	if (ARRAY_RESERVE(fg->loc_frames, fg->loc_frames_cap, fg->nr_loc_frames + 1, 1024))
		return -ENOMEM;
	fg->loc_frames[fg->nr_loc_frames++] = f;
	return 0;
}

/*
 * The frames of location id, outermost first, made once per profile: its
 * function, then what was inlined into it down to the innermost.
 */
static int location_frames(struct bpfrec_flamegraph *fg, const struct pprof_builder *b,
			   uint64_t id, const struct fg_frame **frames, size_t *nr)
{
	uint64_t map, addr;
	size_t lines;
	int64_t module, msid;
	enum fg_kind kind;
	uint32_t first = fg->nr_loc_frames;
	int err;

	if (fg->loc_first[id]) {
		*frames = &fg->loc_frames[fg->loc_first[id] - 1];
		*nr = fg->loc_nr[id];
		return 0;
	}
	pprof_location_at(b, id, &map, &addr, &lines);
	kind = location_kind(b, map, addr, &module);
	msid = module_sid(fg, b, module, kind);
	if (msid < 0)
		return msid;
	if (!lines) {	/* not symbolized: the address */
		char hex[32];
		int n = snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)addr);
		int64_t name = sid(fg, hex, n);

		if (name < 0)
			return name;
		err = push_loc_frame(fg, (struct fg_frame){ name, msid, kind });
		if (err)
			return err;
	}
	for (size_t l = lines; l-- > 0;) {
		int64_t name = builder_sid(fg, b, pprof_location_function_name(b, id, l));

		if (name < 0)
			return name;
		err = push_loc_frame(fg, (struct fg_frame){
			name, msid, l == lines - 1 ? kind : FG_KIND_INLINED });
		if (err)
			return err;
	}
	fg->loc_first[id] = first + 1;
	fg->loc_nr[id] = fg->nr_loc_frames - first;
	*frames = &fg->loc_frames[first];
	*nr = fg->nr_loc_frames - first;
	return 0;
}

/* The label set id of sample s: its pid, tid and comm labels. */
static int64_t sample_labels(struct bpfrec_flamegraph *fg, const struct pprof_builder *b,
			     size_t s, size_t nr_labels)
{
	struct fg_labels k = { .comm = FG_NO_STRING };

	for (size_t l = 0; l < nr_labels; l++) {
		struct pprof_label_view lv;

		pprof_sample_label_at(b, s, l, &lv);
		if (builder_str_is(b, lv.key, "pid") && !lv.is_str) {
			k.pid = (uint32_t)lv.num;
		} else if (builder_str_is(b, lv.key, "tid") && !lv.is_str) {
			k.tid = (uint32_t)lv.num;
		} else if (builder_str_is(b, lv.key, "comm") && lv.is_str) {
			int64_t c = builder_sid(fg, b, lv.str);

			if (c < 0)
				return c;
			k.comm = c;
		}
	}
	return pp_intern_put(&fg->labels, &k, sizeof(k), NULL);
}

static struct fg_view *find_view(struct bpfrec_flamegraph *fg, const char *name)
{
	for (size_t i = 0; i < fg->nr_views; i++)
		if (!strcmp(fg->views[i].name, name))
			return &fg->views[i];
	return NULL;
}

static char *builder_strdup(const struct pprof_builder *b, int64_t idx)
{
	size_t len;
	const char *s = pprof_string_at(b, idx, &len);

	return strndup(s, len);
}

static int new_view(struct bpfrec_flamegraph *fg, const struct pprof_builder *b,
		    const char *name, struct fg_view **out)
{
	size_t nt = pprof_nr_sample_types(b);
	struct fg_view *views = realloc(fg->views, (fg->nr_views + 1) * sizeof(*views));
	struct fg_view *v;

	if (!views)
		return -ENOMEM;
	fg->views = views;
	v = &views[fg->nr_views];
	memset(v, 0, sizeof(*v));
	v->name = strdup(name);
	v->types = calloc(nt ? nt : 1, sizeof(*v->types));
	if (!v->name || !v->types)
		goto oom;
	fg->nr_views++;
	v->nr_types = nt;
	for (size_t t = 0; t < nt; t++) {
		int64_t type, unit;

		pprof_sample_type_at(b, t, &type, &unit);
		v->types[t].type = builder_strdup(b, type);
		v->types[t].unit = builder_strdup(b, unit);
		if (!v->types[t].type || !v->types[t].unit)
			return -ENOMEM;
	}
	/* The last type: time or bytes where the event has them (pprof's heap default). */
	v->default_type = nt ? nt - 1 : 0;
	*out = v;
	return fg_tree_new(fg->opts.diff ? 2 * nt : nt, &v->tree);
oom:
	free(v->name);
	free(v->types);
	return -ENOMEM;
}

/* Side 0 (the input) or 1 (the diff base): profile b of event name into its view. */
static int add_profile(struct bpfrec_flamegraph *fg, const struct pprof_builder *b,
		       const char *name, int side)
{
	size_t nt = pprof_nr_sample_types(b), nloc = pprof_nr_locations(b);
	struct fg_view *v = find_view(fg, name);
	int64_t values[64];
	int err;

	if (!v && side)
		return 0;	/* an event only the base has: nothing to compare it with */
	if (!v) {
		err = new_view(fg, b, name, &v);
		if (err)
			return err;
	} else if (v->nr_types != nt) {
		return -EPROTO;
	}
	if (nt > 32)
		return -E2BIG;
	if (side)
		v->has_base = true;
	free(fg->loc_first);
	free(fg->loc_nr);
	fg->loc_first = calloc(nloc + 1, sizeof(*fg->loc_first));
	fg->loc_nr = calloc(nloc + 1, sizeof(*fg->loc_nr));
	if (!fg->loc_first || !fg->loc_nr)
		return -ENOMEM;
	fg->nr_loc_frames = 0;
	memset(values, 0, sizeof(values));
	for (size_t s = 0; s < pprof_nr_samples(b); s++) {
		struct pprof_sample_view sv;
		size_t depth = 0;
		int64_t label;

		pprof_sample_at(b, s, &sv);
		for (size_t l = sv.nr_locs; l-- > 0;) {
			const struct fg_frame *fr = NULL;
			size_t nr = 0;

			err = location_frames(fg, b, sv.locs[l], &fr, &nr);
			if (err)
				return err;
			if (depth + nr > fg->path_cap) {
				size_t cap = (depth + nr) * 2;
				struct fg_frame *p = realloc(fg->path, cap * sizeof(*p));

				if (!p)
					return -ENOMEM;
				fg->path = p;
				fg->path_cap = cap;
			}
			memcpy(&fg->path[depth], fr, nr * sizeof(*fr));
			depth += nr;
		}
		label = sample_labels(fg, b, s, sv.nr_labels);
		if (label < 0)
			return label;
		memcpy(&values[side ? nt : 0], sv.values, nt * sizeof(*values));
		err = fg_tree_add(v->tree, fg->path, depth, values, (uint32_t)label);
		if (err)
			return err;
	}
	return 0;
}

static void on_pprof_log(void *ctx, enum bpfrec_log_level level, const char *msg)
{
	struct bpfrec_flamegraph *fg = ctx;

	if (fg->opts.log)
		fg->opts.log(fg->opts.log_ctx, level, msg);
}

/* Read one input (path, or fd when path is NULL) through the pprof converter. */
static int read_input(struct bpfrec_flamegraph *fg, int side, const char *path, int fd)
{
	const char *given = side ? fg->opts.base_name : fg->opts.input_name;
	char fdname[32];
	struct bpfrec_pprof *p = NULL;
	BPFREC_OPTS(bpfrec_pprof_opts, po,
		.event = fg->opts.event,
		.pids = fg->opts.pids, .nr_pids = fg->opts.nr_pids,
		.tids = fg->opts.tids, .nr_tids = fg->opts.nr_tids,
		.comms = fg->opts.comms, .nr_comms = fg->opts.nr_comms,
		.labels = "pid,tid,comm",
		.no_inlines = fg->opts.no_inlines,
		.kallsyms = fg->opts.kallsyms, .symfs = fg->opts.symfs,
		.debug_dir = fg->opts.debug_dir, .jit_dir = fg->opts.jit_dir,
		.log = on_pprof_log, .log_ctx = fg);
	char **name = side ? &fg->base_name : &fg->input_name;
	bool *done = side ? &fg->base_read : &fg->read;
	int err;

	fg->err[0] = '\0';
	if (*done)
		return fail(fg, -EALREADY, "a flame graph reads one %s: make a new one",
			    side ? "base" : "input");
	if (side && !fg->opts.diff)
		return fail(fg, -EINVAL, "a base is for a differential graph: set opts.diff");
	*done = true;
	snprintf(fdname, sizeof(fdname), "fd %d", fd);
	*name = strdup(given ? given : path ? path : fdname);
	if (!*name)
		return fail(fg, -ENOMEM, "out of memory");
	po.input_name = *name;
	err = bpfrec_pprof_new(&po, &p);
	if (!err)
		err = path ? bpfrec_pprof_read_path(p, path) : bpfrec_pprof_read_fd(p, fd);
	if (err) {
		fail(fg, err, "%s", p ? bpfrec_pprof_error(p) : strerror(-err));
		bpfrec_pprof_free(p);
		fg->failed = true;
		return err;
	}
	for (size_t i = 0; !err && i < bpfrec_pprof_nr_profiles(p); i++) {
		struct pprof_builder *b = NULL;
		const char *ev = bpfrec_pprof_profile_name(p, i);

		err = bpfrec_pprof_build(p, i, &b);
		if (err) {
			fail(fg, err, "%s", bpfrec_pprof_error(p));
			break;
		}
		err = add_profile(fg, b, ev, side);
		pprof_builder_free(b);
		if (err == -EPROTO)
			fail(fg, err, "%s: event %s has other sample types than in %s: cannot "
			     "compare them", fg->base_name, ev, fg->input_name);
		else if (err)
			fail(fg, err, "%s: event %s: %s", *name, ev, strerror(-err));
	}
	bpfrec_pprof_free(p);
	free(fg->loc_first);
	free(fg->loc_nr);
	fg->loc_first = fg->loc_nr = NULL;
	fg->failed |= err != 0;
	return err;
}

int bpfrec_flamegraph_read_path(struct bpfrec_flamegraph *fg, const char *path)
{
	return read_input(fg, 0, path, -1);
}

int bpfrec_flamegraph_read_fd(struct bpfrec_flamegraph *fg, int fd)
{
	return read_input(fg, 0, NULL, fd);
}

int bpfrec_flamegraph_read_base_path(struct bpfrec_flamegraph *fg, const char *path)
{
	return read_input(fg, 1, path, -1);
}

int bpfrec_flamegraph_read_base_fd(struct bpfrec_flamegraph *fg, int fd)
{
	return read_input(fg, 1, NULL, fd);
}

size_t bpfrec_flamegraph_nr_views(const struct bpfrec_flamegraph *fg)
{
	return fg->nr_views;
}

const char *bpfrec_flamegraph_view_name(const struct bpfrec_flamegraph *fg, size_t i)
{
	return i < fg->nr_views ? fg->views[i].name : NULL;
}

/* ---- writing ---- */

static int prepare(struct bpfrec_flamegraph *fg)
{
	if (!fg->read)
		return fail(fg, -EINVAL, "nothing read yet: read the input first");
	if (fg->failed)
		return fail(fg, -EINVAL, "reading failed: the graph would be incomplete");
	if (!fg->nr_views)
		return fail(fg, -ENOENT, "%s: no samples to draw", fg->input_name);
	if (fg->opts.diff && !fg->base_read)
		return fail(fg, -EINVAL, "a differential graph needs its base: read it first");
	if (fg->opts.diff) {
		bool any = false;

		for (size_t i = 0; i < fg->nr_views; i++)
			any |= fg->views[i].has_base;
		if (!any)
			return fail(fg, -ENOENT, "%s has none of the events of %s: nothing to "
				    "compare", fg->base_name, fg->input_name);
	}
	if (!fg->title) {
		int n = fg->opts.title ? asprintf(&fg->title, "%s", fg->opts.title)
			: fg->opts.diff ? asprintf(&fg->title, "Differential flame graph: %s against %s",
						   fg->input_name, fg->base_name)
			: asprintf(&fg->title, "Flame graph of %s", fg->input_name);

		if (n < 0) {
			fg->title = NULL;
			return fail(fg, -ENOMEM, "out of memory");
		}
	}
	for (size_t i = 0; i < fg->nr_views; i++) {
		struct fg_view *v = &fg->views[i];
		int err;

		if (v->folded)
			continue;
		err = fg_tree_fold(v->tree, fg->opts.min_share < 0 ? -1 : fg->opts.min_share,
				   &v->folded);
		if (err)
			return fail(fg, err, "folding the %s graph: %s", v->name, strerror(-err));
	}
	return 0;
}

static int write_stream(struct bpfrec_flamegraph *fg, int fd, struct bpfrec_flamegraph_info *info)
{
	struct fg_graph g = {
		.title = fg->title, .input = fg->input_name,
		.base = fg->opts.diff ? fg->base_name : NULL,
		.icicle = fg->opts.icicle, .min_share = fg->opts.min_share < 0 ? 0 : fg->opts.min_share,
		.views = fg->views, .nr_views = fg->nr_views, .strs = &fg->strs,
		.labels = &fg->labels,
	};
	int dfd = dup(fd), err;
	off_t start = lseek(fd, 0, SEEK_CUR);
	FILE *f;

	if (dfd < 0 || !(f = fdopen(dfd, "w"))) {
		err = -errno;
		if (dfd >= 0)
			close(dfd);
		return fail(fg, err, "cannot write fd %d: %s", fd, strerror(-err));
	}
	err = fg->opts.format == BPFREC_FLAMEGRAPH_SVG ? fg_write_svg(&g, 0, f) : fg_write_html(&g, f);
	if (fclose(f) && !err)
		err = -errno ? -errno : -EIO;
	if (err)
		return fail(fg, err, "writing the flame graph: %s", strerror(-err));
	if (info) {
		struct bpfrec_flamegraph_info out = { .sz = sizeof(out) };
		off_t end = lseek(fd, 0, SEEK_CUR);
		size_t nv = fg->opts.format == BPFREC_FLAMEGRAPH_SVG ? 1 : fg->nr_views;

		out.views = nv;
		for (size_t i = 0; i < nv; i++) {
			out.frames += fg_tree_nr_nodes(fg->views[i].folded);
			out.folded += fg_tree_folded(fg->views[i].folded);
		}
		out.bytes = start >= 0 && end >= start ? (uint64_t)(end - start) : 0;
		opts_copy_out(info, &out, sizeof(out));
	}
	return 0;
}

int bpfrec_flamegraph_write_fd(struct bpfrec_flamegraph *fg, int fd,
			       struct bpfrec_flamegraph_info *info)
{
	int err;

	fg->err[0] = '\0';
	err = prepare(fg);
	return err ? err : write_stream(fg, fd, info);
}

struct path_write {
	struct bpfrec_flamegraph *fg;
	struct bpfrec_flamegraph_info *info;
};

static int fill_path(void *ctx, int fd)
{
	struct path_write *w = ctx;

	return write_stream(w->fg, fd, w->info);
}

int bpfrec_flamegraph_write_path(struct bpfrec_flamegraph *fg, const char *path,
				 struct bpfrec_flamegraph_info *info)
{
	struct path_write w = { fg, info };
	const char *step;
	int err;

	fg->err[0] = '\0';
	err = prepare(fg);
	if (err)
		return err;
	err = pp_outfile_write(path, fill_path, &w, &step);
	if (err && step)
		fail(fg, err, "%s %s: %s", step, path, strerror(-err));
	return err;
}

const char *bpfrec_flamegraph_error(const struct bpfrec_flamegraph *fg)
{
	return fg->err;
}

void bpfrec_flamegraph_free(struct bpfrec_flamegraph *fg)
{
	if (!fg)
		return;
	for (size_t i = 0; i < fg->nr_views; i++) {
		struct fg_view *v = &fg->views[i];

		for (size_t t = 0; t < v->nr_types; t++) {
			free(v->types[t].type);
			free(v->types[t].unit);
		}
		free(v->types);
		free(v->name);
		fg_tree_free(v->tree);
		fg_tree_free(v->folded);
	}
	free(fg->views);
	pp_intern_free(&fg->strs);
	pp_intern_free(&fg->labels);
	free(fg->path);
	free(fg->loc_first);
	free(fg->loc_nr);
	free(fg->loc_frames);
	free(fg->input_name);
	free(fg->base_name);
	free(fg->title);
	free(fg);
}
