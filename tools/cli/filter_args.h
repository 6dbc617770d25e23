/* SPDX-License-Identifier: MIT */
/*
 * filter_args.h - the options `bpfrec pprof` and `bpfrec flamegraph` share,
 * spelled and checked the same way in both: what they read and write (-i,
 * -o), which samples (--event, --pid, --tid, --comm), where symbols come
 * from (--kallsyms, --symfs, --debug-dir) and -q. Messages go to stderr as
 * usage errors (usage.h).
 */
#ifndef TOOLS_CLI_FILTER_ARGS_H
#define TOOLS_CLI_FILTER_ARGS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/cli/usage.h"

#define FILTER_MAX 256

struct filter_args {
	const char *input, *output;	/* -i, -o: the command sets their defaults first */
	bool quiet;			/* -q: no summary on stderr */
	const char *event;
	uint32_t pids[FILTER_MAX], tids[FILTER_MAX];
	size_t nr_pids, nr_tids;
	const char *comms[FILTER_MAX];
	size_t nr_comms;
	const char *kallsyms, *symfs, *debug_dir;
};

enum {
	FILTER_OPT_EVENT = 512,
	FILTER_OPT_COMM,
	FILTER_OPT_KALLSYMS,
	FILTER_OPT_SYMFS,
	FILTER_OPT_DEBUG_DIR,
};

/*
 * getopt_long's short options for these, the command's own (and h) after
 * them; ':' first, so that a missing value is reported as such.
 */
#define FILTER_SHORTOPTS ":i:o:p:t:q"
/* getopt_long entries. */
#define FILTER_LONGOPTS \
	{ "input", required_argument, NULL, 'i' }, \
	{ "output", required_argument, NULL, 'o' }, \
	{ "quiet", no_argument, NULL, 'q' }, \
	{ "event", required_argument, NULL, FILTER_OPT_EVENT }, \
	{ "pid", required_argument, NULL, 'p' }, \
	{ "tid", required_argument, NULL, 't' }, \
	{ "comm", required_argument, NULL, FILTER_OPT_COMM }, \
	{ "kallsyms", required_argument, NULL, FILTER_OPT_KALLSYMS }, \
	{ "symfs", required_argument, NULL, FILTER_OPT_SYMFS }, \
	{ "debug-dir", required_argument, NULL, FILTER_OPT_DEBUG_DIR }

/* The --help lines of these options (-o's are the command's). */
#define INPUT_HELP \
"  -i, --input FILE      perf.data to read; '-' reads a pipe (perf record -o -)\n" \
"                        [perf.data]\n"
#define FILTER_HELP \
"  -p, --pid PID[,PID]   only samples of these processes\n" \
"  -t, --tid TID[,TID]   only samples of these threads\n" \
"      --comm NAME[,..]  only samples of threads with these command names\n"
#define SYMBOL_HELP \
"      --kallsyms FILE   kernel symbols [/proc/kallsyms]\n" \
"      --symfs DIR       look for every binary under DIR (as perf report --symfs)\n" \
"      --debug-dir DIR   separate debug info [/usr/lib/debug]\n"
/* -q's line, and -h's, the last of both commands' help. */
#define QUIET_HELP \
"  -q, --quiet           no summary on stderr\n" \
"  -h, --help            this text\n"

/*
 * An option getopt_long() returned that the command's own switch does not
 * take (its default case), with its argument (cut up in place): 0 when it
 * is one of these, else 2 after a message on stderr (the exit code): a bad
 * value, or the usage error of an option that is none of these
 * (cli_bad_option(): argv is the command's).
 */
int filter_args_opt(struct filter_args *f, int opt, char *arg, char *const *argv, const char *cmd);
/* Once every option is in: the files and directories named exist. 0 or 2. */
int filter_args_check(const struct filter_args *f, const char *cmd);

/*
 * The filters and symbol options into *o, a public opts struct with
 * BPFREC_SAMPLE_FILTER_FIELDS and BPFREC_SYMBOL_SOURCE_FIELDS
 * (bpfrec_pprof_opts, bpfrec_flamegraph_opts); the arrays stay f's.
 */
#define FILTER_ARGS_TO_OPTS(o, f)			\
	do {						\
		(o)->event = (f)->event;		\
		(o)->pids = (f)->pids;			\
		(o)->nr_pids = (f)->nr_pids;		\
		(o)->tids = (f)->tids;			\
		(o)->nr_tids = (f)->nr_tids;		\
		(o)->comms = (f)->comms;		\
		(o)->nr_comms = (f)->nr_comms;		\
		(o)->kallsyms = (f)->kallsyms;		\
		(o)->symfs = (f)->symfs;		\
		(o)->debug_dir = (f)->debug_dir;	\
	} while (0)

#endif /* TOOLS_CLI_FILTER_ARGS_H */
