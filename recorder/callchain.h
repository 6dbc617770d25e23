/* SPDX-License-Identifier: MIT */
/*
 * callchain.h - turn the two stacks the BPF sampler captured into the
 * callchain, ip and cpumode of a perf.data SAMPLE.
 *
 * perf reads a callchain as [PERF_CONTEXT_KERNEL, kernel ips...,
 * PERF_CONTEXT_USER, user ips...], leaf first, and looks an address up in
 * the kernel only when it follows the KERNEL marker (the markers and the
 * cpumode bits are perfdata's: perfdata_callchain_join(),
 * perfdata_sample_cpumode()). BPF user stacks can
 * carry kernel addresses and context markers; kernel addresses in front of
 * the first user address of a kernel-mode sample become its kernel part when
 * the kernel stack gave none, everything else is dropped, so no kernel
 * address ever lands in the user part. A user-mode sample has no kernel part.
 * Zero entries are dropped. A part that ends up empty is omitted together
 * with its marker.
 *
 * ip is the first real entry and misc says whether the sample hit kernel
 * code. When the stack of the interrupted mode is empty (no -g, or
 * bpf_get_stack() failed) the interrupted ip stands in for it, except for
 * the user part with no_user_part.
 */
#ifndef RECORDER_CALLCHAIN_H
#define RECORDER_CALLCHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* bpf_get_stack() returns at most this many frames per stack. */
#define CALLCHAIN_MAX_STACK	127
/* Two markers, two full stacks and the stand-in ip. */
#define CALLCHAIN_MAX		(2 * CALLCHAIN_MAX_STACK + 3)

struct callchain_input {
	bool kernel_mode;	/* the sample interrupted kernel code */
	uint64_t ip;		/* the interrupted ip */
	const uint64_t *kernel;	/* kernel stack, leaf first */
	size_t nr_kernel;
	const uint64_t *user;	/* user stack, leaf first */
	size_t nr_user;
	/*
	 * The user stack travels as registers and a stack copy (DWARF mode,
	 * perf's exclude_callchain_user): the callchain gets no user part,
	 * not even the stand-in ip.
	 */
	bool no_user_part;
};

struct callchain {
	uint64_t ips[CALLCHAIN_MAX];	/* what goes into the SAMPLE, markers included */
	size_t nr;
	uint64_t ip;		/* SAMPLE ip */
	uint16_t misc;		/* PERF_RECORD_MISC_KERNEL or _USER */
	const uint64_t *user;	/* the user part inside ips (no marker) */
	size_t nr_user;
};

/* Fills *cc from *in. Stacks longer than CALLCHAIN_MAX_STACK are cut. */
void callchain_build(const struct callchain_input *in, struct callchain *cc);

#endif /* RECORDER_CALLCHAIN_H */
