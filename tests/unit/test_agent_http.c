// SPDX-License-Identifier: MIT
/*
 * Unit tests for tools/agent/http.c against a tiny HTTP/1.1 server thread on
 * 127.0.0.1 that answers every request with one canned answer (or never):
 * each classification (ok, refused, 5xx, 429 with Retry-After, 413, 400
 * with the server's message, a hang past timeout_ms, Parca's grpc-status in
 * headers and in the trailer frame), what the request carried, and the
 * connection kept alive between pushes. No root needed.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tools/agent/http.h"

struct srv {
	int lfd, stop[2];
	int port;
	pthread_t th;
	const char *answer;	/* NULL: read the request, never answer */
	size_t answer_len;
	/* What the last request carried. */
	pthread_mutex_t lock;
	char head[4096];
	char *body;
	size_t body_len;
	int accepts, requests;
};

/* Read until n bytes or the stop pipe; false on EOF/stop. */
static bool read_n(struct srv *s, int fd, char *buf, size_t n)
{
	for (size_t got = 0; got < n;) {
		struct pollfd p[2] = { { fd, POLLIN, 0 }, { s->stop[0], POLLIN, 0 } };
		ssize_t r;

		if (poll(p, 2, -1) < 0 || (p[1].revents & POLLIN))
			return false;
		r = read(fd, buf + got, n - got);
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

static bool serve_one(struct srv *s, int fd)
{
	char head[4096];
	size_t hl = 0, clen = 0;
	char *cl, *body;

	/* The head, byte by byte up to the blank line (small; a test). */
	while (hl < sizeof(head) - 1) {
		if (!read_n(s, fd, head + hl, 1))
			return false;
		hl++;
		if (hl >= 4 && !memcmp(head + hl - 4, "\r\n\r\n", 4))
			break;
	}
	head[hl] = 0;
	cl = strcasestr(head, "\r\ncontent-length:");
	if (cl)
		clen = strtoul(cl + 17, NULL, 10);
	body = malloc(clen + 1);
	cr_assert(body);
	if (!read_n(s, fd, body, clen)) {
		free(body);
		return false;
	}
	pthread_mutex_lock(&s->lock);
	memcpy(s->head, head, hl + 1);
	free(s->body);
	s->body = body;
	s->body_len = clen;
	s->requests++;
	pthread_mutex_unlock(&s->lock);
	if (!s->answer) {	/* hang: hold the connection until the test ends */
		struct pollfd p = { s->stop[0], POLLIN, 0 };

		poll(&p, 1, -1);
		return false;
	}
	return write(fd, s->answer, s->answer_len) == (ssize_t)s->answer_len;
}

static void *srv_main(void *arg)
{
	struct srv *s = arg;

	for (;;) {
		struct pollfd p[2] = { { s->lfd, POLLIN, 0 }, { s->stop[0], POLLIN, 0 } };
		int fd;

		if (poll(p, 2, -1) < 0 || (p[1].revents & POLLIN))
			return NULL;
		fd = accept(s->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		pthread_mutex_lock(&s->lock);
		s->accepts++;
		pthread_mutex_unlock(&s->lock);
		while (serve_one(s, fd))	/* keep-alive: the next request on the same connection */
			;
		close(fd);
	}
}

static int listen_any(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(fd, 8), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

static struct srv *srv_start(const char *answer, size_t len)
{
	struct srv *s = calloc(1, sizeof(*s));

	cr_assert(s);
	s->answer = answer;
	s->answer_len = len;
	pthread_mutex_init(&s->lock, NULL);
	cr_assert_eq(pipe(s->stop), 0);
	s->lfd = listen_any(&s->port);
	cr_assert_eq(pthread_create(&s->th, NULL, srv_main, s), 0);
	return s;
}

static void srv_stop(struct srv *s)
{
	cr_assert_eq(write(s->stop[1], "x", 1), 1);
	pthread_join(s->th, NULL);
	close(s->lfd);
	close(s->stop[0]);
	close(s->stop[1]);
	free(s->body);
	free(s);
}

#define ANSWER(s) (s), sizeof(s) - 1

/* POST body to the server with api; the classified result. */
static struct push_result post(struct srv *s, enum agent_api api, unsigned timeout_ms)
{
	static const char body[] = "\x0a\x05hello";
	struct agent_http *h;
	struct push_result r;
	char url[64];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", s->port);
	cr_assert_eq(agent_http_new(url, timeout_ms, &h), 0);
	cr_assert_eq(agent_http_post(h, api, body, sizeof(body) - 1, &r), 0);
	agent_http_free(h);
	return r;
}

/*
 * What a push must come to: its outcome, and the fields HTTP(), GRPC(),
 * RETRY_AFTER() and .message name (the others are not checked).
 */
struct outcome_want {
	enum push_outcome outcome;
	bool has_http, has_grpc, has_retry_after;
	long http_status;
	int grpc_status;
	uint64_t retry_after_ms;
	const char *message;
};
#define HTTP(n) .has_http = true, .http_status = (n)
#define GRPC(n) .has_grpc = true, .grpc_status = (n)
#define RETRY_AFTER(n) .has_retry_after = true, .retry_after_ms = (n)

/* r is what w says; `what` names the case in each message. */
static void expect_outcome(const char *what, const struct push_result *r,
			   const struct outcome_want *w)
{
	cr_assert_eq(r->outcome, w->outcome, "%s: outcome %d, want %d: %s", what, r->outcome,
		     w->outcome, r->message);
	if (w->has_http)
		cr_assert_eq(r->http_status, w->http_status, "%s: HTTP %ld: %s", what,
			     r->http_status, r->message);
	if (w->has_grpc)
		cr_assert_eq(r->grpc_status, w->grpc_status, "%s: grpc-status %d: %s", what,
			     r->grpc_status, r->message);
	if (w->has_retry_after)
		cr_assert_eq(r->retry_after_ms, w->retry_after_ms, "%s: Retry-After %lu ms", what,
			     (unsigned long)r->retry_after_ms);
	if (w->message)
		cr_assert_str_eq(r->message, w->message, "%s", what);
}

Test(http, ok_pyroscope_and_what_was_sent)
{
	struct srv *s = srv_start(ANSWER("HTTP/1.1 200 OK\r\nContent-Type: application/proto\r\n"
					 "Content-Length: 0\r\n\r\n"));
	struct push_result r = post(s, AGENT_API_PYROSCOPE, 5000);

	expect_outcome("200", &r,
		       &(struct outcome_want){ .outcome = PUSH_OK, HTTP(200), RETRY_AFTER(0) });
	cr_assert(!strncmp(s->head, "POST /push.v1.PusherService/Push HTTP/1.1\r\n", 43), "%s", s->head);
	cr_assert_not_null(strcasestr(s->head, "\r\nContent-Type: application/proto\r\n"), "%s", s->head);
	cr_assert_not_null(strcasestr(s->head, "\r\nConnect-Protocol-Version: 1\r\n"), "%s", s->head);
	cr_assert_null(strcasestr(s->head, "\r\nExpect:"), "%s", s->head);
	cr_assert_eq(s->body_len, 7);
	cr_assert(!memcmp(s->body, "\x0a\x05hello", 7));
	srv_stop(s);
}

Test(http, keep_alive_and_url_prefix)
{
	struct srv *s = srv_start(ANSWER("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
	struct agent_http *h;
	struct push_result r;
	char url[64];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/pyroscope//", s->port);
	cr_assert_eq(agent_http_new(url, 5000, &h), 0);
	cr_assert_eq(agent_http_add_header(h, "X-Scope-OrgID: team-a"), 0);
	cr_assert_eq(agent_http_add_header(h, "no colon"), -EINVAL);
	cr_assert_eq(agent_http_add_header(h, "X-Evil: a\r\nX-Injected: b"), -EINVAL);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(agent_http_post(h, AGENT_API_PYROSCOPE, "abc", 3, &r), 0);
		cr_assert_eq(r.outcome, PUSH_OK, "%s", r.message);
	}
	cr_assert(!strncmp(s->head, "POST /pyroscope/push.v1.PusherService/Push ", 43), "%s", s->head);
	cr_assert_eq(s->requests, 3);
	cr_assert_not_null(strcasestr(s->head, "\r\nX-Scope-OrgID: team-a\r\n"), "%s", s->head);
	cr_assert_null(strcasestr(s->head, "X-Injected"), "%s", s->head);
	cr_assert_eq(s->accepts, 1, "one connection for three pushes, not %d", s->accepts);
	agent_http_free(h);
	srv_stop(s);
}

Test(http, refused_is_retry)
{
	struct agent_http *h;
	struct push_result r;
	char url[64];
	int port, fd = listen_any(&port);

	close(fd);	/* nobody listens there now */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	cr_assert_eq(agent_http_new(url, 2000, &h), 0);
	cr_assert_eq(agent_http_post(h, AGENT_API_PARCA, "x", 1, &r), 0);
	expect_outcome("refused", &r, &(struct outcome_want){ .outcome = PUSH_RETRY, HTTP(0) });
	cr_assert_neq(r.message[0], 0);
	agent_http_free(h);
}

/* A gRPC-Web answer: HTTP 200, an empty message frame, then the trailer frame. */
static struct srv *grpc_web(const char *trailers, char *buf, size_t cap)
{
	size_t tl = strlen(trailers);
	int n = snprintf(buf, cap, "HTTP/1.1 200 OK\r\nContent-Type: application/grpc-web+proto\r\n"
			 "Content-Length: %zu\r\n\r\n", 5 + 5 + tl);

	memcpy(buf + n, "\x00\x00\x00\x00\x00", 5);
	buf[n + 5] = (char)0x80;
	buf[n + 6] = (char)(tl >> 24);
	buf[n + 7] = (char)(tl >> 16);
	buf[n + 8] = (char)(tl >> 8);
	buf[n + 9] = (char)tl;
	memcpy(buf + n + 10, trailers, tl);
	return srv_start(buf, (size_t)n + 10 + tl);
}

/*
 * One canned answer each: head, then Content-Length and body; or, with
 * trailers, a gRPC-Web answer (grpc_web()). request/request_header, when
 * set: how the request's head starts and a header it carries.
 */
struct answer_case {
	const char *name;
	const char *head, *body, *trailers;
	enum agent_api api;
	const char *request, *request_header;
	struct outcome_want want;
};

static const struct answer_case answers[] = {
	{ .name = "500", .api = AGENT_API_PYROSCOPE,
	  .head = "HTTP/1.1 500 Internal Server Error\r\n", .body = "boom\n",
	  .want = { .outcome = PUSH_RETRY, HTTP(500), .message = "HTTP 500: boom" } },
	{ .name = "429 with Retry-After", .api = AGENT_API_PYROSCOPE,
	  .head = "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\n", .body = "",
	  .want = { .outcome = PUSH_RETRY, HTTP(429), RETRY_AFTER(7000) } },
	{ .name = "Connect unavailable", .api = AGENT_API_PYROSCOPE,
	  .head = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n",
	  .body = "{\"code\":\"unavailable\",\"message\":\"ingester down\"}",
	  .want = { .outcome = PUSH_RETRY, GRPC(14),
		    .message = "HTTP 503, code UNAVAILABLE: ingester down" } },
	{ .name = "413", .api = AGENT_API_PARCA,
	  .head = "HTTP/1.1 413 Payload Too Large\r\n", .body = "",
	  .want = { .outcome = PUSH_TOO_LARGE, HTTP(413) } },
	{ .name = "400 with the server's message", .api = AGENT_API_PYROSCOPE,
	  .head = "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n",
	  .body = "{\"code\": \"invalid_argument\", "
		  "\"message\": \"invalid labels: \\\"x y\\\" is not a valid name\"}",
	  .want = { .outcome = PUSH_REJECTED, HTTP(400), GRPC(3),
		    .message = "HTTP 400, code INVALID_ARGUMENT: "
			       "invalid labels: \"x y\" is not a valid name" } },
	{ .name = "404", .api = AGENT_API_PARCA,
	  .head = "HTTP/1.1 404 Not Found\r\n", .body = "404 page not found\n",
	  .want = { .outcome = PUSH_REJECTED, .message = "HTTP 404: 404 page not found" } },
	{ .name = "Parca trailer ok", .api = AGENT_API_PARCA,
	  .trailers = "grpc-status:0\r\ngrpc-message:\r\n",
	  .request = "POST /parca.profilestore.v1alpha1.ProfileStoreService/WriteRaw HTTP/1.1\r\n",
	  .request_header = "\r\nContent-Type: application/grpc-web+proto\r\n",
	  .want = { .outcome = PUSH_OK, GRPC(0) } },
	{ .name = "Parca trailer INVALID_ARGUMENT", .api = AGENT_API_PARCA,
	  .trailers = "grpc-status: 3\r\ngrpc-message: bad%20profile%3A no samples\r\n",
	  .want = { .outcome = PUSH_REJECTED, GRPC(3),
		    .message = "HTTP 200, grpc-status INVALID_ARGUMENT: bad profile: no samples" } },
	{ .name = "Parca trailer UNAVAILABLE", .api = AGENT_API_PARCA,
	  .trailers = "grpc-status:14\r\ngrpc-message:shutting down\r\n",
	  .want = { .outcome = PUSH_RETRY, GRPC(14) } },
	/* Trailers-only: the status in the headers, no body. */
	{ .name = "Parca headers RESOURCE_EXHAUSTED", .api = AGENT_API_PARCA,
	  .head = "HTTP/1.1 200 OK\r\nContent-Type: application/grpc-web+proto\r\n"
		  "grpc-status: 8\r\ngrpc-message: too many series\r\n", .body = "",
	  .want = { .outcome = PUSH_RETRY, GRPC(8),
		    .message = "HTTP 200, grpc-status RESOURCE_EXHAUSTED: too many series" } },
	{ .name = "Parca headers UNAUTHENTICATED", .api = AGENT_API_PARCA,
	  .head = "HTTP/1.1 200 OK\r\ngrpc-status: 16\r\n", .body = "",
	  .want = { .outcome = PUSH_REJECTED, GRPC(16),
		    .message = "HTTP 200, grpc-status UNAUTHENTICATED" } },
};

Test(http, each_answer_is_classified)
{
	static char buf[1024];

	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		const struct answer_case *c = &answers[i];
		struct push_result r;
		struct srv *s;
		uint64_t rng = 1;

		if (c->trailers) {
			s = grpc_web(c->trailers, buf, sizeof(buf));
		} else {
			int n = snprintf(buf, sizeof(buf), "%sContent-Length: %zu\r\n\r\n%s", c->head,
					 strlen(c->body), c->body);

			cr_assert_lt((size_t)n, sizeof(buf), "%s", c->name);
			s = srv_start(buf, (size_t)n);
		}
		r = post(s, c->api, 5000);
		expect_outcome(c->name, &r, &c->want);
		if (c->request)
			cr_assert(!strncmp(s->head, c->request, strlen(c->request)), "%s: %s", c->name,
				  s->head);
		if (c->request_header)
			cr_assert_not_null(strcasestr(s->head, c->request_header), "%s: %s", c->name,
					   s->head);
		/* Retry-After is the backoff's floor. */
		if (c->want.has_retry_after)
			cr_assert_geq(agent_backoff_ms(0, r.retry_after_ms, &rng), c->want.retry_after_ms,
				      "%s", c->name);
		srv_stop(s);
	}
}

Test(http, retry_after_as_a_date)
{
	char answer[256], date[64];
	time_t when = time(NULL) + 30;
	struct tm tm;
	struct srv *s;
	struct push_result r;
	int n;

	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", gmtime_r(&when, &tm));
	n = snprintf(answer, sizeof(answer), "HTTP/1.1 503 Service Unavailable\r\n"
		     "Retry-After: %s\r\nContent-Length: 0\r\n\r\n", date);
	s = srv_start(answer, (size_t)n);
	r = post(s, AGENT_API_PYROSCOPE, 5000);
	cr_assert_eq(r.outcome, PUSH_RETRY, "%s", r.message);
	cr_assert(r.retry_after_ms >= 28000 && r.retry_after_ms <= 30000, "Retry-After %s: %lu ms",
		  date, (unsigned long)r.retry_after_ms);
	srv_stop(s);
}

Test(http, hang_is_retry_after_timeout)
{
	struct srv *s = srv_start(NULL, 0);
	struct timespec a, b;
	struct push_result r;
	double secs;

	clock_gettime(CLOCK_MONOTONIC, &a);
	r = post(s, AGENT_API_PYROSCOPE, 400);
	clock_gettime(CLOCK_MONOTONIC, &b);
	secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	cr_assert_eq(r.outcome, PUSH_RETRY, "%s", r.message);
	cr_assert_eq(s->requests, 1, "the server got the whole request");
	cr_assert(secs >= 0.35 && secs < 3.0, "gave up after %.2f s, timeout 0.4 s", secs);
	srv_stop(s);
}

Test(http, bad_urls)
{
	struct agent_http *h;

	cr_assert_eq(agent_http_new("ftp://127.0.0.1/", 1000, &h), -EINVAL);
	cr_assert_eq(agent_http_new("not a url", 1000, &h), -EINVAL);
	cr_assert_eq(agent_http_new("", 1000, &h), -EINVAL);
	cr_assert_eq(agent_http_new("http://127.0.0.1:4040", 0, &h), -EINVAL);
	cr_assert_eq(agent_http_new("https://profiles.example:443/base", 1000, &h), 0);
	agent_http_free(h);
}

Test(http, backoff)
{
	uint64_t rng = 42, lo[12], hi[12];

	for (unsigned a = 0; a < 12; a++) {
		uint64_t cap = a >= 6 ? 60000 : 1000ull << a;

		lo[a] = UINT64_MAX, hi[a] = 0;
		for (int i = 0; i < 2000; i++) {
			uint64_t d = agent_backoff_ms(a, 0, &rng);

			cr_assert(d >= 1000 && d <= cap, "attempt %u: %lu ms", a, (unsigned long)d);
			lo[a] = d < lo[a] ? d : lo[a];
			hi[a] = d > hi[a] ? d : hi[a];
		}
		/* Jitter: the draws spread over the range. */
		if (a >= 3)
			cr_assert(lo[a] < 1000 + cap / 8 && hi[a] > cap - cap / 8,
				  "attempt %u: %lu..%lu of 1000..%lu", a, (unsigned long)lo[a],
				  (unsigned long)hi[a], (unsigned long)cap);
	}
	cr_assert_eq(lo[0], 1000);
	cr_assert_eq(hi[0], 1000);
	/* Retry-After is a floor, even past the cap. */
	cr_assert_eq(agent_backoff_ms(2, 120000, &rng), 120000);
	rng = 0;
	cr_assert_geq(agent_backoff_ms(9, 0, &rng), 1000);
	cr_assert_neq(rng, 0);
}

/*
 * The same client against tests/tools/profile_receiver.py (python3): what
 * the receiver decodes by field number is what request.c encoded, and its
 * fault modes give the outcomes the agent's integration tests rely on.
 */
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "tools/agent/request.h"
#include "test_agent_pb.h"

#define RECEIVER "tests/tools/profile_receiver.py"

struct receiver {
	pid_t pid;
	int port, control;
	char dir[256];
};

static struct receiver rcv;

static void receiver_start(void)
{
	const char *t = getenv("TMPDIR");
	int fds[2];
	char line[64];
	FILE *f;

	if (access(RECEIVER, R_OK) || system("python3 -c '' 2>/dev/null"))
		cr_skip_test("needs python3 and " RECEIVER " (run from the source tree)");
	snprintf(rcv.dir, sizeof(rcv.dir), "%s/agent-rcv-XXXXXX", t && *t ? t : "/tmp");
	cr_assert_not_null(mkdtemp(rcv.dir));
	cr_assert_eq(pipe(fds), 0);
	rcv.pid = fork();
	cr_assert_geq(rcv.pid, 0);
	if (!rcv.pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execlp("python3", "python3", RECEIVER, rcv.dir, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	cr_assert(f && fgets(line, sizeof(line), f), "the receiver printed no port");
	rcv.port = atoi(line);
	cr_assert(fgets(line, sizeof(line), f), "the receiver printed no control port");
	rcv.control = atoi(line);
	fclose(f);
	cr_assert(rcv.port > 0 && rcv.control > 0);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *w)
{
	(void)st, (void)flag, (void)w;
	return remove(p);
}

static void receiver_stop(void)
{
	if (rcv.pid > 0) {
		kill(rcv.pid, SIGTERM);
		waitpid(rcv.pid, NULL, 0);
		nftw(rcv.dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	}
}

TestSuite(receiver, .fini = receiver_stop, .timeout = 60);

/* POST /__control with mode on the control port; in force when it returns. */
static void set_mode(const char *mode)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				 .sin_port = htons((uint16_t)rcv.control) };
	char req[256], resp[256];
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int n = snprintf(req, sizeof(req), "POST /__control HTTP/1.1\r\nHost: x\r\n"
			 "Connection: close\r\nContent-Length: %zu\r\n\r\n%s", strlen(mode), mode);
	ssize_t got = 0, r;

	cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(write(fd, req, (size_t)n), n);
	while ((r = read(fd, resp + got, sizeof(resp) - 1 - (size_t)got)) > 0)
		got += r;
	resp[got] = 0;
	close(fd);
	cr_assert(!strncmp(resp, "HTTP/1.1 200", 12), "control %s: %s", mode, resp);
}

static const size_t rsizes[] = { 3000, 0, 250000, 17 };

/* A request of n series: profile i is rsizes[i % 4] bytes of t_fill(i), gzipped. */
static struct push_request *make_request(enum agent_api api, size_t n, uint8_t **raws)
{
	struct push_request *req;

	cr_assert_eq(push_request_new(api, &req), 0);
	for (size_t i = 0; i < n; i++) {
		char svc[32];
		struct agent_label l[2] = { { "__name__", "process_cpu" }, { "service_name", svc } };
		size_t gl;
		uint8_t *gz;

		snprintf(svc, sizeof(svc), "%s-%zu", agent_api_name(api), i);
		raws[i] = malloc(rsizes[i % 4] + 1);
		t_fill(raws[i], rsizes[i % 4], (uint32_t)i);
		gz = t_gzip(raws[i], rsizes[i % 4], &gl);
		cr_assert_eq(push_request_begin_series(req, l, 2), 0);
		cr_assert_eq(push_request_write(req, gz, gl), 0);
		cr_assert_eq(push_request_end_series(req), 0);
		free(gz);
	}
	return req;
}

static struct push_result push(struct agent_http *h, enum agent_api api, struct push_request *req)
{
	struct push_result r;
	const void *body;
	size_t len;

	cr_assert_eq(push_request_finish(req, &body, &len), 0);
	cr_assert_eq(agent_http_post(h, api, body, len, &r), 0);
	return r;
}

static char *slurp(const char *name, size_t *len)
{
	char path[512];
	struct stat st;
	char *buf;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", rcv.dir, name);
	fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	cr_assert_eq(read(fd, buf, (size_t)st.st_size), st.st_size);
	buf[st.st_size] = 0;
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

Test(receiver, decodes_both_apis)
{
	uint8_t *raws[2][6];
	struct agent_http *h;
	struct push_result r;
	char url[64], want[256], *log, *line;
	size_t len, nlines = 0;

	receiver_start();
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", rcv.port);
	cr_assert_eq(agent_http_new(url, 10000, &h), 0);
	for (int a = 0; a < 2; a++) {
		enum agent_api api = a ? AGENT_API_PARCA : AGENT_API_PYROSCOPE;
		struct push_request *req = make_request(api, 6, raws[a]);

		r = push(h, api, req);
		cr_assert_eq(r.outcome, PUSH_OK, "%s: %s", agent_api_name(api), r.message);
		push_request_free(req);
	}
	agent_http_free(h);

	/* One line per series, in order: labels and gunzipped sizes as sent. */
	log = slurp("requests.jsonl", &len);
	line = log;
	for (int a = 0; a < 2; a++) {
		const char *name = a ? "parca" : "pyroscope";

		for (size_t i = 0; i < 6; i++, nlines++) {
			char *eol = strchr(line, '\n'), file[128], *gz, *f;
			size_t gzl, rl;
			uint8_t *raw;

			cr_assert_not_null(eol, "only %zu lines in requests.jsonl", nlines);
			*eol = 0;
			snprintf(want, sizeof(want), "\"api\": \"%s\", \"request\": %d, \"n\": %zu, "
				 "\"labels\": {\"__name__\": \"process_cpu\", \"service_name\": \"%s-%zu\"}, "
				 "\"bytes\": %zu,", name, a + 1, nlines + 1, name, i, rsizes[i % 4]);
			cr_assert_not_null(strstr(line, want), "line %s\nwants %s", line, want);
			/* The file it wrote holds the raw_profile as sent. */
			f = strstr(line, "\"file\": \"");
			cr_assert_not_null(f);
			snprintf(file, sizeof(file), "%.*s", (int)strcspn(f + 9, "\""), f + 9);
			gz = slurp(file, &gzl);
			raw = t_gunzip(gz, gzl, &rl);
			cr_assert_eq(rl, rsizes[i % 4]);
			cr_assert(!memcmp(raw, raws[a][i], rl), "%s differs", file);
			free(raw);
			free(gz);
			free(raws[a][i]);
			line = eol + 1;
		}
	}
	cr_assert_eq(*line, 0, "more lines than series");
	free(log);
}

/* Set the receiver's mode (NULL: keep it), push with api: what comes of it. */
struct fault_step {
	const char *mode;
	enum agent_api api;
	struct outcome_want want;
};

static const struct fault_step faults[] = {
	{ NULL, AGENT_API_PYROSCOPE, { .outcome = PUSH_OK } },
	/* Down: the kept-alive connection goes too; back up: a new one works. */
	{ "down", AGENT_API_PYROSCOPE, { .outcome = PUSH_RETRY, HTTP(0) } },
	{ "ok", AGENT_API_PARCA, { .outcome = PUSH_OK } },
	{ "status:429", AGENT_API_PYROSCOPE, { .outcome = PUSH_RETRY, RETRY_AFTER(1000) } },
	{ "status:500", AGENT_API_PARCA, { .outcome = PUSH_RETRY, HTTP(500) } },
	{ "grpc:3", AGENT_API_PARCA,
	  { .outcome = PUSH_REJECTED,
	    .message = "HTTP 200, grpc-status INVALID_ARGUMENT: fault mode grpc:3" } },
	{ "grpc:14", AGENT_API_PARCA, { .outcome = PUSH_RETRY } },
	{ NULL, AGENT_API_PYROSCOPE, { .outcome = PUSH_RETRY, GRPC(14) } },
	{ "max-body:1000", AGENT_API_PYROSCOPE, { .outcome = PUSH_TOO_LARGE } },
	{ "hang", AGENT_API_PYROSCOPE, { .outcome = PUSH_RETRY } },
	{ "ok", AGENT_API_PYROSCOPE, { .outcome = PUSH_OK } },
};

Test(receiver, fault_modes)
{
	uint8_t *raws[4];
	struct agent_http *h;
	struct push_result r;
	char url[64];
	struct push_request *pyro, *parca;

	receiver_start();
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", rcv.port);
	cr_assert_eq(agent_http_new(url, 1000, &h), 0);
	pyro = make_request(AGENT_API_PYROSCOPE, 2, raws);
	parca = make_request(AGENT_API_PARCA, 2, raws + 2);

	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
		const struct fault_step *f = &faults[i];
		char what[64];

		if (f->mode)
			set_mode(f->mode);
		r = push(h, f->api, f->api == AGENT_API_PARCA ? parca : pyro);
		snprintf(what, sizeof(what), "step %zu (%s, %s)", i, f->mode ? f->mode : "same mode",
			 agent_api_name(f->api));
		expect_outcome(what, &r, &f->want);
	}

	/* What the servers say of a body they cannot decode. */
	{
		static const uint8_t junk[] = { 0x0a, 0x7f, 0x01 };	/* a field past the end */
		static const uint8_t pjunk[] = { 0, 0, 0, 0, 3, 0x12, 0x7f, 0x01 };

		cr_assert_eq(agent_http_post(h, AGENT_API_PYROSCOPE, junk, sizeof(junk), &r), 0);
		cr_assert_eq(r.outcome, PUSH_REJECTED, "%s", r.message);
		cr_assert_eq(r.http_status, 400);
		cr_assert_eq(r.grpc_status, 3);
		cr_assert_eq(agent_http_post(h, AGENT_API_PARCA, pjunk, sizeof(pjunk), &r), 0);
		cr_assert_eq(r.outcome, PUSH_REJECTED, "%s", r.message);
		cr_assert_eq(r.grpc_status, 3);
	}
	push_request_free(pyro);
	push_request_free(parca);
	for (int i = 0; i < 4; i++)
		free(raws[i]);
	agent_http_free(h);
}
