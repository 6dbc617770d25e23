/* SPDX-License-Identifier: MIT */
/* commands.h - the subcommands of bpfrec. Each returns the process exit code. */
#ifndef RECORDER_COMMANDS_H
#define RECORDER_COMMANDS_H

int cmd_record(int argc, char **argv);	/* tools/cli/cmd_record.c */
int cmd_pprof(int argc, char **argv);	/* tools/cli/cmd_pprof.c */
int cmd_flamegraph(int argc, char **argv);	/* tools/cli/cmd_flamegraph.c */
int cmd_dump(int argc, char **argv);	/* tools/cli/dump.c */
int cmd_sched(int argc, char **argv);	/* tools/cli/cmd_sched.c */
int cmd_agent(int argc, char **argv);	/* tools/cli/cmd_agent.c */

#endif
