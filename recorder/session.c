// SPDX-License-Identifier: MIT
/*
 * session.c - one recording: checks, perf events, the BPF sampler, the
 * launched command and the writer (contract in session.h).
 *
 * Data path: profile.bpf.c puts one compact record per sample (and per
 * fork, exit and exec in scope) into a BPF ring buffer; on_ring_record()
 * copies it into a batch; every flush interval flush_batch() sorts the batch
 * by time and, per record, lets the task tracker describe the process
 * (COMM/MMAP2) and writes the SAMPLE (or FORK/EXIT), then the samples lost
 * meanwhile and a FINISHED_ROUND, then checkpoints the file.
 *
 * Reliability: every sample is written or counted lost (the BPF side counts
 * what it saw, what the ring buffer dropped is written as LOST_SAMPLES); the
 * checkpoint after each round keeps a file killed with SIGKILL readable; a
 * write error stops the recording with the file cut back to its last
 * checkpoint; the first sample of a new process wakes us at once
 * (PROFILE_SAMPLE_NEW_PROC) so its maps are read before it can exit;
 * --switch-output starts each file afresh (header, kernel maps, a new task
 * tracker, so every file describes its own processes).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "perfdata/events.h"
#include "perfdata/writer.h"
#include "recorder/alloc.h"
#include "recorder/batch.h"
#include "recorder/cpulist.h"
#include "recorder/emit.h"
#include "recorder/launch.h"
#include "recorder/percpu.h"
#include "recorder/pidset.h"
#include "recorder/privs.h"
#include "recorder/procmaps.h"
#include "recorder/rotate.h"
#include "recorder/offcpu.h"
#include "recorder/session.h"
#include "recorder/sideband.h"
#include "recorder/sysctl.h"
#include "symbolize/fdlimit.h"
#include "recorder/tasks.h"
#include "recorder/unwind_bpf.h"
#include "symbolize/safeopen.h"

#include "bpf/profile.h"
#include "profile.skel.h"

#define DEFAULT_OUTPUT		"perf.data"
#define DEFAULT_EVENT		"cpu-clock"
#define DEFAULT_FLUSH_MS	100
#define DEFAULT_RING_BYTES	(8u << 20)
#define MAX_RING_BYTES		(1u << 30)
/*
 * Write a round early when a batch holds this much (a slow disk, a storm),
 * or twice the ring buffer when that is more: a batch cut short leaves the
 * task-notice ring unread for that round, and DWARF samples (8 KiB each)
 * would cut nearly every batch at 16 MiB, so FORK/EXIT notices would fall
 * rounds behind and perf would count them out of order.
 */
#define BATCH_MAX_BYTES		(16u << 20)
/* What on_ring_record() returns to make libbpf stop consuming. */
#define BATCH_FULL		(-ECANCELED)
/*
 * A new process is written (and so described from /proc) this soon after
 * the previous round at the earliest: rounds stay far apart compared with
 * how late a record can reach the ring buffer (a stack walk, microseconds),
 * which perf's round-by-round sorting relies on.
 */
#define EARLY_FLUSH_MIN_NS	(5ull * 1000000)
#define SYSFS_BTF		"/sys/kernel/btf/vmlinux"
#define MAX_SAMPLE_RATE		"kernel.perf_event_max_sample_rate"

struct record_session {
	struct record_opts opts;	/* arrays below are our own copies */
	pid_t *pids, *tids;
	int *cpus;
	size_t nr_cpus;
	char *output;
	bool pipe;
	bool external;		/* the caller's fd or write callback: never created, closed or unlinked */
	bool to_stdout;		/* the pipe on fd 1: a launched command's stdout goes to stderr */

	char err[512];
	int failure_code;
	struct privs_facts privs;
	char exe[PATH_MAX];
	struct kernel_text ktext;
	bool warned_maps, noted_map_files;	/* said once per recording */

	/* The event as perf_event_open(2) takes it and as the file describes it. */
	struct perf_event_attr attr;
	const char *event_name;
	uint64_t event_id;
	int *pfds;		/* one per CPU; -1 once owned by a link */
	struct bpf_link **links;	/* per CPU */
	struct bpf_link *task_links[3];

	struct profile *skel;
	struct offcpu_tracer *offcpu;	/* --off-cpu */
	struct alloc_tracer *alloc;	/* --alloc (recorder/alloc.h) */
	struct unwind_bpf *unwind;	/* cfi: the tables of the in-kernel unwinder */
	uint64_t unwind_bytes;		/* their bound; 0 = no cfi walks */
	struct ring_buffer *rb;
	struct sideband *sideband;	/* NULL: processes are described from /proc only */
	int epfd;

	/* Output. */
	int out_fd;
	bool created, finished;
	char *old_path;
	struct perfdata_writer *w;
	struct task_tracker *tracker;
	struct buildid_cache *bcache;	/* NULL with -N or when unusable */

	/* The launched command. */
	char cmd_path[PATH_MAX];
	struct launch child;

	struct batch batch;
	size_t batch_max;	/* bytes: see BATCH_MAX_BYTES */
	int cb_err;
	uint64_t next_flush_ns, last_flush_ns;
	bool describe_soon;	/* a new process arrived: write a round early */
	uint64_t unwind_changes;	/* unwind_bpf_changes() after the last round */
	uint64_t last_time;
	uint64_t seen, lost, lost_task;
	bool started, stopped, workload_done, write_failed;
	struct pidset pids_seen;

	/* --switch-output. */
	struct rotator rot;
	uint64_t file_start_ns;
	uint64_t samples_done, bytes_done;	/* of the files already finished */
	/* The current file at its last checkpoint: what a write error leaves. */
	uint64_t ckpt_samples, ckpt_bytes;
	/* CPU-event samples written (all files), now and at the last checkpoint. */
	uint64_t cpu_written, ckpt_cpu_written;
	char *final_name;			/* the last file's name after stop */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int fail(struct record_session *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct record_session *s, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	return err;
}

static void warn(const struct record_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void warn(const struct record_session *s, const char *fmt, ...)
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
static void note(const struct record_session *s, const char *msg)
{
	if (s->opts.verbose && !s->opts.quiet && s->opts.log)
		s->opts.log(s->opts.log_ctx, RECORD_LOG_INFO, msg);
}

/*
 * Where the recording goes: a path (or "-", stdout), the caller's fd, or
 * the caller's write callback. The caller's fd is a file only when it can
 * be written at offsets: a regular file without O_APPEND.
 */
static int choose_output(struct record_session *s, const struct record_opts *opts)
{
	struct stat st;
	int flags;

	if (opts->output_write || opts->use_output_fd) {
		if (opts->output && (opts->output_write || opts->use_output_fd))
			return fail(s, -EINVAL, "give one output: a path, an fd or a write callback");
		if (opts->output_write && opts->use_output_fd)
			return fail(s, -EINVAL, "give one output: an fd or a write callback, not both");
		s->external = true;
		s->pipe = true;
		if (opts->output_write)
			s->output = strdup("the write callback");
		else if (asprintf(&s->output, "fd %d", opts->output_fd) < 0)
			s->output = NULL;
		if (!s->output)
			return fail(s, -ENOMEM, "out of memory");
		if (opts->output_write)
			return 0;
		flags = fcntl(opts->output_fd, F_GETFL);
		if (flags < 0 || fstat(opts->output_fd, &st) < 0)
			return fail(s, -EBADF, "output fd %d is not open", opts->output_fd);
		if ((flags & O_ACCMODE) == O_RDONLY)
			return fail(s, -EBADF, "output fd %d is not open for writing", opts->output_fd);
		s->pipe = !S_ISREG(st.st_mode) || (flags & O_APPEND);
		s->to_stdout = opts->output_fd == STDOUT_FILENO;
		return 0;
	}
	s->output = strdup(opts->output ? opts->output : DEFAULT_OUTPUT);
	if (!s->output)
		return fail(s, -ENOMEM, "out of memory");
	s->pipe = s->to_stdout = !strcmp(s->output, "-");
	return 0;
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

int record_session_new(const struct record_opts *opts, struct record_session **out)
{
	struct record_session *s = calloc(1, sizeof(*s));
	uint64_t config;
	uint32_t type;
	int err;

	if (!s)
		return -ENOMEM;
	s->opts = *opts;
	s->out_fd = -1;
	s->epfd = -1;
	s->failure_code = 1;
	s->child.go_fd = s->child.err_fd = -1;
	s->pids = dup_array(opts->pids, opts->nr_pids, sizeof(pid_t));
	s->tids = dup_array(opts->tids, opts->nr_tids, sizeof(pid_t));
	s->cpus = dup_array(opts->cpus, opts->nr_cpus, sizeof(int));
	s->nr_cpus = opts->nr_cpus;
	*out = s;
	if ((opts->nr_pids && !s->pids) || (opts->nr_tids && !s->tids) ||
	    (opts->nr_cpus && !s->cpus))
		return fail(s, -ENOMEM, "out of memory");
	err = choose_output(s, opts);
	if (err)
		return err;
	if (!s->opts.flush_interval_ms)
		s->opts.flush_interval_ms = DEFAULT_FLUSH_MS;

	s->event_name = opts->event ? opts->event : DEFAULT_EVENT;
	if (perfdata_event_by_name(s->event_name, &type, &config) ||
	    !samplable_event(type, config))
		return fail(s, -EINVAL,
			    "unknown event '%s': use -e cpu-clock (or cycles, instructions, "
			    "cache-misses, branch-misses... on a machine with a hardware PMU)",
			    s->event_name);
	s->attr.type = type;
	s->attr.config = config;

	if (!opts->system_wide && !opts->nr_pids && !opts->nr_tids && !opts->command)
		return fail(s, -EINVAL, "nothing to record: give a command, -p PID, -t TID or -a");
	if ((opts->nr_pids || opts->nr_tids) && opts->command)
		return fail(s, -EINVAL, "-p/-t and a command exclude each other: use one of them");
	if ((opts->nr_pids || opts->nr_tids) && opts->system_wide)
		return fail(s, -EINVAL, "-p/-t and -a exclude each other: use one of them");
	if (opts->nr_pids && opts->nr_tids)
		return fail(s, -EINVAL, "-p and -t exclude each other: use one of them");
	if (!opts->period && !opts->freq)
		return fail(s, -EINVAL, "the sampling frequency must be at least 1 Hz");
	if (opts->switch_output.mode != ROTATE_NONE && (s->pipe || s->external))
		return fail(s, -EINVAL, "--switch-output needs an output file: it does not work with "
			    "-o -, an fd or a write callback");
	if (opts->switch_max_files && opts->switch_output.mode == ROTATE_NONE)
		return fail(s, -EINVAL, "--switch-max-files needs --switch-output");
	if (opts->switch_output.mode != ROTATE_NONE &&
	    rotator_init(&s->rot, s->output, opts->switch_max_files))
		return fail(s, -ENOMEM, "out of memory");
	if (pidset_init(&s->pids_seen, 0))
		return fail(s, -ENOMEM, "out of memory");
	if (opts->ring_buffer_bytes && (opts->ring_buffer_bytes < 4096 ||
					opts->ring_buffer_bytes > MAX_RING_BYTES ||
					(opts->ring_buffer_bytes & (opts->ring_buffer_bytes - 1))))
		return fail(s, -EINVAL,
			    "ring buffer size %zu is not a power of two between 4 KiB and 1 GiB",
			    opts->ring_buffer_bytes);
	return 0;
}

/* A step refused for want of a privilege: say which one (privs.h). */
static int priv_fail(struct record_session *s, enum priv_step step, int err, const char *what)
{
	char msg[400];

	privs_message(&s->privs, step, err, msg, sizeof(msg));
	if (what)
		return fail(s, err, "%s: %s", what, msg);
	return fail(s, err, "%s", msg);
}

/* 'R', 'S', ... from /proc/PID/stat, or 0 when there is no such task. */
static char task_state(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static bool task_alive(pid_t pid)
{
	char st = task_state(pid);

	return st && st != 'Z' && st != 'X';
}

/* The thread-group id of a task, from /proc/TID/status; 0 when gone. */
static pid_t task_tgid(pid_t tid)
{
	char path[64], line[256];
	pid_t tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/*
 * A -p/-t target whose maps we may not read would be recorded without its
 * user-space symbols: refuse it, as perf does (its per-task events need the
 * same ptrace access).
 */
static int check_target_maps(struct record_session *s, pid_t tid, const char *opt)
{
	pid_t tgid = task_tgid(tid);
	char path[64], what[96];
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	err = -errno;
	if (!privs_is_denial(err))
		return 0;	/* gone meanwhile: that is for the recording to find */
	snprintf(what, sizeof(what), "cannot read %s of %s %d", path, opt, (int)tid);
	return priv_fail(s, PRIV_STEP_MAPS, err, what);
}

static int check_targets(struct record_session *s)
{
	int *online = NULL;
	size_t nr_online = 0;
	int err;

	for (size_t i = 0; i < s->opts.nr_pids; i++) {
		pid_t tgid = task_alive(s->pids[i]) ? task_tgid(s->pids[i]) : 0;

		if (s->pids[i] <= 0 || !tgid)
			return fail(s, -ESRCH, "no such process: -p %d (check the PID with ps)",
				    (int)s->pids[i]);
		s->pids[i] = tgid;	/* a thread id names its process, as in perf */
	}
	for (size_t i = 0; i < s->opts.nr_tids; i++)
		if (s->tids[i] <= 0 || !task_alive(s->tids[i]))
			return fail(s, -ESRCH, "no such thread: -t %d (check the TID with ps -L)",
				    (int)s->tids[i]);
	for (size_t i = 0; i < s->opts.nr_pids + s->opts.nr_tids; i++) {
		bool pid = i < s->opts.nr_pids;

		err = check_target_maps(s, pid ? s->pids[i] : s->tids[i - s->opts.nr_pids],
					pid ? "-p" : "-t");
		if (err)
			return err;
	}

	err = cpulist_online(NULL, &online, &nr_online);
	if (err)
		return fail(s, err, "cannot read the online CPUs: %s", strerror(-err));
	for (size_t i = 0; i < s->nr_cpus; i++) {
		bool ok = false;

		for (size_t j = 0; j < nr_online; j++)
			ok |= online[j] == s->cpus[i];
		if (!ok) {
			fail(s, -EINVAL, "CPU %d is not online: pick -C from the online CPUs",
			     s->cpus[i]);
			free(online);
			return -EINVAL;
		}
	}
	if (!s->cpus) {
		s->cpus = online;
		s->nr_cpus = nr_online;
	} else {
		free(online);
	}

	if (s->opts.command) {
		const char *name = s->opts.command[0];

		err = launch_resolve(name, s->cmd_path, sizeof(s->cmd_path));
		if (err) {
			s->failure_code = launch_errno_exit_code(-err);
			if (err == -ENOENT)
				return fail(s, err, "command not found: '%s' (check the name and PATH)",
					    name);
			return fail(s, err, "cannot execute '%s': %s", name,
				    err == -EACCES ? "not an executable file" : strerror(-err));
		}
	}
	return 0;
}

static int check_output_dir(struct record_session *s)
{
	char *slash = strrchr(s->output, '/');
	char dir[PATH_MAX];
	struct stat st;

	if (s->pipe || s->external)
		return 0;
	if (!*s->output)
		return fail(s, -EINVAL, "empty output path: give -o FILE");
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == s->output)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - s->output), s->output);
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return fail(s, -ENOENT,
			    "output directory '%s' does not exist: create it or choose another -o",
			    dir);
	if (access(dir, W_OK) < 0)
		return fail(s, -errno, "output directory '%s' is not writable (%s): choose another -o",
			    dir, strerror(errno));
	if (lstat(s->output, &st) == 0 && S_ISDIR(st.st_mode))
		return fail(s, -EISDIR, "output '%s' is a directory: choose a file name with -o",
			    s->output);
	return 0;
}

static int open_events(struct record_session *s)
{
	struct perf_event_attr a = { 0 };

	a.type = s->attr.type;
	a.config = s->attr.config;
	a.size = sizeof(a);
	if (s->opts.period) {
		a.sample_period = s->opts.period;
	} else {
		long long rate = sysctl_read(MAX_SAMPLE_RATE, 0);
		uint64_t max = rate > 0 ? (uint64_t)rate : 0;

		if (s->opts.freq == UINT64_MAX)	/* -F max */
			s->opts.freq = max ? max : 4000;
		else if (max && s->opts.freq > max) {
			warn(s, "-F %" PRIu64 " is above kernel.perf_event_max_sample_rate; "
			     "sampling at %" PRIu64 " Hz", s->opts.freq, max);
			s->opts.freq = max;
		}
		a.freq = 1;
		a.sample_freq = s->opts.freq;
	}
	a.disabled = 1;		/* attaching enables it */

	s->pfds = malloc(s->nr_cpus * sizeof(*s->pfds));
	s->links = calloc(s->nr_cpus, sizeof(*s->links));
	if (!s->pfds || !s->links)
		return fail(s, -ENOMEM, "out of memory");
	for (size_t i = 0; i < s->nr_cpus; i++)
		s->pfds[i] = -1;
	for (size_t i = 0; i < s->nr_cpus; i++) {
		int fd = (int)syscall(SYS_perf_event_open, &a, -1, s->cpus[i], -1,
				      PERF_FLAG_FD_CLOEXEC);
		int err = -errno;

		if (fd >= 0) {
			s->pfds[i] = fd;
			continue;
		}
		if (a.type == PERF_TYPE_HARDWARE && (err == -ENOENT || err == -EOPNOTSUPP))
			return fail(s, err,
				    "event '%s' is not available: this machine has no hardware PMU "
				    "(a VM?); use -e cpu-clock", s->event_name);
		if (err == -EINVAL && a.freq)
			return fail(s, err, "cannot sample '%s' at %" PRIu64 " Hz: lower -F",
				    s->event_name, s->opts.freq);
		if (privs_is_denial(err))
			return priv_fail(s, PRIV_STEP_EVENTS, err, NULL);
		return fail(s, err, "cannot open event '%s' on CPU %d: %s", s->event_name,
			    s->cpus[i], strerror(-err));
	}
	if (ioctl(s->pfds[0], PERF_EVENT_IOC_ID, &s->event_id) < 0 || !s->event_id)
		s->event_id = 1;
	return 0;
}

/* The attr the file describes: what perf record would have asked the kernel for. */
static void build_file_attr(struct record_session *s)
{
	struct perf_event_attr *a = &s->attr;

	a->size = PERFDATA_ATTR_SIZE;
	if (s->opts.period) {
		a->sample_period = s->opts.period;
	} else {
		a->freq = 1;
		a->sample_freq = s->opts.freq;
	}
	/*
	 * What perf record puts in a sample and no more, since it is paid
	 * per sample: the CPU only when CPUs are the target (-a, -C), an
	 * IDENTIFIER only when a second event shares the file (one event
	 * takes every sample without an id).
	 */
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	if (s->opts.system_wide || s->opts.nr_cpus)
		a->sample_type |= PERF_SAMPLE_CPU;
	if (s->opts.off_cpu || s->opts.alloc_interval)	/* --alloc */
		a->sample_type |= PERF_SAMPLE_IDENTIFIER;
	if (s->opts.callgraph != RECORD_CALLGRAPH_NONE)
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (s->opts.callgraph == RECORD_CALLGRAPH_DWARF) {
		/* What perf record --call-graph dwarf asks for: perf unwinds these itself. */
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = PROFILE_UREGS_MASK;
		a->sample_stack_user = s->opts.stack_user_size;
		a->mmap_data = 1;	/* the task tracker describes data mappings too */
	}
	a->sample_id_all = 1;
	a->mmap = 1;
	a->comm = 1;
	a->mmap2 = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->disabled = 0;
	a->inherit = !s->opts.system_wide;
	a->exclude_callchain_user = s->opts.callgraph == RECORD_CALLGRAPH_DWARF;
}

/* Create the output: an existing file becomes NAME.old; never follow a symlink. */
static int create_output(struct record_session *s)
{
	struct stat st;
	int fd;

	if (s->external) {
		s->out_fd = s->opts.output_write ? -1 : s->opts.output_fd;
		/* A file is written from offset 0: what was there before goes. */
		if (!s->pipe && ftruncate(s->out_fd, 0) < 0)
			return fail(s, -errno, "cannot truncate the output %s: %s", s->output,
				    strerror(errno));
		return 0;
	}
	if (s->pipe) {
		s->out_fd = STDOUT_FILENO;
		return 0;
	}
	if (lstat(s->output, &st) == 0) {
		if (asprintf(&s->old_path, "%s.old", s->output) < 0) {
			s->old_path = NULL;
			return fail(s, -ENOMEM, "out of memory");
		}
		/* rename(2) moves a symlink itself, never its target. */
		if (rename(s->output, s->old_path) < 0) {
			int err = -errno;

			free(s->old_path);
			s->old_path = NULL;
			return fail(s, err, "cannot rename '%s' to '%s.old': %s", s->output,
				    s->output, strerror(-err));
		}
	}
	fd = open(s->output, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		int err = -errno;

		/* Give the previous output back. */
		if (s->old_path)
			rename(s->old_path, s->output);
		return fail(s, err, "cannot create '%s': %s: choose another -o", s->output,
			    strerror(-err));
	}
	s->out_fd = fd;
	s->created = true;
	return 0;
}

/*
 * The kernel's text range for the kernel map, read once: hidden addresses
 * (kptr_restrict) would leave every kernel frame unresolved and make perf
 * report warn about the file, so they end the recording before it starts.
 */
static int read_kernel_text(struct record_session *s)
{
	int err = kernel_text_read(NULL, &s->ktext);

	if (err == -EPERM)
		return priv_fail(s, PRIV_STEP_KALLSYMS, err, NULL);
	if (err)
		return fail(s, err, "cannot find the kernel's _text and _etext in /proc/kallsyms: %s",
			    strerror(-err));
	return 0;
}

static int on_ring_record(void *ctx, void *data, size_t size);

static int load_bpf(struct record_session *s)
{
	size_t ring = s->opts.ring_buffer_bytes;
	struct epoll_event ev = { .events = EPOLLIN };
	struct profile *skel;
	int nr_cpus, err;

	if (!ring) {
		/*
		 * About 2 MiB per CPU: several flush intervals of -g samples at
		 * -F 4000. A DWARF sample carries its stack copy too: 2 MiB more
		 * per 2 KiB of it (8 KiB: 10 MiB a CPU, a quarter second at
		 * -F 4000).
		 */
		size_t per_cpu = 2u << 20;

		if (s->opts.callgraph == RECORD_CALLGRAPH_DWARF)
			per_cpu += (size_t)(s->opts.stack_user_size + 2047) / 2048 * (2u << 20);
		ring = DEFAULT_RING_BYTES;
		while (ring < s->nr_cpus * per_cpu && ring < MAX_RING_BYTES)
			ring *= 2;
	}
	/* The per-CPU counters (percpu.h) have one value per possible CPU. */
	nr_cpus = libbpf_num_possible_cpus();
	if (nr_cpus <= 0)
		return fail(s, nr_cpus ? nr_cpus : -EINVAL, "cannot count the possible CPUs");

	skel = profile__open();
	if (!skel)
		return fail(s, -errno ? -errno : -EINVAL, "cannot open the BPF sampler: %s",
			    strerror(errno));
	s->skel = skel;
	if (s->opts.nr_pids || (s->opts.command && !s->opts.system_wide))
		skel->rodata->filter_mode = PROFILE_FILTER_TGID;
	else if (s->opts.nr_tids)
		skel->rodata->filter_mode = PROFILE_FILTER_TID;
	else
		skel->rodata->filter_mode = PROFILE_FILTER_ALL;
	skel->rodata->capture_stacks = s->opts.callgraph != RECORD_CALLGRAPH_NONE;
	if (s->opts.callgraph == RECORD_CALLGRAPH_DWARF)
		skel->rodata->stack_user_size = s->opts.stack_user_size;
	skel->rodata->unwind_cfi = s->opts.callgraph == RECORD_CALLGRAPH_CFI;
	/* --off-cpu walks its user stacks with the tables too, unless fp or dwarf is asked for. */
	if (s->opts.callgraph == RECORD_CALLGRAPH_CFI ||
	    ((s->opts.off_cpu || s->opts.alloc_interval) &&	/* --alloc */
	     s->opts.callgraph == RECORD_CALLGRAPH_NONE))
		s->unwind_bytes = s->opts.unwind_table_bytes ? s->opts.unwind_table_bytes :
							       UNWIND_BPF_DEFAULT_BYTES;
	err = unwind_bpf_size_maps(skel->maps.unwind_rows, skel->maps.unwind_procs,
				   s->unwind_bytes);
	if (err)
		return fail(s, err, "cannot size the unwind tables: %s", strerror(-err));
	skel->rodata->wakeup_bytes = ring / 2;
	s->batch_max = 2 * ring > BATCH_MAX_BYTES ? 2 * ring : BATCH_MAX_BYTES;
	err = bpf_map__set_max_entries(skel->maps.events, (uint32_t)ring);
	if (err)
		return fail(s, err, "cannot size the ring buffer: %s", strerror(-err));
	err = profile__load(skel);
	if (privs_is_denial(err))
		return priv_fail(s, PRIV_STEP_BPF, err, NULL);
	if (err == -ENOMEM && s->unwind_bytes)
		return fail(s, err, "cannot allocate %" PRIu64 " MB of unwind tables: lower "
			    "--unwind-tables", s->unwind_bytes >> 20);
	if (err)
		return fail(s, err, "cannot load the BPF sampler: %s (run with -v for the verifier log)",
			    strerror(-err));
	if (s->unwind_bytes) {
		struct unwind_bpf_opts uo = {
			.rows_fd = bpf_map__fd(skel->maps.unwind_rows),
			.procs_fd = bpf_map__fd(skel->maps.unwind_procs),
			.stops_fd = bpf_map__fd(skel->maps.unwind_stops),
			.stats_fd = bpf_map__fd(skel->maps.unwind_stats),
			.bytes = s->unwind_bytes,
		};

		err = unwind_bpf_new(&uo, &s->unwind);
		if (err)
			return fail(s, err, "cannot set up the unwind tables: %s", strerror(-err));
	}

	for (size_t i = 0; i < s->opts.nr_pids; i++) {
		uint32_t key = (uint32_t)s->pids[i];
		uint8_t one = 1;

		bpf_map__update_elem(skel->maps.target_tgids, &key, sizeof(key), &one, 1, BPF_ANY);
	}
	for (size_t i = 0; i < s->opts.nr_tids; i++) {
		uint32_t key = (uint32_t)s->tids[i];
		uint8_t one = 1;

		bpf_map__update_elem(skel->maps.target_tids, &key, sizeof(key), &one, 1, BPF_ANY);
	}

	if (s->opts.off_cpu) {
		struct offcpu_opts oo = {
			.events_fd = bpf_map__fd(skel->maps.events),
			.target_tgids_fd = bpf_map__fd(skel->maps.target_tgids),
			.target_tids_fd = bpf_map__fd(skel->maps.target_tids),
			.filter_mode = skel->rodata->filter_mode,
			.wakeup_bytes = ring / 2,
			.thresh_ns = s->opts.off_cpu_thresh_ns,
			.stack_user_size = skel->rodata->stack_user_size,
			/* unwind_bytes is set exactly when off-CPU walks with the tables too (above). */
			.unwind_cfi = s->unwind_bytes != 0,
			.unwind_rows_fd = bpf_map__fd(skel->maps.unwind_rows),
			.unwind_procs_fd = bpf_map__fd(skel->maps.unwind_procs),
			.unwind_stops_fd = bpf_map__fd(skel->maps.unwind_stops),
			.unwind_stats_fd = bpf_map__fd(skel->maps.unwind_stats),
			.cpu_attr = &s->attr, .cpu_event_id = s->event_id,
		};

		err = offcpu_new(&oo, &s->offcpu);
		if (privs_is_denial(err))
			return priv_fail(s, PRIV_STEP_BPF, err, "--off-cpu");
		if (err)
			return fail(s, err, "cannot load the off-CPU tracer: %s (run with -v for "
				    "the verifier log, or drop --off-cpu)", strerror(-err));
	}

	/* --alloc: its tracer, on the sampler's target and unwind maps. */
	if (s->opts.alloc_interval) {
		struct alloc_opts ao = {
			.interval = s->opts.alloc_interval,
			.events_fd = bpf_map__fd(skel->maps.events),
			.target_tgids_fd = bpf_map__fd(skel->maps.target_tgids),
			.target_tids_fd = bpf_map__fd(skel->maps.target_tids),
			.filter_mode = skel->rodata->filter_mode,
			.ring_bytes = ring,
			.unwind_cfi = s->unwind_bytes != 0,
			.unwind_rows_fd = bpf_map__fd(skel->maps.unwind_rows),
			.unwind_procs_fd = bpf_map__fd(skel->maps.unwind_procs),
			.unwind_stops_fd = bpf_map__fd(skel->maps.unwind_stops),
			.unwind_stats_fd = bpf_map__fd(skel->maps.unwind_stats),
			.cpu_attr = &s->attr, .cpu_event_id = s->event_id,
			.next_hooks = s->unwind ? &unwind_bpf_hooks : NULL,
			.next_hooks_ctx = s->unwind,
		};

		err = alloc_new(&ao, &s->alloc);
		if (privs_is_denial(err))
			return priv_fail(s, PRIV_STEP_BPF, err, "--alloc");
		if (err)
			return fail(s, err, "cannot load the allocation tracer: %s (run with -v for "
				    "the verifier log, or drop --alloc)", strerror(-err));
	}

	s->rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_ring_record, s, NULL);
	if (!s->rb)
		return fail(s, -errno, "cannot map the ring buffer: %s", strerror(errno));
	/* Task notices come in a ring of their own; the batch puts them in time order. */
	err = ring_buffer__add(s->rb, bpf_map__fd(skel->maps.task_events), on_ring_record, s);
	if (err)
		return fail(s, err, "cannot map the task ring buffer: %s", strerror(-err));
	/*
	 * The kernel's mmap and exec reports: without them a process that
	 * exits before its maps are read keeps raw addresses, so go on.
	 */
	err = sideband_new(s->cpus, s->nr_cpus, &s->batch,
			   s->opts.callgraph == RECORD_CALLGRAPH_DWARF, &s->sideband);
	if (err)
		warn(s, "cannot open the mmap side-band events (%s): processes that exit "
		     "quickly may keep unresolved addresses", strerror(-err));
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return fail(s, -errno, "epoll: %s", strerror(errno));
	ev.data.fd = ring_buffer__epoll_fd(s->rb);
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0)
		return fail(s, -errno, "epoll: %s", strerror(errno));
	if (s->alloc) {	/* --alloc */
		ev.data.fd = alloc_epoll_fd(s->alloc);
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0)
			return fail(s, -errno, "epoll: %s", strerror(errno));
	}
	/* A storm of mmaps filling its buffer half way wakes us before the timer. */
	if (s->sideband) {
		ev.data.fd = sideband_epoll_fd(s->sideband);
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0)
			return fail(s, -errno, "epoll: %s", strerror(errno));
	}
	if (s->opts.wake_fd >= 0) {
		ev.data.fd = s->opts.wake_fd;
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->opts.wake_fd, &ev) < 0)
			return fail(s, -errno, "epoll: %s", strerror(errno));
	}
	return 0;
}

/*
 * The build-id cache is a help, not a must: without it (no HOME, not
 * writable: a user without one), a note at -v, as perf says it only in debug.
 */
static void open_buildid_cache(struct record_session *s)
{
	struct buildid_cache_opts o = { .log = s->opts.buildid_cache_log };
	char msg[128];
	int err;

	if (s->opts.no_buildid_cache)
		return;
	err = buildid_cache_new(&o, &s->bcache);
	if (err) {
		snprintf(msg, sizeof(msg), "no build-id cache: %s; -N says so",
			 err == -ENOENT ? "HOME is not set" : strerror(-err));
		note(s, msg);
	}
}

/*
 * Build ahead the unwind tables the targets need first: those of the files
 * -p processes map, and for a launched command its own executable and the
 * C library (the one we run with: the same file in
 * nearly every case, and a table is only used by a process mapping that
 * very file, by build-id). Built at the first sample instead, they would
 * cost the command's first 100-200 ms of stacks (python3's table takes
 * that long). A file that cannot be read is no error: its table is built
 * later, or never.
 */
static void warm_unwind_tables(struct record_session *s)
{
	const char *paths[2] = { s->opts.command ? s->cmd_path : NULL, NULL };
	Dl_info libc;

	if (!s->unwind)
		return;
	if (dladdr((void *)(uintptr_t)fopen, &libc) && libc.dli_fname && libc.dli_fname[0] == '/')
		paths[1] = libc.dli_fname;
	for (size_t i = 0; i < 2; i++) {
		int fd;

		if (!paths[i] || safeopen(-1, paths[i], NULL, &fd, NULL))
			continue;
		unwind_bpf_warm(s->unwind, fd);
		close(fd);
	}
	/* -p: what the running targets map, read now, before sampling starts. */
	for (size_t i = 0; i < s->opts.nr_pids; i++) {
		struct procmaps pm;

		if (procmaps_read(NULL, (uint32_t)s->pids[i], 0, &pm) == 0) {
			for (size_t j = 0; j < pm.nr; j++) {
				const struct procmaps_entry *e = &pm.entries[j];
				int fd;

				if (e->path[0] != '/' || safeopen_mapped(NULL, (uint32_t)s->pids[i],
						e->start, e->end, e->path, e->maj, e->min, e->ino, &fd, NULL))
					continue;
				unwind_bpf_warm(s->unwind, fd);
				close(fd);
			}
		}
		procmaps_release(&pm);
	}
}

int record_session_open(struct record_session *s)
{
	int err;

	/* Events per CPU and the files of every process: more than 1024 fds. */
	fd_limit_raise();
	/* Without these nothing works: say so before anything else. */
	privs_facts_read(&s->privs, s->exe, sizeof(s->exe));
	if (privs_missing(&s->privs, PRIV_STEP_BPF))
		return priv_fail(s, PRIV_STEP_BPF, -EPERM, NULL);
	if (access(SYSFS_BTF, R_OK) < 0)
		return fail(s, -ENOTSUP,
			    "the kernel has no BTF (%s is missing): bpfrec needs a kernel built "
			    "with CONFIG_DEBUG_INFO_BTF=y", SYSFS_BTF);
	err = check_targets(s);
	if (!err)
		err = check_output_dir(s);
	if (!err)
		err = read_kernel_text(s);
	if (!err)
		err = open_events(s);
	if (err)
		return err;
	build_file_attr(s);

	/* Whatever the kernel may refuse comes before the output is touched. */
	err = load_bpf(s);
	if (!err)
		err = create_output(s);
	if (err)
		return err;
	open_buildid_cache(s);
	warm_unwind_tables(s);

	if (s->opts.command) {
		err = launch_fork(&s->child, s->cmd_path, s->opts.command, s->to_stdout);
		if (err)
			return fail(s, err, "cannot fork: %s", strerror(-err));
		if (!s->opts.system_wide) {
			uint32_t key = (uint32_t)s->child.pid;
			uint8_t one = 1;

			err = bpf_map__update_elem(s->skel->maps.target_tgids, &key, sizeof(key),
						   &one, 1, BPF_ANY);
			if (err)
				return fail(s, err, "cannot add pid %d to the targets: %s",
					    (int)key, strerror(-err));
		}
	}
	return 0;
}

static int attach(struct record_session *s)
{
	struct bpf_program *task_progs[3] = {
		s->skel->progs.on_fork, s->skel->progs.on_exit, s->skel->progs.on_exec,
	};

	/* Task events first, so nothing forked after the first sample escapes. */
	for (int i = 0; i < 3; i++) {
		s->task_links[i] = bpf_program__attach(task_progs[i]);
		if (!s->task_links[i] && privs_is_denial(-errno))
			return priv_fail(s, PRIV_STEP_BPF, -errno, NULL);
		if (!s->task_links[i])
			return fail(s, -errno, "cannot attach %s: %s",
				    bpf_program__name(task_progs[i]), strerror(errno));
	}
	if (s->offcpu) {
		int err = offcpu_attach(s->offcpu);

		if (privs_is_denial(err))
			return priv_fail(s, PRIV_STEP_BPF, err, "--off-cpu");
		if (err)
			return fail(s, err, "cannot attach the off-CPU tracer: %s", strerror(-err));
	}
	if (s->alloc) {	/* --alloc */
		int err = alloc_attach(s->alloc);

		if (privs_is_denial(err))
			return priv_fail(s, PRIV_STEP_BPF, err, "--alloc");
		/* The targets' own allocator files are still probed as they are seen. */
		if (err)
			warn(s, "cannot probe the C library's allocator: %s%s; allocations through "
			     "it are not recorded", strerror(-err), err == -EINVAL ? " (another "
			     "tracer's uprobe on the same functions, with a semaphore, makes the "
			     "kernel refuse ours: see dmesg)" : "");
	}
	for (size_t i = 0; i < s->nr_cpus; i++) {
		struct bpf_link *l;

		l = bpf_program__attach_perf_event_opts(s->skel->progs.on_sample, s->pfds[i],
							NULL);
		if (!l && privs_is_denial(-errno))
			return priv_fail(s, PRIV_STEP_BPF, -errno, NULL);
		if (!l)
			return fail(s, -errno, "cannot attach to the event on CPU %d: %s",
				    s->cpus[i], strerror(errno));
		s->links[i] = l;
		s->pfds[i] = -1;	/* the link closes it */
	}
	return 0;
}

/* A failed write ends the recording: say where and why, in one line. */
static int write_error(struct record_session *s, int err)
{
	const char *zerr = s->w ? perfdata_writer_compression_error(s->w) : NULL;

	s->write_failed = true;
	if (zerr)
		return fail(s, err, "compression failed (%s): recording stopped, '%s' keeps what was "
			    "recorded up to its last checkpoint", zerr, s->output);
	if (err == -EPIPE)
		return fail(s, err, "the reader of the output pipe went away");
	if (s->pipe)
		return fail(s, err, "cannot write to %s: %s", s->to_stdout ? "stdout" : s->output,
			    strerror(-err));
	if (err == -ENOMEM)
		return fail(s, err, "out of memory while writing '%s'", s->output);
	return fail(s, err, "cannot write '%s': %s: recording stopped, the file keeps what was "
		    "recorded up to its last checkpoint", s->output, strerror(-err));
}

/*
 * Targets named with -p/-t exist before the first sample: describe them now,
 * as perf does, stamped before attaching so no sample precedes its maps. A
 * target that exits before its first batch is written still resolves.
 */
static int describe_targets(struct record_session *s, uint64_t time)
{
	for (size_t i = 0; i < s->opts.nr_pids + s->opts.nr_tids; i++) {
		pid_t tid = i < s->opts.nr_pids ? s->pids[i] : s->tids[i - s->opts.nr_pids];
		pid_t pid = task_tgid(tid);
		char path[64], comm[32] = "";
		FILE *f;
		int err;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
		f = fopen(path, "re");
		if (!f)
			continue;	/* gone already: its samples name it */
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
		err = task_tracker_see(s->tracker, (uint32_t)pid, (uint32_t)tid, comm, time, 0,
				       NULL, 0);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Start the output file (or stream): header, the event, kernel maps, a fresh
 * task tracker, and the -p/-t targets described as of describe_time.
 */
static int open_writer(struct record_session *s, uint64_t describe_time)
{
	struct perfdata_writer_opts wo = {
		.pipe = s->pipe, .argc = s->opts.argc, .argv = s->opts.argv,
		.write = s->opts.output_write, .write_ctx = s->opts.output_write_ctx,
		.compression_level = s->opts.compression_level,
	};
	int err;

	err = perfdata_writer_new(s->out_fd, &wo, &s->w);
	if (!err)
		err = perfdata_writer_add_event(s->w, s->event_name, &s->attr, &s->event_id, 1);
	if (!err && s->offcpu)
		err = perfdata_writer_add_event(s->w, OFFCPU_EVENT_NAME, offcpu_attr(s->offcpu),
						offcpu_event_id(s->offcpu), 1);
	if (!err && s->alloc)	/* --alloc */
		err = perfdata_writer_add_event(s->w, PERFDATA_ALLOC_EVENT_NAME,
						alloc_attr(s->alloc), alloc_event_id(s->alloc), 1);
	if (!err && s->alloc)
		err = perfdata_writer_add_event(s->w, PERFDATA_INUSE_EVENT_NAME,
						alloc_inuse_attr(s->alloc),
						alloc_inuse_event_id(s->alloc), 1);
	if (!err)
		err = perfdata_writer_start(s->w);
	if (!err)
		err = kernel_maps_write(s->w, &s->ktext, NULL, NULL);
	if (!err) {
		struct task_tracker_opts to = {
			.track_all = s->opts.system_wide,
			.cache = s->bcache,
			.data_maps = s->opts.callgraph == RECORD_CALLGRAPH_DWARF,
			.hooks = s->alloc ? &alloc_tracker_hooks :	/* --alloc: it chains */
				 s->unwind ? &unwind_bpf_hooks : NULL,
			.hooks_ctx = s->alloc ? (void *)s->alloc : (void *)s->unwind,
		};

		err = task_tracker_new(s->w, &to, &s->tracker);
	}
	/* The command is in scope before it execs: its reports count. */
	if (!err && s->child.pid && !s->opts.system_wide)
		task_tracker_fork(s->tracker, (uint32_t)s->child.pid, (uint32_t)s->child.pid,
				  (uint32_t)getpid());
	if (!err)
		err = describe_targets(s, describe_time);
	if (!err)
		err = perfdata_writer_checkpoint(s->w);
	s->file_start_ns = mono_ns();
	s->ckpt_samples = 0;
	s->ckpt_bytes = s->w ? perfdata_writer_size(s->w) : 0;
	return err;
}

/* Forget the current file's writer and tracker; keep its counts. */
static void free_writer(struct record_session *s)
{
	if (s->w) {
		s->samples_done += s->write_failed ? s->ckpt_samples : perfdata_writer_nr_samples(s->w);
		s->bytes_done += s->write_failed ? s->ckpt_bytes : perfdata_writer_size(s->w);
	}
	task_tracker_free(s->tracker);
	s->tracker = NULL;
	perfdata_writer_free(s->w);
	s->w = NULL;
}

int record_session_start(struct record_session *s)
{
	uint64_t before_attach = mono_ns();
	int err;

	err = attach(s);
	if (err)
		return err;
	err = open_writer(s, before_attach);
	if (err)
		return write_error(s, err);
	s->started = true;
	s->last_flush_ns = mono_ns();
	s->next_flush_ns = s->last_flush_ns + s->opts.flush_interval_ms * 1000000ull;

	if (s->child.pid) {
		err = launch_release(&s->child);
		if (err) {
			s->failure_code = launch_errno_exit_code(-err);
			return fail(s, err, "cannot execute '%s': %s", s->opts.command[0],
				    strerror(-err));
		}
	}
	return 0;
}

/* Ring-buffer callback: copy a record into the batch (it is already compact). */
static int on_ring_record(void *ctx, void *data, size_t size)
{
	struct record_session *s = ctx;
	const struct profile_hdr *h = data;
	void *p;

	if (size < sizeof(*h))
		return 0;
	if (h->kind == PROFILE_KIND_SAMPLE) {
		const struct profile_sample *in = data;
		size_t head, used;
		struct emit_ustack u;

		/* Drop anything malformed rather than read past it. */
		if (size < PROFILE_SAMPLE_SIZE(0) || in->nr_kernel > PROFILE_MAX_STACK ||
		    in->nr_user > PROFILE_MAX_STACK ||
		    size < PROFILE_SAMPLE_SIZE(in->nr_kernel + in->nr_user))
			return 0;
		/* A stack copy: keep only its valid part (BPF reserves whole chunks). */
		if (in->flags & PROFILE_SAMPLE_USTACK) {
			head = PROFILE_SAMPLE_SIZE(in->nr_kernel + in->nr_user);
			used = emit_ustack_parse((const char *)data + head, size - head, &u);
			if (!used)
				return 0;
			size = head + used;
		}
	} else if (h->kind == PROFILE_KIND_FORK || h->kind == PROFILE_KIND_EXIT ||
		   h->kind == PROFILE_KIND_EXEC) {
		if (size < sizeof(struct profile_task))
			return 0;
	} else if (!offcpu_record_ok(data, size)) {
		return 0;
	}
	p = batch_add(&s->batch, h->time, size);
	if (!p)
		return s->cb_err = -ENOMEM;
	memcpy(p, data, size);
	if (h->kind == PROFILE_KIND_SAMPLE &&
	    (((const struct profile_sample *)data)->flags & PROFILE_SAMPLE_NEW_PROC))
		s->describe_soon = true;
	/*
	 * libbpf keeps consuming while producers keep producing; a full batch
	 * stops it (this record is already consumed) so it gets written and the
	 * caller gets to check its stop conditions.
	 */
	return batch_bytes(&s->batch) >= s->batch_max ? BATCH_FULL : 0;
}

static int write_sample(struct record_session *s, const struct profile_sample *ps, size_t len)
{
	const uint64_t *frames = (const uint64_t *)ps->frames;
	struct emit_sample e = {
		.pid = ps->hdr.pid, .tid = ps->hdr.tid, .cpu = ps->hdr.cpu,
		.time = ps->hdr.time, .period = ps->period, .id = s->event_id,
		.comm = ps->comm, .comm_len = sizeof(ps->comm),
		.chain = {
			.kernel_mode = ps->flags & PROFILE_SAMPLE_KERNEL,
			.ip = ps->ip,
			.kernel = frames,
			.nr_kernel = ps->nr_kernel,
			.user = frames + ps->nr_kernel,
			.nr_user = ps->nr_user,
		},
	};
	int err;

	if (ps->flags & PROFILE_SAMPLE_USTACK) {
		size_t head = PROFILE_SAMPLE_SIZE(ps->nr_kernel + ps->nr_user);

		/* on_ring_record() checked it; len says how much of it is there. */
		emit_ustack_parse((const char *)ps + head, len - head, &e.ustack);
	}
	err = emit_sample(s->w, s->tracker, &e, false);

	if (!err) {
		pidset_add(&s->pids_seen, ps->hdr.pid);
		s->cpu_written++;
	}
	return err;
}

static int write_task(struct record_session *s, const struct profile_task *t)
{
	struct perfdata_sample_id sid = {
		.pid = t->hdr.pid, .tid = t->hdr.tid, .time = t->hdr.time,
		.id = s->event_id, .cpu = t->hdr.cpu,
	};
	struct perfdata_task task = {
		.pid = t->hdr.pid, .tid = t->hdr.tid, .ppid = t->ppid, .ptid = t->ptid,
		.time = t->hdr.time,
	};

	switch (t->hdr.kind) {
	case PROFILE_KIND_FORK:
		task_tracker_fork(s->tracker, t->hdr.pid, t->hdr.tid, t->ppid);
		return perfdata_write_fork(s->w, &task, &sid);
	case PROFILE_KIND_EXIT:
		/* The last thread takes the whole process with it. */
		task_tracker_exit(s->tracker, t->hdr.pid, t->group_dead ? t->hdr.pid : t->hdr.tid);
		return perfdata_write_exit(s->w, &task, &sid);
	case PROFILE_KIND_EXEC:
		/* A new image: described afresh (COMM with the exec flag) at its next sample. */
		task_tracker_exec(s->tracker, t->hdr.pid);
		return 0;
	}
	return 0;
}

/* A sampler counter (enum profile_stat); 0 when it cannot be read. */
static uint64_t read_stat(struct record_session *s, uint32_t key)
{
	uint64_t sum = 0;

	percpu_sum(bpf_map__fd(s->skel->maps.stats), key, &sum);
	return sum;
}

/*
 * After the BPF rings: every mmap before a sample just read is in the
 * side-band buffer by now, so it goes into the same batch.
 */
static int consume_sideband(struct record_session *s)
{
	return s->sideband ? sideband_consume(s->sideband) : 0;
}

/*
 * What /proc refused the task tracker, said once per recording: maps (the
 * process keeps raw user addresses) as a warning, map_files (build-ids come
 * from the mapped paths instead, as in perf) as a note under -v.
 */
static void warn_denied(struct record_session *s)
{
	struct task_tracker_denied d;
	char msg[400];

	if (!s->tracker)
		return;
	task_tracker_denied(s->tracker, &d);
	if (d.maps && !s->warned_maps) {
		s->warned_maps = true;
		privs_message(&s->privs, PRIV_STEP_MAPS, d.maps_err, msg, sizeof(msg));
		warn(s, "cannot read /proc/%u/maps: %s; its user-space frames (and those of any "
		     "other such process) stay unresolved", d.maps_pid, msg);
	}
	if (d.map_files && !s->noted_map_files && s->opts.verbose && !s->opts.quiet) {
		s->noted_map_files = true;
		privs_message(&s->privs, PRIV_STEP_MAP_FILES, d.map_files_err, msg, sizeof(msg));
		note(s, msg);
	}
}

/* Write the batch as one time-sorted round, with the samples lost meanwhile. */
static int flush_batch(struct record_session *s)
{
	uint64_t lost = read_stat(s, PROFILE_STAT_LOST);
	bool wrote = false;
	int err = 0;

	s->seen = read_stat(s, PROFILE_STAT_SAMPLES);
	s->lost_task = read_stat(s, PROFILE_STAT_LOST_TASK);
	s->describe_soon = false;
	s->last_flush_ns = mono_ns();
	batch_sort(&s->batch);
	for (size_t i = 0; i < s->batch.nr && !err; i++) {
		size_t len;
		const struct profile_hdr *h = batch_get(&s->batch, i, &len);

		if (h->kind == PROFILE_KIND_SAMPLE)
			err = write_sample(s, (const struct profile_sample *)h, len);
		else if (sideband_record_ok(h, len))
			err = sideband_apply(h, s->tracker);
		else if (s->offcpu && offcpu_record_ok(h, len))
			err = offcpu_write(s->offcpu, s->w, s->tracker, h, len);
		else
			err = write_task(s, (const struct profile_task *)h);
		if (h->time > s->last_time)
			s->last_time = h->time;
		wrote = true;
	}
	if (!err && lost > s->lost) {
		struct perfdata_sample_id sid = {
			.time = s->last_time, .id = s->event_id,
		};

		err = perfdata_write_lost_samples(s->w, lost - s->lost, &sid);
		s->lost = lost;
		wrote = true;
	}
	if (!err && s->alloc)	/* --alloc: its own batch, in this round */
		err = alloc_flush(s->alloc, s->w, s->tracker, &s->last_time);
	if (!err && s->offcpu) {
		uint64_t before = offcpu_lost(s->offcpu);

		err = offcpu_write_lost(s->offcpu, s->w, s->last_time);
		wrote |= offcpu_lost(s->offcpu) != before;
	}
	/* Tasks that exited before this round have had their last samples. */
	task_tracker_round_end(s->tracker);
	if (!err && wrote)
		err = perfdata_write_finished_round(s->w);
	if (!err)
		err = perfdata_writer_checkpoint(s->w);
	if (!err) {
		s->ckpt_samples = perfdata_writer_nr_samples(s->w);
		s->ckpt_bytes = perfdata_writer_size(s->w);
		s->ckpt_cpu_written = s->cpu_written;
	}
	batch_clear(&s->batch);
	warn_denied(s);
	return err;
}

static bool targets_gone(struct record_session *s)
{
	for (size_t i = 0; i < s->opts.nr_pids; i++)
		if (task_alive(s->pids[i]))
			return false;
	for (size_t i = 0; i < s->opts.nr_tids; i++)
		if (task_alive(s->tids[i]))
			return false;
	return s->opts.nr_pids || s->opts.nr_tids;
}

/* When the next round is due: the flush interval, or soon for a new process. */
static uint64_t flush_due_ns(const struct record_session *s)
{
	uint64_t early = s->last_flush_ns + EARLY_FLUSH_MIN_NS;

	return s->describe_soon && early < s->next_flush_ns ? early : s->next_flush_ns;
}

int record_session_next_poll_ms(const struct record_session *s)
{
	uint64_t now = mono_ns(), due = flush_due_ns(s);

	if (!s->started || s->stopped)
		return -1;
	return now >= due ? 0 : (int)((due - now) / 1000000 + 1);
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* --switch-output: give the finished file its final name. */
static int retire_file(struct record_session *s)
{
	char name[PATH_MAX];
	int err;

	if (s->out_fd >= 0)
		close(s->out_fd);
	s->out_fd = -1;
	err = rotator_retire(&s->rot, realtime_ns(), name, sizeof(name));
	if (err)
		return fail(s, err, "cannot rename '%s' to '%s.<timestamp>': %s", s->output,
			    s->output, strerror(-err));
	free(s->final_name);
	s->final_name = strdup(name);
	if (s->opts.on_switch)
		s->opts.on_switch(s->opts.on_switch_ctx, name);
	return 0;
}

/* Finish the file with everything recorded so far and go on in a new one. */
static int switch_output(struct record_session *s)
{
	int err, fd;

	err = flush_batch(s);
	if (!err && s->alloc)	/* --alloc: what is still held, at the file's end */
		err = alloc_write_inuse(s->alloc, s->w, s->tracker, &s->last_time);
	if (!err)
		err = perfdata_writer_finish(s->w);
	if (err)
		return write_error(s, err);
	free_writer(s);
	err = retire_file(s);
	if (err) {
		/* The finished file stays under the output name. */
		s->created = false;
		return err;
	}
	fd = open(s->output, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		s->created = false;
		return fail(s, -errno, "cannot create '%s' for --switch-output: %s", s->output,
			    strerror(errno));
	}
	s->out_fd = fd;
	/* Before any sample the new file can get (the last batch may have straggled). */
	err = open_writer(s, s->last_time > 1000000000ull ? s->last_time - 1000000000ull : 0);
	if (err) {
		/* A file without a whole header is no use to anyone. */
		free_writer(s);
		close(s->out_fd);
		s->out_fd = -1;
		unlink(s->output);
		s->created = false;
		return write_error(s, err);
	}
	return 0;
}

static bool switch_due(const struct record_session *s, uint64_t now)
{
	switch (s->opts.switch_output.mode) {
	case ROTATE_SIZE:
		return perfdata_writer_size(s->w) >= s->opts.switch_output.bytes;
	case ROTATE_TIME:
		return now - s->file_start_ns >= s->opts.switch_output.ns;
	default:
		return false;
	}
}

int record_session_switch_output(struct record_session *s)
{
	if (!s->started || s->stopped || !s->w || s->opts.switch_output.mode == ROTATE_NONE)
		return -EINVAL;
	return switch_output(s);
}

int record_session_poll(struct record_session *s, int timeout_ms)
{
	struct epoll_event evs[3];
	uint64_t now = mono_ns(), due;
	int err;

	if (!s->started || s->stopped || !s->w)
		return -EINVAL;
	due = flush_due_ns(s);
	if (now >= due)
		timeout_ms = 0;
	else if (timeout_ms < 0 || (uint64_t)timeout_ms > (due - now) / 1000000 + 1)
		timeout_ms = (int)((due - now) / 1000000 + 1);
	if (epoll_wait(s->epfd, evs, 3, timeout_ms) < 0 && errno != EINTR)
		return fail(s, -errno, "epoll_wait: %s", strerror(errno));
	err = ring_buffer__consume(s->rb);
	if (s->cb_err)
		return fail(s, s->cb_err, "cannot keep up: %s", strerror(-s->cb_err));
	if (err < 0 && err != BATCH_FULL)
		return fail(s, err, "cannot read the ring buffer: %s", strerror(-err));
	err = consume_sideband(s);
	if (!err && s->alloc)	/* --alloc */
		err = alloc_consume(s->alloc);
	if (err)
		return fail(s, err, "cannot keep up: %s", strerror(-err));
	/*
	 * The last round gave a process new unwind tables: it is probably
	 * starting up and mapping more (libc after ld.so, then the rest), and
	 * its samples walk by frame pointers until the tables follow. So the
	 * next round comes early too, until the mappings settle.
	 */
	if (s->unwind && unwind_bpf_changes(s->unwind) != s->unwind_changes) {
		s->unwind_changes = unwind_bpf_changes(s->unwind);
		s->describe_soon = true;
	}

	now = mono_ns();
	if (now >= flush_due_ns(s) || batch_bytes(&s->batch) >= s->batch_max) {
		bool timed = now >= s->next_flush_ns;

		err = flush_batch(s);
		if (err)
			return write_error(s, err);
		if (timed)
			s->next_flush_ns = now + s->opts.flush_interval_ms * 1000000ull;
		if (switch_due(s, now)) {
			err = switch_output(s);
			if (err)
				return err;
		}
		if (targets_gone(s))
			s->workload_done = true;
	}
	if (s->child.pid && launch_poll(&s->child))
		s->workload_done = true;
	return s->workload_done;
}

static void detach(struct record_session *s)
{
	for (size_t i = 0; s->links && i < s->nr_cpus; i++) {
		bpf_link__destroy(s->links[i]);
		s->links[i] = NULL;
	}
	for (int i = 0; i < 3; i++) {
		bpf_link__destroy(s->task_links[i]);
		s->task_links[i] = NULL;
	}
	if (s->offcpu)
		offcpu_detach(s->offcpu);
	if (s->alloc)	/* --alloc */
		alloc_detach(s->alloc);
}

int record_session_stop(struct record_session *s)
{
	int n, err = 0, err2;

	if (!s->started || s->stopped)
		return -EINVAL;
	s->stopped = true;
	detach(s);
	if (!s->w) {
		/* A failed --switch-output left no file open: nothing to finish. */
		launch_terminate(&s->child);
		s->finished = true;
		return -EIO;
	}
	/* Nothing new arrives now: drain, a full batch at a time. */
	do {
		n = ring_buffer__consume(s->rb);
		if (s->cb_err)
			n = s->cb_err;
		if (n >= 0 || n == BATCH_FULL) {
			err = consume_sideband(s);
			if (!err && s->alloc)	/* --alloc */
				err = alloc_consume(s->alloc);
			if (err)
				n = err;
		}
		err = flush_batch(s);
		if (err) {
			write_error(s, err);
			break;
		}
		if (n < 0 && n != BATCH_FULL) {
			err = fail(s, n, "cannot read the ring buffer: %s", strerror(-n));
			break;
		}
	} while (n == BATCH_FULL);
	/* Short off-CPU intervals were summed in BPF: they go last. */
	if (!err && s->offcpu) {
		err = offcpu_collect(s->offcpu, &s->batch, s->last_time);
		if (err)
			fail(s, err, "cannot read the off-CPU sums: %s", strerror(-err));
		else if ((err = flush_batch(s)))
			write_error(s, err);
	}
	/* --alloc: the sampled allocations still live. */
	if (!err && s->alloc && (err = alloc_write_inuse(s->alloc, s->w, s->tracker, &s->last_time)))
		write_error(s, err);
	if (sideband_lost(s->sideband))
		warn(s, "%" PRIu64 " mmap reports were lost (a full side-band buffer): processes "
		     "that exited early may keep unresolved addresses", sideband_lost(s->sideband));
	err2 = perfdata_writer_finish(s->w);
	if (err2 && !err)
		err = write_error(s, err2);
	/* After the file: copying does not hold up the recording. */
	buildid_cache_flush(s->bcache);
	/* Even after a write error the writer leaves a readable file: keep it. */
	s->finished = true;
	if (s->opts.switch_output.mode != ROTATE_NONE) {
		free_writer(s);
		err2 = retire_file(s);
		if (err2 && !err)
			err = err2;
	}
	/* A command still running when recording stops is asked to stop too. */
	launch_terminate(&s->child);
	return err;
}

void record_session_close(struct record_session *s)
{
	if (!s)
		return;
	detach(s);
	launch_terminate(&s->child);
	for (size_t i = 0; s->pfds && i < s->nr_cpus; i++)
		if (s->pfds[i] >= 0)
			close(s->pfds[i]);
	task_tracker_free(s->tracker);
	buildid_cache_free(s->bcache);
	perfdata_writer_free(s->w);
	ring_buffer__free(s->rb);
	sideband_free(s->sideband);
	offcpu_free(s->offcpu);
	alloc_free(s->alloc);	/* --alloc */
	unwind_bpf_free(s->unwind);
	profile__destroy(s->skel);
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
	free(s->pfds);
	free(s->links);
	free(s->pids);
	free(s->tids);
	free(s->cpus);
	free(s->output);
	free(s);
}

void record_session_status(const struct record_session *s, struct bpfrec_record_stats *st)
{
	*st = (struct bpfrec_record_stats){ .sz = sizeof(*st), .exit_code = -1 };
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
	st->lost = s->lost + offcpu_lost(s->offcpu);
	st->lost_task = s->lost_task;
	st->workload_done = s->workload_done;
	if (s->unwind)
		unwind_bpf_stats(s->unwind, &st->unwind);
	alloc_stats(s->alloc, &st->alloc);	/* --alloc */
	st->lost += st->alloc.lost;
	if (s->child.pid)
		st->exit_code = launch_exit_code(&s->child);
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
