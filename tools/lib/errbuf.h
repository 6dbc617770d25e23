/* SPDX-License-Identifier: MIT */
/*
 * errbuf.h - the one-line message a handle's _error() returns
 * (bpfrec/common.h: a function returns -errno and names the problem and
 * the fix in its handle), formatted into the handle's own buffer.
 *
 * Each handle keeps a char array `err`; ERRBUF_FAIL(h, -EINVAL, "...")
 * fills it and evaluates to the error, so a check reads
 * `return ERRBUF_FAIL(h, -EINVAL, "...", ...);`. Modules wrap it in their
 * own short name (fail(), session_fail(), ...).
 */
#ifndef TOOLS_LIB_ERRBUF_H
#define TOOLS_LIB_ERRBUF_H

#include <stddef.h>

/* fmt into buf (size bytes, truncated, always terminated); returns err. */
int errbuf_set(char *buf, size_t size, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* errbuf_set() into h->err, which must be an array (not a pointer). */
#define ERRBUF_FAIL(h, e, ...) errbuf_set((h)->err, sizeof((h)->err), (e), __VA_ARGS__)

/*
 * The message for an options struct OPTS_COPY() refused (type, e.g.
 * "bpfrec_pprof_opts", at the caller's sz); returns -EINVAL. One wording
 * for every handle, naming the library's version and the fix.
 */
int errbuf_opts_refused(char *buf, size_t size, const char *type, size_t sz);

#define ERRBUF_OPTS_REFUSED(h, TYPE, opts) \
	errbuf_opts_refused((h)->err, sizeof((h)->err), #TYPE, (opts)->sz)

#endif /* TOOLS_LIB_ERRBUF_H */
