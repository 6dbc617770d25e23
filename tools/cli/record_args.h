/* SPDX-License-Identifier: MIT */
/*
 * record_args.h - the command line of `bpfrec record`, as perf record
 * spells it, turned into struct record_opts.
 *
 * Parsing stops at "--" or at the first word that is not an option: the
 * rest is the command to launch (perf record ./prog args works too). Every
 * error is one line naming the option and what it accepts.
 */
#ifndef RECORDER_RECORD_ARGS_H
#define RECORDER_RECORD_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <bpfrec/record.h>

struct record_args {
	struct bpfrec_record_opts opts;	/* points into the arrays below and into argv */
	pid_t *pids, *tids;
	int *cpus;
	double duration;		/* --duration seconds; 0 = until the workload ends */
	bool help;			/* -h: print usage, exit 0 */
	bool quiet;			/* -q: no warnings, no summary */
	bool verbose;			/* -v: notes, per-file details and libbpf's messages */
};

#define RECORD_DEFAULT_FREQ 4000

/* 0, or -EINVAL with a message in err. Frees nothing on error: call record_args_free. */
int record_args_parse(int argc, char **argv, struct record_args *a, char *err, size_t errlen);
void record_args_free(struct record_args *a);
void record_usage(FILE *f);

#endif /* RECORDER_RECORD_ARGS_H */
