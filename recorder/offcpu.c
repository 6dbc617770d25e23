// SPDX-License-Identifier: MIT
/* offcpu.c - the off-CPU tracer and its event (contract in offcpu.h). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <bpfrec/record.h>

#include "perfdata/attr.h"
#include "perfdata/records.h"
#include "perfdata/writer.h"
#include "recorder/batch.h"
#include "recorder/emit.h"
#include "recorder/offcpu.h"
#include "recorder/percpu.h"
#include "recorder/session_int.h"
#include "recorder/tasks.h"
#include "recorder/tracer.h"
#include "recorder/tracer_build.h"

#include "bpf/offcpu.h"
#include "offcpu.skel.h"

/*
 * Our id for the offcpu-time event: the CPU event's id is the kernel's id
 * of a real perf event (a small counter); this one names no kernel event,
 * so it is put far above any such counter.
 */
#define OFFCPU_ID_BASE	(1ull << 48)

struct offcpu_tracer {
	struct offcpu_core core;	/* first: the shared ops take the state as one */
	struct offcpu *skel;
	uint64_t written;	/* intervals written in SAMPLEs (a sum counts each) */
};
_Static_assert(offsetof(struct offcpu_tracer, core) == 0, "the core first");

static const struct offcpu_core_desc offcpu_desc = {
	.event = OFFCPU_EVENT_NAME,
	.id_base = OFFCPU_ID_BASE,
	.kind = OFFCPU_KIND_SAMPLE,
	.lost_stat = OFFCPU_STAT_LOST,
	.py_cut_stat = OFFCPU_STAT_PY_CUT,
};

/* How far down a kernel stack the tracer's own frames may reach. */
#define MAX_TRAMPOLINE_FRAMES	8

size_t offcpu_pad_text(const char *text, char *buf, size_t size)
{
	int len;

	if (size < OFFCPU_STATE_TEXT_MAX)
		return 0;
	len = snprintf(buf, size, "%s", text);
	return perfdata_raw_text_pad(buf, len < 0 ? 0 : (size_t)len < size ? (size_t)len : size - 1,
				     size);
}

size_t offcpu_state_text(uint32_t state, char *buf, size_t size)
{
	static const struct {
		uint32_t state;
		const char *text;
	} names[] = {
		{ OFFCPU_STATE_RUNNING, "R (preempted)" },
		{ OFFCPU_STATE_INTERRUPTIBLE, "S (sleeping)" },
		{ OFFCPU_STATE_UNINTERRUPTIBLE, "D (disk sleep)" },
		{ OFFCPU_STATE_IDLE, "I (idle)" },
		{ OFFCPU_STATE_STOPPED, "T (stopped)" },
		{ OFFCPU_STATE_TRACED, "t (tracing stop)" },
		{ OFFCPU_STATE_PARKED, "P (parked)" },
	};
	char other[OFFCPU_STATE_TEXT_MAX];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].state == state)
			return offcpu_pad_text(names[i].text, buf, size);
	snprintf(other, sizeof(other), "? (state 0x%x)", (unsigned int)state);
	return offcpu_pad_text(other, buf, size);
}

size_t offcpu_trampoline_frames(const uint64_t *kernel, size_t nr, uint64_t sched_start,
				uint64_t sched_end)
{
	for (size_t i = 0; i < nr && i < MAX_TRAMPOLINE_FRAMES; i++)
		if (kernel[i] >= sched_start && kernel[i] < sched_end)
			return i;
	return 0;
}

void offcpu_build_attr(const struct perf_event_attr *cpu_attr, struct perf_event_attr *a)
{
	perfdata_bpf_output_attr(cpu_attr, a);
	if ((cpu_attr->sample_type & PERF_SAMPLE_REGS_USER) &&
	    (cpu_attr->sample_type & PERF_SAMPLE_STACK_USER)) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = cpu_attr->sample_regs_user;
		a->sample_stack_user = cpu_attr->sample_stack_user < OFFCPU_USTACK_MAX ?
				       cpu_attr->sample_stack_user : OFFCPU_USTACK_MAX;
		a->exclude_callchain_user = 1;
	}
}

static void offcpu_free(void *t);

static bool offcpu_wanted(const struct record_opts *opts)
{
	return opts->off_cpu;
}

static int offcpu_open(struct record_session *s, const struct record_tracer_env *env, void **out)
{
	struct offcpu_tracer *o = calloc(1, sizeof(*o));
	struct offcpu *skel;
	int nr_cpus, err;

	*out = NULL;
	if (!o)
		return -ENOMEM;
	/* The per-CPU counters (percpu.h) have one value per possible CPU. */
	nr_cpus = libbpf_num_possible_cpus();
	if (nr_cpus <= 0) {
		err = nr_cpus ? nr_cpus : -EINVAL;
		goto fail;
	}
	skel = offcpu__open();
	if (!skel) {
		err = errno ? -errno : -EINVAL;
		goto fail;
	}
	o->skel = skel;
	skel->rodata->thresh_ns = s->opts.off_cpu_thresh_ns;
	skel->rodata->stack_user_size = env->stack_user_size < OFFCPU_USTACK_MAX ?
					env->stack_user_size : OFFCPU_USTACK_MAX;
	o->core = (struct offcpu_core){
		.desc = &offcpu_desc,
		.obj = skel->obj,
		.stats = skel->maps.offcpu_stats,
		.aggs = skel->maps.aggs,
		.thresh_ns = s->opts.off_cpu_thresh_ns,
		.progs = { { skel->progs.on_switch, skel->progs.on_switch_compat } },
		.nr_progs = 1,
		.current_maps = { skel->maps.blocked, skel->maps.blocked_ustack },
		.compat_maps = { skel->maps.blocked_by_tid },
	};
	offcpu_build_attr(&s->attr, &o->core.attr);
	err = OFFCPU_CORE_LOAD(&o->core, s, env, skel);
	if (err)
		goto fail;
	*out = o;
	return 0;
fail:
	offcpu_free(o);
	return err;
}

static void offcpu_free(void *t)
{
	struct offcpu_tracer *o = t;

	if (!o)
		return;
	offcpu_core_detach(&o->core);
	offcpu__destroy(o->skel);
	free(o);
}

/*
 * The frames (native, then Python) and user-stack block of a record of our
 * layout (size >= OFFCPU_SAMPLE_SIZE(0)).
 */

static size_t record_parse(const struct offcpu_sample *r, size_t size, struct emit_ustack *u)
{
	if (r->nr_py > PY_MAX_FRAMES)
		return 0;
	return emit_record_parse(r, size, OFFCPU_SAMPLE_SIZE(0), r->nr_kernel, r->nr_user,
				 r->nr_py * sizeof(struct py_frame),
				 r->flags & PROFILE_SAMPLE_USTACK, u);
}

/* The layout checks of offcpu_record_ok(), whatever the record's kind. */
static bool record_shape_ok(const void *data, size_t size)
{
	struct emit_ustack u;

	return size >= OFFCPU_SAMPLE_SIZE(0) && record_parse(data, size, &u);
}

bool offcpu_record_of(const void *data, size_t size, uint32_t sample_kind,
		      uint32_t describe_kind)
{
	const struct offcpu_sample *r = data;

	if (size < OFFCPU_SAMPLE_SIZE(0))
		return false;
	if (r->hdr.kind != sample_kind && r->hdr.kind != describe_kind)
		return false;
	return record_shape_ok(data, size);
}

bool offcpu_record_ok(const void *data, size_t size)
{
	return offcpu_record_of(data, size, OFFCPU_KIND_SAMPLE, OFFCPU_KIND_DESCRIBE);
}

int offcpu_emit(struct perfdata_writer *w, struct task_tracker *t, const struct offcpu_emit_ctx *c,
		void *rec, size_t size, const char *raw, uint32_t raw_size, bool describe_only)
{
	const struct offcpu_sample *r = rec;
	const uint64_t *frames = (const uint64_t *)r->frames;
	size_t skip = offcpu_trampoline_frames(frames, r->nr_kernel, c->sched_start,
					       c->sched_end);
	/* A task switches out in the kernel: the chain starts in __schedule. */
	struct emit_sample e = {
		.pid = r->hdr.pid, .tid = r->hdr.tid, .cpu = r->hdr.cpu,
		.time = r->hdr.time, .period = r->period, .id = c->id,
		.comm = r->comm, .comm_len = sizeof(r->comm),
		.chain = {
			.kernel_mode = r->nr_kernel > skip,
			.ip = r->nr_kernel > skip ? frames[skip] : r->nr_user ? frames[r->nr_kernel] : 0,
			.kernel = frames + skip,
			.nr_kernel = r->nr_kernel - skip,
			.user = frames + r->nr_kernel,
			.nr_user = r->nr_user,
		},
		.raw = raw,
		.raw_size = raw_size,
	};

	/* record_shape_ok() checked the block, and the Python frames after the native ones. */
	record_parse(r, size, &e.ustack);
	if (c->attr->sample_type & PERF_SAMPLE_STACK_USER)
		e.ustack.present = true;
	if (r->nr_py && c->py_session) {
		struct py_frame *py;
		size_t nr_py = offcpu_core_py_frames(rec, &py);

		return session_emit_python(c->py_session, &e, py, nr_py, describe_only);
	}
	return emit_sample(w, t, &e, describe_only);
}

static int offcpu_write(void *tr, struct perfdata_writer *w, struct task_tracker *t, void *rec,
			size_t size)
{
	struct offcpu_tracer *o = tr;
	const struct offcpu_sample *r = rec;
	char state[OFFCPU_STATE_TEXT_MAX];
	uint32_t raw_size = (uint32_t)offcpu_state_text(r->state, state, sizeof(state));
	bool describe_only = r->hdr.kind == OFFCPU_KIND_DESCRIBE;
	int err;

	err = offcpu_emit(w, t, &o->core.emit, rec, size, state, raw_size, describe_only);
	if (!err && !describe_only)
		o->written += r->count;
	return err;
}

static void offcpu_stats(const void *t, struct record_status *st)
{
	const struct offcpu_tracer *o = t;

	st->offcpu = (struct bpfrec_offcpu_stats){
		.sz = sizeof(st->offcpu),
		.enabled = true,
		.blocked = offcpu_core_stat(&o->core, OFFCPU_STAT_BLOCKED),
		.written = o->written,
		.lost = offcpu_core_stat(&o->core, OFFCPU_STAT_LOST),
		.unpaired = offcpu_core_stat(&o->core, OFFCPU_STAT_UNPAIRED),
	};
	st->rec.lost += o->core.lost;
}

/*
 * Every aggregate of a map of our layout's sums into the batch as a record
 * of kind (and empty the map), stamped max(its last switch-in, min_time).
 * Call after detaching.
 */
static int collect_map(struct bpf_map *map, uint32_t kind, struct batch *b, uint64_t min_time)
{
	struct offcpu_agg_key key, next;
	struct offcpu_sample *v;
	bool first = true;
	int err = 0;

	v = malloc(sizeof(*v));
	if (!v)
		return -ENOMEM;
	/* Read them all, then empty the map: deleting while walking restarts walks. */
	while (!bpf_map__get_next_key(map, first ? NULL : &key, &next, sizeof(next))) {
		size_t size;
		void *p;

		first = false;
		key = next;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), v, sizeof(*v), 0))
			continue;
		v->hdr.kind = kind;
		if (v->hdr.time < min_time)
			v->hdr.time = min_time;
		if (!record_shape_ok(v, sizeof(*v)))
			continue;
		size = OFFCPU_SAMPLE_SIZE(OFFCPU_SAMPLE_WORDS(v));
		p = batch_add(b, v->hdr.time, size);
		if (!p) {
			err = -ENOMEM;
			break;
		}
		memcpy(p, v, size);
	}
	free(v);
	return err;
}

/* How many of maps (OFFCPU_CORE_MAX_MAPS at most) come before the first NULL. */
static size_t nr_maps(struct bpf_map *const *maps)
{
	size_t n = 0;

	while (n < OFFCPU_CORE_MAX_MAPS && maps[n])
		n++;
	return n;
}

int offcpu_core_load(struct offcpu_core *c, struct record_session *s,
		     const struct record_tracer_env *env, const struct record_tracer_shared *m,
		     struct bpf_object_skeleton *skel)
{
	int err = 0;

	c->emit = (struct offcpu_emit_ctx){
		.id = c->desc->id_base + s->event_id,
		.attr = &c->attr,
		/* Without it the chains keep the tracer's frames on top: still readable. */
		.sched_start = s->ktext.sched_start,
		.sched_end = s->ktext.sched_end,
		.py_session = s->py ? s : NULL,
	};
	/* Without a threshold nothing is aggregated: keep the map minimal. */
	if (!c->thresh_ns)
		err = bpf_map__set_max_entries(c->aggs, 1);
	c->compat = tracer_build_compat(&s->kfeatures);
	if (!err)
		err = tracer_build_choose(c->compat, c->progs, c->nr_progs, c->current_maps,
					  nr_maps(c->current_maps), c->compat_maps,
					  nr_maps(c->compat_maps));
	if (!err)
		err = record_tracer_load(env, m, skel);
	return err;
}

uint64_t offcpu_core_stat(const struct offcpu_core *c, uint32_t key)
{
	return percpu_count(c->stats, key);
}

const struct bpf_object *offcpu_core_object(const void *t)
{
	const struct offcpu_core *c = t;

	return c->obj;
}

int offcpu_core_add_events(void *t, struct perfdata_writer *w)
{
	struct offcpu_core *c = t;

	return perfdata_writer_add_event(w, c->desc->event, &c->attr, &c->emit.id, 1);
}

int offcpu_core_attach(struct record_session *s, void *t)
{
	struct offcpu_core *c = t;

	(void)s;
	return tracer_build_attach(c->compat, c->progs, c->nr_progs, c->links);
}

void offcpu_core_detach(void *t)
{
	struct offcpu_core *c = t;

	tracer_build_detach(c->links, c->nr_progs);
}

int offcpu_core_write_lost(void *t, struct perfdata_writer *w, uint64_t time)
{
	struct offcpu_core *c = t;

	return emit_lost(w, c->emit.id, offcpu_core_stat(c, c->desc->lost_stat), &c->lost, time);
}

int offcpu_core_collect(void *t, struct batch *b, uint64_t min_time)
{
	struct offcpu_core *c = t;

	return collect_map(c->aggs, c->desc->kind, b, min_time);
}

size_t offcpu_core_py_frames(void *rec, struct py_frame **py)
{
	struct offcpu_sample *r = rec;

	*py = (struct py_frame *)((uint64_t *)r->frames + r->nr_kernel + r->nr_user);
	return r->nr_py;
}

uint64_t offcpu_core_py_cut(const void *t)
{
	const struct offcpu_core *c = t;

	return offcpu_core_stat(c, c->desc->py_cut_stat);
}

const struct record_tracer_ops offcpu_tracer = {
	.option = "--off-cpu",
	.what = "the off-CPU tracer",
	OFFCPU_CORE_OPS,
	.wanted = offcpu_wanted,
	.open = offcpu_open,
	.record_ok = offcpu_record_ok,
	.write = offcpu_write,
	.stats = offcpu_stats,
	.free = offcpu_free,
};
