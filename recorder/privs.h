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
 *                       <= 0;
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

/* Capability bits (1 << CAP_*), as capget(2) reports them. */
struct privs_facts {
	unsigned long long effective;
	int kptr_restrict;		/* -1 when unknown */
	int perf_event_paranoid;	/* -9 when unknown */
	const char *exe;		/* our binary, for the setcap hint; NULL = "bpfrec" */
};

/* Whether err (-errno) is a refusal for want of a privilege: EACCES or EPERM. */
bool privs_is_denial(int err);

/* The running process's capabilities and the two sysctls. Never fails. */
void privs_facts_read(struct privs_facts *f, char *exe_buf, size_t exe_size);

/* The capabilities step needs that f lacks, as (1 << CAP_*) bits; 0 = none. */
unsigned long long privs_missing(const struct privs_facts *f, enum priv_step step);

/*
 * One line (no newline) saying that step was refused (err, -errno), which
 * capability it lacks and how to grant it; when nothing is missing, that
 * the kernel refused it anyway (a security module, lockdown).
 */
void privs_message(const struct privs_facts *f, enum priv_step step, int err, char *buf,
		   size_t size);

#endif /* RECORDER_PRIVS_H */
