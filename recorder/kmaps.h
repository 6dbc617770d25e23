/* SPDX-License-Identifier: MIT */
/*
 * kmaps.h - the kernel as a recording describes it to perf: what the
 * recording takes from /proc/kallsyms, and the kernel map written from it
 * before anything else (the records `perf record` synthesizes, kmaps.c).
 *
 * /proc/kallsyms is read once per recording, here: the kernel map's text
 * range and where __schedule lies (the off-CPU and run-queue tracers'
 * chains start there, offcpu.h), in one pass (symbolize/kallsyms.h).
 */
#ifndef RECORDER_KMAPS_H
#define RECORDER_KMAPS_H

#include <stdint.h>

struct perfdata_writer;

/* The kernel's text as /proc/kallsyms gives it. */
struct kernel_text {
	uint64_t start, end;			/* [_text, _etext) */
	uint64_t sched_start, sched_end;	/* __schedule; 0, 0 when unknown */
};

/*
 * Read kallsyms_path (NULL = /proc/kallsyms) once. Prints nothing; returns
 * 0, -EPERM when the addresses read as zero (hidden by kernel.kptr_restrict
 * from this process: a privilege problem, privs.h), -ENOENT when _text or
 * _etext (or the file) is missing, -EINVAL when _etext is not above _text,
 * or another -errno from opening the file. __schedule is not needed: its
 * range is left 0, 0 when it is missing, hidden or not text.
 */
int kernel_text_read(const char *kallsyms_path, struct kernel_text *kt);

/*
 * The kernel map: MMAP "[kernel.kallsyms]_text" (pid -1, misc KERNEL,
 * start = pgoff = _text, len = _etext - _text) from kt, then one MMAP per
 * module in modules_path (as perf does; modules whose addresses are hidden
 * are left out), and the kernel build-id from notes_path. NULL paths =
 * /proc/modules, /sys/kernel/notes. Write it before anything else. Fails
 * only with the writer's errors.
 */
int kernel_maps_write(struct perfdata_writer *w, const struct kernel_text *kt,
		      const char *modules_path, const char *notes_path);

#endif /* RECORDER_KMAPS_H */
