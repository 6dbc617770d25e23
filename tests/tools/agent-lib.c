// SPDX-License-Identifier: MIT
/*
 * agent-lib - a program using bpfrec/agent.h the way a library user would,
 * with its own send callback instead of HTTP (root: it records).
 *
 *   agent-lib BODIES SPOOL [-w MS] [-F HZ] [-g] -p PID SECONDS
 *   agent-lib BODIES SPOOL [-w MS] [-F HZ] [-g] -- COMMAND [ARGS...]
 *
 * Records PID (another thread calls bpfrec_agent_stop() after SECONDS,
 * once the spool has been replayed) or COMMAND (until it ends) in windows of MS ms (default 500). The send
 * callback decodes nothing: it answers RETRY to its first two calls and
 * PUSHED to every later one, so the spool, the backoff and the replay run
 * without a server, and writes each body it takes to BODIES/NNNN.push
 * (the Pyroscope PushRequest, as it would go on the wire; BODIES is
 * created if needed). on_push counts
 * the outcomes. At the end it prints, one "NAME VALUE" a line on stdout,
 * bpfrec_agent_get_stats()'s counts and its own ("send_calls",
 * "send_bytes", "taken", "taken_bytes", "on_push_pushed", ...). Where the
 * library's counts and the callbacks' disagree it says "FAIL: ..." on
 * stderr and exits 1; the caller checks the rest (the identity of the
 * counts, what the bodies hold).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpfrec/agent.h>

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "FAIL: line %d: ", __LINE__); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		failed = 1; \
	} \
} while (0)

/* The callbacks' own counts; both run on the agent's worker thread only. */
struct sink {
	const char *dir;
	unsigned long long send_calls, send_bytes;	/* every attempt */
	unsigned long long taken, taken_bytes;		/* answered PUSHED, body written */
	unsigned long long send_replays;		/* attempts of spooled bodies */
	unsigned long long outcomes[BPFREC_AGENT_TOO_LARGE + 1];	/* on_push's */
	unsigned long long on_push_replays, on_push_samples;
	enum bpfrec_agent_outcome last;			/* what send answered last */
	int mismatch;					/* on_push saw another outcome */
	int write_errors;
};

static int write_body(const char *dir, unsigned long long n, const void *body, size_t len)
{
	char path[4096];
	int fd;
	ssize_t w;

	snprintf(path, sizeof(path), "%s/%04llu.push", dir, n);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	w = write(fd, body, len);
	if (close(fd) || w != (ssize_t)len)
		return -EIO;
	return 0;
}

static enum bpfrec_agent_outcome send_body(void *ctx, const struct bpfrec_agent_request *req,
					   char *msg, size_t msglen)
{
	struct sink *s = ctx;

	s->send_calls++;
	s->send_bytes += req->len;
	s->send_replays += req->replay;
	if (s->send_calls <= 2) {
		snprintf(msg, msglen, "agent-lib: refusing call %llu", s->send_calls);
		return s->last = BPFREC_AGENT_RETRY;
	}
	s->taken++;
	s->taken_bytes += req->len;
	if (write_body(s->dir, s->taken, req->body, req->len))
		s->write_errors++;
	return s->last = BPFREC_AGENT_PUSHED;
}

static void on_push(void *ctx, const struct bpfrec_agent_request *req)
{
	struct sink *s = ctx;

	if ((unsigned int)req->outcome <= BPFREC_AGENT_TOO_LARGE)
		s->outcomes[req->outcome]++;
	if (req->outcome != s->last)
		s->mismatch++;
	s->on_push_replays += req->replay;
	s->on_push_samples += req->samples;
}

static void on_log(void *ctx, enum bpfrec_log_level level, const char *msg)
{
	(void)ctx;
	if (level == BPFREC_LOG_WARN)
		fprintf(stderr, "agent-lib: warning: %s\n", msg);
	else if (level == BPFREC_LOG_INFO)
		fprintf(stderr, "agent-lib: note: %s\n", msg);
}

struct stopper {
	struct bpfrec_agent *agent;
	unsigned int seconds;
};

/*
 * After SECONDS, and once the spool has been replayed and is empty (read
 * from this thread while the agent runs, as get_stats allows; at most a
 * minute more), so that every window the agent made reached send.
 */
static void *stop_later(void *arg)
{
	struct stopper *st = arg;

	sleep(st->seconds);
	for (int i = 0; i < 600; i++) {
		BPFREC_OPTS(bpfrec_agent_stats, s);

		if (!bpfrec_agent_get_stats(st->agent, &s) && s.replayed && !s.spool_entries)
			break;
		usleep(100000);
	}
	bpfrec_agent_stop(st->agent);
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: agent-lib BODIES SPOOL [-w MS] [-F HZ] [-g] "
		"(-p PID SECONDS | -- COMMAND [ARGS...])\n");
	exit(2);
}

int main(int argc, char **argv)
{
	BPFREC_OPTS(bpfrec_record_opts, rec, .freq = 999, .no_buildid_cache = true);
	BPFREC_OPTS(bpfrec_agent_opts, o, .record = &rec, .window_ns = 500000000ull,
		    .send = send_body, .on_push = on_push, .log = on_log);
	BPFREC_OPTS(bpfrec_agent_stats, st);
	struct sink sink = { .last = BPFREC_AGENT_PUSHED };
	struct stopper stopper = { 0 };
	struct bpfrec_agent *agent = NULL;
	pthread_t stop_thread;
	pid_t pid = 0;
	int i, err, failed = 0;

	if (argc < 4)
		usage();
	sink.dir = argv[1];
	o.spool_dir = argv[2];
	o.send_ctx = o.on_push_ctx = &sink;
	for (i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "-w") && i + 1 < argc) {
			o.window_ns = strtoull(argv[++i], NULL, 10) * 1000000ull;
		} else if (!strcmp(argv[i], "-F") && i + 1 < argc) {
			rec.freq = strtoull(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "-g")) {
			rec.callgraph = BPFREC_CALLGRAPH_CFI;
		} else if (!strcmp(argv[i], "-p") && i + 2 < argc) {
			pid = (pid_t)atoi(argv[++i]);
			stopper.seconds = (unsigned int)atoi(argv[++i]);
			if (pid <= 0 || !stopper.seconds)
				usage();
		} else if (!strcmp(argv[i], "--") && i + 1 < argc) {
			rec.command = argv + i + 1;
			break;
		} else {
			usage();
		}
	}
	if (!pid == !rec.command)
		usage();
	if (mkdir(sink.dir, 0700) && errno != EEXIST) {
		fprintf(stderr, "agent-lib: cannot create %s: %s\n", sink.dir, strerror(errno));
		return 1;
	}
	if (pid) {
		rec.pids = &pid;
		rec.nr_pids = 1;
	}

	err = bpfrec_agent_new(&o, &agent);
	if (err) {
		fprintf(stderr, "agent-lib: %s\n", agent ? bpfrec_agent_error(agent) : strerror(-err));
		bpfrec_agent_free(agent);
		return 1;
	}
	if (pid) {
		stopper.agent = agent;
		err = pthread_create(&stop_thread, NULL, stop_later, &stopper);
		if (err) {
			fprintf(stderr, "agent-lib: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	err = bpfrec_agent_run(agent);
	if (err)
		fprintf(stderr, "agent-lib: bpfrec_agent_run: %s\n", bpfrec_agent_error(agent));
	if (pid)
		pthread_join(stop_thread, NULL);
	if (bpfrec_agent_get_stats(agent, &st)) {
		fprintf(stderr, "agent-lib: bpfrec_agent_get_stats failed\n");
		return 1;
	}
	bpfrec_agent_free(agent);

#define P(name, v) printf("%s %llu\n", name, (unsigned long long)(v))
	P("windows", st.windows);
	P("windows_converted", st.windows_converted);
	P("windows_dropped", st.windows_dropped);
	P("profiles", st.profiles);
	P("samples", st.samples);
	P("requests", st.requests);
	P("pushed", st.pushed);
	P("pushed_bytes", st.pushed_bytes);
	P("replayed", st.replayed);
	P("attempts_failed", st.attempts_failed);
	P("spooled", st.spooled);
	P("dropped_rejected", st.dropped_rejected);
	P("dropped_too_large", st.dropped_too_large);
	P("dropped_no_spool", st.dropped_no_spool);
	P("spool_evicted", st.spool_evicted);
	P("spool_full", st.spool_full);
	P("spool_entries", st.spool_entries);
	P("spool_bytes", st.spool_bytes);
	P("record_samples", st.record_samples);
	P("record_lost", st.record_lost);
	P("send_calls", sink.send_calls);
	P("send_bytes", sink.send_bytes);
	P("send_replays", sink.send_replays);
	P("taken", sink.taken);
	P("taken_bytes", sink.taken_bytes);
	P("on_push_pushed", sink.outcomes[BPFREC_AGENT_PUSHED]);
	P("on_push_retry", sink.outcomes[BPFREC_AGENT_RETRY]);
	P("on_push_replays", sink.on_push_replays);
	P("on_push_samples", sink.on_push_samples);
#undef P
	fflush(stdout);

	/* What the library counted against what its callbacks saw. */
	CHECK(!err, "bpfrec_agent_run failed");
	CHECK(!sink.write_errors, "%d bodies not written to %s", sink.write_errors, sink.dir);
	CHECK(!sink.mismatch, "on_push saw %d outcomes send did not give", sink.mismatch);
	CHECK(sink.send_calls == sink.outcomes[BPFREC_AGENT_PUSHED] +
	      sink.outcomes[BPFREC_AGENT_RETRY], "%llu calls of send, on_push saw %llu + %llu",
	      sink.send_calls, sink.outcomes[BPFREC_AGENT_PUSHED], sink.outcomes[BPFREC_AGENT_RETRY]);
	CHECK(st.pushed == sink.taken && st.pushed_bytes == sink.taken_bytes,
	      "the agent counted %llu pushed (%llu bytes), send took %llu (%llu bytes)",
	      (unsigned long long)st.pushed, (unsigned long long)st.pushed_bytes, sink.taken,
	      sink.taken_bytes);
	CHECK(st.attempts_failed == sink.outcomes[BPFREC_AGENT_RETRY],
	      "%llu failed attempts counted, send refused %llu",
	      (unsigned long long)st.attempts_failed, sink.outcomes[BPFREC_AGENT_RETRY]);
	CHECK(sink.send_replays == sink.on_push_replays, "send saw %llu replays, on_push %llu",
	      sink.send_replays, sink.on_push_replays);
	return failed;
}
