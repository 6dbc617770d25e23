// SPDX-License-Identifier: MIT
/*
 * api-lifecycle - the recording API's state machine with real BPF (root):
 * every out-of-order call gets its documented result, statistics are live
 * while recording, a write callback that fails stops the recording as a
 * full disk would, and a recording freed before stop leaves no file.
 *
 *   api-lifecycle > OUT.data     (stdout must be a pipe or a file)
 *
 * Records itself (lifecycle_spin) to stdout, an fd the library gets: a pipe
 * makes it use perf.data's pipe format. Prints "api-lifecycle: N samples"
 * on stderr; any broken promise is a "FAIL: ..." line and exit 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpfrec/record.h>

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "FAIL: line %d: ", __LINE__); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		exit(1); \
	} \
} while (0)

#define EXPECT(call, want, rec) do { \
	int got_ = (call); \
	CHECK(got_ == (want), "%s = %d, expected %d (%s)", #call, got_, (want), \
	      bpfrec_record_error(rec)); \
} while (0)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile unsigned long spin_sink;	/* keeps the loop from being optimized away */

__attribute__((noinline, noipa)) static void lifecycle_spin(double seconds)
{
	double end = now_s() + seconds;

	while (now_s() < end)
		for (unsigned long i = 0; i < 100000; i++)
			spin_sink += i ^ (spin_sink >> 3);
}

/* Spin for seconds, serving the recording between slices. */
static void spin_and_poll(struct bpfrec_record *rec, double seconds)
{
	double end = now_s() + seconds;

	while (now_s() < end) {
		int err;

		lifecycle_spin(0.02);
		err = bpfrec_record_poll(rec, 0);
		CHECK(err >= 0, "poll: %s", bpfrec_record_error(rec));
	}
}

/* A sink that fills up: once limit is set, refuses what would pass it. */
struct filling_sink {
	size_t bytes, limit;
};

static int filling_write(void *ctx, const void *buf, size_t len)
{
	struct filling_sink *f = ctx;

	(void)buf;
	if (f->limit && f->bytes + len > f->limit)
		return -ENOSPC;
	f->bytes += len;
	return 0;
}

int main(void)
{
	pid_t self = getpid();
	BPFREC_OPTS(bpfrec_record_opts, o, .output = BPFREC_OUTPUT_FD, .output_fd = STDOUT_FILENO,
		    .pids = &self, .nr_pids = 1, .callgraph = BPFREC_CALLGRAPH_CFI,
		    .no_buildid_cache = true);
	BPFREC_OPTS(bpfrec_record_stats, st);
	BPFREC_OPTS(bpfrec_unwind_stats, unwind);
	BPFREC_OPTS(bpfrec_alloc_stats, alloc);
	struct bpfrec_record *rec = NULL;
	struct filling_sink sink = { 0 };
	int err;

	/* 1. The whole life cycle, every step out of order once. */
	EXPECT(bpfrec_record_new(&o, &rec), 0, rec);
	EXPECT(bpfrec_record_poll(rec, 0), -EINVAL, rec);
	EXPECT(bpfrec_record_stop(rec), -EINVAL, rec);
	EXPECT(bpfrec_record_poll_fd(rec), -EINVAL, rec);
	EXPECT(bpfrec_record_open(rec), 0, rec);
	EXPECT(bpfrec_record_state(rec), BPFREC_RECORD_OPEN, rec);
	EXPECT(bpfrec_record_open(rec), -EALREADY, rec);
	CHECK(bpfrec_record_poll_fd(rec) >= 0, "no poll fd after open");
	EXPECT(bpfrec_record_poll(rec, 0), -EINVAL, rec);
	EXPECT(bpfrec_record_start(rec), 0, rec);
	EXPECT(bpfrec_record_start(rec), -EALREADY, rec);
	CHECK(bpfrec_record_timeout_ms(rec) >= 0, "no poll timeout while started");
	EXPECT(bpfrec_record_state(rec), BPFREC_RECORD_STARTED, rec);
	spin_and_poll(rec, 0.5);
	EXPECT(bpfrec_record_get_stats(rec, &st), 0, rec);
	CHECK(st.samples > 0 && st.bytes > 0, "no live statistics while recording: %llu samples",
	      (unsigned long long)st.samples);
	spin_and_poll(rec, 0.5);
	EXPECT(bpfrec_record_stop(rec), 0, rec);
	EXPECT(bpfrec_record_stop(rec), 0, rec);
	EXPECT(bpfrec_record_start(rec), -EINVAL, rec);
	CHECK(strstr(bpfrec_record_error(rec), "bpfrec_record_new"), "%s", bpfrec_record_error(rec));
	EXPECT(bpfrec_record_poll(rec, 0), -EINVAL, rec);
	EXPECT(bpfrec_record_state(rec), BPFREC_RECORD_STOPPED, rec);
	EXPECT(bpfrec_record_get_stats(rec, &st), 0, rec);
	CHECK(st.cpu_samples + st.cpu_lost == st.seen, "%llu written + %llu lost != %llu seen",
	      (unsigned long long)st.cpu_samples, (unsigned long long)st.cpu_lost,
	      (unsigned long long)st.seen);
	EXPECT(bpfrec_record_get_unwind_stats(rec, &unwind), 0, rec);
	CHECK(unwind.enabled && unwind.walks > 0, "cfi statistics missing");
	EXPECT(bpfrec_record_get_alloc_stats(rec, &alloc), 0, rec);
	CHECK(!alloc.enabled, "allocation statistics enabled in a recording without alloc_interval");
	fprintf(stderr, "api-lifecycle: %llu samples\n", (unsigned long long)st.samples);
	bpfrec_record_free(rec);

	/* 2. A write callback that fails: poll says so, stop keeps what was written. */
	o.output = BPFREC_OUTPUT_CALLBACK;
	o.output_write = filling_write;
	o.output_ctx = &sink;
	EXPECT(bpfrec_record_new(&o, &rec), 0, rec);
	EXPECT(bpfrec_record_start(rec), 0, rec);	/* opens first */
	sink.limit = sink.bytes + 16384;		/* then room for a few rounds */
	err = 0;
	for (double end = now_s() + 10; !err && now_s() < end;) {
		lifecycle_spin(0.02);
		err = bpfrec_record_poll(rec, 0);
	}
	EXPECT(err, -ENOSPC, rec);
	CHECK(strstr(bpfrec_record_error(rec), "write callback"), "%s", bpfrec_record_error(rec));
	bpfrec_record_stop(rec);
	EXPECT(bpfrec_record_get_stats(rec, &st), 0, rec);
	CHECK(st.write_failed, "write_failed not set");
	bpfrec_record_free(rec);

	/* 3. Freed before stop: the file it created is gone. */
	o.output = BPFREC_OUTPUT_PATH;
	o.output_path = "discarded.data";
	unlink(o.output_path);
	EXPECT(bpfrec_record_new(&o, &rec), 0, rec);
	EXPECT(bpfrec_record_start(rec), 0, rec);
	spin_and_poll(rec, 0.1);
	CHECK(access(o.output_path, F_OK) == 0, "no output file while recording");
	bpfrec_record_free(rec);
	CHECK(access(o.output_path, F_OK) < 0, "a recording freed before stop left its file");
	return 0;
}
