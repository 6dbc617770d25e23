// SPDX-License-Identifier: MIT
/* filter_args.c - the sample filters and symbol options of pprof and flamegraph (see filter_args.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/cli/filter_args.h"

int cli_bad_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bpfrec %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; see 'bpfrec %s --help'\n", cmd);
	return 2;
}

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

int filter_args_opt(struct filter_args *f, int opt, char *arg, const char *cmd)
{
	char orig[256];
	int n;

	switch (opt) {
	case FILTER_OPT_EVENT:
		f->event = arg;
		return 0;
	case 'p':
		snprintf(orig, sizeof(orig), "%s", arg);	/* parse_ids() cuts it up */
		n = parse_ids(arg, f->pids, FILTER_MAX, f->nr_pids);
		if (n < 0)
			return cli_bad_usage(cmd, "--pid wants at most 256 process ids like "
					     "1234,5678, not '%s'", orig);
		f->nr_pids = n;
		return 0;
	case 't':
		snprintf(orig, sizeof(orig), "%s", arg);
		n = parse_ids(arg, f->tids, FILTER_MAX, f->nr_tids);
		if (n < 0)
			return cli_bad_usage(cmd, "--tid wants at most 256 thread ids like "
					     "1234,5678, not '%s'", orig);
		f->nr_tids = n;
		return 0;
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
	return 1;
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
