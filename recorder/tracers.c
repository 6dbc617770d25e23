// SPDX-License-Identifier: MIT
/*
 * tracers.c - which tracers there are (tracer.h), the load every tracer's
 * open() shares (record_tracer_load()), and the session's side of them:
 * each step of the recording calls those it holds (s->tracers) in their
 * order here (contract in session_int.h).
 */
#include <errno.h>
#include <malloc.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "recorder/loadlog.h"
#include "recorder/privs.h"
#include "recorder/session_int.h"
#include "recorder/tracer.h"
#include "recorder/pyframes.h"
#include "recorder/unwind_bpf.h"

/*
 * Every tracer, one line each, in the order they load, attach, add their
 * events to a file's header and write at each step.
 */
#define RECORD_TRACERS(X)	\
	X(offcpu_tracer)	\
	X(alloc_tracer)		\
	X(sched_tracer)

#define DECLARE_TRACER(name)	extern const struct record_tracer_ops name;
#define LIST_TRACER(name)	&name,
RECORD_TRACERS(DECLARE_TRACER)
static const struct record_tracer_ops *const registered[] = { RECORD_TRACERS(LIST_TRACER) };
#define NR_REGISTERED	(sizeof(registered) / sizeof(registered[0]))
_Static_assert(NR_REGISTERED <= RECORD_TRACERS_MAX, "raise RECORD_TRACERS_MAX");

const struct record_tracer_ops *record_tracer_registered(size_t i)
{
	return i < NR_REGISTERED ? registered[i] : NULL;
}

bool record_tracers_wanted(const struct record_opts *opts)
{
	for (size_t i = 0; i < NR_REGISTERED; i++)
		if (registered[i]->wanted(opts))
			return true;
	return false;
}

/* The maps of m reuse the source's fds (tracer.h). */
static int share_maps(const struct record_tracer_env *env, const struct record_tracer_shared *m)
{
	int err = bpf_map__reuse_fd(m->events, env->events_fd);

	if (!err)
		err = bpf_map__reuse_fd(m->target_tgids, env->target_tgids_fd);
	if (!err)
		err = bpf_map__reuse_fd(m->target_tids, env->target_tids_fd);
	if (!err)
		err = unwind_bpf_share_maps(m->unwind_rows, m->unwind_procs, m->unwind_stops,
					    m->unwind_stats, env->unwind_cfi, env->unwind_rows_fd,
					    env->unwind_procs_fd, env->unwind_stops_fd,
					    env->unwind_stats_fd);
	/* Without Python frames the walk is dead code: its map stays minimal. */
	if (!err && env->py_procs_fd >= 0)
		err = bpf_map__reuse_fd(m->py_procs, env->py_procs_fd);
	else if (!err)
		err = bpf_map__set_max_entries(m->py_procs, 1);
	return err;
}

int record_tracer_load(const struct record_tracer_env *env, const struct record_tracer_shared *m,
		       struct bpf_object_skeleton *skel)
{
	struct bpf_object *obj = *skel->obj;
	int err = share_maps(env, m);

	if (err)
		return err;
	*m->filter_mode = env->filter_mode;
	*m->wakeup_bytes = env->ring_bytes / 2;
	*m->unwind_cfi = env->unwind_cfi;
	*m->python_frames = env->py_procs_fd >= 0;
	load_log_attach(env->load_log, obj);
	err = bpf_object__load_skeleton(skel);
	if (err)
		load_log_failed(env->load_log, obj);
	/* The load's parse of the kernel's BTF, freed: back before more is mapped (sampler.c). */
	malloc_trim(0);
	return err;
}

void session_add_tracer(struct record_session *s, const struct record_tracer_ops *ops, void *t)
{
	s->tracers[s->nr_tracers++] = (struct record_tracer){ .ops = ops, .t = t };
}

void *session_tracer(const struct record_session *s, const struct record_tracer_ops *ops)
{
	for (size_t i = 0; i < s->nr_tracers; i++)
		if (s->tracers[i].ops == ops)
			return s->tracers[i].t;
	return NULL;
}

const struct record_tracer *session_tracer_of(const struct record_session *s, const void *rec,
					      size_t size)
{
	for (size_t i = 0; i < s->nr_tracers; i++) {
		const struct record_tracer *tr = &s->tracers[i];

		if (tr->ops->record_ok && tr->ops->record_ok(rec, size))
			return tr;
	}
	return NULL;
}

void session_tracker_hooks(const struct record_session *s,
			   const struct task_tracker_hooks **hooks, void **ctx)
{
	/* Each tracer's hooks pass calls on to those before it, the first to the unwinder's. */
	*hooks = s->unwind ? &unwind_bpf_hooks : NULL;
	*ctx = s->unwind;
	/* Python frames look at each mapping first: a runtime found is in BPF before its walk. */
	if (s->py) {
		py_frames_set_next(s->py, *hooks, *ctx);
		*hooks = &py_frames_hooks;
		*ctx = s->py;
	}
	for (size_t i = 0; i < s->nr_tracers; i++) {
		if (s->tracers[i].ops->hooks) {
			*hooks = s->tracers[i].ops->hooks;
			*ctx = s->tracers[i].t;
		}
	}
}

int session_tracers_command_env(struct record_session *s)
{
	size_t nr = 0;

	for (size_t i = 0; i < s->nr_tracers; i++) {
		const struct record_tracer *tr = &s->tracers[i];
		char *const *env = tr->ops->command_env ? tr->ops->command_env(s, tr->t) : NULL;

		for (size_t j = 0; env && env[j]; j++) {
			if (nr == RECORD_CMD_ENV_MAX)
				return session_fail(s, -E2BIG, "the tracers set more than %d "
						    "environment variables", RECORD_CMD_ENV_MAX);
			s->cmd_env[nr++] = env[j];
		}
	}
	s->cmd_env[nr] = NULL;
	return 0;
}

int session_tracers_add_events(struct record_session *s)
{
	int err = 0;

	for (size_t i = 0; i < s->nr_tracers && !err; i++)
		err = s->tracers[i].ops->add_events(s->tracers[i].t, s->w);
	return err;
}

int session_tracers_attach(struct record_session *s)
{
	for (size_t i = 0; i < s->nr_tracers; i++) {
		const struct record_tracer *tr = &s->tracers[i];
		int err = tr->ops->attach(s, tr->t);

		if (privs_is_denial(err))
			return session_priv_fail(s, PRIV_STEP_BPF, err, tr->ops->option);
		if (err)
			return session_fail(s, err, "cannot attach %s: %s", tr->ops->what,
					    strerror(-err));
	}
	return 0;
}

void session_tracers_detach(struct record_session *s)
{
	for (size_t i = 0; i < s->nr_tracers; i++)
		s->tracers[i].ops->detach(s->tracers[i].t);
}

void session_tracers_free(struct record_session *s)
{
	for (size_t i = 0; i < s->nr_tracers; i++)
		s->tracers[i].ops->free(s->tracers[i].t);
	s->nr_tracers = 0;
}

int session_tracers_poll_fds(const struct record_session *s, int *fds, size_t max)
{
	size_t nr = 0;

	for (size_t i = 0; i < s->nr_tracers && nr < max; i++)
		if (s->tracers[i].ops->poll_fd)
			fds[nr++] = s->tracers[i].ops->poll_fd(s->tracers[i].t);
	return (int)nr;
}

int session_tracers_consume(struct record_session *s)
{
	int err = 0;

	for (size_t i = 0; i < s->nr_tracers && !err; i++)
		if (s->tracers[i].ops->consume)
			err = s->tracers[i].ops->consume(s->tracers[i].t);
	return err;
}

int session_tracers_round(struct record_session *s, uint64_t upto, bool *wrote)
{
	int err = 0;

	/* Their own batches first, then every loss: what was lost comes after what came. */
	for (size_t i = 0; i < s->nr_tracers && !err; i++)
		if (s->tracers[i].ops->flush)
			err = s->tracers[i].ops->flush(s->tracers[i].t, s->w, s->tracker, upto,
						       &s->last_time);
	for (size_t i = 0; i < s->nr_tracers && !err; i++) {
		if (!s->tracers[i].ops->write_lost)
			continue;
		err = s->tracers[i].ops->write_lost(s->tracers[i].t, s->w, s->last_time);
		*wrote |= err > 0;
		err = err > 0 ? 0 : err;
	}
	return err;
}

int session_tracers_file_end(struct record_session *s, bool last)
{
	int err = 0;

	for (size_t i = 0; i < s->nr_tracers && !err; i++)
		if (s->tracers[i].ops->file_end)
			err = s->tracers[i].ops->file_end(s, s->tracers[i].t, last);
	return err;
}

uint64_t session_tracers_py_cut(const struct record_session *s)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->nr_tracers; i++)
		if (s->tracers[i].ops->py_cut)
			n += s->tracers[i].ops->py_cut(s->tracers[i].t);
	return n;
}

void session_tracers_stats(const struct record_session *s, struct record_status *st)
{
	for (size_t i = 0; i < s->nr_tracers; i++)
		if (s->tracers[i].ops->stats)
			s->tracers[i].ops->stats(s->tracers[i].t, st);
}
