// SPDX-License-Identifier: MIT
/*
 * agent.c - bpfrec/agent.h: the handle and the recording thread.
 *
 * The recording writes perf.data into a private directory with manual
 * --switch-output: every window_ns the thread in bpfrec_agent_run() asks
 * for a switch, and the finished file (named by the rotator) arrives in
 * on_window(), which queues it for the worker. A switch loses no sample:
 * the recorder finishes one file and opens the next between two rounds.
 * When the worker falls behind by BPFREC_AGENT_MAX_PENDING windows, the
 * oldest waiting file is deleted and counted: the recording never waits.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tools/agent/agent_int.h"
#include "tools/agent/curl_dl.h"
#include "tools/agent/http.h"
#include "tools/agent/service.h"
#include "tools/agent/spool.h"
#include "tools/lib/array.h"
#include "tools/lib/clock.h"
#include "tools/lib/errbuf.h"
#include "tools/lib/opts.h"

#define DEFAULT_WINDOW_NS	(15ull * 1000000000ull)
#define DEFAULT_SPOOL_MAX	(256ull << 20)
#define DEFAULT_SYMBOLS_MAX	(64ull << 20)
#define DEFAULT_MAX_REQUEST	((size_t)4 << 20)
#define DEFAULT_TIMEOUT_MS	10000u
#define DEFAULT_FREQ		19

#define fail(a, e, ...) ERRBUF_FAIL(a, e, __VA_ARGS__)

/* "KEY=VALUE" into a label; the key as Prometheus-style label names go. */
static int split_label(struct bpfrec_agent *a, const char *kv, size_t i)
{
	const char *eq = strchr(kv, '=');
	char *buf;

	if (!eq || eq == kv || strspn(kv, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				       "0123456789_.") != (size_t)(eq - kv) ||
	    (kv[0] >= '0' && kv[0] <= '9'))
		return fail(a, -EINVAL, "label '%s': give KEY=VALUE, the key of letters, digits, "
			    "'_' and '.', not starting with a digit", kv);
	/* Names starting with "__" are the servers' own (__name__, __delta__). */
	if (kv[0] == '_' && kv[1] == '_')
		return fail(a, -EINVAL, "label '%s': names starting with '__' are reserved for "
			    "the server", kv);
	/* A repeated name makes the server refuse every request. */
	for (size_t k = 0; k < i; k++)
		if (strlen(a->labels[k].name) == (size_t)(eq - kv) &&
		    !strncmp(a->labels[k].name, kv, eq - kv))
			return fail(a, -EINVAL, "label '%s': '%s' given twice", kv,
				    a->labels[k].name);
	buf = strdup(kv);
	if (!buf)
		return fail(a, -ENOMEM, "out of memory");
	buf[eq - kv] = '\0';
	a->label_bufs[i] = buf;
	a->labels[i] = (struct agent_label){ .name = buf, .value = buf + (eq - kv) + 1 };
	if (!strcmp(buf, "service_name"))
		a->has_service_label = true;
	if (!strcmp(buf, "hostname"))
		a->has_hostname_label = true;
	return 0;
}

static int check_opts(struct bpfrec_agent *a)
{
	if (!a->opts.send && (!a->opts.server_url || !*a->opts.server_url))
		return fail(a, -EINVAL, "no server: give the server's URL (or a send callback)");
	if (a->opts.server_url && strncmp(a->opts.server_url, "http://", 7) &&
	    strncmp(a->opts.server_url, "https://", 8))
		return fail(a, -EINVAL, "server '%s': give an http:// or https:// URL",
			    a->opts.server_url);
	if ((unsigned int)a->opts.api > BPFREC_AGENT_PARCA)
		return fail(a, -EINVAL, "unknown API %d: pyroscope or parca", (int)a->opts.api);
	if (a->opts.window_ns && a->opts.window_ns < 100000000ull)
		return fail(a, -EINVAL, "a window of %llu ms is too short: give at least 100 ms",
			    (unsigned long long)(a->opts.window_ns / 1000000));
	if (a->opts.max_request_bytes && a->opts.max_request_bytes < 4096)
		return fail(a, -EINVAL, "a request limit of %zu bytes is too small: give at least 4K",
			    a->opts.max_request_bytes);
	return 0;
}

/*
 * The caller's recording options, checked on our copy of them: an older
 * caller's struct ends before the fields it does not know, which must not
 * be read from its memory.
 */
static int check_record_opts(struct bpfrec_agent *a)
{
	const struct bpfrec_record_opts *r = &a->ropts;

	if (r->output != BPFREC_OUTPUT_PATH || r->output_path || r->output_fd ||
	    r->output_write || r->switch_output || r->switch_bytes || r->switch_ns ||
	    r->switch_max_files || r->on_switch || r->on_filed)
		return fail(a, -EINVAL, "the recording's output and switch options are the "
			    "agent's own: leave them unset");
	return 0;
}

int bpfrec_agent_new(const struct bpfrec_agent_opts *opts, struct bpfrec_agent **out)
{
	struct bpfrec_agent *a;
	pthread_condattr_t ca;
	int err;

	*out = NULL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	*out = a;
	a->wake_fd = -1;
	a->failure_code = 1;
	pthread_mutex_init(&a->lock, NULL);
	/* Backoff deadlines are CLOCK_MONOTONIC: so is the worker's wait. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a->cond, &ca);
	pthread_condattr_destroy(&ca);
	a->st.sz = sizeof(a->st);

	err = OPTS_COPY(&a->opts, bpfrec_agent_opts, opts);
	if (err)
		return fail(a, err, "options from a newer bpfrec: this library (%zu bytes) does "
			    "not know what they ask for", OPTS_KNOWN(bpfrec_agent_opts));
	err = check_opts(a);
	if (err)
		return err;
	if (!a->opts.window_ns)
		a->opts.window_ns = DEFAULT_WINDOW_NS;
	if (!a->opts.spool_max_bytes)
		a->opts.spool_max_bytes = DEFAULT_SPOOL_MAX;
	if (!a->opts.symbols_max_bytes)
		a->opts.symbols_max_bytes = DEFAULT_SYMBOLS_MAX;
	if (!a->opts.max_request_bytes)
		a->opts.max_request_bytes = DEFAULT_MAX_REQUEST;
	if (!a->opts.timeout_ms)
		a->opts.timeout_ms = DEFAULT_TIMEOUT_MS;

	/* Strings we keep: the caller's may go once new() returns. */
	if ((a->opts.server_url && !(a->server_url = strdup(a->opts.server_url))) ||
	    (a->opts.spool_dir && !(a->spool_dir = strdup(a->opts.spool_dir))))
		return fail(a, -ENOMEM, "out of memory");
	/* Not the spool's directory: a spool whose disk is full must not stop the recording. */
	a->work_dir = strdup(a->opts.work_dir ? a->opts.work_dir : "/var/tmp");
	if (!a->work_dir)
		return fail(a, -ENOMEM, "out of memory");
	a->opts.server_url = a->server_url;
	a->opts.spool_dir = a->spool_dir;
	a->opts.work_dir = a->work_dir;
	if (a->opts.nr_labels) {
		a->labels = calloc(a->opts.nr_labels, sizeof(*a->labels));
		a->label_bufs = calloc(a->opts.nr_labels, sizeof(*a->label_bufs));
		if (!a->labels || !a->label_bufs)
			return fail(a, -ENOMEM, "out of memory");
		for (size_t i = 0; i < a->opts.nr_labels; i++) {
			err = split_label(a, a->opts.labels[i], i);
			if (err)
				return err;
			a->nr_labels++;
		}
	}
	a->opts.labels = NULL;

	if (a->opts.record) {
		/* As the recording library copies them: an older caller's struct is shorter. */
		err = OPTS_COPY(&a->ropts, bpfrec_record_opts, a->opts.record);
		if (err)
			return fail(a, err, "recording options from a newer bpfrec: this library "
				    "does not know what they ask for");
		err = check_record_opts(a);
		if (err)
			return err;
	} else {
		a->ropts = (struct bpfrec_record_opts){ .system_wide = true, .freq = DEFAULT_FREQ };
	}
	a->ropts.sz = sizeof(a->ropts);
	a->opts.record = NULL;
	if (gethostname(a->hostname, sizeof(a->hostname) - 1))
		snprintf(a->hostname, sizeof(a->hostname), "unknown");
	a->rng = mono_ns() ^ ((uint64_t)getpid() << 32);
	a->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (a->wake_fd < 0)
		return fail(a, -errno, "eventfd: %s", strerror(errno));
	return 0;
}

void bpfrec_agent_stop(struct bpfrec_agent *a)
{
	uint64_t one = 1;

	if (a && a->wake_fd >= 0 && write(a->wake_fd, &one, sizeof(one)) < 0) {
		/* The counter is full: a stop is pending anyway. */
	}
}

/* A file filed into the build-id cache (the recording thread): for the worker's symbol tables. */
static void on_filed(void *ctx, const uint8_t *id, size_t size)
{
	struct bpfrec_agent *a = ctx;

	if (!size || size > BUILDID_MAX)
		return;
	pthread_mutex_lock(&a->lock);
	if (a->nr_filed >= AGENT_FILED_MAX ||
	    ARRAY_RESERVE(a->filed, a->cap_filed, a->nr_filed + 1, 64)) {
		a->filed_lost = true;
	} else {
		a->filed[a->nr_filed].size = (uint8_t)size;
		memcpy(a->filed[a->nr_filed++].id, id, size);
	}
	pthread_mutex_unlock(&a->lock);
}

/* A finished window (the recording thread): queue it, or drop the oldest waiting. */
static void on_window(void *ctx, const char *path)
{
	struct bpfrec_agent *a = ctx;
	char *copy = strdup(path);

	pthread_mutex_lock(&a->lock);
	a->st.windows++;
	if (!copy) {
		a->st.windows_dropped++;
		unlink(path);
		pthread_mutex_unlock(&a->lock);
		return;
	}
	if (a->nr_queued == BPFREC_AGENT_MAX_PENDING) {
		unlink(a->queue[0]);
		free(a->queue[0]);
		memmove(a->queue, a->queue + 1, --a->nr_queued * sizeof(a->queue[0]));
		a->st.windows_dropped++;
		pthread_mutex_unlock(&a->lock);
		agent_log(a, BPFREC_LOG_WARN, "the uploads are %d windows behind: the oldest "
			  "window was dropped", BPFREC_AGENT_MAX_PENDING);
		pthread_mutex_lock(&a->lock);
	}
	a->queue[a->nr_queued++] = copy;
	pthread_cond_signal(&a->cond);
	pthread_mutex_unlock(&a->lock);
}

static void record_counts(struct bpfrec_agent *a, const struct bpfrec_record *rec)
{
	BPFREC_OPTS(bpfrec_record_stats, rs);

	if (bpfrec_record_get_stats(rec, &rs))
		return;
	pthread_mutex_lock(&a->lock);
	a->st.record_samples = rs.samples;
	a->st.record_lost = rs.lost;
	pthread_mutex_unlock(&a->lock);
}

/* Record until stopped, cutting a window every window_ns. */
static int record_loop(struct bpfrec_agent *a, struct bpfrec_record *rec)
{
	uint64_t window_end = mono_ns() + a->opts.window_ns;
	int err;

	for (;;) {
		struct pollfd pfds[2] = {
			{ .fd = bpfrec_record_poll_fd(rec), .events = POLLIN },
			{ .fd = a->wake_fd, .events = POLLIN },
		};
		uint64_t now = mono_ns();
		int timeout = now >= window_end ? 0 : (int)((window_end - now) / 1000000 + 1);
		int due = bpfrec_record_timeout_ms(rec);

		if (due >= 0 && due < timeout)
			timeout = due;
		if (poll(pfds, 2, timeout) < 0 && errno != EINTR)
			return fail(a, -errno, "poll: %s", strerror(errno));
		err = bpfrec_record_poll(rec, 0);
		if (err < 0)
			return fail(a, err, "%s", bpfrec_record_error(rec));
		if (err > 0)		/* the launched command ended */
			return 0;
		if (pfds[1].revents & POLLIN)
			return 0;
		if (mono_ns() >= window_end) {
			err = bpfrec_record_switch_output(rec);
			if (err)
				return fail(a, err, "%s", bpfrec_record_error(rec));
			record_counts(a, rec);
			/* Windows stay on the grid even when a switch ran late. */
			window_end += a->opts.window_ns;
			if (window_end <= mono_ns())
				window_end = mono_ns() + a->opts.window_ns;
		}
	}
}

/*
 * The directories above path, as mkdir -p makes them (0700: what is
 * created here is the agent's), so the default spool under /var/lib
 * works on a machine that never ran bpfrec. The spool makes path itself.
 */
static int make_parents(const char *path)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

/* The worker's resources: before recording, so a bad spool or URL fails first. */
static int open_worker(struct bpfrec_agent *a)
{
	int err;

	err = agent_services_new(NULL, &a->services);
	if (err)
		return fail(a, err, "cannot start the service table: %s", strerror(-err));
	if (!a->opts.send) {
		err = agent_http_new(a->opts.server_url, a->opts.timeout_ms, &a->http);
		if (err == -ENOPKG) {
			char why[256];

			curl_api_get(why, sizeof(why));
			return fail(a, err, "cannot push to '%s': %s", a->opts.server_url, why);
		}
		if (err)
			return fail(a, err, "cannot set up HTTP for '%s': %s", a->opts.server_url,
				    strerror(-err));
	}
	if (a->opts.spool_dir) {
		err = make_parents(a->opts.spool_dir);
		if (err)
			return fail(a, err, "cannot create the parents of spool directory '%s': %s",
				    a->opts.spool_dir, strerror(-err));
		err = agent_spool_open(a->opts.spool_dir, a->opts.spool_max_bytes, &a->spool);
		if (err)
			return fail(a, err, "cannot use spool directory '%s': %s",
				    a->opts.spool_dir, strerror(-err));
	}
	return 0;
}

/* The private directory windows are recorded in. */
static int make_window_dir(struct bpfrec_agent *a, char *dir, size_t len)
{
	if ((size_t)snprintf(dir, len, "%s/bpfrec-agent.XXXXXX", a->work_dir) >= len)
		return fail(a, -ENAMETOOLONG, "work directory '%s': name too long", a->work_dir);
	if (mkdir(a->work_dir, 0700) && errno != EEXIST)
		return fail(a, -errno, "cannot create work directory '%s': %s", a->work_dir,
			    strerror(errno));
	if (!mkdtemp(dir))
		return fail(a, -errno, "cannot create a directory in '%s': %s", a->work_dir,
			    strerror(errno));
	return 0;
}

/* Whatever a stop left in the window directory, then the directory. */
static void remove_window_dir(const char *dir)
{
	char path[PATH_MAX + 32];
	static const char *const leftovers[] = { "window.data", "window.data.old", "kallsyms",
						 "kallsyms.tmp" };

	for (size_t i = 0; i < sizeof(leftovers) / sizeof(leftovers[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, leftovers[i]);
		unlink(path);
	}
	rmdir(dir);
}

int bpfrec_agent_run(struct bpfrec_agent *a)
{
	struct bpfrec_record *rec = NULL;
	char dir[PATH_MAX], out[PATH_MAX + 16];
	pthread_t worker;
	int err, err2;

	if (!a)
		return -EINVAL;
	err = open_worker(a);
	if (!err)
		err = make_window_dir(a, dir, sizeof(dir));
	if (err)
		return err;
	snprintf(out, sizeof(out), "%s/window.data", dir);
	snprintf(a->ksyms, sizeof(a->ksyms), "%s/kallsyms", dir);
	a->ropts.output = BPFREC_OUTPUT_PATH;
	a->ropts.output_path = out;
	a->ropts.switch_output = BPFREC_SWITCH_MANUAL;
	a->ropts.on_switch = on_window;
	a->ropts.on_switch_ctx = a;
	a->ropts.on_filed = on_filed;
	a->ropts.on_filed_ctx = a;
	if (!a->ropts.log) {
		a->ropts.log = a->opts.log;
		a->ropts.log_ctx = a->opts.log_ctx;
	}

	err = bpfrec_record_new(&a->ropts, &rec);
	if (!err)
		err = bpfrec_record_open(rec);
	if (!err)
		err = bpfrec_record_start(rec);
	if (err) {
		fail(a, err, "%s", rec ? bpfrec_record_error(rec) : strerror(-err));
		a->failure_code = rec ? bpfrec_record_failure_code(rec) : 1;
		bpfrec_record_free(rec);
		remove_window_dir(dir);
		return err;
	}
	err = pthread_create(&worker, NULL, agent_worker_main, a);
	if (err) {
		bpfrec_record_free(rec);
		remove_window_dir(dir);
		return fail(a, -err, "cannot start the worker thread: %s", strerror(err));
	}

	err = record_loop(a, rec);
	/* Stopping finishes the last window, which on_window queues like the others. */
	err2 = bpfrec_record_stop(rec);
	if (err2 && !err)
		err = fail(a, err2, "%s", bpfrec_record_error(rec));
	record_counts(a, rec);
	bpfrec_record_free(rec);

	pthread_mutex_lock(&a->lock);
	a->stopping = true;
	pthread_cond_signal(&a->cond);
	pthread_mutex_unlock(&a->lock);
	pthread_join(worker, NULL);
	remove_window_dir(dir);
	return err;
}

int bpfrec_agent_get_stats(const struct bpfrec_agent *a, struct bpfrec_agent_stats *stats)
{
	struct bpfrec_agent_stats copy;

	if (!a || !stats)
		return -EINVAL;
	pthread_mutex_lock((pthread_mutex_t *)&a->lock);
	copy = a->st;
	pthread_mutex_unlock((pthread_mutex_t *)&a->lock);
	return opts_copy_out(stats, &copy, sizeof(copy));
}

const char *bpfrec_agent_error(const struct bpfrec_agent *a)
{
	return a && a->err[0] ? a->err : "no error";
}

int bpfrec_agent_failure_code(const struct bpfrec_agent *a)
{
	return a ? a->failure_code : 1;
}

void bpfrec_agent_free(struct bpfrec_agent *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nr_queued; i++) {
		unlink(a->queue[i]);
		free(a->queue[i]);
	}
	agent_http_free(a->http);
	agent_spool_close(a->spool);
	agent_services_free(a->services);
	bpfrec_pprof_symbols_free(a->symbols);
	free(a->filed);
	for (size_t i = 0; i < a->nr_labels; i++)
		free(a->label_bufs[i]);
	free(a->label_bufs);
	free(a->labels);
	free(a->server_url);
	free(a->spool_dir);
	free(a->work_dir);
	if (a->wake_fd >= 0)
		close(a->wake_fd);
	pthread_cond_destroy(&a->cond);
	pthread_mutex_destroy(&a->lock);
	free(a);
}
