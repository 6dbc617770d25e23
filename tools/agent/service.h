/* SPDX-License-Identifier: MIT */
/*
 * service.h - the service a process belongs to, for the agent's
 * service_name label (one profile per event and service: the converter's
 * group callback, bpfrec/pprof.h). Internal to libbpfrec.
 *
 * The name comes from /proc/PID/cgroup: the cgroup v2 line "0::PATH", or
 * on a cgroup v1 host the systemd hierarchy's "N:name=systemd:PATH".
 *
 *   - The last component of PATH that is a systemd service or scope unit
 *     ("0::/system.slice/nginx.service" -> "nginx.service",
 *     ".../user@1000.service/app.slice/foo.service" -> "foo.service",
 *     "/system.slice/docker-ID.scope" -> "docker-ID.scope"), except the
 *     scopes that are not services: a login session's "session-N.scope"
 *     and systemd's own "init.scope".
 *   - Else the last component of PATH, unless PATH is "/" or that
 *     component is a slice ("*.slice": user-1000.slice, system.slice) or
 *     one of the scopes above ("0::/mygroup/web" -> "web").
 *   - Else the command name the caller gives (comm), cut at its first '/'
 *     so that per-CPU kernel threads (kworker/0:1, ksoftirqd/3) make one
 *     service each, not one per CPU; "unknown" for an empty one. A process
 *     that exited, pid 0, and an unreadable or unparsable cgroup file get
 *     this too.
 *
 * Names are label values sent as protobuf strings: every byte outside
 * printable ASCII becomes '_' (always valid UTF-8).
 *
 * No blind opens: PID and its cgroup file are opened beneath the proc
 * root with O_NOFOLLOW (a symlink is not followed: the comm answer) and
 * O_NONBLOCK (a FIFO does not hang), and must be a directory and a regular
 * file. Reads are bounded (AGENT_SERVICE_READ_MAX bytes of the file; a
 * line beyond is not seen).
 *
 * Answers are cached per pid, in at most AGENT_SERVICES_MAX entries (least
 * recently used evicted), and looked up again when the comm differs from
 * the cached one (an exec, or the pid reused by another program). One
 * thread at a time: the agent's worker asks, from the converter's group
 * callback.
 */
#ifndef TOOLS_AGENT_SERVICE_H
#define TOOLS_AGENT_SERVICE_H

#include <stdint.h>

#define AGENT_SERVICE_READ_MAX	16384
#define AGENT_SERVICES_MAX	8192

struct agent_services;

/* proc_root: NULL = "/proc" (a directory, opened now). 0 or -errno; *s is NULL on error. */
int agent_services_new(const char *proc_root, struct agent_services **s);
/*
 * The service of pid (comm: its command name, NULL = ""), never NULL. The
 * string is valid until the next call on s or agent_services_free().
 */
const char *agent_services_name(struct agent_services *s, uint32_t pid, const char *comm);
/* agent_services_name() as a group callback (bpfrec_pprof_opts.group): ctx is the agent_services. */
const char *agent_services_group(void *ctx, uint32_t pid, const char *comm);
void agent_services_free(struct agent_services *s);

#endif /* TOOLS_AGENT_SERVICE_H */
