// SPDX-License-Identifier: MIT
/*
 * targets.c - the session's targets (session_int.h): -p/-t checked in /proc
 * (alive, their maps readable), -C against the online CPUs, the command
 * found on PATH; the -p/-t targets described before the first sample; and
 * whether they are all gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder/cpulist.h"
#include "recorder/emit.h"
#include "recorder/launch.h"
#include "recorder/privs.h"
#include "recorder/session_int.h"
#include "recorder/tasks.h"

/* 'R', 'S', ... from /proc/PID/stat, or 0 when there is no such task. */
static char task_state(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static bool task_alive(pid_t pid)
{
	char st = task_state(pid);

	return st && st != 'Z' && st != 'X';
}

/* The thread-group id of a task, from /proc/TID/status; 0 when gone. */
static pid_t task_tgid(pid_t tid)
{
	char path[64], line[256];
	pid_t tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/*
 * A -p/-t target whose maps we may not read would be recorded without its
 * user-space symbols: refuse it, as perf does (its per-task events need the
 * same ptrace access).
 */
static int check_target_maps(struct record_session *s, pid_t tid, const char *opt)
{
	pid_t tgid = task_tgid(tid);
	char path[64], what[96];
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	err = -errno;
	if (!privs_is_denial(err))
		return 0;	/* gone meanwhile: that is for the recording to find */
	snprintf(what, sizeof(what), "cannot read %s of %s %d", path, opt, (int)tid);
	return session_priv_fail(s, PRIV_STEP_MAPS, err, what);
}

int session_check_targets(struct record_session *s)
{
	int *online = NULL;
	size_t nr_online = 0;
	int err;

	for (size_t i = 0; i < s->opts.nr_pids; i++) {
		pid_t tgid = task_alive(s->pids[i]) ? task_tgid(s->pids[i]) : 0;

		if (s->pids[i] <= 0 || !tgid)
			return session_fail(s, -ESRCH, "no such process: -p %d (check the PID with "
					    "ps)", (int)s->pids[i]);
		s->pids[i] = tgid;	/* a thread id names its process, as in perf */
	}
	for (size_t i = 0; i < s->opts.nr_tids; i++)
		if (s->tids[i] <= 0 || !task_alive(s->tids[i]))
			return session_fail(s, -ESRCH, "no such thread: -t %d (check the TID with "
					    "ps -L)", (int)s->tids[i]);
	for (size_t i = 0; i < s->opts.nr_pids + s->opts.nr_tids; i++) {
		bool pid = i < s->opts.nr_pids;

		err = check_target_maps(s, pid ? s->pids[i] : s->tids[i - s->opts.nr_pids],
					pid ? "-p" : "-t");
		if (err)
			return err;
	}

	err = cpulist_online(NULL, &online, &nr_online);
	if (err)
		return session_fail(s, err, "cannot read the online CPUs: %s", strerror(-err));
	for (size_t i = 0; i < s->nr_cpus; i++) {
		bool ok = false;

		for (size_t j = 0; j < nr_online; j++)
			ok |= online[j] == s->cpus[i];
		if (!ok) {
			session_fail(s, -EINVAL, "CPU %d is not online: pick -C from the online "
				     "CPUs", s->cpus[i]);
			free(online);
			return -EINVAL;
		}
	}
	if (!s->cpus) {
		s->cpus = online;
		s->nr_cpus = nr_online;
	} else {
		free(online);
	}

	if (s->opts.command) {
		const char *name = s->opts.command[0];

		err = launch_resolve(name, s->cmd_path, sizeof(s->cmd_path));
		if (err) {
			s->failure_code = launch_errno_exit_code(-err);
			if (err == -ENOENT)
				return session_fail(s, err, "command not found: '%s' (check "
						    "the name and PATH)", name);
			return session_fail(s, err, "cannot execute '%s': %s", name,
					    err == -EACCES ? "not an executable file" :
							     strerror(-err));
		}
	}
	return 0;
}

/*
 * Targets named with -p/-t exist before the first sample: describe them now,
 * as perf does, stamped before attaching so no sample precedes its maps. A
 * target that exits before its first batch is written still resolves.
 */
int session_describe_targets(struct record_session *s, uint64_t time)
{
	for (size_t i = 0; i < s->opts.nr_pids + s->opts.nr_tids; i++) {
		pid_t tid = i < s->opts.nr_pids ? s->pids[i] : s->tids[i - s->opts.nr_pids];
		pid_t pid = task_tgid(tid);
		char path[64], comm[32] = "";
		FILE *f;
		int err;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
		f = fopen(path, "re");
		if (!f)
			continue;	/* gone already: its samples name it */
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
		err = emit_task(s->w, s->tracker, (uint32_t)pid, (uint32_t)tid, comm, time, 0,
				NULL, 0);
		if (err)
			return err;
	}
	return 0;
}

bool session_targets_gone(const struct record_session *s)
{
	for (size_t i = 0; i < s->opts.nr_pids; i++)
		if (task_alive(s->pids[i]))
			return false;
	for (size_t i = 0; i < s->opts.nr_tids; i++)
		if (task_alive(s->tids[i]))
			return false;
	return s->opts.nr_pids || s->opts.nr_tids;
}
