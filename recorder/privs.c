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
#include <sys/utsname.h>
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

enum privs_lockdown privs_parse_lockdown(const char *text)
{
	if (strstr(text, "[none]"))
		return PRIVS_LOCKDOWN_NONE;
	if (strstr(text, "[integrity]"))
		return PRIVS_LOCKDOWN_INTEGRITY;
	if (strstr(text, "[confidentiality]"))
		return PRIVS_LOCKDOWN_CONFIDENTIALITY;
	return PRIVS_LOCKDOWN_UNKNOWN;
}

static enum privs_lockdown read_lockdown(void)
{
	char text[128] = "";
	FILE *f = fopen("/sys/kernel/security/lockdown", "re");

	if (!f)
		return PRIVS_LOCKDOWN_UNKNOWN;
	if (!fgets(text, sizeof(text), f))
		text[0] = '\0';
	fclose(f);
	return privs_parse_lockdown(text);
}

void privs_facts_read(struct privs_facts *f, char *exe_buf, size_t exe_size)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };
	ssize_t n = exe_size ? readlink("/proc/self/exe", exe_buf, exe_size - 1) : -1;
	struct utsname u;

	memset(f, 0, sizeof(*f));
	if (!syscall(SYS_capget, &hdr, data))
		f->effective = (unsigned long long)data[1].effective << 32 | data[0].effective;
	else if (geteuid() == 0)
		f->effective = ~0ull;
	f->kptr_restrict = (int)sysctl_read("kernel.kptr_restrict", -1);
	f->perf_event_paranoid = (int)sysctl_read("kernel.perf_event_paranoid", -9);
	f->lockdown = read_lockdown();
	if (!uname(&u))
		snprintf(f->kernel, sizeof(f->kernel), "%s", u.release);
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
		if (has(f, CAP_SYS_ADMIN))
			return 0;
		/* Debian's patch: above 2 nothing less than CAP_SYS_ADMIN will do. */
		if (f->perf_event_paranoid > 2)
			return BIT(CAP_SYS_ADMIN);
		if (has(f, CAP_PERFMON) ||
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

static bool locked_down(const struct privs_facts *f)
{
	return f->lockdown == PRIVS_LOCKDOWN_INTEGRITY ||
	       f->lockdown == PRIVS_LOCKDOWN_CONFIDENTIALITY;
}

static const char *lockdown_name(enum privs_lockdown l)
{
	return l == PRIVS_LOCKDOWN_CONFIDENTIALITY ? "[confidentiality]" :
	       l == PRIVS_LOCKDOWN_INTEGRITY ? "[integrity]" : "[none]";
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
		else if (locked_down(f))
			snprintf(buf, size, "loading the BPF programs was refused (%s) although the "
				 "process has CAP_BPF and CAP_PERFMON: the kernel is locked down "
				 "(/sys/kernel/security/lockdown: %s; Secure Boot or lockdown= "
				 "turns it on): boot without lockdown to record", why,
				 lockdown_name(f->lockdown));
		else if (f->lockdown == PRIVS_LOCKDOWN_NONE)
			snprintf(buf, size, "loading the BPF programs was refused (%s) although the "
				 "process has CAP_BPF and CAP_PERFMON and the kernel is not locked "
				 "down: a security module forbids it (see dmesg)", why);
		else
			snprintf(buf, size, "loading the BPF programs was refused (%s) although the "
				 "process has CAP_BPF and CAP_PERFMON: a security module or kernel "
				 "lockdown forbids it (see dmesg)", why);
		return;
	case PRIV_STEP_EVENTS:
		if (missing & BIT(CAP_SYS_ADMIN))
			snprintf(buf, size, "opening the perf events needs CAP_SYS_ADMIN while "
				 "kernel.perf_event_paranoid=%d (above 2, Debian's kernels refuse "
				 "them to CAP_PERFMON): run as root, or lower it: "
				 "sudo sysctl kernel.perf_event_paranoid=2", f->perf_event_paranoid);
		else if (missing)
			snprintf(buf, size, "opening a perf event on every CPU needs CAP_PERFMON "
				 "(kernel.perf_event_paranoid=%d): run as root, or grant it: "
				 "sudo setcap " SETCAP_CAPS " %s", f->perf_event_paranoid, exe);
		else
			snprintf(buf, size, "opening the perf events was refused (%s) although the "
				 "process has %s: a security module forbids it (see dmesg)", why,
				 has(f, CAP_SYS_ADMIN) ? "CAP_SYS_ADMIN" : "CAP_PERFMON");
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

enum privs_bpf_cause privs_bpf_cause(const struct privs_facts *f, int err, bool verifier_log)
{
	/* The verifier runs only once every check before it passed. */
	if (verifier_log)
		return PRIVS_BPF_VERIFIER;
	if (!privs_is_denial(err))
		return PRIVS_BPF_OTHER;
	if (privs_missing(f, PRIV_STEP_BPF))
		return PRIVS_BPF_MISSING;
	if (locked_down(f))
		return PRIVS_BPF_LOCKDOWN;
	return PRIVS_BPF_LSM;
}

void privs_verifier_message(const struct privs_facts *f, const char *prog, char *buf,
			    size_t size)
{
	/*
	 * Confidentiality mode takes the helpers that read kernel memory from
	 * BPF programs: the verifier then rejects them as unknown functions.
	 */
	const char *locked = f->lockdown == PRIVS_LOCKDOWN_CONFIDENTIALITY ?
			     "; the kernel is locked down ([confidentiality]), which denies BPF "
			     "programs reading kernel memory" : "";

	snprintf(buf, size, "the kernel's BPF verifier rejected program '%s' (this is Linux %s)%s: "
		 "run with -v for the verifier log", prog,
		 f->kernel[0] ? f->kernel : "of an unknown version", locked);
}
