/* SPDX-License-Identifier: MIT */
/*
 * bpfrec/agent.h - continuous profiling: record without end, cut the
 * recording into windows, turn each window into pprof profiles (one per
 * event and per service) and push them to Grafana Pyroscope or Parca, or
 * hand them to the caller. What `bpfrec agent` does, as a library.
 *
 * Installed as <bpfrec/agent.h>.
 *
 *   bpfrec_agent_new(opts)   checks and copies the options
 *   bpfrec_agent_run()       starts recording and runs until
 *                            bpfrec_agent_stop() (or the launched command
 *                            ends); the last window is pushed or spooled
 *                            before it returns
 *   bpfrec_agent_stop()      from any thread or a signal handler
 *   bpfrec_agent_get_stats() at any time, from any thread
 *   bpfrec_agent_free()
 *
 * Two threads: the caller's, in bpfrec_agent_run(), only drains the ring
 * buffers and cuts windows; a worker converts, uploads, spools and
 * replays, so a server that stalls never stalls the recording. Windows
 * waiting for the worker are perf.data files on disk (at most
 * BPFREC_AGENT_MAX_PENDING; beyond, the oldest is dropped and counted).
 *
 * Delivery: a request that fails in a way worth retrying (no connection,
 * a timeout, 5xx, 429) goes to the on-disk spool, and the spool is
 * replayed, oldest first, with exponential backoff and jitter (at least
 * the server's Retry-After) until the server takes it; the spool survives
 * restarts and is bounded (oldest dropped first, counted). A request the
 * server refuses (other 4xx) is dropped and counted; one too large (413)
 * is split in two, and a single profile too large is dropped and counted.
 * Every request ends up pushed, spooled or counted as dropped.
 *
 * Errors are -errno; bpfrec_agent_error() says what and where.
 */
#ifndef BPFREC_AGENT_H
#define BPFREC_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bpfrec/common.h>
#include <bpfrec/record.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bpfrec_agent;

/* Which server API requests are encoded for. */
enum bpfrec_agent_api {
	/* Grafana Pyroscope: Connect, POST /push.v1.PusherService/Push. */
	BPFREC_AGENT_PYROSCOPE = 0,
	/* Parca: gRPC-Web, POST /parca.profilestore.v1alpha1.ProfileStoreService/WriteRaw. */
	BPFREC_AGENT_PARCA = 1,
};

/* What became of one attempt to deliver a request. */
enum bpfrec_agent_outcome {
	BPFREC_AGENT_PUSHED = 0,	/* the server took it */
	BPFREC_AGENT_RETRY,		/* try again later: it is spooled */
	BPFREC_AGENT_REJECTED,		/* refused for good: dropped, counted */
	BPFREC_AGENT_TOO_LARGE,		/* 413: split in two, or dropped when one profile */
};

#define BPFREC_AGENT_MAX_PENDING 4

/* One request, as on_push and send see it. */
struct bpfrec_agent_request {
	size_t sz;
	enum bpfrec_agent_api api;
	const void *body;		/* the HTTP body, exactly as sent */
	size_t len;
	size_t nr_series;		/* profiles in it (0 for a spooled one) */
	uint64_t samples;		/* samples in them (0 for a spooled one) */
	bool replay;			/* from the spool */
	/* For on_push: the outcome, the HTTP status (0: none) and the server's words. */
	enum bpfrec_agent_outcome outcome;
	long http_status;
	const char *message;
};

/*
 * Send a request yourself instead of the library's HTTP client: return
 * the outcome; msg (msglen bytes) may say why, for the log.
 */
typedef enum bpfrec_agent_outcome (*bpfrec_agent_send_fn)(void *ctx,
							   const struct bpfrec_agent_request *req,
							   char *msg, size_t msglen);

/* Declare with BPFREC_OPTS(bpfrec_agent_opts, o, ...); zero = default. */
struct bpfrec_agent_opts {
	size_t sz;
	/*
	 * What and how to record (NULL = system-wide, 19 Hz, no stacks). The
	 * output and switch fields are the agent's own and must be zero. The
	 * struct is copied; what it points to must live until
	 * bpfrec_agent_run() returns.
	 */
	const struct bpfrec_record_opts *record;
	/* Where to push: "http://host:port" (a path prefix is kept). NULL only with send. */
	const char *server_url;
	enum bpfrec_agent_api api;
	uint64_t window_ns;		/* one window's length; 0 = 15 s */
	/*
	 * Labels on every profile, "KEY=VALUE", each KEY once, of letters,
	 * digits, '_' and '.', not starting with a digit or "__" (the
	 * servers' own). service_name overrides the service found per
	 * process (systemd unit, cgroup, else comm), hostname the host's name.
	 */
	const char *const *labels;
	size_t nr_labels;
	/* The on-disk spool: NULL = none (a request to retry is dropped, counted). */
	const char *spool_dir;
	uint64_t spool_max_bytes;	/* 0 = 256 MiB */
	/*
	 * A request is sent when its compressed size reaches this (0 = 4 MiB).
	 * Soft: a request may go past it by one profile, since a profile is
	 * never split across requests.
	 */
	size_t max_request_bytes;
	unsigned int timeout_ms;	/* one request, connecting included; 0 = 10 s */
	/* Where windows wait as perf.data until converted; NULL = /var/tmp. */
	const char *work_dir;
	bpfrec_agent_send_fn send;	/* NULL = HTTP to server_url */
	void *send_ctx;
	/* After each attempt, from the worker thread. */
	void (*on_push)(void *ctx, const struct bpfrec_agent_request *req);
	void *on_push_ctx;
	/* Warnings and notes (of the recording too); NULL = silent. From either thread. */
	bpfrec_log_fn log;
	void *log_ctx;
	/*
	 * The symbol tables the windows share (files found, parsed and mapped
	 * once) are dropped and made again before a window when they have
	 * grown past this many bytes (bpfrec_pprof_symbols_size()), as they
	 * are every 10 minutes: a bound on what naming keeps between windows.
	 * 0 = 64 MiB.
	 */
	uint64_t symbols_max_bytes;
};
#define bpfrec_agent_opts__last_field symbols_max_bytes

/* Declare with BPFREC_OPTS(bpfrec_agent_stats, st) so sz is set. */
struct bpfrec_agent_stats {
	size_t sz;
	uint64_t windows;		/* windows cut */
	uint64_t windows_converted;	/* turned into profiles */
	uint64_t windows_dropped;	/* not converted: worker behind, or unreadable */
	uint64_t profiles;		/* profiles encoded */
	uint64_t samples;		/* samples in them */
	uint64_t requests;		/* requests made of them */
	uint64_t pushed, pushed_bytes;	/* requests the server took (replays included) */
	uint64_t replayed;		/* of those, from the spool */
	uint64_t attempts_failed;	/* attempts that will be retried */
	uint64_t spooled;		/* requests put in the spool */
	uint64_t dropped_rejected;	/* refused by the server */
	uint64_t dropped_too_large;	/* one profile over the server's limit */
	uint64_t dropped_no_spool;	/* to retry, but no spool (or the spool failed) */
	uint64_t spool_evicted;		/* oldest spooled requests dropped for room */
	uint64_t spool_full;		/* requests the spool's disk had no room for */
	uint64_t spool_corrupt;		/* spooled requests found damaged, removed */
	uint64_t spool_entries, spool_bytes;	/* in the spool now */
	uint64_t record_samples, record_lost;	/* the recording's, all windows */
	/* Symbol tables dropped for passing opts.symbols_max_bytes, and their
	 * largest size seen between windows (bytes, bpfrec_pprof_symbols_size()). */
	uint64_t symbols_renewed, symbols_peak_bytes;
};

/* As bpfrec_record_new(): *agent is set unless -ENOMEM; free it either way. */
BPFREC_API int bpfrec_agent_new(const struct bpfrec_agent_opts *opts, struct bpfrec_agent **agent);
BPFREC_API int bpfrec_agent_run(struct bpfrec_agent *agent);
/* Async-signal-safe. */
BPFREC_API void bpfrec_agent_stop(struct bpfrec_agent *agent);
BPFREC_API int bpfrec_agent_get_stats(const struct bpfrec_agent *agent,
				      struct bpfrec_agent_stats *stats);
BPFREC_API const char *bpfrec_agent_error(const struct bpfrec_agent *agent);
/* After a failed bpfrec_agent_run(): the exit code `bpfrec record` would give. */
BPFREC_API int bpfrec_agent_failure_code(const struct bpfrec_agent *agent);
BPFREC_API void bpfrec_agent_free(struct bpfrec_agent *agent);

#ifdef __cplusplus
}
#endif

#endif /* BPFREC_AGENT_H */
