// SPDX-License-Identifier: MIT
/*
 * trace.c - perf's tracing data container and tracepoint field values
 * (see trace.h).
 *
 * The container, as perf's trace-event-info.c writes it (integers in the
 * recording host's byte order, given by the endian byte):
 *   "\027\010\104tracing"  version "0.6\0"  u8 big_endian  u8 long_size
 *   u32 page_size
 *   "header_page\0" u64 size, bytes      (the ring-buffer page header format)
 *   "header_event\0" u64 size, bytes     (obsolete; skipped)
 *   u32 count, then count x { u64 size, format text }            (ftrace events)
 *   u32 systems, then per system { name "\0", u32 count,
 *                                  count x { u64 size, format text } }
 *   u32 size, kallsyms text     u32 size, printk formats
 *   (version >= 0.6) u64 size, saved cmdlines
 * Only the formats matter here; libtraceevent parses each one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <traceevent/event-parse.h>

#include "trace.h"

struct perfdata_trace {
	struct tep_handle *tep;
};

struct cursor {
	const uint8_t *p, *end;
	struct tep_handle *tep;
	char *err;
	size_t errlen;
};

static int bad(struct cursor *c, const char *what)
{
	snprintf(c->err, c->errlen, "%s", what);
	return -EINVAL;
}

static int take(struct cursor *c, size_t n, const uint8_t **out, const char *what)
{
	if ((size_t)(c->end - c->p) < n)
		return bad(c, what);
	*out = c->p;
	c->p += n;
	return 0;
}

static int num(struct cursor *c, int size, uint64_t *v, const char *what)
{
	const uint8_t *p;
	int err = take(c, size, &p, what);

	if (!err)
		*v = tep_read_number(c->tep, p, size);
	return err;
}

static int string(struct cursor *c, const char **s, const char *what)
{
	const uint8_t *nul = memchr(c->p, 0, c->end - c->p);

	if (!nul)
		return bad(c, what);
	*s = (const char *)c->p;
	c->p = nul + 1;
	return 0;
}

/* One event format file: libtraceevent wants a writable copy? no: const. */
static int parse_format(struct cursor *c, const char *sys, const char *what)
{
	static const char print_stub[] = "print fmt: \"\"\n";
	const uint8_t *buf, *print;
	uint64_t size;
	size_t keep;
	char *copy;
	int err = num(c, 8, &size, what);

	if (!err)
		err = take(c, size, &buf, what);
	if (err)
		return err;
	/*
	 * Only the fields are used, never the "print fmt" line: libtraceevent's
	 * parser of its expressions dereferences NULL on some malformed ones
	 * (REC->x of a field x that does not exist, in 1.7). It gets an empty
	 * print format instead, so no file can reach that code.
	 */
	print = memmem(buf, size, "\nprint fmt:", 11);
	keep = print ? (size_t)(print - buf) + 1 : size;
	/*
	 * tracefs writes formats as printable ASCII; libtraceevent's tokenizer
	 * crashes on some other bytes (a NUL inside a field line is a NULL
	 * strcmp in 1.7). Such a format only loses its event.
	 */
	for (size_t i = 0; i < keep; i++)
		if ((buf[i] < 0x20 && buf[i] != '\t' && buf[i] != '\n') || buf[i] >= 0x7f)
			return 0;
	copy = malloc(keep + sizeof(print_stub));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, buf, keep);
	memcpy(copy + keep, print_stub, sizeof(print_stub));
	/* A format the library does not understand only loses that event. */
	tep_parse_event(c->tep, copy, keep + sizeof(print_stub) - 1, sys);
	free(copy);
	return 0;
}

static int parse(struct cursor *c)
{
	static const uint8_t magic[] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const uint8_t *p;
	const char *version, *sys;
	uint64_t v, count, systems;
	int err;

	if (take(c, sizeof(magic), &p, "no tracing data magic") || memcmp(p, magic, sizeof(magic)))
		return bad(c, "no tracing data magic");
	err = string(c, &version, "truncated version");
	if (!err)
		err = take(c, 2, &p, "truncated header");
	if (err)
		return err;
	tep_set_file_bigendian(c->tep, p[0] ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(c->tep, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? TEP_BIG_ENDIAN
									     : TEP_LITTLE_ENDIAN);
	if (p[1] != 4 && p[1] != 8)
		return bad(c, "bad long size");
	tep_set_long_size(c->tep, p[1]);
	err = num(c, 4, &v, "truncated page size");
	if (err)
		return err;
	tep_set_page_size(c->tep, v);

	if (take(c, 12, &p, "no header_page") || memcmp(p, "header_page", 12))
		return bad(c, "no header_page");
	err = num(c, 8, &v, "truncated header_page");
	if (!err)
		err = take(c, v, &p, "truncated header_page");
	if (err)
		return err;
	{
		char *copy = malloc(v + 1);

		if (!copy)
			return -ENOMEM;
		memcpy(copy, p, v);
		copy[v] = 0;
		tep_parse_header_page(c->tep, copy, v, tep_get_long_size(c->tep));
		free(copy);
	}
	if (take(c, 13, &p, "no header_event") || memcmp(p, "header_event", 13))
		return bad(c, "no header_event");
	err = num(c, 8, &v, "truncated header_event");
	if (!err)
		err = take(c, v, &p, "truncated header_event");

	if (!err)
		err = num(c, 4, &count, "truncated ftrace formats");
	for (uint64_t i = 0; !err && i < count; i++)
		err = parse_format(c, "ftrace", "truncated ftrace format");
	if (!err)
		err = num(c, 4, &systems, "truncated event systems");
	for (uint64_t s = 0; !err && s < systems; s++) {
		err = string(c, &sys, "truncated system name");
		if (!err)
			err = num(c, 4, &count, "truncated event count");
		for (uint64_t i = 0; !err && i < count; i++)
			err = parse_format(c, sys, "truncated event format");
	}
	/* kallsyms, printk formats and cmdlines follow; no field needs them. */
	return err;
}

int perfdata_trace_new(const void *data, size_t size, struct perfdata_trace **out, char *err, size_t errlen)
{
	struct perfdata_trace *t = calloc(1, sizeof(*t));
	struct cursor c = { .p = data, .end = (const uint8_t *)data + size, .err = err,
			    .errlen = errlen };
	int ret;

	if (!t || !(t->tep = tep_alloc())) {
		free(t);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c.tep = t->tep;
	ret = parse(&c);
	if (ret) {
		perfdata_trace_free(t);
		return ret;
	}
	*out = t;
	return 0;
}

void perfdata_trace_free(struct perfdata_trace *t)
{
	if (!t)
		return;
	if (t->tep)
		tep_free(t->tep);
	free(t);
}

static struct tep_format_field *find(struct perfdata_trace *t, uint64_t id, const char *name)
{
	struct tep_event *ev = tep_find_event(t->tep, (int)id);

	return ev ? tep_find_any_field(ev, name) : NULL;
}

bool perfdata_trace_has_field(struct perfdata_trace *t, uint64_t id, const char *name)
{
	return find(t, id, name) != NULL;
}

const char *perfdata_trace_event_name(struct perfdata_trace *t, uint64_t id, char *buf, size_t len)
{
	struct tep_event *ev = tep_find_event(t->tep, (int)id);

	if (!ev)
		return NULL;
	snprintf(buf, len, "%s:%s", ev->system, ev->name);
	return buf;
}

static void copy_string(struct perfdata_trace_value *v, const uint8_t *p, size_t n)
{
	size_t len = strnlen((const char *)p, n);

	if (len >= sizeof(v->str))
		len = sizeof(v->str) - 1;
	memcpy(v->str, p, len);
	v->str[len] = 0;
	v->is_str = true;
}

static void copy_hex(struct perfdata_trace_value *v, const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t o = 0;

	for (size_t i = 0; i < n && o + 2 < sizeof(v->str); i++) {
		v->str[o++] = digits[p[i] >> 4];
		v->str[o++] = digits[p[i] & 15];
	}
	v->str[o] = 0;
	v->is_str = true;
}

int perfdata_trace_field(struct perfdata_trace *t, uint64_t id, const char *name, const void *raw,
		   size_t raw_size, struct perfdata_trace_value *v)
{
	struct tep_format_field *f = find(t, id, name);
	const uint8_t *data = raw;

	memset(v, 0, sizeof(*v));
	if (!f)
		return -ENOENT;
	if (f->offset < 0 || f->size < 0 || (size_t)f->offset + f->size > raw_size)
		return -EINVAL;

	if (f->flags & TEP_FIELD_IS_DYNAMIC) {
		/* __data_loc / __rel_loc: u32 (len << 16 | offset) */
		uint32_t loc = tep_read_number(t->tep, data + f->offset, 4);
		size_t off = loc & 0xffff, len = loc >> 16;

		if (f->flags & TEP_FIELD_IS_RELATIVE)
			off += f->offset + f->size;
		if (off + len > raw_size)
			return -EINVAL;
		if (f->flags & TEP_FIELD_IS_STRING)
			copy_string(v, data + off, len);
		else
			copy_hex(v, data + off, len);
		return 0;
	}
	if (f->flags & TEP_FIELD_IS_STRING) {
		copy_string(v, data + f->offset, f->size);
		return 0;
	}
	if ((f->flags & TEP_FIELD_IS_ARRAY) || f->size > 8 || !f->size) {
		copy_hex(v, data + f->offset, f->size);
		return 0;
	}

	uint64_t u = tep_read_number(t->tep, data + f->offset, f->size);

	if ((f->flags & TEP_FIELD_IS_SIGNED) && f->size < 8) {
		unsigned int shift = 64 - 8 * f->size;

		v->num = (int64_t)(u << shift) >> shift;
	} else {
		v->num = (int64_t)u;
	}
	return 0;
}
