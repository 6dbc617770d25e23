// SPDX-License-Identifier: MIT
/*
 * cmd_record.c - `bpfrec record`: the command line over recorder/session.h.
 *
 * Signals: SIGINT, SIGTERM, SIGHUP and SIGCHLD are blocked and read from a
 * signalfd that also wakes the session's poll, so a stop request is seen at
 * once and handled outside signal context; SIGPIPE is ignored so a closed
 * output pipe is an EPIPE error, not a silent death.
 *
 * Exit codes: the launched command's (128+N when signal N killed it), 127
 * command not found, 126 not executable, 2 bad usage, 1 other errors, else 0.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "recorder/commands.h"
#include "recorder/record_args.h"
#include "recorder/session.h"

#define EXIT_USAGE 2

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int libbpf_verbose(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return vfprintf(stderr, fmt, ap);
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Drain the signalfd; true when a stop signal (INT, TERM, HUP) arrived. */
static bool stop_requested(int sfd)
{
	struct signalfd_siginfo si;
	bool stop = false;

	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		if (si.ssi_signo != SIGCHLD)
			stop = true;
	return stop;
}

static void summary(struct record_session *s)
{
	struct record_status st;
	const char *out = record_session_output(s);

	record_session_status(s, &st);
	fprintf(stderr, "[ bpfrec record: Captured and wrote %.3f MB %s (%llu samples, %llu lost) ]\n",
		(double)st.bytes / (1024.0 * 1024.0), strcmp(out, "-") ? out : "to stdout",
		(unsigned long long)st.samples, (unsigned long long)st.lost);
	if (st.lost)
		fprintf(stderr, "bpfrec record: warning: %llu samples were lost (ring buffer full): "
			"raise -m or lower -F\n", (unsigned long long)st.lost);
	if (st.lost_task)
		fprintf(stderr, "bpfrec record: warning: %llu fork/exit/exec notices were lost\n",
			(unsigned long long)st.lost_task);
}

static int run(struct record_session *s, const struct record_args *a, int sfd)
{
	double deadline = a->duration > 0 ? mono_s() + a->duration : 0;
	int err;

	for (;;) {
		int timeout = 1000;

		if (deadline) {
			double left = deadline - mono_s();

			if (left <= 0)
				break;
			if (left * 1000 < timeout)
				timeout = (int)(left * 1000) + 1;
		}
		err = record_session_poll(s, timeout);
		if (err < 0)
			return err;
		if (err > 0 || stop_requested(sfd))
			break;
	}
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct record_session *s = NULL;
	struct record_args a;
	struct record_status st;
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
	libbpf_set_print(a.verbose ? libbpf_verbose : libbpf_quiet);

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &old);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		fprintf(stderr, "bpfrec record: signalfd: %s\n", strerror(errno));
		goto out;
	}
	a.opts.wake_fd = sfd;
	/* The CMDLINE feature reads like perf's: "bpfrec record ...". */
	cmdline = calloc((size_t)argc + 2, sizeof(*cmdline));
	if (cmdline) {
		cmdline[0] = "bpfrec";
		for (int i = 0; i < argc; i++)
			cmdline[i + 1] = argv[i];
		a.opts.argc = argc + 1;
		a.opts.argv = cmdline;
	}

	err = record_session_new(&a.opts, &s);
	if (err) {
		if (s)
			fprintf(stderr, "bpfrec record: %s\n", record_session_error(s));
		code = EXIT_USAGE;
		goto out;
	}
	err = record_session_open(s);
	if (!err)
		err = record_session_start(s);
	if (err) {
		fprintf(stderr, "bpfrec record: %s\n", record_session_error(s));
		code = record_session_failure_code(s);
		goto out;
	}

	err = run(s, &a, sfd);
	if (err)
		fprintf(stderr, "bpfrec record: %s\n", record_session_error(s));
	if (record_session_stop(s) && !err) {
		fprintf(stderr, "bpfrec record: %s\n", record_session_error(s));
		err = -1;
	}
	if (!a.opts.quiet)
		summary(s);
	record_session_status(s, &st);
	code = st.exit_code >= 0 ? st.exit_code : err ? 1 : 0;
out:
	record_session_close(s);
	if (sfd >= 0) {
		/* Swallow a second Ctrl-C that arrived while stopping: it must not kill us now. */
		stop_requested(sfd);
		close(sfd);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(cmdline);
	record_args_free(&a);
	return code;
}
