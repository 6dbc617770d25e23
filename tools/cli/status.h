/* SPDX-License-Identifier: MIT */
/*
 * status.h - the live status line of `bpfrec record` on a terminal:
 *
 *   bpfrec record: 12.0s  7998 samples/s  0 lost  4.2 MB  37 pids
 *
 * redrawn in place ("\r", erase to end of line) at most every
 * STATUS_INTERVAL_MS, and erased before anything else is printed. The
 * caller decides whether there is one at all (stderr a TTY, not -q): it
 * never goes anywhere but the stream given, so pipe mode's stdout and a
 * redirected stderr never see it.
 */
#ifndef RECORDER_STATUS_H
#define RECORDER_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <bpfrec/record.h>

#define STATUS_INTERVAL_MS	500

struct status_line {
	FILE *f;		/* NULL: disabled */
	uint64_t start_ns;	/* CLOCK_MONOTONIC */
	uint64_t last_ns;	/* last redraw */
	uint64_t last_samples;	/* samples + lost at the last redraw */
	bool shown;		/* something is on the line now */
};

/* f NULL disables every call below. */
void status_line_init(struct status_line *l, FILE *f, uint64_t now_ns);
/* Redraw when STATUS_INTERVAL_MS have passed since the last redraw. */
/*
 * Whether the line is shown and due for an update: the stats cost a dozen
 * bpf() calls (counters, programs' run time), too many to read at every
 * poll of a recording whose rings are read every few ms.
 */
bool status_line_due(const struct status_line *l, uint64_t now_ns);
void status_line_update(struct status_line *l, const struct bpfrec_record_stats *st, uint64_t now_ns);
/* Erase the line (before printing anything else on f). */
void status_line_clear(struct status_line *l);

/* The text of the line, without control characters; returns its length. */
int status_line_format(char *buf, size_t len, const struct bpfrec_record_stats *st,
		       double elapsed_s, double samples_per_s);

/*
 * -v's line on what the BPF programs cost, as snprintf:
 *   bpfrec record: BPF programs ran 12.345 ms in 4000 runs (3.09 us a run)
 * or why the kernel did not count it.
 */
int status_bpf_format(char *buf, size_t len, const struct bpfrec_record_stats *st);

#endif /* RECORDER_STATUS_H */
