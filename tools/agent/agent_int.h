/* SPDX-License-Identifier: MIT */
/*
 * agent_int.h - the agent handle, shared by its three parts; internal.
 *
 *   agent.c   the public API and the recording thread: cuts windows and
 *             queues their files
 *   worker.c  the worker thread: takes windows off the queue, has them
 *             encoded, delivers requests, spools and replays
 *   window.c  one window's perf.data -> requests of gzipped profiles
 *
 * Locking: `lock` guards the queue, the stats and `stopping`; the worker
 * holds it only to take or count, never across conversion or I/O.
 */
#ifndef TOOLS_AGENT_AGENT_INT_H
#define TOOLS_AGENT_AGENT_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "tools/agent/bpfrec_agent.h"
#include "tools/pprof/bpfrec_pprof.h"
#include "tools/agent/request.h"
#include "symbolize/buildid.h"

struct agent_http;
struct agent_spool;
struct agent_services;

/* A build-id filed into the build-id cache (a Python symbol file grown, a binary copied). */
struct agent_filed {
	uint8_t size;
	uint8_t id[BUILDID_MAX];
};

/* Filings kept between two windows; past it the symbol tables are renewed instead. */
#define AGENT_FILED_MAX	4096

struct bpfrec_agent {
	struct bpfrec_agent_opts opts;
	struct bpfrec_record_opts ropts;	/* the recording's, with our output */
	char *server_url, *spool_dir, *work_dir, *output;
	struct agent_label *labels;		/* opts.labels split at '=' (user's first) */
	char **label_bufs;
	size_t nr_labels;
	bool has_service_label, has_hostname_label;	/* the user's replace ours */
	char hostname[256];
	int wake_fd;				/* eventfd: stop requested */

	pthread_mutex_t lock;
	pthread_cond_t cond;			/* queue grew, or stopping */
	char *queue[BPFREC_AGENT_MAX_PENDING];	/* window files, oldest first */
	size_t nr_queued;
	bool stopping;				/* the recording has ended */
	/*
	 * Build-ids the recording filed into the build-id cache since the
	 * worker last took them (on_filed): the symbol tables check those
	 * files again, and only those (window.c). filed_lost: one did not
	 * fit (AGENT_FILED_MAX, or no memory): the tables are renewed.
	 */
	struct agent_filed *filed;
	size_t nr_filed, cap_filed;
	bool filed_lost;
	struct bpfrec_agent_stats st;

	/* The worker's own. */
	struct agent_http *http;
	struct agent_spool *spool;
	struct agent_services *services;
	unsigned int attempt;			/* failed attempts in a row */
	uint64_t next_try_ns;			/* no delivery before this (backoff) */
	uint64_t rng;
	bool spool_full_said;			/* the disk-full warning was given */
	/* Symbol tables kept across windows and a copy of /proc/kallsyms (window.c). */
	char ksyms[PATH_MAX + 16];
	bool ksyms_taken;			/* ksyms holds a copy */
	struct bpfrec_pprof_symbols *symbols;
	uint64_t symbols_made_ns;

	int failure_code;
	char err[512];
};

/* The worker thread's body (worker.c). */
void *agent_worker_main(void *agent);
/* Deliver one finished request (worker thread): push, spool, split or drop. */
void agent_deliver(struct bpfrec_agent *a, struct push_request *req, size_t nr_series,
		   uint64_t samples);
/* Turn one window's file into requests and deliver them (window.c). 0 or -errno. */
int agent_convert_window(struct bpfrec_agent *a, const char *path);

/* Count under the lock: AGENT_COUNT(a, field, n). */
#define AGENT_COUNT(a, field, n)                       \
	do {                                           \
		pthread_mutex_lock(&(a)->lock);        \
		(a)->st.field += (n);                  \
		pthread_mutex_unlock(&(a)->lock);      \
	} while (0)

void agent_log(struct bpfrec_agent *a, enum bpfrec_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* TOOLS_AGENT_AGENT_INT_H */
