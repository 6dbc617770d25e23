/* SPDX-License-Identifier: MIT */
/*
 * emit.h - write one sample that BPF captured (CPU or off-CPU) to the file.
 *
 * The order is the file's contract: the task tracker first writes whatever
 * the file still lacks for the sample's pid/tid (COMM, MMAP2s), stamped no
 * later than the sample, then the SAMPLE itself follows with its callchain
 * split into kernel and user parts (callchain.h).
 *
 * With --call-graph dwarf a BPF record carries, after its frames, the user
 * registers and stack (struct profile_ustack and the stack bytes);
 * emit_ustack_parse() checks that block against the record's length and
 * the sample then gets REGS_USER and STACK_USER.
 */
#ifndef RECORDER_EMIT_H
#define RECORDER_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "recorder/callchain.h"

struct perfdata_writer;
struct task_tracker;

/* The user registers and stack of a sample (--call-graph dwarf). */
struct emit_ustack {
	bool present;		/* the event records them: REGS_USER + STACK_USER */
	uint64_t abi;		/* PERF_SAMPLE_REGS_ABI_64, or 0: no regs, no stack */
	const uint64_t *regs;	/* PROFILE_NR_UREGS of them when abi != 0 */
	uint64_t size;		/* STACK_USER size (bytes asked for) */
	uint64_t dyn_size;	/* valid bytes at stack (<= size) */
	const void *stack;
};

struct emit_sample {
	uint32_t pid, tid, cpu;
	uint64_t time, period;
	uint64_t id;			/* the event's sample id */
	const char *comm;		/* as BPF copied it: maybe not NUL-terminated */
	size_t comm_len;
	struct callchain_input chain;
	const void *raw;		/* PERF_SAMPLE_RAW payload, when the event has it */
	uint32_t raw_size;
	struct emit_ustack ustack;
};

/*
 * The block at p (len bytes: everything after the frames) into *u. Returns
 * the bytes it uses, or 0 when it is malformed or cut short.
 */
size_t emit_ustack_parse(const void *p, size_t len, struct emit_ustack *u);

/* Describe the sample's task; with describe_only, write no SAMPLE. 0 or -errno. */
int emit_sample(struct perfdata_writer *w, struct task_tracker *t, const struct emit_sample *e,
		bool describe_only);

struct perf_event_attr;
/*
 * The attr of a BPF_OUTPUT event (off-CPU, alloc) that shares the file
 * with the CPU event cpu_attr: its trailer bits, clock and inheritance,
 * IDENTIFIER, IP, PERIOD, CALLCHAIN and RAW, sample_period 1.
 */
void emit_bpf_output_attr(const struct perf_event_attr *cpu_attr, struct perf_event_attr *out);
/*
 * Make the len bytes of text in buf (size bytes) a RAW payload perf prints
 * as a string: it does so only when everything up to a final NUL is
 * printable, and the writer pads RAW so that 4 + its size is a multiple of
 * 8, so pad with spaces until the NUL is the last byte. The payload's size,
 * NUL included.
 */
size_t emit_raw_text_pad(char *buf, size_t len, size_t size);

#endif /* RECORDER_EMIT_H */
