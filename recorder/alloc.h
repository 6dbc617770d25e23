/* SPDX-License-Identifier: MIT */
/*
 * alloc.h - `bpfrec record --alloc[=BYTES]`: load bpf/alloc.bpf.c next to
 * the sampler, probe the allocators of the processes in scope, and write
 * the sampled allocations as the "alloc" and "inuse" events (their
 * contract is in perfdata/events.h, above PERFDATA_ALLOC_EVENT_NAME).
 *
 * A tracer (tracer.h: alloc_tracer) with a path of its own, apart from the
 * CPU samples: its ring buffer is its own, read into its own batch
 * (consume()), which is written (flush(), sorted by time) in the session's
 * round through emit.h: each (process, thread) is described once per batch
 * (emit_task(), with every user address its records hold, so a library
 * loaded late is found), then the SAMPLEs follow (emit_sample_alone()).
 * Records the ring buffer dropped are LOST_SAMPLES of the alloc event. At
 * the end of each file (file_end()), one inuse SAMPLE per sampled
 * allocation still live; a process that exited has its own in the first
 * file to end after its exit only (--switch-output), then they are dropped.
 *
 * Probes for -p, -a and anything not launched (uprobe at each entry, uretprobe at each return, per library
 * FILE, for every process that maps it): the C library the recorder runs
 * with is probed from the start (at attach), so a launched command's
 * first allocations count; other files as the task tracker reports the
 * mappings of processes in scope (the tracer's hooks): a C library
 * (libc.so*), jemalloc (libjemalloc*) or tcmalloc (libtcmalloc*). Each
 * file once, by device and inode; each address of it once (aliases such as
 * aligned_alloc and memalign share one).
 *
 * Every function returns 0 or -errno.
 */
#ifndef RECORDER_ALLOC_H
#define RECORDER_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "perfdata/events.h"

struct record_tracer_ops;

/* --alloc without a value: bytes between samples, on average (tcmalloc's and Go's). */
#define ALLOC_DEFAULT_INTERVAL	(512u * 1024)

/* --alloc: the tracer (tracer.h), in tracers.c's list. */
extern const struct record_tracer_ops alloc_tracer;

/*
 * The fast path for a command the recorder launches alone (no -p, -t,
 * -a): the command runs with libbpfrec-alloc.so preloaded
 * (recorder/preload/alloc_preload.c, its environment from the tracer's
 * command_env()), which samples in process and calls two marker
 * functions; only those are probed, and no C library is (not at attach,
 * nor through the tracker's hooks). The library is looked for next to the
 * recorder's executable, else in the install directory; without it the
 * tracer stays on the uprobes.
 */
#define ALLOC_PRELOAD_LIB	"libbpfrec-alloc.so"

/* ---- pure helpers, for tests ---- */

/* "malloc", "calloc", ..., for enum alloc_func; NULL past the last. */
const char *alloc_func_name(uint32_t func);
/*
 * The bytes a sampled allocation of size bytes stands for at a sampling
 * interval: size / (1 - exp(-size / interval)), rounded; size itself at
 * interval 1 (and 0 for size 0).
 */
uint64_t alloc_weight(uint64_t size, uint64_t interval);
/*
 * The RAW text "FUNC SIZE", space-padded so that 4 + the length is a
 * multiple of 8 and NUL-terminated (what perf prints as a BPF string).
 * Returns its size, NUL included, or 0 when buf is too small.
 */
#define ALLOC_RAW_TEXT_MAX	48
size_t alloc_raw_text(uint32_t func, uint64_t size, char *buf, size_t len);
/* The attr of the alloc (or inuse) event next to cpu_attr, at interval. */
void alloc_build_attr(const struct perf_event_attr *cpu_attr, uint64_t interval,
		      struct perf_event_attr *out);
/* Is this library (a path) an allocator the tracer probes? */
bool alloc_is_allocator_lib(const char *path);

#endif /* RECORDER_ALLOC_H */
