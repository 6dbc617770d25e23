// SPDX-License-Identifier: MIT
/*
 * bpfrec_record.c - the public recording API (bpfrec/record.h) over
 * recorder/session.h: options translated, the session's messages routed to
 * the caller's log callback. The state machine is the session's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpfrec/record.h>

#include "recorder/sched.h"
#include "recorder/session.h"
#include "symbolize/cfiwalk.h"
#include "tools/lib/errbuf.h"
#include "tools/lib/opts.h"

_Static_assert((int)BPFREC_LOG_WARN == (int)RECORD_LOG_WARN &&
	       (int)BPFREC_LOG_INFO == (int)RECORD_LOG_INFO &&
	       (int)BPFREC_LOG_DEBUG == (int)RECORD_LOG_DEBUG, "log levels map 1:1");

struct bpfrec_record {
	struct bpfrec_record_opts opts;
	struct record_session *s;	/* NULL when the options were refused */
	FILE *debug_log;	/* the build-id cache's lines, to the log callback */
	char line[512];		/* a debug line being assembled */
	size_t line_len;
	char err[256];		/* why the options were refused (before there is a session) */
};

#define options_error(r, e, ...) ERRBUF_FAIL(r, e, __VA_ARGS__)

static void session_log(void *ctx, enum record_log_level level, const char *msg)
{
	struct bpfrec_record *r = ctx;

	r->opts.log(r->opts.log_ctx, (enum bpfrec_log_level)level, msg);
}

/*
 * The build-id cache writes lines to a FILE (buildid_cache.h): a cookie
 * stream hands each complete line to the log callback at DEBUG level.
 */
static ssize_t debug_log_write(void *cookie, const char *buf, size_t len)
{
	struct bpfrec_record *r = cookie;

	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '\n' || r->line_len == sizeof(r->line) - 1) {
			r->line[r->line_len] = '\0';
			r->opts.log(r->opts.log_ctx, BPFREC_LOG_DEBUG, r->line);
			r->line_len = 0;
			if (buf[i] == '\n')
				continue;
		}
		r->line[r->line_len++] = buf[i];
	}
	return (ssize_t)len;
}

static const enum rotate_mode switch_modes[] = {
	[BPFREC_SWITCH_NONE] = ROTATE_NONE,
	[BPFREC_SWITCH_MANUAL] = ROTATE_SIGNAL,
	[BPFREC_SWITCH_SIZE] = ROTATE_SIZE,
	[BPFREC_SWITCH_TIME] = ROTATE_TIME,
};

static const enum record_callgraph callgraphs[] = {
	[BPFREC_CALLGRAPH_NONE] = RECORD_CALLGRAPH_NONE,
	[BPFREC_CALLGRAPH_FP] = RECORD_CALLGRAPH_FP,
	[BPFREC_CALLGRAPH_DWARF] = RECORD_CALLGRAPH_DWARF,
	[BPFREC_CALLGRAPH_CFI] = RECORD_CALLGRAPH_CFI,
};

/* The public options as the session takes them; -EINVAL with a message. */
static int session_opts(struct bpfrec_record *r, struct record_opts *o)
{
	const struct bpfrec_record_opts *p = &r->opts;

	memset(o, 0, sizeof(*o));
	switch (p->output) {
	case BPFREC_OUTPUT_PATH:
		o->output = p->output_path;
		break;
	case BPFREC_OUTPUT_FD:
		o->use_output_fd = true;
		o->output_fd = p->output_fd;
		break;
	case BPFREC_OUTPUT_CALLBACK:
		if (!p->output_write)
			return options_error(r, -EINVAL, "output is BPFREC_OUTPUT_CALLBACK but "
					   "output_write is NULL: set the callback");
		o->output_write = p->output_write;
		o->output_write_ctx = p->output_ctx;
		break;
	default:
		return options_error(r, -EINVAL, "unknown output kind %d: use a BPFREC_OUTPUT_* value",
				   (int)p->output);
	}
	if ((unsigned int)p->callgraph >= sizeof(callgraphs) / sizeof(callgraphs[0]))
		return options_error(r, -EINVAL, "unknown call-graph mode %d: use a "
				   "BPFREC_CALLGRAPH_* value", (int)p->callgraph);
	if ((unsigned int)p->switch_output >= sizeof(switch_modes) / sizeof(switch_modes[0]))
		return options_error(r, -EINVAL, "unknown switch_output %d: use a BPFREC_SWITCH_* "
				   "value", (int)p->switch_output);
	o->event = p->event;
	o->freq = p->freq || p->period ? p->freq : 4000;
	o->period = p->period;
	o->callgraph = callgraphs[p->callgraph];
	o->stack_user_size = p->stack_user_bytes;
	if (o->callgraph == RECORD_CALLGRAPH_DWARF && !o->stack_user_size)
		o->stack_user_size = RECORD_STACK_USER_DEFAULT;
	if (p->unwind_table_bytes && (p->unwind_table_bytes < BPFREC_UNWIND_TABLE_MIN_BYTES ||
				      p->unwind_table_bytes > BPFREC_UNWIND_TABLE_MAX_BYTES))
		return options_error(r, -EINVAL, "unwind_table_bytes %llu is out of range: give 4 KiB "
				   "to 4 GiB, or 0 for the default",
				   (unsigned long long)p->unwind_table_bytes);
	o->unwind_table_bytes = p->unwind_table_bytes;
	o->system_wide = p->system_wide;
	o->pids = p->pids;
	o->nr_pids = p->nr_pids;
	o->tids = p->tids;
	o->nr_tids = p->nr_tids;
	o->cpus = p->cpus;
	o->nr_cpus = p->nr_cpus;
	o->command = p->command;
	o->argc = p->argc;
	o->argv = p->argv;
	o->ring_buffer_bytes = p->ring_buffer_bytes;
	o->flush_interval_ms = p->flush_interval_ms;
	o->wake_fd = -1;
	/* Every message goes to the callback, which chooses what to show. */
	o->verbose = true;
	o->log = p->log ? session_log : NULL;
	o->log_ctx = r;
	o->switch_output.mode = switch_modes[p->switch_output];
	o->switch_output.bytes = p->switch_bytes;
	o->switch_output.ns = p->switch_ns;
	o->switch_max_files = p->switch_max_files;
	o->on_switch = p->on_switch;
	o->on_switch_ctx = p->on_switch_ctx;
	o->off_cpu = p->off_cpu;
	o->off_cpu_thresh_ns = p->off_cpu_thresh_ns;
	o->alloc_interval = p->alloc_interval;
	o->compression_level = p->compression_level;
	o->no_buildid_cache = p->no_buildid_cache;
	o->buildid_cache_log = r->debug_log;
	o->on_filed = p->on_filed;
	o->on_filed_ctx = p->on_filed_ctx;
	o->sched = p->sched;
	o->no_python = p->no_python;
	o->sched_thresh_ns = p->sched_thresh_ns ? p->sched_thresh_ns : SCHED_DEFAULT_THRESH_NS;
	return 0;
}

int bpfrec_record_new(const struct bpfrec_record_opts *opts, struct bpfrec_record **out)
{
	static const cookie_io_functions_t debug_io = { .write = debug_log_write };
	struct bpfrec_record *r;
	struct record_opts o;
	int err;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	*out = r;
	if (OPTS_COPY(&r->opts, bpfrec_record_opts, opts))
		return ERRBUF_OPTS_REFUSED(r, bpfrec_record_opts, opts);
	if (r->opts.log) {
		r->debug_log = fopencookie(r, "w", debug_io);
		if (!r->debug_log)
			return options_error(r, -ENOMEM, "out of memory");
		setvbuf(r->debug_log, NULL, _IONBF, 0);
	}
	err = session_opts(r, &o);
	if (err)
		return err;
	err = record_session_new(&o, &r->s);
	if (err)
		return err;
	return 0;
}

/*
 * The state machine is the session's (recorder/session.h); a handle whose
 * options were refused has no session and is FAILED.
 */
static int no_session(const struct bpfrec_record *r)
{
	return r->s ? 0 : -EINVAL;
}

int bpfrec_record_open(struct bpfrec_record *r)
{
	return r->s ? record_session_open(r->s) : -EALREADY;	/* as a failed session's */
}

int bpfrec_record_start(struct bpfrec_record *r)
{
	return no_session(r) ?: record_session_start(r->s);
}

int bpfrec_record_poll(struct bpfrec_record *r, int timeout_ms)
{
	return no_session(r) ?: record_session_poll(r->s, timeout_ms);
}

int bpfrec_record_poll_fd(const struct bpfrec_record *r)
{
	int fd = r->s ? record_session_poll_fd(r->s) : -1;

	return fd >= 0 ? fd : -EINVAL;
}

int bpfrec_record_timeout_ms(const struct bpfrec_record *r)
{
	int ms = r->s ? record_session_next_poll_ms(r->s) : -1;

	return ms >= 0 ? ms : -EINVAL;
}

int bpfrec_record_stop(struct bpfrec_record *r)
{
	return no_session(r) ?: record_session_stop(r->s);
}

int bpfrec_record_switch_output(struct bpfrec_record *r)
{
	return no_session(r) ?: record_session_switch_output(r->s);
}

void bpfrec_record_free(struct bpfrec_record *r)
{
	if (!r)
		return;
	record_session_close(r->s);
	if (r->debug_log)
		fclose(r->debug_log);
	free(r);
}

_Static_assert((int)BPFREC_RECORD_NEW == (int)SESSION_NEW &&
	       (int)BPFREC_RECORD_OPEN == (int)SESSION_OPEN &&
	       (int)BPFREC_RECORD_STARTED == (int)SESSION_STARTED &&
	       (int)BPFREC_RECORD_STOPPED == (int)SESSION_STOPPED &&
	       (int)BPFREC_RECORD_FAILED == (int)SESSION_FAILED, "states map 1:1");

enum bpfrec_record_state bpfrec_record_state(const struct bpfrec_record *r)
{
	return r->s ? (enum bpfrec_record_state)record_session_state(r->s) : BPFREC_RECORD_FAILED;
}

static struct record_status status_of(const struct bpfrec_record *r)
{
	struct record_status st = { .rec = { .sz = sizeof(st.rec), .exit_code = -1 } };

	if (r->s)
		record_session_status(r->s, &st);
	return st;
}

/* An older caller gets the part it knows; a newer one zeros beyond ours. */
int bpfrec_record_get_stats(const struct bpfrec_record *r, struct bpfrec_record_stats *stats)
{
	struct record_status st = status_of(r);

	return opts_copy_out(stats, &st.rec, sizeof(st.rec));
}

int bpfrec_record_get_unwind_stats(const struct bpfrec_record *r,
				   struct bpfrec_unwind_stats *stats)
{
	struct bpfrec_unwind_stats u = { .sz = sizeof(u) };

	if (r->s)
		record_session_unwind_status(r->s, &u);
	return opts_copy_out(stats, &u, sizeof(u));
}

int bpfrec_record_get_alloc_stats(const struct bpfrec_record *r, struct bpfrec_alloc_stats *stats)
{
	struct record_status st = status_of(r);

	return opts_copy_out(stats, &st.alloc, sizeof(st.alloc));
}

int bpfrec_record_get_offcpu_stats(const struct bpfrec_record *r,
				   struct bpfrec_offcpu_stats *stats)
{
	struct record_status st = status_of(r);

	return opts_copy_out(stats, &st.offcpu, sizeof(st.offcpu));
}

int bpfrec_record_sched_metrics(struct bpfrec_record *r, struct bpfrec_sched_metrics **out)
{
	*out = NULL;
	return r->s ? record_session_sched_metrics(r->s, out) : -ENOENT;
}

const char *bpfrec_unwind_stop_name(unsigned int stop)
{
	return stop < UNWIND_STOP_MAX ? cfi_walk_stop_name((enum unwind_stop)stop) : NULL;
}

_Static_assert(UNWIND_STOP_MAX <= BPFREC_UNWIND_STOPS, "room for every stop reason");

const char *bpfrec_record_error(const struct bpfrec_record *r)
{
	if (r->err[0] || !r->s)
		return r->err;
	return record_session_error(r->s);
}

int bpfrec_record_failure_code(const struct bpfrec_record *r)
{
	return r->s ? record_session_failure_code(r->s) : 1;
}
