// SPDX-License-Identifier: MIT
/*
 * service.c - the service of a process from /proc/PID/cgroup, cached per
 * pid (contract in service.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/lru.h"
#include "tools/agent/service.h"

/* One cached answer: the comm it was given for, and the name. */
struct service_entry {
	struct lru_entry e;	/* key: the pid */
	char *comm;		/* into buf, after name */
	char buf[];		/* name, NUL, comm, NUL */
};

struct agent_services {
	int root;		/* the proc root, O_PATH */
	struct lru_table cache;
	char name[NAME_MAX + 1];	/* the answer being made; returned if it cannot be cached */
	char buf[AGENT_SERVICE_READ_MAX + 1];
};

int agent_services_new(const char *proc_root, struct agent_services **out)
{
	struct agent_services *s = calloc(1, sizeof(*s));
	int err;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->root = open(proc_root ? proc_root : "/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s->root < 0) {
		err = -errno;
		free(s);
		return err;
	}
	lru_table_init(&s->cache);
	*out = s;
	return 0;
}

void agent_services_free(struct agent_services *s)
{
	struct lru_entry *e;

	if (!s)
		return;
	while ((e = lru_table_oldest(&s->cache))) {
		lru_table_remove(&s->cache, e);
		free(container_of(e, struct service_entry, e));
	}
	hash_table_free(&s->cache.map);
	close(s->root);
	free(s);
}

/*
 * PID/cgroup beneath the proc root into s->buf, at most
 * AGENT_SERVICE_READ_MAX bytes, NUL-terminated. *complete: the whole file
 * was read. A symlink (PID or cgroup), a PID that is not a directory or a
 * cgroup that is not a regular file are refused, never followed or waited on.
 */
static int read_cgroup(struct agent_services *s, uint32_t pid, size_t *len, bool *complete)
{
	char name[16];
	struct stat st;
	size_t n = 0;
	int dir, fd, err = 0;

	snprintf(name, sizeof(name), "%u", pid);
	dir = openat(s->root, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	fd = openat(dir, "cgroup", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	err = fd < 0 ? -errno : 0;
	close(dir);
	if (err)
		return err;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	*complete = false;
	while (n < AGENT_SERVICE_READ_MAX) {
		ssize_t r = read(fd, s->buf + n, AGENT_SERVICE_READ_MAX - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (r == 0) {
			*complete = true;
			break;
		}
		n += (size_t)r;
	}
	close(fd);
	s->buf[n] = '\0';
	*len = n;
	return err;
}

/*
 * The cgroup path in the file's text: the v2 line's ("0::PATH"), else the
 * systemd v1 hierarchy's ("N:name=systemd:PATH"); NULL for neither. Lines
 * are cut in place. The last line counts without its newline only when
 * the file was read whole (otherwise it may be cut short).
 */
static char *cgroup_path(char *text, size_t len, bool complete)
{
	char *line = text, *end = text + len, *v1 = NULL;

	while (line < end) {
		char *nl = memchr(line, '\n', (size_t)(end - line)), *c1, *c2;

		if (!nl && !complete)
			break;
		if (nl)
			*nl = '\0';
		c1 = strchr(line, ':');
		c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (c2) {
			*c2 = '\0';
			if (!strcmp(line, "0:") && c2 == c1 + 1)	/* "0::" */
				return c2 + 1;
			if (!strcmp(c1 + 1, "name=systemd"))
				v1 = c2 + 1;
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	return v1;
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && !memcmp(s + n - k, suffix, k);
}

/* A scope that is no service: a login session's, systemd's own. */
static bool plain_scope(const char *s, size_t n)
{
	return (n == 10 && !memcmp(s, "init.scope", 10)) ||
	       (n > 8 && !memcmp(s, "session-", 8) && ends_with(s, n, ".scope"));
}

/* n bytes of s as a label value into out: printable ASCII, at most NAME_MAX bytes. */
static const char *set_name(char *out, const char *s, size_t n)
{
	if (n > NAME_MAX)
		n = NAME_MAX;
	for (size_t i = 0; i < n; i++)
		out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '_';
	out[n] = '\0';
	return out;
}

/* The service a cgroup path names (service.h), into out; NULL for none. */
static const char *path_service(const char *path, char *out)
{
	const char *unit = NULL, *last = NULL;
	size_t unit_len = 0, last_len = 0;

	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");

		if (n) {
			if ((ends_with(p, n, ".service") || ends_with(p, n, ".scope")) &&
			    !plain_scope(p, n)) {
				unit = p;
				unit_len = n;
			}
			last = p;
			last_len = n;
		}
		p += n + (p[n] == '/');
	}
	if (unit)
		return set_name(out, unit, unit_len);
	if (last && !ends_with(last, last_len, ".slice") && !plain_scope(last, last_len))
		return set_name(out, last, last_len);
	return NULL;
}

static const char *comm_service(char *out, const char *comm)
{
	size_t n = strcspn(comm, "/");

	return n ? set_name(out, comm, n) : set_name(out, "unknown", 7);
}

/* The answer for pid, made in s->name. */
static const char *lookup(struct agent_services *s, uint32_t pid, const char *comm)
{
	const char *path;
	bool complete = false;
	size_t len = 0;

	if (pid && !read_cgroup(s, pid, &len, &complete)) {
		path = cgroup_path(s->buf, len, complete);
		if (path && path_service(path, s->name))
			return s->name;
	}
	return comm_service(s->name, comm);
}

const char *agent_services_name(struct agent_services *s, uint32_t pid, const char *comm)
{
	struct lru_entry *e = lru_table_find(&s->cache, pid);
	struct service_entry *se;
	size_t name_len, comm_len;
	const char *name;

	if (!comm)
		comm = "";
	if (e) {
		se = container_of(e, struct service_entry, e);
		if (!strcmp(se->comm, comm)) {
			lru_table_touch(&s->cache, e);
			return se->buf;
		}
		lru_table_remove(&s->cache, e);	/* exec'd, or another process: look again */
		free(se);
	}
	name = lookup(s, pid, comm);
	if (s->cache.map.nr >= AGENT_SERVICES_MAX) {
		e = lru_table_oldest(&s->cache);
		lru_table_remove(&s->cache, e);
		free(container_of(e, struct service_entry, e));
	}
	name_len = strlen(name);
	comm_len = strlen(comm);
	se = malloc(sizeof(*se) + name_len + comm_len + 2);
	if (!se)
		return name;	/* uncached, still right */
	memcpy(se->buf, name, name_len + 1);
	se->comm = se->buf + name_len + 1;
	memcpy(se->comm, comm, comm_len + 1);
	se->e.key = pid;
	if (lru_table_insert(&s->cache, &se->e)) {
		free(se);
		return name;
	}
	return se->buf;
}

const char *agent_services_group(void *ctx, uint32_t pid, const char *comm)
{
	return agent_services_name(ctx, pid, comm);
}
