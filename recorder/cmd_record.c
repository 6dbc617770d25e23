// SPDX-License-Identifier: MIT
/* Placeholder until this subcommand lands; the owner replaces this file. */
#include <stdio.h>
#include "recorder/commands.h"

int cmd_record(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "bpfrec %s: not built yet\n", argv[0]);
	return 1;
}
