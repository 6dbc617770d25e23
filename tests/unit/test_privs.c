// SPDX-License-Identifier: MIT
/*
 * test_privs.c - which capabilities each recording step lacks, from made-up
 * capability sets and sysctls, and the one-line messages that name them.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>

#include "recorder/privs.h"

#define BIT(cap)	(1ull << (cap))
#define C_PERFMON	38
#define C_BPF		39
#define C_CKPT		40

static struct privs_facts facts(unsigned long long eff, int kptr, int paranoid)
{
	return (struct privs_facts){
		.effective = eff, .kptr_restrict = kptr, .perf_event_paranoid = paranoid,
		.exe = "/opt/bin/bpfrec",
	};
}

static void assert_one_line(const char *msg)
{
	cr_assert_gt(strlen(msg), 20);
	cr_assert_null(strchr(msg, '\n'), "not one line: %s", msg);
}

Test(privs, bpf_needs_both_or_sys_admin)
{
	struct privs_facts f = facts(0, 0, 2);

	cr_assert_eq(privs_missing(&f, PRIV_STEP_BPF), BIT(C_BPF) | BIT(C_PERFMON));
	f.effective = BIT(C_BPF);
	cr_assert_eq(privs_missing(&f, PRIV_STEP_BPF), BIT(C_PERFMON));
	f.effective = BIT(C_PERFMON);
	cr_assert_eq(privs_missing(&f, PRIV_STEP_BPF), BIT(C_BPF));
	f.effective = BIT(C_PERFMON) | BIT(C_BPF);
	cr_assert_eq(privs_missing(&f, PRIV_STEP_BPF), 0);
	f.effective = BIT(CAP_SYS_ADMIN);
	cr_assert_eq(privs_missing(&f, PRIV_STEP_BPF), 0);
}

Test(privs, events_follow_perf_event_paranoid)
{
	struct privs_facts f = facts(BIT(C_BPF), 0, 2);

	cr_assert_eq(privs_missing(&f, PRIV_STEP_EVENTS), BIT(C_PERFMON));
	f.perf_event_paranoid = 0;
	cr_assert_eq(privs_missing(&f, PRIV_STEP_EVENTS), 0);
	f.perf_event_paranoid = 1;
	f.effective |= BIT(CAP_SYS_ADMIN);
	cr_assert_eq(privs_missing(&f, PRIV_STEP_EVENTS), 0);
}

/*
 * Debian's kernels at perf_event_paranoid 3 (their default): perf events
 * need CAP_SYS_ADMIN, CAP_PERFMON is refused. Say so with the sysctl, its
 * value and both fixes.
 */
Test(privs, events_above_paranoid_2_need_sys_admin)
{
	struct privs_facts f = facts(BIT(C_BPF) | BIT(C_PERFMON), 0, 3);
	char msg[400];

	cr_assert_eq(privs_missing(&f, PRIV_STEP_EVENTS), BIT(CAP_SYS_ADMIN));
	privs_message(&f, PRIV_STEP_EVENTS, -EACCES, msg, sizeof(msg));
	assert_one_line(msg);
	cr_assert(strstr(msg, "needs CAP_SYS_ADMIN while kernel.perf_event_paranoid=3"), "%s", msg);
	cr_assert(strstr(msg, "run as root"), "%s", msg);
	cr_assert(strstr(msg, "sudo sysctl kernel.perf_event_paranoid=2"), "%s", msg);
	cr_assert_null(strstr(msg, "security module"), "%s", msg);
	/* Without CAP_PERFMON too: still CAP_SYS_ADMIN, the one that works there. */
	f.effective = 0;
	cr_assert_eq(privs_missing(&f, PRIV_STEP_EVENTS), BIT(CAP_SYS_ADMIN));
	f.perf_event_paranoid = 4;
	privs_message(&f, PRIV_STEP_EVENTS, -EACCES, msg, sizeof(msg));
	cr_assert(strstr(msg, "kernel.perf_event_paranoid=4"), "%s", msg);
	/* CAP_SYS_ADMIN and still refused: not the sysctl. */
	f.effective = BIT(CAP_SYS_ADMIN);
	cr_assert_eq(privs_missing(&f, PRIV_STEP_EVENTS), 0);
	privs_message(&f, PRIV_STEP_EVENTS, -EACCES, msg, sizeof(msg));
	cr_assert(strstr(msg, "although the process has CAP_SYS_ADMIN"), "%s", msg);
	/* At 2, CAP_PERFMON as before. */
	f = facts(BIT(C_BPF), 0, 2);
	privs_message(&f, PRIV_STEP_EVENTS, -EACCES, msg, sizeof(msg));
	cr_assert(strstr(msg, "needs CAP_PERFMON (kernel.perf_event_paranoid=2)"), "%s", msg);
}

Test(privs, lockdown_modes)
{
	cr_assert_eq(privs_parse_lockdown("[none] integrity confidentiality\n"),
		     PRIVS_LOCKDOWN_NONE);
	cr_assert_eq(privs_parse_lockdown("none [integrity] confidentiality\n"),
		     PRIVS_LOCKDOWN_INTEGRITY);
	cr_assert_eq(privs_parse_lockdown("none integrity [confidentiality]\n"),
		     PRIVS_LOCKDOWN_CONFIDENTIALITY);
	cr_assert_eq(privs_parse_lockdown(""), PRIVS_LOCKDOWN_UNKNOWN);
}

/* What failed a BPF load, from the error, the capabilities, lockdown and the verifier's log. */
Test(privs, bpf_load_causes)
{
	static const struct {
		unsigned long long effective;
		enum privs_lockdown lockdown;
		int err;
		bool verifier_log;
		enum privs_bpf_cause want;
	} cases[] = {
		/* The verifier ran: whatever the errno, it rejected a program. */
		{ ~0ull, PRIVS_LOCKDOWN_NONE, -EACCES, true, PRIVS_BPF_VERIFIER },
		{ ~0ull, PRIVS_LOCKDOWN_NONE, -EINVAL, true, PRIVS_BPF_VERIFIER },
		{ ~0ull, PRIVS_LOCKDOWN_NONE, -ENOSPC, true, PRIVS_BPF_VERIFIER },
		{ ~0ull, PRIVS_LOCKDOWN_CONFIDENTIALITY, -EINVAL, true, PRIVS_BPF_VERIFIER },
		/* No log: refused before it. */
		{ BIT(C_BPF), PRIVS_LOCKDOWN_NONE, -EPERM, false, PRIVS_BPF_MISSING },
		{ ~0ull, PRIVS_LOCKDOWN_INTEGRITY, -EPERM, false, PRIVS_BPF_LOCKDOWN },
		{ ~0ull, PRIVS_LOCKDOWN_CONFIDENTIALITY, -EACCES, false, PRIVS_BPF_LOCKDOWN },
		{ ~0ull, PRIVS_LOCKDOWN_NONE, -EPERM, false, PRIVS_BPF_LSM },
		{ ~0ull, PRIVS_LOCKDOWN_UNKNOWN, -EACCES, false, PRIVS_BPF_LSM },
		/* Not a refusal at all. */
		{ ~0ull, PRIVS_LOCKDOWN_NONE, -EINVAL, false, PRIVS_BPF_OTHER },
		{ 0, PRIVS_LOCKDOWN_NONE, -ENOMEM, false, PRIVS_BPF_OTHER },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct privs_facts f = facts(cases[i].effective, 0, 2);

		f.lockdown = cases[i].lockdown;
		cr_assert_eq(privs_bpf_cause(&f, cases[i].err, cases[i].verifier_log), cases[i].want,
			     "case %zu", i);
	}
}

Test(privs, verifier_message_names_the_program_and_the_kernel)
{
	struct privs_facts f = facts(~0ull, 0, 2);
	char msg[400];

	snprintf(f.kernel, sizeof(f.kernel), "6.1.0-18-amd64");
	privs_verifier_message(&f, "on_sample", msg, sizeof(msg));
	assert_one_line(msg);
	cr_assert_str_eq(msg, "the kernel's BPF verifier rejected program 'on_sample' (this is "
			 "Linux 6.1.0-18-amd64): run with -v for the verifier log");
	/* Confidentiality lockdown takes helpers away: say so too. */
	f.lockdown = PRIVS_LOCKDOWN_CONFIDENTIALITY;
	privs_verifier_message(&f, "on_sample", msg, sizeof(msg));
	assert_one_line(msg);
	cr_assert(strstr(msg, "locked down ([confidentiality])"), "%s", msg);
	/* Never the security-module guess. */
	cr_assert_null(strstr(msg, "security module"), "%s", msg);
}

/* Refused with every capability: lockdown when the kernel says so, else a security module. */
Test(privs, bpf_refusal_names_lockdown_only_when_it_is_on)
{
	struct privs_facts f = facts(~0ull, 0, 2);
	char msg[400];

	f.lockdown = PRIVS_LOCKDOWN_INTEGRITY;
	privs_message(&f, PRIV_STEP_BPF, -EPERM, msg, sizeof(msg));
	assert_one_line(msg);
	cr_assert(strstr(msg, "locked down (/sys/kernel/security/lockdown: [integrity]"), "%s", msg);
	f.lockdown = PRIVS_LOCKDOWN_NONE;
	privs_message(&f, PRIV_STEP_BPF, -EPERM, msg, sizeof(msg));
	assert_one_line(msg);
	cr_assert(strstr(msg, "not locked down: a security module forbids it"), "%s", msg);
	cr_assert_null(strstr(msg, "lockdown forbids"), "%s", msg);
}

Test(privs, kallsyms_follows_kptr_restrict)
{
	struct privs_facts f = facts(BIT(C_BPF) | BIT(C_PERFMON), 0, 2);

	cr_assert_eq(privs_missing(&f, PRIV_STEP_KALLSYMS), BIT(CAP_SYSLOG));
	f.perf_event_paranoid = 1;	/* kptr_restrict 0 shows them to perf users */
	cr_assert_eq(privs_missing(&f, PRIV_STEP_KALLSYMS), 0);
	f.kptr_restrict = 1;
	cr_assert_eq(privs_missing(&f, PRIV_STEP_KALLSYMS), BIT(CAP_SYSLOG));
	f.effective |= BIT(CAP_SYSLOG);
	cr_assert_eq(privs_missing(&f, PRIV_STEP_KALLSYMS), 0);
	f.kptr_restrict = 2;	/* no capability helps: nothing to name */
	f.effective = 0;
	cr_assert_eq(privs_missing(&f, PRIV_STEP_KALLSYMS), 0);
}

Test(privs, maps_and_map_files)
{
	struct privs_facts f = facts(0, 0, 2);

	cr_assert_eq(privs_missing(&f, PRIV_STEP_MAPS), BIT(CAP_SYS_PTRACE));
	cr_assert_eq(privs_missing(&f, PRIV_STEP_MAP_FILES), BIT(C_CKPT));
	f.effective = BIT(CAP_SYS_PTRACE) | BIT(CAP_SYS_ADMIN);
	cr_assert_eq(privs_missing(&f, PRIV_STEP_MAPS), 0);
	cr_assert_eq(privs_missing(&f, PRIV_STEP_MAP_FILES), 0);
}

Test(privs, messages_name_what_is_missing)
{
	static const struct {
		unsigned long long effective;
		int kptr_restrict;
		enum priv_step step;
		int err;
		const char *want, *want_too;
	} cases[] = {
		{ 0, 1, PRIV_STEP_BPF, -EPERM, "needs CAP_BPF and CAP_PERFMON: run as root, or grant "
		  "them", "setcap cap_bpf,cap_perfmon,cap_syslog+ep /opt/bin/bpfrec" },
		{ BIT(C_BPF), 1, PRIV_STEP_BPF, -EPERM, "needs CAP_PERFMON: run as root, or grant it",
		  NULL },
		{ BIT(C_BPF), 1, PRIV_STEP_EVENTS, -EACCES, "CAP_PERFMON (kernel.perf_event_paranoid=2)",
		  "setcap" },
		{ BIT(C_BPF), 1, PRIV_STEP_KALLSYMS, -EPERM, "needs CAP_SYSLOG (kernel.kptr_restrict=1",
		  "setcap" },
		/* At 2 the fix is the sysctl, not a capability. */
		{ BIT(C_BPF), 2, PRIV_STEP_KALLSYMS, -EPERM, "(kernel.kptr_restrict=2)",
		  "set sysctl kernel.kptr_restrict=1" },
		{ 0, 1, PRIV_STEP_MAPS, -EACCES, "needs CAP_SYS_PTRACE", NULL },
		{ 0, 1, PRIV_STEP_MAP_FILES, -EPERM, "CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN", NULL },
	};
	char msg[400];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct privs_facts f = facts(cases[i].effective, cases[i].kptr_restrict, 2);

		privs_message(&f, cases[i].step, cases[i].err, msg, sizeof(msg));
		assert_one_line(msg);
		cr_assert(strstr(msg, cases[i].want), "case %zu: %s", i, msg);
		cr_assert(!cases[i].want_too || strstr(msg, cases[i].want_too), "case %zu: %s", i,
			  msg);
	}
}

/* Everything present and still refused: say that, not a capability. */
Test(privs, refused_with_every_capability)
{
	struct privs_facts f = facts(~0ull, 0, 2);
	char msg[400];

	privs_message(&f, PRIV_STEP_BPF, -EPERM, msg, sizeof(msg));
	assert_one_line(msg);
	cr_assert(strstr(msg, "was refused (Operation not permitted) although"), "%s", msg);
	cr_assert_null(strstr(msg, "needs"), "%s", msg);
}

Test(privs, facts_of_this_process)
{
	struct privs_facts f;
	char exe[4096];

	privs_facts_read(&f, exe, sizeof(exe));
	cr_assert_not_null(f.exe);
	cr_assert(strstr(f.exe, "test_privs"), "%s", f.exe);
	cr_assert_geq(f.kptr_restrict, 0);
	cr_assert_leq(f.kptr_restrict, 2);
	cr_assert_neq(f.perf_event_paranoid, -9);
}

/* A small buffer cuts the message, it never overruns. */
Test(privs, small_buffer)
{
	struct privs_facts f = facts(0, 1, 2);
	char msg[16];

	privs_message(&f, PRIV_STEP_BPF, -EPERM, msg, sizeof(msg));
	cr_assert_eq(strlen(msg), sizeof(msg) - 1);
}
