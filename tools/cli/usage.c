// SPDX-License-Identifier: MIT
/* usage.c - usage errors of the subcommands (see usage.h). */
#include <getopt.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "tools/cli/usage.h"

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

int cli_bad_option(const char *cmd, int opt, char *const *argv)
{
	if (opt == ':')
		return cli_bad_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
	return cli_bad_usage(cmd, "unknown option '%s'", argv[optind - 1]);
}

int cli_bad_msg(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}
