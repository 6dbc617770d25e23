// SPDX-License-Identifier: MIT
/*
 * convert.c - phase 1 of the conversion (see convert.h): drive the reading
 * and dispatch the records. Phase 2 is build.c.
 *
 * Records come from the reader (perfdata/reader.h); SAMPLE records are
 * shrunk to what the profile needs (csample.h) and filtered by event, pid
 * and tid before they are queued for time ordering (perfdata/reorder.h);
 * MMAP, MMAP2, COMM and FORK records are queued as they are. When its turn
 * comes, each goes where it belongs: the process replay (aspace.h), or for
 * a sample its thread-name filter, its process's group (opts.group), the
 * unwinding of its user stack (ustack.h) and aggregation (aggregate.h).
 * The state all of them share is in convert_int.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata/reader.h"
#include "perfdata/trace.h"
#include "aggregate.h"
#include "convert_int.h"
#include "events.h"
#include "labels.h"
#include "ustack.h"
#include "tools/lib/array.h"


const char *pp_convert_error(const struct pp_convert *c)
{
	return c->err[0] ? c->err : "unknown error";
}

const struct pp_convert_stats *pp_convert_stats(const struct pp_convert *c)
{
	return &c->stats;
}

/* ---- strings ---- */

int64_t pp_cv_sid(struct pp_convert *c, const char *s)
{
	return pp_intern_str(&c->strs, s);
}

const char *pp_cv_str(const struct pp_convert *c, uint32_t sid)
{
	return pp_intern_get(&c->strs, sid, NULL);
}

int pp_cv_symbolizer(struct pp_convert *c, struct symbolizer **out)
{
	if (c->opts.shared_sym) {
		/*
		 * Its files serve again, each checked once (a symbol file may have
		 * grown); what it knew of processes is another recording's.
		 */
		if (!c->sym_reset) {
			symbolizer_next_recording(c->opts.shared_sym);
			c->sym_reset = true;
		}
		*out = c->opts.shared_sym;
		return 0;
	}
	if (!c->sym) {
		int err = symbolizer_new(&c->opts.sym, &c->sym);

		if (err)
			return err;
	}
	*out = c->sym;
	return 0;
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
	err = perfdata_reorder_new(opts->reorder_mem_limit, deliver, c, &c->q);
	if (!err)
		err = pp_aspace_new(&c->strs, &c->as);
	if (!err && pp_cv_sid(c, "") != 0)
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
	perfdata_reorder_free(c->q);
	pp_ustack_free(c->ustack);	/* before the symbolizer whose files it uses */
	if (c->sym)
		symbolizer_free(c->sym);
	pp_aspace_free(c->as);
	pp_intern_free(&c->strs);
	free(c->ev_sel);
	free(c->ev_output);
	free(c->rec_buf);
	/* aggregate.c */
	pp_intern_free(&c->frames);
	pp_intern_free(&c->stacks);
	pp_intern_free(&c->samples);
	free(c->counts);
	pp_intern_free(&c->rawstacks);
	free(c->raw_stack);
	free(c->raw_key);
	free(c->stack_buf);
	pp_intern_free(&c->groups);
	pp_intern_free(&c->gpids);
	free(c->gpid_group);
	/* labels.c */
	pp_intern_free(&c->labelsets);
	perfdata_trace_free(c->trace);
	/* build.c */
	for (size_t i = 0; i < c->nr_profiles; i++) {
		free(c->profiles[i].name);
		free(c->profiles[i].short_name);
	}
	free(c->profiles);
	free(c->ev_profile);
	free(c->outs);
	free(c->out_samples);
	free(c->resolved);
	free(c->lines);
	pp_intern_free(&c->build_ids);
	free(c->bid_vals);
	free(c);
}

/* ---- events ---- */

static size_t event_index(const struct pp_convert *c, const struct perfdata_event *ev)
{
	size_t n = perfdata_reader_nr_events(c->r);

	for (size_t i = 0; i < n; i++)
		if (perfdata_reader_event(c->r, i) == ev)
			return i;
	return SIZE_MAX;
}

/* Whether a sample's event is selected (--event, decided per sample since
 * a pipe announces events as it goes), its index, and its BPF_OUTPUT kind
 * (c->ev_output), cached per event. */
static int sample_event(struct pp_convert *c, const struct perfdata_event *ev, size_t *idx)
{
	size_t n = perfdata_reader_nr_events(c->r);

	if (n > c->nr_ev_sel) {
		int8_t *sel = realloc(c->ev_sel, n);
		uint8_t *kind = sel ? realloc(c->ev_output, n) : NULL;

		if (sel)
			c->ev_sel = sel;
		if (!kind)
			return -ENOMEM;
		c->ev_output = kind;
		memset(sel + c->nr_ev_sel, -1, n - c->nr_ev_sel);
		memset(kind + c->nr_ev_sel, PP_OUTPUT_NONE, n - c->nr_ev_sel);
		c->nr_ev_sel = n;
	}
	*idx = event_index(c, ev);
	if (*idx == SIZE_MAX)
		return -ENOENT;
	if (c->ev_sel[*idx] < 0) {
		char *name = pp_event_name(ev);

		if (!name)
			return -ENOMEM;
		c->ev_output[*idx] = pp_event_output_kind(ev, name);
		c->ev_sel[*idx] = pp_event_selected(ev, name, c->opts.event) && !pp_event_is_dummy(ev);
		free(name);
	}
	return c->ev_sel[*idx];
}

/* ---- samples ---- */

static bool in_list(const uint32_t *list, size_t n, uint32_t v)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == v)
			return true;
	return false;
}

/* A DWARF-mode sample's user stack, unwound (ustack.h) into its callchain. */
static int unwind(struct pp_convert *c, const struct csample *s, const struct csample **out)
{
	struct pp_ustack_walk w;
	struct symbolizer *sym;
	int err;

	if (!c->ustack) {
		err = pp_cv_symbolizer(c, &sym);
		if (err)
			return pp_cv_fail(c, err, "cannot set up DWARF unwinding: %s", strerror(-err));
		err = pp_ustack_new(sym, c->as, &c->ustack);
		if (err)
			return err;
	}
	err = pp_ustack_unwind(c->ustack, s, out, &w);
	c->stats.unwind_files_missing += w.files_missing;
	if (err)
		return err;
	c->stats.unwind_samples++;
	c->stats.unwind_frames += w.frames;
	c->stats.unwind_stop[w.stop]++;
	return 0;
}

/*
 * The group of process pid (opts.group), asked once per process image: per
 * pid and command name, so that a process that forks and then execs (first
 * sampled as its parent's copy) is asked again as the program it became.
 * thread_comm is the sampled thread's name (sid + 1, 0 = unknown), for a
 * process whose main thread has none.
 */
static int sample_group(struct pp_convert *c, uint32_t pid, uint32_t thread_comm, uint32_t *group)
{
	uint32_t comm = pp_aspace_comm(c->as, pid);
	uint32_t key[2];
	const char *name;
	bool added;
	int64_t id, gid;

	if (!c->opts.group) {
		*group = 0;
		return 0;
	}
	if (!comm)
		comm = thread_comm;
	key[0] = pid;
	key[1] = comm;
	if (ARRAY_RESERVE(c->gpid_group, c->gpid_cap, pp_intern_count(&c->gpids) + 1, 256))
		return -ENOMEM;
	id = pp_intern_put(&c->gpids, key, sizeof(key), &added);
	if (id < 0)
		return id;
	if (!added) {
		*group = c->gpid_group[id];
		return 0;
	}
	/* As the comm label names them (labels.c), but "" for an unknown process. */
	name = c->opts.group(c->opts.group_ctx, pid,
			     comm ? pp_cv_str(c, comm - 1) : pid ? "" : "swapper");
	if (!name) {
		c->gpid_group[id] = PP_GROUP_DROPPED;
	} else {
		gid = pp_intern_str(&c->groups, name);
		if (gid < 0)
			return gid;
		c->gpid_group[id] = gid;
	}
	*group = c->gpid_group[id];
	return 0;
}

/* A sample's turn: filtered by its thread's name and its group, unwound, aggregated. */
static int on_sample(struct pp_convert *c, const struct csample *s, uint64_t time)
{
	uint32_t comm = pp_aspace_comm(c->as, s->tid), group = 0;
	int err;

	if (!comm)
		comm = pp_aspace_comm(c->as, s->pid);
	if (c->opts.nr_comms) {
		const char *name = comm ? pp_cv_str(c, comm - 1) : "";
		bool ok = false;

		for (size_t i = 0; i < c->opts.nr_comms && !ok; i++)
			ok = !strcmp(name, c->opts.comms[i]);
		if (!ok) {
			c->stats.filtered++;
			return 0;
		}
	}
	err = sample_group(c, s->pid, comm, &group);
	if (err)
		return err;
	if (group == PP_GROUP_DROPPED) {
		c->stats.filtered++;
		return 0;
	}
	if (s->pid && !comm && !pp_aspace_known(c->as, s->pid))
		c->stats.unknown_pid++;
	if (s->flags & CSAMPLE_HAS_USTACK) {
		err = unwind(c, s, &s);
		if (err)
			return err;
	}

	return pp_cv_aggregate(c, s, comm, group, time);
}

/* A record's turn has come, in time order. */
static int deliver(const struct perf_event_header *h, uint64_t time, void *ctx)
{
	struct pp_convert *c = ctx;
	int ret;

	if (h->type == CSAMPLE_TYPE)
		return on_sample(c, (const struct csample *)h, time);
	ret = pp_aspace_record(c->as, h);
	if (ret == 1)
		c->stats.bad_records++;
	return ret < 0 ? ret : 0;
}

/* What the RAW text of bpfrec's BPF_OUTPUT events says (events.h): an
 * allocation's size, a run-queue wait's reason. Bad text leaves them 0. */
static int raw_text_values(struct pp_convert *c, enum pp_output_kind kind,
			   const struct perfdata_sample *s, struct csample *cs)
{
	const char *reason;
	char buf[PP_RAW_WORD_MAX + 1];
	size_t len;
	int64_t sid;

	if (pp_output_is_heap(kind)) {
		cs->alloc_size = pp_heap_raw_size(s->raw, s->raw_size);
		return 0;
	}
	if (kind != PP_OUTPUT_SCHED_DELAY)
		return 0;
	len = pp_sched_raw_reason(s->raw, s->raw_size, &reason);
	if (!len)
		return 0;
	memcpy(buf, reason, len);
	buf[len] = '\0';
	sid = pp_cv_sid(c, buf);
	if (sid < 0)
		return sid;
	cs->reason = (uint32_t)sid + 1;
	return 0;
}

/* Shrink a SAMPLE to a csample and queue it. */
static int read_sample(struct pp_convert *c, const struct perf_event_header *h)
{
	struct perfdata_sample s;
	const struct perfdata_event *ev = NULL;
	size_t idx, size, nr_ips, raw, ustack;
	struct csample *cs;
	bool cut;
	int ret;

	c->stats.samples++;
	/* One decoding of the event id: no event for it, or a malformed sample. */
	if (perfdata_reader_parse_sample(c->r, h, &s, &ev)) {
		if (ev)
			c->stats.bad_records++;
		else
			c->stats.unknown_event++;
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
	raw = pp_cv_labels_want_raw(c) && (ev->attr.sample_type & PERF_SAMPLE_RAW) ? s.raw_size : 0;
	size = csample_ustack_offset(nr_ips, raw);
	if (size > UINT16_MAX) {
		/* Cannot happen for records perf writes (they are <= 64 KiB and
		 * carry more than we keep); drop the outermost frames if it does. */
		raw = 0;
		nr_ips = (UINT16_MAX - sizeof(*cs)) / 8;
		size = csample_ustack_offset(nr_ips, 0);
	}
	/* DWARF mode: the user registers and stack ride along, cut to fit. */
	ustack = pp_ustack_size(&ev->attr, &s, (UINT16_MAX & ~7u) - size, &cut);
	if ((ev->attr.sample_type & PERF_SAMPLE_STACK_USER) && !ustack)
		c->stats.unwind_no_stack++;
	c->stats.unwind_cut += cut;
	if (!c->rec_buf) {
		c->rec_buf = malloc(1 << 16);	/* h.size is 16 bits */
		if (!c->rec_buf)
			return -ENOMEM;
	}
	cs = (struct csample *)c->rec_buf;
	memset(cs, 0, size);
	cs->h.type = CSAMPLE_TYPE;
	cs->h.misc = s.misc;
	cs->h.size = size + ustack;
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
	if (ev->attr.sample_type & PERF_SAMPLE_RAW) {
		ret = raw_text_values(c, c->ev_output[idx], &s, cs);
		if (ret)
			return ret;
	}
	if (ustack) {
		cs->flags |= CSAMPLE_HAS_USTACK;
		cs->ustack_len = ustack;
		pp_ustack_pack(&ev->attr, &s, (uint8_t *)cs + size, ustack);
	}

	uint64_t time = (ev->attr.sample_type & PERF_SAMPLE_TIME) ? s.time : c->max_time;

	if (time > c->max_time)
		c->max_time = time;
	return perfdata_reorder_push(c->q, time, &cs->h);
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
	return perfdata_reorder_push(c->q, time, h);
}

/* One record, from the file or decompressed by the reader from a COMPRESSED one. */
static int dispatch(struct pp_convert *c, const struct perf_event_header *h)
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
	case PERF_RECORD_LOST_SAMPLES: {
		uint64_t id, lost;

		if (!perfdata_decode_lost(h, &id, &lost))
			c->stats.lost += lost;
		return 0;
	}
	case PERFDATA_RECORD_FINISHED_ROUND:
		return perfdata_reorder_round(c->q);
	default:
		return 0;
	}
}

int pp_convert_read(struct pp_convert *c)
{
	const struct perf_event_header *h;
	int ret, err = 0;

	while (!err && (ret = perfdata_reader_next(c->r, &h)) > 0)
		err = dispatch(c, h);
	if (err)
		return c->err[0] ? err : pp_cv_fail(c, err, "%s: %s", c->opts.input_name, strerror(-err));
	if (ret < 0)
		return pp_cv_fail(c, ret, "%s", perfdata_reader_error(c->r));
	err = perfdata_reorder_flush(c->q);
	if (err)
		return pp_cv_fail(c, err, "%s: %s", c->opts.input_name, strerror(-err));
	c->stats.frames = pp_intern_count(&c->frames);
	c->stats.stacks = pp_intern_count(&c->stacks);
	return 0;
}

void pp_convert_set_wall_clock(struct pp_convert *c, uint64_t wall_clock_at_end)
{
	c->opts.wall_clock_at_end = wall_clock_at_end;
}

const char *pp_convert_warning(const struct pp_convert *c)
{
	return c->warning[0] ? c->warning : NULL;
}
