// SPDX-License-Identifier: MIT
/* describe.c - feature payloads as text (contract in describe.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "perfdata/cursor.h"
#include "perfdata/describe.h"
#include "perfdata/reader.h"

/* snprintf that goes on counting once buf is full. */
struct text {
	char *buf;
	size_t len, used;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
	size_t room = t->used < t->len ? t->len - t->used : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? t->buf + t->used : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->used += (size_t)n;
}

static void put_time(struct text *t, uint64_t ns)
{
	put(t, "%" PRIu64 ".%09" PRIu64, ns / 1000000000, ns % 1000000000);
}

/* perf string: u32 len, len bytes, NUL-padded; put up to the NUL. */
static int put_string(struct text *t, struct perfdata_cursor *c)
{
	const char *s;
	size_t max;

	if (perfdata_cursor_string(c, &s, &max))
		return -EINVAL;
	put(t, "%.*s", (int)(max > INT32_MAX ? INT32_MAX : max), s);
	return 0;
}

static int put_cmdline(struct text *t, struct perfdata_cursor *c)
{
	uint32_t nr;

	if (perfdata_cursor_u32(c, &nr))
		return -EINVAL;
	for (uint32_t i = 0; i < nr; i++) {
		if (i)
			put(t, " ");
		if (put_string(t, c))
			return -EINVAL;
	}
	return 0;
}

static int put_event_desc(struct text *t, struct perfdata_cursor *c)
{
	uint32_t nr, attr_size;

	if (perfdata_cursor_u32(c, &nr) || perfdata_cursor_u32(c, &attr_size))
		return -EINVAL;
	put(t, "%u event(s)", nr);
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t nr_ids;
		uint64_t id;

		put(t, "%s", i ? ", " : ": ");
		if (perfdata_cursor_take(c, attr_size, NULL) || perfdata_cursor_u32(c, &nr_ids) ||
		    put_string(t, c))
			return -EINVAL;
		put(t, " (ids");
		for (uint32_t j = 0; j < nr_ids; j++) {
			if (perfdata_cursor_u64(c, &id))
				return -EINVAL;
			if (j < 16)
				put(t, " %" PRIu64, id);
		}
		put(t, "%s)", nr_ids > 16 ? " ..." : "");
	}
	return 0;
}

static const char *clockid_name(uint64_t id)
{
	switch (id) {
	case CLOCK_REALTIME:	return "CLOCK_REALTIME";
	case CLOCK_MONOTONIC:	return "CLOCK_MONOTONIC";
	case CLOCK_MONOTONIC_RAW: return "CLOCK_MONOTONIC_RAW";
	case CLOCK_BOOTTIME:	return "CLOCK_BOOTTIME";
	case CLOCK_TAI:		return "CLOCK_TAI";
	default:		return "?";
	}
}

/* The payloads of fixed layout; -EINVAL when one does not fit. */
static int put_fixed(struct text *t, unsigned int feat, struct perfdata_cursor *c)
{
	uint32_t a, b, type, level, ratio, mmap_len;
	uint64_t x, y;

	switch (feat) {
	case PERFDATA_FEAT_NRCPUS:
		if (perfdata_cursor_u32(c, &a) || perfdata_cursor_u32(c, &b))
			return -EINVAL;
		put(t, "available %u online %u", a, b);
		return 0;
	case PERFDATA_FEAT_TOTAL_MEM:
		if (perfdata_cursor_u64(c, &x))
			return -EINVAL;
		put(t, "%" PRIu64 " kB", x);
		return 0;
	case PERFDATA_FEAT_SAMPLE_TIME:
		if (perfdata_cursor_u64(c, &x) || perfdata_cursor_u64(c, &y))
			return -EINVAL;
		put(t, "first ");
		put_time(t, x);
		put(t, " last ");
		put_time(t, y);
		return 0;
	case PERFDATA_FEAT_CLOCKID:
		if (perfdata_cursor_u64(c, &x))
			return -EINVAL;
		put(t, "%" PRIu64 " (%s)", x, clockid_name(x));
		return 0;
	case PERFDATA_FEAT_CLOCK_DATA:
		/* u32 version, u32 clockid, u64 wall-clock ns, u64 clockid ns */
		if (perfdata_cursor_u32(c, &a) || perfdata_cursor_u32(c, &b) ||
		    perfdata_cursor_u64(c, &x) || perfdata_cursor_u64(c, &y))
			return -EINVAL;
		put(t, "version %u clockid %u (%s) wall ", a, b, clockid_name(b));
		put_time(t, x);
		put(t, " at clock ");
		put_time(t, y);
		return 0;
	case PERFDATA_FEAT_COMPRESSED:
		/* u32 version, type (1 = zstd), level, ratio, mmap_len */
		if (perfdata_cursor_u32(c, &a) || perfdata_cursor_u32(c, &type) ||
		    perfdata_cursor_u32(c, &level) || perfdata_cursor_u32(c, &ratio) ||
		    perfdata_cursor_u32(c, &mmap_len))
			return -EINVAL;
		put(t, "%s level %u ratio %u mmap_len %u (version %u)",
		    type == 1 ? "zstd" : "unknown type", level, ratio, mmap_len, a);
		return 0;
	default:
		return -ENOENT;
	}
}

int perfdata_describe_feature(const struct perfdata_reader *r, unsigned int feat, char *buf,
			      size_t len)
{
	struct text t = { .buf = buf, .len = len };
	size_t size;
	const void *data = perfdata_reader_feature(r, feat, &size);
	struct perfdata_cursor c;
	const char *s;
	int err;

	if (!data)
		return -ENOENT;
	if (len)
		buf[0] = '\0';
	perfdata_cursor_init(&c, data, size);
	switch (feat) {
	case PERFDATA_FEAT_HOSTNAME:
	case PERFDATA_FEAT_OSRELEASE:
	case PERFDATA_FEAT_VERSION:
	case PERFDATA_FEAT_ARCH:
	case PERFDATA_FEAT_CPUDESC:
	case PERFDATA_FEAT_CPUID:
		s = perfdata_reader_feature_string(r, feat);
		if (s)
			put(&t, "\"%s\"", s);
		else
			put(&t, "(malformed string, %zu bytes)", size);
		break;
	case PERFDATA_FEAT_CMDLINE:
		if (put_cmdline(&t, &c))
			put(&t, " (malformed)");
		break;
	case PERFDATA_FEAT_EVENT_DESC:
		if (put_event_desc(&t, &c))
			put(&t, " (malformed)");
		break;
	default:
		err = put_fixed(&t, feat, &c);
		if (err == -EINVAL)
			put(&t, "(malformed, %zu bytes)", size);
		else if (err)
			put(&t, "%zu bytes", size);
	}
	return t.used > INT32_MAX ? INT32_MAX : (int)t.used;
}
