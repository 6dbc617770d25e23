// SPDX-License-Identifier: MIT
/*
 * sched_export.c - scheduler metrics out of a perf.data, and into an
 * exporter: the driver (bpfrec_sched_export) and the two provided
 * exporters, console and JSON (contract in bpfrec/sched.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpfrec/sched.h>

#include "perfdata/reader.h"
#include "perfdata/schedstats.h"
#include "tools/lib/opts.h"

int bpfrec_sched_metrics_read(const char *path, struct bpfrec_sched_metrics **out)
{
	struct bpfrec_sched_metrics *m = perfdata_sched_metrics_new();
	const struct perf_event_header *rec;
	struct perfdata_reader *r = NULL;
	bool found = false;
	int fd, ret;

	*out = m;
	if (!m)
		return -ENOMEM;
	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0) {
		ret = -errno;
		snprintf(m->err, sizeof(m->err), "cannot open %s: %s", path, strerror(errno));
		return ret;
	}
	ret = perfdata_reader_open(fd, path, &r);
	while (!ret && (ret = perfdata_reader_next(r, &rec)) == 1) {
		ret = perfdata_sched_decode(rec, m);
		if (ret == -ENOENT) {
			ret = 0;	/* another record */
		} else if (ret == -EINVAL) {
			snprintf(m->err, sizeof(m->err), "%s: the scheduler metrics record at offset "
				 "%#llx is malformed: the file is damaged, record it again", path,
				 (unsigned long long)perfdata_reader_offset(r));
			break;
		} else if (!ret) {
			found = true;
		}
	}
	if (ret < 0) {
		if (!m->err[0])
			snprintf(m->err, sizeof(m->err), "%s", r && *perfdata_reader_error(r) ?
				 perfdata_reader_error(r) : strerror(-ret));
	} else if (!found) {
		snprintf(m->err, sizeof(m->err), "%s has no scheduler metrics: record it with "
			 "`bpfrec record --sched`", path);
	}
	perfdata_reader_free(r);
	if (fd)
		close(fd);
	if (ret < 0 || !found) {
		/* Rows decoded before the error are not metrics of the whole file. */
		m->nr = 0;
		return ret < 0 ? ret : -ENOENT;
	}
	perfdata_sched_metrics_sort(m);
	return 0;
}

/* The rows of m summed per process (m is sorted by pid). */
static int per_process(const struct bpfrec_sched_metrics *m, struct bpfrec_sched_metrics *p)
{
	for (size_t i = 0; i < m->nr; i++) {
		const struct bpfrec_sched_thread *t = &m->t[i];
		struct bpfrec_sched_thread *last = p->nr ? &p->t[p->nr - 1] : NULL;

		if (!last || last->pid != t->pid) {
			struct bpfrec_sched_thread row = *t;

			row.tid = 0;
			if (perfdata_sched_metrics_put(p, &row))
				return -ENOMEM;
			continue;
		}
		perfdata_sched_thread_add(last, t);
		if (t->tid == t->pid)	/* the main thread names the process */
			memcpy(last->comm, t->comm, sizeof(last->comm));
	}
	return 0;
}

static int export_group(const struct bpfrec_sched_exporter *e, enum bpfrec_sched_group g,
			const struct bpfrec_sched_metrics *m)
{
	int err = e->group ? e->group(e->ctx, g, m->nr) : 0;

	for (size_t i = 0; !err && i < m->nr; i++)
		err = e->row ? e->row(e->ctx, g, &m->t[i]) : 0;
	return err;
}

int bpfrec_sched_export(const struct bpfrec_sched_metrics *m,
			const struct bpfrec_sched_export_opts *opts,
			const struct bpfrec_sched_exporter *exporter)
{
	struct bpfrec_sched_metrics procs = { 0 };
	struct bpfrec_sched_export_opts o;
	struct bpfrec_sched_exporter e;
	int err;

	if (!m || !exporter || OPTS_COPY(&o, bpfrec_sched_export_opts, opts) ||
	    OPTS_COPY(&e, bpfrec_sched_exporter, exporter))
		return -EINVAL;
	if (!opts)
		o.processes = o.threads = true;
	err = e.begin ? e.begin(e.ctx) : 0;
	if (!err && o.processes) {
		err = per_process(m, &procs);
		if (!err)
			err = export_group(&e, BPFREC_SCHED_BY_PROCESS, &procs);
	}
	if (!err && o.threads)
		err = export_group(&e, BPFREC_SCHED_BY_THREAD, m);
	if (!err && e.end)
		err = e.end(e.ctx);
	free(procs.t);
	return err;
}

/* The provided exporters share this state behind the public struct. */
struct exporter {
	struct bpfrec_sched_exporter pub;
	FILE *out;
	bool hist;
	size_t rows;		/* JSON: rows written in the current group */
	bool any_group;		/* JSON: a group was opened */
};

/* comm from a file, safe on a terminal and in JSON: printable ASCII only. */
static void clean_comm(const char *comm, char out[16])
{
	size_t i;

	for (i = 0; i < 15 && comm[i]; i++)
		out[i] = comm[i] >= 0x20 && comm[i] < 0x7f ? comm[i] : '?';
	out[i] = '\0';
}

static int out_err(FILE *f)
{
	return ferror(f) ? -EIO : 0;
}

static const char *const switch_names[BPFREC_SCHED_NR_SWITCH] = {
	"preempted", "sleep", "io", "exit",
};

static int console_group(void *ctx, enum bpfrec_sched_group g, size_t nr)
{
	struct exporter *x = ctx;

	(void)nr;
	fprintf(x->out, "\n%s\n%7s %-15s %11s %8s %12s %9s %9s %9s %9s %9s %9s %9s\n",
		g == BPFREC_SCHED_BY_PROCESS ? "Per process:" : "Per thread:",
		g == BPFREC_SCHED_BY_PROCESS ? "PID" : "TID", "COMM", "ON-CPU(ms)", "RUNQ-N",
		"RUNQ(ms)", "P50(us)", "P99(us)", "MAX(us)", "PREEMPT", "SLEEP", "IO", "EXIT");
	return out_err(x->out);
}

/* runqlat's layout: one line per slot up to the last one used. */
static void console_hist(FILE *out, const uint32_t *hist)
{
	uint32_t top = 0;
	int last = -1;

	for (int k = 0; k < BPFREC_SCHED_HIST_SLOTS; k++) {
		if (hist[k])
			last = k;
		if (hist[k] > top)
			top = hist[k];
	}
	if (last < 0)
		return;
	fprintf(out, "     %-19s : %-8s |%-40s|\n", "usecs", "count", "distribution");
	for (int k = 0; k <= last; k++) {
		uint64_t lo = k ? 1ull << k : 0, hi = (1ull << (k + 1)) - 1;
		int bar = top ? (int)((uint64_t)hist[k] * 40 / top) : 0;
		char stars[41];

		memset(stars, '*', (size_t)bar);
		stars[bar] = '\0';
		fprintf(out, "%10" PRIu64 " -> %-10" PRIu64 " : %-8u |%-40s|\n", lo, hi, hist[k],
			stars);
	}
}

static int console_row(void *ctx, enum bpfrec_sched_group g, const struct bpfrec_sched_thread *t)
{
	struct exporter *x = ctx;
	char comm[16];

	clean_comm(t->comm, comm);
	fprintf(x->out, "%7u %-15s %11.3f %8" PRIu64 " %12.3f %9" PRIu64 " %9" PRIu64 " %9" PRIu64
		" %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 "\n",
		g == BPFREC_SCHED_BY_PROCESS ? t->pid : t->tid, comm, t->oncpu_ns / 1e6,
		t->runq_count, t->runq_total_ns / 1e6,
		bpfrec_sched_hist_quantile_ns(t->hist, t->runq_max_ns, 0.5) / 1000,
		bpfrec_sched_hist_quantile_ns(t->hist, t->runq_max_ns, 0.99) / 1000,
		t->runq_max_ns / 1000, t->switches[BPFREC_SCHED_PREEMPTED],
		t->switches[BPFREC_SCHED_SLEEP], t->switches[BPFREC_SCHED_IO],
		t->switches[BPFREC_SCHED_EXIT]);
	if (x->hist && t->runq_count) {
		fprintf(x->out, "\n%s = %u %s\n", g == BPFREC_SCHED_BY_PROCESS ? "pid" : "tid",
			g == BPFREC_SCHED_BY_PROCESS ? t->pid : t->tid, comm);
		console_hist(x->out, t->hist);
		fputc('\n', x->out);
	}
	return out_err(x->out);
}

static int json_begin(void *ctx)
{
	struct exporter *x = ctx;

	fputs("{", x->out);
	return out_err(x->out);
}

static int json_group(void *ctx, enum bpfrec_sched_group g, size_t nr)
{
	struct exporter *x = ctx;

	(void)nr;
	fprintf(x->out, "%s\n  \"%s\": [", x->any_group ? "\n  ]," : "",
		g == BPFREC_SCHED_BY_PROCESS ? "processes" : "threads");
	x->any_group = true;
	x->rows = 0;
	return out_err(x->out);
}

static int json_row(void *ctx, enum bpfrec_sched_group g, const struct bpfrec_sched_thread *t)
{
	struct exporter *x = ctx;
	char comm[16];
	int last = -1;

	clean_comm(t->comm, comm);
	fprintf(x->out, "%s\n    {\"pid\": %u, ", x->rows++ ? "," : "", t->pid);
	if (g == BPFREC_SCHED_BY_THREAD)
		fprintf(x->out, "\"tid\": %u, ", t->tid);
	fputs("\"comm\": \"", x->out);
	for (const char *c = comm; *c; c++)
		fprintf(x->out, *c == '"' || *c == '\\' ? "\\%c" : "%c", *c);
	fprintf(x->out, "\", \"oncpu_ns\": %" PRIu64 ", \"runq_count\": %" PRIu64
		", \"runq_total_ns\": %" PRIu64 ", \"runq_p50_ns\": %" PRIu64
		", \"runq_p99_ns\": %" PRIu64 ", \"runq_max_ns\": %" PRIu64 ", \"switches\": {",
		t->oncpu_ns, t->runq_count, t->runq_total_ns,
		bpfrec_sched_hist_quantile_ns(t->hist, t->runq_max_ns, 0.5),
		bpfrec_sched_hist_quantile_ns(t->hist, t->runq_max_ns, 0.99), t->runq_max_ns);
	for (int k = 0; k < BPFREC_SCHED_NR_SWITCH; k++)
		fprintf(x->out, "%s\"%s\": %" PRIu64, k ? ", " : "", switch_names[k],
			t->switches[k]);
	fputs("}, \"runq_hist_log2_us\": [", x->out);
	for (int k = 0; k < BPFREC_SCHED_HIST_SLOTS; k++)
		if (t->hist[k])
			last = k;
	for (int k = 0; k <= last; k++)
		fprintf(x->out, "%s%u", k ? ", " : "", t->hist[k]);
	fputs("]}", x->out);
	return out_err(x->out);
}

static int json_end(void *ctx)
{
	struct exporter *x = ctx;

	fputs(x->any_group ? "\n  ]\n}\n" : "}\n", x->out);
	fflush(x->out);
	return out_err(x->out);
}

static int console_end(void *ctx)
{
	struct exporter *x = ctx;

	fflush(x->out);
	return out_err(x->out);
}

static int new_exporter(FILE *out, struct bpfrec_sched_exporter **e, struct exporter **x)
{
	*e = NULL;
	if (!out)
		return -EINVAL;
	*x = calloc(1, sizeof(**x));
	if (!*x)
		return -ENOMEM;
	(*x)->out = out;
	(*x)->pub.sz = sizeof((*x)->pub);
	(*x)->pub.ctx = *x;
	*e = &(*x)->pub;
	return 0;
}

int bpfrec_sched_console_exporter_new(FILE *out, bool hist, struct bpfrec_sched_exporter **e)
{
	struct exporter *x;
	int err = new_exporter(out, e, &x);

	if (err)
		return err;
	x->hist = hist;
	x->pub.group = console_group;
	x->pub.row = console_row;
	x->pub.end = console_end;
	return 0;
}

int bpfrec_sched_json_exporter_new(FILE *out, struct bpfrec_sched_exporter **e)
{
	struct exporter *x;
	int err = new_exporter(out, e, &x);

	if (err)
		return err;
	x->pub.begin = json_begin;
	x->pub.group = json_group;
	x->pub.row = json_row;
	x->pub.end = json_end;
	return 0;
}

void bpfrec_sched_exporter_free(struct bpfrec_sched_exporter *e)
{
	/* Only ours come here: pub is the first member of struct exporter. */
	free(e);
}
