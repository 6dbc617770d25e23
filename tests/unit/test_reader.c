// SPDX-License-Identifier: MIT
/*
 * test_reader.c - perfdata/reader.c on perf.data images built byte by byte
 * here (file and pipe mode, one and two events, odd attr sizes, every error
 * the reader must name), on files from perfdata/writer.c (round trips of
 * every record type in both modes), on every truncation of a valid file and
 * on a few thousand seeded random mutations. Run under ASan+UBSan too.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "perfdata/compress.h"
#include "perfdata/reader.h"
#include "perfdata/writer.h"
#include "tests/unit/test_roundtrip.h"

/* ---- a growable byte image ------------------------------------------------------ */

struct img {
	uint8_t *b;
	size_t len, cap;
	size_t rec;	/* start of the record being built */
};

static void put(struct img *m, const void *p, size_t n)
{
	if (m->len + n > m->cap) {
		size_t cap = m->cap ? m->cap : 4096;

		while (cap < m->len + n)
			cap *= 2;
		m->b = realloc(m->b, cap);
		cr_assert_not_null(m->b);
		m->cap = cap;
	}
	if (p)
		memcpy(m->b + m->len, p, n);
	else
		memset(m->b + m->len, 0, n);
	m->len += n;
}

static void u64(struct img *m, uint64_t v) { put(m, &v, 8); }
static void u32(struct img *m, uint32_t v) { put(m, &v, 4); }
static void u32x2(struct img *m, uint32_t a, uint32_t b) { u32(m, a); u32(m, b); }
static void zeros(struct img *m, size_t n) { put(m, NULL, n); }
static void pad_to(struct img *m, size_t align) { zeros(m, (align - m->len % align) % align); }
static void img_free(struct img *m) { free(m->b); memset(m, 0, sizeof(*m)); }

static void set_u64(struct img *m, size_t off, uint64_t v) { memcpy(m->b + off, &v, 8); }
static void set_u16(struct img *m, size_t off, uint16_t v) { memcpy(m->b + off, &v, 2); }

static void begin(struct img *m, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc };

	m->rec = m->len;
	put(m, &h, sizeof(h));
}

static void end(struct img *m)
{
	set_u16(m, m->rec + 6, (uint16_t)(m->len - m->rec));
}

/* A NUL-terminated string padded with zeros to the next multiple of 8. */
static void cstr8(struct img *m, const char *s)
{
	put(m, s, strlen(s) + 1);
	pad_to(m, 8);
}

/* perf's header string: u32 len, then the text NUL-padded to a multiple of 64. */
static void fstr(struct img *m, const char *s)
{
	uint32_t len = (uint32_t)((strlen(s) + 1 + 63) / 64 * 64);

	u32(m, len);
	put(m, s, strlen(s) + 1);
	zeros(m, len - strlen(s) - 1);
}

/* ---- the scenario most tests use ---------------------------------------------- */

#define TRAILER	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)
#define STYPE	(TRAILER | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

struct ev_spec {
	const char *name;
	struct perf_event_attr attr;
	uint64_t ids[4];
	uint32_t nr_ids;
};

static struct ev_spec two_events[2] = {
	{ "cpu-clock", { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
			 .sample_type = STYPE, .sample_period = 4000, .freq = 1,
			 .sample_id_all = 1 }, { 10, 11 }, 2 },
	{ "offcpu-time", { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_BPF_OUTPUT,
			   .sample_type = STYPE, .sample_period = 1, .sample_id_all = 1 },
	  { 20 }, 1 },
};

static const uint8_t kernel_bid[20] = { 0x4a, 0x5a, 0x9b, 0x0a, 0xff, 0xb6, 0x6c, 0x43, 0x7a, 0xbc,
					0xd4, 0x55, 0xd2, 0x73, 0x8a, 0xf8, 0x79, 0x98, 0x5f, 0xa9 };
static const uint8_t app_bid[20] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
				     18, 19, 20 };

static void trailer(struct img *m, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu,
		    uint64_t id)
{
	u32x2(m, pid, tid);
	u64(m, time);
	u32x2(m, cpu, 0);
	u64(m, id);
}

static void sample(struct img *m, uint64_t id, uint16_t misc, uint64_t ip, uint32_t pid,
		   uint32_t tid, uint64_t time, uint32_t cpu, uint64_t period, const uint64_t *chain,
		   uint64_t nr)
{
	begin(m, PERF_RECORD_SAMPLE, misc);
	u64(m, id);
	u64(m, ip);
	u32x2(m, pid, tid);
	u64(m, time);
	u32x2(m, cpu, 0);
	u64(m, period);
	u64(m, nr);
	put(m, chain, nr * 8);
	end(m);
}

static const uint64_t chain_a[] = { (uint64_t)PERF_CONTEXT_USER, 0x401000, 0x402000 };
static const uint64_t chain_b[] = { (uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000010ULL,
				    (uint64_t)PERF_CONTEXT_USER, 0x401000 };

/* The records of the scenario: COMM, MMAP2, 3 samples, LOST_SAMPLES, FINISHED_ROUND. */
static void scenario_records(struct img *m)
{
	begin(m, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	u32x2(m, 100, 100);
	cstr8(m, "app");
	trailer(m, 100, 100, 1000, 0, 10);
	end(m);

	begin(m, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	u32x2(m, 100, 100);
	u64(m, 0x400000);
	u64(m, 0x10000);
	u64(m, 0);
	put(m, (uint8_t[4]){ 20, 0, 0, 0 }, 4);
	put(m, app_bid, 20);
	u32x2(m, 5, 2);
	cstr8(m, "/usr/bin/app");
	trailer(m, 100, 100, 1001, 0, 10);
	end(m);

	sample(m, 10, PERF_RECORD_MISC_USER, 0x401000, 100, 101, 2000, 1, 250000, chain_a, 3);
	sample(m, 20, PERF_RECORD_MISC_KERNEL, 0xffffffff81000010ULL, 100, 100, 2100, 0, 12345,
	       chain_b, 4);
	sample(m, 11, PERF_RECORD_MISC_USER, 0x402000, 100, 101, 2200, 1, 250000, chain_a, 3);

	begin(m, PERF_RECORD_LOST_SAMPLES, 0);
	u64(m, 7);
	trailer(m, 0, 0, 2300, 1, 11);
	end(m);

	begin(m, PERFDATA_RECORD_FINISHED_ROUND, 0);
	end(m);
}
#define SCENARIO_RECORDS 7

static void build_id_entry(struct img *m, uint32_t type, uint16_t cpumode, const uint8_t *bid,
			   const char *name)
{
	begin(m, type, cpumode | PERFDATA_MISC_BUILD_ID_SIZE);
	u32(m, (uint32_t)-1);
	put(m, bid, 20);
	put(m, (uint8_t[4]){ 20, 0, 0, 0 }, 4);
	put(m, name, strlen(name) + 1);
	zeros(m, (64 - (strlen(name) + 1) % 64) % 64);
	end(m);
}

static void event_desc(struct img *m, const struct ev_spec *evs, size_t n, uint32_t attr_bytes)
{
	u32(m, (uint32_t)n);
	u32(m, attr_bytes);
	for (size_t i = 0; i < n; i++) {
		struct perf_event_attr a = evs[i].attr;

		a.size = attr_bytes;
		put(m, &a, attr_bytes < sizeof(a) ? attr_bytes : sizeof(a));
		if (attr_bytes > sizeof(a))
			zeros(m, attr_bytes - sizeof(a));
		u32(m, evs[i].nr_ids);
		fstr(m, evs[i].name);
		put(m, evs[i].ids, evs[i].nr_ids * 8);
	}
}

struct feat {
	unsigned int id;
	struct img payload;
};

/* HOSTNAME, NRCPUS, EVENT_DESC and (file mode) BUILD_ID for the scenario. */
static size_t scenario_features(struct feat *f, const struct ev_spec *evs, size_t nev,
				uint32_t attr_bytes, bool with_build_ids)
{
	size_t n = 0;

	memset(f, 0, 4 * sizeof(*f));
	if (with_build_ids) {
		f[n].id = PERFDATA_FEAT_BUILD_ID;
		build_id_entry(&f[n].payload, 0, PERF_RECORD_MISC_KERNEL, kernel_bid,
			       "[kernel.kallsyms]");
		build_id_entry(&f[n].payload, 0, PERF_RECORD_MISC_USER, app_bid, "/usr/bin/app");
		n++;
	}
	f[n].id = PERFDATA_FEAT_HOSTNAME;
	fstr(&f[n++].payload, "testhost");
	f[n].id = PERFDATA_FEAT_NRCPUS;
	u32x2(&f[n++].payload, 4, 2);
	f[n].id = PERFDATA_FEAT_EVENT_DESC;
	event_desc(&f[n++].payload, evs, nev, attr_bytes);
	return n;
}

static void features_free(struct feat *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		img_free(&f[i].payload);
}

/*
 * A file-mode image: header | ids | attrs | data | feature table | payloads.
 * attr_bytes is the attr size in the file (the header's attr_size is +16).
 */
static void build_file(struct img *out, const struct ev_spec *evs, size_t nev, uint32_t attr_bytes,
		       const struct img *data, const struct feat *feats, size_t nfeat)
{
	struct perfdata_file_header h = { .magic = PERFDATA_MAGIC, .size = 104 };
	uint64_t off = 104;

	h.attr_size = attr_bytes + 16;
	for (size_t i = 0; i < nev; i++)
		off += evs[i].nr_ids * 8;
	h.attrs.offset = off;
	h.attrs.size = nev * h.attr_size;
	h.data.offset = off + h.attrs.size;
	h.data.size = data->len;
	for (size_t i = 0; i < nfeat; i++)
		h.features[feats[i].id / 64] |= 1ULL << (feats[i].id % 64);
	put(out, &h, sizeof(h));
	for (size_t i = 0; i < nev; i++)
		put(out, evs[i].ids, evs[i].nr_ids * 8);
	off = 104;
	for (size_t i = 0; i < nev; i++) {
		struct perf_event_attr a = evs[i].attr;
		struct perfdata_file_section ids = { off, evs[i].nr_ids * 8 };

		a.size = attr_bytes;
		put(out, &a, attr_bytes < sizeof(a) ? attr_bytes : sizeof(a));
		if (attr_bytes > sizeof(a))
			zeros(out, attr_bytes - sizeof(a));
		put(out, &ids, sizeof(ids));
		off += ids.size;
	}
	put(out, data->b, data->len);
	off = out->len + nfeat * 16;
	for (size_t i = 0; i < nfeat; i++) {
		struct perfdata_file_section s = { off, feats[i].payload.len };

		put(out, &s, sizeof(s));
		off += s.size;
	}
	for (size_t i = 0; i < nfeat; i++)
		put(out, feats[i].payload.b, feats[i].payload.len);
}

static void pipe_header_attr(struct img *out, const struct ev_spec *ev, uint32_t attr_bytes)
{
	struct perf_event_attr a = ev->attr;

	a.size = attr_bytes;
	begin(out, PERFDATA_RECORD_HEADER_ATTR, 0);
	put(out, &a, attr_bytes < sizeof(a) ? attr_bytes : sizeof(a));
	if (attr_bytes > sizeof(a))
		zeros(out, attr_bytes - sizeof(a));
	put(out, ev->ids, ev->nr_ids * 8);
	end(out);
}

static void pipe_header_feature(struct img *out, const struct feat *f)
{
	begin(out, PERFDATA_RECORD_HEADER_FEATURE, 0);
	u64(out, f->id);
	put(out, f->payload.b, f->payload.len);
	end(out);	/* perf does not pad these: the size is whatever the payload makes it */
}

/* Pipe image: header, HEADER_ATTRs, HEADER_FEATUREs, perf's end marker, records. */
static void build_pipe(struct img *out, const struct ev_spec *evs, size_t nev, uint32_t attr_bytes,
		       const struct img *data, const struct feat *feats, size_t nfeat)
{
	struct perfdata_pipe_header h = { PERFDATA_MAGIC, 16 };

	put(out, &h, sizeof(h));
	for (size_t i = 0; i < nev; i++)
		pipe_header_attr(out, &evs[i], attr_bytes);
	for (size_t i = 0; i < nfeat; i++)
		pipe_header_feature(out, &feats[i]);
	begin(out, PERFDATA_RECORD_HEADER_FEATURE, 0);
	u64(out, PERFDATA_FEAT_LAST);
	end(out);
	put(out, data->b, data->len);
}

/* The scenario in file mode. */
static void scenario_file(struct img *out, uint32_t attr_bytes)
{
	struct img data = { 0 };
	struct feat f[4];
	size_t nf = scenario_features(f, two_events, 2, attr_bytes, true);

	scenario_records(&data);
	build_file(out, two_events, 2, attr_bytes, &data, f, nf);
	features_free(f, nf);
	img_free(&data);
}

/*
 * The scenario in pipe mode; build-ids travel as HEADER_BUILD_ID, the first
 * one as perf writes it (36 + 64 bytes: every record after it is misaligned
 * in the stream).
 */
static void scenario_pipe(struct img *out, uint32_t attr_bytes)
{
	struct img data = { 0 };
	struct feat f[4];
	size_t nf = scenario_features(f, two_events, 2, attr_bytes, false);

	build_id_entry(&data, PERFDATA_RECORD_HEADER_BUILD_ID, PERF_RECORD_MISC_KERNEL, kernel_bid,
		       "[kernel.kallsyms]");
	cr_assert_eq(data.len, 100);
	build_id_entry(&data, PERFDATA_RECORD_HEADER_BUILD_ID, PERF_RECORD_MISC_USER, app_bid,
		       "/usr/bin/app");
	scenario_records(&data);
	build_pipe(out, two_events, 2, attr_bytes, &data, f, nf);
	features_free(f, nf);
	img_free(&data);
}

/* ---- fds ------------------------------------------------------------------------ */

static int memfd_with(const void *p, size_t n)
{
	int fd = memfd_create("perfdata-test", MFD_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_assert_eq(pwrite(fd, p, n, 0), (ssize_t)n);
	return fd;
}

struct feeder {
	pthread_t thread;
	int fd;
	const uint8_t *p;
	size_t n, chunk;
};

static void *feed(void *arg)
{
	struct feeder *f = arg;

	for (size_t off = 0; off < f->n;) {
		size_t k = f->n - off < f->chunk ? f->n - off : f->chunk;
		ssize_t w = write(f->fd, f->p + off, k);

		if (w <= 0)
			break;	/* the reader closed its end */
		off += (size_t)w;
	}
	close(f->fd);
	return NULL;
}

/* A pipe fed by a thread in `chunk`-byte writes; returns the read end. */
static int pipe_with(struct feeder *f, const void *p, size_t n, size_t chunk)
{
	int fds[2];

	signal(SIGPIPE, SIG_IGN);
	cr_assert_eq(pipe(fds), 0);
	f->fd = fds[1];
	f->p = p;
	f->n = n;
	f->chunk = chunk;
	cr_assert_eq(pthread_create(&f->thread, NULL, feed, f), 0);
	return fds[0];
}

static void pipe_done(struct feeder *f, int rfd)
{
	close(rfd);
	pthread_join(f->thread, NULL);
}

/* Open, read to the end; the final return of next() (0 or -errno). Never crashes. */
static int read_all(int fd, char *err_out, size_t err_len, size_t *nr_records)
{
	struct perfdata_reader *r = NULL;
	const struct perf_event_header *h;
	int ret = perfdata_reader_open(fd, "t.data", &r);
	size_t n = 0;

	if (!ret) {
		while ((ret = perfdata_reader_next(r, &h)) > 0) {
			n++;
			cr_assert_eq((uintptr_t)h % 8, 0, "record not 8-byte aligned");
			cr_assert_geq(h->size, 8);
		}
	}
	if (err_out)
		snprintf(err_out, err_len, "%s", r ? perfdata_reader_error(r) : "");
	if (nr_records)
		*nr_records = n;
	perfdata_reader_free(r);
	return ret;
}

/* ---- the scenario, checked record by record ------------------------------------ */

static void check_scenario(struct perfdata_reader *r, bool pipe)
{
	const struct perf_event_header *h;
	struct perfdata_sample s;
	struct perfdata_sample_id sid;
	const struct perfdata_event *ev;
	struct perfdata_mmap mm;
	struct perfdata_comm c;
	uint64_t prev_off = 0;
	int n = 0, nsamples = 0;

	cr_assert_eq(perfdata_reader_is_pipe(r), pipe);
	while (perfdata_reader_next(r, &h) == 1) {
		cr_assert_eq((uintptr_t)h % 8, 0, "record at %#lx not aligned",
			     (unsigned long)perfdata_reader_offset(r));
		cr_assert_gt(perfdata_reader_offset(r), prev_off);
		prev_off = perfdata_reader_offset(r);
		if (h->type == PERFDATA_RECORD_HEADER_ATTR || h->type == PERFDATA_RECORD_HEADER_FEATURE ||
		    h->type == PERFDATA_RECORD_HEADER_BUILD_ID) {
			cr_assert(pipe);
			continue;
		}
		switch (n++) {
		case 0:
			cr_assert_eq(h->type, PERF_RECORD_COMM);
			cr_assert_eq(perfdata_decode_comm(h, &c), 0);
			cr_assert_str_eq(c.comm, "app");
			cr_assert(c.exec);
			cr_assert_eq(perfdata_reader_parse_sample_id(r, h, &sid), 0);
			cr_assert_eq(sid.time, 1000);
			cr_assert_eq(sid.id, 10);
			break;
		case 1:
			cr_assert_eq(h->type, PERF_RECORD_MMAP2);
			cr_assert_eq(perfdata_decode_mmap2(h, &mm), 0);
			cr_assert_str_eq(mm.filename, "/usr/bin/app");
			cr_assert_eq(mm.build_id_size, 20);
			cr_assert_arr_eq(mm.build_id, app_bid, 20);
			cr_assert_eq(perfdata_reader_parse_sample_id(r, h, &sid), 0);
			cr_assert_eq(sid.time, 1001);
			break;
		case 2:
		case 3:
		case 4:
			cr_assert_eq(h->type, PERF_RECORD_SAMPLE);
			cr_assert_eq(perfdata_reader_parse_sample(r, h, &s, &ev), 0);
			cr_assert_eq(perfdata_reader_sample_event(r, h), ev);
			nsamples++;
			if (n == 3) {
				cr_assert_str_eq(ev->name, "cpu-clock");
				cr_assert_eq(s.id, 10);
				cr_assert_eq(s.tid, 101);
				cr_assert_eq(s.time, 2000);
				cr_assert_eq(s.cpu, 1);
				cr_assert_eq(s.period, 250000);
				cr_assert_eq(s.nr_callchain, 3);
				cr_assert_arr_eq(s.callchain, chain_a, sizeof(chain_a));
			} else if (n == 4) {
				cr_assert_str_eq(ev->name, "offcpu-time");
				cr_assert_eq(s.misc, PERF_RECORD_MISC_KERNEL);
				cr_assert_eq(s.period, 12345);
				cr_assert_eq(s.nr_callchain, 4);
				cr_assert_arr_eq(s.callchain, chain_b, sizeof(chain_b));
			} else {
				cr_assert_str_eq(ev->name, "cpu-clock");
				cr_assert_eq(s.id, 11);
				cr_assert_eq(s.ip, 0x402000);
			}
			cr_assert_eq(perfdata_reader_parse_sample_id(r, h, &sid), -EINVAL);
			break;
		case 5:
			cr_assert_eq(h->type, PERF_RECORD_LOST_SAMPLES);
			cr_assert_eq(perfdata_reader_parse_sample_id(r, h, &sid), 0);
			cr_assert_eq(sid.time, 2300);
			cr_assert_eq(sid.cpu, 1);
			cr_assert_eq(sid.id, 11);
			break;
		case 6:
			cr_assert_eq(h->type, PERFDATA_RECORD_FINISHED_ROUND);
			cr_assert_eq(h->size, 8);
			cr_assert_eq(perfdata_reader_parse_sample_id(r, h, &sid), 0);
			cr_assert_eq(sid.time, 0);
			break;
		}
	}
	cr_assert_eq(n, SCENARIO_RECORDS);
	cr_assert_eq(nsamples, 3);
	cr_assert_eq(perfdata_reader_next(r, &h), 0, "the end stays the end");
	cr_assert_null(h);
	cr_assert_str_eq(perfdata_reader_error(r), "");

	/* events and their names */
	cr_assert_eq(perfdata_reader_nr_events(r), 2);
	ev = perfdata_reader_event(r, 0);
	cr_assert_str_eq(ev->name, "cpu-clock");
	cr_assert_eq(ev->attr.sample_type, STYPE);
	cr_assert_eq(ev->attr.sample_period, 4000);
	cr_assert(ev->attr.freq);
	cr_assert(ev->attr.sample_id_all);
	cr_assert_eq(ev->nr_ids, 2);
	cr_assert_eq(ev->ids[1], 11);
	ev = perfdata_reader_event(r, 1);
	cr_assert_str_eq(ev->name, "offcpu-time");
	cr_assert_eq(ev->attr.config, PERF_COUNT_SW_BPF_OUTPUT);
	cr_assert_eq(ev->nr_ids, 1);
	cr_assert_null(perfdata_reader_event(r, 2));

	/* features */
	size_t size;
	const uint32_t *nrcpus = perfdata_reader_feature(r, PERFDATA_FEAT_NRCPUS, &size);

	cr_assert_str_eq(perfdata_reader_feature_string(r, PERFDATA_FEAT_HOSTNAME), "testhost");
	cr_assert_not_null(nrcpus);
	cr_assert_eq(size, 8);
	cr_assert_eq(nrcpus[0], 4);
	cr_assert_eq(nrcpus[1], 2);
	cr_assert_null(perfdata_reader_feature(r, PERFDATA_FEAT_ARCH, &size));
	cr_assert_eq(size, 0);
	cr_assert_null(perfdata_reader_feature_string(r, PERFDATA_FEAT_OSRELEASE));
	cr_assert_null(perfdata_reader_feature(r, PERFDATA_FEAT_LAST, &size),
		       "perf's end-of-features marker is not a feature");
}

struct bid_seen {
	int n;
	bool kernel, app;
};

static int collect_bid(const struct perfdata_build_id *b, void *ctx)
{
	struct bid_seen *seen = ctx;

	seen->n++;
	cr_assert_eq(b->size, 20);
	cr_assert_eq(b->pid, -1);
	if (!strcmp(b->filename, "[kernel.kallsyms]")) {
		cr_assert_eq(b->cpumode, PERF_RECORD_MISC_KERNEL);
		cr_assert_arr_eq(b->id, kernel_bid, 20);
		seen->kernel = true;
	} else if (!strcmp(b->filename, "/usr/bin/app")) {
		cr_assert_eq(b->cpumode, PERF_RECORD_MISC_USER);
		cr_assert_arr_eq(b->id, app_bid, 20);
		seen->app = true;
	}
	return 0;
}

static void check_build_ids(struct perfdata_reader *r)
{
	struct bid_seen seen = { 0 };

	cr_assert_eq(perfdata_reader_for_each_build_id(r, collect_bid, &seen), 0);
	cr_assert_eq(seen.n, 2);
	cr_assert(seen.kernel && seen.app);
}

Test(reader_file, two_events_records_features_build_ids)
{
	struct img f = { 0 };
	int fd;
	struct perfdata_reader *r;

	scenario_file(&f, 128);
	fd = memfd_with(f.b, f.len);
	r = trip_reader(fd, "t.data");
	/* file mode knows events, names and build-ids before the first record */
	cr_assert_eq(perfdata_reader_nr_events(r), 2);
	cr_assert_str_eq(perfdata_reader_event(r, 1)->name, "offcpu-time");
	check_build_ids(r);
	check_scenario(r, false);
	perfdata_reader_free(r);
	close(fd);
	img_free(&f);
}

Test(reader_pipe, two_events_through_a_real_pipe_in_small_writes)
{
	struct img p = { 0 };
	struct feeder fe;
	struct perfdata_reader *r;
	int fd;

	scenario_pipe(&p, 128);
	fd = pipe_with(&fe, p.b, p.len, 7);	/* 7-byte writes: every read is partial */
	r = trip_reader(fd, "t.data");
	cr_assert_eq(perfdata_reader_nr_events(r), 0, "pipe events arrive as records");
	check_scenario(r, true);
	check_build_ids(r);
	perfdata_reader_free(r);
	pipe_done(&fe, fd);
	img_free(&p);
}

Test(reader_pipe, pipe_mode_from_a_regular_file)
{
	struct img p = { 0 };
	struct perfdata_reader *r;
	int fd;

	scenario_pipe(&p, 128);
	fd = memfd_with(p.b, p.len);
	r = trip_reader(fd, "t.data");
	check_scenario(r, true);
	check_build_ids(r);
	perfdata_reader_free(r);
	close(fd);
	img_free(&p);
}

Test(reader_pipe, absorbed_records_are_yielded_after_absorbing)
{
	struct img p = { 0 };
	struct perfdata_reader *r;
	const struct perf_event_header *h;
	int fd, attrs = 0;

	scenario_pipe(&p, 128);
	fd = memfd_with(p.b, p.len);
	r = trip_reader(fd, "t.data");
	while (perfdata_reader_next(r, &h) == 1) {
		if (h->type == PERFDATA_RECORD_HEADER_ATTR)
			cr_assert_eq(perfdata_reader_nr_events(r), (size_t)++attrs);
		if (h->type == PERFDATA_RECORD_HEADER_FEATURE) {
			uint64_t feat;

			memcpy(&feat, h + 1, 8);
			if (feat == PERFDATA_FEAT_EVENT_DESC)
				cr_assert_str_eq(perfdata_reader_event(r, 1)->name, "offcpu-time");
		}
	}
	cr_assert_eq(attrs, 2);
	perfdata_reader_free(r);
	close(fd);
	img_free(&p);
}

Test(reader_pipe, event_desc_before_the_attrs_still_names_them)
{
	struct img p = { 0 }, data = { 0 };
	struct feat f = { .id = PERFDATA_FEAT_EVENT_DESC };
	struct perfdata_reader *r;
	const struct perf_event_header *h;
	int fd;

	event_desc(&f.payload, two_events, 2, 128);
	put(&p, &(struct perfdata_pipe_header){ PERFDATA_MAGIC, 16 }, 16);
	pipe_header_feature(&p, &f);
	pipe_header_attr(&p, &two_events[1], 128);	/* order differs from the desc */
	pipe_header_attr(&p, &two_events[0], 128);
	fd = memfd_with(p.b, p.len);
	r = trip_reader(fd, "t.data");
	while (perfdata_reader_next(r, &h) == 1)
		;
	cr_assert_eq(perfdata_reader_nr_events(r), 2);
	cr_assert_str_eq(perfdata_reader_event(r, 0)->name, "offcpu-time");
	cr_assert_str_eq(perfdata_reader_event(r, 1)->name, "cpu-clock");
	perfdata_reader_free(r);
	close(fd);
	img_free(&p);
	img_free(&data);
	img_free(&f.payload);
}

Test(reader_pipe, later_feature_record_replaces_earlier)
{
	struct img p = { 0 };
	struct feat a = { .id = PERFDATA_FEAT_HOSTNAME }, b = { .id = PERFDATA_FEAT_HOSTNAME };
	struct perfdata_reader *r;
	const struct perf_event_header *h;
	int fd;

	fstr(&a.payload, "first");
	fstr(&b.payload, "second");
	put(&p, &(struct perfdata_pipe_header){ PERFDATA_MAGIC, 16 }, 16);
	pipe_header_attr(&p, &two_events[0], 128);
	pipe_header_feature(&p, &a);
	pipe_header_feature(&p, &b);
	fd = memfd_with(p.b, p.len);
	r = trip_reader(fd, "t.data");
	cr_assert_null(perfdata_reader_feature_string(r, PERFDATA_FEAT_HOSTNAME));
	while (perfdata_reader_next(r, &h) == 1)
		;
	cr_assert_str_eq(perfdata_reader_feature_string(r, PERFDATA_FEAT_HOSTNAME), "second");
	perfdata_reader_free(r);
	close(fd);
	img_free(&p);
	img_free(&a.payload);
	img_free(&b.payload);
}

/* ---- events and ids --------------------------------------------------------------- */

Test(reader_events, single_event_without_ids_takes_every_sample)
{
	struct ev_spec one = { "task-clock", { .type = PERF_TYPE_SOFTWARE, .config = 1,
					      .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID,
					      .sample_period = 1000 } , { 0 }, 0 };
	struct img data = { 0 }, f = { 0 };
	struct perfdata_reader *r;
	const struct perf_event_header *h;
	struct perfdata_sample s;
	const struct perfdata_event *ev;
	struct feat desc = { .id = PERFDATA_FEAT_EVENT_DESC };
	int fd;

	begin(&data, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	u64(&data, 0x1234);
	u32x2(&data, 5, 6);
	end(&data);
	event_desc(&desc.payload, &one, 1, 128);
	build_file(&f, &one, 1, 128, &data, &desc, 1);
	fd = memfd_with(f.b, f.len);
	r = trip_reader(fd, "t.data");
	cr_assert_eq(perfdata_reader_next(r, &h), 1);
	cr_assert_eq(perfdata_reader_parse_sample(r, h, &s, &ev), 0);
	cr_assert_str_eq(ev->name, "task-clock");
	cr_assert_eq(s.ip, 0x1234);
	cr_assert_eq(s.tid, 6);
	cr_assert_eq(s.period, 1000, "fixed period without PERIOD in sample_type");
	/* no sample_id_all: a trailer query gives zeros */
	perfdata_reader_free(r);
	close(fd);
	img_free(&f);
	img_free(&data);
	img_free(&desc.payload);
}

Test(reader_events, unknown_id_and_id_zero_with_two_events)
{
	struct img data = { 0 }, f = { 0 };
	struct perfdata_reader *r;
	const struct perf_event_header *h;
	struct perfdata_sample s;
	const struct perfdata_event *ev = (void *)1;
	int fd;

	sample(&data, 99, PERF_RECORD_MISC_USER, 1, 1, 1, 1, 0, 1, chain_a, 3);
	sample(&data, 0, PERF_RECORD_MISC_USER, 1, 1, 1, 1, 0, 1, chain_a, 3);
	sample(&data, 20, PERF_RECORD_MISC_USER, 1, 1, 1, 1, 0, 1, chain_a, 3);
	build_file(&f, two_events, 2, 128, &data, NULL, 0);
	fd = memfd_with(f.b, f.len);
	r = trip_reader(fd, "t.data");
	cr_assert_null(perfdata_reader_event(r, 0)->name, "no EVENT_DESC: no names");
	cr_assert_eq(perfdata_reader_next(r, &h), 1);
	cr_assert_null(perfdata_reader_sample_event(r, h));
	cr_assert_eq(perfdata_reader_parse_sample(r, h, &s, &ev), -ENOENT);
	cr_assert_null(ev);
	cr_assert_eq(perfdata_reader_next(r, &h), 1);
	cr_assert_eq(perfdata_reader_sample_event(r, h), perfdata_reader_event(r, 0),
		     "perf gives id 0 (synthesized) to the first event");
	cr_assert_eq(perfdata_reader_next(r, &h), 1);
	cr_assert_eq(perfdata_reader_sample_event(r, h), perfdata_reader_event(r, 1));
	cr_assert_eq(perfdata_reader_next(r, &h), 0);
	perfdata_reader_free(r);
	close(fd);
	img_free(&f);
	img_free(&data);
}

Test(reader_events, sample_id_by_id_position_without_identifier)
{
	/* perf's own pipe files: sample_type has ID, not IDENTIFIER. */
	struct ev_spec evs[2] = {
		{ "a", { .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ID,
			 .sample_id_all = 1 }, { 5 }, 1 },
		{ "b", { .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ID,
			 .sample_id_all = 1 }, { 6 }, 1 },
	};
	struct img data = { 0 }, f = { 0 };
	struct perfdata_reader *r;
	const struct perf_event_header *h;
	struct perfdata_sample s;
	const struct perfdata_event *ev;
	int fd;

	begin(&data, PERF_RECORD_SAMPLE, 0);
	u64(&data, 0xabc);
	u32x2(&data, 1, 2);
	u64(&data, 6);
	end(&data);
	build_pipe(&f, evs, 2, 128, &data, NULL, 0);
	fd = memfd_with(f.b, f.len);
	r = trip_reader(fd, "t.data");
	do
		cr_assert_eq(perfdata_reader_next(r, &h), 1);
	while (h->type != PERF_RECORD_SAMPLE);
	cr_assert_eq(perfdata_reader_parse_sample(r, h, &s, &ev), 0);
	cr_assert_eq(ev, perfdata_reader_event(r, 1));
	cr_assert_eq(s.id, 6);
	cr_assert_eq(s.ip, 0xabc);
	perfdata_reader_free(r);
	close(fd);
	img_free(&f);
	img_free(&data);
}

static void check_attr_size(uint32_t attr_bytes, bool pipe)
{
	struct img img = { 0 };
	struct perfdata_reader *r;
	const struct perf_event_header *h;
	int fd, samples = 0;

	if (pipe)
		scenario_pipe(&img, attr_bytes);
	else
		scenario_file(&img, attr_bytes);
	fd = memfd_with(img.b, img.len);
	r = trip_reader(fd, "t.data");
	while (perfdata_reader_next(r, &h) == 1) {
		struct perfdata_sample s;

		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		cr_assert_eq(perfdata_reader_parse_sample(r, h, &s, NULL), 0);
		samples++;
	}
	cr_assert_str_eq(perfdata_reader_error(r), "");
	cr_assert_eq(samples, 3);
	cr_assert_eq(perfdata_reader_nr_events(r), 2);
	for (size_t i = 0; i < 2; i++) {
		const struct perfdata_event *ev = perfdata_reader_event(r, i);

		cr_assert_eq(ev->attr.size, attr_bytes);
		cr_assert_eq(ev->attr.sample_type, STYPE);
		cr_assert(ev->attr.sample_id_all);
		cr_assert_eq(ev->nr_ids, two_events[i].nr_ids);
		cr_assert_eq(ev->ids[0], two_events[i].ids[0]);
		cr_assert_str_eq(ev->name, two_events[i].name);
	}
	perfdata_reader_free(r);
	close(fd);
	img_free(&img);
}

Test(reader_events, attrs_of_64_and_136_bytes_file_mode)
{
	check_attr_size(PERF_ATTR_SIZE_VER0, false);
	check_attr_size(136, false);
	check_attr_size(72, false);
}

Test(reader_events, attrs_of_64_and_136_bytes_pipe_mode)
{
	check_attr_size(PERF_ATTR_SIZE_VER0, true);
	check_attr_size(136, true);
}

Test(reader_file, pre_features_72_byte_header)
{
	struct img f = { 0 };
	struct perfdata_reader *r;
	size_t size;
	int fd;

	scenario_file(&f, 128);
	set_u64(&f, 8, 72);	/* header size without the feature bitmap */
	fd = memfd_with(f.b, f.len);
	r = trip_reader(fd, "t.data");
	cr_assert_null(perfdata_reader_feature(r, PERFDATA_FEAT_HOSTNAME, &size),
		       "a 72-byte header has no feature bits");
	cr_assert_null(perfdata_reader_event(r, 0)->name);
	perfdata_reader_free(r);
	close(fd);
	img_free(&f);
}

/* ---- payloads outside records, odd records ---------------------------------------- */

static void payload_records(struct img *data)
{
	/* TRACING_DATA: {header, u32 size} then size bytes (padded to 8) outside the record */
	begin(data, PERFDATA_RECORD_HEADER_TRACING_DATA, 0);
	u32(data, 13);
	zeros(data, 4);
	end(data);
	memset(data->b + data->len, 0, 0);
	for (int i = 0; i < 16; i++)
		put(data, "\xff", 1);	/* 13 bytes + 3 padding, all junk if parsed as records */
	/* AUXTRACE: {header, u64 size, offset, reference, u32 idx, tid, cpu, res} + size bytes */
	begin(data, PERFDATA_RECORD_AUXTRACE, 0);
	u64(data, 24);
	u64(data, 0);
	u64(data, 0);
	u32x2(data, 0, 0);
	u32x2(data, 0, 0);
	end(data);
	for (int i = 0; i < 24; i++)
		put(data, "\0", 1);	/* zeros would read as a size-0 record */
	/* COMPRESSED is yielded, then what it inflates to: here one FINISHED_ROUND */
	{
		struct perf_event_header round = { PERFDATA_RECORD_FINISHED_ROUND, 0, 8 };
		uint8_t z[64];
		struct perfdata_zstd_buf in = { &round, sizeof(round), 0 }, out = { z, sizeof(z), 0 };
		struct perfdata_zstd_enc *e;

		cr_assert_eq(perfdata_zstd_enc_new(1, &e), 0);
		cr_assert_eq(perfdata_zstd_compress(e, &in, &out, true), 0);
		perfdata_zstd_enc_free(e);
		begin(data, PERFDATA_RECORD_COMPRESSED, 0);
		put(data, z, out.pos);
		end(data);	/* unpadded: user types need not be multiples of 8 */
	}
	begin(data, PERFDATA_RECORD_FINISHED_ROUND, 0);
	end(data);
}

static void check_payload_records(struct perfdata_reader *r)
{
	const struct perf_event_header *h;
	uint32_t types[8];
	int n = 0;

	while (perfdata_reader_next(r, &h) == 1) {
		if (h->type == PERFDATA_RECORD_HEADER_ATTR || h->type == PERFDATA_RECORD_HEADER_FEATURE)
			continue;
		cr_assert_lt(n, 8);
		types[n++] = h->type;
		cr_assert_eq(perfdata_reader_in_compressed(r), n == 4);
	}
	cr_assert_str_eq(perfdata_reader_error(r), "");
	cr_assert_eq(n, 5);
	cr_assert_eq(types[0], PERFDATA_RECORD_HEADER_TRACING_DATA);
	cr_assert_eq(types[1], PERFDATA_RECORD_AUXTRACE);
	cr_assert_eq(types[2], PERFDATA_RECORD_COMPRESSED);
	cr_assert_eq(types[3], PERFDATA_RECORD_FINISHED_ROUND);	/* from inside it */
	cr_assert_eq(types[4], PERFDATA_RECORD_FINISHED_ROUND);
}

Test(reader_records, payloads_after_tracing_data_and_auxtrace_are_skipped)
{
	struct img data = { 0 }, f = { 0 }, p = { 0 };
	struct perfdata_reader *r;
	struct feeder fe;
	int fd;

	payload_records(&data);
	build_file(&f, two_events, 1, 128, &data, NULL, 0);
	fd = memfd_with(f.b, f.len);
	r = trip_reader(fd, "t.data");
	check_payload_records(r);
	perfdata_reader_free(r);
	close(fd);

	build_pipe(&p, two_events, 1, 128, &data, NULL, 0);
	fd = pipe_with(&fe, p.b, p.len, 5);
	r = trip_reader(fd, "t.data");
	check_payload_records(r);
	perfdata_reader_free(r);
	pipe_done(&fe, fd);
	img_free(&f);
	img_free(&p);
	img_free(&data);
}

/* ---- errors ------------------------------------------------------------------------ */

/* Expect open or reading to fail with `err` and a message containing `needle`. */
static void expect_error(const struct img *m, int err, const char *needle)
{
	char msg[512];
	int fd = memfd_with(m->b, m->len);
	int ret = read_all(fd, msg, sizeof(msg), NULL);

	cr_assert_eq(ret, err, "expected %d, got %d (%s)", err, ret, msg);
	cr_assert_not_null(strstr(msg, needle), "message \"%s\" lacks \"%s\"", msg, needle);
	cr_assert_not_null(strstr(msg, "t.data: "), "message \"%s\" names no file", msg);
	cr_assert_null(strchr(msg, '\n'), "one line only");
	close(fd);
}

/* Size of the header + ids + attrs of the 2-event scenario: where data starts. */
static size_t scenario_data_offset(const struct img *f)
{
	uint64_t off;

	memcpy(&off, f->b + 40, 8);
	return (size_t)off;
}

Test(reader_errors, not_perf_data)
{
	struct img m = { 0 };

	expect_error(&m, -EINVAL, "empty");
	put(&m, "PERFI", 5);
	expect_error(&m, -EINVAL, "bad magic at offset 0");
	img_free(&m);
	put(&m, "#!/bin/sh\necho hello world\n", 27);
	expect_error(&m, -EINVAL, "bad magic");
	img_free(&m);
	u64(&m, __builtin_bswap64(PERFDATA_MAGIC));
	u64(&m, __builtin_bswap64(104));
	expect_error(&m, -EINVAL, "big-endian");
	img_free(&m);
	put(&m, "PERFFILE", 8);
	u64(&m, 104);
	expect_error(&m, -EINVAL, "version 1");
	img_free(&m);
	u64(&m, PERFDATA_MAGIC);
	expect_error(&m, -EINVAL, "cut short");
	u64(&m, 50);
	expect_error(&m, -EINVAL, "header size at offset 8 is 50");
	img_free(&m);
}

Test(reader_errors, sections_past_the_end_of_the_file)
{
	struct img f = { 0 }, g = { 0 };

	scenario_file(&f, 128);
	/* cut in the middle of the data: data.size promises more than there is */
	put(&g, f.b, scenario_data_offset(&f) + 40);
	expect_error(&g, -EINVAL, "data section [");
	expect_error(&g, -EINVAL, "past the end of the file");
	img_free(&g);

	/* header only */
	put(&g, f.b, 104);
	expect_error(&g, -EINVAL, "attrs section");
	img_free(&g);

	/* everything but the last byte of the last feature */
	put(&g, f.b, f.len - 1);
	expect_error(&g, -EINVAL, "feature 12 section");
	img_free(&g);

	/* the feature table itself missing */
	uint64_t data_end;

	memcpy(&data_end, f.b + 40, 8);
	data_end += *(uint64_t *)(f.b + 48);
	put(&g, f.b, (size_t)data_end + 8);
	expect_error(&g, -EINVAL, "feature table at offset");
	img_free(&g);

	/* an attr's ids section pointing outside */
	put(&g, f.b, f.len);
	set_u64(&g, *(uint64_t *)(f.b + 24) + 128, 1ULL << 40);
	expect_error(&g, -EINVAL, "ids section");
	img_free(&g);
	img_free(&f);
}

Test(reader_errors, absurd_counts_and_sizes)
{
	struct img f = { 0 }, g = { 0 };
	int fd;
	char msg[512];

	scenario_file(&f, 128);

	/* attr_size too small to be an attr */
	put(&g, f.b, f.len);
	set_u64(&g, 16, 8);
	expect_error(&g, -EINVAL, "attr_size 8 is impossible");
	img_free(&g);

	/* 5000 attrs in a file big enough to hold them (sparse) */
	put(&g, f.b, f.len);
	set_u64(&g, 24, 4096);		/* attrs.offset */
	set_u64(&g, 32, 5000 * 144);	/* attrs.size */
	fd = memfd_with(g.b, g.len);
	cr_assert_eq(ftruncate(fd, 4096 + 5000 * 144 + 4096), 0);
	cr_assert_eq(read_all(fd, msg, sizeof(msg), NULL), -EINVAL);
	cr_assert_not_null(strstr(msg, "5000 attrs, over the limit"), "%s", msg);
	close(fd);
	img_free(&g);

	/* an ids section of 4Mi+1 ids, inside a (sparse) file */
	put(&g, f.b, f.len);
	uint64_t attrs_off = *(uint64_t *)(f.b + 24);

	set_u64(&g, attrs_off + 128, 1ULL << 20);		/* ids.offset */
	set_u64(&g, attrs_off + 136, ((1ULL << 22) + 1) * 8);	/* ids.size */
	fd = memfd_with(g.b, g.len);
	cr_assert_eq(ftruncate(fd, (1 << 20) + ((1 << 22) + 1) * 8 + 4096), 0);
	cr_assert_eq(read_all(fd, msg, sizeof(msg), NULL), -EINVAL);
	cr_assert_not_null(strstr(msg, "4194305 ids, over the limit"), "%s", msg);
	close(fd);
	img_free(&g);

	/* a 65 MiB feature section */
	put(&g, f.b, f.len);
	uint64_t table = *(uint64_t *)(f.b + 40) + *(uint64_t *)(f.b + 48);

	set_u64(&g, table + 16 + 8, 65ULL << 20);	/* HOSTNAME's size (second bit set) */
	fd = memfd_with(g.b, g.len);
	cr_assert_eq(ftruncate(fd, (off_t)(g.len + (65 << 20))), 0);
	cr_assert_eq(read_all(fd, msg, sizeof(msg), NULL), -EINVAL);
	cr_assert_not_null(strstr(msg, "feature 3 at offset"), "%s", msg);
	cr_assert_not_null(strstr(msg, "over the limit"), "%s", msg);
	close(fd);
	img_free(&g);
	img_free(&f);
}

Test(reader_errors, malformed_features)
{
	struct img data = { 0 }, f = { 0 };
	struct feat bad = { .id = PERFDATA_FEAT_EVENT_DESC };

	scenario_records(&data);
	/* EVENT_DESC claiming 3 descriptions but holding one */
	event_desc(&bad.payload, two_events, 1, 128);
	set_u64(&bad.payload, 0, 3 | (128ULL << 32));
	build_file(&f, two_events, 2, 128, &data, &bad, 1);
	expect_error(&f, -EINVAL, "EVENT_DESC feature: description 1 of 3 runs past its end");
	img_free(&f);
	img_free(&bad.payload);

	/* BUILD_ID entry with a size running past the section */
	bad.id = PERFDATA_FEAT_BUILD_ID;
	build_id_entry(&bad.payload, 0, PERF_RECORD_MISC_USER, app_bid, "/x");
	set_u16(&bad.payload, 6, 200);
	build_file(&f, two_events, 2, 128, &data, &bad, 1);
	expect_error(&f, -EINVAL, "BUILD_ID feature at offset");
	img_free(&f);
	img_free(&bad.payload);
	img_free(&data);
}

/* A one-event file whose data is `data`; errors are checked in the records. */
static void record_error(void (*fill)(struct img *), int err, const char *needle)
{
	struct img data = { 0 }, f = { 0 };

	fill(&data);
	build_file(&f, two_events, 1, 128, &data, NULL, 0);
	expect_error(&f, err, needle);
	img_free(&f);
	img_free(&data);
}

static void fill_size0(struct img *d)
{
	begin(d, PERFDATA_RECORD_FINISHED_ROUND, 0);
	end(d);
	begin(d, PERF_RECORD_SAMPLE, 0);
	u64(d, 0);
	set_u16(d, d->rec + 6, 0);
}

static void fill_size4(struct img *d)
{
	begin(d, PERF_RECORD_SAMPLE, 0);
	u64(d, 0);
	set_u16(d, d->rec + 6, 4);
}

static void fill_size12(struct img *d)
{
	begin(d, PERF_RECORD_MMAP, 0);
	u64(d, 0);
	set_u16(d, d->rec + 6, 12);
	zeros(d, 4);
}

static void fill_past_end(struct img *d)
{
	begin(d, PERF_RECORD_SAMPLE, 0);
	u64(d, 0);
	set_u16(d, d->rec + 6, 64);	/* data.size ends after 16 bytes */
}

static void fill_odd_user_record(struct img *d)
{
	build_id_entry(d, PERFDATA_RECORD_HEADER_BUILD_ID, PERF_RECORD_MISC_USER, app_bid, "/x");
	begin(d, PERFDATA_RECORD_FINISHED_ROUND, 0);
	end(d);
	/* then something broken, so expect_error has an error to find */
	begin(d, PERF_RECORD_SAMPLE, 0);
	set_u16(d, d->rec + 6, 0);
}

Test(reader_errors, bad_record_sizes)
{
	record_error(fill_size0, -EINVAL, "has size 0, below the 8-byte header");
	record_error(fill_size0, -EINVAL, "record at offset 0x");
	record_error(fill_size4, -EINVAL, "has size 4");
	record_error(fill_size12, -EINVAL, "has size 12, not a multiple of 8");
	record_error(fill_past_end, -EINVAL, "runs past the end of the data section");
	/* a 100-byte HEADER_BUILD_ID (perf's size) is fine; the size-0 after it is not */
	record_error(fill_odd_user_record, -EINVAL, "size 0");
}

Test(reader_errors, error_offset_is_the_bad_record)
{
	struct img data = { 0 }, f = { 0 };
	char msg[512], want[64];
	size_t n;
	int fd;

	fill_size0(&data);
	build_file(&f, two_events, 1, 128, &data, NULL, 0);
	fd = memfd_with(f.b, f.len);
	cr_assert_eq(read_all(fd, msg, sizeof(msg), &n), -EINVAL);
	cr_assert_eq(n, 1, "the record before the bad one was yielded");
	snprintf(want, sizeof(want), "offset %#zx ", scenario_data_offset(&f) + 8);
	cr_assert_not_null(strstr(msg, want), "\"%s\" lacks \"%s\"", msg, want);
	close(fd);
	img_free(&f);
	img_free(&data);
}

Test(reader_errors, errors_are_sticky)
{
	struct img data = { 0 }, f = { 0 };
	struct perfdata_reader *r;
	const struct perf_event_header *h;
	int fd;

	fill_size4(&data);
	build_file(&f, two_events, 1, 128, &data, NULL, 0);
	fd = memfd_with(f.b, f.len);
	r = trip_reader(fd, "t.data");
	cr_assert_eq(perfdata_reader_next(r, &h), -EINVAL);
	cr_assert_null(h);
	cr_assert_eq(perfdata_reader_next(r, &h), -EINVAL);
	cr_assert_not_null(strstr(perfdata_reader_error(r), "size 4"));
	perfdata_reader_free(r);
	close(fd);
	img_free(&f);
	img_free(&data);
}

Test(reader_errors, truncated_pipe_streams)
{
	struct img p = { 0 }, g = { 0 };
	char msg[512];
	int fd;

	scenario_pipe(&p, 128);
	/* cut inside the last record (FINISHED_ROUND is 8 bytes: cut 4 of them) */
	put(&g, p.b, p.len - 4);
	fd = memfd_with(g.b, g.len);
	cr_assert_eq(read_all(fd, msg, sizeof(msg), NULL), -EINVAL);
	cr_assert_not_null(strstr(msg, "cut short"), "%s", msg);
	close(fd);
	img_free(&g);
	/* cut inside a sample's body */
	put(&g, p.b, p.len - 8 - 40 - 20);
	fd = memfd_with(g.b, g.len);
	cr_assert_eq(read_all(fd, msg, sizeof(msg), NULL), -EINVAL);
	cr_assert_not_null(strstr(msg, "is truncated: the stream ends after"), "%s", msg);
	close(fd);
	img_free(&g);
	img_free(&p);
}

Test(reader_errors, killed_recorder_left_data_size_zero)
{
	struct img f = { 0 };
	char msg[512];
	size_t n;
	int fd;

	scenario_file(&f, 128);
	set_u64(&f, 48, 0);				/* data.size never patched */
	memset(f.b + 72, 0, 32);			/* and no features yet */
	f.len = scenario_data_offset(&f) + 64;		/* some records were written */
	fd = memfd_with(f.b, f.len);
	cr_assert_eq(read_all(fd, msg, sizeof(msg), &n), -ENODATA);
	cr_assert_eq(n, 0);
	cr_assert_not_null(strstr(msg, "data.size in the header is 0"), "%s", msg);
	cr_assert_not_null(strstr(msg, "did not finish"), "%s", msg);
	close(fd);

	/* a finished recording without records is just empty */
	f.len = scenario_data_offset(&f);
	fd = memfd_with(f.b, f.len);
	cr_assert_eq(read_all(fd, msg, sizeof(msg), &n), 0, "%s", msg);
	cr_assert_eq(n, 0);
	close(fd);
	img_free(&f);
}

Test(reader_errors, file_mode_needs_a_seekable_fd)
{
	struct img f = { 0 };
	struct feeder fe;
	char msg[512];
	int fd;

	scenario_file(&f, 128);
	fd = pipe_with(&fe, f.b, f.len, 4096);
	cr_assert_eq(read_all(fd, msg, sizeof(msg), NULL), -EINVAL);
	cr_assert_not_null(strstr(msg, "needs a seekable file"), "%s", msg);
	pipe_done(&fe, fd);
	img_free(&f);
}

Test(reader_errors, malformed_pipe_attrs)
{
	struct img p = { 0 };

	put(&p, &(struct perfdata_pipe_header){ PERFDATA_MAGIC, 16 }, 16);
	begin(&p, PERFDATA_RECORD_HEADER_ATTR, 0);
	zeros(&p, 32);
	end(&p);
	expect_error(&p, -EINVAL, "too small for an attr");
	img_free(&p);

	put(&p, &(struct perfdata_pipe_header){ PERFDATA_MAGIC, 16 }, 16);
	pipe_header_attr(&p, &two_events[0], 128);
	memcpy(p.b + 16 + 8 + 4, &(uint32_t){ 4096 }, 4);	/* attr.size */
	expect_error(&p, -EINVAL, "attr.size 4096 does not fit");
	img_free(&p);
}

/* ---- every truncation, random mutations ------------------------------------------ */

/* Record boundaries of a pipe image, to know where a cut is a clean end. */
static bool is_record_boundary(const struct img *p, size_t at)
{
	size_t off = 16;

	while (off < p->len) {
		uint16_t size;

		if (off == at)
			return true;
		memcpy(&size, p->b + off + 6, 2);
		off += size;
	}
	return off == at;
}

Test(reader_robust, every_truncation_of_a_file)
{
	struct img f = { 0 };
	size_t full;

	scenario_file(&f, 128);
	full = f.len;
	int whole = memfd_with(f.b, full);

	cr_assert_eq(read_all(whole, NULL, 0, NULL), 0);
	close(whole);
	for (size_t len = 0; len < full; len++) {
		char msg[512];
		int fd = memfd_with(f.b, len);
		int ret = read_all(fd, msg, sizeof(msg), NULL);

		/* every byte of a file-mode file is covered by some section */
		cr_assert_lt(ret, 0, "a %zu-byte cut of %zu bytes read cleanly", len, full);
		cr_assert_neq(msg[0], '\0');
		close(fd);
	}
	img_free(&f);
}

Test(reader_robust, every_truncation_of_a_pipe)
{
	struct img p = { 0 };

	scenario_pipe(&p, 128);
	for (size_t len = 0; len <= p.len; len++) {
		char msg[512];
		int fd = memfd_with(p.b, len);
		int ret = read_all(fd, msg, sizeof(msg), NULL);

		if (len >= 16 && is_record_boundary(&p, len))
			cr_assert_eq(ret, 0, "cut at record boundary %zu: %s", len, msg);
		else
			cr_assert_lt(ret, 0, "cut at %zu inside a record read cleanly", len);
		close(fd);
	}
	img_free(&p);
}

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static int check_any_bid(const struct perfdata_build_id *b, void *ctx)
{
	(void)ctx;
	cr_assert_leq(b->size, PERFDATA_BUILD_ID_MAX);
	cr_assert_not_null(b->filename);
	/* Cut at the end of its record, whatever the bytes: a record holds at most 64 KiB. */
	cr_assert_leq(strlen(b->filename), UINT16_MAX - PERFDATA_BUILD_ID_RECORD_SIZE);
	return 0;
}

/* Read everything a reader yields and decode it every way the API allows. */
static void consume_everything(int fd)
{
	struct perfdata_reader *r = NULL;
	const struct perf_event_header *h;
	size_t size;
	int ret;

	if (perfdata_reader_open(fd, "fuzz", &r) == 0) {
		int guard = 0;

		while ((ret = perfdata_reader_next(r, &h)) > 0) {
			struct perfdata_sample s;
			struct perfdata_sample_id sid;
			struct perfdata_mmap m;
			struct perfdata_comm c;
			struct perfdata_task t;

			cr_assert_lt(++guard, 100000, "reader does not make progress");
			if (h->type == PERF_RECORD_SAMPLE) {
				if (perfdata_reader_parse_sample(r, h, &s, NULL) == 0 && s.nr_callchain)
					cr_assert_leq((const uint8_t *)(s.callchain + s.nr_callchain),
						      (const uint8_t *)h + h->size);
			} else {
				perfdata_reader_parse_sample_id(r, h, &sid);
			}
			if (h->type == PERF_RECORD_MMAP)
				perfdata_decode_mmap(h, &m);
			if (h->type == PERF_RECORD_MMAP2)
				perfdata_decode_mmap2(h, &m);
			if (h->type == PERF_RECORD_COMM)
				perfdata_decode_comm(h, &c);
			if (h->type == PERF_RECORD_FORK || h->type == PERF_RECORD_EXIT)
				perfdata_decode_task(h, &t);
		}
		cr_assert_leq(ret, 0);
	}
	if (r) {
		for (unsigned int f = 0; f < PERFDATA_FEAT_BITS; f++) {
			perfdata_reader_feature(r, f, &size);
			perfdata_reader_feature_string(r, f);
		}
		for (size_t i = 0; i < perfdata_reader_nr_events(r); i++)
			cr_assert_not_null(perfdata_reader_event(r, i));
		perfdata_reader_for_each_build_id(r, check_any_bid, NULL);
	}
	perfdata_reader_free(r);
}

static void mutate_and_read(const struct img *orig, uint64_t seed, int rounds)
{
	uint64_t x = seed;
	struct img m = { 0 };

	put(&m, orig->b, orig->len);
	for (int i = 0; i < rounds; i++) {
		memcpy(m.b, orig->b, orig->len);
		m.len = orig->len;
		int flips = 1 + (int)(xorshift(&x) % 8);

		for (int k = 0; k < flips; k++) {
			size_t at = xorshift(&x) % m.len;

			switch (xorshift(&x) % 4) {
			case 0:	/* random byte */
				m.b[at] = (uint8_t)xorshift(&x);
				break;
			case 1:	/* bit flip */
				m.b[at] ^= (uint8_t)(1u << (xorshift(&x) % 8));
				break;
			case 2:	/* a random u16 (record sizes, counts) */
				if (at + 2 <= m.len)
					set_u16(&m, at, (uint16_t)xorshift(&x));
				break;
			case 3:	/* small or huge u64 */
				if (at + 8 <= m.len)
					set_u64(&m, at, xorshift(&x) % 2 ? xorshift(&x) % 512
									: xorshift(&x));
				break;
			}
		}
		if (xorshift(&x) % 8 == 0)
			m.len = xorshift(&x) % m.len;
		int fd = memfd_with(m.b, m.len);

		consume_everything(fd);
		close(fd);
	}
	img_free(&m);
}

Test(reader_robust, seeded_random_mutations_file_mode)
{
	struct img f = { 0 };

	scenario_file(&f, 128);
	mutate_and_read(&f, 0x1234567887654321ULL, 3000);
	img_free(&f);
}

Test(reader_robust, seeded_random_mutations_pipe_mode)
{
	struct img p = { 0 };

	scenario_pipe(&p, 128);
	mutate_and_read(&p, 0xfeedfacecafebeefULL, 3000);
	img_free(&p);
}

/* ---- streaming: many records, buffer refills, bounded memory --------------------- */

#define STREAM_SAMPLES 30000

static struct ev_spec stream_event = {
	"cpu-clock", { .type = PERF_TYPE_SOFTWARE, .sample_period = 1,
		       .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				      PERF_SAMPLE_CALLCHAIN }, { 0 }, 0 };

/* 30000 samples with 1..60 frames; frame k of sample i is i * 1000 + k. After a
 * 100-byte HEADER_BUILD_ID every record is misaligned in the stream. */
static void stream_records(struct img *d)
{
	build_id_entry(d, PERFDATA_RECORD_HEADER_BUILD_ID, PERF_RECORD_MISC_USER, app_bid, "/a");
	for (uint64_t i = 0; i < STREAM_SAMPLES; i++) {
		uint64_t nr = i % 60 + 1;

		begin(d, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
		u64(d, i * 1000);
		u32x2(d, 1, 1);
		u64(d, i);
		u64(d, nr);
		for (uint64_t k = 0; k < nr; k++)
			u64(d, i * 1000 + k);
		end(d);
	}
}

/* Defined by the ASan runtime, which replaces malloc: mallinfo2() then sees none of the heap. */
size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

/*
 * Bytes handed out by malloc and not yet freed, in the plain and the ASan
 * build. glibc serves large blocks with mmap and counts them in hblkhd,
 * not in uordblks: both count.
 */
static size_t heap_in_use(void)
{
	struct mallinfo2 mi;

	if (__sanitizer_get_current_allocated_bytes)
		return __sanitizer_get_current_allocated_bytes();
	mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

/* The measure must see a block of the size the bound allows, or the bound proves nothing. */
static void heap_measure_works(size_t bytes)
{
	size_t before = heap_in_use();
	void *volatile probe = malloc(bytes);

	cr_assert(probe);
	memset(probe, 1, bytes);
	cr_assert_geq(heap_in_use() - before, bytes, "heap_in_use() missed a %zu-byte block", bytes);
	free(probe);
}

static void check_stream(int fd, bool pipe)
{
	struct perfdata_reader *r = trip_reader(fd, "t.data");
	const struct perf_event_header *h;
	size_t base, peak;
	uint64_t next = 0;

	heap_measure_works(512 * 1024);
	base = peak = heap_in_use();

	cr_assert_eq(perfdata_reader_is_pipe(r), pipe);
	while (perfdata_reader_next(r, &h) == 1) {
		struct perfdata_sample s;

		if (heap_in_use() > peak)
			peak = heap_in_use();
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		cr_assert_eq(perfdata_reader_parse_sample(r, h, &s, NULL), 0);
		cr_assert_eq(s.time, next, "sample %lu missing or out of order", (unsigned long)next);
		cr_assert_eq(s.nr_callchain, next % 60 + 1);
		for (uint64_t k = 0; k < s.nr_callchain; k++)
			cr_assert_eq(s.callchain[k], next * 1000 + k);
		next++;
	}
	cr_assert_str_eq(perfdata_reader_error(r), "");
	cr_assert_eq(next, STREAM_SAMPLES);
	/* The image is ~10 MiB; the reader must not have grown with it. */
	cr_assert_lt(peak - base, 512 * 1024, "heap grew by %zu bytes while streaming",
		     peak - base);
	perfdata_reader_free(r);
}

Test(reader_stream, many_records_file_and_pipe_with_bounded_memory)
{
	struct img d = { 0 }, f = { 0 }, p = { 0 };
	struct feeder fe;
	int fd;

	stream_records(&d);
	cr_assert_gt(d.len, 8u << 20);
	build_file(&f, &stream_event, 1, 128, &d, NULL, 0);
	fd = memfd_with(f.b, f.len);
	check_stream(fd, false);
	close(fd);
	img_free(&f);

	build_pipe(&p, &stream_event, 1, 128, &d, NULL, 0);
	fd = pipe_with(&fe, p.b, p.len, 4093);
	check_stream(fd, true);
	pipe_done(&fe, fd);
	img_free(&p);
	img_free(&d);
}

/* ---- round trips through perfdata/writer.c ---------------------------------------- */

#define RT_TRAILER (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
		    PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

static const struct perf_event_attr rt_attr_a = {
	.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK, .size = 128,
	.sample_type = RT_TRAILER | PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_PERIOD |
		       PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER |
		       PERF_SAMPLE_STACK_USER,
	.sample_period = 99, .freq = 1, .sample_id_all = 1, .use_clockid = 1,
	.clockid = CLOCK_MONOTONIC, .sample_regs_user = 0x7, .sample_stack_user = 64,
};
static const struct perf_event_attr rt_attr_b = {
	.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_BPF_OUTPUT, .size = 128,
	.sample_type = RT_TRAILER | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN,
	.sample_period = 1, .sample_id_all = 1, .use_clockid = 1, .clockid = CLOCK_MONOTONIC,
};
static const uint64_t rt_ids_a[] = { 101, 102 }, rt_ids_b[] = { 201 };

static const uint64_t rt_chain[] = { (uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000100ULL,
				     0xffffffff81000200ULL, (uint64_t)PERF_CONTEXT_USER, 0x401000,
				     0x402000, 0x403000 };
static const uint64_t rt_regs[] = { 0x7ffc0010, 0x7ffc0000, 0x401000 };
static uint64_t rt_stack[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

static const struct perfdata_mmap rt_kmap = {
	.misc = PERF_RECORD_MISC_KERNEL, .pid = (uint32_t)-1, .tid = 0,
	.start = 0xffffffff81000000ULL, .len = 0x1200000, .pgoff = 0xffffffff81000000ULL,
	.filename = "[kernel.kallsyms]_text",
};
static const struct perfdata_mmap rt_map_ino = {
	.misc = PERF_RECORD_MISC_USER, .pid = 10, .tid = 10, .start = 0x400000, .len = 0x5000,
	.pgoff = 0x1000, .maj = 8, .min = 1, .ino = 77, .ino_generation = 3, .prot = 5,
	.flags = 2, .filename = "/usr/bin/a",
};
static const struct perfdata_mmap rt_map_bid = {
	.misc = PERF_RECORD_MISC_USER, .pid = 10, .tid = 10, .start = 0x7f0000000000ULL,
	.len = 0x20000, .pgoff = 0, .build_id_size = 16,
	.build_id = { 0xaa, 0xbb, 0xcc, 0xdd, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 },
	.prot = 5, .flags = 2, .filename = "/usr/lib/x86_64-linux-gnu/liba.so.1",
};
static const struct perfdata_comm rt_comm = { .pid = 10, .tid = 11, .exec = true,
					      .comm = "worker" };
static const struct perfdata_task rt_fork = { .pid = 10, .ppid = 1, .tid = 11, .ptid = 10,
					      .time = 7000 };
static const struct perfdata_task rt_exit = { .pid = 10, .ppid = 1, .tid = 11, .ptid = 10,
					      .time = 9000 };

static struct perfdata_sample_id rt_sid(uint64_t time, uint64_t id)
{
	return (struct perfdata_sample_id){ .pid = 10, .tid = 11, .time = time, .id = id,
					    .stream_id = id + 1000, .cpu = 1 };
}

static struct perfdata_sample rt_sample_full(void)
{
	return (struct perfdata_sample){
		.misc = PERF_RECORD_MISC_KERNEL, .id = 102, .ip = 0xffffffff81000100ULL,
		.pid = 10, .tid = 11, .time = 8000, .addr = 0xdead000, .stream_id = 5,
		.cpu = 1, .period = 250000, .nr_callchain = 7, .callchain = rt_chain,
		.raw_size = 5, .raw = "hello", .regs_abi = PERF_SAMPLE_REGS_ABI_64,
		.nr_regs = 3, .regs = rt_regs, .stack_size = 64, .stack = rt_stack,
		.stack_dyn_size = 40,
	};
}

static struct perfdata_sample rt_sample_kthread(void)
{
	return (struct perfdata_sample){
		.misc = PERF_RECORD_MISC_KERNEL, .id = 101, .ip = 0xffffffff81000200ULL,
		.pid = 0, .tid = 0, .time = 8100, .cpu = 0, .period = 250000, .nr_callchain = 3,
		.callchain = rt_chain, .raw_size = 0, .regs_abi = PERF_SAMPLE_REGS_ABI_NONE,
		.stack_size = 0,
	};
}

static struct perfdata_sample rt_sample_offcpu(void)
{
	return (struct perfdata_sample){
		.misc = PERF_RECORD_MISC_USER, .id = 201, .pid = 10, .tid = 11, .time = 8200,
		.stream_id = 6, .cpu = 1, .period = 1234567, .nr_callchain = 4,
		.callchain = rt_chain + 3,
	};
}

static const char *const rt_argv[] = { "bpfrec", "record", "-o", "x.data" };
static const uint8_t rt_kbid[20] = { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 };

/* Write the round-trip recording with the writer into fd. */
static void rt_write(int fd, bool pipe)
{
	struct perfdata_writer_opts o = { .pipe = pipe, .argc = 4, .argv = rt_argv };
	struct perfdata_writer *w = trip_writer_new(fd, &o, "cpu-clock", &rt_attr_a, rt_ids_a, 2);
	struct perfdata_sample_id sid;
	struct perfdata_sample s;

	cr_assert_eq(perfdata_writer_add_event(w, "offcpu-time", &rt_attr_b, rt_ids_b, 1), 0);
	cr_assert_eq(perfdata_writer_start(w), 0);
	cr_assert_eq(perfdata_writer_add_build_id(w, PERF_RECORD_MISC_KERNEL, rt_kbid, 20,
						  "[kernel.kallsyms]"), 0);
	cr_assert_eq(perfdata_writer_add_build_id(w, PERF_RECORD_MISC_USER, rt_map_bid.build_id,
						  16, rt_map_bid.filename), 0);
	sid = (struct perfdata_sample_id){ .pid = (uint32_t)-1, .id = 101 };
	cr_assert_eq(perfdata_write_mmap(w, &rt_kmap, &sid), 0);
	sid = rt_sid(5000, 101);
	cr_assert_eq(perfdata_write_comm(w, &rt_comm, &sid), 0);
	sid = rt_sid(6000, 101);
	cr_assert_eq(perfdata_write_mmap2(w, &rt_map_ino, &sid), 0);
	sid = rt_sid(6001, 102);
	cr_assert_eq(perfdata_write_mmap2(w, &rt_map_bid, &sid), 0);
	sid = rt_sid(rt_fork.time, 201);
	cr_assert_eq(perfdata_write_fork(w, &rt_fork, &sid), 0);
	cr_assert_eq(perfdata_write_finished_round(w), 0);
	s = rt_sample_full();
	cr_assert_eq(perfdata_write_sample(w, &s), 0);
	s = rt_sample_kthread();
	cr_assert_eq(perfdata_write_sample(w, &s), 0);
	s = rt_sample_offcpu();
	cr_assert_eq(perfdata_write_sample(w, &s), 0);
	sid = rt_sid(8300, 101);
	cr_assert_eq(perfdata_write_lost_samples(w, 42, &sid), 0);
	sid = rt_sid(rt_exit.time, 102);
	cr_assert_eq(perfdata_write_exit(w, &rt_exit, &sid), 0);
	cr_assert_eq(perfdata_write_finished_round(w), 0);
	trip_finish(w, fd);
}

static void assert_sid(struct perfdata_reader *r, const struct perf_event_header *h,
		       struct perfdata_sample_id want)
{
	struct perfdata_sample_id got;

	cr_assert_eq(perfdata_reader_parse_sample_id(r, h, &got), 0);
	cr_assert_eq(got.pid, want.pid);
	cr_assert_eq(got.tid, want.tid);
	cr_assert_eq(got.time, want.time);
	cr_assert_eq(got.id, want.id);
	cr_assert_eq(got.stream_id, want.stream_id);
	cr_assert_eq(got.cpu, want.cpu);
}

static void assert_mmap_eq(const struct perfdata_mmap *a, const struct perfdata_mmap *b, bool mmap2)
{
	cr_assert_eq(a->misc, b->misc);
	cr_assert_eq(a->pid, b->pid);
	cr_assert_eq(a->tid, b->tid);
	cr_assert_eq(a->start, b->start);
	cr_assert_eq(a->len, b->len);
	cr_assert_eq(a->pgoff, b->pgoff);
	cr_assert_str_eq(a->filename, b->filename);
	if (!mmap2)
		return;
	cr_assert_eq(a->build_id_size, b->build_id_size);
	cr_assert_arr_eq(a->build_id, b->build_id, b->build_id_size);
	cr_assert_eq(a->maj, b->maj);
	cr_assert_eq(a->min, b->min);
	cr_assert_eq(a->ino, b->ino);
	cr_assert_eq(a->ino_generation, b->ino_generation);
	cr_assert_eq(a->prot, b->prot);
	cr_assert_eq(a->flags, b->flags);
}

static void assert_sample_eq(const struct perfdata_sample *got, const struct perfdata_sample *want,
			     uint64_t type)
{
	cr_assert_eq(got->misc, want->misc);
	cr_assert_eq(got->id, want->id);
	cr_assert_eq(got->pid, want->pid);
	cr_assert_eq(got->tid, want->tid);
	cr_assert_eq(got->time, want->time);
	cr_assert_eq(got->stream_id, want->stream_id);
	cr_assert_eq(got->cpu, want->cpu);
	cr_assert_eq(got->period, want->period);
	cr_assert_eq(got->nr_callchain, want->nr_callchain);
	cr_assert_arr_eq(got->callchain, want->callchain, want->nr_callchain * 8);
	if (type & PERF_SAMPLE_IP)
		cr_assert_eq(got->ip, want->ip);
	if (type & PERF_SAMPLE_ADDR)
		cr_assert_eq(got->addr, want->addr);
	if (type & PERF_SAMPLE_RAW) {
		/* the writer pads the raw data so that size + data is 8-aligned */
		cr_assert_eq(got->raw_size, perfdata_align8(4 + want->raw_size) - 4);
		if (want->raw_size)
			cr_assert_arr_eq(got->raw, want->raw, want->raw_size);
	}
	if (type & PERF_SAMPLE_REGS_USER) {
		cr_assert_eq(got->regs_abi, want->regs_abi);
		cr_assert_eq(got->nr_regs, want->nr_regs);
		if (want->nr_regs)
			cr_assert_arr_eq(got->regs, want->regs, want->nr_regs * 8);
	}
	if (type & PERF_SAMPLE_STACK_USER) {
		cr_assert_eq(got->stack_size, want->stack_size);
		cr_assert_eq(got->stack_dyn_size, want->stack_dyn_size);
		/* dyn_size valid bytes, then zeros: the writer never copies the rest. */
		if (want->stack_size)
			cr_assert_arr_eq(got->stack, want->stack, want->stack_dyn_size);
		for (uint64_t i = want->stack_dyn_size; i < want->stack_size; i++)
			cr_assert_eq(((const uint8_t *)got->stack)[i], 0);
	}
}

struct rt_bids {
	int n;
	bool kernel, lib;
};

static int rt_collect_bid(const struct perfdata_build_id *b, void *ctx)
{
	struct rt_bids *seen = ctx;

	seen->n++;
	if (!strcmp(b->filename, "[kernel.kallsyms]")) {
		cr_assert_eq(b->cpumode, PERF_RECORD_MISC_KERNEL);
		cr_assert_eq(b->size, 20);
		cr_assert_arr_eq(b->id, rt_kbid, 20);
		seen->kernel = true;
	} else if (!strcmp(b->filename, rt_map_bid.filename)) {
		cr_assert_eq(b->cpumode, PERF_RECORD_MISC_USER);
		cr_assert_eq(b->size, 16);
		cr_assert_arr_eq(b->id, rt_map_bid.build_id, 16);
		seen->lib = true;
	}
	return 0;
}

static void rt_check(struct perfdata_reader *r, bool pipe)
{
	const struct perf_event_header *h;
	const struct perfdata_event *ev;
	struct perfdata_mmap m;
	struct perfdata_comm c;
	struct perfdata_task t;
	struct perfdata_sample s, want;
	struct perfdata_sample_id ksid = { .pid = (uint32_t)-1, .id = 101 };
	int n = 0, bid_records = 0;
	struct utsname u;

	cr_assert_eq(perfdata_reader_is_pipe(r), pipe);
	while (perfdata_reader_next(r, &h) == 1) {
		cr_assert_eq(h->size % 8, 0, "the writer keeps every record 8-byte sized");
		if (h->type == PERFDATA_RECORD_HEADER_ATTR || h->type == PERFDATA_RECORD_HEADER_FEATURE) {
			cr_assert(pipe);
			continue;
		}
		if (h->type == PERFDATA_RECORD_HEADER_BUILD_ID) {
			cr_assert(pipe);
			bid_records++;
			continue;
		}
		switch (n++) {
		case 0:
			cr_assert_eq(h->type, PERF_RECORD_MMAP);
			cr_assert_eq(perfdata_decode_mmap(h, &m), 0);
			assert_mmap_eq(&m, &rt_kmap, false);
			assert_sid(r, h, ksid);
			break;
		case 1:
			cr_assert_eq(h->type, PERF_RECORD_COMM);
			cr_assert_eq(h->misc & PERF_RECORD_MISC_COMM_EXEC, PERF_RECORD_MISC_COMM_EXEC);
			cr_assert_eq(perfdata_decode_comm(h, &c), 0);
			cr_assert_eq(c.pid, rt_comm.pid);
			cr_assert_eq(c.tid, rt_comm.tid);
			cr_assert(c.exec);
			cr_assert_str_eq(c.comm, rt_comm.comm);
			assert_sid(r, h, rt_sid(5000, 101));
			break;
		case 2:
			cr_assert_eq(h->type, PERF_RECORD_MMAP2);
			cr_assert_eq(perfdata_decode_mmap2(h, &m), 0);
			assert_mmap_eq(&m, &rt_map_ino, true);
			assert_sid(r, h, rt_sid(6000, 101));
			break;
		case 3:
			cr_assert_eq(h->type, PERF_RECORD_MMAP2);
			cr_assert(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID);
			cr_assert_eq(perfdata_decode_mmap2(h, &m), 0);
			assert_mmap_eq(&m, &rt_map_bid, true);
			assert_sid(r, h, rt_sid(6001, 102));
			break;
		case 4:
			cr_assert_eq(h->type, PERF_RECORD_FORK);
			cr_assert_eq(perfdata_decode_task(h, &t), 0);
			cr_assert_eq(memcmp(&t, &rt_fork, sizeof(t)), 0);
			assert_sid(r, h, rt_sid(rt_fork.time, 201));
			break;
		case 5:
		case 11:
			cr_assert_eq(h->type, PERFDATA_RECORD_FINISHED_ROUND);
			break;
		case 6:
		case 7:
		case 8:
			cr_assert_eq(h->type, PERF_RECORD_SAMPLE);
			cr_assert_eq(perfdata_reader_parse_sample(r, h, &s, &ev), 0);
			want = n == 7 ? rt_sample_full() : n == 8 ? rt_sample_kthread()
								   : rt_sample_offcpu();
			cr_assert_str_eq(ev->name, n == 9 ? "offcpu-time" : "cpu-clock");
			assert_sample_eq(&s, &want, ev->attr.sample_type);
			break;
		case 9:
			cr_assert_eq(h->type, PERF_RECORD_LOST_SAMPLES);
			cr_assert_eq(*(const uint64_t *)(h + 1), 42);
			assert_sid(r, h, rt_sid(8300, 101));
			break;
		case 10:
			cr_assert_eq(h->type, PERF_RECORD_EXIT);
			cr_assert_eq(perfdata_decode_task(h, &t), 0);
			cr_assert_eq(memcmp(&t, &rt_exit, sizeof(t)), 0);
			assert_sid(r, h, rt_sid(rt_exit.time, 102));
			break;
		}
	}
	cr_assert_str_eq(perfdata_reader_error(r), "");
	cr_assert_eq(n, 12);

	/* events, names, ids */
	cr_assert_eq(perfdata_reader_nr_events(r), 2);
	ev = perfdata_reader_event(r, 0);
	cr_assert_str_eq(ev->name, "cpu-clock");
	cr_assert_eq(ev->attr.sample_type, rt_attr_a.sample_type);
	cr_assert_eq(ev->attr.sample_regs_user, rt_attr_a.sample_regs_user);
	cr_assert_eq(ev->attr.sample_stack_user, rt_attr_a.sample_stack_user);
	cr_assert_eq(ev->attr.clockid, CLOCK_MONOTONIC);
	cr_assert_eq(ev->attr.size, 128);
	cr_assert_eq(ev->nr_ids, 2);
	cr_assert_arr_eq(ev->ids, rt_ids_a, sizeof(rt_ids_a));
	ev = perfdata_reader_event(r, 1);
	cr_assert_str_eq(ev->name, "offcpu-time");
	cr_assert_eq(ev->nr_ids, 1);
	cr_assert_eq(ev->ids[0], 201);

	/* features as the writer documents them */
	cr_assert_eq(uname(&u), 0);
	cr_assert_str_eq(perfdata_reader_feature_string(r, PERFDATA_FEAT_HOSTNAME), u.nodename);
	cr_assert_str_eq(perfdata_reader_feature_string(r, PERFDATA_FEAT_OSRELEASE), u.release);
	cr_assert_str_eq(perfdata_reader_feature_string(r, PERFDATA_FEAT_ARCH), u.machine);
	cr_assert_str_eq(perfdata_reader_feature_string(r, PERFDATA_FEAT_VERSION), "0.1.0 (bpfrec)");

	size_t size;
	const uint8_t *cmd = perfdata_reader_feature(r, PERFDATA_FEAT_CMDLINE, &size);

	cr_assert_not_null(cmd);
	cr_assert_eq(*(const uint32_t *)cmd, 4);
	cr_assert_str_eq((const char *)cmd + 8, "bpfrec");
	cr_assert_not_null(perfdata_reader_feature(r, PERFDATA_FEAT_CLOCKID, &size));
	cr_assert_eq(size, 8);
	cr_assert_not_null(perfdata_reader_feature(r, PERFDATA_FEAT_CLOCK_DATA, &size));
	cr_assert_eq(size, 24);
	const uint64_t *st = perfdata_reader_feature(r, PERFDATA_FEAT_SAMPLE_TIME, &size);

	if (pipe) {
		cr_assert_null(st, "sample times are unknown when a pipe starts");
		cr_assert_eq(bid_records, 2);
	} else {
		cr_assert_not_null(st);
		cr_assert_eq(st[0], 8000);
		cr_assert_eq(st[1], 8200);
		cr_assert_not_null(perfdata_reader_feature(r, PERFDATA_FEAT_BUILD_ID, &size));
	}

	struct rt_bids seen = { 0 };

	cr_assert_eq(perfdata_reader_for_each_build_id(r, rt_collect_bid, &seen), 0);
	cr_assert_eq(seen.n, 2);
	cr_assert(seen.kernel && seen.lib);
}

Test(reader_roundtrip, writer_file_mode_every_record_type)
{
	int fd = trip_memfd("rt-file");
	struct perfdata_reader *r;

	rt_write(fd, false);
	r = trip_reader(fd, "t.data");
	rt_check(r, false);
	perfdata_reader_free(r);
	close(fd);
}

Test(reader_roundtrip, writer_pipe_mode_every_record_type_through_a_pipe)
{
	int fd = trip_memfd("rt-pipe");
	struct perfdata_reader *r;
	struct feeder fe;
	uint8_t *bytes;
	size_t len;
	int rfd;

	rt_write(fd, true);
	bytes = trip_slurp(fd, &len);
	rfd = pipe_with(&fe, bytes, len, 61);
	r = trip_reader(rfd, "t.data");
	rt_check(r, true);
	perfdata_reader_free(r);
	pipe_done(&fe, rfd);
	free(bytes);
	close(fd);
}

/* ---- DWARF-mode samples: REGS_USER + STACK_USER ---------------------------------- */

Test(reader_roundtrip, regs_and_stack_user_as_perf_dwarf_mode)
{
	static uint8_t stack[65528];
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
			       PERF_SAMPLE_STACK_USER,
		.sample_regs_user = 0xff0fff, .sample_stack_user = 65528,
		.exclude_callchain_user = 1, .sample_id_all = 1,
	};
	uint64_t id = 42, regs[20], chain[2] = { PERF_CONTEXT_KERNEL, 0xffffffff81000000ull };
	int fd = trip_memfd("dwarf");
	const struct perf_event_header *h;
	struct perfdata_writer *w;
	struct perfdata_reader *r;
	struct perfdata_sample s;
	int n = 0;

	for (int i = 0; i < 20; i++)
		regs[i] = 0x1000 + (uint64_t)i;
	for (size_t i = 0; i < sizeof(stack); i++)
		stack[i] = (uint8_t)(i * 7 + 1);
	w = trip_writer(fd, NULL, "cpu-clock", &attr, &id, 1);
	/* 8 KiB asked, 5000 valid; a kernel thread; the largest stack, which must be cut. */
	struct perfdata_sample in[3] = {
		{ .id = id, .ip = 0x401000, .pid = 1, .tid = 1, .time = 10, .misc = PERF_RECORD_MISC_USER,
		  .regs_abi = PERF_SAMPLE_REGS_ABI_64, .nr_regs = 20, .regs = regs,
		  .stack_size = 8192, .stack_dyn_size = 5000, .stack = stack },
		{ .id = id, .ip = chain[1], .pid = 0, .tid = 0, .time = 11,
		  .misc = PERF_RECORD_MISC_KERNEL, .nr_callchain = 2, .callchain = chain },
		{ .id = id, .ip = 0x401000, .pid = 1, .tid = 1, .time = 12, .misc = PERF_RECORD_MISC_USER,
		  .nr_callchain = 2, .callchain = chain,
		  .regs_abi = PERF_SAMPLE_REGS_ABI_64, .nr_regs = 20, .regs = regs,
		  .stack_size = 65528, .stack_dyn_size = 65528, .stack = stack },
	};
	for (int i = 0; i < 3; i++)
		cr_assert_eq(perfdata_write_sample(w, &in[i]), 0, "sample %d", i);
	trip_finish(w, fd);

	r = trip_reader(fd, "t.data");
	while (perfdata_reader_next(r, &h) == 1) {
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		cr_assert_eq(perfdata_reader_parse_sample(r, h, &s, NULL), 0);
		cr_assert_eq(h->size % 8, 0);
		if (n == 0) {
			const uint8_t *got = s.stack;

			cr_assert_eq(s.regs_abi, PERF_SAMPLE_REGS_ABI_64);
			cr_assert_eq(s.nr_regs, 20);
			cr_assert_arr_eq(s.regs, regs, sizeof(regs));
			cr_assert_eq(s.stack_size, 8192);
			cr_assert_eq(s.stack_dyn_size, 5000);
			cr_assert_arr_eq(got, stack, 5000);
			for (size_t i = 5000; i < 8192; i++)
				cr_assert_eq(got[i], 0, "byte %zu past dyn_size is not zero", i);
		} else if (n == 1) {
			cr_assert_eq(s.regs_abi, PERF_SAMPLE_REGS_ABI_NONE);
			cr_assert_eq(s.nr_regs, 0);
			cr_assert_eq(s.stack_size, 0);
		} else {
			/* Cut to what fits a 64 KiB record, a multiple of 8, like the kernel does. */
			cr_assert_lt(s.stack_size, 65528);
			cr_assert_eq(s.stack_size % 8, 0);
			cr_assert_eq(s.stack_dyn_size, s.stack_size);
			cr_assert_gt(h->size, 0xfff8 - 8, "the cut wastes no room: %u", h->size);
			cr_assert_arr_eq(s.stack, stack, s.stack_size);
		}
		n++;
	}
	cr_assert_eq(n, 3);
	perfdata_reader_free(r);
	close(fd);
}

/* ---- a writer that never finished ------------------------------------------------- */

static struct perfdata_writer *killed_writer_start(int fd)
{
	/* no automatic checkpoints: the test decides when data.size is patched */
	struct perfdata_writer_opts o = { .buffer_size = 128 << 10,
					  .checkpoint_interval_ms = 1000ULL * 3600 * 24 };

	return trip_writer(fd, &o, "cpu-clock", &rt_attr_b, rt_ids_b, 1);
}

static void write_offcpu_samples(struct perfdata_writer *w, int n, uint64_t t0)
{
	for (int i = 0; i < n; i++) {
		struct perfdata_sample s = rt_sample_offcpu();

		s.time = t0 + (uint64_t)i;
		cr_assert_eq(perfdata_write_sample(w, &s), 0);
	}
}

static int count_samples(int fd, int *ret, char *msg, size_t len)
{
	struct perfdata_reader *r = trip_reader(fd, "t.data");
	const struct perf_event_header *h;
	int n = 0;

	while ((*ret = perfdata_reader_next(r, &h)) == 1)
		n += h->type == PERF_RECORD_SAMPLE;
	snprintf(msg, len, "%s", perfdata_reader_error(r));
	perfdata_reader_free(r);
	return n;
}

Test(reader_roundtrip, killed_writer_is_read_up_to_its_last_checkpoint)
{
	int fd = trip_memfd("killed");
	struct perfdata_writer *w = killed_writer_start(fd);
	struct stat st;
	char msg[512];
	int ret;

	write_offcpu_samples(w, 3, 100);
	cr_assert_eq(perfdata_writer_checkpoint(w), 0);
	write_offcpu_samples(w, 3000, 200);	/* > 128 KiB: flushed, never checkpointed */
	perfdata_writer_free(w);		/* "SIGKILL": no finish */
	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert_gt(st.st_size, 128 << 10, "the test needs bytes past data.size");
	cr_assert_eq(count_samples(fd, &ret, msg, sizeof(msg)), 3);
	cr_assert_eq(ret, 0, "%s", msg);
	close(fd);
}

Test(reader_roundtrip, killed_writer_before_any_checkpoint_is_named)
{
	int fd = trip_memfd("killed0");
	struct perfdata_writer *w = killed_writer_start(fd);
	char msg[512];
	int ret;

	write_offcpu_samples(w, 3000, 200);
	perfdata_writer_free(w);
	cr_assert_eq(count_samples(fd, &ret, msg, sizeof(msg)), 0);
	cr_assert_eq(ret, -ENODATA);
	cr_assert_not_null(strstr(msg, "did not finish"), "%s", msg);
	close(fd);
}

/* ---- limits that keep hostile input cheap ---------------------------------------- */

Test(reader_errors, long_input_name_is_cut_not_overflowed)
{
	struct img m = { 0 };
	struct perfdata_reader *r = NULL;
	char name[2048];
	int fd;

	/* The name alone is longer than the message buffer (a heap overflow once). */
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	put(&m, "#!/bin/sh\n", 10);
	fd = memfd_with(m.b, m.len);
	cr_assert_eq(perfdata_reader_open(fd, name, &r), -EINVAL);
	cr_assert_not_null(r);
	cr_assert_lt(strlen(perfdata_reader_error(r)), 512);
	cr_assert_eq(strncmp(perfdata_reader_error(r), name, 100), 0);
	perfdata_reader_free(r);
	close(fd);
	img_free(&m);
}

/*
 * A pipe of 400 HEADER_ATTRs of 8000 ids each and 400 samples: after each
 * attr (interleaved) or after all of them (how perf writes a pipe).
 */
static void attrs_and_samples(struct img *m, bool interleaved)
{
	struct perfdata_pipe_header ph = { PERFDATA_MAGIC, 16 };
	struct ev_spec ev = two_events[0];
	uint64_t next_id = 1;

	put(m, &ph, sizeof(ph));
	for (int i = 0; i < 400; i++) {
		begin(m, PERFDATA_RECORD_HEADER_ATTR, 0);
		ev.attr.size = sizeof(ev.attr);
		put(m, &ev.attr, sizeof(ev.attr));
		for (int j = 0; j < 8000; j++)
			u64(m, next_id++);
		end(m);
		if (interleaved)
			sample(m, next_id - 1, PERF_RECORD_MISC_USER, 0x401000, 1, 1, 100, 0, 1, NULL, 0);
	}
	for (int i = 0; !interleaved && i < 400; i++)
		sample(m, 8000 * i + 5, PERF_RECORD_MISC_USER, 0x401000, 1, 1, 100, 0, 1, NULL, 0);
}

/*
 * Interleaved, every SAMPLE after a new attr needs the id map re-sorted:
 * with thousands of ids per attr that is quadratic, so the reader stops
 * with a clear error instead of running for minutes.
 */
Test(reader_errors, attrs_interleaved_with_samples_are_cut_off)
{
	struct img m = { 0 };
	char msg[512];
	size_t n;
	int fd, ret;

	attrs_and_samples(&m, true);
	fd = memfd_with(m.b, m.len);
	ret = read_all(fd, msg, sizeof(msg), &n);
	cr_assert_eq(ret, -EINVAL, "%d %s", ret, msg);
	cr_assert_not_null(strstr(msg, "HEADER_ATTR records keep arriving"), "%s", msg);
	cr_assert_lt(n, 800, "stopped early, after %zu records", n);
	close(fd);
	img_free(&m);
}

/* The same ids in one batch of attrs sort once: read to the end. */
Test(reader_pipe, many_attrs_in_one_batch_sort_once)
{
	struct img m = { 0 };
	char msg[512];
	size_t n;
	int fd, ret;

	attrs_and_samples(&m, false);
	fd = memfd_with(m.b, m.len);
	ret = read_all(fd, msg, sizeof(msg), &n);
	cr_assert_eq(ret, 0, "%s", msg);
	cr_assert_eq(n, 800);
	close(fd);
	img_free(&m);
}
