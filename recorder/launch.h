/* SPDX-License-Identifier: MIT */
/*
 * launch.h - start the command to profile so that its first instruction is
 * already sampled.
 *
 * launch_resolve() finds the program as execvp(3) would, so "command not
 * found" is known before anything is created. launch_fork() forks a child
 * that waits on a pipe; the recorder puts the child's pid in scope and
 * attaches, then launch_release() lets it exec and reports whether the exec
 * worked (an O_CLOEXEC pipe stays silent on success). The child unblocks
 * every signal and restores SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE and
 * SIGQUIT to their defaults before exec, whatever the recorder set up.
 */
#ifndef RECORDER_LAUNCH_H
#define RECORDER_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct launch {
	pid_t pid;		/* 0 = no child */
	int go_fd;		/* write end: one byte = exec now, EOF = give up */
	int err_fd;		/* read end: the child's exec errno, EOF = exec'd */
	bool reaped;
	int status;		/* waitpid status once reaped */
};

/*
 * Find name on PATH (or take it as a path when it has a '/'). 0 and path
 * filled, -ENOENT when nothing by that name exists, -EACCES when it exists
 * but is not an executable file.
 */
int launch_resolve(const char *name, char *path, size_t size);
/* Fork the held child for path/argv. stdout_to_stderr: the child's fd 1 becomes fd 2. */
int launch_fork(struct launch *l, const char *path, char *const argv[], bool stdout_to_stderr);
/*
 * The same, the child's environment also given the "NAME=VALUE" strings of
 * env (NULL-terminated; NULL = none), which must outlive the exec.
 */
int launch_fork_env(struct launch *l, const char *path, char *const argv[], char *const env[],
		    bool stdout_to_stderr);
/* Let the child exec. 0, or -errno of the failed exec (the child is reaped). */
int launch_release(struct launch *l);
/* Reap without blocking: 1 when the child is gone, 0 while it runs. */
int launch_poll(struct launch *l);
/* Stop a child still running: never released = EOF on its pipe; else SIGTERM. Then reap. */
void launch_terminate(struct launch *l);
/* Exit code of a reaped child, shell style: its status, or 128 + signal; -1 if not reaped. */
int launch_exit_code(const struct launch *l);
/* The exit code a shell gives for an exec errno: 127 not found, 126 otherwise. */
int launch_errno_exit_code(int err);

#endif /* RECORDER_LAUNCH_H */
