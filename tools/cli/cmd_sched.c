// SPDX-License-Identifier: MIT
/*
 * cmd_sched.c - `bpfrec sched`: the scheduler metrics a `record --sched`
 * file holds, through the library's exporters (<bpfrec/sched.h>).
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpfrec/sched.h>

#include "tools/cli/commands.h"

#define EXIT_USAGE	2

static void usage(FILE *f)
{
	fputs(
"usage: bpfrec sched [options]\n"
"\n"
"Per-process and per-thread scheduler metrics of a `bpfrec record --sched`\n"
"recording: on-CPU time, run-queue latency (waits for a CPU: count, total,\n"
"p50, p99, max) and switch-outs by reason (preempted, sleep, io, exit).\n"
"\n"
"  -i, --input FILE   perf.data to read (default perf.data; '-' = stdin, pipe mode)\n"
"      --hist         also a log2 histogram of run-queue latency per row, as runqlat\n"
"      --threads      rows per thread only\n"
"      --processes    rows per process only\n"
"      --json         one JSON object (fields in Documentation/bpfrec-sched.md)\n"
"  -h, --help\n", f);
}

int cmd_sched(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "hist", no_argument, NULL, 'H' },
		{ "threads", no_argument, NULL, 'T' },
		{ "processes", no_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	BPFREC_OPTS(bpfrec_sched_export_opts, eo);
	struct bpfrec_sched_exporter *e = NULL;
	struct bpfrec_sched_metrics *m = NULL;
	const char *input = "perf.data";
	bool hist = false, json = false;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'H':
			hist = true;
			break;
		case 'T':
			eo.threads = true;
			break;
		case 'P':
			eo.processes = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "bpfrec sched: unknown option; see 'bpfrec sched --help'\n");
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "bpfrec sched: unexpected argument '%s'; give the file with -i\n",
			argv[optind]);
		return EXIT_USAGE;
	}
	if (json && hist) {
		fprintf(stderr, "bpfrec sched: --json already holds the histograms: drop --hist\n");
		return EXIT_USAGE;
	}
	if (!eo.threads && !eo.processes)
		eo.threads = eo.processes = true;

	ret = bpfrec_sched_metrics_read(input, &m);
	if (ret) {
		fprintf(stderr, "bpfrec sched: %s\n", bpfrec_sched_metrics_error(m));
		bpfrec_sched_metrics_free(m);
		return 1;
	}
	ret = json ? bpfrec_sched_json_exporter_new(stdout, &e) :
		     bpfrec_sched_console_exporter_new(stdout, hist, &e);
	if (!ret)
		ret = bpfrec_sched_export(m, &eo, e);
	if (ret)
		fprintf(stderr, "bpfrec sched: cannot write the metrics: %s\n", strerror(-ret));
	bpfrec_sched_exporter_free(e);
	bpfrec_sched_metrics_free(m);
	return ret ? 1 : 0;
}
