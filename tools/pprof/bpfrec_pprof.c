// SPDX-License-Identifier: MIT
/*
 * bpfrec_pprof.c - the public conversion API (bpfrec/pprof.h) over the
 * reader (perfdata/reader.h) and the converter (convert.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpfrec/pprof.h>

#include "perfdata/reader.h"
#include "tools/lib/errbuf.h"
#include "tools/lib/opts.h"
#include "convert.h"
#include "labels.h"
#include "outfile.h"
#include "pprof_int.h"
#include "profile.h"
#include "ustack.h"

struct bpfrec_pprof {
	struct bpfrec_pprof_opts opts;
	struct pp_convert_opts conv_opts;
	struct pp_label_spec labels[PP_LABELS_MAX];
	char *labels_buf;		/* the labels string, cut up by pp_parse_labels() */
	char *input_name;
	struct perfdata_reader *r;
	struct pp_convert *c;
	bool read;
	bool warned;		/* the converter's warning went to the log */
	char err[512];
};

#define fail(p, e, ...) ERRBUF_FAIL(p, e, __VA_ARGS__)

int bpfrec_pprof_new(const struct bpfrec_pprof_opts *opts, struct bpfrec_pprof **out)
{
	struct bpfrec_pprof *p = calloc(1, sizeof(*p));
	struct pp_convert_opts *c;
	size_t nr = 0;
	int err;

	*out = p;
	if (!p)
		return -ENOMEM;
	if (OPTS_COPY(&p->opts, bpfrec_pprof_opts, opts))
		return ERRBUF_OPTS_REFUSED(p, bpfrec_pprof_opts, opts);
	c = &p->conv_opts;
	c->event = p->opts.event;
	c->pids = p->opts.pids;
	c->nr_pids = p->opts.nr_pids;
	c->tids = p->opts.tids;
	c->nr_tids = p->opts.nr_tids;
	c->comms = p->opts.comms;
	c->nr_comms = p->opts.nr_comms;
	c->no_symbolize = p->opts.no_symbolize;
	c->sym.kallsyms = p->opts.kallsyms;
	c->sym.symfs = p->opts.symfs;
	c->sym.debug_dir = p->opts.debug_dir;
	c->sym.jit_dir = p->opts.jit_dir;
	c->sym.no_inlines = p->opts.no_inlines;
	c->wall_clock_at_end = p->opts.wall_clock_at_end;
	c->group = p->opts.group;
	c->group_ctx = p->opts.group_ctx;
	c->shared_sym = (struct symbolizer *)p->opts.symbols;
	if (p->opts.labels) {
		p->labels_buf = strdup(p->opts.labels);
		if (!p->labels_buf)
			return fail(p, -ENOMEM, "out of memory");
		err = pp_parse_labels(p->labels_buf, p->labels, PP_LABELS_MAX, &nr);
		if (err == -E2BIG)
			return fail(p, err, "too many labels in '%s' (at most %d)", p->opts.labels,
				    PP_LABELS_MAX);
		if (err)
			return fail(p, err, "labels take pid,tid,comm,cpu,trace:FIELD; '%s' has "
				    "something else", p->opts.labels);
		c->labels = p->labels;
		c->nr_labels = nr;
	}
	return 0;
}

static uint64_t realtime_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
}

/*
 * The converter's one warning, to the log once: reading can raise it (no
 * tracing data) and so can building a profile (kallsyms unusable).
 */
static void log_warning(struct bpfrec_pprof *p)
{
	if (p->warned || !p->opts.log || !pp_convert_warning(p->c))
		return;
	p->warned = true;
	p->opts.log(p->opts.log_ctx, BPFREC_LOG_WARN, pp_convert_warning(p->c));
}

static int read_input(struct bpfrec_pprof *p, int fd, const char *name)
{
	struct stat st;
	int err;

	if (p->read)
		return fail(p, -EALREADY, "a conversion reads one input: make a new one");
	p->read = true;
	p->input_name = strdup(p->opts.input_name ? p->opts.input_name : name);
	if (!p->input_name)
		return fail(p, -ENOMEM, "out of memory");
	p->conv_opts.input_name = p->input_name;
	if (fstat(fd, &st))
		return fail(p, -errno, "%s: %s", p->input_name, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return fail(p, -EISDIR, "%s is a directory (perf record --threaded directories "
			    "are not supported; record without --threads)", p->input_name);
	err = perfdata_reader_open(fd, p->input_name, &p->r);
	if (err)
		return fail(p, err, "%s", p->r ? perfdata_reader_error(p->r) : strerror(-err));
	err = pp_convert_new(&p->conv_opts, p->r, &p->c);
	if (err)
		return fail(p, err, "%s", strerror(-err));
	err = pp_convert_read(p->c);
	if (err)
		return fail(p, err, "%s", pp_convert_error(p->c));
	/* Without CLOCK_DATA, date the profile by when the recording ended. */
	if (!p->conv_opts.wall_clock_at_end)
		pp_convert_set_wall_clock(p->c, S_ISREG(st.st_mode) && !perfdata_reader_is_pipe(p->r)
			? (uint64_t)st.st_mtim.tv_sec * 1000000000ULL + (uint64_t)st.st_mtim.tv_nsec
			: realtime_ns());
	/* Events without samples still make profiles, unless split by group. */
	if (!pp_convert_nr_event_profiles(p->c)) {
		if (p->conv_opts.event)
			return fail(p, -ENOENT, "%s has no event '%s'; 'perf evlist -i FILE' lists "
				    "its events", p->input_name, p->conv_opts.event);
		return fail(p, -ENOENT, "%s has no sampling events", p->input_name);
	}
	log_warning(p);
	return 0;
}

int bpfrec_pprof_read_fd(struct bpfrec_pprof *p, int fd)
{
	char name[32];

	snprintf(name, sizeof(name), "fd %d", fd);
	p->err[0] = '\0';
	return read_input(p, fd, name);
}

int bpfrec_pprof_read_path(struct bpfrec_pprof *p, const char *path)
{
	int fd, err;

	p->err[0] = '\0';
	if (p->read)
		return fail(p, -EALREADY, "a conversion reads one input: make a new one");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		p->read = true;
		return fail(p, err, "cannot open %s: %s%s", path, strerror(-err),
			    err == -ENOENT ? " (record one with 'perf record -g' or 'bpfrec "
					     "record')" : "");
	}
	err = read_input(p, fd, path);
	close(fd);
	return err;
}

size_t bpfrec_pprof_nr_profiles(const struct bpfrec_pprof *p)
{
	return p->c && p->read ? pp_convert_nr_profiles(p->c) : 0;
}

const char *bpfrec_pprof_profile_name(const struct bpfrec_pprof *p, size_t i)
{
	return i < bpfrec_pprof_nr_profiles(p) ? pp_convert_profile_name(p->c, i) : NULL;
}

uint64_t bpfrec_pprof_profile_samples(const struct bpfrec_pprof *p, size_t i)
{
	return i < bpfrec_pprof_nr_profiles(p) ? pp_convert_profile_samples(p->c, i) : 0;
}

const char *bpfrec_pprof_profile_event(const struct bpfrec_pprof *p, size_t i)
{
	return i < bpfrec_pprof_nr_profiles(p) ? pp_convert_profile_event(p->c, i) : NULL;
}

const char *bpfrec_pprof_profile_group(const struct bpfrec_pprof *p, size_t i)
{
	return i < bpfrec_pprof_nr_profiles(p) ? pp_convert_profile_group(p->c, i) : NULL;
}

static void fill_info(struct bpfrec_pprof_profile_info *info, const struct pprof_builder *b,
		      uint64_t samples, uint64_t bytes)
{
	struct bpfrec_pprof_profile_info out = {
		.sz = sizeof(out), .samples = samples, .locations = pprof_nr_locations(b),
		.functions = pprof_nr_functions(b), .mappings = pprof_nr_mappings(b),
		.bytes = bytes,
	};

	opts_copy_out(info, &out, sizeof(out));
}

int bpfrec_pprof_build(struct bpfrec_pprof *p, size_t i, struct pprof_builder **out)
{
	int err;

	p->err[0] = '\0';
	*out = NULL;
	if (i >= bpfrec_pprof_nr_profiles(p))
		return fail(p, -EINVAL, "no profile %zu: %s has %zu", i,
			    p->read ? p->input_name : "nothing read yet",
			    bpfrec_pprof_nr_profiles(p));
	err = pp_convert_build(p->c, i, out);
	log_warning(p);
	if (err)
		return fail(p, err, "%s", pp_convert_error(p->c));
	return 0;
}

/* Profile i, gzip-compressed, to fd (written from its current offset). */
static int write_profile(struct bpfrec_pprof *p, size_t i, int fd, const char *what,
			 struct bpfrec_pprof_profile_info *info)
{
	struct pprof_builder *b = NULL;
	off_t start = lseek(fd, 0, SEEK_CUR);
	int err;

	err = bpfrec_pprof_build(p, i, &b);
	if (err)
		return err;
	err = pprof_write_gzip(b, fd);
	if (err)
		fail(p, err, "writing %s: %s", what, strerror(-err));
	else if (info) {
		off_t end = lseek(fd, 0, SEEK_CUR);

		fill_info(info, b, pp_convert_profile_samples(p->c, i),
			  start >= 0 && end >= start ? (uint64_t)(end - start) : 0);
	}
	pprof_builder_free(b);
	return err;
}

int bpfrec_pprof_write_fd(struct bpfrec_pprof *p, size_t i, int fd,
			  struct bpfrec_pprof_profile_info *info)
{
	char what[32];

	snprintf(what, sizeof(what), "fd %d", fd);
	return write_profile(p, i, fd, what, info);
}

/* The profile goes to an anonymous memory file, then to the callback in pieces. */
int bpfrec_pprof_write_callback(struct bpfrec_pprof *p, size_t i, bpfrec_write_fn write_fn,
				void *ctx, struct bpfrec_pprof_profile_info *info)
{
	char buf[65536];
	int fd = memfd_create("bpfrec-pprof", MFD_CLOEXEC), err;
	ssize_t n;

	if (fd < 0)
		return fail(p, -errno, "memfd_create: %s", strerror(errno));
	err = write_profile(p, i, fd, "the profile", info);
	if (!err && lseek(fd, 0, SEEK_SET) < 0)
		err = fail(p, -errno, "lseek: %s", strerror(errno));
	while (!err && (n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = fail(p, -errno, "reading back the profile: %s", strerror(errno));
			break;
		}
		err = write_fn(ctx, buf, (size_t)n);
		if (err)
			fail(p, err, "the write callback failed: %s", strerror(-err));
	}
	close(fd);
	return err;
}

struct path_write {
	struct bpfrec_pprof *p;
	size_t i;
	const char *path;
	struct bpfrec_pprof_profile_info *info;
};

static int fill_path(void *ctx, int fd)
{
	struct path_write *w = ctx;

	return write_profile(w->p, w->i, fd, w->path, w->info);
}

/* Written to a temporary name in the same directory, renamed when complete. */
int bpfrec_pprof_write_path(struct bpfrec_pprof *p, size_t i, const char *path,
			    struct bpfrec_pprof_profile_info *info)
{
	struct path_write w = { p, i, path, info };
	const char *step;
	int err = pp_outfile_write(path, fill_path, &w, &step);

	if (err && step)
		fail(p, err, "%s %s: %s", step, path, strerror(-err));
	return err;
}

int bpfrec_pprof_get_stats(const struct bpfrec_pprof *p, struct bpfrec_pprof_stats *stats)
{
	struct bpfrec_pprof_stats out = { .sz = sizeof(out),
					  .unwind_max_frames = PP_USTACK_MAX_FRAMES };

	if (p->c) {
		const struct pp_convert_stats *st = pp_convert_stats(p->c);

		/* The counters the public struct names as the converter does. */
#define COPY_STAT(f)	out.f = st->f;
		COPY_STAT(samples) COPY_STAT(kept) COPY_STAT(filtered) COPY_STAT(unknown_event)
		COPY_STAT(unknown_pid) COPY_STAT(lost) COPY_STAT(bad_records) COPY_STAT(frames)
		COPY_STAT(stacks) COPY_STAT(unsymbolized) COPY_STAT(unwind_samples)
		COPY_STAT(unwind_frames)
#undef COPY_STAT
		out.unwind_reached_end = st->unwind_stop[UNW_STOP_END];
		out.unwind_no_cfi = st->unwind_stop[UNW_STOP_NO_CFI];
		out.unwind_outside_stack = st->unwind_stop[UNW_STOP_OUTSIDE_STACK];
		out.unwind_no_file = st->unwind_stop[UNW_STOP_NO_FILE];
		out.unwind_depth = st->unwind_stop[UNW_STOP_DEPTH];
		out.unwind_no_stack = st->unwind_no_stack + st->unwind_stop[UNW_STOP_NO_REGS];
		out.unwind_cut = st->unwind_cut;
		out.unwind_files_missing = st->unwind_files_missing;
	}
	return opts_copy_out(stats, &out, sizeof(out));
}

const char *bpfrec_pprof_error(const struct bpfrec_pprof *p)
{
	return p->err;
}

/* The public handle is the symbolizer itself, under a name of the API's. */
int bpfrec_pprof_symbols_new(const struct bpfrec_pprof_opts *opts,
			     struct bpfrec_pprof_symbols **out)
{
	struct bpfrec_pprof_opts o;
	struct symbolizer_opts so;
	struct symbolizer *s;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (OPTS_COPY(&o, bpfrec_pprof_opts, opts))
		return -EINVAL;
	so = (struct symbolizer_opts){ .kallsyms = o.kallsyms, .symfs = o.symfs,
		.debug_dir = o.debug_dir, .jit_dir = o.jit_dir, .no_inlines = o.no_inlines,
		.filed_told = o.symbols_filed_told, .kernel_now = o.symbols_kernel_now };
	err = symbolizer_new(&so, &s);
	if (err)
		return err;
	*out = (struct bpfrec_pprof_symbols *)s;
	return 0;
}

void bpfrec_pprof_symbols_free(struct bpfrec_pprof_symbols *symbols)
{
	if (symbols)
		symbolizer_free((struct symbolizer *)symbols);
}

void bpfrec_pprof_symbols_filed(struct bpfrec_pprof_symbols *symbols, const uint8_t *build_id,
				size_t size)
{
	if (symbols && build_id)
		symbolizer_file_filed((struct symbolizer *)symbols, build_id, size);
}

size_t bpfrec_pprof_symbols_size(const struct bpfrec_pprof_symbols *symbols)
{
	return symbols ? symbolizer_size((const struct symbolizer *)symbols) : 0;
}

void bpfrec_pprof_free(struct bpfrec_pprof *p)
{
	if (!p)
		return;
	pp_convert_free(p->c);
	perfdata_reader_free(p->r);
	free(p->labels_buf);
	free(p->input_name);
	free(p);
}
