// SPDX-License-Identifier: MIT
/*
 * privs.c - which capabilities a recording step lacks, and saying so in one
 * line (contract in privs.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "recorder/privs.h"
#include "recorder/sysctl.h"

/* Older uapi headers lack the newest ones; the numbers are ABI. */
#ifndef CAP_PERFMON
#define CAP_PERFMON		38
#endif
#ifndef CAP_BPF
#define CAP_BPF			39
#endif
#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE	40
#endif

#define BIT(cap)		(1ull << (cap))
/* What a user who is not root grants the binary to record everything perf -a can. */
#define SETCAP_CAPS		"cap_bpf,cap_perfmon,cap_syslog+ep"

static const struct {
	int cap;
	const char *name;
} cap_names[] = {
	{ CAP_BPF, "CAP_BPF" },
	{ CAP_PERFMON, "CAP_PERFMON" },
	{ CAP_SYSLOG, "CAP_SYSLOG" },
	{ CAP_SYS_PTRACE, "CAP_SYS_PTRACE" },
	{ CAP_CHECKPOINT_RESTORE, "CAP_CHECKPOINT_RESTORE" },
	{ CAP_SYS_ADMIN, "CAP_SYS_ADMIN" },
};

bool privs_is_denial(int err)
{
	return err == -EACCES || err == -EPERM;
}

void privs_facts_read(struct privs_facts *f, char *exe_buf, size_t exe_size)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };
	ssize_t n = exe_size ? readlink("/proc/self/exe", exe_buf, exe_size - 1) : -1;

	memset(f, 0, sizeof(*f));
	if (!syscall(SYS_capget, &hdr, data))
		f->effective = (unsigned long long)data[1].effective << 32 | data[0].effective;
	else if (geteuid() == 0)
		f->effective = ~0ull;
	f->kptr_restrict = (int)sysctl_read("kernel.kptr_restrict", -1);
	f->perf_event_paranoid = (int)sysctl_read("kernel.perf_event_paranoid", -9);
	if (n > 0) {
		exe_buf[n] = '\0';
		f->exe = exe_buf;
	}
}

static bool has(const struct privs_facts *f, int cap)
{
	return f->effective & BIT(cap);
}

unsigned long long privs_missing(const struct privs_facts *f, enum priv_step step)
{
	switch (step) {
	case PRIV_STEP_BPF:
		if (has(f, CAP_SYS_ADMIN))
			return 0;
		return (BIT(CAP_BPF) | BIT(CAP_PERFMON)) & ~f->effective;
	case PRIV_STEP_EVENTS:
		if (has(f, CAP_SYS_ADMIN) || has(f, CAP_PERFMON) ||
		    (f->perf_event_paranoid != -9 && f->perf_event_paranoid <= 0))
			return 0;
		return BIT(CAP_PERFMON);
	case PRIV_STEP_KALLSYMS:
		/* At 2 no capability helps; at 0 perf_event_paranoid <= 1 is enough. */
		if (f->kptr_restrict >= 2 || has(f, CAP_SYSLOG) ||
		    (f->kptr_restrict == 0 && f->perf_event_paranoid != -9 &&
		     f->perf_event_paranoid <= 1))
			return 0;
		return BIT(CAP_SYSLOG);
	case PRIV_STEP_MAPS:
		return has(f, CAP_SYS_PTRACE) ? 0 : BIT(CAP_SYS_PTRACE);
	case PRIV_STEP_MAP_FILES:
		if (has(f, CAP_SYS_ADMIN) || has(f, CAP_CHECKPOINT_RESTORE))
			return 0;
		return BIT(CAP_CHECKPOINT_RESTORE);
	}
	return 0;
}

/* "CAP_BPF and CAP_PERFMON" */
static const char *names(unsigned long long mask, char *buf, size_t size)
{
	size_t len = 0, n = 0, total = 0;

	for (size_t i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++)
		total += !!(mask & BIT(cap_names[i].cap));
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]) && len < size; i++) {
		if (!(mask & BIT(cap_names[i].cap)))
			continue;
		n++;
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
					n == 1 ? "" : n == total ? " and " : ", ", cap_names[i].name);
	}
	return buf;
}

void privs_message(const struct privs_facts *f, enum priv_step step, int err, char *buf,
		   size_t size)
{
	unsigned long long missing = privs_missing(f, step);
	const char *exe = f->exe ? f->exe : "bpfrec";
	const char *why = strerror(err < 0 ? -err : err);
	char caps[128];

	names(missing, caps, sizeof(caps));
	switch (step) {
	case PRIV_STEP_BPF:
		if (missing)
			snprintf(buf, size, "loading the BPF programs needs %s: run as root, or grant "
				 "%s: sudo setcap " SETCAP_CAPS " %s", caps,
				 missing & (missing - 1) ? "them" : "it", exe);
		else
			snprintf(buf, size, "loading the BPF programs was refused (%s) although the "
				 "process has CAP_BPF and CAP_PERFMON: a security module or kernel "
				 "lockdown forbids it (see dmesg)", why);
		return;
	case PRIV_STEP_EVENTS:
		if (missing)
			snprintf(buf, size, "opening a perf event on every CPU needs CAP_PERFMON "
				 "(kernel.perf_event_paranoid=%d): run as root, or grant it: "
				 "sudo setcap " SETCAP_CAPS " %s", f->perf_event_paranoid, exe);
		else
			snprintf(buf, size, "opening the perf events was refused (%s) although the "
				 "process has CAP_PERFMON: a security module forbids it (see dmesg)",
				 why);
		return;
	case PRIV_STEP_KALLSYMS:
		if (f->kptr_restrict >= 2)
			snprintf(buf, size, "kernel addresses in /proc/kallsyms are hidden from "
				 "everyone (kernel.kptr_restrict=%d): set sysctl kernel.kptr_restrict=1 "
				 "and run as root or with CAP_SYSLOG", f->kptr_restrict);
		else if (missing)
			snprintf(buf, size, "reading kernel addresses from /proc/kallsyms needs "
				 "CAP_SYSLOG (kernel.kptr_restrict=%d, kernel.perf_event_paranoid=%d): "
				 "run as root, or grant it: sudo setcap " SETCAP_CAPS " %s",
				 f->kptr_restrict, f->perf_event_paranoid, exe);
		else
			snprintf(buf, size, "kernel addresses in /proc/kallsyms are hidden although "
				 "the process has CAP_SYSLOG (kernel.kptr_restrict=%d): run as root",
				 f->kptr_restrict);
		return;
	case PRIV_STEP_MAPS:
		if (missing)
			snprintf(buf, size, "reading the memory maps of another user's process needs "
				 "CAP_SYS_PTRACE: run as root or as its owner");
		else
			snprintf(buf, size, "reading its memory maps was refused (%s) although the "
				 "process has CAP_SYS_PTRACE", why);
		return;
	case PRIV_STEP_MAP_FILES:
		snprintf(buf, size, "/proc/PID/map_files is closed (%s; it needs "
			 "CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN): build-ids are read from the "
			 "mapped paths, so a deleted or replaced file gets none", why);
		return;
	}
	snprintf(buf, size, "%s", why);
}
