// SPDX-License-Identifier: MIT
/*
 * cmd_record.c - `bpfrec record`: the command line over the public API
 * (bpfrec/record.h), as any program would use it.
 *
 * Signals: SIGINT, SIGTERM, SIGHUP and SIGCHLD are blocked and read from a
 * signalfd polled next to the recording's own fd, so a stop request is seen
 * at once and handled outside signal context; SIGPIPE is ignored so a closed
 * output pipe is an EPIPE error, not a silent death. SIGUSR2 switches to a
 * new output file under --switch-output, as in perf.
 *
 * On a terminal (stderr a TTY, not -q) a live status line shows progress;
 * it is erased before anything else is printed and never reaches a pipe or
 * a redirected stderr.
 *
 * Exit codes: 1 after a write error (the file is kept, valid up to its last
 * checkpoint), else the launched command's (128+N when signal N killed it),
 * 127 command not found, 126 not executable, 2 bad usage, 1 other errors,
 * else 0.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <bpfrec/record.h>

#include "tools/cli/commands.h"
#include "tools/cli/libbpf_print.h"
#include "tools/cli/record_args.h"
#include "tools/cli/status.h"

#define EXIT_USAGE 2

/* The status line's clock (the CLI sees the public API only, not tools/lib/clock.h). */
static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double mono_s(void)
{
	return (double)mono_ns() / 1e9;
}

/* What arrived on the signalfd since the last look. */
struct signals {
	bool stop;	/* INT, TERM or HUP */
	bool do_switch;	/* USR2 */
};

static struct signals read_signals(int sfd)
{
	struct signalfd_siginfo si;
	struct signals sig = { 0 };

	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGUSR2)
			sig.do_switch = true;
		else if (si.ssi_signo != SIGCHLD)
			sig.stop = true;
	}
	return sig;
}

/* What the command prints besides the summary, under the status line. */
struct ui {
	struct status_line line;
	bool quiet, verbose;
};

/* --switch-output finished a file: say so as perf does. */
static void on_switch(void *ctx, const char *path)
{
	struct ui *ui = ctx;

	status_line_clear(&ui->line);
	fprintf(stderr, "[ bpfrec record: Dump %s ]\n", path);
}

/* The library's messages: warnings unless -q, notes and details with -v. */
static void on_log(void *ctx, enum bpfrec_log_level level, const char *msg)
{
	struct ui *ui = ctx;

	if (ui->quiet || (level != BPFREC_LOG_WARN && !ui->verbose))
		return;
	status_line_clear(&ui->line);
	if (level == BPFREC_LOG_WARN)
		fprintf(stderr, "bpfrec record: warning: %s\n", msg);
	else if (level == BPFREC_LOG_INFO)
		fprintf(stderr, "bpfrec record: note: %s\n", msg);
	else
		fprintf(stderr, "%s\n", msg);
}

/* A size for people: "512 KB", "32 MB". */
static void format_size(char *buf, size_t len, uint64_t bytes)
{
	if (bytes < (1ull << 20))
		snprintf(buf, len, "%llu KB", (unsigned long long)(bytes >> 10));
	else
		snprintf(buf, len, "%llu MB", (unsigned long long)(bytes >> 20));
}

/*
 * How the in-kernel unwinder did (-v): every walk that did not reach the
 * root, by reason, every frame that needed frame pointers and every
 * mapping left without a table for want of room is a number here, not a
 * silently shorter stack. Mappings over the budget are a warning always.
 */
static void unwind_summary(const struct bpfrec_unwind_stats *u, bool verbose)
{
	char budget[32];

	format_size(budget, sizeof(budget), u->budget_bytes);
	if (verbose) {
		fprintf(stderr, "bpfrec record: cfi unwinding: %llu stacks, %llu ended at the root, "
			"%llu before their process had tables, %llu used frame pointers (%llu "
			"frames); %zu tables, %.1f MB; %zu mappings over the %s table budget\n",
			(unsigned long long)u->walks, (unsigned long long)u->root,
			(unsigned long long)u->no_proc, (unsigned long long)u->fp_walks,
			(unsigned long long)u->fp_frames, u->tables_built,
			(double)u->peak_bytes / (1024.0 * 1024.0), u->over_budget, budget);
		fprintf(stderr, "bpfrec record: cfi stacks ended:");
		for (unsigned int r = 0; bpfrec_unwind_stop_name(r); r++)
			if (u->stops[r])
				fprintf(stderr, " %s %llu", bpfrec_unwind_stop_name(r),
					(unsigned long long)u->stops[r]);
		fputc('\n', stderr);
		if (u->py_procs || u->py_procs_unsupported)
			fprintf(stderr, "bpfrec record: Python frames: %llu processes (%llu of an "
				"unsupported version), %llu samples with Python frames, %llu walks "
				"cut, %llu frames (%llu unnamed, %llu without an eval-loop frame), "
				"%llu code objects read, %llu symbol files, filed %llu times\n",
				(unsigned long long)u->py_procs,
				(unsigned long long)u->py_procs_unsupported,
				(unsigned long long)u->py_samples, (unsigned long long)u->py_cut,
				(unsigned long long)u->py_frames, (unsigned long long)u->py_unknown,
				(unsigned long long)u->py_unplaced, (unsigned long long)u->py_reads,
				(unsigned long long)u->py_files,
				(unsigned long long)u->py_filings);
		if (u->late_walks || u->late_spent || u->late_busy) {
			fprintf(stderr, "bpfrec record: cfi stacks walked again once their tables "
				"came: %llu (%llu waited too long), %llu more had no stack copy "
				"left, %llu found the ring buffer too full for one; ended:",
				(unsigned long long)u->late_walks,
				(unsigned long long)u->late_expired,
				(unsigned long long)u->late_spent, (unsigned long long)u->late_busy);
			for (unsigned int r = 0; bpfrec_unwind_stop_name(r); r++)
				if (u->late_stops[r])
					fprintf(stderr, " %s %llu", bpfrec_unwind_stop_name(r),
						(unsigned long long)u->late_stops[r]);
			fputc('\n', stderr);
		}
	}
	if (u->over_budget)
		fprintf(stderr, "bpfrec record: warning: %zu mappings did not fit in the %s of unwind "
			"tables and were walked by frame pointers: raise --unwind-tables\n",
			u->over_budget, budget);
}

/* --alloc (-v): what the probes saw; a full map of live allocations is a warning always. */
static void alloc_summary(const struct bpfrec_alloc_stats *a, bool verbose)
{
	if (verbose)
		fprintf(stderr, "bpfrec record: allocations: %llu calls, %llu sampled (1 per %llu "
			"bytes), %llu written, %llu lost, %llu freed again, %llu still held "
			"(inuse samples); %zu allocator files probed, %zu failed\n",
			(unsigned long long)a->calls, (unsigned long long)a->sampled,
			(unsigned long long)a->interval, (unsigned long long)a->written,
			(unsigned long long)a->lost, (unsigned long long)a->freed,
			(unsigned long long)a->inuse, a->files_probed, a->probe_errors);
	if (a->probe_errors)
		fprintf(stderr, "bpfrec record: warning: %zu allocator files could not be probed: "
			"their allocations are not recorded (run with -v)\n", a->probe_errors);
	if (a->live_full)
		fprintf(stderr, "bpfrec record: warning: %llu sampled allocations did not fit in the "
			"map of live ones and are missing from inuse: raise --alloc\n",
			(unsigned long long)a->live_full);
}

static void summary(const struct bpfrec_record *rec, const struct bpfrec_record_stats *s,
		    bool to_stdout, bool verbose)
{
	struct bpfrec_record_stats st = *s;
	BPFREC_OPTS(bpfrec_unwind_stats, unwind);
	BPFREC_OPTS(bpfrec_alloc_stats, alloc);
	BPFREC_OPTS(bpfrec_offcpu_stats, offcpu);

	fprintf(stderr, "[ bpfrec record: Captured and wrote %.3f MB %s (%llu samples, %llu lost) ]\n",
		(double)st.bytes / (1024.0 * 1024.0), to_stdout ? "to stdout" : st.file,
		(unsigned long long)st.samples, (unsigned long long)st.lost);
	if (verbose)
		fprintf(stderr, "bpfrec record: BPF saw %llu samples: %llu written, %llu lost%s\n",
			(unsigned long long)st.seen, (unsigned long long)st.cpu_samples,
			(unsigned long long)st.cpu_lost,
			st.write_failed ? ", the rest not written (write error)" : "");
	if (verbose) {
		char bpf[256];

		status_bpf_format(bpf, sizeof(bpf), &st);
		fprintf(stderr, "%s\n", bpf);
	}
	if (verbose && st.buildid_cache_dir)
		fprintf(stderr, "bpfrec record: build-id cache %s: %zu files copied, %zu there "
			"already, %zu too big, %zu failed\n", st.buildid_cache_dir, st.buildid_copied,
			st.buildid_present, st.buildid_too_big, st.buildid_failed);
	if (!bpfrec_record_get_unwind_stats(rec, &unwind) && unwind.enabled)
		unwind_summary(&unwind, verbose);
	if (!bpfrec_record_get_alloc_stats(rec, &alloc) && alloc.enabled)
		alloc_summary(&alloc, verbose);
	if (!bpfrec_record_get_offcpu_stats(rec, &offcpu) && offcpu.enabled && verbose)
		fprintf(stderr, "bpfrec record: off-CPU: BPF saw %llu blocked intervals: %llu "
			"written, %llu lost, %llu open at the end; %llu closed without a reported "
			"switch-in\n", (unsigned long long)offcpu.blocked,
			(unsigned long long)offcpu.written, (unsigned long long)offcpu.lost,
			(unsigned long long)(offcpu.blocked - offcpu.written - offcpu.lost),
			(unsigned long long)offcpu.unpaired);
	if (st.lost)
		fprintf(stderr, "bpfrec record: warning: %llu samples were lost (ring buffer full): "
			"raise -m or lower -F\n", (unsigned long long)st.lost);
	if (st.lost_task)
		fprintf(stderr, "bpfrec record: warning: %llu fork/exit/exec notices were lost\n",
			(unsigned long long)st.lost_task);
}

/* --sched: the metrics of every thread summed, in one line. */
static void sched_summary(struct bpfrec_record *rec)
{
	struct bpfrec_sched_thread sum = { 0 };
	struct bpfrec_sched_metrics *m;
	size_t nr;

	if (bpfrec_record_sched_metrics(rec, &m))
		return;
	nr = bpfrec_sched_metrics_nr_threads(m);
	for (size_t i = 0; i < nr; i++) {
		const struct bpfrec_sched_thread *t = bpfrec_sched_metrics_thread(m, i);

		sum.oncpu_ns += t->oncpu_ns;
		sum.runq_count += t->runq_count;
		sum.runq_total_ns += t->runq_total_ns;
		if (t->runq_max_ns > sum.runq_max_ns)
			sum.runq_max_ns = t->runq_max_ns;
		for (int k = 0; k < BPFREC_SCHED_NR_SWITCH; k++)
			sum.switches[k] += t->switches[k];
	}
	fprintf(stderr, "bpfrec record: sched: %zu threads, %.3f ms on CPU, %llu run-queue waits "
		"(%.3f ms, max %.3f ms); switches: %llu preempted, %llu sleep, %llu io, %llu exit "
		"(bpfrec sched -i FILE for details)\n", nr, sum.oncpu_ns / 1e6,
		(unsigned long long)sum.runq_count, sum.runq_total_ns / 1e6, sum.runq_max_ns / 1e6,
		(unsigned long long)sum.switches[BPFREC_SCHED_PREEMPTED],
		(unsigned long long)sum.switches[BPFREC_SCHED_SLEEP],
		(unsigned long long)sum.switches[BPFREC_SCHED_IO],
		(unsigned long long)sum.switches[BPFREC_SCHED_EXIT]);
	bpfrec_sched_metrics_free(m);
}

/*
 * The event loop: the recording's fd and the signalfd polled together, the
 * recording served when it has samples and at least every flush interval.
 */
static int run(struct bpfrec_record *rec, const struct record_args *a, int sfd,
	       struct status_line *line)
{
	double deadline = a->duration > 0 ? mono_s() + a->duration : 0;
	BPFREC_OPTS(bpfrec_record_stats, st);
	int err;

	for (;;) {
		int timeout = line->f ? STATUS_INTERVAL_MS : 1000, due;
		struct pollfd pfds[2] = {
			{ .fd = bpfrec_record_poll_fd(rec), .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
		};
		struct signals sig;

		if (deadline) {
			double left = deadline - mono_s();

			if (left <= 0)
				break;
			if (left * 1000 < timeout)
				timeout = (int)(left * 1000) + 1;
		}
		/* Rounds on time: new processes' unwind tables depend on it. */
		due = bpfrec_record_timeout_ms(rec);
		if (due >= 0 && timeout > due)
			timeout = due;
		if (poll(pfds, 2, timeout) < 0 && errno != EINTR)
			return -errno;
		err = bpfrec_record_poll(rec, 0);
		if (err < 0)
			return err;
		if (status_line_due(line, mono_ns())) {
			bpfrec_record_get_stats(rec, &st);
			status_line_update(line, &st, mono_ns());
		}
		sig = read_signals(sfd);
		if (sig.do_switch && a->opts.switch_output != BPFREC_SWITCH_NONE) {
			err = bpfrec_record_switch_output(rec);
			if (err < 0)
				return err;
		}
		if (err > 0 || sig.stop)
			break;
	}
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct bpfrec_record *rec = NULL;
	struct record_args a;
	BPFREC_OPTS(bpfrec_record_stats, st);
	struct ui ui = { 0 };
	char msg[256];
	const char **cmdline = NULL;
	sigset_t mask, old;
	int sfd, err, code = 1;

	err = record_args_parse(argc, argv, &a, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "bpfrec record: %s\n", msg);
		record_args_free(&a);
		return EXIT_USAGE;
	}
	if (a.help) {
		record_usage(stdout);
		record_args_free(&a);
		return 0;
	}
	cli_libbpf_print(a.verbose);
	cli_recording_malloc();

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGUSR2);
	sigprocmask(SIG_BLOCK, &mask, &old);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		fprintf(stderr, "bpfrec record: signalfd: %s\n", strerror(errno));
		goto out;
	}
	ui.quiet = a.quiet;
	ui.verbose = a.verbose;
	status_line_init(&ui.line, !a.quiet && isatty(STDERR_FILENO) ? stderr : NULL, mono_ns());
	a.opts.log = on_log;
	a.opts.log_ctx = &ui;
	if (!a.quiet) {
		a.opts.on_switch = on_switch;
		a.opts.on_switch_ctx = &ui;
	}
	/* The CMDLINE feature reads like perf's: "bpfrec record ...". */
	cmdline = calloc((size_t)argc + 2, sizeof(*cmdline));
	if (cmdline) {
		cmdline[0] = "bpfrec";
		for (int i = 0; i < argc; i++)
			cmdline[i + 1] = argv[i];
		a.opts.argc = argc + 1;
		a.opts.argv = cmdline;
	}

	err = bpfrec_record_new(&a.opts, &rec);
	if (err) {
		if (rec)
			fprintf(stderr, "bpfrec record: %s\n", bpfrec_record_error(rec));
		code = EXIT_USAGE;
		goto out;
	}
	err = bpfrec_record_open(rec);
	if (!err)
		err = bpfrec_record_start(rec);
	if (err) {
		fprintf(stderr, "bpfrec record: %s\n", bpfrec_record_error(rec));
		code = bpfrec_record_failure_code(rec);
		goto out;
	}

	err = run(rec, &a, sfd, &ui.line);
	status_line_clear(&ui.line);
	if (err)
		fprintf(stderr, "bpfrec record: %s\n", bpfrec_record_error(rec));
	if (bpfrec_record_stop(rec) && !err) {
		fprintf(stderr, "bpfrec record: %s\n", bpfrec_record_error(rec));
		err = -1;
	}
	bpfrec_record_get_stats(rec, &st);
	if (!a.quiet)
		summary(rec, &st, a.opts.output_path && !strcmp(a.opts.output_path, "-"), a.verbose);
	if (!a.quiet && a.opts.sched)
		sched_summary(rec);
	/* A recording that could not be written is a failure, whatever the command did. */
	code = st.write_failed ? 1 : st.exit_code >= 0 ? st.exit_code : err ? 1 : 0;
out:
	bpfrec_record_free(rec);
	if (sfd >= 0) {
		/* Swallow a second Ctrl-C that arrived while stopping: it must not kill us now. */
		read_signals(sfd);
		close(sfd);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(cmdline);
	record_args_free(&a);
	return code;
}
