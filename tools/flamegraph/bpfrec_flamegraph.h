/* SPDX-License-Identifier: MIT */
/*
 * bpfrec/flamegraph.h - a flame graph of perf.data (perf's or ours, file or
 * pipe format): what `bpfrec flamegraph` does, as a library.
 *
 * Installed as <bpfrec/flamegraph.h>. The input is read and symbolized by
 * the pprof converter (bpfrec/pprof.h); each event becomes a view whose
 * columns are the event's pprof sample types (samples and CPU time,
 * off-CPU or run-queue nanoseconds, allocated and in-use bytes and
 * objects). Output is one self-contained file: an interactive HTML page
 * (everything inline, nothing fetched) or a static SVG.
 *
 *   bpfrec_flamegraph_new(opts)
 *   bpfrec_flamegraph_read_path/_fd()       the input, once
 *   bpfrec_flamegraph_read_base_path/_fd()  opts.diff only: the base, once
 *   bpfrec_flamegraph_write_path/_fd()      the page or SVG (a path is
 *                                           written to a temporary name and
 *                                           renamed: never half-written)
 *   bpfrec_flamegraph_free()
 *
 * Memory follows the distinct stacks (per pid, tid and comm), not the
 * samples. Errors are -errno, and bpfrec_flamegraph_error() says what.
 */
#ifndef BPFREC_FLAMEGRAPH_H
#define BPFREC_FLAMEGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bpfrec/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bpfrec_flamegraph;

enum bpfrec_flamegraph_format {
	BPFREC_FLAMEGRAPH_HTML,		/* interactive page */
	BPFREC_FLAMEGRAPH_SVG,		/* static, one view: the first event's */
};

/* Declare with BPFREC_OPTS(bpfrec_flamegraph_opts, o, ...); zero = default. */
struct bpfrec_flamegraph_opts {
	size_t sz;
	const char *input_name;		/* for messages and the title; NULL = the path */
	const char *base_name;		/* the same for the diff base */
	const char *title;		/* NULL = "Flame graph of INPUT" */
	enum bpfrec_flamegraph_format format;
	bool icicle;			/* root at the top */
	/*
	 * A differential graph: the input against a base read with
	 * bpfrec_flamegraph_read_base_*(). Widths are the input's; colours
	 * are each frame's share in the input minus its share in the base
	 * (normalised by each side's total): red grew, blue shrank.
	 */
	bool diff;
	/*
	 * Under each frame, the children narrower than this share of the
	 * whole (0..1, in every column) are folded into one frame with their
	 * total. 0 = 0.0001 (0.01 %); negative = fold nothing.
	 */
	double min_share;
	/* Filters and symbols: as bpfrec_pprof_opts (bpfrec/common.h). */
	BPFREC_SAMPLE_FILTER_FIELDS;	/* event, pids, tids, comms */
	BPFREC_SYMBOL_SOURCE_FIELDS;	/* no_inlines, kallsyms, symfs, debug_dir, jit_dir */
	bpfrec_log_fn log;		/* warnings about the conversion */
	void *log_ctx;
};
#define bpfrec_flamegraph_opts__last_field log_ctx

/* Declare with BPFREC_OPTS(bpfrec_flamegraph_info, i). */
struct bpfrec_flamegraph_info {
	size_t sz;
	size_t views;			/* events written (SVG: 1) */
	uint64_t frames;		/* nodes drawn, over every view */
	uint64_t folded;		/* frames folded into [folded] ones */
	uint64_t bytes;
};

/* As bpfrec_pprof_new(): *fg is set unless -ENOMEM, free it either way. */
BPFREC_API int bpfrec_flamegraph_new(const struct bpfrec_flamegraph_opts *opts,
				     struct bpfrec_flamegraph **fg);
BPFREC_API int bpfrec_flamegraph_read_path(struct bpfrec_flamegraph *fg, const char *path);
/* fd: a file or a pipe, read to its end, not closed. */
BPFREC_API int bpfrec_flamegraph_read_fd(struct bpfrec_flamegraph *fg, int fd);
BPFREC_API int bpfrec_flamegraph_read_base_path(struct bpfrec_flamegraph *fg, const char *path);
BPFREC_API int bpfrec_flamegraph_read_base_fd(struct bpfrec_flamegraph *fg, int fd);

BPFREC_API size_t bpfrec_flamegraph_nr_views(const struct bpfrec_flamegraph *fg);
BPFREC_API const char *bpfrec_flamegraph_view_name(const struct bpfrec_flamegraph *fg, size_t i);

/* info may be NULL. The path gets mode 0600. */
BPFREC_API int bpfrec_flamegraph_write_path(struct bpfrec_flamegraph *fg, const char *path,
					    struct bpfrec_flamegraph_info *info);
/* Written from fd's current offset; fd is not closed. */
BPFREC_API int bpfrec_flamegraph_write_fd(struct bpfrec_flamegraph *fg, int fd,
					  struct bpfrec_flamegraph_info *info);

BPFREC_API const char *bpfrec_flamegraph_error(const struct bpfrec_flamegraph *fg);
BPFREC_API void bpfrec_flamegraph_free(struct bpfrec_flamegraph *fg);

#ifdef __cplusplus
}
#endif

#endif /* BPFREC_FLAMEGRAPH_H */
