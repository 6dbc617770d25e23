/* SPDX-License-Identifier: MIT */
/*
 * emit.h - the one place the recorder writes records through perfdata's
 * writer (perfdata/writer.h): its callers decide what to write, emit.c
 * builds the records and their sample_id trailers. Every record but the
 * writer's life cycle (new, add_event, start, checkpoint, finish) comes
 * through here:
 *   - a sample that BPF captured (CPU, off-CPU, a tracer's), with what the
 *     file must say first about its task: emit_sample(), emit_task(),
 *     emit_sample_alone(); a task description alone, emit_desc(). The task
 *     tracker (tasks.h) writes nothing: it hands its descriptions here;
 *   - a loss counter's LOST_SAMPLES: emit_lost();
 *   - FORK and EXIT from the task notices: emit_fork(), emit_exit();
 *   - the end of a round, FINISHED_ROUND: emit_round_end();
 *   - the kernel as perf synthesizes it at a file's start (kmaps.h), its
 *     MMAPs and build-ids: emit_kernel_mmap(), emit_kernel_build_id(); and
 *     the loaded BPF functions' KSYMBOLs: emit_bpf_ksymbol();
 *   - --sched's metrics at the recording's end: emit_sched_metrics().
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
 *
 * Every function that writes returns 0 or the writer's -errno (emit_lost():
 * 1 when it wrote).
 */
#ifndef RECORDER_EMIT_H
#define RECORDER_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "recorder/callchain.h"

struct bpfrec_sched_metrics;
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
 * PROFILE_MAX_STACK each) start at frames_off, then extra bytes of the
 * record's own (a sample's Python frames), and with has_ustack the
 * block follows them, parsed into *u (else *u says none). Returns the
 * bytes the record uses, frames and block, or 0 when it is malformed or
 * cut short (*u then says none).
 */
size_t emit_record_parse(const void *rec, size_t size, size_t frames_off, uint32_t nr_kernel,
			 uint32_t nr_user, size_t extra, bool has_ustack, struct emit_ustack *u);

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

/*
 * A task notice, stamped for event id: tid of pid starts (FORK) or ends
 * (EXIT); ptid of ppid is its parent.
 */
struct emit_task_change {
	uint32_t pid, tid, ppid, ptid, cpu;
	uint64_t time;
	uint64_t id;		/* the event's sample id */
};
int emit_fork(struct perfdata_writer *w, const struct emit_task_change *c);
int emit_exit(struct perfdata_writer *w, const struct emit_task_change *c);

/* FINISHED_ROUND: the end of a round, a batch written in time order (writer.h). */
int emit_round_end(struct perfdata_writer *w);

/*
 * The kernel as perf synthesizes it (kmaps.h), its trailers all zero as
 * perf writes them: an MMAP of pid -1, misc KERNEL, of [start, start + len)
 * at pgoff named filename; the build-id of a kernel file (cpumode KERNEL)
 * named filename ("[kernel.kallsyms]" for the kernel itself).
 */
int emit_kernel_mmap(struct perfdata_writer *w, uint64_t start, uint64_t len, uint64_t pgoff,
		     const char *filename);
int emit_kernel_build_id(struct perfdata_writer *w, const uint8_t *build_id, size_t size,
			 const char *filename);
/*
 * A KSYMBOL of a JIT-compiled BPF function [addr, addr + len) named name,
 * its trailer zero as perf writes the ones it synthesizes: before the
 * samples that fall in it. -EINVAL for a name too long for a record.
 */
int emit_bpf_ksymbol(struct perfdata_writer *w, uint64_t addr, uint32_t len, const char *name);

/* --sched's per-thread metrics (perfdata/schedstats.h), untimed: after the last round. */
int emit_sched_metrics(struct perfdata_writer *w, const struct bpfrec_sched_metrics *m);

#endif /* RECORDER_EMIT_H */
