// SPDX-License-Identifier: MIT
/*
 * session.c - one recording's life cycle (contract in session.h): new,
 * open, start, poll, stop, close, and the statistics snapshot. The parts
 * each phase calls live next to it (session_int.h): targets.c, output.c,
 * loop.c, and the event source (source.h; sampler.c by default).
 *
 * Reliability: every sample is written or counted lost (the source counts
 * what it saw, what it dropped is written as LOST_SAMPLES); the
 * checkpoint after each round keeps a file killed with SIGKILL readable; a
 * write error stops the recording with the file cut back to its last
 * checkpoint; the first sample of a new process wakes us at once
 * (PROFILE_SAMPLE_NEW_PROC) so its maps are read before it can exit;
 * --switch-output starts each file afresh (header, kernel maps, a new task
 * tracker, so every file describes its own processes).
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "perfdata/attr.h"
#include "perfdata/events.h"
#include "perfdata/writer.h"
#include "recorder/buildid_cache.h"
#include "recorder/sched.h"
#include "recorder/sampler.h"
#include "recorder/session_int.h"
#include "recorder/sideband.h"
#include "recorder/sysctl.h"
#include "recorder/tracer.h"
#include "recorder/pyframes.h"
#include "recorder/unwind_bpf.h"
#include "symbolize/fdlimit.h"
#include "tools/lib/clock.h"

#include "bpf/profile.h"

#define DEFAULT_EVENT		"cpu-clock"
#define DEFAULT_FLUSH_MS	100
/* How long rounds stay early after one that asked for unwind tables. */
#define UNWIND_SETTLE_NS	(50ull * 1000000)
#define MAX_SAMPLE_RATE		"kernel.perf_event_max_sample_rate"
/*
 * While a process runs a CPython we walk, and one was found or ran Python
 * in the last second (py_frames_read_soon()), the rings are read at least this
 * often (a round is still written at the flush interval): its frames are
 * named from its memory as they are read (pyframes.h), and a process that
 * exits within a flush interval of its first frames, its records still
 * unread, could not be named at all.
 */
#define PY_READ_NS		(5ull * 1000000)

void session_warn(const struct record_session *s, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (s->opts.quiet || !s->opts.log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	s->opts.log(s->opts.log_ctx, RECORD_LOG_WARN, msg);
}

/* A note (-v): what a missing privilege left out, and the like. */
void session_note(const struct record_session *s, const char *msg)
{
	if (s->opts.verbose && !s->opts.quiet && s->opts.log)
		s->opts.log(s->opts.log_ctx, RECORD_LOG_INFO, msg);
}

int session_priv_fail(struct record_session *s, enum priv_step step, int err, const char *what)
{
	char msg[400];

	privs_message(&s->privs, step, err, msg, sizeof(msg));
	if (what)
		return session_fail(s, err, "%s: %s", what, msg);
	return session_fail(s, err, "%s", msg);
}

/*
 * The build-id cache is a help, not a must: without it (no HOME, not
 * writable: a user without one), a note at -v, as perf says it only in debug.
 */
static void open_buildid_cache(struct record_session *s)
{
	struct buildid_cache_opts o = { .log = s->opts.buildid_cache_log,
					.on_filed = s->opts.on_filed,
					.on_filed_ctx = s->opts.on_filed_ctx };
	char msg[128];
	int err;

	if (s->opts.no_buildid_cache)
		return;
	err = buildid_cache_new(&o, &s->bcache);
	if (err) {
		snprintf(msg, sizeof(msg), "no build-id cache: %s; -N says so",
			 err == -ENOENT ? "HOME is not set" : strerror(-err));
		session_note(s, msg);
	}
}

/* What -e may sample: cpu-clock everywhere, the hardware events where there is a PMU. */
static bool samplable_event(uint32_t type, uint64_t config)
{
	return type == PERF_TYPE_HARDWARE ||
	       (type == PERF_TYPE_SOFTWARE && config == PERF_COUNT_SW_CPU_CLOCK);
}

static void *dup_array(const void *a, size_t n, size_t size)
{
	void *p;

	if (!n)
		return NULL;
	p = malloc(n * size);
	if (p)
		memcpy(p, a, n * size);
	return p;
}

/* Copy and check the options: no side effects. */
static int session_init(struct record_session *s, const struct record_opts *opts)
{
	uint64_t config;
	uint32_t type;
	int err;

	s->opts = *opts;
	s->out_fd = -1;
	s->epfd = -1;
	s->failure_code = 1;
	s->child.go_fd = s->child.err_fd = -1;
	s->batch_max = BATCH_MAX_BYTES;
	s->event_id = 1;
	s->src_ops = opts->source ? opts->source : &record_source_bpf;
	s->src = opts->source_ctx;
	s->pids = dup_array(opts->pids, opts->nr_pids, sizeof(pid_t));
	s->tids = dup_array(opts->tids, opts->nr_tids, sizeof(pid_t));
	s->cpus = dup_array(opts->cpus, opts->nr_cpus, sizeof(int));
	s->nr_cpus = opts->nr_cpus;
	if ((opts->nr_pids && !s->pids) || (opts->nr_tids && !s->tids) ||
	    (opts->nr_cpus && !s->cpus))
		return session_fail(s, -ENOMEM, "out of memory");
	err = session_choose_output(s, opts);
	if (err)
		return err;
	if (!s->opts.flush_interval_ms)
		s->opts.flush_interval_ms = DEFAULT_FLUSH_MS;

	s->event_name = opts->event ? opts->event : DEFAULT_EVENT;
	if (perfdata_event_by_name(s->event_name, &type, &config) ||
	    !samplable_event(type, config))
		return session_fail(s, -EINVAL, "unknown event '%s': use -e cpu-clock (or cycles, "
				    "instructions, cache-misses, branch-misses... on a machine "
				    "with a hardware PMU)", s->event_name);
	s->event_type = type;
	s->event_config = config;

	if (!opts->system_wide && !opts->nr_pids && !opts->nr_tids && !opts->command)
		return session_fail(s, -EINVAL, "nothing to record: give a command, -p PID, -t TID "
				    "or -a");
	if ((opts->nr_pids || opts->nr_tids) && opts->command)
		return session_fail(s, -EINVAL, "-p/-t and a command exclude each other: use one "
				    "of them");
	if ((opts->nr_pids || opts->nr_tids) && opts->system_wide)
		return session_fail(s, -EINVAL, "-p/-t and -a exclude each other: use one of them");
	if (opts->nr_pids && opts->nr_tids)
		return session_fail(s, -EINVAL, "-p and -t exclude each other: use one of them");
	if (!opts->period && !opts->freq)
		return session_fail(s, -EINVAL, "the sampling frequency must be at least 1 Hz");
	if (opts->switch_output.mode != ROTATE_NONE && (s->pipe || s->external))
		return session_fail(s, -EINVAL, "--switch-output needs an output file: it does not "
				    "work with -o -, an fd or a write callback");
	if (opts->switch_max_files && opts->switch_output.mode == ROTATE_NONE)
		return session_fail(s, -EINVAL, "--switch-max-files needs --switch-output");
	if (opts->switch_output.mode != ROTATE_NONE &&
	    rotator_init(&s->rot, s->output, opts->switch_max_files))
		return session_fail(s, -ENOMEM, "out of memory");
	if (pidset_init(&s->pids_seen, 0))
		return session_fail(s, -ENOMEM, "out of memory");
	if (opts->ring_buffer_bytes && (opts->ring_buffer_bytes < 4096 ||
					opts->ring_buffer_bytes > RECORD_RING_MAX_BYTES ||
					(opts->ring_buffer_bytes & (opts->ring_buffer_bytes - 1))))
		return session_fail(s, -EINVAL, "ring buffer size %zu is not a power of two "
				    "between 4 KiB and 1 GiB", opts->ring_buffer_bytes);
	return 0;
}

int record_session_new(const struct record_opts *opts, struct record_session **out)
{
	struct record_session *s = calloc(1, sizeof(*s));
	int err;

	*out = s;
	if (!s)
		return -ENOMEM;
	err = session_init(s, opts);
	s->state = err ? SESSION_FAILED : SESSION_NEW;
	return err;
}

/*
 * -F: at most what the kernel allows (kernel.perf_event_max_sample_rate),
 * with a warning; -F max is that limit.
 */
static void resolve_rate(struct record_session *s)
{
	long long rate;
	uint64_t max;

	if (s->opts.period)
		return;
	rate = sysctl_read(MAX_SAMPLE_RATE, 0);
	max = rate > 0 ? (uint64_t)rate : 0;
	if (s->opts.freq == UINT64_MAX) {	/* -F max */
		s->opts.freq = max ? max : 4000;
	} else if (max && s->opts.freq > max) {
		session_warn(s, "-F %" PRIu64 " is above kernel.perf_event_max_sample_rate; "
			     "sampling at %" PRIu64 " Hz", s->opts.freq, max);
		s->opts.freq = max;
	}
}

/* The attr the file describes: what the recording captures, as perf encodes it. */
static void build_file_attr(struct record_session *s)
{
	struct perfdata_capture c = {
		.type = s->event_type,
		.config = s->event_config,
		.period = s->opts.period,
		.freq = s->opts.freq,
		.cpu = s->opts.system_wide || s->opts.nr_cpus,
		/* The tracers' events (tracer.h) share the file. */
		.shared = record_tracers_wanted(&s->opts),
		.callchain = s->opts.callgraph != RECORD_CALLGRAPH_NONE,
		.inherit = !s->opts.system_wide,
	};

	if (s->opts.callgraph == RECORD_CALLGRAPH_DWARF) {
		c.regs_user = PROFILE_UREGS_MASK;
		c.stack_user = s->opts.stack_user_size;
	}
	perfdata_sample_attr(&c, &s->attr);
}

/*
 * One fd to wait on: the source's, the side-band's, the caller's wake_fd,
 * the tracers' own rings.
 */
static int open_poll_set(struct record_session *s)
{
	int fds[3 + RECORD_TRACERS_MAX] = {
		s->src_ops->poll_fd ? s->src_ops->poll_fd(s, s->src) : -1,
		/* A storm of mmaps filling its buffer half way wakes us before the timer. */
		s->sideband ? sideband_epoll_fd(s->sideband) : -1,
		s->opts.wake_fd,
	};
	size_t nr = 3 + (size_t)session_tracers_poll_fds(s, fds + 3, RECORD_TRACERS_MAX);

	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return session_fail(s, -errno, "epoll: %s", strerror(errno));
	for (size_t i = 0; i < nr; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = fds[i] };

		if (fds[i] >= 0 && epoll_ctl(s->epfd, EPOLL_CTL_ADD, fds[i], &ev) < 0)
			return session_fail(s, -errno, "epoll: %s", strerror(errno));
	}
	return 0;
}

static int session_open(struct record_session *s)
{
	int err = 0;

	/* Events per CPU and the files of every process: more than 1024 fds. */
	fd_limit_raise();
	privs_facts_read(&s->privs, s->exe, sizeof(s->exe));
	kfeatures_probe(&s->kfeatures);
	if (s->src_ops->check)
		err = s->src_ops->check(s, s->src);
	if (!err)
		err = session_check_targets(s);
	if (!err)
		err = session_check_output_dir(s);
	if (err)
		return err;
	resolve_rate(s);
	build_file_attr(s);

	/* Whatever the kernel may refuse comes before the output is touched. */
	s->src_opened = true;
	err = s->src_ops->open(s, &s->src);
	/*
	 * Loading the BPF objects parsed the kernel's BTF (5-6 MB each time,
	 * twice) and freed it; glibc keeps those pages in the heap under what
	 * was allocated after: give them back, they were half the recorder's
	 * resident memory for the whole recording.
	 */
	malloc_trim(0);
	if (!err)
		err = open_poll_set(s);
	if (!err)
		err = session_create_output(s);
	if (err)
		return err;
	open_buildid_cache(s);
	if (s->py)
		py_frames_set_cache(s->py, s->bcache);

	if (s->opts.command) {
		err = session_tracers_command_env(s);
		if (err)
			return err;
		err = launch_fork_env(&s->child, s->cmd_path, s->opts.command,
				      s->cmd_env[0] ? s->cmd_env : NULL, s->to_stdout);
		if (err)
			return session_fail(s, err, "cannot fork: %s", strerror(-err));
		if (!s->opts.system_wide && s->src_ops->add_target)
			err = s->src_ops->add_target(s, s->src, s->child.pid);
	}
	return err;
}

int record_session_open(struct record_session *s)
{
	int err;

	if (s->state != SESSION_NEW)
		return session_fail(s, -EALREADY, "the recording is %s",
				    s->state == SESSION_FAILED ? "failed: free it" :
				    "already open: open it once");
	err = session_open(s);
	s->state = err ? SESSION_FAILED : SESSION_OPEN;
	return err;
}

static int session_start(struct record_session *s)
{
	uint64_t before_attach = mono_ns();
	int err;

	err = s->src_ops->attach(s, s->src);
	if (err)
		return err;
	err = session_open_writer(s, before_attach);
	if (err)
		return session_write_error(s, err);
	s->last_flush_ns = mono_ns();
	s->next_flush_ns = s->last_flush_ns + s->opts.flush_interval_ms * 1000000ull;

	if (s->child.pid) {
		err = launch_release(&s->child);
		if (err) {
			s->failure_code = launch_errno_exit_code(-err);
			return session_fail(s, err, "cannot execute '%s': %s", s->opts.command[0],
					    strerror(-err));
		}
	}
	return 0;
}

int record_session_start(struct record_session *s)
{
	int err;

	switch (s->state) {
	case SESSION_NEW:
		err = record_session_open(s);
		if (err)
			return err;
		break;
	case SESSION_OPEN:
		break;
	case SESSION_STARTED:
		return session_fail(s, -EALREADY, "the recording is already started");
	case SESSION_STOPPED:
		return session_fail(s, -EINVAL, "the recording was stopped: a recording starts "
				    "once; make a new one with bpfrec_record_new()");
	default:
		return session_fail(s, -EINVAL, "the recording failed to open or start: free it");
	}
	err = session_start(s);
	s->state = err ? SESSION_FAILED : SESSION_STARTED;
	return err;
}

/* Not started, or stopped: poll, stop and switch have nothing to work on. */
static int not_started(struct record_session *s, const char *step)
{
	return session_fail(s, -EINVAL, "%s needs a started recording (it is %s)", step,
			    s->state == SESSION_STOPPED ? "stopped" :
			    s->state == SESSION_FAILED ? "failed" : "not started");
}

/* When the rings are to be read next: at the next round, sooner while Python frames are named. */
static uint64_t read_due_ns(const struct record_session *s)
{
	uint64_t due = session_flush_due_ns(s);

	if (s->py && py_frames_read_soon(s->py, mono_ns()) && s->consume_start + PY_READ_NS < due)
		due = s->consume_start + PY_READ_NS;
	return due;
}

int record_session_next_poll_ms(const struct record_session *s)
{
	uint64_t now = mono_ns(), due = read_due_ns(s);

	if (s->state != SESSION_STARTED)
		return -1;
	return now >= due ? 0 : (int)((due - now) / 1000000 + 1);
}

int record_session_switch_output(struct record_session *s)
{
	if (s->state != SESSION_STARTED)
		return not_started(s, "switching output");
	if (!s->w || s->opts.switch_output.mode == ROTATE_NONE)
		return -EINVAL;
	return session_switch_output(s);
}

int record_session_poll(struct record_session *s, int timeout_ms)
{
	struct epoll_event evs[3];
	uint64_t now = mono_ns(), due;
	bool full;
	int err;

	if (s->state != SESSION_STARTED)
		return not_started(s, "poll");
	if (!s->w)	/* a failed --switch-output left no file to write to */
		return -EINVAL;
	due = read_due_ns(s);
	if (now >= due)
		timeout_ms = 0;
	else if (timeout_ms < 0 || (uint64_t)timeout_ms > (due - now) / 1000000 + 1)
		timeout_ms = (int)((due - now) / 1000000 + 1);
	if (epoll_wait(s->epfd, evs, 3, timeout_ms) < 0 && errno != EINTR)
		return session_fail(s, -errno, "epoll_wait: %s", strerror(errno));
	err = session_consume(s, &full);
	if (err)
		return err;
	now = mono_ns();
	if (now >= session_flush_due_ns(s) || batch_bytes(&s->batch) >= s->batch_max) {
		bool timed = now >= s->next_flush_ns;

		err = session_flush_batch(s);
		if (err)
			return session_write_error(s, err);
		if (timed)
			s->next_flush_ns = now + s->opts.flush_interval_ms * 1000000ull;
		err = session_switch_if_due(s, now);
		if (err)
			return err;
		if (session_targets_gone(s))
			s->workload_done = true;
	}
	/*
	 * A round that asked for unwind tables saw a process start: it goes on
	 * mapping (libc after ld.so, then the rest), its reports arrive with
	 * the next rounds, and its stacks stop at each library until that
	 * library's table is in. So rounds come early until no round has asked
	 * for UNWIND_SETTLE_NS. (Asked after the flush: it resets describe_soon,
	 * and the wait that follows is the one to shorten.)
	 */
	if (s->unwind && unwind_bpf_requests(s->unwind) != s->unwind_requests) {
		s->unwind_requests = unwind_bpf_requests(s->unwind);
		s->unwind_settle_ns = now + UNWIND_SETTLE_NS;
	}
	if (now < s->unwind_settle_ns)
		s->describe_soon = true;
	if (s->child.pid && launch_poll(&s->child))
		s->workload_done = true;
	return s->workload_done;
}

/* Nothing new arrives after detaching: drain, a full batch at a time. */
static int drain(struct record_session *s)
{
	bool full;
	int err, werr;

	s->draining = true;
	do {
		err = session_consume(s, &full);
		werr = session_flush_batch(s);
		if (werr)
			return session_write_error(s, werr);
	} while (!err && full);
	if (err)
		return err;
	/* What the tracers summed in BPF (short off-CPU intervals, run-queue waits) goes last. */
	for (size_t i = 0; i < s->nr_tracers; i++) {
		const struct record_tracer *tr = &s->tracers[i];

		if (!tr->ops->collect)
			continue;
		err = tr->ops->collect(tr->t, &s->batch, s->last_time);
		if (err)
			return session_fail(s, err, "cannot read the sums of %s: %s",
					    tr->ops->what, strerror(-err));
		werr = session_flush_batch(s);
		if (werr)
			return session_write_error(s, werr);
	}
	return 0;
}

static int session_stop(struct record_session *s)
{
	int err, err2;

	s->src_ops->detach(s, s->src);
	if (!s->w) {
		/* A failed --switch-output left no file open: nothing to finish. */
		launch_terminate(&s->child);
		s->finished = true;
		return -EIO;
	}
	err = drain(s);
	/* After the last round: the tracers' ends (live allocations, scheduler metrics). */
	if (!err && (err = session_tracers_file_end(s, true)))
		err = session_write_error(s, err);
	if (sideband_lost(s->sideband))
		session_warn(s, "%" PRIu64 " mmap reports were lost (a full side-band buffer): "
			     "processes that exited early may keep unresolved addresses",
			     sideband_lost(s->sideband));
	err2 = perfdata_writer_finish(s->w);
	if (err2 && !err)
		err = session_write_error(s, err2);
	/* The Python symbol files still open: complete now (copied at once, over earlier copies). */
	if (s->py)
		py_frames_flush(s->py);
	/* After the file: copying does not hold up the recording. */
	buildid_cache_flush(s->bcache);
	/* Even after a write error the writer leaves a readable file: keep it. */
	s->finished = true;
	if (s->opts.switch_output.mode != ROTATE_NONE) {
		session_free_writer(s);
		err2 = session_retire_file(s);
		if (err2 && !err)
			err = err2;
	}
	/* A command still running when recording stops is asked to stop too. */
	launch_terminate(&s->child);
	return err;
}

int record_session_stop(struct record_session *s)
{
	if (s->state == SESSION_STOPPED)
		return 0;
	if (s->state != SESSION_STARTED)
		return not_started(s, "stop");
	s->state = SESSION_STOPPED;
	return session_stop(s);
}

void record_session_close(struct record_session *s)
{
	if (!s)
		return;
	if (s->src_opened)
		s->src_ops->detach(s, s->src);
	launch_terminate(&s->child);
	task_tracker_free(s->tracker);
	buildid_cache_free(s->bcache);
	perfdata_writer_free(s->w);
	/* After the tracker: it used what the source lent (the unwind tables). */
	if (s->src_opened && s->src_ops->free)
		s->src_ops->free(s, s->src);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->out_fd >= 0 && !s->pipe && !s->external)
		close(s->out_fd);
	if (s->opts.switch_output.mode != ROTATE_NONE)
		rotator_free(&s->rot);
	pidset_free(&s->pids_seen);
	free(s->final_name);
	/* A failed run leaves no output behind, and gives back the previous one. */
	if (s->created && !s->finished) {
		unlink(s->output);
		if (s->old_path)
			rename(s->old_path, s->output);
	}
	batch_free(&s->batch);
	free(s->old_path);
	free(s->pids);
	free(s->tids);
	free(s->cpus);
	free(s->output);
	free(s);
}

void record_session_status(const struct record_session *s, struct record_status *status)
{
	struct bpfrec_record_stats *st = &status->rec;

	*status = (struct record_status){
		.rec = { .sz = sizeof(status->rec), .exit_code = -1 },
		.alloc = { .sz = sizeof(status->alloc) },
		.offcpu = { .sz = sizeof(status->offcpu) },
	};
	st->samples = s->samples_done;
	st->bytes = s->bytes_done;
	if (s->w) {
		/* After a write error the file is cut back to its last checkpoint. */
		st->samples += s->write_failed ? s->ckpt_samples : perfdata_writer_nr_samples(s->w);
		st->file_bytes = s->write_failed ? s->ckpt_bytes : perfdata_writer_size(s->w);
		st->bytes += st->file_bytes;
	}
	st->file = s->final_name ? s->final_name : s->output;
	st->nr_files = s->opts.switch_output.mode != ROTATE_NONE ? s->rot.nr_files : 0;
	st->nr_processes = s->pids_seen.count;
	st->write_failed = s->write_failed;
	if (s->bcache) {
		const struct buildid_cache_stats *b = buildid_cache_stats(s->bcache);

		st->buildid_copied = b->copied;
		st->buildid_present = b->present;
		st->buildid_too_big = b->too_big;
		st->buildid_failed = b->failed;
		st->buildid_cache_dir = buildid_cache_dir(s->bcache);
	}
	st->seen = s->seen;
	st->cpu_samples = s->write_failed ? s->ckpt_cpu_written : s->cpu_written;
	st->cpu_lost = s->lost;
	st->lost = s->lost;
	session_tracers_stats(s, status);
	st->lost_task = s->lost_task;
	st->workload_done = s->workload_done;
	if (s->child.pid)
		st->exit_code = launch_exit_code(&s->child);
	if (s->src_opened && s->src) {
		struct record_source_counters c = { 0 };

		s->src_ops->counters(s, s->src, &c);
		st->bpf_counted = c.bpf_counted;
		st->bpf_run_ns = c.bpf_run_ns;
		st->bpf_runs = c.bpf_runs;
	}
}

/* The Python frames' counters as the public stats name them (the rest of u stays). */
static void py_stats_public(const struct py_frames_stats *ps, uint64_t cut,
			    struct bpfrec_unwind_stats *u)
{
	u->py_procs = ps->procs;
	u->py_procs_unsupported = ps->procs_unsupported;
	u->py_samples = ps->samples;
	u->py_frames = ps->frames;
	u->py_unknown = ps->unknown;
	u->py_unplaced = ps->unplaced;
	u->py_files = ps->files;
	u->py_filings = ps->filings;
	u->py_reads = ps->reads;
	u->py_cut = cut;
}

void record_session_unwind_status(const struct record_session *s, struct bpfrec_unwind_stats *u)
{
	struct py_frames_stats ps;

	*u = (struct bpfrec_unwind_stats){ .sz = sizeof(*u) };
	if (!s->unwind)
		return;
	unwind_bpf_stats(s->unwind, u);
	u->late_spent = s->late_spent;
	u->late_busy = s->late_busy;
	if (!s->py)
		return;
	py_frames_stats(s->py, &ps);
	py_stats_public(&ps, s->py_cut + session_tracers_py_cut(s), u);
}

int record_session_sched_metrics(struct record_session *s, struct bpfrec_sched_metrics **out)
{
	struct sched_tracer *t = session_tracer(s, &sched_tracer);

	*out = NULL;
	if (!t)
		return -ENOENT;
	return sched_read_metrics(t, out);
}

enum session_state record_session_state(const struct record_session *s)
{
	return s->state;
}

const char *record_session_error(const struct record_session *s)
{
	return s->err;
}

int record_session_poll_fd(const struct record_session *s)
{
	return s->epfd;
}

const char *record_session_output(const struct record_session *s)
{
	return s->output;
}

int record_session_failure_code(const struct record_session *s)
{
	return s->failure_code;
}
