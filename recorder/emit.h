/* SPDX-License-Identifier: MIT */
/*
 * emit.h - write one sample that BPF captured (CPU, off-CPU, a tracer's) to
 * the file, with what the file must say first about its task: the one place
 * the recorder writes samples, task descriptions and LOST_SAMPLES. The task
 * tracker (tasks.h) writes nothing: it hands its descriptions here.
 *
 * The order is the file's contract: the task tracker decides what the file
 * still lacks for the sample's pid/tid (COMM, MMAP2s, build-ids: a
 * taskdesc.h description, stamped no later than the sample), emit_desc()
 * writes it, then the SAMPLE itself follows with its callchain split into
 * kernel and user parts (callchain.h).
 *
 * With --call-graph dwarf a BPF record carries, after its frames, the user
 * registers and stack (struct profile_ustack and the stack bytes);
 * emit_record_parse() checks the frames and that block against the
 * record's length (the one parser of them, for every record layout that
 * has them) and the sample then gets REGS_USER and STACK_USER.
 */
#ifndef RECORDER_EMIT_H
#define RECORDER_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "recorder/callchain.h"

struct perfdata_writer;
struct task_desc;
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
 * The frames and user-stack block of a BPF record of size bytes (a
 * profile_sample, an offcpu_sample: bpf/profile.h, bpf/offcpu.h), which
 * the caller read nr_kernel and nr_user from: that many frames (at most
 * PROFILE_MAX_STACK each) start at frames_off, and with has_ustack the
 * block follows them, parsed into *u (else *u says none). Returns the
 * bytes the record uses, frames and block, or 0 when it is malformed or
 * cut short (*u then says none).
 */
size_t emit_record_parse(const void *rec, size_t size, size_t frames_off, uint32_t nr_kernel,
			 uint32_t nr_user, bool has_ustack, struct emit_ustack *u);

/* Write a description, its records in order. 0 or the writer's -errno. */
int emit_desc(struct perfdata_writer *w, const struct task_desc *d);
/*
 * A LOST_SAMPLES record of event id, stamped time, for what a loss counter
 * gained since the file last said: total is the counter now, *written what
 * the file already counts (raised once the record is written). 1 when it
 * wrote one, 0 when there is nothing new, or the writer's -errno.
 */
int emit_lost(struct perfdata_writer *w, uint64_t id, uint64_t total, uint64_t *written,
	      uint64_t time);

/* Describe the sample's task; with describe_only, write no SAMPLE. 0 or -errno. */
int emit_sample(struct perfdata_writer *w, struct task_tracker *t, const struct emit_sample *e,
		bool describe_only);
/*
 * Samples written in a batch of their own (--alloc): describe (pid, tid)
 * once, before any of its samples, with the user addresses of all of them
 * (task_tracker_describe(): comm NUL-terminated), then write each with
 * emit_sample_alone(), which writes the SAMPLE only. 0 or -errno.
 */
int emit_task(struct perfdata_writer *w, struct task_tracker *t, uint32_t pid, uint32_t tid,
	      const char *comm, uint64_t time, uint32_t cpu, const uint64_t *user_ips,
	      size_t nr_user);
int emit_sample_alone(struct perfdata_writer *w, const struct emit_sample *e);

#endif /* RECORDER_EMIT_H */
