// SPDX-License-Identifier: MIT
/*
 * worker.c - the agent's worker thread: windows off the queue, requests to
 * the server, the spool and its replay.
 *
 * One attempt at a time, so backoff is one state: after a failure worth
 * retrying, nothing is tried before next_try_ns; requests made meanwhile
 * go straight to the spool, and the spool is replayed, oldest first, once
 * that time has come. A success clears the backoff. At the end (stopping,
 * queue empty) the worker still delivers what it holds: pushed if the
 * server answers, spooled if not, so that a restart replays it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/agent/agent_int.h"
#include "tools/agent/http.h"
#include "tools/agent/spool.h"
#include "tools/lib/clock.h"

void agent_log(struct bpfrec_agent *a, enum bpfrec_log_level level, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	if (!a->opts.log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	a->opts.log(a->opts.log_ctx, level, msg);
}

/* The spool's own counts, copied where bpfrec_agent_get_stats() reads them. */
static void sync_spool_stats(struct bpfrec_agent *a)
{
	struct agent_spool_stats ss = { 0 };

	if (!a->spool)
		return;
	agent_spool_stats(a->spool, &ss);
	pthread_mutex_lock(&a->lock);
	a->st.spool_entries = ss.entries;
	a->st.spool_bytes = ss.bytes;
	a->st.spool_evicted = ss.evicted;
	a->st.spool_full = ss.full;
	a->st.spool_corrupt = ss.corrupt;
	pthread_mutex_unlock(&a->lock);
}

/* One attempt, through the caller's send or HTTP; counts it and sets the backoff. */
static enum bpfrec_agent_outcome attempt(struct bpfrec_agent *a, struct bpfrec_agent_request *r)
{
	uint64_t retry_after_ms = 0;
	char msg[256] = "";

	if (a->opts.send) {
		r->outcome = a->opts.send(a->opts.send_ctx, r, msg, sizeof(msg));
		if ((unsigned int)r->outcome > BPFREC_AGENT_TOO_LARGE)
			r->outcome = BPFREC_AGENT_REJECTED;
	} else {
		struct push_result res = { 0 };
		int err = agent_http_post(a->http, (enum agent_api)r->api, r->body, r->len, &res);

		if (err) {
			r->outcome = BPFREC_AGENT_RETRY;
			snprintf(msg, sizeof(msg), "%s", strerror(-err));
		} else {
			r->outcome = res.outcome == PUSH_OK ? BPFREC_AGENT_PUSHED :
				     res.outcome == PUSH_RETRY ? BPFREC_AGENT_RETRY :
				     res.outcome == PUSH_TOO_LARGE ? BPFREC_AGENT_TOO_LARGE :
				     BPFREC_AGENT_REJECTED;
			r->http_status = res.http_status;
			retry_after_ms = res.retry_after_ms;
			snprintf(msg, sizeof(msg), "%s", res.message);
		}
	}
	r->message = msg;

	pthread_mutex_lock(&a->lock);
	if (r->outcome == BPFREC_AGENT_PUSHED) {
		a->st.pushed++;
		a->st.pushed_bytes += r->len;
		a->st.replayed += r->replay;
	} else if (r->outcome == BPFREC_AGENT_RETRY) {
		a->st.attempts_failed++;
	}
	pthread_mutex_unlock(&a->lock);

	if (r->outcome == BPFREC_AGENT_RETRY) {
		uint64_t ms = agent_backoff_ms(a->attempt, retry_after_ms, &a->rng);

		/* Said once per outage, not once per attempt. */
		if (!a->attempt++)
			agent_log(a, BPFREC_LOG_WARN, "push failed (%s): spooling and retrying "
				  "with backoff", msg[0] ? msg : "no answer");
		a->next_try_ns = mono_ns() + ms * 1000000ull;
	} else {
		if (a->attempt)
			agent_log(a, BPFREC_LOG_INFO, "the server answers again after %u failed "
				  "attempts", a->attempt);
		a->attempt = 0;
		a->next_try_ns = 0;
		if (r->outcome == BPFREC_AGENT_REJECTED)
			agent_log(a, BPFREC_LOG_WARN, "request of %zu bytes rejected (HTTP %ld): "
				  "%s; dropped", r->len, r->http_status, msg[0] ? msg : "no reason given");
	}
	if (a->opts.on_push)
		a->opts.on_push(a->opts.on_push_ctx, r);
	r->message = NULL;
	return r->outcome;
}

static bool backing_off(const struct bpfrec_agent *a)
{
	return a->next_try_ns && mono_ns() < a->next_try_ns;
}

/* Keep a request for later, or count it dropped when there is nowhere to keep it. */
static void spool_or_drop(struct bpfrec_agent *a, enum bpfrec_agent_api api, const void *body,
			  size_t len)
{
	int err = a->spool ? agent_spool_put(a->spool, (enum agent_api)api, body, len) : -ENOENT;

	if (!err) {
		AGENT_COUNT(a, spooled, 1);
	} else if (err == -ENOSPC) {
		/* Counted by the spool itself (spool_full); said once per run. */
		if (!a->spool_full_said)
			agent_log(a, BPFREC_LOG_WARN, "no room on the spool's disk: requests the "
				  "server cannot take are dropped (counted) until there is");
		a->spool_full_said = true;
	} else {
		AGENT_COUNT(a, dropped_no_spool, 1);
		if (a->spool)
			agent_log(a, BPFREC_LOG_WARN, "request of %zu bytes not spooled: %s; dropped",
				  len, strerror(-err));
	}
	sync_spool_stats(a);
}

void agent_deliver(struct bpfrec_agent *a, struct push_request *req, size_t nr_series,
		   uint64_t samples)
{
	struct bpfrec_agent_request r = {
		.sz = sizeof(r), .api = a->opts.api, .nr_series = nr_series, .samples = samples,
	};
	int err;

	AGENT_COUNT(a, requests, 1);
	err = push_request_finish(req, &r.body, &r.len);
	if (err) {
		agent_log(a, BPFREC_LOG_WARN, "request not finished: %s; dropped", strerror(-err));
		AGENT_COUNT(a, dropped_no_spool, 1);
		push_request_free(req);
		return;
	}
	/* The server is out: do not wait for it again, keep the request. */
	if (backing_off(a)) {
		spool_or_drop(a, r.api, r.body, r.len);
		push_request_free(req);
		return;
	}
	switch (attempt(a, &r)) {
	case BPFREC_AGENT_PUSHED:
		break;
	case BPFREC_AGENT_RETRY:
		spool_or_drop(a, r.api, r.body, r.len);
		break;
	case BPFREC_AGENT_REJECTED:
		AGENT_COUNT(a, dropped_rejected, 1);
		break;
	case BPFREC_AGENT_TOO_LARGE: {
		struct push_request *h1 = NULL, *h2 = NULL;

		/* Halves, each delivered (and split again) on its own. */
		if (nr_series > 1 && !push_request_split(req, &h1, &h2)) {
			size_t n1 = push_request_nr_series(h1);

			agent_log(a, BPFREC_LOG_INFO, "request of %zu bytes too large for the "
				  "server: split in two", r.len);
			/* The halves count instead. */
			pthread_mutex_lock(&a->lock);
			a->st.requests--;
			pthread_mutex_unlock(&a->lock);
			agent_deliver(a, h1, n1, 0);
			agent_deliver(a, h2, nr_series - n1, 0);
		} else {
			push_request_free(h1);
			push_request_free(h2);
			agent_log(a, BPFREC_LOG_WARN, "a profile of %zu bytes is over the server's "
				  "request limit; dropped", r.len);
			AGENT_COUNT(a, dropped_too_large, 1);
		}
		break;
	}
	}
	push_request_free(req);
}

/* Replay the spool, oldest first, while the server takes it. */
static void replay_spool(struct bpfrec_agent *a)
{
	while (a->spool && !backing_off(a)) {
		struct bpfrec_agent_request r = { .sz = sizeof(r), .replay = true };
		enum agent_api api;
		void *body;
		int err = agent_spool_peek(a->spool, &api, &body, &r.len);

		if (err)
			break;
		r.api = (enum bpfrec_agent_api)api;
		r.body = body;
		switch (attempt(a, &r)) {
		case BPFREC_AGENT_RETRY:
			free(body);
			sync_spool_stats(a);
			return;
		case BPFREC_AGENT_REJECTED:
			AGENT_COUNT(a, dropped_rejected, 1);
			break;
		case BPFREC_AGENT_TOO_LARGE:
			/* A spooled body is no longer in series: it cannot be split. */
			AGENT_COUNT(a, dropped_too_large, 1);
			break;
		case BPFREC_AGENT_PUSHED:
			break;
		}
		free(body);
		agent_spool_pop(a->spool);
		sync_spool_stats(a);
	}
}

static bool spool_waiting(struct bpfrec_agent *a)
{
	bool waiting;

	/* The worker alone touches the spool; the lock only guards the copy of its stats. */
	waiting = a->spool && a->st.spool_entries;
	return waiting;
}

void *agent_worker_main(void *arg)
{
	struct bpfrec_agent *a = arg;

	sync_spool_stats(a);
	pthread_mutex_lock(&a->lock);
	for (;;) {
		char *path = NULL;
		bool done;

		while (!a->nr_queued && !a->stopping) {
			uint64_t now = mono_ns();
			struct timespec ts;

			if (spool_waiting(a) && (!a->next_try_ns || now >= a->next_try_ns))
				break;
			if (!spool_waiting(a)) {
				pthread_cond_wait(&a->cond, &a->lock);
				continue;
			}
			ts.tv_sec = (time_t)(a->next_try_ns / 1000000000ull);
			ts.tv_nsec = (long)(a->next_try_ns % 1000000000ull);
			pthread_cond_timedwait(&a->cond, &a->lock, &ts);
		}
		if (a->nr_queued) {
			path = a->queue[0];
			memmove(a->queue, a->queue + 1, --a->nr_queued * sizeof(a->queue[0]));
		}
		done = a->stopping && !a->nr_queued && !path;
		pthread_mutex_unlock(&a->lock);

		if (path) {
			int err = agent_convert_window(a, path);

			AGENT_COUNT(a, windows_converted, !err);
			AGENT_COUNT(a, windows_dropped, !!err);
			unlink(path);
			free(path);
		}
		/* At the end, one more try only when the server is not known to be out. */
		if (!done || !backing_off(a))
			replay_spool(a);
		pthread_mutex_lock(&a->lock);
		if (done)
			break;
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}
