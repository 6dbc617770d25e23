// SPDX-License-Identifier: MIT
/*
 * writer.c - write perf.data in file or pipe mode (contract in writer.h).
 *
 * File layout, as perf writes it:
 *   header (104) | ids of each attr | attrs (128 + {ids offset,size} each) |
 *   data ... | feature table ({offset,size} per feature bit) | payloads
 * The header is written twice: at start with data.size 0 and no feature
 * bits, and at finish. In between, checkpoints patch data.size (offset 48).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compress.h"
#include "features.h"
#include "schedstats.h"
#include "writer.h"

#include "tools/lib/array.h"
#include "tools/lib/clock.h"
#include "tools/lib/fdio.h"

#define DEFAULT_BUFFER_SIZE	(1u << 20)
#define RECORD_ROOM		0x10000		/* every record fits: its size is a u16 */
#define MIN_BUFFER_SIZE		(128u << 10)	/* larger than any record (64 KiB) */
#define TRAILER_BITS (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
		      PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)
/*
 * -z: each COMPRESSED record holds at most what its u16 size allows, and
 * the stream is flushed (so what came before decompresses whole) at least
 * every ZSTD_CHUNK bytes of records: perf's readers decompress one
 * COMPRESSED record into a buffer of the feature's mmap_len, which we set to
 * ZSTD_CHUNK (perf's own default mmap size plus a page).
 */
#define ZSTD_CHUNK		528384u
#define COMPRESSED_PAYLOAD_MAX	(0xffffu - sizeof(struct perf_event_header))
#define COMPRESSED_NONE		SIZE_MAX	/* no COMPRESSED record open */

struct perfdata_writer {
	int fd;
	int (*write)(void *ctx, const void *buf, size_t len);	/* pipe mode: instead of fd */
	void *write_ctx;
	bool pipe, started, finished;
	int error;			/* sticky -errno after a failed write */

	struct perfdata_event *events;
	size_t nr_events;
	uint64_t trailer_type;		/* sample_id bits of non-SAMPLE records */

	uint8_t *buf;
	size_t buf_len, buf_cap;
	uint64_t flushed;		/* stream bytes written (file: offset of buf[0]) */
	uint64_t data_offset;		/* file mode: start of the data section */
	uint64_t checkpointed;		/* file offset up to which data.size is on disk */
	uint64_t checkpoint_interval_ns, last_checkpoint_ns;

	struct perfdata_build_id *bids;	/* filenames are owned */
	size_t nr_bids, cap_bids;

	uint64_t nr_samples, first_time, last_time;

	/* -z: records go through zstd into COMPRESSED records (see zrun()). */
	struct perfdata_zstd_enc *zenc;
	int zlevel;
	bool compressing;	/* after start: the header and pipe preamble stay plain */
	bool zfailed;		/* the error is the compressor's, not a write's */
	uint8_t *scratch;	/* one record is encoded here, then compressed */
	size_t zrec;		/* buf offset of the open COMPRESSED record */
	uint64_t zpending;	/* record bytes fed since the stream was last flushed */
	uint64_t zin, zout;	/* record bytes in, compressed bytes out: the ratio */

	int argc;
	char **argv;
	struct perfdata_sysinfo si;
	uint64_t tod_ns, clockid_ns, clock_res_ns;
};

/* Write all of buf at off (file) or to the stream (pipe); 0 or -errno. */
static int write_all(struct perfdata_writer *w, const void *buf, size_t len, uint64_t off)
{
	if (w->write)
		return w->write(w->write_ctx, buf, len);
	return w->pipe ? fd_write_all(w->fd, buf, len) : fd_pwrite_all(w->fd, buf, len, off);
}

static int patch_data_size(struct perfdata_writer *w, uint64_t end)
{
	uint64_t size = end - w->data_offset;
	int err = write_all(w, &size, sizeof(size), PERFDATA_HDR_OFF_DATA_SIZE);

	if (!err)
		w->checkpointed = end;
	return err;
}

/* Write the buffer out as it is (with -z: whole COMPRESSED records only). */
static int write_buf(struct perfdata_writer *w)
{
	int err;

	if (w->error)
		return w->error;
	if (!w->buf_len)
		return 0;
	err = write_all(w, w->buf, w->buf_len, w->flushed);
	if (err) {
		w->error = err;
		return err;
	}
	w->flushed += w->buf_len;
	w->buf_len = 0;
	return 0;
}

/* The open COMPRESSED record takes what zstd wrote after its header. */
static void zrec_close(struct perfdata_writer *w)
{
	struct perf_event_header h = { .type = PERFDATA_RECORD_COMPRESSED };

	if (w->zrec == COMPRESSED_NONE)
		return;
	if (w->buf_len - w->zrec == sizeof(h)) {
		w->buf_len = w->zrec;	/* nothing came out: no record */
	} else {
		/* Not padded to 8: the padding would be read as zstd input (perf does the same). */
		h.size = (uint16_t)(w->buf_len - w->zrec);
		memcpy(w->buf + w->zrec, &h, sizeof(h));
	}
	w->zrec = COMPRESSED_NONE;
}

/*
 * Feed len bytes of records (none with flush) through zstd into COMPRESSED
 * records in buf. A record is closed when it is as large as its u16 size
 * allows or buf is full (buf is then written); with flush, everything fed
 * so far is pushed out and the record closed, so the file up to here
 * decompresses whole (checkpoints, rounds).
 */
static int zrun(struct perfdata_writer *w, const void *data, size_t len, bool flush)
{
	struct perfdata_zstd_buf in = { (void *)data, len, 0 };
	int ret, err;

	if (w->error)
		return w->error;
	for (;;) {
		struct perfdata_zstd_buf out;
		size_t room;

		if (w->zrec == COMPRESSED_NONE) {
			if (w->buf_cap - w->buf_len < sizeof(struct perf_event_header) + 4096 &&
			    (err = write_buf(w)))
				return err;
			w->zrec = w->buf_len;
			w->buf_len += sizeof(struct perf_event_header);
		}
		room = w->zrec + sizeof(struct perf_event_header) + COMPRESSED_PAYLOAD_MAX - w->buf_len;
		if (room > w->buf_cap - w->buf_len)
			room = w->buf_cap - w->buf_len;
		out = (struct perfdata_zstd_buf){ w->buf + w->buf_len, room, 0 };
		ret = perfdata_zstd_compress(w->zenc, &in, &out, flush);
		w->buf_len += out.pos;
		w->zout += out.pos;
		if (ret < 0) {
			w->zfailed = true;
			return w->error = ret;
		}
		if (flush ? ret == 0 : in.pos == in.size)
			break;
		zrec_close(w);	/* out is full */
	}
	w->zin += len;
	w->zpending += len;
	if (flush) {
		zrec_close(w);
		w->zpending = 0;
	}
	return 0;
}

/* Everything so far out of the buffer (and, with -z, out of zstd). */
static int flush(struct perfdata_writer *w)
{
	int err = 0;

	if (w->compressing)
		err = zrun(w, NULL, 0, true);
	return err ? err : write_buf(w);
}

int perfdata_writer_checkpoint(struct perfdata_writer *w)
{
	int err = flush(w);

	if (err)
		return err;
	w->last_checkpoint_ns = mono_ns();
	if (w->pipe || w->checkpointed == w->flushed)
		return 0;
	err = patch_data_size(w, w->flushed);
	if (err)
		w->error = err;
	return err;
}

static int maybe_checkpoint(struct perfdata_writer *w)
{
	if (mono_ns() - w->last_checkpoint_ns < w->checkpoint_interval_ns)
		return 0;
	return perfdata_writer_checkpoint(w);
}

int perfdata_writer_new(int fd, const struct perfdata_writer_opts *opts,
			struct perfdata_writer **out)
{
	static const struct perfdata_writer_opts defaults;
	struct perfdata_writer *w;
	int err;

	if (!opts)
		opts = &defaults;
	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = fd;
	w->pipe = opts->pipe;
	if (opts->write && !opts->pipe) {
		free(w);
		return -EINVAL;
	}
	w->write = opts->write;
	w->write_ctx = opts->write_ctx;
	w->buf_cap = opts->buffer_size ? opts->buffer_size : DEFAULT_BUFFER_SIZE;
	if (w->buf_cap < MIN_BUFFER_SIZE)
		w->buf_cap = MIN_BUFFER_SIZE;
	w->checkpoint_interval_ns = (opts->checkpoint_interval_ms ? opts->checkpoint_interval_ms
								   : 1000) * 1000000ull;
	w->buf = malloc(w->buf_cap);
	if (!w->buf)
		goto nomem;
	w->zrec = COMPRESSED_NONE;
	if (opts->compression_level) {
		err = perfdata_zstd_enc_new(opts->compression_level, &w->zenc);
		if (err) {
			perfdata_writer_free(w);
			return err;
		}
		w->zlevel = opts->compression_level;
		w->scratch = malloc(RECORD_ROOM);
		if (!w->scratch)
			goto nomem;
	}
	if (opts->argc > 0) {
		w->argv = calloc((size_t)opts->argc, sizeof(char *));
		if (!w->argv)
			goto nomem;
		w->argc = opts->argc;
		for (int i = 0; i < opts->argc; i++) {
			w->argv[i] = strdup(opts->argv[i] ? opts->argv[i] : "");
			if (!w->argv[i])
				goto nomem;
		}
	}
	*out = w;
	return 0;
nomem:
	perfdata_writer_free(w);
	return -ENOMEM;
}

int perfdata_writer_add_event(struct perfdata_writer *w, const char *name,
			      const struct perf_event_attr *attr,
			      const uint64_t *ids, uint32_t nr_ids)
{
	struct perfdata_event *ev, *evs;
	uint64_t trailer = attr->sample_id_all ? attr->sample_type & TRAILER_BITS : 0;

	if (w->started || !name)
		return -EINVAL;
	if (w->nr_events) {
		const struct perf_event_attr *first = &w->events[0].attr;

		/* perf parses every trailer with one layout. */
		if (trailer != w->trailer_type || attr->sample_id_all != first->sample_id_all)
			return -EINVAL;
		/* A sample can only be told apart by its id. */
		if (!(attr->sample_type & first->sample_type & PERF_SAMPLE_IDENTIFIER) ||
		    !nr_ids || !w->events[0].nr_ids)
			return -EINVAL;
	}
	evs = realloc(w->events, (w->nr_events + 1) * sizeof(*evs));
	if (!evs)
		return -ENOMEM;
	w->events = evs;
	ev = &evs[w->nr_events];
	memset(ev, 0, sizeof(*ev));
	ev->attr = *attr;
	ev->attr.size = PERFDATA_ATTR_SIZE;
	ev->name = strdup(name);
	ev->ids = nr_ids ? malloc(nr_ids * sizeof(uint64_t)) : NULL;
	if (!ev->name || (nr_ids && !ev->ids)) {
		free(ev->name);
		free(ev->ids);
		return -ENOMEM;
	}
	if (nr_ids)
		memcpy(ev->ids, ids, nr_ids * sizeof(uint64_t));
	ev->nr_ids = nr_ids;
	w->nr_events++;
	w->trailer_type = trailer;
	return 0;
}

/*
 * The buffer position where the next record goes, with RECORD_ROOM bytes
 * free; flushes first when needed. NULL after a write error (w->error).
 */
static uint8_t *buf_room(struct perfdata_writer *w)
{
	if (w->error)
		return NULL;
	if (w->buf_cap - w->buf_len < RECORD_ROOM && write_buf(w))
		return NULL;
	return w->buf + w->buf_len;
}

/* With -z a record is encoded in scratch space and goes on into zstd. */
static uint8_t *room(struct perfdata_writer *w)
{
	if (w->compressing)
		return w->error ? NULL : w->scratch;
	return buf_room(w);
}

/* Keep the record an encoder just wrote at room(), or pass its error on. */
static int commit(struct perfdata_writer *w, ssize_t n)
{
	int err;

	if (n < 0)
		return (int)n;
	if (!w->compressing) {
		w->buf_len += (size_t)n;
		return 0;
	}
	if (w->zpending + (uint64_t)n > ZSTD_CHUNK && (err = zrun(w, NULL, 0, true)))
		return err;
	return zrun(w, w->scratch, (size_t)n, false);
}

/* Encode one record with `call`, where `p` is room() and `cap` RECORD_ROOM. */
#define APPEND(w, call)							\
	({								\
		uint8_t *p = room(w);					\
		size_t cap = RECORD_ROOM;				\
		p ? commit((w), (call)) : (w)->error;			\
	})

static int check_writable(struct perfdata_writer *w)
{
	if (!w->started || w->finished)
		return -EINVAL;
	return w->error;
}

/* A record's encoder call into the stream of a writer that can take it. */
#define WRITE_RECORD(w, call)						\
	({								\
		int write_err_ = check_writable(w);			\
		write_err_ ? write_err_ : APPEND(w, call);		\
	})

static int pipe_feature(struct perfdata_writer *w, uint32_t feat, const struct growbuf *b)
{
	if (growbuf_error(b))
		return -ENOMEM;
	return APPEND(w, perfdata_encode_header_feature(p, cap, feat, b->data, b->len));
}

/* What the features say, as far as the writer knows now. */
static struct perfdata_feature_facts facts_of(const struct perfdata_writer *w)
{
	return (struct perfdata_feature_facts){
		.si = &w->si,
		.argc = w->argc,
		.argv = (const char *const *)w->argv,
		.events = w->events,
		.nr_events = w->nr_events,
		.build_ids = w->bids,
		.nr_build_ids = w->nr_bids,
		.nr_samples = w->nr_samples,
		.first_time = w->first_time,
		.last_time = w->last_time,
		.zlevel = w->zlevel,
		.zin = w->zin,
		.zout = w->zout,
		.zmmap_len = ZSTD_CHUNK,
		.clock_res_ns = w->clock_res_ns,
		.tod_ns = w->tod_ns,
		.clockid_ns = w->clockid_ns,
	};
}

/*
 * Build the payload of the feature of row ops (features.h) into b;
 * -ENOENT when it has nothing to say or is none we write (ops NULL).
 */
static int build_feature(const struct perfdata_writer *w, const struct perfdata_feature_ops *ops,
			 struct growbuf *b)
{
	struct perfdata_feature_facts facts = facts_of(w);
	int err;

	if (!ops || !ops->write)
		return -ENOENT;
	err = ops->write(b, &facts);
	return err ? err : growbuf_error(b);
}

static int start_pipe(struct perfdata_writer *w)
{
	struct perfdata_pipe_header h = { PERFDATA_MAGIC, PERFDATA_PIPE_HEADER_SIZE };
	int err;

	err = write_all(w, &h, sizeof(h), 0);
	if (err)
		return w->error = err;
	w->flushed = sizeof(h);
	for (size_t i = 0; i < w->nr_events; i++) {
		const struct perfdata_event *ev = &w->events[i];

		err = APPEND(w, perfdata_encode_header_attr(p, cap, &ev->attr, ev->ids, ev->nr_ids));
		if (err)
			return err;
	}
	/* Late features (sample times, build-ids) are not known yet: those travel otherwise. */
	for (unsigned int feat = 0; feat < PERFDATA_FEAT_LAST; feat++) {
		const struct perfdata_feature_ops *ops = perfdata_feature_ops(feat);
		struct growbuf b = { 0 };

		if (ops && ops->late)
			continue;
		err = build_feature(w, ops, &b);
		if (!err)
			err = pipe_feature(w, feat, &b);
		growbuf_free(&b);
		if (err && err != -ENOENT)
			return err;
	}
	err = flush(w);
	w->compressing = w->zenc && !err;
	return err;
}

/* Header, id arrays and attrs; data starts right after them. */
static int write_file_header(struct perfdata_writer *w, uint64_t data_size,
			     const uint64_t feat_bits[4])
{
	struct growbuf b = { 0 };
	struct perfdata_file_header h = {
		.magic = PERFDATA_MAGIC,
		.size = PERFDATA_FILE_HEADER_SIZE,
		.attr_size = PERFDATA_ATTR_SIZE + sizeof(struct perfdata_file_section),
	};
	uint64_t off = PERFDATA_FILE_HEADER_SIZE;
	int err;

	for (size_t i = 0; i < w->nr_events; i++)
		off += (uint64_t)w->events[i].nr_ids * 8;
	h.attrs.offset = off;
	h.attrs.size = w->nr_events * h.attr_size;
	h.data.offset = h.attrs.offset + h.attrs.size;
	h.data.size = data_size;
	memcpy(h.features, feat_bits, sizeof(h.features));

	growbuf_put(&b, &h, sizeof(h));
	for (size_t i = 0; i < w->nr_events; i++)
		growbuf_put(&b, w->events[i].ids, (size_t)w->events[i].nr_ids * 8);
	off = PERFDATA_FILE_HEADER_SIZE;
	for (size_t i = 0; i < w->nr_events; i++) {
		struct perfdata_file_section ids = { off, (uint64_t)w->events[i].nr_ids * 8 };
		uint8_t a[PERFDATA_ATTR_SIZE] = { 0 };

		memcpy(a, &w->events[i].attr, sizeof(a) < sizeof(w->events[i].attr)
					      ? sizeof(a) : sizeof(w->events[i].attr));
		growbuf_put(&b, a, sizeof(a));
		growbuf_put(&b, &ids, sizeof(ids));
		off += ids.size;
	}
	err = growbuf_error(&b);
	if (!err)
		err = write_all(w, b.data, b.len, 0);
	growbuf_free(&b);
	w->data_offset = h.data.offset;
	return err;
}

int perfdata_writer_start(struct perfdata_writer *w)
{
	static const uint64_t no_features[4];
	struct timespec res;
	int err;

	if (w->started || !w->nr_events)
		return -EINVAL;
	perfdata_sysinfo_read(&w->si, NULL);
	if (w->events[0].attr.use_clockid) {
		clockid_t clk = (clockid_t)w->events[0].attr.clockid;

		/* One reference pair ties sample times to wall-clock time (perf script -F tod). */
		w->tod_ns = clock_ns(CLOCK_REALTIME);
		w->clockid_ns = clock_ns(clk);
		if (!clock_getres(clk, &res))
			w->clock_res_ns = (uint64_t)res.tv_sec * 1000000000ull + (uint64_t)res.tv_nsec;
	}
	w->started = true;
	w->last_checkpoint_ns = mono_ns();
	if (w->pipe)
		return start_pipe(w);
	err = write_file_header(w, 0, no_features);
	if (err)
		return w->error = err;
	w->flushed = w->checkpointed = w->data_offset;
	if (w->zenc) {
		/*
		 * perf decompresses into buffers of the COMPRESSED feature's
		 * mmap_len, and the features only come at finish: a killed -z
		 * recording would be unreadable. perf also takes the feature from
		 * a HEADER_FEATURE record in the data, so one goes first.
		 */
		struct growbuf b = { 0 };

		err = build_feature(w, perfdata_feature_ops(PERFDATA_FEAT_COMPRESSED), &b);
		if (!err)
			err = pipe_feature(w, PERFDATA_FEAT_COMPRESSED, &b);
		growbuf_free(&b);
		if (err)
			return err;
		w->compressing = true;
	}
	return 0;
}

int perfdata_write_mmap(struct perfdata_writer *w, const struct perfdata_mmap *m,
			const struct perfdata_sample_id *sid)
{
	return WRITE_RECORD(w, perfdata_encode_mmap(p, cap, m, w->trailer_type, sid));
}

int perfdata_write_mmap2(struct perfdata_writer *w, const struct perfdata_mmap *m,
			 const struct perfdata_sample_id *sid)
{
	return WRITE_RECORD(w, perfdata_encode_mmap2(p, cap, m, w->trailer_type, sid));
}

int perfdata_write_comm(struct perfdata_writer *w, const struct perfdata_comm *c,
			const struct perfdata_sample_id *sid)
{
	return WRITE_RECORD(w, perfdata_encode_comm(p, cap, c, w->trailer_type, sid));
}

int perfdata_write_ksymbol(struct perfdata_writer *w, const struct perfdata_ksymbol *k,
			   const struct perfdata_sample_id *sid)
{
	return WRITE_RECORD(w, perfdata_encode_ksymbol(p, cap, k, w->trailer_type, sid));
}

int perfdata_write_fork(struct perfdata_writer *w, const struct perfdata_task *t,
			const struct perfdata_sample_id *sid)
{
	return WRITE_RECORD(w, perfdata_encode_task(p, cap, PERF_RECORD_FORK, t,
						    w->trailer_type, sid));
}

int perfdata_write_exit(struct perfdata_writer *w, const struct perfdata_task *t,
			const struct perfdata_sample_id *sid)
{
	return WRITE_RECORD(w, perfdata_encode_task(p, cap, PERF_RECORD_EXIT, t,
						    w->trailer_type, sid));
}

int perfdata_write_lost_samples(struct perfdata_writer *w, uint64_t lost,
				const struct perfdata_sample_id *sid)
{
	return WRITE_RECORD(w, perfdata_encode_lost_samples(p, cap, lost, w->trailer_type,
							    sid));
}

static const struct perfdata_event *event_of(const struct perfdata_writer *w, uint64_t id)
{
	if (w->nr_events == 1)
		return &w->events[0];
	for (size_t i = 0; i < w->nr_events; i++)
		for (uint32_t j = 0; j < w->events[i].nr_ids; j++)
			if (w->events[i].ids[j] == id)
				return &w->events[i];
	return NULL;
}

int perfdata_write_sample(struct perfdata_writer *w, const struct perfdata_sample *s)
{
	const struct perfdata_event *ev;
	struct perfdata_sample fit;
	int err = check_writable(w);

	if (err)
		return err;
	ev = event_of(w, s->id);
	if (!ev)
		return -EINVAL;
	fit = *s;
	perfdata_sample_fit_stack(&ev->attr, &fit);
	err = APPEND(w, perfdata_encode_sample(p, cap, &ev->attr, &fit));
	if (err)
		return err;
	if (!w->nr_samples || s->time < w->first_time)
		w->first_time = s->time;
	if (!w->nr_samples || s->time > w->last_time)
		w->last_time = s->time;
	w->nr_samples++;
	return 0;
}

int perfdata_write_sched_metrics(struct perfdata_writer *w, const struct bpfrec_sched_thread *t,
				 size_t nr)
{
	int err = check_writable(w);

	/* At least one record: a file recorded with --sched says so even without threads. */
	do {
		size_t taken = 0;

		if (!err)
			err = APPEND(w, perfdata_sched_encode(p, cap, t, nr, &taken));
		t += taken;
		nr -= taken;
	} while (!err && nr);
	return err;
}

int perfdata_write_finished_round(struct perfdata_writer *w)
{
	int err = check_writable(w);
	uint8_t *dst;
	ssize_t n;

	if (err)
		return err;
	if (!w->compressing) {
		err = APPEND(w, perfdata_encode_finished_round(p, cap));
		return err ? err : maybe_checkpoint(w);
	}
	/*
	 * -z: like perf, rounds stay outside the compressed data, each after
	 * a flush of the stream, so a round's records decompress before it.
	 */
	err = zrun(w, NULL, 0, true);
	if (err)
		return err;
	/* Encoded aside: after COMPRESSED records buf is not 8-aligned. */
	n = perfdata_encode_finished_round(w->scratch, RECORD_ROOM);
	if (n < 0)
		return (int)n;
	dst = buf_room(w);
	if (!dst)
		return w->error;
	memcpy(dst, w->scratch, (size_t)n);
	w->buf_len += (size_t)n;
	return maybe_checkpoint(w);
}

int perfdata_writer_add_build_id(struct perfdata_writer *w, uint16_t cpumode,
				 const uint8_t *build_id, size_t size, const char *filename)
{
	struct perfdata_build_id *e;

	if (size > PERFDATA_BUILD_ID_MAX || !filename)
		return -EINVAL;
	for (size_t i = 0; i < w->nr_bids; i++)
		if (w->bids[i].size == size && !memcmp(w->bids[i].id, build_id, size) &&
		    !strcmp(w->bids[i].filename, filename))
			return 0;
	if (w->pipe) {
		int err = WRITE_RECORD(w, perfdata_encode_build_id(p, cap,
								   PERFDATA_RECORD_HEADER_BUILD_ID,
								   cpumode, -1, build_id, size,
								   filename));

		if (err)
			return err;
	}
	if (ARRAY_RESERVE(w->bids, w->cap_bids, w->nr_bids + 1, 16))
		return -ENOMEM;
	e = &w->bids[w->nr_bids];
	memset(e, 0, sizeof(*e));
	e->filename = strdup(filename);
	if (!e->filename)
		return -ENOMEM;
	e->cpumode = cpumode;
	e->pid = -1;		/* the host's, as perf writes its own */
	e->size = (uint8_t)size;
	memcpy(e->id, build_id, size);
	w->nr_bids++;
	return 0;
}

/* Feature table and payloads at data_end; sets the bits that were written. */
static int write_features(struct perfdata_writer *w, uint64_t data_end, uint64_t bits[4])
{
	struct growbuf parts[PERFDATA_FEAT_LAST], payload = { 0 };
	struct perfdata_file_section table[PERFDATA_FEAT_LAST];
	bool present[PERFDATA_FEAT_LAST] = { false };
	size_t nr = 0;
	uint64_t off;
	int err = 0;

	memset(parts, 0, sizeof(parts));
	/* In id order: perf reads the sections in bit order. */
	for (unsigned int feat = 0; feat < PERFDATA_FEAT_LAST && !err; feat++) {
		err = build_feature(w, perfdata_feature_ops(feat), &parts[feat]);
		present[feat] = !err;
		nr += present[feat];
		if (err == -ENOENT)
			err = 0;
	}
	/* The payloads follow the table of their {offset, size}. */
	off = data_end + nr * sizeof(table[0]);
	nr = 0;
	for (unsigned int feat = 0; feat < PERFDATA_FEAT_LAST && !err; feat++) {
		if (!present[feat])
			continue;
		table[nr++] = (struct perfdata_file_section){ off, parts[feat].len };
		off += parts[feat].len;
		bits[feat / 64] |= 1ull << (feat % 64);
	}
	if (!err) {
		growbuf_put(&payload, table, nr * sizeof(table[0]));
		for (unsigned int feat = 0; feat < PERFDATA_FEAT_LAST; feat++)
			if (present[feat])
				growbuf_put(&payload, parts[feat].data, parts[feat].len);
		err = growbuf_error(&payload);
	}
	if (!err)
		err = write_all(w, payload.data, payload.len, data_end);
	for (unsigned int feat = 0; feat < PERFDATA_FEAT_LAST; feat++)
		growbuf_free(&parts[feat]);
	growbuf_free(&payload);
	return err;
}

int perfdata_writer_finish(struct perfdata_writer *w)
{
	uint64_t bits[4] = { 0 };
	uint64_t data_end;
	int err, first_err;

	if (!w->started || w->finished)
		return -EINVAL;
	w->finished = true;
	first_err = flush(w);
	if (w->pipe)
		return first_err;
	/* After a failed write only the checkpointed prefix is known to be whole. */
	data_end = first_err ? w->checkpointed : w->flushed;
	if (first_err && ftruncate(w->fd, (off_t)data_end) < 0)
		return first_err;
	err = write_features(w, data_end, bits);
	if (err) {
		/* No room for features: keep the data readable without them. */
		memset(bits, 0, sizeof(bits));
		if (ftruncate(w->fd, (off_t)data_end) < 0 && !first_err)
			first_err = -errno;
	}
	if (!first_err && err)
		first_err = err;
	err = write_file_header(w, data_end - w->data_offset, bits);
	if (!err)
		w->checkpointed = data_end;
	return first_err ? first_err : err;
}

void perfdata_writer_free(struct perfdata_writer *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nr_events; i++) {
		free(w->events[i].name);
		free(w->events[i].ids);
	}
	free(w->events);
	for (size_t i = 0; i < w->nr_bids; i++)
		free((char *)w->bids[i].filename);
	free(w->bids);
	for (int i = 0; i < w->argc; i++)
		free(w->argv[i]);
	free(w->argv);
	free(w->buf);
	free(w->scratch);
	perfdata_zstd_enc_free(w->zenc);
	perfdata_sysinfo_free(&w->si);
	free(w);
}

uint64_t perfdata_writer_size(const struct perfdata_writer *w)
{
	return w->flushed + w->buf_len;
}

uint64_t perfdata_writer_nr_samples(const struct perfdata_writer *w)
{
	return w->nr_samples;
}

const char *perfdata_writer_compression_error(const struct perfdata_writer *w)
{
	return w->zfailed ? perfdata_zstd_enc_error(w->zenc) : NULL;
}

void perfdata_writer_compression_stats(const struct perfdata_writer *w, uint64_t *in,
				       uint64_t *out)
{
	*in = w->zin;
	*out = w->zout;
}
