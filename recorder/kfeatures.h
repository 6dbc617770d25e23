/* SPDX-License-Identifier: MIT */
/*
 * kfeatures.h - what the running kernel's BPF can do, probed once before
 * anything is loaded, and the refusal of an option it cannot record.
 *
 * One set of BPF objects serves every kernel from 5.10 up: what differs is
 * handled inside them (CO-RE checks, two sample programs), and only a mode
 * that has no fallback on an older kernel is refused here, before any file
 * is written, in one line that names the option and the version it needs
 * (Documentation/bpfrec-record.md has the whole table). Probing asks the
 * kernel (libbpf's feature probes), never the version number: distribution
 * kernels backport.
 */
#ifndef RECORDER_KFEATURES_H
#define RECORDER_KFEATURES_H

#include <stdbool.h>
#include <stddef.h>

struct kfeatures {
	char release[65];	/* uname -r, for messages */
	bool bpf_loop;		/* 5.17 (--alloc's walker); else -g's and Python's walks are bounded loops */
	bool task_storage;	/* 5.11: per-task state of --off-cpu, --sched, --alloc */
	bool ringbuf_dynptr;	/* 6.0: records with a copy of the user stack (dwarf) */
	/*
	 * perf_event programs may use hash maps that allocate on update
	 * (BPF_F_NO_PREALLOC): 6.1; before, unwind_procs is preallocated.
	 */
	bool hash_nonprealloc;
};

/* What a recording asks of the kernel. */
struct kfeatures_want {
	bool dwarf;		/* user registers and stack copied (--call-graph dwarf) */
	bool off_cpu, sched, alloc;
};

/*
 * Probe the running kernel. Never fails: a probe that cannot run counts as
 * "missing". The environment's BPFREC_KERNEL_LACKS (a comma-separated list
 * of the field names above) takes features away, to run and test the
 * older kernels' paths on any kernel.
 */
void kfeatures_probe(struct kfeatures *kf);

/*
 * 0 when kf can record want; else -ENOTSUP with the refusal, one line
 * naming the first option that does not fit, the Linux version it needs
 * and what to do instead, in msg (len bytes).
 */
int kfeatures_check(const struct kfeatures *kf, const struct kfeatures_want *want, char *msg,
		    size_t len);

#endif /* RECORDER_KFEATURES_H */
