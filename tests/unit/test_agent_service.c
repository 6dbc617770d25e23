// SPDX-License-Identifier: MIT
/*
 * Unit tests for tools/agent/service.c: service names from a fake proc
 * root (PID/cgroup files written here): systemd services and scopes, user
 * sessions and user services, the root cgroup, plain cgroups, cgroup v1
 * hosts, missing pids; bounded reads; symlinks and FIFOs refused; the
 * cache per pid and comm.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/agent/service.h"

static char root[64];

static void setup(void)
{
	strcpy(root, "/tmp/test_agent_service.XXXXXX");
	cr_assert_not_null(mkdtemp(root));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(service, .init = setup, .fini = teardown);

static void pid_dir(unsigned int pid, char *path, size_t size)
{
	snprintf(path, size, "%s/%u", root, pid);
	cr_assert(!mkdir(path, 0755) || errno == EEXIST);
}

/* ROOT/PID/cgroup with len bytes of text. */
static void write_cgroup_len(unsigned int pid, const char *text, size_t len)
{
	char path[128];
	FILE *f;

	pid_dir(pid, path, sizeof(path));
	strcat(path, "/cgroup");
	f = fopen(path, "w");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(text, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
}

static void write_cgroup(unsigned int pid, const char *text)
{
	write_cgroup_len(pid, text, strlen(text));
}

static struct agent_services *services(void)
{
	struct agent_services *s = NULL;

	cr_assert_eq(agent_services_new(root, &s), 0);
	cr_assert_not_null(s);
	return s;
}

#define expect_name(s, pid, comm, want) \
	cr_assert_str_eq(agent_services_name((s), (pid), (comm)), (want), "pid %u", (pid))

/* A pid, its cgroup file's text (NULL: made by the test), its comm and the name it gets. */
struct name_case {
	unsigned int pid;
	const char *cgroup, *comm, *want;
};

/* Write each case's cgroup file, then ask each pid's name; the services, for more. */
static struct agent_services *expect_names(const struct name_case *c, size_t n)
{
	struct agent_services *s;

	for (size_t i = 0; i < n; i++)
		if (c[i].cgroup)
			write_cgroup(c[i].pid, c[i].cgroup);
	s = services();
	for (size_t i = 0; i < n; i++)
		expect_name(s, c[i].pid, c[i].comm, c[i].want);
	return s;
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

Test(service, systemd_units_sessions_and_cgroups)
{
	static const struct name_case cases[] = {
		{ 100, "0::/system.slice/nginx.service\n", "nginx", "nginx.service" },
		{ 101, "0::/system.slice/docker-4f2a.scope\n", "sh", "docker-4f2a.scope" },
		{ 102, "0::/user.slice/user-1000.slice/session-3.scope\n", "bash", "bash" },
		{ 103, "0::/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service\n",
		  "foo", "foo.service" },
		{ 104, "0::/user.slice/user-1000.slice/user@1000.service/init.scope\n", "systemd",
		  "user@1000.service" },
		{ 105, "0::/\n", "kworker/0:1-events", "kworker" },
		{ 106, "0::/mygroup/web\n", "python3", "web" },
		{ 107, "0::/user.slice\n", "x", "x" },
		{ 108, "0::/init.scope\n", "systemd", "systemd" },
		/* A service's own sub-cgroups (Delegate=yes) still name the service. */
		{ 109, "0::/system.slice/containerd.service/worker\n", "worker",
		  "containerd.service" },
	};
	struct agent_services *s = expect_names(cases, ARRAY_SIZE(cases));

	/* The same, as the converter's group callback. */
	cr_assert_str_eq(agent_services_group(s, 100, "nginx"), "nginx.service");
	cr_assert_str_eq(agent_services_group(s, 102, "bash"), "bash");
	agent_services_free(s);
}

Test(service, missing_pids_pid_0_and_empty_comms)
{
	struct agent_services *s = services();
	char path[128];

	expect_name(s, 4242, "gone", "gone");
	expect_name(s, 0, "swapper", "swapper");
	expect_name(s, 4243, "", "unknown");
	cr_assert_str_eq(agent_services_name(s, 4244, NULL), "unknown");
	/* A pid directory without a cgroup file, and an empty one. */
	pid_dir(200, path, sizeof(path));
	expect_name(s, 200, "nocgroup", "nocgroup");
	write_cgroup(201, "");
	expect_name(s, 201, "empty", "empty");
	agent_services_free(s);
	cr_assert_eq(agent_services_new("/nonexistent/proc", &s), -ENOENT);
	cr_assert_null(s);
}

Test(service, cgroup_v1_and_hybrid_hosts)
{
	static const struct name_case cases[] = {
		{ 300, "12:cpuset:/\n11:memory:/system.slice/cron.service\n"
		       "1:name=systemd:/system.slice/cron.service\n", "cron", "cron.service" },
		{ 301, "12:cpuset:/\n1:name=systemd:/system.slice/old.service\n"
		       "0::/system.slice/new.service\n", "x", "new.service" },
		/* controllers other than systemd's name no service */
		{ 302, "12:cpuset:/\n11:memory:/system.slice/m.service\n", "m", "m" },
		/* The last line without its newline: the file was read whole. */
		{ 303, "0::/system.slice/last.service", "x", "last.service" },
		{ 304, "garbage\n::\n0:\n0:x:/system.slice/no.service\n", "odd", "odd" },
	};

	agent_services_free(expect_names(cases, ARRAY_SIZE(cases)));
}

Test(service, reads_are_bounded)
{
	struct agent_services *s;
	size_t pad = AGENT_SERVICE_READ_MAX + 100, n = 0;
	char *text = malloc(pad + 256);
	const char *line = "5:blkio:/\n";

	cr_assert_not_null(text);
	/* The v2 line past the bound is not seen. */
	while (n + strlen(line) <= pad) {
		memcpy(text + n, line, strlen(line));
		n += strlen(line);
	}
	n += (size_t)sprintf(text + n, "0::/system.slice/late.service\n");
	write_cgroup_len(400, text, n);
	/* One line longer than the bound, cut short: not taken for a path. */
	memcpy(text, "0::/", 4);
	memset(text + 4, 'a', pad);
	n = 4 + pad;
	n += (size_t)sprintf(text + n, "/cut.service\n");
	write_cgroup_len(401, text, n);
	/* Within the bound, after a lot of other lines: found. */
	n = 0;
	while (n + strlen(line) <= AGENT_SERVICE_READ_MAX - 64) {
		memcpy(text + n, line, strlen(line));
		n += strlen(line);
	}
	n += (size_t)sprintf(text + n, "0::/system.slice/early.service\n");
	write_cgroup_len(402, text, n);
	free(text);

	s = services();
	expect_name(s, 400, "late", "late");
	expect_name(s, 401, "long", "long");
	expect_name(s, 402, "early", "early.service");
	agent_services_free(s);
}

Test(service, no_blind_opens)
{
	/* The files are made below; only 500's is a plain file to read. */
	static const struct name_case cases[] = {
		{ 500, NULL, "real", "secret.service" }, { 501, NULL, "linked", "linked" },
		{ 502, NULL, "self", "self" }, { 503, NULL, "fifo", "fifo" },
		{ 504, NULL, "dir", "dir" }, { 505, NULL, "file", "file" },
	};
	char path[128], target[128];

	write_cgroup(500, "0::/system.slice/secret.service\n");
	/* PID/cgroup a symlink to another process's file. */
	pid_dir(501, path, sizeof(path));
	strcat(path, "/cgroup");
	snprintf(target, sizeof(target), "%s/500/cgroup", root);
	cr_assert_eq(symlink(target, path), 0);
	/* PID itself a symlink (as /proc/self is). */
	snprintf(path, sizeof(path), "%s/502", root);
	snprintf(target, sizeof(target), "%s/500", root);
	cr_assert_eq(symlink(target, path), 0);
	/* A FIFO: opening it for reading must not wait for a writer. */
	pid_dir(503, path, sizeof(path));
	strcat(path, "/cgroup");
	cr_assert_eq(mkfifo(path, 0600), 0);
	/* A directory where the file should be. */
	pid_dir(504, path, sizeof(path));
	strcat(path, "/cgroup");
	cr_assert_eq(mkdir(path, 0755), 0);
	/* PID a regular file. */
	snprintf(path, sizeof(path), "%s/505", root);
	cr_assert_eq(close(open(path, O_CREAT | O_WRONLY, 0644)), 0);

	agent_services_free(expect_names(cases, ARRAY_SIZE(cases)));
}

Test(service, names_are_printable_ascii)
{
	struct agent_services *s;

	write_cgroup(600, "0::/system.slice/caf\xc3\xa9\x01.service\n");
	s = services();
	expect_name(s, 600, "x", "caf___.service");
	expect_name(s, 601, "bad\xff\ncomm", "bad__comm");
	agent_services_free(s);
}

Test(service, cached_per_pid_until_the_comm_changes)
{
	struct agent_services *s;

	write_cgroup(700, "0::/system.slice/a.service\n");
	s = services();
	expect_name(s, 700, "a", "a.service");
	/* Moved (the file says so now), same program: the cached answer. */
	write_cgroup(700, "0::/system.slice/b.service\n");
	expect_name(s, 700, "a", "a.service");
	/* Another comm (an exec, or the pid reused): looked up again. */
	expect_name(s, 700, "b", "b.service");
	/* Gone: the comm answers, and is cached as such. */
	write_cgroup(700, "");
	expect_name(s, 700, "c", "c");
	expect_name(s, 700, "c", "c");

	/* More pids than the cache holds: the oldest go, answers stay right. */
	for (unsigned int pid = 1000; pid < 1000 + AGENT_SERVICES_MAX + 10; pid++) {
		char comm[16];

		snprintf(comm, sizeof(comm), "p%u", pid);
		cr_assert_str_eq(agent_services_name(s, pid, comm), comm);
	}
	expect_name(s, 700, "b", "b");
	agent_services_free(s);
}
