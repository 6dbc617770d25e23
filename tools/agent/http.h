/* SPDX-License-Identifier: MIT */
/*
 * http.h - POST one push request body to Pyroscope or Parca, with libcurl,
 * and say what the agent should do with it next.
 *
 * libcurl brings what a hand-written client would lack: TLS with the
 * system's CA store, proxies from the environment (https_proxy, no_proxy),
 * HTTP/2 over TLS, connect and total timeouts, and a kept-alive connection
 * reused from one push to the next (one easy handle per agent_http).
 *
 * Classification of one POST (push_result.outcome):
 *   PUSH_OK         HTTP 200 (and for Parca, grpc-status 0 or absent).
 *   PUSH_RETRY      the server may take it later: connection refused, DNS
 *                   failure, timeout, any transport error; HTTP 408, 429, 5xx
 *                   except 501; gRPC / Connect codes UNAVAILABLE (14),
 *                   RESOURCE_EXHAUSTED (8), DEADLINE_EXCEEDED (4), ABORTED (10).
 *                   retry_after_ms holds the server's Retry-After when given.
 *   PUSH_TOO_LARGE  HTTP 413: split the request (push_request_split) or drop it.
 *   PUSH_REJECTED   it will never be taken: other 4xx, 501, other gRPC codes.
 * message is one line for a log: the HTTP status or gRPC code and the
 * server's own message (Connect's JSON "message", grpc-message), or
 * libcurl's description of a transport error.
 *
 * Parca answers gRPC-Web: HTTP 200 and the status in a grpc-status header
 * (a trailers-only answer) or in the trailer frame (flag 0x80) of the body.
 * Pyroscope answers Connect: HTTP 200 with the message, else a status with a
 * JSON body {"code": "...", "message": "..."}.
 *
 * timeout_ms bounds each whole request (connect, send, answer) and the
 * connect alone, so a server that accepts and never answers costs at most
 * that. agent_http_post() returns 0 whenever the outcome was classified;
 * -errno only for local faults (-ENOMEM). Not thread-safe: one handle per thread.
 */
#ifndef TOOLS_AGENT_HTTP_H
#define TOOLS_AGENT_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "request.h"

enum push_outcome { PUSH_OK, PUSH_RETRY, PUSH_REJECTED, PUSH_TOO_LARGE };

struct push_result {
	enum push_outcome outcome;
	long http_status;	/* 0: no answer (transport error) */
	int grpc_status;	/* gRPC code (Parca), or Connect's code as a number; -1 none */
	uint64_t retry_after_ms;	/* from Retry-After, 0 = none */
	char message[256];
};

struct agent_http;

/*
 * server_url: scheme://host[:port][/prefix], the API's path is appended
 * (a trailing '/' is dropped). -EINVAL for a URL libcurl cannot parse or
 * with a scheme other than http/https; -ENOPKG when libcurl cannot be
 * loaded (curl_dl.h: curl_api_get() says why).
 */
int agent_http_new(const char *server_url, unsigned timeout_ms, struct agent_http **h);
/*
 * One more request header, "Name: value" (copied), on every push: a tenant
 * (X-Scope-OrgID for a multi-tenant Pyroscope), an Authorization. Basic
 * auth can also ride in the URL (https://user:token@host). -EINVAL for a
 * line without ':' or with a line break.
 */
int agent_http_add_header(struct agent_http *h, const char *header);
int agent_http_post(struct agent_http *h, enum agent_api api, const void *body, size_t len,
		    struct push_result *res);
void agent_http_free(struct agent_http *h);

/*
 * How long to wait before retry number attempt (0 = the first retry):
 * uniformly random between 1 s and min(60 s, 1 s << attempt) (jitter
 * spreads many agents that failed together), and never less than
 * retry_after_ms. *rng_state is a caller-owned xorshift state (any value;
 * 0 is replaced by a fixed seed).
 */
uint64_t agent_backoff_ms(unsigned attempt, uint64_t retry_after_ms, uint64_t *rng_state);

/* "OK", "UNAVAILABLE", ... for a gRPC code; "code N" beyond the known ones. */
const char *agent_grpc_code_name(int code);

#endif /* TOOLS_AGENT_HTTP_H */
