/* SPDX-License-Identifier: MIT */
/*
 * bpfrec/sched.h - the scheduler metrics of `bpfrec record --sched`: per
 * thread, on-CPU time, run-queue latency (count, total, max and a log2
 * histogram in microseconds, as runqlat's) and switch-outs by reason.
 *
 * Installed as <bpfrec/sched.h>. Where they come from:
 *   bpfrec_record_sched_metrics()  a recording, at any time (<bpfrec/record.h>)
 *   bpfrec_sched_metrics_read()    a perf.data that `record --sched` wrote
 * Where they go: an exporter, a struct of callbacks a program implements,
 * or one of the two provided (console tables and histograms, JSON), driven
 * by bpfrec_sched_export() thread by thread or summed per process.
 *
 * A metrics set is a snapshot the caller owns (bpfrec_sched_metrics_free).
 * Its rows are read through bpfrec_sched_metrics_thread(), never indexed as
 * an array: struct bpfrec_sched_thread may grow fields at its end.
 */
#ifndef BPFREC_SCHED_H
#define BPFREC_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <bpfrec/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Slot i counts waits of [2^i, 2^(i+1)) microseconds; slot 0 also those under 1 us. */
#define BPFREC_SCHED_HIST_SLOTS	32

/* Why a thread left the CPU. */
enum bpfrec_sched_switch {
	BPFREC_SCHED_PREEMPTED = 0,	/* still runnable: preempted or yielded */
	BPFREC_SCHED_SLEEP = 1,		/* voluntary sleep (S; also T, t, I) */
	BPFREC_SCHED_IO = 2,		/* uninterruptible (D), mostly I/O */
	BPFREC_SCHED_EXIT = 3,		/* its last switch */
	BPFREC_SCHED_NR_SWITCH = 4,
};

/*
 * One thread, or (tid 0) one process's threads summed. The library's rows
 * carry its sizeof in sz: a program built against a newer header reads a
 * field only when it lies below sz.
 */
struct bpfrec_sched_thread {
	size_t sz;
	uint32_t pid, tid;
	char comm[16];			/* NUL-terminated */
	uint64_t oncpu_ns;		/* time on a CPU */
	uint64_t runq_count;		/* waits for a CPU (runnable, not running) */
	uint64_t runq_total_ns;
	uint64_t runq_max_ns;
	uint64_t switches[BPFREC_SCHED_NR_SWITCH];
	uint32_t hist[BPFREC_SCHED_HIST_SLOTS];	/* runq waits, log2 microseconds */
};

struct bpfrec_sched_metrics;

BPFREC_API size_t bpfrec_sched_metrics_nr_threads(const struct bpfrec_sched_metrics *m);
/* Row i (by pid, then tid), or NULL when out of range. */
BPFREC_API const struct bpfrec_sched_thread *bpfrec_sched_metrics_thread(
	const struct bpfrec_sched_metrics *m, size_t i);
BPFREC_API void bpfrec_sched_metrics_free(struct bpfrec_sched_metrics *m);

/*
 * The metrics a perf.data holds (file or pipe format; path "-" is stdin).
 * 0; -ENOENT when it has none (recorded without --sched); -EINVAL when a
 * metrics record is malformed; -errno when the file cannot be read. *out
 * is set unless -ENOMEM, also on failure (then with no rows), so that
 * bpfrec_sched_metrics_error() can say why in one line: free it either way.
 */
BPFREC_API int bpfrec_sched_metrics_read(const char *path, struct bpfrec_sched_metrics **out);
/* Why the read that made m failed; "" when it did not. */
BPFREC_API const char *bpfrec_sched_metrics_error(const struct bpfrec_sched_metrics *m);

/*
 * The q-quantile (0 < q <= 1) of a histogram's waits in nanoseconds: the
 * upper bound of the slot that holds it, never above max_ns. 0 without waits.
 */
BPFREC_API uint64_t bpfrec_sched_hist_quantile_ns(const uint32_t *hist, uint64_t max_ns,
						  double q);

/* Rows by thread, or summed per process (tid 0, comm of its first thread). */
enum bpfrec_sched_group {
	BPFREC_SCHED_BY_PROCESS = 0,
	BPFREC_SCHED_BY_THREAD = 1,
};

/*
 * What a program implements to export metrics. bpfrec_sched_export()
 * calls begin once, then for each group asked for: group with the number
 * of rows, row for each, then end once. NULL callbacks are skipped; a
 * non-zero return stops the export and is returned.
 */
struct bpfrec_sched_exporter {
	size_t sz;
	void *ctx;
	int (*begin)(void *ctx);
	int (*group)(void *ctx, enum bpfrec_sched_group g, size_t nr_rows);
	int (*row)(void *ctx, enum bpfrec_sched_group g, const struct bpfrec_sched_thread *t);
	int (*end)(void *ctx);
};
#define bpfrec_sched_exporter__last_field end

/* NULL opts: both groups. */
struct bpfrec_sched_export_opts {
	size_t sz;
	bool processes;		/* rows per process */
	bool threads;		/* rows per thread */
};
#define bpfrec_sched_export_opts__last_field threads

BPFREC_API int bpfrec_sched_export(const struct bpfrec_sched_metrics *m,
				   const struct bpfrec_sched_export_opts *opts,
				   const struct bpfrec_sched_exporter *e);

/*
 * The provided exporters, writing to out (not closed). Console: a table
 * per group (on-CPU, runq count/total/p50/p99/max, switches by reason) and,
 * with hist, a runqlat-style log2 histogram per row. JSON: one object,
 * {"processes": [...], "threads": [...]}, fields in Documentation/bpfrec-sched.md.
 */
BPFREC_API int bpfrec_sched_console_exporter_new(FILE *out, bool hist,
						 struct bpfrec_sched_exporter **e);
BPFREC_API int bpfrec_sched_json_exporter_new(FILE *out, struct bpfrec_sched_exporter **e);
BPFREC_API void bpfrec_sched_exporter_free(struct bpfrec_sched_exporter *e);

#ifdef __cplusplus
}
#endif

#endif /* BPFREC_SCHED_H */
