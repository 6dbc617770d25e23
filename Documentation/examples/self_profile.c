// SPDX-License-Identifier: MIT
/*
 * self_profile - profile this very program for a few seconds into memory,
 * then turn that recording into a pprof profile, all through libbpfrec.
 *
 *   cc -O2 -g self_profile.c $(pkg-config --cflags --libs bpfrec) -lpthread
 *   sudo ./a.out SECONDS OUT.pb.gz [OUT.data]
 *
 * The recording (perf.data in pipe format) goes to a write callback that
 * appends to a growing buffer; a second thread serves the recording while
 * the main thread spins in busy_loop(), which should top the profile.
 * With a third argument the buffer is also saved, for `perf report -i -`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <bpfrec/bpfrec.h>

struct buffer {
	char *data;
	size_t len, cap;
};

/* The write callback: keep every byte the recorder hands us. */
static int append(void *ctx, const void *buf, size_t len)
{
	struct buffer *b = ctx;

	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap : 1 << 20;
		char *p;

		while (cap < b->len + len)
			cap *= 2;
		p = realloc(b->data, cap);
		if (!p)
			return -ENOMEM;
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, buf, len);
	b->len += len;
	return 0;
}

static void log_stderr(void *ctx, enum bpfrec_log_level level, const char *msg)
{
	(void)ctx;
	if (level == BPFREC_LOG_WARN)
		fprintf(stderr, "self_profile: warning: %s\n", msg);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

/* The code we expect to see on top: a plain CPU-bound loop. */
__attribute__((noinline)) static void busy_loop(double seconds)
{
	double end = now_s() + seconds;

	while (now_s() < end)
		for (unsigned long i = 0; i < 100000; i++)
			sink += i ^ (sink >> 3);
}

struct server {
	struct bpfrec_record *rec;
	atomic_bool stop;
	int err;
};

/* Serve the recording until told to stop: poll writes what arrived. */
static void *serve(void *arg)
{
	struct server *srv = arg;

	while (!atomic_load(&srv->stop)) {
		int err = bpfrec_record_poll(srv->rec, 100);

		if (err < 0) {
			srv->err = err;
			break;
		}
	}
	return NULL;
}

/* Convert the perf.data bytes in b into a pprof file at path. */
static int to_pprof(const struct buffer *b, const char *path)
{
	BPFREC_OPTS(bpfrec_pprof_opts, opts, .input_name = "the recording");
	BPFREC_OPTS(bpfrec_pprof_profile_info, info);
	struct bpfrec_pprof *conv = NULL;
	int fd = memfd_create("recording", MFD_CLOEXEC), err;

	if (fd < 0 || write(fd, b->data, b->len) != (ssize_t)b->len || lseek(fd, 0, SEEK_SET)) {
		perror("self_profile: memfd");
		return -1;
	}
	err = bpfrec_pprof_new(&opts, &conv);
	if (!err)
		err = bpfrec_pprof_read_fd(conv, fd);
	if (!err)
		err = bpfrec_pprof_write_path(conv, 0, path, &info);
	if (err)
		fprintf(stderr, "self_profile: %s\n", conv ? bpfrec_pprof_error(conv) : strerror(-err));
	else
		printf("self_profile: %s: %llu samples, %zu locations\n", path,
		       (unsigned long long)info.samples, info.locations);
	bpfrec_pprof_free(conv);
	close(fd);
	return err;
}

int main(int argc, char **argv)
{
	struct buffer buf = { 0 };
	pid_t self = getpid();
	BPFREC_OPTS(bpfrec_record_opts, opts,
		    .output = BPFREC_OUTPUT_CALLBACK, .output_write = append, .output_ctx = &buf,
		    .pids = &self, .nr_pids = 1, .freq = 999,
		    .callgraph = BPFREC_CALLGRAPH_CFI, .no_buildid_cache = true,
		    .log = log_stderr);
	BPFREC_OPTS(bpfrec_record_stats, st);
	struct server srv = { 0 };
	pthread_t thread;
	double seconds;
	int err;

	if (argc < 3 || (seconds = atof(argv[1])) <= 0) {
		fprintf(stderr, "usage: self_profile SECONDS OUT.pb.gz [OUT.data]\n");
		return 2;
	}
	err = bpfrec_record_new(&opts, &srv.rec);
	if (!err)
		err = bpfrec_record_start(srv.rec);	/* opens first */
	if (err) {
		fprintf(stderr, "self_profile: %s\n",
			srv.rec ? bpfrec_record_error(srv.rec) : strerror(-err));
		bpfrec_record_free(srv.rec);
		return 1;
	}
	if (pthread_create(&thread, NULL, serve, &srv)) {
		fprintf(stderr, "self_profile: pthread_create failed\n");
		bpfrec_record_free(srv.rec);
		return 1;
	}
	busy_loop(seconds);
	atomic_store(&srv.stop, true);
	pthread_join(thread, NULL);
	err = bpfrec_record_stop(srv.rec);
	bpfrec_record_get_stats(srv.rec, &st);
	if (err || srv.err) {
		fprintf(stderr, "self_profile: %s\n", bpfrec_record_error(srv.rec));
		bpfrec_record_free(srv.rec);
		return 1;
	}
	printf("self_profile: %llu samples (%llu lost), %llu bytes in memory\n",
	       (unsigned long long)st.samples, (unsigned long long)st.lost,
	       (unsigned long long)st.bytes);
	bpfrec_record_free(srv.rec);

	if (argc > 3) {
		FILE *f = fopen(argv[3], "w");

		if (!f || fwrite(buf.data, 1, buf.len, f) != buf.len || fclose(f)) {
			perror(argv[3]);
			return 1;
		}
	}
	err = to_pprof(&buf, argv[2]);
	free(buf.data);
	return err ? 1 : 0;
}
