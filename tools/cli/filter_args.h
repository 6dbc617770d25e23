/* SPDX-License-Identifier: MIT */
/*
 * filter_args.h - the options `bpfrec pprof` and `bpfrec flamegraph` share,
 * spelled and checked the same way in both: which samples (--event, --pid,
 * --tid, --comm) and where symbols come from (--kallsyms, --symfs,
 * --debug-dir). Messages go to stderr as "bpfrec CMD: ...; see 'bpfrec
 * CMD --help'".
 */
#ifndef TOOLS_CLI_FILTER_ARGS_H
#define TOOLS_CLI_FILTER_ARGS_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>

#define FILTER_MAX 256

struct filter_args {
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

/* getopt_long entries (short options: p: and t:). */
#define FILTER_LONGOPTS \
	{ "event", required_argument, NULL, FILTER_OPT_EVENT }, \
	{ "pid", required_argument, NULL, 'p' }, \
	{ "tid", required_argument, NULL, 't' }, \
	{ "comm", required_argument, NULL, FILTER_OPT_COMM }, \
	{ "kallsyms", required_argument, NULL, FILTER_OPT_KALLSYMS }, \
	{ "symfs", required_argument, NULL, FILTER_OPT_SYMFS }, \
	{ "debug-dir", required_argument, NULL, FILTER_OPT_DEBUG_DIR }

/* The --help lines of these options. */
#define FILTER_HELP \
"  -p, --pid PID[,PID]   only samples of these processes\n" \
"  -t, --tid TID[,TID]   only samples of these threads\n" \
"      --comm NAME[,..]  only samples of threads with these command names\n"
#define SYMBOL_HELP \
"      --kallsyms FILE   kernel symbols [/proc/kallsyms]\n" \
"      --symfs DIR       look for every binary under DIR (as perf report --symfs)\n" \
"      --debug-dir DIR   separate debug info [/usr/lib/debug]\n"

/* Print "bpfrec CMD: <fmt, ...>; see 'bpfrec CMD --help'" and return 2. */
int cli_bad_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Option opt with its argument (cut up in place): 0 when taken, 1 when it
 * is not one of these, 2 after a message on stderr (the exit code).
 */
int filter_args_opt(struct filter_args *f, int opt, char *arg, const char *cmd);
/* Once every option is in: the files and directories named exist. 0 or 2. */
int filter_args_check(const struct filter_args *f, const char *cmd);

#endif /* TOOLS_CLI_FILTER_ARGS_H */
