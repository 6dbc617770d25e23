// SPDX-License-Identifier: MIT
/*
 * output.c - where the session's recording goes (session_int.h): a path,
 * stdout, the caller's fd or write callback; the output directory checked
 * before anything is recorded; the file created (an existing one becomes
 * NAME.old, a symlink is never followed); one writer and task tracker per
 * file, each file starting afresh (header, events, kernel maps and the
 * loaded BPF programs' symbols, the targets); write errors turned into one
 * line; --switch-output's rotation.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "perfdata/writer.h"
#include "recorder/bpfprogs.h"
#include "recorder/emit.h"
#include "recorder/pyframes.h"
#include "recorder/rotate.h"
#include "recorder/session_int.h"
#include "recorder/tasks.h"
#include "tools/lib/clock.h"

#define DEFAULT_OUTPUT		"perf.data"

/*
 * Where the recording goes: a path (or "-", stdout), the caller's fd, or
 * the caller's write callback. The caller's fd is a file only when it can
 * be written at offsets: a regular file without O_APPEND.
 */
int session_choose_output(struct record_session *s, const struct record_opts *opts)
{
	struct stat st;
	int flags;

	if (opts->output_write || opts->use_output_fd) {
		if (opts->output && (opts->output_write || opts->use_output_fd))
			return session_fail(s, -EINVAL, "give one output: a path, an fd or a write "
					    "callback");
		if (opts->output_write && opts->use_output_fd)
			return session_fail(s, -EINVAL, "give one output: an fd or a write "
					    "callback, not both");
		s->external = true;
		s->pipe = true;
		if (opts->output_write)
			s->output = strdup("the write callback");
		else if (asprintf(&s->output, "fd %d", opts->output_fd) < 0)
			s->output = NULL;
		if (!s->output)
			return session_fail(s, -ENOMEM, "out of memory");
		if (opts->output_write)
			return 0;
		flags = fcntl(opts->output_fd, F_GETFL);
		if (flags < 0 || fstat(opts->output_fd, &st) < 0)
			return session_fail(s, -EBADF, "output fd %d is not open", opts->output_fd);
		if ((flags & O_ACCMODE) == O_RDONLY)
			return session_fail(s, -EBADF, "output fd %d is not open for writing",
					    opts->output_fd);
		s->pipe = !S_ISREG(st.st_mode) || (flags & O_APPEND);
		s->to_stdout = opts->output_fd == STDOUT_FILENO;
		return 0;
	}
	s->output = strdup(opts->output ? opts->output : DEFAULT_OUTPUT);
	if (!s->output)
		return session_fail(s, -ENOMEM, "out of memory");
	s->pipe = s->to_stdout = !strcmp(s->output, "-");
	return 0;
}

int session_check_output_dir(struct record_session *s)
{
	char *slash = strrchr(s->output, '/');
	char dir[PATH_MAX];
	struct stat st;

	if (s->pipe || s->external)
		return 0;
	if (!*s->output)
		return session_fail(s, -EINVAL, "empty output path: give -o FILE");
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == s->output)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - s->output), s->output);
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return session_fail(s, -ENOENT, "output directory '%s' does not exist: create it "
				    "or choose another -o", dir);
	if (access(dir, W_OK) < 0)
		return session_fail(s, -errno, "output directory '%s' is not writable (%s): "
				    "choose another -o", dir, strerror(errno));
	if (lstat(s->output, &st) == 0 && S_ISDIR(st.st_mode))
		return session_fail(s, -EISDIR, "output '%s' is a directory: choose a file name "
				    "with -o", s->output);
	return 0;
}

/* Create the output: an existing file becomes NAME.old; never follow a symlink. */
int session_create_output(struct record_session *s)
{
	struct stat st;
	int fd;

	if (s->external) {
		s->out_fd = s->opts.output_write ? -1 : s->opts.output_fd;
		/* A file is written from offset 0: what was there before goes. */
		if (!s->pipe && ftruncate(s->out_fd, 0) < 0)
			return session_fail(s, -errno, "cannot truncate the output %s: %s",
					    s->output, strerror(errno));
		return 0;
	}
	if (s->pipe) {
		s->out_fd = STDOUT_FILENO;
		return 0;
	}
	if (lstat(s->output, &st) == 0) {
		if (asprintf(&s->old_path, "%s.old", s->output) < 0) {
			s->old_path = NULL;
			return session_fail(s, -ENOMEM, "out of memory");
		}
		/* rename(2) moves a symlink itself, never its target. */
		if (rename(s->output, s->old_path) < 0) {
			int err = -errno;

			free(s->old_path);
			s->old_path = NULL;
			return session_fail(s, err, "cannot rename '%s' to '%s.old': %s",
					    s->output, s->output, strerror(-err));
		}
	}
	fd = open(s->output, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		int err = -errno;

		/* Give the previous output back. */
		if (s->old_path)
			rename(s->old_path, s->output);
		return session_fail(s, err, "cannot create '%s': %s: choose another -o",
				    s->output, strerror(-err));
	}
	s->out_fd = fd;
	s->created = true;
	return 0;
}

struct ksymbols {
	struct perfdata_writer *w;
	int err;		/* the writer's: it ends the recording */
	size_t nr;
};

static int write_ksymbol(void *ctx, const struct bpfprog_func *f)
{
	struct ksymbols *ks = ctx;

	ks->err = emit_bpf_ksymbol(ks->w, f->addr, f->len, f->name);
	ks->nr += !ks->err;
	return ks->err;
}

/*
 * A KSYMBOL for each function of the BPF programs loaded now, as perf
 * record writes them at its start: perf names the samples that fall in
 * them, ours included (the source loaded them before the file starts, and
 * runs them in every sampled task), instead of showing [unknown]. Programs
 * loaded later stay unnamed. Not being allowed to list them (no
 * CAP_SYS_ADMIN, addresses hidden) costs only those names: a note at -v.
 */
static int write_bpf_ksymbols(struct record_session *s)
{
	struct ksymbols ks = { .w = s->w };
	int err = bpfprogs_for_each_func(write_ksymbol, &ks);
	char msg[256];

	if (ks.err)
		return ks.err;
	if (s->noted_bpf_ksyms || (!err && ks.nr))
		return 0;
	s->noted_bpf_ksyms = true;
	if (err)
		snprintf(msg, sizeof(msg), "cannot list the loaded BPF programs (%s): samples in "
			 "them show as [unknown]", strerror(-err));
	else
		snprintf(msg, sizeof(msg), "no JIT-compiled BPF program to name (the JIT is off, or "
			 "the kernel hides their addresses): samples in them show as [unknown]");
	session_note(s, msg);
	return 0;
}

/*
 * Start the output file (or stream): header, the event, kernel maps and the
 * BPF programs' symbols, a fresh task tracker, and the -p/-t targets
 * described as of describe_time.
 */
int session_open_writer(struct record_session *s, uint64_t describe_time)
{
	struct perfdata_writer_opts wo = {
		.pipe = s->pipe, .argc = s->opts.argc, .argv = s->opts.argv,
		.write = s->opts.output_write, .write_ctx = s->opts.output_write_ctx,
		.compression_level = s->opts.compression_level,
	};
	bool fresh = !s->tracker;
	int err;

	err = perfdata_writer_new(s->out_fd, &wo, &s->w);
	if (!err)
		err = perfdata_writer_add_event(s->w, s->event_name, &s->attr, &s->event_id, 1);
	if (!err)
		err = session_tracers_add_events(s);
	if (!err)
		err = perfdata_writer_start(s->w);
	/* A source without a kernel (a test's) leaves ktext empty: no kernel map. */
	if (!err && s->ktext.end > s->ktext.start) {
		err = kernel_maps_write(s->w, &s->ktext, NULL, NULL);
		if (!err)
			err = write_bpf_ksymbols(s);
	}
	/* After a switch the tracker goes on: what it knows serves the new file too. */
	if (!err && !fresh) {
		task_tracker_new_file(s->tracker);
	} else if (!err) {
		struct task_tracker_opts to = {
			.track_all = s->opts.system_wide,
			.cache = s->bcache,
			.data_maps = s->opts.callgraph == RECORD_CALLGRAPH_DWARF,
		};

		/* A tracer's hooks come first and pass every call on to the unwinder's. */
		session_tracker_hooks(s, &to.hooks, &to.hooks_ctx);
		err = task_tracker_new(&to, &s->tracker);
	}
	/* The command is in scope before it execs: its reports count. */
	if (!err && fresh && s->child.pid && !s->opts.system_wide)
		task_tracker_fork(s->tracker, (uint32_t)s->child.pid, (uint32_t)s->child.pid,
				  (uint32_t)getpid());
	if (!err)
		err = session_describe_targets(s, describe_time);
	if (!err)
		err = perfdata_writer_checkpoint(s->w);
	s->file_start_ns = mono_ns();
	s->ckpt_samples = 0;
	s->ckpt_bytes = s->w ? perfdata_writer_size(s->w) : 0;
	return err;
}

/*
 * Forget the current file's writer; keep its counts. The task tracker
 * lives on into the next file (session_open_writer()) and goes with the
 * session.
 */
void session_free_writer(struct record_session *s)
{
	if (s->w) {
		s->samples_done += s->write_failed ? s->ckpt_samples :
						     perfdata_writer_nr_samples(s->w);
		s->bytes_done += s->write_failed ? s->ckpt_bytes : perfdata_writer_size(s->w);
	}
	perfdata_writer_free(s->w);
	s->w = NULL;
}

/* A failed write ends the recording: say where and why, in one line. */
int session_write_error(struct record_session *s, int err)
{
	const char *zerr = s->w ? perfdata_writer_compression_error(s->w) : NULL;

	s->write_failed = true;
	if (zerr)
		return session_fail(s, err, "compression failed (%s): recording stopped, '%s' "
				    "keeps what was recorded up to its last checkpoint", zerr,
				    s->output);
	if (err == -EPIPE)
		return session_fail(s, err, "the reader of the output pipe went away");
	if (s->pipe)
		return session_fail(s, err, "cannot write to %s: %s",
				    s->to_stdout ? "stdout" : s->output, strerror(-err));
	if (err == -ENOMEM)
		return session_fail(s, err, "out of memory while writing '%s'", s->output);
	return session_fail(s, err, "cannot write '%s': %s: recording stopped, the file keeps "
			    "what was recorded up to its last checkpoint", s->output,
			    strerror(-err));
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* --switch-output: give the finished file its final name. */
int session_retire_file(struct record_session *s)
{
	char name[PATH_MAX];
	int err;

	if (s->out_fd >= 0)
		close(s->out_fd);
	s->out_fd = -1;
	err = rotator_retire(&s->rot, realtime_ns(), name, sizeof(name));
	if (err)
		return session_fail(s, err, "cannot rename '%s' to '%s.<timestamp>': %s",
				    s->output, s->output, strerror(-err));
	free(s->final_name);
	s->final_name = strdup(name);
	if (s->opts.on_switch)
		s->opts.on_switch(s->opts.on_switch_ctx, name);
	return 0;
}

/* Finish the file with everything recorded so far and go on in a new one. */
int session_switch_output(struct record_session *s)
{
	int err, fd;

	/* What exited lately stays known into the new file (its last samples may come there). */
	task_tracker_file_ending(s->tracker);
	err = session_flush_batch(s);
	/* The tracers' end of a file (--alloc: what is still held). */
	if (!err)
		err = session_tracers_file_end(s, false);
	if (!err)
		err = perfdata_writer_finish(s->w);
	if (err)
		return session_write_error(s, err);
	session_free_writer(s);
	/*
	 * The file is whole for its reader once retired (perf report, the
	 * agent's conversion), while its Python processes run on: their
	 * symbol files, as they stand, into the build-id cache first.
	 */
	if (s->py)
		py_frames_flush(s->py);
	err = session_retire_file(s);
	if (err) {
		/* The finished file stays under the output name. */
		s->created = false;
		return err;
	}
	fd = open(s->output, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		s->created = false;
		return session_fail(s, -errno, "cannot create '%s' for --switch-output: %s",
				    s->output, strerror(errno));
	}
	s->out_fd = fd;
	/* Before any sample the new file can get (the last batch may have straggled). */
	err = session_open_writer(s, s->last_time > 1000000000ull ?
				     s->last_time - 1000000000ull : 0);
	if (err) {
		/* A file without a whole header is no use to anyone. */
		session_free_writer(s);
		close(s->out_fd);
		s->out_fd = -1;
		unlink(s->output);
		s->created = false;
		return session_write_error(s, err);
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

int session_switch_if_due(struct record_session *s, uint64_t now)
{
	return switch_due(s, now) ? session_switch_output(s) : 0;
}
