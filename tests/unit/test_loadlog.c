// SPDX-License-Identifier: MIT
/*
 * test_loadlog.c - on this machine's kernel: a program the verifier rejects
 * (with EACCES, as a capability refusal would be) is named and its log
 * kept; a refusal before the verifier leaves no log; a load that works
 * leaves none either. Needs root (skipped otherwise).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include <bpf/libbpf.h>

#include "recorder/loadlog.h"
#include "recorder/privs.h"

#include "loadlog_reject.skel.h"

#define C_PERFMON	38
#define C_BPF		39

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static void setup(void)
{
	libbpf_set_print(quiet);
	if (geteuid() != 0)
		cr_skip_test("needs root to load BPF programs");
}

TestSuite(loadlog, .init = setup);

/* The test object with only the programs asked for to load. */
static struct loadlog_reject *open_with(bool accepted, bool rejected)
{
	struct loadlog_reject *skel = loadlog_reject__open();

	cr_assert_not_null(skel);
	bpf_program__set_autoload(skel->progs.accepted, accepted);
	bpf_program__set_autoload(skel->progs.rejected, rejected);
	return skel;
}

Test(loadlog, a_rejected_program_is_named_with_its_log)
{
	struct loadlog_reject *skel = open_with(true, true);
	struct load_log log = { 0 };
	struct privs_facts f;
	char exe[4096], msg[400];
	int err;

	load_log_attach(&log, skel->obj);
	err = loadlog_reject__load(skel);
	cr_assert_eq(err, -EACCES, "load: %d", err);
	cr_assert(load_log_failed(&log, skel->obj));
	loadlog_reject__destroy(skel);
	/* Still there once the object is gone. */
	cr_assert_str_eq(log.prog, "rejected");
	cr_assert(strstr(log.text, "invalid bpf_context access"), "%s", log.text);
	cr_assert_neq(log.text[strlen(log.text) - 1], '\n');

	/* Whatever the errno, the verifier's rejection, not a security module. */
	privs_facts_read(&f, exe, sizeof(exe));
	cr_assert_eq(privs_bpf_cause(&f, err, true), PRIVS_BPF_VERIFIER);
	privs_verifier_message(&f, log.prog, msg, sizeof(msg));
	cr_assert(strstr(msg, "verifier rejected program 'rejected' (this is Linux "), "%s", msg);
	load_log_free(&log);
	cr_assert_null(log.bufs);
}

Test(loadlog, a_program_that_loads_leaves_no_log)
{
	struct loadlog_reject *skel = open_with(true, false);
	struct load_log log = { 0 };

	load_log_attach(&log, skel->obj);
	cr_assert_eq(loadlog_reject__load(skel), 0);
	cr_assert_not(load_log_failed(&log, skel->obj));
	cr_assert_str_eq(log.prog, "");
	cr_assert_null(log.text);
	loadlog_reject__destroy(skel);
	load_log_free(&log);
}

/* Refused before the verifier runs: no log, and the capability is named. */
Test(loadlog, a_refusal_leaves_no_log)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };
	struct loadlog_reject *skel = open_with(true, true);
	struct load_log log = { 0 };
	struct privs_facts f;
	char exe[4096];
	int err;

	/* This test's process only (Criterion runs each test in its own). */
	cr_assert_eq(syscall(SYS_capget, &hdr, data), 0);
	data[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
	data[C_PERFMON / 32].effective &= ~(1u << (C_PERFMON % 32));
	data[C_BPF / 32].effective &= ~(1u << (C_BPF % 32));
	cr_assert_eq(syscall(SYS_capset, &hdr, data), 0);

	load_log_attach(&log, skel->obj);
	err = loadlog_reject__load(skel);
	cr_assert(err == -EPERM || err == -EACCES, "load: %d", err);
	cr_assert_not(load_log_failed(&log, skel->obj));
	privs_facts_read(&f, exe, sizeof(exe));
	cr_assert_eq(privs_bpf_cause(&f, err, false), PRIVS_BPF_MISSING);
	loadlog_reject__destroy(skel);
	load_log_free(&log);
}

/* Nothing to attach to, or no object: nothing happens. */
Test(loadlog, null_log)
{
	struct loadlog_reject *skel = open_with(true, false);

	load_log_attach(NULL, skel->obj);
	cr_assert_not(load_log_failed(NULL, skel->obj));
	load_log_free(NULL);
	loadlog_reject__destroy(skel);
}
