// SPDX-License-Identifier: MIT
/* filter_args.c - the options pprof and flamegraph share (see filter_args.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/cli/filter_args.h"

/* "1,2,3" into list after its first `have`; returns the new count or -1. */
static int parse_ids(char *s, uint32_t *list, size_t cap, size_t have)
{
	char *save = NULL, *tok, *end;

	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long v;

		errno = 0;
		v = strtoul(tok, &end, 10);
		if (errno || *end || end == tok || v > UINT32_MAX || have == cap)
			return -1;
		list[have++] = v;
	}
	return have;
}

/* --pid or --tid (name), ids of what ("process", "thread"): arg's added to list. 0 or 2. */
static int ids_opt(const char *cmd, const char *name, const char *what, char *arg,
		   uint32_t *list, size_t *nr)
{
	char orig[256];
	int n;

	snprintf(orig, sizeof(orig), "%s", arg);	/* parse_ids() cuts it up */
	n = parse_ids(arg, list, FILTER_MAX, *nr);
	if (n < 0)
		return cli_bad_usage(cmd, "%s wants at most %d %s ids like 1234,5678, not '%s'",
				     name, FILTER_MAX, what, orig);
	*nr = n;
	return 0;
}

int filter_args_opt(struct filter_args *f, int opt, char *arg, char *const *argv, const char *cmd)
{
	switch (opt) {
	case 'i':
		f->input = arg;
		return 0;
	case 'o':
		f->output = arg;
		return 0;
	case 'q':
		f->quiet = true;
		return 0;
	case FILTER_OPT_EVENT:
		f->event = arg;
		return 0;
	case 'p':
		return ids_opt(cmd, "--pid", "process", arg, f->pids, &f->nr_pids);
	case 't':
		return ids_opt(cmd, "--tid", "thread", arg, f->tids, &f->nr_tids);
	case FILTER_OPT_COMM: {
		char *save = NULL;

		for (char *tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (f->nr_comms == FILTER_MAX)
				return cli_bad_usage(cmd, "too many --comm names (at most 256)");
			f->comms[f->nr_comms++] = tok;
		}
		return 0;
	}
	case FILTER_OPT_KALLSYMS:
		f->kallsyms = arg;
		return 0;
	case FILTER_OPT_SYMFS:
		f->symfs = arg;
		return 0;
	case FILTER_OPT_DEBUG_DIR:
		f->debug_dir = arg;
		return 0;
	}
	return cli_bad_option(cmd, opt, argv);
}

int filter_args_check(const struct filter_args *f, const char *cmd)
{
	struct stat st;

	if (f->kallsyms && access(f->kallsyms, R_OK))
		return cli_bad_usage(cmd, "--kallsyms %s: cannot read it; copy /proc/kallsyms of "
				     "the recording machine (as root) and pass that file", f->kallsyms);
	if (f->symfs && (stat(f->symfs, &st) || !S_ISDIR(st.st_mode)))
		return cli_bad_usage(cmd, "--symfs %s: not a directory", f->symfs);
	if (f->debug_dir && (stat(f->debug_dir, &st) || !S_ISDIR(st.st_mode)))
		return cli_bad_usage(cmd, "--debug-dir %s: not a directory", f->debug_dir);
	return 0;
}
