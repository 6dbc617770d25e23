// SPDX-License-Identifier: MIT
/*
 * cmd_pprof.c - `bpfrec pprof`: convert perf.data (file or pipe) into
 * gzip-compressed pprof profiles, one per event.
 *
 * This file is the command line: options, input, output files and the
 * summary, over the public API (bpfrec/pprof.h) as any program would use
 * it; the conversion itself is convert.c. Outputs are written to a
 * temporary name in the destination directory and renamed only when every
 * profile was written, so a failure never leaves a half-written profile.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpfrec/pprof.h>

#include "tools/cli/commands.h"
#include "tools/cli/filter_args.h"

struct pprof_args {
	struct filter_args common;	/* -i, -o, -q, the filters and symbol options */
	struct bpfrec_pprof_opts conv;
	char labels[1024];		/* every --labels, joined by commas */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: bpfrec pprof [-i FILE] [-o FILE] [options]\n"
"\n"
"Convert perf.data (from perf record or bpfrec record) into a symbolized,\n"
"gzip-compressed pprof profile for `go tool pprof`.\n"
"\n"
INPUT_HELP
"  -o, --output FILE     profile to write [perf.pb.gz]; with several events, one\n"
"                        profile per event: <stem>.<event>.pb.gz (record --alloc's\n"
"                        alloc and inuse events: one Go-style heap profile, 'heap';\n"
"                        record --sched's sched-delay: runq_delay/nanoseconds with\n"
"                        a 'reason' label, preempted or woken)\n"
"      --event NAME      convert only this event ('heap': alloc and inuse)\n"
FILTER_HELP
"      --labels LIST     label each sample: pid,tid,comm,cpu,trace:FIELD\n"
"      --no-symbolize    keep addresses and build-ids only, for a later symbolizer\n"
SYMBOL_HELP
QUIET_HELP);
}

/* The usage error of this command: cli_bad_usage(), its format checked. */
#define bad_usage(...) cli_bad_usage("pprof", __VA_ARGS__)

static int parse_args(int argc, char **argv, struct pprof_args *a)
{
	enum { OPT_LABELS = 256, OPT_NO_SYM };
	static const struct option longopts[] = {
		FILTER_LONGOPTS,
		{ "labels", required_argument, NULL, OPT_LABELS },
		{ "no-symbolize", no_argument, NULL, OPT_NO_SYM },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct filter_args *f = &a->common;
	int opt, err;

	f->input = "perf.data";
	f->output = "perf.pb.gz";
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, FILTER_SHORTOPTS "h", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_LABELS: {
			size_t len = strlen(a->labels);

			/* Checked when the conversion is made (bpfrec_pprof_new). */
			if ((size_t)snprintf(a->labels + len, sizeof(a->labels) - len, "%s%s",
					     len ? "," : "", optarg) >= sizeof(a->labels) - len)
				return bad_usage("too many --labels");
			break;
		}
		case OPT_NO_SYM:
			a->conv.no_symbolize = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			err = filter_args_opt(f, opt, optarg, argv, "pprof");
			if (err)
				return err;
		}
	}
	if (optind < argc)
		return bad_usage("unexpected argument '%s' (the input is given with -i)", argv[optind]);
	if (!f->output[0] || !strcmp(f->output, "-"))
		return bad_usage("-o needs a file name (profiles are binary: no stdout), not '%s'",
				 f->output);
	err = filter_args_check(f, "pprof");
	if (err)
		return err;
	FILTER_ARGS_TO_OPTS(&a->conv, f);
	a->conv.labels = a->labels[0] ? a->labels : NULL;
	return 0;
}

/* ---- output files ---- */

struct output {
	char *path;		/* final name */
	char *tmp;		/* where it is written first */
};

/* "<stem>.<event>.pb.gz" from "cpu.pb.gz" and "cpu-clock". */
static char *event_path(const char *out, const char *event)
{
	static const char *suffixes[] = { ".pb.gz", ".pprof.gz", ".pb", ".gz", ".pprof" };
	const char *base = strrchr(out, '/');
	size_t stem = strlen(out);
	const char *suffix = ".pb.gz";
	char ev[256], *path;
	size_t i;

	base = base ? base + 1 : out;
	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t n = strlen(suffixes[i]);

		if (strlen(base) > n && !strcmp(out + stem - n, suffixes[i])) {
			stem -= n;
			suffix = suffixes[i];
			break;
		}
	}
	/* Event names may hold '/' (cpu/cycles/) or spaces: not in file names. */
	snprintf(ev, sizeof(ev), "%s", event);
	for (char *p = ev; *p; p++)
		if (*p == '/' || *p == ' ')
			*p = '_';
	if (asprintf(&path, "%.*s.%s%s", (int)stem, out, ev, suffix) < 0)
		return NULL;
	return path;
}

static int open_tmp(struct output *o, mode_t mode)
{
	const char *slash = strrchr(o->path, '/');
	int fd;

	if (slash)
		fd = asprintf(&o->tmp, "%.*s/.%s.XXXXXX", (int)(slash - o->path), o->path, slash + 1);
	else
		fd = asprintf(&o->tmp, ".%s.XXXXXX", o->path);
	if (fd < 0) {
		o->tmp = NULL;
		return -ENOMEM;
	}
	fd = mkstemp(o->tmp);
	if (fd < 0) {
		int err = -errno;

		free(o->tmp);
		o->tmp = NULL;
		return err;
	}
	if (fchmod(fd, mode)) {
		int err = -errno;

		close(fd);
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
		return err;
	}
	return fd;
}

static void discard(struct output *outs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (outs[i].tmp)
			unlink(outs[i].tmp);
		free(outs[i].tmp);
		free(outs[i].path);
	}
	free(outs);
}

/* ---- summary ---- */

static void on_log(void *ctx, enum bpfrec_log_level level, const char *msg)
{
	(void)ctx;
	if (level == BPFREC_LOG_WARN)
		fprintf(stderr, "bpfrec pprof: warning: %s\n", msg);
}

/* "bpfrec pprof: <before>N<after>" on stderr, unless n is 0. */
static void say_count(uint64_t n, const char *before, const char *after)
{
	if (n)
		fprintf(stderr, "bpfrec pprof: %s%" PRIu64 "%s\n", before, n, after);
}

static void summary(const struct pprof_args *a, const struct bpfrec_pprof *c)
{
	BPFREC_OPTS(bpfrec_pprof_stats, s);
	const struct bpfrec_pprof_stats *st = &s;

	if (a->common.quiet)
		return;
	bpfrec_pprof_get_stats(c, &s);
	say_count(st->unknown_event, "", " samples with an unknown event id were skipped");
	say_count(st->unknown_pid, "", " samples of processes that no COMM/MMAP record describes "
		  "(their user frames are addresses)");
	say_count(st->bad_records, "", " malformed records were skipped");
	say_count(st->lost, "the recording lost ", " samples");
	say_count(st->filtered, "", " samples filtered out");
	if (st->unwind_samples)
		fprintf(stderr, "bpfrec pprof: DWARF unwinding: %" PRIu64 " samples to %" PRIu64
			" user frames (%.1f each), %" PRIu64 " reached the outermost frame; stopped "
			"early: %" PRIu64 " no CFI, %" PRIu64 " read outside the copied stack, %" PRIu64
			" pc in no file found, %" PRIu64 " at %u frames\n",
			st->unwind_samples, st->unwind_frames,
			(double)st->unwind_frames / (double)st->unwind_samples,
			st->unwind_reached_end, st->unwind_no_cfi, st->unwind_outside_stack,
			st->unwind_no_file, st->unwind_depth, st->unwind_max_frames);
	say_count(st->unwind_no_stack, "", " DWARF-mode samples had no user registers or stack to "
		  "unwind (kernel threads, failed copies)");
	say_count(st->unwind_cut, "", " user stacks were cut to fit 64 KiB records");
	say_count(st->unwind_files_missing, "", " mappings of unwound processes had no file to read "
		  "CFI from");
}

int cmd_pprof(int argc, char **argv)
{
	struct pprof_args a = { .conv = { .sz = sizeof(a.conv) } };
	struct bpfrec_pprof *c = NULL;
	struct output *outs = NULL;
	size_t nr = 0;
	bool pipe_in;
	int err, ret = 1;

	err = parse_args(argc, argv, &a);
	if (err)
		return err == 1 ? 0 : err;
	pipe_in = !strcmp(a.common.input, "-");
	a.conv.input_name = pipe_in ? "stdin" : a.common.input;
	a.conv.log = on_log;

	err = bpfrec_pprof_new(&a.conv, &c);
	if (err) {
		fprintf(stderr, "bpfrec pprof: %s; see 'bpfrec pprof --help'\n",
			c ? bpfrec_pprof_error(c) : strerror(-err));
		bpfrec_pprof_free(c);
		return 2;
	}
	err = pipe_in ? bpfrec_pprof_read_fd(c, STDIN_FILENO) : bpfrec_pprof_read_path(c, a.common.input);
	if (err) {
		fprintf(stderr, "bpfrec pprof: %s\n", bpfrec_pprof_error(c));
		goto out;
	}
	nr = bpfrec_pprof_nr_profiles(c);
	outs = calloc(nr, sizeof(*outs));
	if (!outs)
		goto oom;
	for (size_t i = 0; i < nr; i++) {
		BPFREC_OPTS(bpfrec_pprof_profile_info, info);
		int ofd;

		outs[i].path = nr == 1 ? strdup(a.common.output)
				       : event_path(a.common.output, bpfrec_pprof_profile_name(c, i));
		if (!outs[i].path)
			goto oom;
		/* 0600 like perf.data from record: a profile shows what the programs do. */
		ofd = open_tmp(&outs[i], 0600);
		if (ofd < 0) {
			fprintf(stderr, "bpfrec pprof: cannot create %s: %s\n", outs[i].path,
				strerror(-ofd));
			goto out;
		}
		err = bpfrec_pprof_write_fd(c, i, ofd, &info);
		if (err) {
			fprintf(stderr, "bpfrec pprof: %s: %s\n", outs[i].path, bpfrec_pprof_error(c));
			close(ofd);
			goto out;
		}
		if (close(ofd)) {
			fprintf(stderr, "bpfrec pprof: writing %s: %s\n", outs[i].path,
				strerror(errno));
			goto out;
		}
		if (!a.common.quiet)
			fprintf(stderr, "bpfrec pprof: %s: %" PRIu64 " %s samples, %zu locations, "
				"%zu functions, %zu mappings\n", outs[i].path, info.samples,
				bpfrec_pprof_profile_name(c, i), info.locations, info.functions,
				info.mappings);
	}
	for (size_t i = 0; i < nr; i++) {
		if (rename(outs[i].tmp, outs[i].path)) {
			fprintf(stderr, "bpfrec pprof: cannot rename %s to %s: %s\n", outs[i].tmp,
				outs[i].path, strerror(errno));
			goto out;
		}
		free(outs[i].tmp);
		outs[i].tmp = NULL;
	}
	summary(&a, c);
	ret = 0;
	goto out;
oom:
	fprintf(stderr, "bpfrec pprof: out of memory\n");
out:
	if (outs)
		discard(outs, nr);
	bpfrec_pprof_free(c);
	return ret;
}
