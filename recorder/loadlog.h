/* SPDX-License-Identifier: MIT */
/*
 * loadlog.h - what the BPF verifier said about the programs of one object's
 * load, kept instead of printed.
 *
 * Each program gets a log buffer of its own: libbpf then asks the kernel
 * for a log only when a load fails (a retry at log level 1), and prints
 * none of it itself. So after a failed load the one program with a log is
 * the one the verifier rejected; a refusal before the verifier ran (a
 * missing capability, a security module) leaves every log empty
 * (privs_bpf_cause()). The log is the caller's to show, at -v only.
 */
#ifndef RECORDER_LOADLOG_H
#define RECORDER_LOADLOG_H

#include <stdbool.h>
#include <stddef.h>

struct bpf_object;

/* Zeroed before load_log_attach(). */
struct load_log {
	char *bufs;		/* LOAD_LOG_BYTES per program, mapped lazily; NULL = none */
	size_t nr;
	char prog[64];		/* after load_log_failed(): the rejected program, "" = none */
	const char *text;	/* and its log, in bufs; NULL = none */
};

/*
 * Before obj (opened, not loaded) is loaded: a log buffer for each of its
 * programs. Best effort: l NULL, or no memory, leaves libbpf's own logging.
 */
void load_log_attach(struct load_log *l, struct bpf_object *obj);

/*
 * After obj's load failed, before obj is closed: whether the verifier
 * rejected one of its programs (l->prog and l->text then say which and
 * why). l NULL: false.
 */
bool load_log_failed(struct load_log *l, const struct bpf_object *obj);

void load_log_free(struct load_log *l);

#endif /* RECORDER_LOADLOG_H */
