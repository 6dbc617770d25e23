// SPDX-License-Identifier: MIT
/* bpfrec_perfdata.c - the public reader (bpfrec/perfdata.h) over reader.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpfrec/perfdata.h>

#include "perfdata/opts.h"
#include "perfdata/reader.h"

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
	struct perfdata_sample s;
	int err;

	if (!p->r || rec->type != PERF_RECORD_SAMPLE || out->sz < sizeof(size_t))
		return -EINVAL;
	err = perfdata_reader_parse_sample(p->r, rec, &s, &ev);
	if (err)
		return err;
	for (size_t i = 0; ev && i < perfdata_reader_nr_events(p->r); i++)
		if (perfdata_reader_event(p->r, i) == ev)
			o.event = (int)i;
	o.misc = s.misc;
	o.id = s.id;
	o.ip = s.ip;
	o.pid = s.pid;
	o.tid = s.tid;
	o.time = s.time;
	o.addr = s.addr;
	o.stream_id = s.stream_id;
	o.cpu = s.cpu;
	o.period = s.period;
	o.nr_callchain = s.nr_callchain;
	o.callchain = s.callchain;
	o.raw_size = s.raw_size;
	o.raw = s.raw;
	o.regs_abi = s.regs_abi;
	o.nr_regs = s.nr_regs;
	o.regs = s.regs;
	o.stack_size = s.stack_size;
	o.stack_dyn_size = s.stack_dyn_size;
	o.stack = s.stack;
	return opts_copy_out(out, &o, sizeof(o));
}

const char *bpfrec_perfdata_feature_string(const struct bpfrec_perfdata *p, unsigned int feature)
{
	return p->r ? perfdata_reader_feature_string(p->r, feature) : NULL;
}
