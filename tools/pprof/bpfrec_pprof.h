/* SPDX-License-Identifier: MIT */
/*
 * bpfrec/pprof.h - convert perf.data (perf's or ours, file or pipe format)
 * into symbolized, gzip-compressed pprof profiles: what `bpfrec pprof`
 * does, as a library.
 *
 * Installed as <bpfrec/pprof.h>. Two steps, as the converter works:
 *
 *   bpfrec_pprof_new(opts)        filters, labels, where symbols come from
 *   bpfrec_pprof_read_path/_fd()  read the whole recording once (memory
 *                                 follows distinct stacks, not samples)
 *   bpfrec_pprof_write_*(i)       profile i (one per event, in file order;
 *                                 with a group callback one per event and
 *                                 group) to a path (written to a temporary
 *                                 name and renamed: never half-written), an
 *                                 fd, or a write callback
 *   bpfrec_pprof_free()
 *
 * Read once per handle (-EALREADY after); write before reading: -EINVAL.
 * Errors are -errno, and bpfrec_pprof_error() says what and where.
 */
#ifndef BPFREC_PPROF_H
#define BPFREC_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bpfrec/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bpfrec_pprof;

/* Declare with BPFREC_OPTS(bpfrec_pprof_opts, o, ...); zero = default. */
struct bpfrec_pprof_opts {
	size_t sz;
	const char *input_name;		/* for messages; NULL = the path, or "fd N" */
	BPFREC_SAMPLE_FILTER_FIELDS;	/* event, pids, tids, comms (bpfrec/common.h) */
	const char *labels;		/* per-sample labels: "pid,tid,comm,cpu,trace:FIELD" */
	bool no_symbolize;		/* addresses and build-ids only */
	BPFREC_SYMBOL_SOURCE_FIELDS;	/* no_inlines, kallsyms, symfs, debug_dir, jit_dir */
	/*
	 * The profile's time when the file has no CLOCK_DATA (ns since the
	 * epoch); 0 = the input file's mtime, or now for a pipe.
	 */
	uint64_t wall_clock_at_end;
	bpfrec_log_fn log;		/* warnings about the whole conversion */
	void *log_ctx;
	/*
	 * Split the profiles by group (a service, a container): the group of
	 * each sampled process, asked at its first sample (in time order) and
	 * remembered while its command name stays the same: asked again after
	 * an exec or a rename. comm is the process's command name as the
	 * recording knows it at that point (its main thread's, else the
	 * sampled thread's; "swapper" for pid 0; "" when unknown), never NULL.
	 * The returned name is copied; NULL drops the process's samples while
	 * it has that name (counted in stats.filtered). The profiles are
	 * then one per (event, group) that has samples, by event in file order,
	 * then by group in order of first sample; bpfrec_pprof_profile_group()
	 * names the group. A recording without samples then has no profiles
	 * (not an error). NULL callback: one profile per selected event, with
	 * or without samples.
	 */
	const char *(*group)(void *ctx, uint32_t pid, const char *comm);
	void *group_ctx;
	/*
	 * Symbol tables kept across conversions (bpfrec_pprof_symbols_new()):
	 * files found, parsed and opened once for a series of recordings of
	 * the same machine, as a continuous profiler converts one window after
	 * another. NULL: this conversion's own, from the fields above.
	 */
	struct bpfrec_pprof_symbols *symbols;
	/*
	 * bpfrec_pprof_symbols_new() only: the caller tells every file the
	 * recorder files into the build-id cache (bpfrec_pprof_symbols_filed(),
	 * from bpfrec_record_opts.on_filed), so a file with a build-id is not
	 * checked at each conversion, only after its build-id was filed.
	 */
	bool symbols_filed_told;
	/*
	 * bpfrec_pprof_symbols_new() only: read the kernel's symbols now, not
	 * at the first kernel address a conversion meets. A long-running user
	 * (the agent) then pays their memory and their parse when it starts,
	 * not in whichever window first holds a kernel frame.
	 */
	bool symbols_kernel_now;
};
#define bpfrec_pprof_opts__last_field symbols_kernel_now

/* What the conversion met; declare with BPFREC_OPTS(bpfrec_pprof_stats, st). */
struct bpfrec_pprof_stats {
	size_t sz;
	uint64_t samples;		/* SAMPLE records read */
	uint64_t kept;			/* in a profile */
	uint64_t filtered;		/* dropped by the filters */
	uint64_t unknown_event;		/* id matches no event */
	uint64_t unknown_pid;		/* of processes no COMM/MMAP describes */
	uint64_t lost;			/* samples the recording lost */
	uint64_t bad_records;		/* malformed records skipped */
	uint64_t frames, stacks;	/* distinct */
	uint64_t unsymbolized;		/* distinct frames left as addresses */
	/* DWARF-mode samples, unwound here. */
	uint64_t unwind_samples, unwind_frames;
	uint64_t unwind_reached_end;	/* walks that reached the outermost frame */
	uint64_t unwind_no_cfi, unwind_outside_stack, unwind_no_file, unwind_depth;
	unsigned int unwind_max_frames;	/* the depth limit unwind_depth counts */
	uint64_t unwind_no_stack;	/* without user registers or stack */
	uint64_t unwind_cut;		/* stacks cut to fit a 64 KiB record */
	uint64_t unwind_files_missing;	/* mappings without a file to read CFI from */
};

/* One written profile. Declare with BPFREC_OPTS(bpfrec_pprof_profile_info, i). */
struct bpfrec_pprof_profile_info {
	size_t sz;
	uint64_t samples;
	size_t locations, functions, mappings;
	uint64_t bytes;			/* compressed bytes written */
};

/* As bpfrec_record_new(): *conv is set unless -ENOMEM, free it either way. */
BPFREC_API int bpfrec_pprof_new(const struct bpfrec_pprof_opts *opts,
				struct bpfrec_pprof **conv);
BPFREC_API int bpfrec_pprof_read_path(struct bpfrec_pprof *conv, const char *path);
/* fd: a file or a pipe (perf record -o -), read to its end, not closed. */
BPFREC_API int bpfrec_pprof_read_fd(struct bpfrec_pprof *conv, int fd);

BPFREC_API size_t bpfrec_pprof_nr_profiles(const struct bpfrec_pprof *conv);
BPFREC_API const char *bpfrec_pprof_profile_name(const struct bpfrec_pprof *conv, size_t i);
BPFREC_API uint64_t bpfrec_pprof_profile_samples(const struct bpfrec_pprof *conv, size_t i);
/*
 * The event's full name as recorded ("cpu-clock", "offcpu-time",
 * "sched-delay", "cpu/cycles,period=1000/u"; "heap" for the one profile of
 * the alloc and inuse events), where bpfrec_pprof_profile_name() gives the
 * short one made for file names. NULL when there is no profile i.
 */
BPFREC_API const char *bpfrec_pprof_profile_event(const struct bpfrec_pprof *conv, size_t i);
/* The group of profile i (opts.group's answer); NULL without a group callback. */
BPFREC_API const char *bpfrec_pprof_profile_group(const struct bpfrec_pprof *conv, size_t i);

/* info may be NULL. The path gets mode 0600 (a profile shows what programs do). */
BPFREC_API int bpfrec_pprof_write_path(struct bpfrec_pprof *conv, size_t i, const char *path,
				       struct bpfrec_pprof_profile_info *info);
BPFREC_API int bpfrec_pprof_write_fd(struct bpfrec_pprof *conv, size_t i, int fd,
				     struct bpfrec_pprof_profile_info *info);
BPFREC_API int bpfrec_pprof_write_callback(struct bpfrec_pprof *conv, size_t i,
					   bpfrec_write_fn write_fn, void *ctx,
					   struct bpfrec_pprof_profile_info *info);

/*
 * Symbol tables for many conversions: what kallsyms, symfs, debug_dir,
 * jit_dir and no_inlines of opts say (the rest is ignored), loaded as the
 * conversions need them and kept, every file opened staying open, until
 * bpfrec_pprof_symbols_free(). What is learnt per process (JIT maps) is
 * forgotten at each conversion, and each file is checked once in each
 * (with opts.symbols_filed_told, only a file without a build-id, or one
 * whose build-id was filed since: bpfrec_pprof_symbols_filed()): one
 * that changed where it was found (another inode, size or mtime: a binary
 * replaced, a Python symbol file the recorder filed again, grown, under
 * the same build-id) is found anew, one not found before is looked for
 * again. A kernel that loads a module is seen by a new one: the caller
 * renews it from time to time and when bpfrec_pprof_symbols_size() passes
 * its bound.
 * One conversion at a time may use it (not thread-safe). Free it after the
 * conversions that use it.
 */
struct bpfrec_pprof_symbols;
BPFREC_API int bpfrec_pprof_symbols_new(const struct bpfrec_pprof_opts *opts,
					struct bpfrec_pprof_symbols **symbols);
BPFREC_API void bpfrec_pprof_symbols_free(struct bpfrec_pprof_symbols *symbols);
/*
 * With opts.symbols_filed_told: a file was written into the build-id cache
 * (again) under build_id (bpfrec_record_opts.on_filed); what the tables
 * found for it, or did not, is checked at its next use by a later
 * conversion. Call it before the conversion of the recording that was
 * finished after the filing. Not thread-safe, as the conversions.
 */
BPFREC_API void bpfrec_pprof_symbols_filed(struct bpfrec_pprof_symbols *symbols,
					   const uint8_t *build_id, size_t size);
/*
 * About the bytes the tables hold now: the kernel's symbols and the tables
 * made of every file named (heap), plus the pages of those files (binary,
 * debug file, dwz file, mapped by libdw) resident in this process, as
 * /proc/self/smaps counts them: what they add to RSS. libdw's own parse
 * state is not counted. For a caller bounding its memory by renewing the
 * tables when this passes a limit; call it between conversions (it walks
 * the files and reads smaps). 0 for NULL.
 */
BPFREC_API size_t bpfrec_pprof_symbols_size(const struct bpfrec_pprof_symbols *symbols);

BPFREC_API int bpfrec_pprof_get_stats(const struct bpfrec_pprof *conv,
				      struct bpfrec_pprof_stats *stats);
BPFREC_API const char *bpfrec_pprof_error(const struct bpfrec_pprof *conv);
BPFREC_API void bpfrec_pprof_free(struct bpfrec_pprof *conv);

#ifdef __cplusplus
}
#endif

#endif /* BPFREC_PPROF_H */
