// SPDX-License-Identifier: MIT
/* bpfrec_perfdata.c - the public reader (bpfrec/perfdata.h) over reader.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpfrec/perfdata.h>

#include "perfdata/describe.h"
#include "perfdata/events.h"
#include "perfdata/reader.h"
#include "tools/lib/opts.h"

/* The public numbers are perf's: the same as the internal ones. */
_Static_assert(BPFREC_PERFDATA_RECORD_HEADER_ATTR == PERFDATA_RECORD_HEADER_ATTR, "attr");
_Static_assert(BPFREC_PERFDATA_RECORD_HEADER_BUILD_ID == PERFDATA_RECORD_HEADER_BUILD_ID, "bid");
_Static_assert(BPFREC_PERFDATA_RECORD_FINISHED_ROUND == PERFDATA_RECORD_FINISHED_ROUND, "round");
_Static_assert(BPFREC_PERFDATA_RECORD_HEADER_FEATURE == PERFDATA_RECORD_HEADER_FEATURE, "feat");
_Static_assert(BPFREC_PERFDATA_RECORD_COMPRESSED == PERFDATA_RECORD_COMPRESSED, "zstd");
_Static_assert((int)BPFREC_PERFDATA_FEAT_BUILD_ID == (int)PERFDATA_FEAT_BUILD_ID, "build_id");
_Static_assert((int)BPFREC_PERFDATA_FEAT_HOSTNAME == (int)PERFDATA_FEAT_HOSTNAME, "hostname");
_Static_assert((int)BPFREC_PERFDATA_FEAT_OSRELEASE == (int)PERFDATA_FEAT_OSRELEASE, "osrelease");
_Static_assert((int)BPFREC_PERFDATA_FEAT_CMDLINE == (int)PERFDATA_FEAT_CMDLINE, "cmdline");
_Static_assert((int)BPFREC_PERFDATA_FEAT_BITS == (int)PERFDATA_FEAT_BITS, "bits");

/*
 * The public record structs name the decoder's fields again (and add sz, so
 * that they can grow): each list below names the fields the two share, and
 * COPY_FIELD copies one of them from the decoder's `in` to the public `o`.
 */
#define COPY_FIELD(f)	o.f = in.f;
#define SAMPLE_FIELDS(X)							\
	X(misc) X(id) X(ip) X(pid) X(tid) X(time) X(addr) X(stream_id) X(cpu)	\
	X(period) X(nr_callchain) X(callchain) X(raw_size) X(raw) X(regs_abi)	\
	X(nr_regs) X(regs) X(stack_size) X(stack_dyn_size) X(stack)
#define SAMPLE_ID_FIELDS(X)	X(pid) X(tid) X(time) X(id) X(stream_id) X(cpu)
#define MMAP_FIELDS(X)								\
	X(misc) X(pid) X(tid) X(start) X(len) X(pgoff) X(build_id_size) X(maj)	\
	X(min) X(ino) X(ino_generation) X(prot) X(flags) X(filename)
#define COMM_FIELDS(X)		X(pid) X(tid) X(exec) X(comm)
#define TASK_FIELDS(X)		X(pid) X(ppid) X(tid) X(ptid) X(time)
#define KSYMBOL_FIELDS(X)	X(addr) X(len) X(ksym_type) X(flags) X(name)

struct bpfrec_perfdata {
	struct perfdata_reader *r;
	int own_fd;		/* opened by open_path: closed by free; else -1 */
	char err[256];
};

int bpfrec_perfdata_open_fd(int fd, const char *name, struct bpfrec_perfdata **out)
{
	struct bpfrec_perfdata *p = calloc(1, sizeof(*p));
	int err;

	*out = p;
	if (!p)
		return -ENOMEM;
	p->own_fd = -1;
	err = perfdata_reader_open(fd, name ? name : "perf.data", &p->r);
	if (err && !p->r)
		snprintf(p->err, sizeof(p->err), "%s", strerror(-err));
	return err;
}

int bpfrec_perfdata_open_path(const char *path, struct bpfrec_perfdata **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0) {
		err = -errno;
		*out = calloc(1, sizeof(**out));
		if (!*out)
			return -ENOMEM;
		(*out)->own_fd = -1;
		snprintf((*out)->err, sizeof((*out)->err), "cannot open %s: %s", path,
			 strerror(-err));
		return err;
	}
	err = bpfrec_perfdata_open_fd(fd, path, out);
	if (*out)
		(*out)->own_fd = fd;
	else
		close(fd);
	return err;
}

void bpfrec_perfdata_free(struct bpfrec_perfdata *p)
{
	if (!p)
		return;
	perfdata_reader_free(p->r);
	if (p->own_fd >= 0)
		close(p->own_fd);
	free(p);
}

const char *bpfrec_perfdata_error(const struct bpfrec_perfdata *p)
{
	return p->err[0] || !p->r ? p->err : perfdata_reader_error(p->r);
}

bool bpfrec_perfdata_is_pipe(const struct bpfrec_perfdata *p)
{
	return p->r && perfdata_reader_is_pipe(p->r);
}

int bpfrec_perfdata_next(struct bpfrec_perfdata *p, const struct perf_event_header **rec)
{
	if (!p->r)
		return -EINVAL;
	return perfdata_reader_next(p->r, rec);
}

uint64_t bpfrec_perfdata_offset(const struct bpfrec_perfdata *p)
{
	return p->r ? perfdata_reader_offset(p->r) : 0;
}

bool bpfrec_perfdata_in_compressed(const struct bpfrec_perfdata *p)
{
	return p->r && perfdata_reader_in_compressed(p->r);
}

size_t bpfrec_perfdata_nr_events(const struct bpfrec_perfdata *p)
{
	return p->r ? perfdata_reader_nr_events(p->r) : 0;
}

const char *bpfrec_perfdata_event_name(const struct bpfrec_perfdata *p, size_t i)
{
	return i < bpfrec_perfdata_nr_events(p) ? perfdata_reader_event(p->r, i)->name : NULL;
}

const struct perf_event_attr *bpfrec_perfdata_event_attr(const struct bpfrec_perfdata *p,
							 size_t i)
{
	return i < bpfrec_perfdata_nr_events(p) ? &perfdata_reader_event(p->r, i)->attr : NULL;
}

int bpfrec_perfdata_parse_sample(const struct bpfrec_perfdata *p,
				 const struct perf_event_header *rec,
				 struct bpfrec_perfdata_sample *out)
{
	struct bpfrec_perfdata_sample o = { .sz = sizeof(o), .event = -1 };
	const struct perfdata_event *ev = NULL;
	struct perfdata_sample in;
	int err;

	if (!p->r || rec->type != PERF_RECORD_SAMPLE || out->sz < sizeof(size_t))
		return -EINVAL;
	err = perfdata_reader_parse_sample(p->r, rec, &in, &ev);
	if (err == -ENOENT && p->r && perfdata_reader_nr_events(p->r)) {
		/* No event has its id: say which id that was. */
		perfdata_decode_sample_event_id(rec, perfdata_reader_event(p->r, 0)->attr.sample_type,
						&o.id);
		opts_copy_out(out, &o, sizeof(o));
		return err;
	}
	if (err)
		return err;
	for (size_t i = 0; ev && i < perfdata_reader_nr_events(p->r); i++)
		if (perfdata_reader_event(p->r, i) == ev)
			o.event = (int)i;
	SAMPLE_FIELDS(COPY_FIELD)
	return opts_copy_out(out, &o, sizeof(o));
}

const char *bpfrec_perfdata_feature_string(const struct bpfrec_perfdata *p, unsigned int feature)
{
	return p->r ? perfdata_reader_feature_string(p->r, feature) : NULL;
}

const uint64_t *bpfrec_perfdata_event_ids(const struct bpfrec_perfdata *p, size_t i, size_t *nr)
{
	const struct perfdata_event *ev;

	*nr = 0;
	if (i >= bpfrec_perfdata_nr_events(p))
		return NULL;
	ev = perfdata_reader_event(p->r, i);
	*nr = ev->nr_ids;
	return ev->nr_ids ? ev->ids : NULL;
}

int bpfrec_perfdata_get_header(const struct bpfrec_perfdata *p, struct bpfrec_perfdata_header *out)
{
	const struct perfdata_file_header *h = p->r ? perfdata_reader_file_header(p->r) : NULL;
	struct bpfrec_perfdata_header o = { .sz = sizeof(o) };

	if (!h)
		return -EINVAL;
	o.size = h->size;
	o.attr_size = h->attr_size;
	o.attrs_offset = h->attrs.offset;
	o.attrs_size = h->attrs.size;
	o.data_offset = h->data.offset;
	o.data_size = h->data.size;
	o.event_types_offset = h->event_types.offset;
	o.event_types_size = h->event_types.size;
	memcpy(o.features, h->features, sizeof(o.features));
	return opts_copy_out(out, &o, sizeof(o));
}

int bpfrec_perfdata_parse_sample_id(const struct bpfrec_perfdata *p,
				    const struct perf_event_header *rec,
				    struct bpfrec_perfdata_sample_id *out)
{
	struct bpfrec_perfdata_sample_id o = { .sz = sizeof(o) };
	struct perfdata_sample_id in;
	int err;

	if (!p->r)
		return -EINVAL;
	err = perfdata_reader_parse_sample_id(p->r, rec, &in);
	if (err)
		return err;
	SAMPLE_ID_FIELDS(COPY_FIELD)
	return opts_copy_out(out, &o, sizeof(o));
}

int bpfrec_perfdata_parse_mmap(const struct perf_event_header *rec, struct bpfrec_perfdata_mmap *out)
{
	struct bpfrec_perfdata_mmap o = { .sz = sizeof(o) };
	struct perfdata_mmap in;
	int err;

	if (rec->type == PERF_RECORD_MMAP)
		err = perfdata_decode_mmap(rec, &in);
	else if (rec->type == PERF_RECORD_MMAP2)
		err = perfdata_decode_mmap2(rec, &in);
	else
		err = -EINVAL;
	if (err)
		return err;
	MMAP_FIELDS(COPY_FIELD)
	memcpy(o.build_id, in.build_id, sizeof(o.build_id));
	return opts_copy_out(out, &o, sizeof(o));
}

int bpfrec_perfdata_parse_comm(const struct perf_event_header *rec, struct bpfrec_perfdata_comm *out)
{
	struct bpfrec_perfdata_comm o = { .sz = sizeof(o) };
	struct perfdata_comm in;
	int err = perfdata_decode_comm(rec, &in);

	if (err)
		return err;
	COMM_FIELDS(COPY_FIELD)
	return opts_copy_out(out, &o, sizeof(o));
}

int bpfrec_perfdata_parse_task(const struct perf_event_header *rec, struct bpfrec_perfdata_task *out)
{
	struct bpfrec_perfdata_task o = { .sz = sizeof(o) };
	struct perfdata_task in;
	int err = perfdata_decode_task(rec, &in);

	if (err)
		return err;
	TASK_FIELDS(COPY_FIELD)
	return opts_copy_out(out, &o, sizeof(o));
}

int bpfrec_perfdata_parse_ksymbol(const struct perf_event_header *rec,
				  struct bpfrec_perfdata_ksymbol *out)
{
	struct bpfrec_perfdata_ksymbol o = { .sz = sizeof(o) };
	struct perfdata_ksymbol in;
	int err = perfdata_decode_ksymbol(rec, &in);

	if (err)
		return err;
	KSYMBOL_FIELDS(COPY_FIELD)
	return opts_copy_out(out, &o, sizeof(o));
}

int bpfrec_perfdata_parse_lost(const struct perf_event_header *rec, uint64_t *id, uint64_t *lost)
{
	return perfdata_decode_lost(rec, id, lost);
}

static int build_id_out(const struct perfdata_build_id *b, size_t name_len,
			struct bpfrec_perfdata_build_id *out)
{
	struct bpfrec_perfdata_build_id o = { .sz = sizeof(o) };

	o.cpumode = b->cpumode;
	o.pid = b->pid;
	o.size = b->size;
	memcpy(o.id, b->id, sizeof(o.id));
	o.filename = b->filename;
	o.filename_len = name_len;
	return opts_copy_out(out, &o, sizeof(o));
}

int bpfrec_perfdata_parse_build_id(const struct perf_event_header *rec,
				   struct bpfrec_perfdata_build_id *out)
{
	struct perfdata_build_id b;
	size_t name_len;

	if (rec->type != PERFDATA_RECORD_HEADER_BUILD_ID ||
	    perfdata_decode_build_id(rec, rec->size, &b, &name_len))
		return -EINVAL;
	return build_id_out(&b, name_len, out);
}

struct build_id_walk {
	bpfrec_perfdata_build_id_fn fn;
	void *ctx;
};

static int each_build_id(const struct perfdata_build_id *b, void *ctx)
{
	struct build_id_walk *w = ctx;
	BPFREC_OPTS(bpfrec_perfdata_build_id, o);

	build_id_out(b, strlen(b->filename), &o);
	return w->fn(w->ctx, &o);
}

int bpfrec_perfdata_for_each_build_id(const struct bpfrec_perfdata *p,
				      bpfrec_perfdata_build_id_fn fn, void *ctx)
{
	struct build_id_walk w = { fn, ctx };

	if (!p->r)
		return -EINVAL;
	return perfdata_reader_for_each_build_id(p->r, each_build_id, &w);
}

const void *bpfrec_perfdata_feature(const struct bpfrec_perfdata *p, unsigned int feature,
				    size_t *size)
{
	if (!p->r) {
		*size = 0;
		return NULL;
	}
	return perfdata_reader_feature(p->r, feature, size);
}

int bpfrec_perfdata_describe_feature(const struct bpfrec_perfdata *p, unsigned int feature,
				     char *buf, size_t len)
{
	if (!p->r)
		return -ENOENT;
	return perfdata_describe_feature(p->r, feature, buf, len);
}

const char *bpfrec_perfdata_event_generic_name(uint32_t type, uint64_t config)
{
	return perfdata_event_generic_name(type, config);
}
