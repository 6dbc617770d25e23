// SPDX-License-Identifier: MIT
/* sched.c - the run-queue tracer and its event (contract in sched.h). */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "perfdata/schedstats.h"
#include "recorder/emit.h"
#include "recorder/offcpu.h"
#include "recorder/sched.h"
#include "recorder/session_int.h"
#include "recorder/tracer.h"

#include "bpf/sched.h"
#include "sched.skel.h"

/* The BPF struct and the public one count the same things in the same order. */
_Static_assert((int)SCHED_SW_MAX == (int)BPFREC_SCHED_NR_SWITCH, "switch reasons");
_Static_assert((int)SCHED_SW_PREEMPTED == (int)BPFREC_SCHED_PREEMPTED &&
	       (int)SCHED_SW_SLEEP == (int)BPFREC_SCHED_SLEEP &&
	       (int)SCHED_SW_IO == (int)BPFREC_SCHED_IO &&
	       (int)SCHED_SW_EXIT == (int)BPFREC_SCHED_EXIT, "switch reasons");
_Static_assert(SCHED_HIST_SLOTS == BPFREC_SCHED_HIST_SLOTS, "histogram slots");

/*
 * Our event's id: far above the kernel's ids, and apart from offcpu-time's
 * (1 << 48) and alloc's and inuse's (2 and 3 << 48), which may share a file.
 */
#define SCHED_ID_BASE	(4ull << 48)

struct sched_tracer {
	struct offcpu_core core;	/* first: the shared ops take the state as one */
	struct sched *skel;
};
_Static_assert(offsetof(struct sched_tracer, core) == 0, "the core first");

static const struct offcpu_core_desc sched_desc = {
	.event = SCHED_EVENT_NAME,
	.id_base = SCHED_ID_BASE,
	.kind = SCHED_KIND_SAMPLE,
	.lost_stat = SCHED_STAT_LOST,
	.py_cut_stat = SCHED_STAT_PY_CUT,
};

size_t sched_reason_text(uint32_t reason, char *buf, size_t size)
{
	return offcpu_pad_text(reason == SCHED_WAIT_PREEMPTED ? "preempted" : "woken", buf, size);
}

void sched_build_attr(const struct perf_event_attr *cpu_attr, struct perf_event_attr *out)
{
	struct perf_event_attr cpu = *cpu_attr;

	/* No user-stack copies: the waits carry walked callchains only. */
	cpu.sample_type &= ~(uint64_t)(PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
	offcpu_build_attr(&cpu, out);
}

static void sched_free(void *t);

static bool sched_wanted(const struct record_opts *opts)
{
	return opts->sched;
}

static int sched_open(struct record_session *s, const struct record_tracer_env *env, void **out)
{
	struct sched_tracer *t = calloc(1, sizeof(*t));
	struct sched *skel;
	int err;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	skel = sched__open();
	if (!skel) {
		err = errno ? -errno : -EINVAL;
		goto fail;
	}
	t->skel = skel;
	skel->rodata->thresh_ns = s->opts.sched_thresh_ns;
	t->core = (struct offcpu_core){
		.desc = &sched_desc,
		.obj = skel->obj,
		.stats = skel->maps.sched_stats,
		.aggs = skel->maps.aggs,
		.thresh_ns = s->opts.sched_thresh_ns,
		/* Wakeups first: a wait that starts as the switch program attaches is not missed. */
		.progs = {
			{ skel->progs.sched_on_wakeup, skel->progs.sched_on_wakeup_compat },
			{ skel->progs.sched_on_wakeup_new, skel->progs.sched_on_wakeup_new_compat },
			{ skel->progs.sched_on_switch, skel->progs.sched_on_switch_compat },
		},
		.nr_progs = 3,
		.current_maps = { skel->maps.sched_tasks },
		.compat_maps = { skel->maps.sched_tasks_by_tid },
	};
	sched_build_attr(&s->attr, &t->core.attr);
	err = OFFCPU_CORE_LOAD(&t->core, s, env, skel);
	if (err)
		goto fail;
	*out = t;
	return 0;
fail:
	sched_free(t);
	return err;
}

static void sched_free(void *tr)
{
	struct sched_tracer *t = tr;

	if (!t)
		return;
	offcpu_core_detach(&t->core);
	sched__destroy(t->skel);
	free(t);
}

/* True when a ring-buffer record is one of ours and well-formed. */
static bool sched_record_ok(const void *data, size_t size)
{
	const struct offcpu_sample *r = data;

	/* Never a user-stack copy: the tracer sends none. */
	return offcpu_record_of(data, size, SCHED_KIND_SAMPLE, SCHED_KIND_DESCRIBE) &&
	       !(r->flags & PROFILE_SAMPLE_USTACK);
}

static int sched_write(void *tr, struct perfdata_writer *w, struct task_tracker *tt, void *rec,
		       size_t size)
{
	struct sched_tracer *t = tr;
	const struct offcpu_sample *r = rec;
	char reason[OFFCPU_STATE_TEXT_MAX];
	uint32_t raw_size = (uint32_t)sched_reason_text(r->state, reason, sizeof(reason));

	return offcpu_emit(w, tt, &t->core.emit, rec, size, reason, raw_size,
			   r->hdr.kind == SCHED_KIND_DESCRIBE);
}

static void sched_stats(const void *tr, struct record_status *st)
{
	const struct sched_tracer *t = tr;

	st->rec.lost += t->core.lost;
}

static void to_public(const struct sched_thread *in, struct bpfrec_sched_thread *out)
{
	memset(out, 0, sizeof(*out));
	out->pid = in->pid;
	out->tid = in->tid;
	memcpy(out->comm, in->comm, sizeof(out->comm) - 1);
	out->oncpu_ns = in->oncpu_ns;
	out->runq_count = in->runq_count;
	out->runq_total_ns = in->runq_total_ns;
	out->runq_max_ns = in->runq_max_ns;
	memcpy(out->switches, in->switches, sizeof(out->switches));
	memcpy(out->hist, in->hist, sizeof(out->hist));
}

int sched_read_metrics(struct sched_tracer *t, struct bpfrec_sched_metrics **out)
{
	struct bpf_map *map = t->skel->maps.sched_threads;
	struct bpfrec_sched_metrics *m = perfdata_sched_metrics_new();
	uint32_t key = 0, next;
	bool first = true;

	*out = NULL;
	if (!m)
		return -ENOMEM;
	/*
	 * A thread that exits while we walk may end the walk early (its key
	 * is gone): what was read stays right, the rest is read next time.
	 */
	while (!bpf_map__get_next_key(map, first ? NULL : &key, &next, sizeof(next))) {
		struct bpfrec_sched_thread pub;
		struct sched_thread v;

		first = false;
		key = next;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), &v, sizeof(v), 0))
			continue;
		to_public(&v, &pub);
		if (perfdata_sched_metrics_put(m, &pub)) {
			bpfrec_sched_metrics_free(m);
			return -ENOMEM;
		}
	}
	perfdata_sched_metrics_sort(m);
	*out = m;
	return 0;
}

/* The metrics, untimed, after the recording's last round; a warning for switches they missed. */
static int sched_file_end(struct record_session *s, void *tr, bool last)
{
	struct sched_tracer *t = tr;
	struct bpfrec_sched_metrics *m;
	uint64_t dropped;
	int err;

	if (!last)
		return 0;
	err = sched_read_metrics(t, &m);
	if (err)
		return err;
	err = emit_sched_metrics(s->w, m);
	bpfrec_sched_metrics_free(m);
	dropped = offcpu_core_stat(&t->core, SCHED_STAT_NO_THREAD);
	if (!err && dropped)
		session_warn(s, "%" PRIu64 " switches were not counted in the scheduler metrics: "
			     "more threads ran than its map holds (their waits are still "
			     "sched-delay samples)", dropped);
	return err;
}

const struct record_tracer_ops sched_tracer = {
	.option = "--sched",
	.what = "the run-queue tracer",
	OFFCPU_CORE_OPS,
	.wanted = sched_wanted,
	.open = sched_open,
	.record_ok = sched_record_ok,
	.write = sched_write,
	.file_end = sched_file_end,
	.stats = sched_stats,
	.free = sched_free,
};
