// SPDX-License-Identifier: MIT
/*
 * build.c - phase 2 of the conversion (see convert.h): the list of profiles
 * (one per selected event, or per event and group) and each profile, built
 * from the tables phase 1
 * (convert.c) filled. Each distinct frame is symbolized once, whatever the
 * number of events; mappings get the recorded file, offset and build-id;
 * the kernel's addresses are checked against (and if need be shifted to)
 * the kallsyms used.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata/events.h"
#include "perfdata/reader.h"
#include "symbolize/buildid.h"
#include "convert_int.h"
#include "events.h"
#include "labels.h"
#include "profile.h"
#include "tools/lib/array.h"

/* ---- the profile list ---- */

/* The (event profile, group) a sample belongs to, as an index into a
 * nr_profiles x nr_groups grid, or SIZE_MAX for none. */
static size_t out_cell(const struct pp_convert *c, const struct sample_key *k, size_t nr_groups)
{
	if (k->event >= c->nr_ev_profile || c->ev_profile[k->event] == UINT32_MAX ||
	    k->group >= nr_groups)
		return SIZE_MAX;
	return (size_t)c->ev_profile[k->event] * nr_groups + k->group;
}

/*
 * The profiles phase 2 builds (c->outs) and the samples of each, listed
 * once (c->out_samples, a counting sort by profile that keeps the sample
 * order within each) so that building one of many group profiles does not
 * walk every sample. Without groups, one per event profile even when it
 * has no samples, as before groups existed; with groups, one per (event
 * profile, group) that has samples.
 */
static int make_outs(struct pp_convert *c)
{
	size_t nr_groups = c->opts.group ? pp_intern_count(&c->groups) : 1;
	size_t nr_cells = c->nr_profiles * nr_groups, nr_samples = pp_intern_count(&c->samples);
	size_t *start = calloc(nr_cells + 1, sizeof(*start));
	uint64_t *count = calloc(nr_cells ? nr_cells : 1, sizeof(*count));
	int err = -ENOMEM;

	free(c->outs);		/* from an attempt that ran out of memory */
	free(c->out_samples);
	c->nr_outs = 0;
	c->outs = calloc(nr_cells ? nr_cells : 1, sizeof(*c->outs));
	c->out_samples = malloc((nr_samples ? nr_samples : 1) * sizeof(*c->out_samples));
	if (!start || !count || !c->outs || !c->out_samples)
		goto out;
	for (size_t i = 0; i < nr_samples; i++) {
		size_t cell = out_cell(c, pp_intern_get(&c->samples, i, NULL), nr_groups);

		if (cell == SIZE_MAX)
			continue;
		start[cell + 1]++;
		count[cell] += c->counts[i].count;
	}
	for (size_t cell = 0; cell < nr_cells; cell++) {
		if (!c->opts.group || start[cell + 1])
			c->outs[c->nr_outs++] = (struct out_profile){
				.profile = cell / nr_groups, .group = cell % nr_groups,
				.samples = count[cell], .first = start[cell], .nr = start[cell + 1],
			};
		start[cell + 1] += start[cell];
	}
	/* start[cell] is where each cell's samples begin: place them, in order. */
	for (size_t i = 0; i < nr_samples; i++) {
		size_t cell = out_cell(c, pp_intern_get(&c->samples, i, NULL), nr_groups);

		if (cell != SIZE_MAX)
			c->out_samples[start[cell]++] = i;
	}
	err = 0;
out:
	free(start);
	free(count);
	return err;
}

/* Fill c->profiles and c->ev_profile from the events (once): one profile
 * per selected event, two attrs of one name and the allocation events
 * sharing one. */
static int make_profiles(struct pp_convert *c)
{
	size_t n = perfdata_reader_nr_events(c->r);
	int err;

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
		bool heap;

		c->ev_profile[i] = UINT32_MAX;
		if (pp_event_is_dummy(ev))
			continue;
		name = pp_event_name(ev);
		if (!name)
			return -ENOMEM;
		if (!pp_event_selected(ev, name, c->opts.event)) {
			free(name);
			continue;
		}
		heap = pp_output_is_heap(pp_event_output_kind(ev, name));
		if (heap) {	/* alloc and inuse: one heap profile */
			free(name);
			name = strdup(PP_HEAP_PROFILE_NAME);
			if (!name)
				return -ENOMEM;
		}
		/* Two attrs with one name (perf does this per PMU) share a profile. */
		for (p = 0; p < c->nr_profiles; p++)
			if (!strcmp(c->profiles[p].name, name))
				break;
		if (p < c->nr_profiles)
			free(name);
		else
			c->profiles[c->nr_profiles++] = (struct profile_info){ .event = i, .name = name,
									       .heap = heap };
		c->ev_profile[i] = p;
	}
	/* Short names, unless two events would share one. */
	for (size_t p = 0; p < c->nr_profiles; p++) {
		c->profiles[p].short_name = pp_event_short_name(c->profiles[p].name);
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
	err = make_outs(c);
	if (err)
		return err;
	c->profiles_made = true;
	return 0;
}

size_t pp_convert_nr_profiles(const struct pp_convert *c)
{
	if (make_profiles((struct pp_convert *)c))
		return 0;
	return c->nr_outs;
}

size_t pp_convert_nr_event_profiles(const struct pp_convert *c)
{
	if (make_profiles((struct pp_convert *)c))
		return 0;
	return c->nr_profiles;
}

const char *pp_convert_profile_name(const struct pp_convert *c, size_t i)
{
	return i < c->nr_outs ? c->profiles[c->outs[i].profile].short_name : NULL;
}

const char *pp_convert_profile_event(const struct pp_convert *c, size_t i)
{
	return i < c->nr_outs ? c->profiles[c->outs[i].profile].name : NULL;
}

const char *pp_convert_profile_group(const struct pp_convert *c, size_t i)
{
	if (i >= c->nr_outs || !c->opts.group)
		return NULL;
	return pp_intern_get(&c->groups, c->outs[i].group, NULL);
}

uint64_t pp_convert_profile_samples(const struct pp_convert *c, size_t i)
{
	return i < c->nr_outs ? c->outs[i].samples : 0;
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
	fsid = pp_cv_sid(c, b->filename);
	if (fsid < 0)
		return fsid;
	buildid_to_hex(b->id, n, hex);
	hsid = pp_cv_sid(c, hex);
	if (hsid < 0)
		return hsid;
	k.filename = fsid;
	k.kernel = (b->cpumode & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	if (ARRAY_RESERVE(c->bid_vals, c->bid_cap, pp_intern_count(&c->build_ids) + 1, 64))
		return -ENOMEM;
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
static const struct bid_val *build_id_of(struct pp_convert *c, const struct pp_mapping *m,
					 struct bid_val *tmp)
{
	struct bid_key k = { .filename = m->filename, .kernel = m->kind == PP_MAPPING_KERNEL };
	int64_t id;

	if (m->build_id_size) {
		char hex[2 * PERFDATA_BUILD_ID_MAX + 1];
		int64_t hsid;

		buildid_to_hex(m->build_id, m->build_id_size, hex);
		hsid = pp_cv_sid(c, hex);
		tmp->size = m->build_id_size;
		memcpy(tmp->id, m->build_id, m->build_id_size);
		tmp->hex = hsid < 0 ? 0 : hsid;
		return tmp;
	}
	id = pp_intern_find(&c->build_ids, &k, sizeof(k));
	return id < 0 ? NULL : &c->bid_vals[id];
}

/* ---- phase 2: the kernel ---- */

/*
 * Kernel addresses are looked up in kallsyms. When the reference symbol of
 * the recorded kernel map (_text) sits elsewhere in that kallsyms, the
 * recording comes from another boot (KASLR) or another machine: shift by
 * the difference if it is the same kernel, give up on names if it is not.
 */
static void check_kernel(struct pp_convert *c)
{
	uint64_t now, ref_addr;
	const char *ref_sym = pp_aspace_kernel_ref(c->as, &ref_addr);

	if (c->kernel_checked)
		return;
	c->kernel_checked = true;
	c->kernel_ok = true;
	if (!ref_addr || !ref_sym[0])
		return;
	/*
	 * From the table the symbolizer looks kernel addresses up in (loaded
	 * once, shared by the windows of an agent), not the file read again.
	 * 0 when it is absent or hidden (or the file unreadable): nothing to
	 * shift by.
	 */
	if (symbolize_kernel_symbol(c->namer, ref_sym, &now))
		now = 0;
	if (!now || now == ref_addr)
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
	c->kernel_delta = (int64_t)(now - ref_addr);
}

/* ---- phase 2: frames ---- */

static int symbolizer_ready(struct pp_convert *c)
{
	struct symbolizer *sym;
	int err;

	if (c->opts.no_symbolize || c->sym_tried)
		return 0;
	c->sym_tried = true;
	err = pp_cv_symbolizer(c, &sym);
	if (err)
		return pp_cv_fail(c, err, "cannot set up symbolization: %s", strerror(-err));
	c->namer = sym;
	return 0;
}

static int add_line(struct pp_convert *c, const char *function, const char *file, int64_t line)
{
	int64_t fs = pp_cv_sid(c, function ? function : ""), ls = pp_cv_sid(c, file ? file : "");

	if (fs < 0 || ls < 0)
		return -ENOMEM;
	if (ARRAY_RESERVE(c->lines, c->lines_cap, c->nr_lines + 1, 1024))
		return -ENOMEM;
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
	const struct pp_mapping *m = k->cmap ? pp_aspace_mapping(c->as, k->cmap - 1) : NULL;
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

	if (!c->namer || (k->flags & FRAME_GUEST)) {
		/* nothing to ask */
	} else if (k->flags & FRAME_KERNEL) {
		check_kernel(c);
		if (c->kernel_ok)
			ret = symbolize_kernel(c->namer, look + c->kernel_delta, &res);
		if (ret && ret != -ENOENT && !c->warning[0] && symbolize_kernel_error(c->namer))
			snprintf(c->warning, sizeof(c->warning), "kernel frames are left as "
				 "addresses: %s", symbolize_kernel_error(c->namer));
	} else if (m && m->kind == PP_MAPPING_FILE) {
		struct bid_val tmp;
		const struct bid_val *b = build_id_of(c, m, &tmp);
		struct sym_mapping sm;

		pp_aspace_sym_mapping(c->as, k->cmap - 1, &sm);
		sm.build_id = b ? b->id : NULL;
		sm.build_id_size = b ? b->size : 0;
		ret = symbolize_user(c->namer, &sm, look, &res);
	} else {
		ret = symbolize_jit(c->namer, m ? (int)m->pid : (int)k->pid, look, &res);
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
	uint64_t *map_of;		/* per mapping (aspace.h) */
};

static int mapping_id(struct pp_convert *c, struct build_ctx *bc, uint32_t cmap, uint64_t *id)
{
	const struct pp_mapping *m = pp_aspace_mapping(c->as, cmap);
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
		.file_offset = m->kind == PP_MAPPING_KERNEL ? 0 : m->pgoff,
		.filename = pp_cv_str(c, m->filename),
		.build_id = b ? pp_cv_str(c, b->hex) : NULL,
		.discriminator = m->kind == PP_MAPPING_ANON ? (uint64_t)m->pid + 1 : 0,
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
			.function = pp_cv_str(c, l->function),
			.filename = pp_cv_str(c, l->file),
			.line = l->line,
		};
	}
	err = pprof_location(bc->b, mid, k->addr, lines, rs->nr, id);
	if (!err)
		bc->loc_of[fid] = *id;
	return err;
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

/*
 * A heap profile as Go writes one (runtime/pprof), so that go tool pprof
 * offers -sample_index=alloc_space etc. and shows inuse_space by default;
 * the period is the sampling interval in bytes.
 */
static int setup_heap_header(struct pprof_builder *b, const struct perf_event_attr *a)
{
	static const char *const types[][2] = {
		{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
		{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
	};
	int err = 0;

	for (size_t i = 0; !err && i < sizeof(types) / sizeof(types[0]); i++)
		err = pprof_add_sample_type(b, types[i][0], types[i][1]);
	if (!err)
		err = pprof_set_default_sample_type(b, "inuse_space");
	if (!err)
		err = pprof_set_period(b, "space", "bytes", a->freq ? 0 : (int64_t)a->sample_period);
	return err;
}

static int setup_header(struct pp_convert *c, struct pprof_builder *b,
			const struct perfdata_event *ev, const struct profile_info *pi,
			const char *group)
{
	const struct perf_event_attr *a = &ev->attr;
	const char *name = pi->short_name;
	int err = pi->heap ? setup_heap_header(b, a) : pprof_add_sample_type(b, "samples", "count");

	if (err)
		return err;
	if (pi->heap) {
		/* done */
	} else if (pp_event_is_offcpu(name)) {
		err = pprof_add_sample_type(b, "off_cpu", "nanoseconds");
		if (!err)
			err = pprof_set_period(b, "off_cpu", "nanoseconds", 0);
	} else if (pp_event_output_kind(ev, pi->name) == PP_OUTPUT_SCHED_DELAY) {
		/* period = ns runnable but not running; no sampling interval */
		err = pprof_add_sample_type(b, "runq_delay", "nanoseconds");
		if (!err)
			err = pprof_set_period(b, "runq_delay", "nanoseconds", 0);
	} else if (pp_event_is_timer(ev)) {
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

	snprintf(comment, sizeof(comment), "converted by bpfrec pprof from %s, %s %s%s%s",
		 c->opts.input_name, pi->heap ? "events" : "event",
		 pi->heap ? PERFDATA_ALLOC_EVENT_NAME " and " PERFDATA_INUSE_EVENT_NAME : pi->name,
		 group ? ", group " : "", group ? group : "");
	return pprof_add_comment(b, comment);
}

/* Make the executable with the most samples in profile o mapping 1. */
static int main_mapping_first(struct pp_convert *c, struct build_ctx *bc,
			      const struct out_profile *o)
{
	size_t n = pp_aspace_nr_mappings(c->as), best = SIZE_MAX;
	uint64_t *hits = calloc(n ? n : 1, sizeof(*hits));
	uint64_t id;
	int err = 0;

	if (!hits)
		return -ENOMEM;
	for (size_t j = o->first; j < o->first + o->nr; j++) {
		uint32_t s = c->out_samples[j];
		const struct sample_key *k = pp_intern_get(&c->samples, s, NULL);
		size_t len;
		const uint32_t *stack;

		stack = pp_intern_get(&c->stacks, k->stack, &len);
		for (size_t f = 0; f < len / sizeof(uint32_t); f++) {
			const struct frame_key *fk = pp_intern_get(&c->frames, stack[f], NULL);

			if (fk->cmap && pp_aspace_is_exe(c->as, fk->cmap - 1)) {
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

/*
 * An allocation sample's values: (objects, bytes, 0, 0) for alloc,
 * (0, 0, objects, bytes) for inuse. The builder adds up the samples of one
 * stack and labels, so both kinds of one stack become one Sample.
 */
static void heap_values(const struct pp_convert *c, uint32_t event, const struct counts *n,
			int64_t values[4])
{
	bool inuse = event < c->nr_ev_sel && c->ev_output[event] == PP_OUTPUT_INUSE;
	double objects = n->objects + 0.5;
	int64_t o = objects < (double)INT64_MAX ? (int64_t)objects : INT64_MAX;

	values[0] = inuse ? 0 : o;
	values[1] = inuse ? 0 : (int64_t)n->weight;
	values[2] = inuse ? o : 0;
	values[3] = inuse ? (int64_t)n->weight : 0;
}

int pp_convert_build(struct pp_convert *c, size_t i, struct pprof_builder **out)
{
	struct build_ctx bc = { 0 };
	const struct perfdata_event *ev;
	const struct out_profile *o;
	const struct profile_info *pi;
	size_t nframes;
	int err;

	err = make_profiles(c);
	if (err)
		return pp_cv_fail(c, err, "%s", strerror(-err));
	if (i >= c->nr_outs)
		return pp_cv_fail(c, -EINVAL, "no profile %zu", i);
	o = &c->outs[i];
	pi = &c->profiles[o->profile];
	err = load_build_ids(c);
	if (!err)
		err = symbolizer_ready(c);
	if (err)
		return c->err[0] ? err : pp_cv_fail(c, err, "%s", strerror(-err));

	nframes = pp_intern_count(&c->frames);
	if (!c->resolved) {
		c->resolved = calloc(nframes ? nframes : 1, sizeof(*c->resolved));
		if (!c->resolved)
			return pp_cv_fail(c, -ENOMEM, "out of memory");
	}
	bc.loc_of = calloc(nframes ? nframes : 1, sizeof(*bc.loc_of));
	bc.map_of = calloc(pp_aspace_nr_mappings(c->as) + 1, sizeof(*bc.map_of));
	err = bc.loc_of && bc.map_of ? pprof_builder_new(&bc.b) : -ENOMEM;
	if (err)
		goto out;
	ev = perfdata_reader_event(c->r, pi->event);
	err = setup_header(c, bc.b, ev, pi, pp_convert_profile_group(c, i));
	if (!err)
		err = main_mapping_first(c, &bc, o);

	uint64_t *locs = NULL;
	size_t locs_cap = 0;

	for (size_t j = o->first; !err && j < o->first + o->nr; j++) {
		uint32_t s = c->out_samples[j];
		const struct sample_key *k = pp_intern_get(&c->samples, s, NULL);
		size_t stack_len, nl;
		const uint32_t *stack = pp_intern_get(&c->stacks, k->stack, &stack_len);
		const struct label_val *lv = pp_intern_get(&c->labelsets, k->labels, &nl);
		struct pprof_label labels[PP_LABELS_MAX];
		int64_t values[4] = { (int64_t)c->counts[s].count, (int64_t)c->counts[s].weight };

		if (pi->heap)
			heap_values(c, k->event, &c->counts[s], values);
		stack_len /= sizeof(uint32_t);
		nl /= sizeof(*lv);
		if (nl > PP_LABELS_MAX)
			nl = PP_LABELS_MAX;	/* never stored so; labels[] holds no more */
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
		for (size_t l = 0; l < nl; l++) {
			const char *key = pp_cv_label_key(c, lv[l].spec);

			labels[l] = (struct pprof_label){
				.key = key,
				.str = lv[l].is_str ? pp_cv_str(c, lv[l].value) : NULL,
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
		return c->err[0] ? err : pp_cv_fail(c, err, "building the %s profile: %s",
					      pi->name, strerror(-err));
	}
	*out = bc.b;
	return 0;
}

