/* SPDX-License-Identifier: MIT */
/*
 * privs.h - the privileges `bpfrec record` needs, step by step, and the
 * one-line message that says which capability a refused step lacks.
 *
 * The steps and what the kernel checks for each:
 *   PRIV_STEP_BPF       loading and attaching the BPF programs (perf_event
 *                       and tracing types): CAP_BPF and CAP_PERFMON, each
 *                       also granted by CAP_SYS_ADMIN;
 *   PRIV_STEP_EVENTS    one perf event per CPU (pid -1): CAP_PERFMON (or
 *                       CAP_SYS_ADMIN) unless kernel.perf_event_paranoid
 *                       <= 0; above 2 (Debian's default, 3) Debian's
 *                       kernels refuse every perf event without
 *                       CAP_SYS_ADMIN (other kernels treat 3 as 2);
 *   PRIV_STEP_KALLSYMS  kernel addresses in /proc/kallsyms: shown when
 *                       kernel.kptr_restrict is 0 and perf_event_paranoid
 *                       <= 1, or with CAP_SYSLOG while kptr_restrict <= 1;
 *                       never when it is 2;
 *   PRIV_STEP_MAPS      /proc/PID/maps of a process of another user (or
 *                       one with more capabilities): CAP_SYS_PTRACE (some
 *                       kernels accept CAP_PERFMON too);
 *   PRIV_STEP_MAP_FILES /proc/PID/map_files (build-ids of deleted files):
 *                       CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN.
 * privs_missing() only names what the process lacks; whether a step is
 * refused is the kernel's answer (an EPERM/EACCES at that step, or
 * addresses read as zero), so the rules above are used to explain, and for
 * the BPF step to refuse early, before any output is touched.
 *
 * A BPF program the verifier rejects fails to load with EACCES or EINVAL
 * too: privs_bpf_cause() tells that apart from a refusal by whether the
 * verifier wrote a log (recorder/loadlog.h keeps it).
 */
#ifndef RECORDER_PRIVS_H
#define RECORDER_PRIVS_H

#include <stdbool.h>
#include <stddef.h>

enum priv_step {
	PRIV_STEP_BPF,
	PRIV_STEP_EVENTS,
	PRIV_STEP_KALLSYMS,
	PRIV_STEP_MAPS,
	PRIV_STEP_MAP_FILES,
};

/* Kernel lockdown (/sys/kernel/security/lockdown); zeroed = unknown. */
enum privs_lockdown {
	PRIVS_LOCKDOWN_UNKNOWN = 0,	/* no securityfs, or a kernel without lockdown */
	PRIVS_LOCKDOWN_NONE,
	PRIVS_LOCKDOWN_INTEGRITY,
	PRIVS_LOCKDOWN_CONFIDENTIALITY,
};

/* Capability bits (1 << CAP_*), as capget(2) reports them. */
struct privs_facts {
	unsigned long long effective;
	int kptr_restrict;		/* -1 when unknown */
	int perf_event_paranoid;	/* -9 when unknown */
	enum privs_lockdown lockdown;
	const char *exe;		/* our binary, for the setcap hint; NULL = "bpfrec" */
	char kernel[65];		/* the kernel's release (uname -r); "" = unknown */
};

/* Why loading BPF programs failed (privs_bpf_cause()). */
enum privs_bpf_cause {
	PRIVS_BPF_OTHER,	/* no refusal: the error itself says what failed */
	PRIVS_BPF_VERIFIER,	/* the verifier ran and rejected a program */
	PRIVS_BPF_MISSING,	/* refused: a capability is missing */
	PRIVS_BPF_LOCKDOWN,	/* refused with every capability, under kernel lockdown */
	PRIVS_BPF_LSM,		/* refused with every capability: a security module */
};

/* Whether err (-errno) is a refusal for want of a privilege: EACCES or EPERM. */
bool privs_is_denial(int err);

/* The running process's capabilities, the two sysctls, lockdown, the kernel. Never fails. */
void privs_facts_read(struct privs_facts *f, char *exe_buf, size_t exe_size);

/* The mode /sys/kernel/security/lockdown marks, "none [integrity] confidentiality". */
enum privs_lockdown privs_parse_lockdown(const char *text);

/* The capabilities step needs that f lacks, as (1 << CAP_*) bits; 0 = none. */
unsigned long long privs_missing(const struct privs_facts *f, enum priv_step step);

/*
 * One line (no newline) saying that step was refused (err, -errno), which
 * capability it lacks and how to grant it; when nothing is missing, that
 * the kernel refused it anyway (a security module, lockdown).
 */
void privs_message(const struct privs_facts *f, enum priv_step step, int err, char *buf,
		   size_t size);

/*
 * Why loading BPF programs failed with err (-errno). verifier_log: the
 * verifier wrote a log for a program, so it ran and rejected it, whatever
 * err is (EACCES, EINVAL, ENOSPC for a log cut short); a refusal before
 * the verifier (capabilities, lockdown, a security module) leaves none.
 */
enum privs_bpf_cause privs_bpf_cause(const struct privs_facts *f, int err, bool verifier_log);

/*
 * One line: the verifier rejected program prog on this kernel; its log is
 * for -v (the caller logs it at debug level).
 */
void privs_verifier_message(const struct privs_facts *f, const char *prog, char *buf,
			    size_t size);

#endif /* RECORDER_PRIVS_H */
