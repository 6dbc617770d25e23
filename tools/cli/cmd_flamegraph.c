// SPDX-License-Identifier: MIT
/*
 * cmd_flamegraph.c - `bpfrec flamegraph`: perf.data (file or pipe) to one
 * self-contained flame graph, an interactive HTML page or a static SVG.
 *
 * The command line over the public API (bpfrec/flamegraph.h); the graph is
 * tools/flamegraph/. The output is written to a temporary name and renamed
 * when complete, so a failure never leaves a half-written file.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpfrec/flamegraph.h>

#include "tools/cli/commands.h"
#include "tools/cli/filter_args.h"

struct flamegraph_args {
	struct filter_args common;	/* -i, -o, -q, the filters and symbol options */
	const char *base;		/* --diff */
	struct bpfrec_flamegraph_opts fg;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: bpfrec flamegraph [-i FILE] [-o FILE] [options]\n"
"\n"
"Draw perf.data (from perf record or bpfrec record) as a flame graph: one\n"
"self-contained HTML page (click to zoom, search, filters, one view per\n"
"event), or a static SVG. Nothing in the page is fetched from anywhere.\n"
"\n"
INPUT_HELP
"  -o, --output FILE     the graph to write [flame.html, or flame.svg]\n"
"      --format FMT      html (interactive) or svg (static: the first event's\n"
"                        view; pick another with --event) [from -o's suffix, else html]\n"
"      --icicle          root at the top\n"
"      --diff BASE       a differential graph: widths from the input, colours\n"
"                        from each frame's share against BASE's (a perf.data):\n"
"                        red grew, blue shrank\n"
"      --min-width PCT   fold frames narrower than PCT %% of the whole into one per\n"
"                        parent [0.01]; 0 folds nothing\n"
"      --title TEXT      the graph's title\n"
"      --event NAME      draw only this event ('heap': alloc and inuse)\n"
FILTER_HELP
SYMBOL_HELP
QUIET_HELP);
}

/* The usage error of this command: cli_bad_usage(), its format checked. */
#define bad_usage(...) cli_bad_usage("flamegraph", __VA_ARGS__)

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcasecmp(s + n - m, suffix);
}

static int parse_args(int argc, char **argv, struct flamegraph_args *a)
{
	enum { OPT_FORMAT = 256, OPT_ICICLE, OPT_DIFF, OPT_MIN_WIDTH, OPT_TITLE };
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "icicle", no_argument, NULL, OPT_ICICLE },
		{ "diff", required_argument, NULL, OPT_DIFF },
		{ "min-width", required_argument, NULL, OPT_MIN_WIDTH },
		{ "title", required_argument, NULL, OPT_TITLE },
		FILTER_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct filter_args *f = &a->common;
	const char *format = NULL;
	int opt, err;

	f->input = "perf.data";
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, FILTER_SHORTOPTS "h", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_FORMAT:
			format = optarg;
			break;
		case OPT_ICICLE:
			a->fg.icicle = true;
			break;
		case OPT_DIFF:
			a->base = optarg;
			break;
		case OPT_MIN_WIDTH: {
			char *end;
			double pct;

			errno = 0;
			pct = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(pct >= 0 && pct < 100))
				return bad_usage("--min-width wants a percentage from 0 to 100 like "
						 "0.01, not '%s'", optarg);
			a->fg.min_share = pct ? pct / 100 : -1;
			break;
		}
		case OPT_TITLE:
			a->fg.title = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			err = filter_args_opt(f, opt, optarg, argv, "flamegraph");
			if (err)
				return err;
		}
	}
	if (optind < argc)
		return bad_usage("unexpected argument '%s' (the input is given with -i)", argv[optind]);
	if (!format)
		format = f->output && ends_with(f->output, ".svg") ? "svg" : "html";
	if (!strcmp(format, "svg"))
		a->fg.format = BPFREC_FLAMEGRAPH_SVG;
	else if (strcmp(format, "html"))
		return bad_usage("--format is html or svg, not '%s'", format);
	if (!f->output)
		f->output = a->fg.format == BPFREC_FLAMEGRAPH_SVG ? "flame.svg" : "flame.html";
	if (!f->output[0])
		return bad_usage("-o needs a file name ('-' is the standard output)");
	if (a->base && !strcmp(a->base, "-") && !strcmp(f->input, "-"))
		return bad_usage("the input and the --diff base cannot both be the pipe");
	err = filter_args_check(f, "flamegraph");
	if (err)
		return err;
	a->fg.diff = a->base != NULL;
	FILTER_ARGS_TO_OPTS(&a->fg, f);
	return 0;
}

static void on_log(void *ctx, enum bpfrec_log_level level, const char *msg)
{
	(void)ctx;
	if (level == BPFREC_LOG_WARN)
		fprintf(stderr, "bpfrec flamegraph: warning: %s\n", msg);
}

static int read_one(struct bpfrec_flamegraph *fg, const char *path, bool base)
{
	if (!strcmp(path, "-"))
		return base ? bpfrec_flamegraph_read_base_fd(fg, STDIN_FILENO)
			    : bpfrec_flamegraph_read_fd(fg, STDIN_FILENO);
	return base ? bpfrec_flamegraph_read_base_path(fg, path)
		    : bpfrec_flamegraph_read_path(fg, path);
}

int cmd_flamegraph(int argc, char **argv)
{
	struct flamegraph_args a = { .fg = { .sz = sizeof(a.fg) } };
	BPFREC_OPTS(bpfrec_flamegraph_info, info);
	struct bpfrec_flamegraph *fg = NULL;
	int err, ret = 1;

	err = parse_args(argc, argv, &a);
	if (err)
		return err == 1 ? 0 : err;
	a.fg.input_name = !strcmp(a.common.input, "-") ? "stdin" : a.common.input;
	a.fg.base_name = a.base && !strcmp(a.base, "-") ? "stdin" : a.base;
	a.fg.log = on_log;

	err = bpfrec_flamegraph_new(&a.fg, &fg);
	if (err) {
		fprintf(stderr, "bpfrec flamegraph: %s; see 'bpfrec flamegraph --help'\n",
			fg ? bpfrec_flamegraph_error(fg) : strerror(-err));
		bpfrec_flamegraph_free(fg);
		return 2;
	}
	err = read_one(fg, a.common.input, false);
	if (!err && a.base)
		err = read_one(fg, a.base, true);
	if (!err)
		err = !strcmp(a.common.output, "-") ?
			      bpfrec_flamegraph_write_fd(fg, STDOUT_FILENO, &info) :
			      bpfrec_flamegraph_write_path(fg, a.common.output, &info);
	if (err) {
		fprintf(stderr, "bpfrec flamegraph: %s\n", bpfrec_flamegraph_error(fg));
		goto out;
	}
	if (!a.common.quiet) {
		fprintf(stderr, "bpfrec flamegraph: %s: ", a.common.output);
		for (size_t i = 0; i < info.views; i++)
			fprintf(stderr, "%s%s", i ? ", " : "", bpfrec_flamegraph_view_name(fg, i));
		fprintf(stderr, "; %" PRIu64 " frames, %" PRIu64 " folded, %" PRIu64 " bytes\n",
			info.frames, info.folded, info.bytes);
	}
	ret = 0;
out:
	bpfrec_flamegraph_free(fg);
	return ret;
}
