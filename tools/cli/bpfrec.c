// SPDX-License-Identifier: MIT
/* bpfrec.c - main(): dispatch to a subcommand, as git and perf do. */
#include <stdio.h>
#include <string.h>

#include <bpfrec/common.h>

#include "tools/cli/commands.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "record", cmd_record, "sample CPUs with BPF and write perf.data" },
	{ "pprof", cmd_pprof, "convert perf.data to a symbolized pprof profile" },
	{ "flamegraph", cmd_flamegraph, "draw perf.data as a flame graph (HTML page or SVG)" },
	{ "dump", cmd_dump, "print a perf.data file's header, features and records" },
	{ "sched", cmd_sched, "scheduler metrics per process and thread (record --sched)" },
	{ "agent", cmd_agent, "profile continuously and push pprof to Pyroscope or Parca" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: bpfrec <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n'bpfrec <command> --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("bpfrec %s\n", bpfrec_version());
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "bpfrec: unknown command '%s'; see 'bpfrec --help'\n", argv[1]);
	return 2;
}
