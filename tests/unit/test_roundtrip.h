/* SPDX-License-Identifier: MIT */
/*
 * test_roundtrip.h - a recording written with perfdata's writer and read
 * back, the steps every test of a writer's user repeats: a memory file, a
 * writer with its first event, finishing it, a reader from the start of the
 * file, the raw records written since a mark, the file's bytes. Each step
 * asserts, saying why with the reader's message where there is one.
 * Header-only (static inline: a test takes what it uses).
 */
#ifndef TEST_ROUNDTRIP_H
#define TEST_ROUNDTRIP_H

#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdata/reader.h"
#include "perfdata/writer.h"

/* A file in memory for a recording; name shows in /proc only. */
static inline int trip_memfd(const char *name)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	cr_assert_geq(fd, 0, "memfd_create: %s", strerror(errno));
	return fd;
}

/*
 * A cpu-clock event as the recorder's tests write it: IP, TID, TIME, CPU and
 * PERIOD, sample_id_all, a period of 1 ms. Its records' trailer is {pid,
 * tid} {time} {cpu, res}: TRIP_CPU_CLOCK_TRAILER bytes.
 */
#define TRIP_CPU_CLOCK_TRAILER	24
static inline struct perf_event_attr trip_cpu_clock(void)
{
	return (struct perf_event_attr){
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000000,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD,
		.sample_id_all = 1,
	};
}

/*
 * A writer on fd (o NULL: the defaults) with its first event, not started:
 * more events may be added before perfdata_writer_start().
 */
static inline struct perfdata_writer *trip_writer_new(int fd, const struct perfdata_writer_opts *o,
						      const char *event,
						      const struct perf_event_attr *attr,
						      const uint64_t *ids, size_t nr_ids)
{
	struct perfdata_writer *w;

	cr_assert_eq(perfdata_writer_new(fd, o, &w), 0);
	cr_assert_eq(perfdata_writer_add_event(w, event, attr, ids, nr_ids), 0, "event %s", event);
	return w;
}

/* The same with one event, started: records may follow. */
static inline struct perfdata_writer *trip_writer(int fd, const struct perfdata_writer_opts *o,
						  const char *event, const struct perf_event_attr *attr,
						  const uint64_t *ids, size_t nr_ids)
{
	struct perfdata_writer *w = trip_writer_new(fd, o, event, attr, ids, nr_ids);

	cr_assert_eq(perfdata_writer_start(w), 0);
	return w;
}

/* Finish and free w, then rewind fd: the recording is read from its start. */
static inline void trip_finish(struct perfdata_writer *w, int fd)
{
	cr_assert_eq(perfdata_writer_finish(w), 0);
	perfdata_writer_free(w);
	cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
}

/* A reader of fd from its start (a pipe from where it is); name for messages. */
static inline struct perfdata_reader *trip_reader(int fd, const char *name)
{
	struct perfdata_reader *r = NULL;
	int err;

	if (lseek(fd, 0, SEEK_SET) < 0)
		cr_assert_eq(errno, ESPIPE, "lseek %s: %s", name, strerror(errno));
	err = perfdata_reader_open(fd, name, &r);
	cr_assert_eq(err, 0, "%s: %s", name, r ? perfdata_reader_error(r) : strerror(-err));
	return r;
}

/* Every byte of fd (malloc'd, with a spare one past *len), whatever its offset. */
static inline uint8_t *trip_slurp(int fd, size_t *len)
{
	struct stat st;
	uint8_t *p;

	cr_assert_eq(fstat(fd, &st), 0);
	*len = (size_t)st.st_size;
	p = malloc(*len + 1);
	cr_assert_not_null(p);
	cr_assert_eq(pread(fd, p, *len, 0), (ssize_t)*len);
	return p;
}

/* One record as the writer laid it out, for tests of the bytes. */
struct trip_rec {
	uint32_t type;
	uint16_t misc, size;
	uint8_t raw[4096];	/* the whole record, header included */
};

/* Where w's records end in fd now (checkpointed): where trip_take() starts. */
static inline off_t trip_mark(struct perfdata_writer *w, int fd)
{
	cr_assert_eq(perfdata_writer_checkpoint(w), 0);
	return lseek(fd, 0, SEEK_END);
}

/*
 * The records w wrote into fd since *mark (a pipe-mode writer: records
 * only), which then moves past them. Every one is checked (a header, a
 * multiple of 8 bytes, inside the file); the first max go to recs. Returns
 * how many there were.
 */
static inline size_t trip_take(struct perfdata_writer *w, int fd, off_t *mark,
			       struct trip_rec *recs, size_t max)
{
	off_t end = trip_mark(w, fd), pos;
	size_t n = 0;

	for (pos = *mark; pos < end; n++) {
		struct perf_event_header h;

		cr_assert_eq(pread(fd, &h, sizeof(h), pos), (ssize_t)sizeof(h));
		cr_assert_geq(h.size, sizeof(h));
		cr_assert_eq(h.size % 8, 0, "record type %u size %u", h.type, h.size);
		cr_assert_leq(pos + h.size, end);
		if (n < max) {
			struct trip_rec *r = &recs[n];

			r->type = h.type;
			r->misc = h.misc;
			r->size = h.size;
			cr_assert_leq(h.size, sizeof(r->raw));
			cr_assert_eq(pread(fd, r->raw, h.size, pos), h.size);
		}
		pos += h.size;
	}
	*mark = end;
	return n;
}

#endif /* TEST_ROUNDTRIP_H */
