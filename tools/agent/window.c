// SPDX-License-Identifier: MIT
/*
 * window.c - one window's perf.data -> push requests.
 *
 * The window is read once by the pprof converter, its profiles split per
 * (event, service); each profile is gzip-encoded by the converter straight
 * into the request body (push_request_write), so a batch is held once, as
 * the compressed bytes that go on the wire. A request is handed to the
 * worker's delivery as soon as its size reaches max_request_bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpfrec/pprof.h>

#include "tools/agent/agent_int.h"
#include "tools/agent/service.h"
#include "tools/lib/clock.h"
#include "tools/lib/fdio.h"

/*
 * The profile's __name__ as Pyroscope names profile types: CPU samples
 * are process_cpu (as its eBPF agent sends them), allocations memory.
 */
static const char *profile_type_name(const char *event)
{
	if (!event)
		return "process_cpu";
	if (strstr(event, "offcpu") || strstr(event, "off-cpu"))
		return "off_cpu";
	if (strstr(event, "sched"))
		return "sched_delay";
	if (!strcmp(event, "heap") || strstr(event, "alloc") || strstr(event, "inuse"))
		return "memory";
	return "process_cpu";
}

#define MAX_SERIES_LABELS 64

/* The labels of profile i: ours, then the user's (whose service_name and hostname win). */
static size_t series_labels(struct bpfrec_agent *a, struct bpfrec_pprof *conv, size_t i,
			    struct agent_label *out)
{
	const char *group = bpfrec_pprof_profile_group(conv, i);
	size_t n = 0;

	out[n++] = (struct agent_label){ .name = "__name__",
		.value = profile_type_name(bpfrec_pprof_profile_event(conv, i)) };
	if (!a->has_service_label)
		out[n++] = (struct agent_label){ .name = "service_name",
						 .value = group ? group : "unknown" };
	if (!a->has_hostname_label)
		out[n++] = (struct agent_label){ .name = "hostname", .value = a->hostname };
	/* Each window is already a delta: the server must not subtract two of them. */
	if (a->opts.api == BPFREC_AGENT_PYROSCOPE)
		out[n++] = (struct agent_label){ .name = "__delta__", .value = "false" };
	for (size_t k = 0; k < a->nr_labels && n < MAX_SERIES_LABELS; k++)
		out[n++] = a->labels[k];
	return n;
}

/* The kernel's symbols and the files' are read again after this long (modules come and go). */
#define SYMBOLS_MAX_AGE_NS (600ull * 1000000000ull)

/*
 * A copy of /proc/kallsyms in the window directory: reading /proc/kallsyms
 * has the kernel format every line, more than half of a small window's
 * conversion (0.4 of 0.7 s here); the copy reads as a plain file. True when
 * a->ksyms holds a copy (this one, or an older one when this failed).
 */
static bool take_kallsyms(struct bpfrec_agent *a)
{
	char tmp[sizeof(a->ksyms) + 8];
	bool ok = false;
	int in, out;

	snprintf(tmp, sizeof(tmp), "%s.tmp", a->ksyms);
	in = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (in >= 0 && out >= 0) {
		char buf[65536];
		ssize_t n;

		ok = true;
		while (ok && (n = read(in, buf, sizeof(buf))) != 0) {
			if (n < 0 ? errno != EINTR : fd_write_all(out, buf, (size_t)n) != 0)
				ok = false;
		}
	}
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out))
		ok = false;
	if (ok && !rename(tmp, a->ksyms))
		a->ksyms_taken = true;
	else
		unlink(tmp);
	return a->ksyms_taken;
}

/*
 * The symbol tables the windows share: every file is found, opened and
 * parsed once, not once a window (a fresh converter per window spent most
 * of a system-wide agent's CPU there). Renewed, with the kallsyms copy,
 * every SYMBOLS_MAX_AGE_NS (modules come and go), and sooner when what
 * they hold has passed opts.symbols_max_bytes: on a machine running many
 * programs with debug info they would otherwise keep every file seen in
 * ten minutes mapped, with libdw's state of it (hundreds of MB). Freeing
 * them ends every Dwfl, which unmaps its files and closes their fds.
 * Without tables (they could not be made) each window has its own.
 */
static void renew_symbols(struct bpfrec_agent *a, bool filed_lost)
{
	uint64_t now = mono_ns(), size = bpfrec_pprof_symbols_size(a->symbols);
	bool too_big = size > a->opts.symbols_max_bytes;

	pthread_mutex_lock(&a->lock);
	if (size > a->st.symbols_peak_bytes)
		a->st.symbols_peak_bytes = size;
	a->st.symbols_renewed += a->symbols && too_big;
	pthread_mutex_unlock(&a->lock);
	if (a->symbols && !too_big && !filed_lost && now - a->symbols_made_ns < SYMBOLS_MAX_AGE_NS)
		return;
	if (too_big)
		agent_log(a, BPFREC_LOG_DEBUG, "symbol tables renewed: %.1f MiB held, the bound "
			  "is %.1f MiB", size / 1048576.0, a->opts.symbols_max_bytes / 1048576.0);
	if (a->symbols) {
		bpfrec_pprof_symbols_free(a->symbols);
		/* libdw's many small blocks stay in the worker's arena otherwise:
		 * hand them back, or RSS would not fall with the renewal. */
		malloc_trim(0);
	}
	a->symbols = NULL;
	{
		/* The kernel's symbols now: the agent's memory is what it will
		 * be from the first window on, not grown by 10 MB in whichever
		 * window first holds a kernel frame. */
		BPFREC_OPTS(bpfrec_pprof_opts, so, .kallsyms = take_kallsyms(a) ? a->ksyms : NULL,
			    .symbols_filed_told = true, .symbols_kernel_now = true);

		if (bpfrec_pprof_symbols_new(&so, &a->symbols))
			a->symbols = NULL;
	}
	a->symbols_made_ns = now;
}

/*
 * The files filed into the build-id cache before this window was finished
 * (and maybe a few after: checked once more, no harm), told to the symbol
 * tables, which check only those again (opts.symbols_filed_told): a Python
 * symbol file filed again, grown, under its build-id. Every other file
 * with a build-id is what it was. Some not kept: the tables are renewed.
 */
static void take_filed(struct bpfrec_agent *a)
{
	struct agent_filed *filed;
	size_t nr;
	bool lost;

	pthread_mutex_lock(&a->lock);
	filed = a->filed;
	nr = a->nr_filed;
	lost = a->filed_lost;
	a->filed = NULL;
	a->nr_filed = a->cap_filed = 0;
	a->filed_lost = false;
	pthread_mutex_unlock(&a->lock);
	renew_symbols(a, lost);
	for (size_t i = 0; i < nr; i++)
		bpfrec_pprof_symbols_filed(a->symbols, filed[i].id, filed[i].size);
	free(filed);
}

int agent_convert_window(struct bpfrec_agent *a, const char *path)
{
	const char *stamp = strrchr(path, '.');
	char name[64];

	take_filed(a);
	/* The profile's comment names the window, not a private temporary file. */
	snprintf(name, sizeof(name), "bpfrec agent window %s", stamp ? stamp + 1 : "");
	BPFREC_OPTS(bpfrec_pprof_opts, po, .input_name = name, .log = a->opts.log,
		    .log_ctx = a->opts.log_ctx, .group = agent_services_group,
		    .group_ctx = a->services, .kallsyms = a->ksyms_taken ? a->ksyms : NULL,
		    .symbols = a->symbols);
	struct agent_label labels[MAX_SERIES_LABELS];
	struct bpfrec_pprof *conv = NULL;
	struct push_request *req = NULL;
	size_t nr_series = 0, max = a->opts.max_request_bytes;
	uint64_t samples = 0;
	int err;

	err = bpfrec_pprof_new(&po, &conv);
	if (!err)
		err = bpfrec_pprof_read_path(conv, path);
	if (err) {
		agent_log(a, BPFREC_LOG_WARN, "window %s not converted: %s", path,
			  conv ? bpfrec_pprof_error(conv) : strerror(-err));
		bpfrec_pprof_free(conv);
		return err;
	}
	for (size_t i = 0; i < bpfrec_pprof_nr_profiles(conv); i++) {
		uint64_t ns = bpfrec_pprof_profile_samples(conv, i);
		size_t nl;

		if (!ns)
			continue;
		if (!req && (err = push_request_new((enum agent_api)a->opts.api, &req)))
			break;
		nl = series_labels(a, conv, i, labels);
		err = push_request_begin_series(req, labels, nl);
		if (!err)
			err = bpfrec_pprof_write_callback(conv, i, push_request_write, req, NULL);
		if (err) {
			/* This profile alone is lost; the others still go. */
			push_request_abort_series(req);
			agent_log(a, BPFREC_LOG_WARN, "profile %s of %s not encoded: %s",
				  bpfrec_pprof_profile_name(conv, i), path, bpfrec_pprof_error(conv));
			if (err == -ENOMEM)
				break;
			err = 0;
			continue;
		}
		err = push_request_end_series(req);
		if (err)
			break;
		nr_series++;
		samples += ns;
		pthread_mutex_lock(&a->lock);
		a->st.profiles++;
		a->st.samples += ns;
		pthread_mutex_unlock(&a->lock);
		if (push_request_size(req) >= max) {
			agent_deliver(a, req, nr_series, samples);
			req = NULL;
			nr_series = 0;
			samples = 0;
		}
	}
	if (req && nr_series && !err)
		agent_deliver(a, req, nr_series, samples);
	else
		push_request_free(req);
	bpfrec_pprof_free(conv);
	return err;
}
