/* SPDX-License-Identifier: MIT */
/*
 * usage.h - how a subcommand says its command line is wrong: one line on
 * stderr, "bpfrec CMD: <what>; see 'bpfrec CMD --help'", and exit code 2.
 * For the commands that parse with getopt_long(":..."), opterr = 0, so that
 * the message is theirs (pprof, flamegraph, dump).
 */
#ifndef TOOLS_CLI_USAGE_H
#define TOOLS_CLI_USAGE_H

#include <stddef.h>

/* Print "bpfrec CMD: <fmt, ...>; see 'bpfrec CMD --help'" and return 2. */
int cli_bad_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * An option getopt_long() returned that the command does not take: ':' for
 * one whose value is missing, anything else for an unknown one (the word
 * is argv[optind - 1]). Said with cli_bad_usage(); returns 2.
 */
int cli_bad_option(const char *cmd, int opt, char *const *argv);

/*
 * For parsers that hand their message back to the caller (record_args.c,
 * cmd_agent.c): fmt into err (len bytes, truncated, terminated); returns
 * -EINVAL.
 */
int cli_bad_msg(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif /* TOOLS_CLI_USAGE_H */
