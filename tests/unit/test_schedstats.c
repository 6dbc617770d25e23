// SPDX-License-Identifier: MIT
/*
 * test_schedstats.c - the scheduler-metrics record (perfdata/schedstats.c)
 * and the exporters over it (perfdata/sched_export.c).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpfrec/sched.h>

#include "perfdata/schedstats.h"

static struct bpfrec_sched_thread thread(uint32_t pid, uint32_t tid, const char *comm)
{
	struct bpfrec_sched_thread t = { .sz = sizeof(t), .pid = pid, .tid = tid };

	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	t.oncpu_ns = 1000ull * tid;
	t.runq_count = 3;
	t.runq_total_ns = 7000;
	t.runq_max_ns = 5000;
	t.switches[BPFREC_SCHED_PREEMPTED] = 2;
	t.switches[BPFREC_SCHED_SLEEP] = tid;
	t.switches[BPFREC_SCHED_IO] = 4;
	t.switches[BPFREC_SCHED_EXIT] = 1;
	t.hist[0] = 1;	/* < 2 us */
	t.hist[2] = 2;	/* 4..7 us */
	return t;
}

/* A record buffer, aligned as the reader's, seen as bytes or as its header. */
static union {
	uint64_t words[0x10000 / 8];
	struct perf_event_header h;
} rb;
#define rec rb.words

Test(schedstats, round_trip_keeps_every_field)
{
	struct bpfrec_sched_thread in[3] = {
		thread(10, 10, "main"), thread(10, 11, "worker"), thread(20, 20, "other"),
	};
	struct bpfrec_sched_metrics *m = perfdata_sched_metrics_new();
	size_t taken;
	ssize_t n = perfdata_sched_encode(rec, sizeof(rec), in, 3, &taken);

	cr_assert_eq(n, PERFDATA_SCHED_HEAD_SIZE + 3 * PERFDATA_SCHED_ENTRY_SIZE);
	cr_assert_eq(n % 8, 0, "records are 8-byte multiples");
	cr_assert_eq(taken, 3);
	cr_assert_eq(rb.h.type, PERFDATA_SCHED_RECORD_TYPE);
	cr_assert_eq(perfdata_sched_decode(&rb.h, m), 0);
	cr_assert_eq(bpfrec_sched_metrics_nr_threads(m), 3);
	for (size_t i = 0; i < 3; i++)
		cr_assert_eq(memcmp(bpfrec_sched_metrics_thread(m, i), &in[i], sizeof(in[i])), 0,
			     "thread %zu differs after the round trip", i);
	cr_assert_null(bpfrec_sched_metrics_thread(m, 3));
	bpfrec_sched_metrics_free(m);
}

Test(schedstats, many_threads_split_into_records_that_fit)
{
	size_t nr = 1000, done = 0, records = 0;
	struct bpfrec_sched_thread *in = calloc(nr, sizeof(*in));
	struct bpfrec_sched_metrics *m = perfdata_sched_metrics_new();

	for (size_t i = 0; i < nr; i++)
		in[i] = thread(1, (uint32_t)i + 1, "t");
	while (done < nr) {
		size_t taken;
		ssize_t n = perfdata_sched_encode(rec, sizeof(rec), in + done, nr - done, &taken);

		cr_assert_gt(n, 0);
		cr_assert_leq(n, 0xffff, "header.size is a u16");
		cr_assert_gt(taken, 0);
		cr_assert_eq(perfdata_sched_decode(&rb.h, m), 0);
		done += taken;
		records++;
	}
	cr_assert_gt(records, 1);
	cr_assert_eq(bpfrec_sched_metrics_nr_threads(m), nr);
	free(in);
	bpfrec_sched_metrics_free(m);
}

Test(schedstats, no_thread_is_still_a_record)
{
	struct bpfrec_sched_metrics *m = perfdata_sched_metrics_new();
	size_t taken = 9;

	cr_assert_eq(perfdata_sched_encode(rec, sizeof(rec), NULL, 0, &taken),
		     PERFDATA_SCHED_HEAD_SIZE);
	cr_assert_eq(taken, 0);
	cr_assert_eq(perfdata_sched_decode(&rb.h, m), 0);
	cr_assert_eq(bpfrec_sched_metrics_nr_threads(m), 0);
	bpfrec_sched_metrics_free(m);
}

Test(schedstats, too_small_a_buffer_is_enospc)
{
	struct bpfrec_sched_thread t = thread(1, 1, "x");
	size_t taken;

	cr_assert_eq(perfdata_sched_encode(rec, PERFDATA_SCHED_HEAD_SIZE + 8, &t, 1, &taken),
		     -ENOSPC);
}

Test(schedstats, other_records_and_old_perfs_event_types_are_not_ours)
{
	struct bpfrec_sched_metrics *m = perfdata_sched_metrics_new();
	struct perf_event_header *h = &rb.h;

	memset(rec, 0, 128);
	h->type = PERFDATA_SCHED_RECORD_TYPE;	/* an old perf's: u64 id, char name[64] */
	h->size = 8 + 8 + 64;
	memcpy((char *)rec + 16, "cycles", 7);
	cr_assert_eq(perfdata_sched_decode(h, m), -ENOENT);
	h->type = PERF_RECORD_COMM;
	cr_assert_eq(perfdata_sched_decode(h, m), -ENOENT);
	h->size = 4;	/* shorter than a header: never read past it */
	h->type = PERFDATA_SCHED_RECORD_TYPE;
	cr_assert_eq(perfdata_sched_decode(h, m), -ENOENT);
	cr_assert_eq(bpfrec_sched_metrics_nr_threads(m), 0);
	bpfrec_sched_metrics_free(m);
}

Test(schedstats, a_count_beyond_the_record_is_rejected_whole)
{
	struct bpfrec_sched_thread in[2] = { thread(1, 1, "a"), thread(1, 2, "b") };
	struct bpfrec_sched_metrics *m = perfdata_sched_metrics_new();
	struct perf_event_header *h = &rb.h;
	uint32_t nr = 3, small = 100;
	size_t taken;

	perfdata_sched_encode(rec, sizeof(rec), in, 2, &taken);
	memcpy((char *)rec + 24, &nr, 4);	/* claims 3, holds 2 */
	cr_assert_eq(perfdata_sched_decode(h, m), -EINVAL);
	cr_assert_eq(bpfrec_sched_metrics_nr_threads(m), 0);
	nr = 2;
	memcpy((char *)rec + 24, &nr, 4);
	memcpy((char *)rec + 20, &small, 4);	/* entries smaller than version 1's */
	cr_assert_eq(perfdata_sched_decode(h, m), -EINVAL);
	h->size = 20;	/* cut inside the fixed part */
	cr_assert_eq(perfdata_sched_decode(h, m), -EINVAL);
	bpfrec_sched_metrics_free(m);
}

Test(schedstats, larger_entries_of_a_later_version_are_read)
{
	struct bpfrec_sched_thread in = thread(5, 6, "later");
	struct bpfrec_sched_metrics *m = perfdata_sched_metrics_new();
	struct perf_event_header *h = &rb.h;
	uint32_t bigger = PERFDATA_SCHED_ENTRY_SIZE + 8;
	size_t taken;

	memset(rec, 0xee, sizeof(rec));
	perfdata_sched_encode(rec, sizeof(rec), &in, 1, &taken);
	memcpy((char *)rec + 20, &bigger, 4);
	h->size += 8;	/* 8 bytes of a field we do not know follow the entry */
	cr_assert_eq(perfdata_sched_decode(h, m), 0);
	cr_assert_eq(memcmp(bpfrec_sched_metrics_thread(m, 0), &in, sizeof(in)), 0);
	bpfrec_sched_metrics_free(m);
}

Test(schedstats, sort_orders_by_pid_and_tid_and_keeps_the_last_of_a_tid)
{
	struct bpfrec_sched_metrics *m = perfdata_sched_metrics_new();
	struct bpfrec_sched_thread a = thread(2, 3, "old"), b = thread(1, 1, "one"),
				   c = thread(2, 3, "new"), d = thread(2, 2, "two");

	perfdata_sched_metrics_put(m, &a);
	perfdata_sched_metrics_put(m, &b);
	perfdata_sched_metrics_put(m, &c);
	perfdata_sched_metrics_put(m, &d);
	perfdata_sched_metrics_sort(m);
	cr_assert_eq(bpfrec_sched_metrics_nr_threads(m), 3);
	cr_assert_eq(bpfrec_sched_metrics_thread(m, 0)->tid, 1);
	cr_assert_eq(bpfrec_sched_metrics_thread(m, 1)->tid, 2);
	cr_assert_str_eq(bpfrec_sched_metrics_thread(m, 2)->comm, "new");
	bpfrec_sched_metrics_free(m);
}

Test(schedstats, quantiles_are_slot_upper_bounds_capped_by_max)
{
	uint32_t hist[BPFREC_SCHED_HIST_SLOTS] = { 0 };

	cr_assert_eq(bpfrec_sched_hist_quantile_ns(hist, 0, 0.5), 0, "no waits, no quantile");
	hist[3] = 98;	/* 8..15 us */
	hist[10] = 2;	/* 1024..2047 us */
	cr_assert_eq(bpfrec_sched_hist_quantile_ns(hist, 1500000, 0.5), 16000);
	cr_assert_eq(bpfrec_sched_hist_quantile_ns(hist, 1500000, 0.98), 16000);
	cr_assert_eq(bpfrec_sched_hist_quantile_ns(hist, 1500000, 0.99), 1500000,
		     "the top slot's bound is above the max seen: the max");
	cr_assert_eq(bpfrec_sched_hist_quantile_ns(hist, 0, 1), 2048000);
}

/* A program's own exporter: counts what it is handed. */
struct counting {
	int begins, groups, ends;
	size_t rows[2];
	uint64_t proc_oncpu;
};

static int c_begin(void *ctx) { ((struct counting *)ctx)->begins++; return 0; }
static int c_group(void *ctx, enum bpfrec_sched_group g, size_t nr)
{
	(void)g; (void)nr;
	((struct counting *)ctx)->groups++;
	return 0;
}
static int c_row(void *ctx, enum bpfrec_sched_group g, const struct bpfrec_sched_thread *t)
{
	struct counting *c = ctx;

	c->rows[g]++;
	if (g == BPFREC_SCHED_BY_PROCESS && t->pid == 10) {
		cr_assert_eq(t->tid, 0, "a process row has tid 0");
		cr_assert_str_eq(t->comm, "main", "the main thread names the process");
		c->proc_oncpu = t->oncpu_ns;
	}
	return 0;
}
static int c_end(void *ctx) { ((struct counting *)ctx)->ends++; return 0; }

static struct bpfrec_sched_metrics *three(void)
{
	struct bpfrec_sched_metrics *m = perfdata_sched_metrics_new();
	struct bpfrec_sched_thread t[3] = {
		thread(10, 11, "worker"), thread(10, 10, "main"), thread(20, 20, "other"),
	};

	for (int i = 0; i < 3; i++)
		perfdata_sched_metrics_put(m, &t[i]);
	perfdata_sched_metrics_sort(m);
	return m;
}

Test(schedstats, export_drives_a_programs_exporter_per_process_and_thread)
{
	struct bpfrec_sched_metrics *m = three();
	struct counting c = { 0 };
	struct bpfrec_sched_exporter e = {
		.sz = sizeof(e), .ctx = &c, .begin = c_begin, .group = c_group, .row = c_row,
		.end = c_end,
	};

	cr_assert_eq(bpfrec_sched_export(m, NULL, &e), 0);
	cr_assert_eq(c.begins, 1);
	cr_assert_eq(c.ends, 1);
	cr_assert_eq(c.groups, 2);
	cr_assert_eq(c.rows[BPFREC_SCHED_BY_PROCESS], 2);
	cr_assert_eq(c.rows[BPFREC_SCHED_BY_THREAD], 3);
	cr_assert_eq(c.proc_oncpu, 10000 + 11000, "a process sums its threads");
	bpfrec_sched_metrics_free(m);
}

/*
 * A newer header may add a field inside the old struct's trailing padding
 * (sizeof unchanged): the library checks up to its last field, not sizeof,
 * so such a field set is refused, not silently ignored.
 */
Test(schedstats, export_refuses_a_field_it_does_not_know_in_the_padding)
{
	struct bpfrec_sched_metrics *m = three();
	struct counting c = { 0 };
	BPFREC_OPTS(bpfrec_sched_exporter, e, .ctx = &c, .row = c_row);
	BPFREC_OPTS(bpfrec_sched_export_opts, o, .threads = true);
	size_t known = offsetof(struct bpfrec_sched_export_opts, threads) + sizeof(o.threads);

	cr_assert_lt(known, sizeof(o), "the struct has trailing padding to test with");
	for (size_t i = known; i < sizeof(o); i++)
		cr_assert_eq(((unsigned char *)&o)[i], 0, "BPFREC_OPTS zeroes the padding");
	cr_assert_eq(bpfrec_sched_export(m, &o, &e), 0);
	cr_assert_eq(c.rows[BPFREC_SCHED_BY_THREAD], 3);
	((unsigned char *)&o)[known] = 1;
	cr_assert_eq(bpfrec_sched_export(m, &o, &e), -EINVAL);
	cr_assert_eq(c.rows[BPFREC_SCHED_BY_THREAD], 3, "nothing exported");
	bpfrec_sched_metrics_free(m);
}

Test(schedstats, json_exporter_writes_the_documented_fields)
{
	struct bpfrec_sched_metrics *m = three();
	struct bpfrec_sched_exporter *e;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_eq(bpfrec_sched_json_exporter_new(f, &e), 0);
	cr_assert_eq(bpfrec_sched_export(m, NULL, e), 0);
	fclose(f);
	cr_assert_not_null(strstr(text, "\"processes\": ["));
	cr_assert_not_null(strstr(text, "\"threads\": ["));
	cr_assert_not_null(strstr(text, "\"tid\": 11, \"comm\": \"worker\", \"oncpu_ns\": 11000, "
				  "\"runq_count\": 3, \"runq_total_ns\": 7000, \"runq_p50_ns\": 5000, "
				  "\"runq_p99_ns\": 5000, \"runq_max_ns\": 5000, \"switches\": "
				  "{\"preempted\": 2, \"sleep\": 11, \"io\": 4, \"exit\": 1}, "
				  "\"runq_hist_log2_us\": [1, 0, 2]}"), "%s", text);
	bpfrec_sched_exporter_free(e);
	bpfrec_sched_metrics_free(m);
	free(text);
}

Test(schedstats, console_exporter_cleans_names_from_the_file)
{
	struct bpfrec_sched_metrics *m = perfdata_sched_metrics_new();
	struct bpfrec_sched_thread t = thread(1, 1, "a\033]0;x\"b");
	struct bpfrec_sched_exporter *e;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	perfdata_sched_metrics_put(m, &t);
	cr_assert_eq(bpfrec_sched_console_exporter_new(f, true, &e), 0);
	cr_assert_eq(bpfrec_sched_export(m, NULL, e), 0);
	fclose(f);
	cr_assert_null(strchr(text, '\033'), "an escape sequence from the file reached the terminal");
	cr_assert_not_null(strstr(text, "a?]0;x\"b"));
	cr_assert_not_null(strstr(text, "usecs"), "--hist prints the histogram");
	bpfrec_sched_exporter_free(e);
	bpfrec_sched_metrics_free(m);
	free(text);
}

/* A pipe-format file: the 16-byte header, then the records given. */
static char *write_pipe_file(const void *records, size_t len)
{
	static char path[] = "/tmp/test_schedstats.XXXXXX";
	uint64_t head[2] = { 0, 16 };
	int fd;

	strcpy(path, "/tmp/test_schedstats.XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	memcpy(head, "PERFILE2", 8);
	cr_assert_eq(write(fd, head, sizeof(head)), (ssize_t)sizeof(head));
	cr_assert_eq(write(fd, records, len), (ssize_t)len);
	close(fd);
	return path;
}

Test(schedstats, read_finds_metrics_in_a_file_and_names_a_damaged_record)
{
	struct bpfrec_sched_thread in = thread(7, 8, "reader");
	struct bpfrec_sched_metrics *m = NULL;
	char *path;
	uint32_t nr = 9;
	size_t taken;
	ssize_t n = perfdata_sched_encode(rec, sizeof(rec), &in, 1, &taken);

	path = write_pipe_file(rec, (size_t)n);
	cr_assert_eq(bpfrec_sched_metrics_read(path, &m), 0, "%s", bpfrec_sched_metrics_error(m));
	cr_assert_str_eq(bpfrec_sched_metrics_error(m), "");
	cr_assert_eq(bpfrec_sched_metrics_nr_threads(m), 1);
	cr_assert_eq(bpfrec_sched_metrics_thread(m, 0)->tid, 8);
	bpfrec_sched_metrics_free(m);
	unlink(path);

	memcpy((char *)rec + 24, &nr, 4);	/* claims 9 threads, holds 1 */
	path = write_pipe_file(rec, (size_t)n);
	cr_assert_eq(bpfrec_sched_metrics_read(path, &m), -EINVAL);
	cr_assert_not_null(m, "a failed read still hands out its message");
	cr_assert_eq(bpfrec_sched_metrics_nr_threads(m), 0);
	cr_assert(strstr(bpfrec_sched_metrics_error(m), "malformed"), "%s",
		  bpfrec_sched_metrics_error(m));
	bpfrec_sched_metrics_free(m);
	unlink(path);

	path = write_pipe_file(rec, 0);
	cr_assert_eq(bpfrec_sched_metrics_read(path, &m), -ENOENT);
	cr_assert(strstr(bpfrec_sched_metrics_error(m), "record it with `bpfrec record --sched`"),
		  "%s", bpfrec_sched_metrics_error(m));
	bpfrec_sched_metrics_free(m);
	unlink(path);
}
