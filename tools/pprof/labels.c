// SPDX-License-Identifier: MIT
/*
 * labels.c - the labels of each sample (labels.h): parsed, taken from the
 * sample, named. One table of kind names serves parsing and naming.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "perfdata/reader.h"
#include "perfdata/trace.h"
#include "convert_int.h"
#include "events.h"
#include "labels.h"

/* The names of the labels that are not tracepoint fields. */
static const char *const kind_names[] = {
	[PP_LABEL_PID] = "pid",
	[PP_LABEL_TID] = "tid",
	[PP_LABEL_COMM] = "comm",
	[PP_LABEL_CPU] = "cpu",
};

#define NR_KIND_NAMES (sizeof(kind_names) / sizeof(kind_names[0]))
#define TRACE_PREFIX "trace:"

static int kind_of(const char *name, enum pp_label_kind *kind)
{
	for (size_t k = 0; k < NR_KIND_NAMES; k++) {
		if (kind_names[k] && !strcmp(name, kind_names[k])) {
			*kind = (enum pp_label_kind)k;
			return 0;
		}
	}
	return -EINVAL;
}

int pp_parse_labels(char *s, struct pp_label_spec *specs, size_t cap, size_t *nr)
{
	const size_t prefix = strlen(TRACE_PREFIX);
	char *save = NULL, *tok;

	*nr = 0;
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct pp_label_spec sp = { 0 };

		if (!strncmp(tok, TRACE_PREFIX, prefix) && tok[prefix]) {
			sp.kind = PP_LABEL_TRACE;
			sp.field = tok + prefix;
		} else if (kind_of(tok, &sp.kind)) {
			return -EINVAL;
		}
		if (*nr == cap)
			return -E2BIG;
		specs[(*nr)++] = sp;
	}
	return 0;
}

const char *pp_cv_label_key(const struct pp_convert *c, uint32_t spec)
{
	const struct pp_label_spec *s;

	if (spec == LABEL_SPEC_SCHED_REASON)
		return PP_SCHED_REASON_LABEL;
	s = &c->opts.labels[spec];
	if (s->kind == PP_LABEL_TRACE)
		return s->field;
	return (size_t)s->kind < NR_KIND_NAMES && kind_names[s->kind] ? kind_names[s->kind] : "";
}

bool pp_cv_labels_want_raw(const struct pp_convert *c)
{
	for (size_t i = 0; i < c->opts.nr_labels; i++)
		if (c->opts.labels[i].kind == PP_LABEL_TRACE)
			return true;
	return false;
}

/* The file's tracepoint formats, read on first use (a warning when unusable). */
static struct perfdata_trace *trace_formats(struct pp_convert *c)
{
	size_t size = 0;
	const void *td;
	char msg[256] = "";

	if (c->trace_tried)
		return c->trace;
	c->trace_tried = true;
	td = perfdata_reader_feature(c->r, PERFDATA_FEAT_TRACING_DATA, &size);
	if (!td || !size) {
		snprintf(c->warning, sizeof(c->warning),
			 "%s has no tracing data (HEADER_TRACING_DATA): trace: labels are left out",
			 c->opts.input_name);
	} else if (perfdata_trace_new(td, size, &c->trace, msg, sizeof(msg))) {
		snprintf(c->warning, sizeof(c->warning),
			 "%s: tracing data unusable (%s): trace: labels are left out",
			 c->opts.input_name, msg);
	}
	return c->trace;
}

/* Tracepoint field `field` of sample s: 0, -ENOENT when it has none, -errno. */
static int trace_value(struct pp_convert *c, const struct csample *s, const char *field,
		       struct label_val *lv)
{
	const struct perfdata_event *ev = perfdata_reader_event(c->r, s->event);
	struct perfdata_trace *trace;
	struct perfdata_trace_value v;
	int err;

	if (!ev || ev->attr.type != PERF_TYPE_TRACEPOINT || !s->raw_size)
		return -ENOENT;
	trace = trace_formats(c);
	if (!trace)
		return -ENOENT;
	err = perfdata_trace_field(trace, ev->attr.config, field, csample_raw(s), s->raw_size, &v);
	if (err)
		return err == -ENOENT || err == -EINVAL ? -ENOENT : err;
	if (v.is_str) {
		int64_t sid = pp_cv_sid(c, v.str);

		if (sid < 0)
			return sid;
		lv->is_str = 1;
		lv->value = sid;
	} else {
		lv->value = (uint64_t)v.num;
	}
	return 0;
}

int64_t pp_cv_labelset(struct pp_convert *c, const struct csample *s, uint32_t comm)
{
	struct label_val lv[PP_LABELS_MAX];
	size_t nl = 0;

	for (size_t i = 0; i < c->opts.nr_labels && nl < PP_LABELS_MAX; i++) {
		struct label_val *l = &lv[nl];
		char buf[32];
		int64_t sid;
		int err;

		memset(l, 0, sizeof(*l));
		l->spec = i;
		switch (c->opts.labels[i].kind) {
		case PP_LABEL_PID:
			l->value = s->pid;
			break;
		case PP_LABEL_TID:
			l->value = s->tid;
			break;
		case PP_LABEL_CPU:
			if (!(s->flags & CSAMPLE_HAS_CPU))
				continue;	/* not recorded: no label rather than a wrong one */
			l->value = s->cpu;
			break;
		case PP_LABEL_COMM:
			if (comm) {
				sid = comm - 1;
			} else {
				snprintf(buf, sizeof(buf), s->pid ? ":%u" : "swapper", s->tid);
				sid = pp_cv_sid(c, buf);
				if (sid < 0)
					return sid;
			}
			l->is_str = 1;
			l->value = sid;
			break;
		case PP_LABEL_TRACE:
			err = trace_value(c, s, c->opts.labels[i].field, l);
			if (err == -ENOENT)
				continue;	/* not a field of this event: no label */
			if (err)
				return err;
			break;
		}
		nl++;
	}
	if (s->reason && nl < PP_LABELS_MAX)
		lv[nl++] = (struct label_val){ .spec = LABEL_SPEC_SCHED_REASON, .is_str = 1,
					       .value = s->reason - 1 };
	return pp_intern_put(&c->labelsets, lv, nl * sizeof(lv[0]), NULL);
}
