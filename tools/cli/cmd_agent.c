// SPDX-License-Identifier: MIT
/*
 * cmd_agent.c - `bpfrec agent`: continuous profiling pushed to Pyroscope or
 * Parca, the command line over bpfrec/agent.h.
 *
 * The agent's own options are taken out first; every other word goes to
 * `bpfrec record`'s parser, so -a, -p, -g, --off-cpu, --alloc, -F and the
 * rest mean what they mean there. Without -p/-t/a command it records the
 * whole system, at 19 Hz unless -F or -c says otherwise.
 *
 * SIGINT, SIGTERM and SIGHUP ask the agent to stop: it finishes the window,
 * pushes or spools it, and exits. Exit codes: 2 bad usage, 1 a failure to
 * start or record, else 0 (requests the server dropped are counted in the
 * summary, not an exit code: the agent did its job).
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <bpfrec/agent.h>
#include <bpfrec/record.h>

#include "tools/cli/commands.h"
#include "tools/cli/usage.h"
#include "tools/cli/libbpf_print.h"
#include "tools/cli/record_args.h"

#define EXIT_USAGE 2
#define AGENT_DEFAULT_FREQ 19
#define AGENT_DEFAULT_SPOOL "/var/lib/bpfrec/agent-spool"

struct agent_args {
	const char *server;
	enum bpfrec_agent_api api;
	uint64_t every_ns, timeout_ns, spool_max, max_request, symbols_max;
	const char *spool;
	bool no_spool;
	const char **labels;
	size_t nr_labels;
	char **rest;			/* everything else, for record_args_parse() */
	int nr_rest;
	bool rate_given;		/* -F or -c among the rest */
};

static void agent_usage(FILE *f)
{
	fputs(
"usage: bpfrec agent --server URL [options] [record options] [-- command]\n"
"\n"
"Record continuously (the whole system unless -p/-t or a command says\n"
"otherwise), cut the recording into windows, turn each window into pprof\n"
"profiles, one per event and per service, and push them to Grafana\n"
"Pyroscope or Parca. Needs root (or CAP_BPF and CAP_PERFMON).\n"
"\n"
"Where to:\n"
"      --server URL       the server, http://host:port or https://...\n"
"      --api NAME         pyroscope (default: Connect push.v1.PusherService/Push)\n"
"                         or parca (gRPC-Web ProfileStoreService/WriteRaw)\n"
"      --label KEY=VALUE  on every profile (repeatable); service_name set here\n"
"                         replaces the per-process one (systemd unit, cgroup, comm),\n"
"                         hostname the host's name\n"
"How:\n"
"      --every TIME       window length (default 15s; ms, s, m suffixes)\n"
"      --max-request SIZE send a request when its compressed size reaches SIZE\n"
"                         (default 4M; a request may pass it by one profile)\n"
"      --timeout TIME     for one request, connecting included (default 10s)\n"
"      --spool DIR        keep requests the server could not take here and send\n"
"                         them when it answers again, also after a restart\n"
"                         (default " AGENT_DEFAULT_SPOOL ")\n"
"      --spool-max SIZE   at most SIZE on disk (default 256M; oldest dropped first)\n"
"      --no-spool         drop (and count) what the server could not take\n"
"      --symbols-max SIZE drop the symbol tables kept between windows (files\n"
"                         mapped, tables made of them) and start anew when they\n"
"                         hold more than SIZE (default 64M; at least 1M)\n"
"  -q, -v                 quiet (no line per push, no summary) / verbose\n"
"\n"
"Every option of `bpfrec record` that says what and how to record works\n"
"here too: -a, -p, -t, -C, -F (default 19 Hz), -c, -e, -g, --call-graph,\n"
"--off-cpu, --alloc, --sched, --duration, -m, --no-python. See\n"
"'bpfrec record --help'.\n", f);
}

/* "15s", "500ms", "2m", "1h": 0 or -EINVAL. */
static int parse_time(const char *s, uint64_t *ns)
{
	char *end;
	double v;
	double unit;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v > 0))
		return -EINVAL;
	if (!strcmp(end, "ms"))
		unit = 1e6;
	else if (!strcmp(end, "s") || !*end)
		unit = 1e9;
	else if (!strcmp(end, "m"))
		unit = 60e9;
	else if (!strcmp(end, "h"))
		unit = 3600e9;
	else
		return -EINVAL;
	if (v * unit > 1e18)
		return -EINVAL;
	*ns = (uint64_t)(v * unit);
	return 0;
}

/* The value of an agent option: "--opt=V" or "--opt V". NULL when missing. */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n))
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] || *i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

static bool is_opt(const char *arg, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(arg, name, n) && (arg[n] == '\0' || arg[n] == '=');
}

/*
 * Whether a record option takes the next word as its value: "-p 12",
 * "-aF 99", "--event cpu-clock" (bpfrec record's getopt table).
 */
static bool record_opt_takes_next(const char *arg)
{
	static const char *const with_value[] = { "--freq", "--count", "--pid", "--tid", "--cpu",
		"--call-graph", "--event", "--mmap-pages", "--duration", "--off-cpu-thresh",
		"--unwind-tables", "--sched-thresh" };

	if (arg[1] == '-') {
		if (strchr(arg, '='))
			return false;
		for (size_t k = 0; k < sizeof(with_value) / sizeof(with_value[0]); k++)
			if (!strcmp(arg, with_value[k]))
				return true;
		return false;
	}
	for (const char *c = arg + 1; *c; c++)
		if (strchr("FcptCoem", *c))
			return c[1] == '\0';
	return false;
}

/* Whether a cluster of short options ("-agF99") holds flag f before any value. */
static bool short_flag(const char *arg, char f)
{
	if (arg[1] == '-')
		return false;
	for (const char *c = arg + 1; *c; c++) {
		if (*c == f)
			return true;
		if (strchr("FcptCoem", *c))
			return false;
	}
	return false;
}

/* The message into the caller's err, and -EINVAL. */
#define bad(err, len, ...) cli_bad_msg(err, len, __VA_ARGS__)

static int agent_args_parse(int argc, char **argv, struct agent_args *g, char *err, size_t len)
{
	static const char *const agent_opts[] = { "--server", "--api", "--every", "--label",
		"--spool", "--spool-max", "--max-request", "--timeout", "--symbols-max" };
	bool command = false;

	memset(g, 0, sizeof(*g));
	g->spool = AGENT_DEFAULT_SPOOL;
	g->rest = calloc((size_t)argc + 1, sizeof(*g->rest));
	g->labels = calloc((size_t)argc + 1, sizeof(*g->labels));
	if (!g->rest || !g->labels)
		return bad(err, len, "out of memory");
	g->rest[g->nr_rest++] = argv[0];
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *v;
		size_t k;

		/* After "--" or the command's first word, nothing is ours. */
		if (command || !strcmp(arg, "--") || arg[0] != '-') {
			command = true;
			g->rest[g->nr_rest++] = argv[i];
			continue;
		}
		if (!strcmp(arg, "--no-spool")) {
			g->no_spool = true;
			continue;
		}
		for (k = 0; k < sizeof(agent_opts) / sizeof(agent_opts[0]); k++)
			if (is_opt(arg, agent_opts[k]))
				break;
		if (k == sizeof(agent_opts) / sizeof(agent_opts[0])) {
			/* A record option: -F/-c (alone or among short flags) set the rate. */
			if (is_opt(arg, "--freq") || is_opt(arg, "--count") || short_flag(arg, 'F') ||
			    short_flag(arg, 'c'))
				g->rate_given = true;
			if (is_opt(arg, "--output") || short_flag(arg, 'o') ||
			    is_opt(arg, "--switch-output") || is_opt(arg, "--switch-max-files"))
				return bad(err, len, "'%s': the agent writes no perf.data of its own; "
					   "use bpfrec record for that", arg);
			g->rest[g->nr_rest++] = argv[i];
			if (record_opt_takes_next(arg) && i + 1 < argc)
				g->rest[g->nr_rest++] = argv[++i];
			continue;
		}
		v = opt_value(argc, argv, &i, agent_opts[k]);
		if (!v)
			return bad(err, len, "option '%s' needs a value; see 'bpfrec agent --help'",
				   agent_opts[k]);
		switch (k) {
		case 0:
			g->server = v;
			break;
		case 1:
			if (!strcmp(v, "pyroscope"))
				g->api = BPFREC_AGENT_PYROSCOPE;
			else if (!strcmp(v, "parca"))
				g->api = BPFREC_AGENT_PARCA;
			else
				return bad(err, len, "--api '%s': give pyroscope or parca", v);
			break;
		case 2:
			if (parse_time(v, &g->every_ns) || g->every_ns < 100000000ull)
				return bad(err, len, "--every '%s': give a time of at least 100ms, "
					   "e.g. 15s or 1m", v);
			break;
		case 3:
			g->labels[g->nr_labels++] = v;
			break;
		case 4:
			g->spool = v;
			break;
		case 5:
			if (bpfrec_size_parse(v, &g->spool_max) || !g->spool_max)
				return bad(err, len, "--spool-max '%s': give a size, e.g. 256M", v);
			break;
		case 6:
			if (bpfrec_size_parse(v, &g->max_request) || g->max_request < 4096 ||
			    g->max_request > (1ull << 30))
				return bad(err, len, "--max-request '%s': give a size from 4K to 1G, "
					   "e.g. 4M", v);
			break;
		case 7:
			if (parse_time(v, &g->timeout_ns) || g->timeout_ns < 1000000ull ||
			    g->timeout_ns > 3600e9)
				return bad(err, len, "--timeout '%s': give a time from 1ms to 1h, "
					   "e.g. 10s", v);
			break;
		case 8:
			if (bpfrec_size_parse(v, &g->symbols_max) || g->symbols_max < (1ull << 20))
				return bad(err, len, "--symbols-max '%s': give a size of at least "
					   "1M, e.g. 64M", v);
			break;
		}
	}
	return 0;
}

static struct bpfrec_agent *volatile the_agent;

static void on_signal(int sig)
{
	(void)sig;
	bpfrec_agent_stop(the_agent);
}

struct ui {
	bool quiet, verbose;
};

static void on_log(void *ctx, enum bpfrec_log_level level, const char *msg)
{
	struct ui *ui = ctx;

	if (ui->quiet || (level != BPFREC_LOG_WARN && !ui->verbose))
		return;
	if (level == BPFREC_LOG_WARN)
		fprintf(stderr, "bpfrec agent: warning: %s\n", msg);
	else if (level == BPFREC_LOG_INFO)
		fprintf(stderr, "bpfrec agent: note: %s\n", msg);
	else
		fprintf(stderr, "%s\n", msg);
}

/* One line per attempt: what went, and what became of it. */
static void on_push(void *ctx, const struct bpfrec_agent_request *r)
{
	struct ui *ui = ctx;
	char what[96];

	if (ui->quiet)
		return;
	if (r->replay)
		snprintf(what, sizeof(what), "spooled request");
	else if (r->samples)
		snprintf(what, sizeof(what), "%zu profile%s (%llu samples)", r->nr_series,
			 r->nr_series == 1 ? "" : "s", (unsigned long long)r->samples);
	else	/* half of a request split for the server's size limit */
		snprintf(what, sizeof(what), "%zu profile%s", r->nr_series,
			 r->nr_series == 1 ? "" : "s");
	switch (r->outcome) {
	case BPFREC_AGENT_PUSHED:
		fprintf(stderr, "bpfrec agent: pushed %s, %.1f KB\n", what, r->len / 1024.0);
		break;
	case BPFREC_AGENT_RETRY:
		fprintf(stderr, "bpfrec agent: push of %s failed (%s): kept for a retry\n", what,
			r->message && *r->message ? r->message : "no answer");
		break;
	case BPFREC_AGENT_REJECTED:
		fprintf(stderr, "bpfrec agent: %s rejected (HTTP %ld): dropped\n", what,
			r->http_status);
		break;
	case BPFREC_AGENT_TOO_LARGE:
		fprintf(stderr, "bpfrec agent: %s too large for the server (%.1f KB)\n", what,
			r->len / 1024.0);
		break;
	}
}

static void summary(const struct bpfrec_agent_stats *s)
{
	fprintf(stderr, "[ bpfrec agent: %llu windows (%llu dropped), %llu profiles, %llu samples "
		"(%llu lost); %llu requests: %llu pushed (%.1f KB, %llu replayed from the spool), "
		"%llu spooled, %llu rejected, %llu too large, %llu lacking a spool; spool: %llu "
		"held (%.1f KB), %llu evicted, %llu refused for want of disk room, %llu found "
		"damaged; symbol tables: %llu renewed for size, at most %.1f MB ]\n",
		(unsigned long long)s->windows, (unsigned long long)s->windows_dropped,
		(unsigned long long)s->profiles, (unsigned long long)s->samples,
		(unsigned long long)s->record_lost, (unsigned long long)s->requests,
		(unsigned long long)s->pushed, s->pushed_bytes / 1024.0,
		(unsigned long long)s->replayed, (unsigned long long)s->spooled,
		(unsigned long long)s->dropped_rejected, (unsigned long long)s->dropped_too_large,
		(unsigned long long)s->dropped_no_spool, (unsigned long long)s->spool_entries,
		s->spool_bytes / 1024.0, (unsigned long long)s->spool_evicted,
		(unsigned long long)s->spool_full, (unsigned long long)s->spool_corrupt,
		(unsigned long long)s->symbols_renewed, s->symbols_peak_bytes / 1e6);
}

int cmd_agent(int argc, char **argv)
{
	BPFREC_OPTS(bpfrec_agent_opts, o);
	BPFREC_OPTS(bpfrec_agent_stats, st);
	struct bpfrec_agent *agent = NULL;
	struct agent_args g;
	struct record_args a;
	struct sigaction sa = { .sa_handler = on_signal };
	struct ui ui = { 0 };
	char msg[256];
	int err, code = 1;

	memset(&a, 0, sizeof(a));
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			agent_usage(stdout);
			return 0;
		}
	if (agent_args_parse(argc, argv, &g, msg, sizeof(msg)) ||
	    record_args_parse(g.nr_rest, g.rest, &a, msg, sizeof(msg))) {
		fprintf(stderr, "bpfrec agent: %s\n", msg);
		code = EXIT_USAGE;
		goto out;
	}
	if (!g.server) {
		fprintf(stderr, "bpfrec agent: no server: give --server http://HOST:PORT\n");
		code = EXIT_USAGE;
		goto out;
	}
	cli_libbpf_print(a.verbose);
	cli_recording_malloc();
	if (!a.opts.command && !a.opts.nr_pids && !a.opts.nr_tids)
		a.opts.system_wide = true;
	if (!g.rate_given)
		a.opts.freq = AGENT_DEFAULT_FREQ;
	/* The recording's own command line does not name a file anyone reads. */
	a.opts.argc = 0;
	a.opts.argv = NULL;
	ui.quiet = a.quiet;
	ui.verbose = a.verbose;
	a.opts.log = on_log;
	a.opts.log_ctx = &ui;

	o.record = &a.opts;
	o.server_url = g.server;
	o.api = g.api;
	o.window_ns = g.every_ns;
	o.labels = g.labels;
	o.nr_labels = g.nr_labels;
	o.spool_dir = g.no_spool ? NULL : g.spool;
	o.spool_max_bytes = g.spool_max;
	o.symbols_max_bytes = g.symbols_max;
	o.max_request_bytes = (size_t)g.max_request;
	o.timeout_ms = (unsigned int)(g.timeout_ns / 1000000);
	o.on_push = on_push;
	o.on_push_ctx = &ui;
	o.log = on_log;
	o.log_ctx = &ui;

	err = bpfrec_agent_new(&o, &agent);
	if (err) {
		fprintf(stderr, "bpfrec agent: %s\n", agent ? bpfrec_agent_error(agent) :
			strerror(-err));
		code = EXIT_USAGE;
		goto out;
	}
	the_agent = agent;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* A --duration is a stop request on a timer. */
	if (a.duration > 0) {
		struct itimerval it = { .it_value = { .tv_sec = (time_t)a.duration,
			.tv_usec = (suseconds_t)((a.duration - (double)(time_t)a.duration) * 1e6) } };

		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
	}

	err = bpfrec_agent_run(agent);
	if (err) {
		fprintf(stderr, "bpfrec agent: %s\n", bpfrec_agent_error(agent));
		code = bpfrec_agent_failure_code(agent);
	} else {
		code = 0;
	}
	bpfrec_agent_get_stats(agent, &st);
	if (!a.quiet && !(err && !st.windows))
		summary(&st);
out:
	the_agent = NULL;
	bpfrec_agent_free(agent);
	record_args_free(&a);
	free(g.rest);
	free(g.labels);
	return code;
}
