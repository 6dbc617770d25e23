// SPDX-License-Identifier: MIT
/*
 * http.c - one push POST with libcurl, classified (see http.h).
 *
 * The answer is read into a bounded buffer (what a status needs: a Connect
 * error's JSON, a gRPC-Web trailer frame); the headers are scanned as they
 * arrive for grpc-status, grpc-message and Retry-After, and forgotten at
 * each status line (a 100 Continue, a proxy's 200 Connection established).
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "tools/lib/bpfrec_common.h"
#include "tools/agent/curl_dl.h"
#include "http.h"

/* Enough for any status or error text; the rest of a long answer is discarded. */
#define RESP_MAX	(64 * 1024)
/* A Retry-After further out than this is taken as this: the spool keeps the data meanwhile. */
#define RETRY_AFTER_MAX_MS	(3600 * 1000ull)
#define BACKOFF_MIN_MS	1000ull
#define BACKOFF_MAX_MS	60000ull

/* libcurl's functions: agent_http_new() has loaded them before anything else runs. */
static const struct curl_api *C(void)
{
	return curl_api_get(NULL, 0);
}

struct agent_http {
	CURL *curl;
	char *base;		/* the server URL without a trailing '/' */
	struct curl_slist *headers[2];	/* per enum agent_api */
	char errbuf[CURL_ERROR_SIZE];

	/* The answer being read. */
	char resp[RESP_MAX];
	size_t resp_len;
	int hdr_grpc_status;	/* -1: none */
	char hdr_grpc_message[128];
	uint64_t retry_after_ms;
};

static const char *const grpc_names[] = {
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
	"ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
	"UNAUTHENTICATED",
};

const char *agent_grpc_code_name(int code)
{
	if (code >= 0 && code < (int)(sizeof(grpc_names) / sizeof(grpc_names[0])))
		return grpc_names[code];
	return "code";
}

/* Connect's codes are the gRPC names in lower case ("canceled" spelt the American way). */
static int connect_code(const char *s)
{
	if (!strcmp(s, "canceled"))
		return 1;
	for (size_t i = 0; i < sizeof(grpc_names) / sizeof(grpc_names[0]); i++)
		if (!strcasecmp(s, grpc_names[i]))
			return (int)i;
	return -1;
}

static bool grpc_retryable(int code)
{
	return code == 4 /* DEADLINE_EXCEEDED */ || code == 8 /* RESOURCE_EXHAUSTED */ ||
	       code == 10 /* ABORTED */ || code == 14 /* UNAVAILABLE */;
}

static bool http_retryable(long status)
{
	return status == 408 || status == 429 || (status >= 500 && status != 501);
}

/* Copy s (n bytes) into a one-line message: control characters become spaces. */
static void one_line(char *dst, size_t cap, const char *s, size_t n)
{
	size_t j = 0;

	for (size_t i = 0; i < n && j + 1 < cap; i++)
		dst[j++] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? ' ' : s[i];
	while (j && dst[j - 1] == ' ')
		j--;
	dst[j] = 0;
}

/* grpc-message is percent-encoded (gRPC over HTTP/2 spec). */
static void percent_decode(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '%' && isxdigit((unsigned char)s[1]) && isxdigit((unsigned char)s[2])) {
			char hex[3] = { s[1], s[2], 0 };

			*o++ = (char)strtol(hex, NULL, 16);
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

static uint64_t parse_retry_after(const char *v)
{
	uint64_t ms;

	if (isdigit((unsigned char)*v)) {
		unsigned long long secs = strtoull(v, NULL, 10);

		ms = secs > RETRY_AFTER_MAX_MS / 1000 ? RETRY_AFTER_MAX_MS : secs * 1000;
	} else {
		time_t when = C()->getdate(v, NULL);
		time_t now = time(NULL);

		if (when == (time_t)-1 || when <= now)
			return 0;
		ms = (uint64_t)(when - now) * 1000;
	}
	return ms > RETRY_AFTER_MAX_MS ? RETRY_AFTER_MAX_MS : ms;
}

/* A header line "name: value" of n bytes: the value (trimmed) into val, or false. */
static bool header_is(const char *line, size_t n, const char *name, char *val, size_t cap)
{
	size_t nl = strlen(name), i, j;

	if (n <= nl || strncasecmp(line, name, nl) || line[nl] != ':')
		return false;
	for (i = nl + 1; i < n && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	for (j = n; j > i && isspace((unsigned char)line[j - 1]); j--)
		;
	one_line(val, cap, line + i, j - i);
	return true;
}

/* Parse one trailer/header block's grpc-status and grpc-message. */
static void grpc_fields(const char *line, size_t n, int *status, char *msg, size_t cap)
{
	char v[32];

	if (header_is(line, n, "grpc-status", v, sizeof(v))) {
		char *end;
		long code = strtol(v, &end, 10);

		if (end != v && !*end && code >= 0 && code < 1000)
			*status = (int)code;
	} else if (header_is(line, n, "grpc-message", msg, cap)) {
		percent_decode(msg);
	}
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *ctx)
{
	struct agent_http *h = ctx;
	size_t n = size * nitems;
	char v[64];

	if (n >= 5 && !strncmp(buf, "HTTP/", 5)) {
		/* A new answer begins: forget the previous one's headers. */
		h->hdr_grpc_status = -1;
		h->hdr_grpc_message[0] = 0;
		h->retry_after_ms = 0;
		h->resp_len = 0;
	} else if (header_is(buf, n, "retry-after", v, sizeof(v))) {
		h->retry_after_ms = parse_retry_after(v);
	} else {
		grpc_fields(buf, n, &h->hdr_grpc_status, h->hdr_grpc_message,
			    sizeof(h->hdr_grpc_message));
	}
	return n;
}

static size_t on_body(char *buf, size_t size, size_t nmemb, void *ctx)
{
	struct agent_http *h = ctx;
	size_t n = size * nmemb, room = RESP_MAX - h->resp_len;

	memcpy(h->resp + h->resp_len, buf, n < room ? n : room);
	h->resp_len += n < room ? n : room;
	return n;
}

/*
 * The gRPC-Web body: frames of [flags][4-byte length][payload]; the one
 * with flag 0x80 holds the trailers as "name: value\r\n" lines.
 */
static void grpc_web_trailers(const struct agent_http *h, int *status, char *msg, size_t cap)
{
	const uint8_t *p = (const uint8_t *)h->resp, *end = p + h->resp_len;

	while (end - p >= 5) {
		uint32_t len = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
		const char *t = (const char *)p + 5;

		if (len > (size_t)(end - p) - 5)
			return;
		if (p[0] & 0x80) {
			const char *te = t + len;

			while (t < te) {
				const char *eol = memchr(t, '\n', (size_t)(te - t));
				size_t n = eol ? (size_t)(eol - t) : (size_t)(te - t);

				grpc_fields(t, n, status, msg, cap);
				t += n + (eol ? 1 : 0);
			}
		}
		p += 5 + len;
	}
}

/*
 * The string value of key in a flat JSON object (Connect's error body),
 * unescaped enough for a log line; false when absent.
 */
static bool json_string(const char *js, size_t n, const char *key, char *out, size_t cap)
{
	size_t kl = strlen(key), j = 0;
	const char *p = js, *end = js + n;

	for (; p + kl + 2 <= end; p++) {
		if (*p != '"' || memcmp(p + 1, key, kl) || p[kl + 1] != '"')
			continue;
		p += kl + 2;
		while (p < end && isspace((unsigned char)*p))
			p++;
		if (p >= end || *p++ != ':')
			continue;
		while (p < end && isspace((unsigned char)*p))
			p++;
		if (p >= end || *p++ != '"')
			continue;
		for (; p < end && *p != '"' && j + 1 < cap; p++) {
			if (*p == '\\' && p + 1 < end) {
				p++;
				out[j++] = *p == 'n' || *p == 't' || *p == 'r' ? ' ' : *p;
			} else {
				out[j++] = (unsigned char)*p < 0x20 ? ' ' : *p;
			}
		}
		out[j] = 0;
		return true;
	}
	return false;
}

int agent_http_new(const char *server_url, unsigned timeout_ms, struct agent_http **out)
{
	static const char *const ctype[2] = {
		[AGENT_API_PYROSCOPE] = "Content-Type: application/proto",
		[AGENT_API_PARCA] = "Content-Type: application/grpc-web+proto",
	};
	/* Connect's protocol header; gRPC-Web's marker. "Expect:" turns off curl's
	 * 100-continue wait, which costs a second with servers that ignore it. */
	static const char *const extra[2] = {
		[AGENT_API_PYROSCOPE] = "Connect-Protocol-Version: 1",
		[AGENT_API_PARCA] = "X-Grpc-Web: 1",
	};
	struct agent_http *h;
	CURLU *u = NULL;
	char *scheme = NULL;
	size_t n;
	int err = -EINVAL;

	if (!server_url || !*server_url || !timeout_ms)
		return -EINVAL;
	/* curl_api_get() says why to the caller that asks. */
	if (!curl_api_get(NULL, 0))
		return -ENOPKG;
	u = C()->url();
	if (!u)
		return -ENOMEM;
	if (C()->url_set(u, CURLUPART_URL, server_url, 0) != CURLUE_OK ||
	    C()->url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    (strcmp(scheme, "http") && strcmp(scheme, "https"))) {
		C()->free(scheme);
		C()->url_cleanup(u);
		return -EINVAL;
	}
	C()->free(scheme);
	C()->url_cleanup(u);

	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	err = -ENOMEM;
	h->base = strdup(server_url);
	if (!h->base)
		goto fail;
	for (n = strlen(h->base); n && h->base[n - 1] == '/'; n--)
		h->base[n - 1] = 0;
	for (int api = 0; api < 2; api++) {
		struct curl_slist *l = NULL, *t;

		if (!(t = C()->slist_append(l, ctype[api])))
			goto fail;
		l = t;
		h->headers[api] = l;
		if (!(t = C()->slist_append(l, extra[api])) || !(t = C()->slist_append(l, "Expect:")))
			goto fail;
	}
	h->curl = C()->easy_init();
	if (!h->curl)
		goto fail;

	CURL *c = h->curl;
	char ua[64];

	snprintf(ua, sizeof(ua), "bpfrec/%s", bpfrec_version());
	if (C()->easy_setopt(c, CURLOPT_USERAGENT, ua) ||
	    C()->easy_setopt(c, CURLOPT_NOSIGNAL, 1L) ||
	    C()->easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)timeout_ms) ||
	    C()->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms) ||
	    C()->easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L) ||
	    C()->easy_setopt(c, CURLOPT_ERRORBUFFER, h->errbuf) ||
	    C()->easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header) ||
	    C()->easy_setopt(c, CURLOPT_HEADERDATA, h) ||
	    C()->easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body) ||
	    C()->easy_setopt(c, CURLOPT_WRITEDATA, h) ||
#if LIBCURL_VERSION_NUM >= 0x075500
	    C()->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") ||
#endif
	    C()->easy_setopt(c, CURLOPT_POST, 1L))
		goto fail;
	*out = h;
	return 0;
fail:
	agent_http_free(h);
	return err;
}

void agent_http_free(struct agent_http *h)
{
	if (!h)
		return;
	if (h->curl)
		C()->easy_cleanup(h->curl);
	C()->slist_free_all(h->headers[0]);
	C()->slist_free_all(h->headers[1]);
	free(h->base);
	free(h);
}

int agent_http_add_header(struct agent_http *h, const char *header)
{
	const char *colon = header ? strchr(header, ':') : NULL;

	if (!colon || colon == header || strpbrk(header, "\r\n"))
		return -EINVAL;
	for (int api = 0; api < 2; api++) {
		struct curl_slist *l = C()->slist_append(h->headers[api], header);

		if (!l)
			return -ENOMEM;
		h->headers[api] = l;
	}
	return 0;
}

static void classify(struct agent_http *h, enum agent_api api, struct push_result *res)
{
	char msg[160] = "", code[32] = "";
	int grpc = -1;

	res->retry_after_ms = h->retry_after_ms;
	if (api == AGENT_API_PARCA) {
		/* The trailer frame decides; a trailers-only answer has it in the headers. */
		grpc_web_trailers(h, &grpc, msg, sizeof(msg));
		if (grpc < 0) {
			grpc = h->hdr_grpc_status;
			snprintf(msg, sizeof(msg), "%s", h->hdr_grpc_message);
		}
	} else if (res->http_status != 200 &&
		   json_string(h->resp, h->resp_len, "code", code, sizeof(code))) {
		grpc = connect_code(code);
		json_string(h->resp, h->resp_len, "message", msg, sizeof(msg));
	}
	res->grpc_status = grpc;

	if (res->http_status == 200 && grpc <= 0) {
		res->outcome = PUSH_OK;
		snprintf(res->message, sizeof(res->message), "HTTP 200");
		return;
	}
	if (res->http_status == 413)
		res->outcome = PUSH_TOO_LARGE;
	else if (http_retryable(res->http_status) || (grpc > 0 && grpc_retryable(grpc)))
		res->outcome = PUSH_RETRY;
	else
		res->outcome = PUSH_REJECTED;

	if (!msg[0] && grpc < 0 && h->resp_len)	/* no structured error: the body's start */
		one_line(msg, sizeof(msg), h->resp, h->resp_len < 120 ? h->resp_len : 120);
	if (grpc >= 0)
		snprintf(res->message, sizeof(res->message), "HTTP %ld, %s %s%s%s", res->http_status,
			 api == AGENT_API_PARCA ? "grpc-status" : "code",
			 agent_grpc_code_name(grpc), msg[0] ? ": " : "", msg);
	else
		snprintf(res->message, sizeof(res->message), "HTTP %ld%s%s", res->http_status,
			 msg[0] ? ": " : "", msg);
}

int agent_http_post(struct agent_http *h, enum agent_api api, const void *body, size_t len,
		    struct push_result *res)
{
	const char *path = agent_api_path(api);
	size_t ulen = strlen(h->base) + strlen(path) + 1;
	char *url;
	CURLcode rc;

	if ((api != AGENT_API_PYROSCOPE && api != AGENT_API_PARCA) || (!body && len))
		return -EINVAL;
	memset(res, 0, sizeof(*res));
	res->grpc_status = -1;
	url = malloc(ulen);
	if (!url)
		return -ENOMEM;
	snprintf(url, ulen, "%s%s", h->base, path);

	h->resp_len = 0;
	h->hdr_grpc_status = -1;
	h->hdr_grpc_message[0] = 0;
	h->retry_after_ms = 0;
	h->errbuf[0] = 0;
	rc = C()->easy_setopt(h->curl, CURLOPT_URL, url);
	if (!rc)
		rc = C()->easy_setopt(h->curl, CURLOPT_HTTPHEADER, h->headers[api]);
	if (!rc)
		rc = C()->easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	if (!rc)
		rc = C()->easy_setopt(h->curl, CURLOPT_POSTFIELDS, body ? body : "");
	if (!rc)
		rc = C()->easy_perform(h->curl);
	free(url);
	if (rc == CURLE_OUT_OF_MEMORY)
		return -ENOMEM;
	if (rc != CURLE_OK) {
		/* Nothing the server said can be trusted whole: try again later. */
		res->outcome = PUSH_RETRY;
		C()->easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &res->http_status);
		snprintf(res->message, sizeof(res->message), "%s",
			 h->errbuf[0] ? h->errbuf : C()->easy_strerror(rc));
		return 0;
	}
	C()->easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &res->http_status);
	classify(h, api, res);
	return 0;
}

uint64_t agent_backoff_ms(unsigned attempt, uint64_t retry_after_ms, uint64_t *rng_state)
{
	uint64_t cap = attempt >= 6 ? BACKOFF_MAX_MS : BACKOFF_MIN_MS << attempt;
	uint64_t x = *rng_state ? *rng_state : 0x9e3779b97f4a7c15ull, d;

	if (cap > BACKOFF_MAX_MS)
		cap = BACKOFF_MAX_MS;
	/* xorshift64* */
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*rng_state = x;
	d = BACKOFF_MIN_MS + (x * 0x2545f4914f6cdd1dull >> 11) % (cap - BACKOFF_MIN_MS + 1);
	return d > retry_after_ms ? d : retry_after_ms;
}
