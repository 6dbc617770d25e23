// SPDX-License-Identifier: MIT
/*
 * record_child - launch a command and record it into an fd, as
 * `bpfrec record -g -o OUT -- COMMAND` does, through libbpfrec.
 *
 *   cc -O2 -g record_child.c $(pkg-config --cflags --libs bpfrec)
 *   sudo ./a.out OUT.data COMMAND [ARGS...]
 *
 * OUT.data is opened here and handed over as an fd: a regular file gets
 * perf.data's file format (perf report -i OUT.data), a pipe or socket the
 * pipe format. The recording's fd is polled in our own poll() loop, as a
 * program with its own event loop would. Exits with the command's code.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpfrec/bpfrec.h>

static void log_stderr(void *ctx, enum bpfrec_log_level level, const char *msg)
{
	(void)ctx;
	if (level == BPFREC_LOG_WARN)
		fprintf(stderr, "record_child: warning: %s\n", msg);
}

int main(int argc, char **argv)
{
	BPFREC_OPTS(bpfrec_record_opts, opts, .output = BPFREC_OUTPUT_FD,
		    .callgraph = BPFREC_CALLGRAPH_CFI, .no_buildid_cache = true,
		    .log = log_stderr);
	BPFREC_OPTS(bpfrec_record_stats, st);
	BPFREC_OPTS(bpfrec_unwind_stats, unwind);
	struct bpfrec_record *rec = NULL;
	int fd, err, done = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: record_child OUT.data COMMAND [ARGS...]\n");
		return 2;
	}
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	opts.output_fd = fd;
	opts.command = argv + 2;
	err = bpfrec_record_new(&opts, &rec);
	if (!err)
		err = bpfrec_record_open(rec);
	if (!err)
		err = bpfrec_record_start(rec);
	if (err) {
		fprintf(stderr, "record_child: %s\n", rec ? bpfrec_record_error(rec) : strerror(-err));
		err = rec ? bpfrec_record_failure_code(rec) : 1;
		bpfrec_record_free(rec);
		close(fd);
		return err;
	}
	while (!done) {
		struct pollfd pfd = { .fd = bpfrec_record_poll_fd(rec), .events = POLLIN };

		/* Samples wake us; the timeout writes each round on time. */
		poll(&pfd, 1, bpfrec_record_timeout_ms(rec));
		done = bpfrec_record_poll(rec, 0);
		if (done < 0) {
			fprintf(stderr, "record_child: %s\n", bpfrec_record_error(rec));
			break;
		}
	}
	err = bpfrec_record_stop(rec);
	bpfrec_record_get_stats(rec, &st);
	bpfrec_record_get_unwind_stats(rec, &unwind);
	if (err)
		fprintf(stderr, "record_child: %s\n", bpfrec_record_error(rec));
	printf("record_child: %llu samples (%llu lost, %llu seen), %llu bytes, %zu processes; "
	       "cfi: %llu stacks walked\n", (unsigned long long)st.samples,
	       (unsigned long long)st.lost, (unsigned long long)st.seen,
	       (unsigned long long)st.bytes, st.nr_processes,
	       (unsigned long long)unwind.walks);
	bpfrec_record_free(rec);
	close(fd);
	return err || done < 0 ? 1 : st.exit_code;
}
