// SPDX-License-Identifier: MIT
/* describe.c - feature payloads as text (contract in describe.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "perfdata/describe.h"
#include "perfdata/features.h"
#include "perfdata/reader.h"

/* snprintf that goes on counting once buf is full. */
struct perfdata_text {
	char *buf;
	size_t len, used;
};

static void put(struct perfdata_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct perfdata_text *t, const char *fmt, ...)
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

static void put_time(struct perfdata_text *t, uint64_t ns)
{
	put(t, "%" PRIu64 ".%09" PRIu64, ns / 1000000000, ns % 1000000000);
}

/* A string of at most max bytes, up to its NUL. */
static void put_name(struct perfdata_text *t, const char *s, size_t max)
{
	put(t, "%.*s", (int)(max > INT32_MAX ? INT32_MAX : max), s);
}

/* A payload of fixed layout that is too short for it. */
static void put_malformed(struct perfdata_text *t, size_t size)
{
	put(t, "(malformed, %zu bytes)", size);
}

/* The n u64 a payload starts with: true, or false once t says it is too short. */
static bool take_u64s(struct perfdata_text *t, const void *data, size_t size, uint64_t *v,
		      size_t n)
{
	struct perfdata_cursor c;

	perfdata_cursor_init(&c, data, size);
	for (size_t i = 0; i < n; i++) {
		if (perfdata_cursor_u64(&c, &v[i])) {
			put_malformed(t, size);
			return false;
		}
	}
	return true;
}

void perfdata_describe_string(struct perfdata_text *t, const void *data, size_t size)
{
	const char *s = perfdata_feature_string(data, size);

	if (s)
		put(t, "\"%s\"", s);
	else
		put(t, "(malformed string, %zu bytes)", size);
}

/* u32 nr, then nr perf strings. */
void perfdata_describe_cmdline(struct perfdata_text *t, const void *data, size_t size)
{
	struct perfdata_cursor c;
	const char *s;
	size_t max;
	uint32_t nr;

	perfdata_cursor_init(&c, data, size);
	if (perfdata_cursor_u32(&c, &nr))
		goto malformed;
	for (uint32_t i = 0; i < nr; i++) {
		if (i)
			put(t, " ");
		if (perfdata_cursor_string(&c, &s, &max))
			goto malformed;
		put_name(t, s, max);
	}
	return;
malformed:
	put(t, " (malformed)");
}

/* Each event's name and first 16 ids; of a description cut short, what is there. */
void perfdata_describe_event_desc(struct perfdata_text *t, const void *data, size_t size)
{
	struct perfdata_event_desc_iter it;
	struct perfdata_event_desc d;
	int ret = 1;

	if (perfdata_event_desc_begin(&it, data, size))
		goto malformed;
	put(t, "%u event(s)", it.nr);
	while (it.i < it.nr) {
		put(t, "%s", it.i ? ", " : ": ");
		ret = perfdata_event_desc_next(&it, &d);
		if (!d.name)
			break;
		put_name(t, d.name, d.name_max);
		put(t, " (ids");
		for (uint32_t j = 0; j < d.nr_ids && j < 16; j++) {
			uint64_t id;

			memcpy(&id, (const uint8_t *)d.ids + (size_t)j * 8, sizeof(id));
			put(t, " %" PRIu64, id);
		}
		if (ret < 0)
			break;
		put(t, "%s)", d.nr_ids > 16 ? " ..." : "");
	}
	if (ret >= 0)
		return;
malformed:
	put(t, " (malformed)");
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

/* u32 available, u32 online. */
void perfdata_describe_nrcpus(struct perfdata_text *t, const void *data, size_t size)
{
	struct perfdata_cursor c;
	uint32_t avail, online;

	perfdata_cursor_init(&c, data, size);
	if (perfdata_cursor_u32(&c, &avail) || perfdata_cursor_u32(&c, &online))
		put_malformed(t, size);
	else
		put(t, "available %u online %u", avail, online);
}

/* u64 kB. */
void perfdata_describe_total_mem(struct perfdata_text *t, const void *data, size_t size)
{
	uint64_t kb;

	if (take_u64s(t, data, size, &kb, 1))
		put(t, "%" PRIu64 " kB", kb);
}

/* u64 first, u64 last. */
void perfdata_describe_sample_time(struct perfdata_text *t, const void *data, size_t size)
{
	uint64_t v[2];

	if (!take_u64s(t, data, size, v, 2))
		return;
	put(t, "first ");
	put_time(t, v[0]);
	put(t, " last ");
	put_time(t, v[1]);
}

/* u64. */
void perfdata_describe_clockid(struct perfdata_text *t, const void *data, size_t size)
{
	uint64_t x;

	if (take_u64s(t, data, size, &x, 1))
		put(t, "%" PRIu64 " (%s)", x, clockid_name(x));
}

/* u32 version, u32 clockid, u64 wall-clock ns, u64 clockid ns. */
void perfdata_describe_clock_data(struct perfdata_text *t, const void *data, size_t size)
{
	struct perfdata_cursor c;
	uint32_t version, clockid;
	uint64_t wall, at;

	perfdata_cursor_init(&c, data, size);
	if (perfdata_cursor_u32(&c, &version) || perfdata_cursor_u32(&c, &clockid) ||
	    perfdata_cursor_u64(&c, &wall) || perfdata_cursor_u64(&c, &at)) {
		put_malformed(t, size);
		return;
	}
	put(t, "version %u clockid %u (%s) wall ", version, clockid, clockid_name(clockid));
	put_time(t, wall);
	put(t, " at clock ");
	put_time(t, at);
}

void perfdata_describe_compressed(struct perfdata_text *t, const void *data, size_t size)
{
	struct perfdata_feature_compressed z;

	if (perfdata_feature_decode_compressed(data, size, &z))
		put_malformed(t, size);
	else
		put(t, "%s level %u ratio %u mmap_len %u (version %u)",
		    z.type == 1 ? "zstd" : "unknown type", z.level, z.ratio, z.mmap_len, z.version);
}

int perfdata_describe_feature(const struct perfdata_reader *r, unsigned int feat, char *buf,
			      size_t len)
{
	const struct perfdata_feature_ops *ops = perfdata_feature_ops(feat);
	struct perfdata_text t = { .buf = buf, .len = len };
	size_t size;
	const void *data = perfdata_reader_feature(r, feat, &size);

	if (!data)
		return -ENOENT;
	if (len)
		buf[0] = '\0';
	if (ops && ops->describe)
		ops->describe(&t, data, size);
	else
		put(&t, "%zu bytes", size);
	return t.used > INT32_MAX ? INT32_MAX : (int)t.used;
}
