// SPDX-License-Identifier: MIT
/* status.c - the live status line (contract in status.h). */
#include <stdio.h>

#include "tools/cli/status.h"

void status_line_init(struct status_line *l, FILE *f, uint64_t now_ns)
{
	*l = (struct status_line){ .f = f, .start_ns = now_ns, .last_ns = now_ns };
}

int status_line_format(char *buf, size_t len, const struct bpfrec_record_stats *st,
		       double elapsed_s, double samples_per_s)
{
	return snprintf(buf, len, "bpfrec record: %.1fs  %.0f samples/s  %llu lost  %.1f MB  %zu pids",
			elapsed_s, samples_per_s, (unsigned long long)st->lost,
			(double)st->bytes / (1024.0 * 1024.0), st->nr_processes);
}

int status_bpf_format(char *buf, size_t len, const struct bpfrec_record_stats *st)
{
	if (!st->bpf_counted)
		return snprintf(buf, len, "bpfrec record: BPF program time not counted: the kernel "
				"counts it for CAP_SYS_ADMIN or with sysctl kernel.bpf_stats_enabled=1");
	return snprintf(buf, len, "bpfrec record: BPF programs ran %.3f ms in %llu runs "
			"(%.2f us a run)", (double)st->bpf_run_ns / 1e6,
			(unsigned long long)st->bpf_runs,
			st->bpf_runs ? (double)st->bpf_run_ns / 1e3 / (double)st->bpf_runs : 0.0);
}

bool status_line_due(const struct status_line *l, uint64_t now_ns)
{
	return l->f && now_ns - l->last_ns >= STATUS_INTERVAL_MS * 1000000ull;
}

void status_line_update(struct status_line *l, const struct bpfrec_record_stats *st, uint64_t now_ns)
{
	uint64_t seen = st->samples + st->lost;
	double dt;
	char text[256];

	if (!status_line_due(l, now_ns))
		return;
	dt = (double)(now_ns - l->last_ns) / 1e9;
	status_line_format(text, sizeof(text), st, (double)(now_ns - l->start_ns) / 1e9,
			   seen >= l->last_samples ? (double)(seen - l->last_samples) / dt : 0);
	/* Carriage return, the text, erase what an earlier longer line left. */
	fprintf(l->f, "\r%s\033[K", text);
	fflush(l->f);
	l->shown = true;
	l->last_ns = now_ns;
	l->last_samples = seen;
}

void status_line_clear(struct status_line *l)
{
	if (!l->f || !l->shown)
		return;
	fputs("\r\033[K", l->f);
	fflush(l->f);
	l->shown = false;
}
