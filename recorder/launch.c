// SPDX-License-Identifier: MIT
/* launch.c - fork a held child, then exec it on cue (contract in launch.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recorder/launch.h"

static int check_exec(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return errno == ENOTDIR ? -ENOENT : -errno;
	if (!S_ISREG(st.st_mode) || access(path, X_OK) < 0)
		return -EACCES;
	return 0;
}

int launch_resolve(const char *name, char *path, size_t size)
{
	const char *dirs = getenv("PATH");
	int err = -ENOENT;

	if (!*name)
		return -ENOENT;
	if (strchr(name, '/')) {
		if ((size_t)snprintf(path, size, "%s", name) >= size)
			return -ENAMETOOLONG;
		return check_exec(path);
	}
	if (!dirs)
		dirs = "/usr/local/bin:/usr/bin:/bin";
	while (dirs) {
		const char *end = strchr(dirs, ':');
		size_t len = end ? (size_t)(end - dirs) : strlen(dirs);
		int e;

		/* An empty PATH entry is the current directory. */
		if ((size_t)snprintf(path, size, "%.*s%s%s", (int)len, dirs, len ? "/" : "./",
				     name) < size) {
			e = check_exec(path);
			if (!e)
				return 0;
			if (e == -EACCES)
				err = e;	/* keep looking; report it if nothing better */
		}
		dirs = end ? end + 1 : NULL;
	}
	return err;
}

static void __attribute__((noreturn)) child(const char *path, char *const argv[], int go,
					    int errpipe, char *const env[], bool stdout_to_stderr)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE, SIGQUIT };
	sigset_t none;
	char c = 0;	/* stays 0 on EOF */
	int e;

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (stdout_to_stderr)
		dup2(STDERR_FILENO, STDOUT_FILENO);
	/* Wait for the cue; EOF means the recorder gave up. */
	while (read(go, &c, 1) < 0 && errno == EINTR)
		;
	if (c != 'g')
		_exit(127);
	for (size_t i = 0; env && env[i]; i++)
		putenv(env[i]);
	execv(path, argv);
	e = errno;
	if (write(errpipe, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(launch_errno_exit_code(e));
}

int launch_fork(struct launch *l, const char *path, char *const argv[], bool stdout_to_stderr)
{
	return launch_fork_env(l, path, argv, NULL, stdout_to_stderr);
}

int launch_fork_env(struct launch *l, const char *path, char *const argv[], char *const env[],
		    bool stdout_to_stderr)
{
	int go[2], errp[2];
	pid_t pid;

	*l = (struct launch){ .go_fd = -1, .err_fd = -1 };
	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(errp, O_CLOEXEC) < 0) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(go[0]);
		close(go[1]);
		close(errp[0]);
		close(errp[1]);
		return err;
	}
	if (pid == 0) {
		close(go[1]);
		close(errp[0]);
		child(path, argv, go[0], errp[1], env, stdout_to_stderr);
	}
	close(go[0]);
	close(errp[1]);
	l->pid = pid;
	l->go_fd = go[1];
	l->err_fd = errp[0];
	return 0;
}

int launch_release(struct launch *l)
{
	int e = 0;
	ssize_t n;

	if (write(l->go_fd, "g", 1) != 1)
		return -errno;
	close(l->go_fd);
	l->go_fd = -1;
	do
		n = read(l->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		while (waitpid(l->pid, &l->status, 0) < 0 && errno == EINTR)
			;
		l->reaped = true;
		return -e;
	}
	return 0;
}

int launch_poll(struct launch *l)
{
	pid_t r;

	if (!l->pid || l->reaped)
		return 1;
	r = waitpid(l->pid, &l->status, WNOHANG);
	if (r == l->pid || (r < 0 && errno == ECHILD)) {
		l->reaped = true;
		return 1;
	}
	return 0;
}

void launch_terminate(struct launch *l)
{
	if (!l->pid)
		return;
	if (l->go_fd >= 0) {
		close(l->go_fd);
		l->go_fd = -1;
	} else if (!l->reaped) {
		kill(l->pid, SIGTERM);
	}
	if (l->err_fd >= 0) {
		close(l->err_fd);
		l->err_fd = -1;
	}
	if (!l->reaped) {
		while (waitpid(l->pid, &l->status, 0) < 0 && errno == EINTR)
			;
		l->reaped = true;
	}
}

int launch_exit_code(const struct launch *l)
{
	if (!l->pid || !l->reaped)
		return -1;
	if (WIFEXITED(l->status))
		return WEXITSTATUS(l->status);
	if (WIFSIGNALED(l->status))
		return 128 + WTERMSIG(l->status);
	return -1;
}

int launch_errno_exit_code(int err)
{
	return err == ENOENT || err == ENOTDIR ? 127 : 126;
}
