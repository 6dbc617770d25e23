/* SPDX-License-Identifier: MIT */
/*
 * bpfrec/common.h - what every part of libbpfrec's public API shares:
 * version, the export marker, options structs, errors, the log and write
 * callbacks; and the fields the two converters' options share.
 *
 * Installed as <bpfrec/common.h>; <bpfrec/bpfrec.h> includes everything.
 * It lives in tools/lib/, with the rest of what every module shares: it
 * belongs to none of them.
 *
 * Conventions (as libbpf's):
 *  - handles are opaque; each has a _new()/_free() pair;
 *  - functions return 0 (or a count) on success and -errno on failure,
 *    and the handle's _error() accessor then holds a one-line message that
 *    names the problem and the fix; the library never prints by itself;
 *  - options are a struct whose first field is `size_t sz`, declared with
 *    BPFREC_OPTS(). A program built against an older header passes a
 *    smaller sz and gets defaults for the fields it does not know; one
 *    built against a newer header may run with an older library only if
 *    the bytes past the last field the library knows are zero (else
 *    -EINVAL). Each options struct's header names its last field
 *    (TYPE__last_field), as libbpf's do;
 *  - no global state: two recordings or conversions in one process do not
 *    share anything but the process itself (its fd limit, see record.h).
 */
#ifndef BPFREC_COMMON_H
#define BPFREC_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BPFREC_VERSION_MAJOR 0
#define BPFREC_VERSION_MINOR 1

/* Marks what the shared library exports; everything else is hidden. */
#ifndef BPFREC_API
#define BPFREC_API __attribute__((visibility("default")))
#endif

/*
 * Declare and zero an options struct with its sz set, then the named
 * fields given:  BPFREC_OPTS(bpfrec_record_opts, o, .freq = 99);
 * The memset zeroes the padding too, which an initializer alone need not
 * do: the library refuses non-zero bytes past the fields it knows. (A GNU
 * C statement expression, as libbpf's LIBBPF_OPTS; gcc, clang and g++
 * take it.)
 */
#define BPFREC_OPTS(TYPE, NAME, ...)					\
	struct TYPE NAME = ({						\
		memset(&NAME, 0, sizeof(struct TYPE));			\
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ };	\
	})

/* How much a log message matters; the callback decides what to show. */
enum bpfrec_log_level {
	BPFREC_LOG_WARN = 0,	/* something the result lacks (a process's maps unreadable) */
	BPFREC_LOG_INFO,	/* notes: what a missing privilege left out */
	BPFREC_LOG_DEBUG,	/* per-file details */
};

/*
 * Receives the library's messages: one line, no prefix, no newline. With
 * no callback (the default) the library is silent.
 */
typedef void (*bpfrec_log_fn)(void *ctx, enum bpfrec_log_level level, const char *msg);

/*
 * A sink for output bytes: called with each piece in order. Returns 0 when
 * it took all of buf, else -errno, which fails the write that called it.
 */
typedef int (*bpfrec_write_fn)(void *ctx, const void *buf, size_t len);

/*
 * The fields bpfrec_pprof_opts and bpfrec_flamegraph_opts share, written
 * once so that both name, mean and lay them out alike. Field lists rather
 * than a member struct: a caller still sets o.event, o.kallsyms.
 *
 * Which samples a conversion keeps: only this event (by name), these
 * pids, tids, command names; NULL (and 0) = all.
 */
#define BPFREC_SAMPLE_FILTER_FIELDS					\
	const char *event;						\
	const uint32_t *pids;						\
	size_t nr_pids;							\
	const uint32_t *tids;						\
	size_t nr_tids;							\
	const char *const *comms;					\
	size_t nr_comms

/* Where a conversion's symbols come from. */
#define BPFREC_SYMBOL_SOURCE_FIELDS					\
	bool no_inlines;	/* only the outermost function per address */	\
	const char *kallsyms;	/* NULL = /proc/kallsyms */			\
	const char *symfs;	/* look for every binary under this dir */	\
	const char *debug_dir;	/* NULL = /usr/lib/debug */			\
	const char *jit_dir	/* where perf-PID.map files are; NULL = /tmp */

/* "0.1.0": the library's own version, whatever header a program was built with. */
BPFREC_API const char *bpfrec_version(void);

#ifdef __cplusplus
}
#endif

#endif /* BPFREC_COMMON_H */
