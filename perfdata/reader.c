// SPDX-License-Identifier: MIT
/*
 * reader.c - stream a perf.data file (file or pipe mode) record by record.
 *
 * Contract: see reader.h. In short:
 *   - The mode comes from the header's size field (104 or the pre-features
 *     72 = file mode, 16 = pipe mode), after the magic was checked.
 *   - File mode needs pread(2) (a seekable fd): attrs, their id arrays and
 *     the feature sections are read at open; records then stream from the
 *     data section. Pipe mode only ever read(2)s forward, so stdin works.
 *   - Memory is bounded by the read-ahead buffer, one 64 KiB record buffer
 *     and the metadata (events, features, build-ids), never by the number
 *     of records. Everything read from the file is checked against hard
 *     limits before it is allocated.
 *   - Every error is sticky, returns -errno and leaves a one-line message
 *     with the offset at which the input went wrong.
 *
 * Record bodies are yielded 8-byte aligned: straight from the read-ahead
 * buffer when they sit aligned there, else copied (perf's pipe-mode
 * HEADER_BUILD_ID records are 36 + 64k bytes long, which misaligns the
 * stream for every record after them).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compress.h"
#include "features.h"
#include "reader.h"
#include "tools/lib/sorted.h"

#define READAHEAD_SIZE		(256 * 1024)
#define RECORD_MAX		65535		/* header.size is a u16 */

/* Limits on metadata read from the file: beyond them the file is corrupt. */
#define MAX_EVENTS		4096
#define MAX_IDS_TOTAL		(1U << 22)
#define MAX_ATTR_SIZE		4096
#define MAX_FEATURE_SIZE	(64ULL << 20)
#define MAX_BUILD_IDS		(1U << 16)
/* Decompressed records waiting to be yielded: room for a whole largest one. */
#define ZBUF_SIZE		(256 * 1024)
/*
 * How far one COMPRESSED record may inflate. perf compresses one ring-buffer
 * flush at a time and decompresses into a buffer of the ring size, which the
 * COMPRESSED feature gives as mmap_len: allow that (at least 1 MiB, at most
 * 1 GiB), or 64 MiB when the feature is missing. Memory is bounded anyway
 * (ZBUF_SIZE); this bounds the time a few KiB of input can cost.
 */
#define ZPIECE_DEFAULT		(64ULL << 20)
#define ZPIECE_MIN		(1ULL << 20)
#define ZPIECE_MAX		(1ULL << 30)
/* Feature payloads and build-id file names kept at once, all together. */
#define MAX_META_BYTES		(256ULL << 20)
/*
 * Ids sorted into the id map over the whole read. A well-formed input sorts
 * its ids once (file mode) or once per batch of HEADER_ATTR records (pipe);
 * a stream that interleaves thousands of attrs with samples would re-sort
 * millions of ids each time (quadratic): beyond this it is rejected.
 */
#define MAX_ID_SORT_WORK	(4ULL * MAX_IDS_TOTAL)

struct feature {
	uint8_t *data;		/* size bytes + a NUL so strings always end */
	size_t size;
	bool present;
};

struct id_entry {
	uint64_t id;
	uint32_t event;
};

struct perfdata_reader {
	int fd;
	char *name;
	bool pipe;
	bool seekable;		/* pread() works: use it, never move the fd offset */
	char err[512];
	int failed;		/* sticky -errno once an error happened */

	struct perfdata_file_header hdr;
	uint64_t data_end;	/* file mode: end of the data section; pipe: UINT64_MAX */
	bool empty_data_note;	/* file mode, data.size == 0 but bytes follow */

	/* Read-ahead: buf[head, len) holds the stream bytes from offset pos on. */
	uint8_t *buf;
	size_t head, len;
	uint64_t pos;		/* stream offset of buf[head] */
	uint64_t skip;		/* payload bytes to skip before the next record */
	uint64_t keep_tracing;	/* of which the first bytes are TRACING_DATA (pipe) */
	uint64_t *rec;		/* aligned copy of a record that was not aligned in buf */
	uint64_t rec_offset;

	struct perfdata_event *events;
	size_t nr_events;
	struct id_entry *id_map;	/* sorted by id */
	size_t nr_id_map;
	size_t nr_ids;			/* of all events; the map may lag behind */
	uint64_t id_sort_work;		/* ids sorted so far, against MAX_ID_SORT_WORK */
	/* Events or EVENT_DESC changed since the id map was built and the
	 * names applied: sync_events() before anyone looks an id up. */
	bool events_dirty;

	struct feature feat[PERFDATA_FEAT_BITS];

	struct perfdata_build_id *build_ids;	/* filenames are owned */
	size_t nr_build_ids;

	/*
	 * COMPRESSED records (perf record -z): after one is yielded, the
	 * records decompressed from it are; a record cut at the end of one
	 * piece waits in zbuf for the next.
	 */
	struct perfdata_zstd_dec *zdec;
	struct perfdata_zstd_buf zin;	/* payload of the current COMPRESSED record */
	uint8_t *zbuf;			/* [zhead, zlen): decompressed, not yet yielded */
	size_t zhead, zlen;
	uint64_t *zrec;			/* aligned copy of an inner record not aligned in zbuf */
	bool inner;			/* the last record came out of a COMPRESSED one */
	uint64_t zpiece, zpiece_max;	/* bytes the current piece inflated to, and the cap */
	uint64_t meta_bytes;	/* features + build-id names held, against MAX_META_BYTES */
};

__attribute__((format(printf, 2, 3)))
static int fail(struct perfdata_reader *r, const char *fmt, ...)
{
	int n = snprintf(r->err, sizeof(r->err), "%s: ", r->name);
	va_list ap;

	/* snprintf returns the length it wanted: a long name fills err alone. */
	if (n < 0 || (size_t)n >= sizeof(r->err))
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof(r->err) - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int fail_io(struct perfdata_reader *r, int err, const char *what, uint64_t off)
{
	snprintf(r->err, sizeof(r->err), "%s: read error at offset %#llx (%s): %s", r->name,
		 (unsigned long long)off, what, strerror(err));
	return -EIO;
}

/* Read exactly n bytes at offset off (file mode). 0, -EIO or -ENODATA on a short read. */
static int pread_full(struct perfdata_reader *r, void *dst, size_t n, uint64_t off,
		      const char *what)
{
	size_t done = 0;

	while (done < n) {
		ssize_t got = pread(r->fd, (uint8_t *)dst + done, n - done, (off_t)(off + done));

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return fail_io(r, errno, what, off + done);
		if (got == 0) {
			fail(r, "%s at offset %#llx is cut short: the file ends after %zu of its %zu bytes",
			     what, (unsigned long long)off, done, n);
			return -ENODATA;
		}
		done += (size_t)got;
	}
	return 0;
}

/* ---- the read-ahead stream ---------------------------------------------- */

/*
 * Make at least `need` bytes available at buf[head]. Returns how many are
 * available (less than need only at the end of the stream or the data
 * section), or -EIO.
 */
static ssize_t stream_fill(struct perfdata_reader *r, size_t need)
{
	size_t avail = r->len - r->head;

	if (avail >= need)
		return (ssize_t)avail;
	memmove(r->buf, r->buf + r->head, avail);
	r->head = 0;
	r->len = avail;
	while (r->len < need) {
		uint64_t at = r->pos + r->len;
		size_t room = READAHEAD_SIZE - r->len;
		ssize_t got;

		if (at >= r->data_end)
			break;
		if (room > r->data_end - at)
			room = (size_t)(r->data_end - at);
		if (r->seekable)
			got = pread(r->fd, r->buf + r->len, room, (off_t)at);
		else
			got = read(r->fd, r->buf + r->len, room);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return fail_io(r, errno, "data", at);
		if (got == 0)
			break;
		r->len += (size_t)got;
	}
	return (ssize_t)(r->len - r->head);
}

/* Drop `n` stream bytes (payloads that follow TRACING_DATA / AUXTRACE records). */
static int stream_skip(struct perfdata_reader *r, uint64_t n)
{
	while (n) {
		size_t avail = r->len - r->head;

		if (!avail) {
			if (!r->pipe) {
				/* File mode: no need to read what we skip. */
				if (n > r->data_end - r->pos)
					break;
				r->pos += n;
				return 0;
			}
			ssize_t got = stream_fill(r, 1);

			if (got < 0)
				return (int)got;
			if (got == 0)
				break;
			avail = (size_t)got;
		}
		if (avail > n)
			avail = (size_t)n;
		r->head += avail;
		r->pos += avail;
		n -= avail;
	}
	if (n)
		return fail(r, "payload ending at offset %#llx is cut short: %llu bytes missing",
			    (unsigned long long)(r->pos + n), (unsigned long long)n);
	return 0;
}

/* ---- events --------------------------------------------------------------- */

static int id_entry_cmp(const void *a, const void *b)
{
	const struct id_entry *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int rebuild_id_map(struct perfdata_reader *r)
{
	size_t n = r->nr_ids, k = 0;
	struct id_entry *map;

	if (r->id_sort_work + n > MAX_ID_SORT_WORK)
		return fail(r, "HEADER_ATTR records keep arriving between other records (%zu events, "
			    "%zu ids, last at offset %#llx): the stream is corrupt", r->nr_events, n,
			    (unsigned long long)r->rec_offset);
	r->id_sort_work += n;
	map = calloc(n ? n : 1, sizeof(*map));
	if (!map)
		return -ENOMEM;
	for (size_t i = 0; i < r->nr_events; i++)
		for (uint32_t j = 0; j < r->events[i].nr_ids; j++)
			map[k++] = (struct id_entry){ r->events[i].ids[j], (uint32_t)i };
	qsort(map, n, sizeof(*map), id_entry_cmp);
	free(r->id_map);
	r->id_map = map;
	r->nr_id_map = n;
	return 0;
}

/* Take an attr of `size` bytes as stored in the file: copy what we know. */
static void copy_attr(struct perf_event_attr *dst, const void *src, size_t size)
{
	memset(dst, 0, sizeof(*dst));
	memcpy(dst, src, size < sizeof(*dst) ? size : sizeof(*dst));
}

/* Add an event; ids are copied. The id map follows at the next sync_events(). */
static int add_event(struct perfdata_reader *r, const struct perf_event_attr *attr,
		     const void *ids, uint64_t nr_ids, uint64_t where)
{
	struct perfdata_event *ev, *events;
	size_t total = r->nr_ids + nr_ids;

	if (r->nr_events >= MAX_EVENTS)
		return fail(r, "more than %d events (attr at offset %#llx): the file is corrupt",
			    MAX_EVENTS, (unsigned long long)where);
	if (nr_ids > MAX_IDS_TOTAL || total > MAX_IDS_TOTAL)
		return fail(r, "attr at offset %#llx brings the id count to %zu, over the limit of %u: "
			    "the file is corrupt", (unsigned long long)where, total, MAX_IDS_TOTAL);
	events = realloc(r->events, (r->nr_events + 1) * sizeof(*events));
	if (!events)
		return -ENOMEM;
	r->events = events;
	ev = &events[r->nr_events];
	memset(ev, 0, sizeof(*ev));
	ev->attr = *attr;
	if (nr_ids) {
		ev->ids = malloc(nr_ids * sizeof(uint64_t));
		if (!ev->ids)
			return -ENOMEM;
		memcpy(ev->ids, ids, nr_ids * sizeof(uint64_t));
	}
	ev->nr_ids = (uint32_t)nr_ids;
	r->nr_events++;
	r->nr_ids = total;
	r->events_dirty = true;
	return 0;
}

static struct perfdata_event *event_by_id(const struct perfdata_reader *r, uint64_t id)
{
	size_t i = SORTED_PARTITION(r->nr_id_map, m, r->id_map[m].id < id);

	return i < r->nr_id_map && r->id_map[i].id == id ? &r->events[r->id_map[i].event] : NULL;
}

/* ---- features ------------------------------------------------------------- */

static int store_feature(struct perfdata_reader *r, unsigned int feat, const void *data,
			 size_t size);

/* Read `n` stream bytes (a payload that follows its record) as feature `feat`. */
static int stream_keep_feature(struct perfdata_reader *r, unsigned int feat, uint64_t n)
{
	uint8_t *data = malloc(n ? n : 1);
	uint64_t got = 0;
	int err;

	if (!data)
		return -ENOMEM;
	while (got < n) {
		ssize_t avail = stream_fill(r, 1);
		size_t take;

		if (avail <= 0) {
			free(data);
			if (avail < 0)
				return (int)avail;
			return fail(r, "payload ending at offset %#llx is cut short: %llu bytes missing",
				    (unsigned long long)(r->pos + n - got),
				    (unsigned long long)(n - got));
		}
		take = (size_t)avail < n - got ? (size_t)avail : (size_t)(n - got);
		memcpy(data + got, r->buf + r->head, take);
		r->head += take;
		r->pos += take;
		got += take;
	}
	err = store_feature(r, feat, data, (size_t)n);
	free(data);
	return err;
}

/* Account for n more bytes of metadata; at what offset, for the message. */
static int take_meta_bytes(struct perfdata_reader *r, uint64_t n, uint64_t where)
{
	if (n > MAX_META_BYTES - r->meta_bytes)
		return fail(r, "features and build-ids up to offset %#llx take more than %llu MiB: "
			    "the file is corrupt", (unsigned long long)where, MAX_META_BYTES >> 20);
	r->meta_bytes += n;
	return 0;
}

static int store_feature(struct perfdata_reader *r, unsigned int feat, const void *data,
			 size_t size)
{
	struct feature *f = &r->feat[feat];
	uint8_t *copy;

	r->meta_bytes -= f->size;	/* a later copy replaces the earlier one */
	f->size = 0;
	if (take_meta_bytes(r, size, r->rec_offset))
		return -EINVAL;
	copy = malloc(size + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, data, size);
	copy[size] = '\0';
	free(f->data);
	f->data = copy;
	f->size = size;
	f->present = true;
	return 0;
}

/*
 * EVENT_DESC names the events. A description names the event its first id
 * belongs to (perf's rule); with one event, or no ids, position decides.
 */
static int apply_event_desc(struct perfdata_reader *r)
{
	const struct feature *f = &r->feat[PERFDATA_FEAT_EVENT_DESC];
	struct perfdata_event_desc_iter it;
	struct perfdata_event_desc d;
	int ret;

	if (!f->present)
		return 0;
	if (perfdata_event_desc_begin(&it, f->data, f->size))
		return fail(r, "EVENT_DESC feature is too short (%zu bytes)", f->size);
	while ((ret = perfdata_event_desc_next(&it, &d)) > 0) {
		uint32_t i = it.i - 1;
		struct perfdata_event *ev = NULL;

		if (d.nr_ids) {
			uint64_t id0;

			memcpy(&id0, d.ids, 8);
			ev = event_by_id(r, id0);
		}
		if (!ev && r->nr_events == 1 && (!d.nr_ids || !r->nr_id_map))
			ev = &r->events[0];
		else if (!ev && !d.nr_ids && i < r->nr_events)
			ev = &r->events[i];
		if (!ev || ev->name || !memchr(d.name, '\0', d.name_max) || !*d.name)
			continue;
		ev->name = strdup(d.name);
		if (!ev->name)
			return -ENOMEM;
	}
	if (ret < 0)
		return fail(r, "EVENT_DESC feature: description %u of %u runs past its end "
			    "(%zu bytes)", it.i, it.nr, f->size);
	return 0;
}

/* Build the id map and name the events, once per batch of attrs / EVENT_DESC. */
static int sync_events(struct perfdata_reader *r)
{
	int err;

	if (!r->events_dirty)
		return 0;
	err = rebuild_id_map(r);
	if (!err)
		err = apply_event_desc(r);
	if (!err)
		r->events_dirty = false;
	return err;
}

/* Parse one build-id entry ({header, pid, build_id[20], size, res[3]} + name). */
static int add_build_id(struct perfdata_reader *r, const uint8_t *rec, size_t size,
			uint64_t where)
{
	struct perfdata_build_id *b, *all, dec;
	size_t name_len;

	if (size < PERFDATA_BUILD_ID_RECORD_SIZE)
		return fail(r, "build-id record at offset %#llx has size %zu, below the minimum 36",
			    (unsigned long long)where, size);
	if (r->nr_build_ids >= MAX_BUILD_IDS)
		return fail(r, "more than %u build-ids (at offset %#llx): the file is corrupt",
			    MAX_BUILD_IDS, (unsigned long long)where);
	if (perfdata_decode_build_id(rec, size, &dec, &name_len))
		return fail(r, "build-id record at offset %#llx has build-id size %u, over 20",
			    (unsigned long long)where, dec.size);
	all = realloc(r->build_ids, (r->nr_build_ids + 1) * sizeof(*all));
	if (!all)
		return -ENOMEM;
	r->build_ids = all;
	b = &all[r->nr_build_ids];
	*b = dec;
	b->filename = strndup(dec.filename, name_len);
	if (!b->filename)
		return -ENOMEM;
	if (take_meta_bytes(r, name_len + 1, where)) {
		free((char *)b->filename);
		return -EINVAL;
	}
	r->nr_build_ids++;
	return 0;
}

/* The BUILD_ID feature: build-id records back to back, each header.size long. */
static int parse_build_id_feature(struct perfdata_reader *r, uint64_t where)
{
	const struct feature *f = &r->feat[PERFDATA_FEAT_BUILD_ID];
	size_t off = 0;

	while (f->present && off < f->size) {
		struct perf_event_header h;
		int err;

		if (f->size - off < sizeof(h))
			return fail(r, "BUILD_ID feature at offset %#llx: entry at +%zu is cut short",
				    (unsigned long long)where, off);
		memcpy(&h, f->data + off, sizeof(h));
		if (h.size < PERFDATA_BUILD_ID_RECORD_SIZE || h.size > f->size - off)
			return fail(r, "BUILD_ID feature at offset %#llx: entry at +%zu has size %u "
				    "(%zu bytes left)", (unsigned long long)where, off, h.size,
				    f->size - off);
		err = add_build_id(r, f->data + off, h.size, where + off);
		if (err)
			return err;
		off += h.size;
	}
	return 0;
}

/* ---- open: file mode ------------------------------------------------------ */

static bool section_fits(const struct perfdata_file_section *s, uint64_t file_size)
{
	return s->offset <= file_size && s->size <= file_size - s->offset;
}

static int read_attrs(struct perfdata_reader *r, uint64_t file_size)
{
	const struct perfdata_file_header *h = &r->hdr;
	uint64_t nr, attr_bytes;
	uint8_t *entry = NULL;
	int err = 0;

	if (!h->attrs.size)
		return 0;
	if (h->attr_size < PERF_ATTR_SIZE_VER0 + sizeof(struct perfdata_file_section) ||
	    h->attr_size > MAX_ATTR_SIZE)
		return fail(r, "header attr_size %llu is impossible (an attr is 64..%d bytes plus "
			    "16 for its ids section)", (unsigned long long)h->attr_size,
			    MAX_ATTR_SIZE - 16);
	nr = h->attrs.size / h->attr_size;
	if (nr > MAX_EVENTS)
		return fail(r, "attrs section holds %llu attrs, over the limit of %d: the header is "
			    "corrupt", (unsigned long long)nr, MAX_EVENTS);
	attr_bytes = h->attr_size - sizeof(struct perfdata_file_section);
	entry = malloc(h->attr_size);
	if (!entry)
		return -ENOMEM;
	for (uint64_t i = 0; i < nr && !err; i++) {
		uint64_t off = h->attrs.offset + i * h->attr_size;
		struct perfdata_file_section ids;
		struct perf_event_attr attr;
		uint64_t *idv = NULL;
		uint64_t nr_ids;

		err = pread_full(r, entry, h->attr_size, off, "attr");
		if (err)
			break;
		copy_attr(&attr, entry, attr_bytes);
		memcpy(&ids, entry + attr_bytes, sizeof(ids));
		if (!section_fits(&ids, file_size)) {
			err = fail(r, "attr %llu at offset %#llx: its ids section [%#llx, +%llu) runs "
				   "past the end of the file (%llu bytes)", (unsigned long long)i,
				   (unsigned long long)off, (unsigned long long)ids.offset,
				   (unsigned long long)ids.size, (unsigned long long)file_size);
			break;
		}
		nr_ids = ids.size / sizeof(uint64_t);
		if (nr_ids > MAX_IDS_TOTAL) {
			err = fail(r, "attr %llu at offset %#llx claims %llu ids, over the limit of %u",
				   (unsigned long long)i, (unsigned long long)off,
				   (unsigned long long)nr_ids, MAX_IDS_TOTAL);
			break;
		}
		if (nr_ids) {
			idv = malloc(nr_ids * sizeof(*idv));
			if (!idv) {
				err = -ENOMEM;
				break;
			}
			err = pread_full(r, idv, nr_ids * sizeof(*idv), ids.offset, "attr ids");
		}
		if (!err)
			err = add_event(r, &attr, idv, nr_ids, off);
		free(idv);
	}
	free(entry);
	return err;
}

static int read_features(struct perfdata_reader *r, uint64_t file_size)
{
	const struct perfdata_file_header *h = &r->hdr;
	uint64_t table = h->data.offset + h->data.size;
	unsigned int nr = 0, k = 0;
	struct perfdata_file_section *secs;
	int err = 0;

	for (unsigned int i = 0; i < PERFDATA_FEAT_BITS; i++)
		nr += (h->features[i / 64] >> (i % 64)) & 1;
	if (!nr)
		return 0;
	if (table > file_size || (uint64_t)nr * sizeof(*secs) > file_size - table)
		return fail(r, "feature table at offset %#llx (%u sections) runs past the end of the "
			    "file (%llu bytes): the file is truncated", (unsigned long long)table, nr,
			    (unsigned long long)file_size);
	secs = calloc(nr, sizeof(*secs));
	if (!secs)
		return -ENOMEM;
	err = pread_full(r, secs, nr * sizeof(*secs), table, "feature table");
	for (unsigned int feat = 0; feat < PERFDATA_FEAT_BITS && !err; feat++) {
		const struct perfdata_file_section *s;
		uint8_t *data;

		if (!((h->features[feat / 64] >> (feat % 64)) & 1))
			continue;
		s = &secs[k++];
		if (!section_fits(s, file_size)) {
			err = fail(r, "feature %u section [%#llx, +%llu) runs past the end of the file "
				   "(%llu bytes): the file is truncated", feat, (unsigned long long)s->offset,
				   (unsigned long long)s->size, (unsigned long long)file_size);
			break;
		}
		if (s->size > MAX_FEATURE_SIZE) {
			err = fail(r, "feature %u at offset %#llx claims %llu bytes, over the limit of "
				   "%llu", feat, (unsigned long long)s->offset,
				   (unsigned long long)s->size, MAX_FEATURE_SIZE);
			break;
		}
		err = take_meta_bytes(r, s->size, s->offset);
		if (err)
			break;
		data = malloc(s->size + 1);
		if (!data) {
			err = -ENOMEM;
			break;
		}
		err = pread_full(r, data, s->size, s->offset, "feature");
		if (!err) {
			data[s->size] = '\0';
			r->feat[feat] = (struct feature){ data, s->size, true };
			if (feat == PERFDATA_FEAT_BUILD_ID)
				err = parse_build_id_feature(r, s->offset);
		} else {
			free(data);
		}
	}
	free(secs);
	r->events_dirty = true;		/* EVENT_DESC may name the events */
	return err;
}

static int open_file_mode(struct perfdata_reader *r, uint64_t hdr_size)
{
	struct perfdata_file_header *h = &r->hdr;
	uint64_t file_size;
	struct stat st;
	off_t end;
	int err;

	if (!r->seekable)
		return fail(r, "file-mode perf.data on a pipe: it needs a seekable file (perf writes "
			    "streams in pipe mode with -o -)");
	if (fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode)) {
		file_size = (uint64_t)st.st_size;
	} else {
		end = lseek(r->fd, 0, SEEK_END);
		if (end < 0)
			return fail_io(r, errno, "file size", 0);
		file_size = (uint64_t)end;
	}
	memset(h, 0, sizeof(*h));
	err = pread_full(r, h, hdr_size, 0, "file header");
	if (err)
		return err;
	if (hdr_size != sizeof(*h))
		memset(h->features, 0, sizeof(h->features));	/* pre-features header */

	if (!section_fits(&h->attrs, file_size))
		return fail(r, "attrs section [%#llx, +%llu) runs past the end of the file (%llu "
			    "bytes): the file is truncated", (unsigned long long)h->attrs.offset,
			    (unsigned long long)h->attrs.size, (unsigned long long)file_size);
	if (!section_fits(&h->data, file_size))
		return fail(r, "data section [%#llx, +%llu) runs past the end of the file (%llu "
			    "bytes): the file is truncated", (unsigned long long)h->data.offset,
			    (unsigned long long)h->data.size, (unsigned long long)file_size);
	err = read_attrs(r, file_size);
	if (!err)
		err = read_features(r, file_size);
	if (!err)
		err = sync_events(r);
	if (err)
		return err;

	r->pos = h->data.offset;
	r->data_end = h->data.offset + h->data.size;
	/*
	 * A recorder that died before it first patched data.size leaves 0 there
	 * and records after data.offset: perf shows nothing of such a file. A
	 * finished file always has features, so an empty finished recording
	 * (data.size 0, features after data.offset) is not mistaken for one.
	 */
	r->empty_data_note = h->data.size == 0 && h->data.offset && file_size > h->data.offset &&
			     !(h->features[0] | h->features[1] | h->features[2] | h->features[3]);
	return 0;
}

/* ---- open ----------------------------------------------------------------- */

int perfdata_reader_open(int fd, const char *name, struct perfdata_reader **out)
{
	struct perfdata_reader *r;
	struct perfdata_pipe_header ph;
	ssize_t got;
	int err;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = fd;
	r->name = strdup(name ? name : "perf.data");
	r->buf = malloc(READAHEAD_SIZE);
	r->rec = malloc(RECORD_MAX + 1);
	if (!r->name || !r->buf || !r->rec) {
		perfdata_reader_free(r);
		return -ENOMEM;
	}
	r->data_end = UINT64_MAX;
	*out = r;

	/* pread at 0 tells a seekable fd apart from a pipe without consuming it. */
	got = pread(fd, &ph, 0, 0);
	r->seekable = got == 0;
	got = stream_fill(r, sizeof(ph));
	if (got < 0)
		return r->failed = (int)got;
	if (got == 0) {
		fail(r, "the file is empty: no perf.data header");
		return r->failed = -EINVAL;
	}
	memcpy(&ph, r->buf, (size_t)got < sizeof(ph) ? (size_t)got : sizeof(ph));
	if ((size_t)got < sizeof(ph.magic) || ph.magic != PERFDATA_MAGIC) {
		if ((size_t)got >= sizeof(ph.magic) &&
		    ph.magic == __builtin_bswap64(PERFDATA_MAGIC))
			fail(r, "byte-swapped magic: a big-endian perf.data, which is not supported");
		else if ((size_t)got >= sizeof(ph.magic) && !memcmp(&ph.magic, "PERFFILE", 8))
			fail(r, "version 1 perf.data (magic PERFFILE): too old, re-record it");
		else
			fail(r, "bad magic at offset 0: not a perf.data file (expected \"PERFILE2\")");
		return r->failed = -EINVAL;
	}
	if ((size_t)got < sizeof(ph)) {
		fail(r, "header at offset 0 is cut short: %zd of at least 16 bytes", got);
		return r->failed = -EINVAL;
	}

	if (ph.size == PERFDATA_PIPE_HEADER_SIZE) {
		r->pipe = true;
		r->head = sizeof(ph);
		r->pos = sizeof(ph);
		return 0;
	}
	if (ph.size != PERFDATA_FILE_HEADER_SIZE &&
	    ph.size != offsetof(struct perfdata_file_header, features)) {
		fail(r, "header size at offset 8 is %llu: neither 104 (file mode) nor 16 (pipe mode)",
		     (unsigned long long)ph.size);
		return r->failed = -EINVAL;
	}
	r->head = r->len = 0;	/* file mode reads everything with pread */
	err = open_file_mode(r, ph.size);
	if (err)
		return r->failed = err;
	return 0;
}

void perfdata_reader_free(struct perfdata_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nr_events; i++) {
		free(r->events[i].name);
		free(r->events[i].ids);
	}
	free(r->events);
	free(r->id_map);
	for (unsigned int i = 0; i < PERFDATA_FEAT_BITS; i++)
		free(r->feat[i].data);
	for (size_t i = 0; i < r->nr_build_ids; i++)
		free((char *)r->build_ids[i].filename);
	free(r->build_ids);
	free(r->buf);
	free(r->rec);
	perfdata_zstd_dec_free(r->zdec);
	free(r->zbuf);
	free(r->zrec);
	free(r->name);
	free(r);
}

const char *perfdata_reader_error(const struct perfdata_reader *r)
{
	return r->err;
}

bool perfdata_reader_is_pipe(const struct perfdata_reader *r)
{
	return r->pipe;
}

uint64_t perfdata_reader_offset(const struct perfdata_reader *r)
{
	return r->rec_offset;
}

bool perfdata_reader_in_compressed(const struct perfdata_reader *r)
{
	return r->inner;
}

/* ---- records -------------------------------------------------------------- */

/* HEADER_ATTR: the attr (attr.size bytes, 0 = VER0) then the event's ids. */
static int absorb_header_attr(struct perfdata_reader *r, const struct perf_event_header *h)
{
	const uint8_t *body = (const uint8_t *)(h + 1);
	size_t body_size = h->size - sizeof(*h);
	struct perf_event_attr attr;
	uint32_t attr_size;

	if (body_size < PERF_ATTR_SIZE_VER0)
		return fail(r, "HEADER_ATTR at offset %#llx has size %u, too small for an attr",
			    (unsigned long long)r->rec_offset, h->size);
	memcpy(&attr_size, body + offsetof(struct perf_event_attr, size), sizeof(attr_size));
	if (!attr_size)
		attr_size = PERF_ATTR_SIZE_VER0;
	if (attr_size < PERF_ATTR_SIZE_VER0 || attr_size > body_size)
		return fail(r, "HEADER_ATTR at offset %#llx: attr.size %u does not fit its %zu-byte "
			    "body", (unsigned long long)r->rec_offset, attr_size, body_size);
	copy_attr(&attr, body, attr_size);
	/* An EVENT_DESC seen before this attr may name it: see sync_events(). */
	return add_event(r, &attr, body + attr_size, (body_size - attr_size) / 8, r->rec_offset);
}

/* HEADER_FEATURE: u64 feature id, then the payload as in a file's feature section. */
static int absorb_header_feature(struct perfdata_reader *r, const struct perf_event_header *h)
{
	const uint8_t *body = (const uint8_t *)(h + 1);
	size_t size = h->size - sizeof(*h);
	uint64_t feat;
	int err;

	if (size < sizeof(feat))
		return fail(r, "HEADER_FEATURE at offset %#llx has size %u, below the minimum 16",
			    (unsigned long long)r->rec_offset, h->size);
	memcpy(&feat, body, sizeof(feat));
	/* perf ends its feature records with an empty one for HEADER_LAST_FEATURE. */
	if (feat >= PERFDATA_FEAT_BITS || (feat >= PERFDATA_FEAT_LAST && size == sizeof(feat)))
		return 0;
	err = store_feature(r, (unsigned int)feat, body + sizeof(feat), size - sizeof(feat));
	if (!err && feat == PERFDATA_FEAT_EVENT_DESC)
		r->events_dirty = true;
	return err;
}

/* Kernel record types come from the ring buffer, which keeps 8-byte records. */
static bool size_must_be_aligned(uint32_t type)
{
	return type < PERFDATA_RECORD_HEADER_ATTR;
}

static const char *end_name(const struct perfdata_reader *r)
{
	return r->pipe ? "stream" : "data section";
}

static int absorb_record(struct perfdata_reader *r, const struct perf_event_header *rec);

/* The record of size bytes at at, or its copy in copy when at is not
 * 8-aligned: decoders read its u64 fields in place. */
static const struct perf_event_header *aligned_record(const uint8_t *at, size_t size,
						      uint64_t *copy)
{
	if ((uintptr_t)at % 8) {
		memcpy(copy, at, size);
		return (const struct perf_event_header *)copy;
	}
	return (const struct perf_event_header *)at;
}

/*
 * A COMPRESSED record: its payload is the next piece of the file's zstd
 * stream; next_inner() yields what it decompresses to.
 */
static int start_compressed(struct perfdata_reader *r, const struct perf_event_header *rec)
{
	struct perfdata_feature_compressed zf;
	int err;

	if (r->inner)
		return fail(r, "compressed record at offset %#llx inside compressed data",
			    (unsigned long long)r->rec_offset);
	if (!r->zdec) {
		err = perfdata_zstd_dec_new(&r->zdec);
		if (err)
			return err == -ENOMEM ? err : fail(r, "cannot set up zstd decompression");
		r->zbuf = malloc(ZBUF_SIZE);
		r->zrec = malloc(RECORD_MAX + 1);
		if (!r->zbuf || !r->zrec)
			return -ENOMEM;
	}
	r->zin = (struct perfdata_zstd_buf){ (void *)(rec + 1), rec->size - sizeof(*rec), 0 };
	r->zpiece = 0;
	r->zpiece_max = ZPIECE_DEFAULT;
	if (r->feat[PERFDATA_FEAT_COMPRESSED].present &&
	    !perfdata_feature_decode_compressed(r->feat[PERFDATA_FEAT_COMPRESSED].data,
						r->feat[PERFDATA_FEAT_COMPRESSED].size, &zf))
		r->zpiece_max = zf.mmap_len < ZPIECE_MIN ? ZPIECE_MIN
			      : zf.mmap_len > ZPIECE_MAX ? ZPIECE_MAX : zf.mmap_len;
	return 0;
}

/*
 * The next record decompressed from the current COMPRESSED record: 1 and
 * *rec, 0 when the piece is used up (a record cut at its end waits for the
 * next piece), -errno. Memory stays at zbuf however much a piece inflates:
 * it is decompressed as its records are yielded.
 */
static int next_inner(struct perfdata_reader *r, const struct perf_event_header **rec)
{
	for (;;) {
		size_t avail = r->zlen - r->zhead;
		struct perfdata_zstd_buf out;
		struct perf_event_header h;
		int err;

		if (avail >= sizeof(h)) {
			const uint8_t *at = r->zbuf + r->zhead;

			memcpy(&h, at, sizeof(h));
			if (h.size < sizeof(h) || (size_must_be_aligned(h.type) && h.size % 8))
				return fail(r, "compressed record at offset %#llx holds a record of type %u "
					    "with size %u", (unsigned long long)r->rec_offset, h.type,
					    h.size);
			/* Their payloads follow them outside their size: not in a piece. */
			if (h.type == PERFDATA_RECORD_HEADER_TRACING_DATA ||
			    h.type == PERFDATA_RECORD_AUXTRACE || h.type == PERFDATA_RECORD_COMPRESSED)
				return fail(r, "compressed record at offset %#llx holds a record of type "
					    "%u, which cannot be compressed",
					    (unsigned long long)r->rec_offset, h.type);
			if (h.size <= avail) {
				r->zhead += h.size;
				r->inner = true;
				*rec = aligned_record(at, h.size, r->zrec);
				return absorb_record(r, *rec);
			}
		}
		memmove(r->zbuf, r->zbuf + r->zhead, avail);
		r->zhead = 0;
		r->zlen = avail;
		out = (struct perfdata_zstd_buf){ r->zbuf, ZBUF_SIZE, avail };
		err = perfdata_zstd_decompress(r->zdec, &r->zin, &out);
		if (err == -ENOMEM)
			return err;
		if (err)
			return fail(r, "compressed record at offset %#llx is corrupt: %s",
				    (unsigned long long)r->rec_offset, perfdata_zstd_dec_error(r->zdec));
		if (out.pos == r->zlen)
			return 0;
		r->zpiece += out.pos - r->zlen;
		if (r->zpiece > r->zpiece_max)
			return fail(r, "compressed record at offset %#llx inflates past %llu bytes, more "
				    "than perf ever writes in one (the COMPRESSED feature's mmap_len): "
				    "the file is corrupt", (unsigned long long)r->rec_offset,
				    (unsigned long long)r->zpiece_max);
		r->zlen = out.pos;
	}
}

static int next_record(struct perfdata_reader *r, const struct perf_event_header **rec)
{
	struct perf_event_header h;
	const uint8_t *at;
	ssize_t avail;
	int err = 0;

	if (r->keep_tracing) {
		uint64_t n = r->keep_tracing;

		r->keep_tracing = 0;
		err = stream_keep_feature(r, PERFDATA_FEAT_TRACING_DATA, n);
		if (err)
			return err;
		r->skip -= n;
	}
	if (r->skip) {
		uint64_t n = r->skip;

		r->skip = 0;
		err = stream_skip(r, n);
		if (err)
			return err;
	}
	if (r->pos >= r->data_end)
		return 0;
	avail = stream_fill(r, sizeof(h));
	if (avail < 0)
		return (int)avail;
	if (avail == 0) {
		if (r->pipe)
			return 0;
		return fail(r, "data section is cut short at offset %#llx: the file ends before the "
			    "%#llx that data.size promises", (unsigned long long)r->pos,
			    (unsigned long long)r->data_end);
	}
	if ((size_t)avail < sizeof(h))
		return fail(r, "record header at offset %#llx is cut short: the %s ends after %zd "
			    "bytes", (unsigned long long)r->pos, end_name(r), avail);
	memcpy(&h, r->buf + r->head, sizeof(h));
	if (h.size < sizeof(h))
		return fail(r, "record at offset %#llx (type %u) has size %u, below the 8-byte header",
			    (unsigned long long)r->pos, h.type, h.size);
	if (size_must_be_aligned(h.type) && h.size % 8)
		return fail(r, "record at offset %#llx (type %u) has size %u, not a multiple of 8",
			    (unsigned long long)r->pos, h.type, h.size);
	if (h.size > r->data_end - r->pos)
		return fail(r, "record at offset %#llx (type %u, size %u) runs past the end of the "
			    "data section at %#llx", (unsigned long long)r->pos, h.type, h.size,
			    (unsigned long long)r->data_end);
	avail = stream_fill(r, h.size);
	if (avail < 0)
		return (int)avail;
	if ((size_t)avail < h.size)
		return fail(r, "record at offset %#llx (type %u, size %u) is truncated: the %s ends "
			    "after %zd bytes", (unsigned long long)r->pos, h.type, h.size,
			    end_name(r), avail);
	at = r->buf + r->head;
	r->rec_offset = r->pos;
	r->head += h.size;
	r->pos += h.size;
	*rec = aligned_record(at, h.size, r->rec);
	return absorb_record(r, *rec);
}

/* What the reader itself takes from a record it yields; 1 or -errno. */
static int absorb_record(struct perfdata_reader *r, const struct perf_event_header *rec)
{
	const uint8_t *at = (const uint8_t *)rec;
	struct perf_event_header h = *rec;
	int err = 0;

	switch (h.type) {
	case PERFDATA_RECORD_HEADER_ATTR:
		/* The id map waits for the end of a run of attrs: sorted once. */
		if (r->pipe)
			return absorb_header_attr(r, rec) ?: 1;
		return 1;
	case PERFDATA_RECORD_HEADER_FEATURE:
		if (r->pipe)
			err = absorb_header_feature(r, rec);
		break;
	case PERFDATA_RECORD_HEADER_BUILD_ID:
		err = add_build_id(r, at, h.size, r->rec_offset);
		break;
	case PERFDATA_RECORD_COMPRESSED:
		err = start_compressed(r, rec);
		break;
	case PERFDATA_RECORD_HEADER_TRACING_DATA:
		/* { header, u32 size }: size bytes of tracing data follow, 8-aligned. */
		if (h.size >= sizeof(h) + 4) {
			uint32_t size;

			memcpy(&size, at + sizeof(h), sizeof(size));
			r->skip = perfdata_align8(size);
			/* In a pipe this is the only copy: keep it as the feature (tracepoint formats). */
			if (r->pipe && size <= MAX_FEATURE_SIZE)
				r->keep_tracing = size;
		}
		break;
	case PERFDATA_RECORD_AUXTRACE:
		/* { header, u64 size, ... }: size bytes of AUX data follow the record. */
		if (h.size >= sizeof(h) + 8)
			memcpy(&r->skip, at + sizeof(h), sizeof(r->skip));
		break;
	}
	/* Any record may be a SAMPLE to look up: events must be in sync now. */
	return err ?: sync_events(r) ?: 1;
}

int perfdata_reader_next(struct perfdata_reader *r, const struct perf_event_header **rec)
{
	int ret;

	*rec = NULL;
	if (r->failed)
		return r->failed;
	if (r->empty_data_note) {
		fail(r, "data.size in the header is 0 but data follows offset %#llx: the recorder "
		     "did not finish the file (perf reads no samples from it either)",
		     (unsigned long long)r->hdr.data.offset);
		return r->failed = -ENODATA;
	}
	ret = 0;
	if (r->zdec)
		ret = next_inner(r, rec);
	if (ret == 0) {
		r->inner = false;
		ret = next_record(r, rec);
	}
	if (ret == 0 && r->zhead < r->zlen)
		ret = fail(r, "the compressed records end inside a record: %zu bytes are left over",
			   r->zlen - r->zhead);
	if (ret == 0)
		ret = sync_events(r);	/* a stream that ends in HEADER_ATTRs */
	if (ret < 0) {
		*rec = NULL;
		r->failed = ret;
	}
	return ret;
}

/* ---- events and samples ---------------------------------------------------- */

size_t perfdata_reader_nr_events(const struct perfdata_reader *r)
{
	return r->nr_events;
}

const struct perfdata_event *perfdata_reader_event(const struct perfdata_reader *r, size_t i)
{
	return i < r->nr_events ? &r->events[i] : NULL;
}

/* perf's evlist__event2evsel(): one event takes everything, id 0 is the first. */
const struct perfdata_event *perfdata_reader_sample_event(const struct perfdata_reader *r,
							  const struct perf_event_header *h)
{
	uint64_t id;

	if (!r->nr_events)
		return NULL;
	if (r->nr_events == 1)
		return &r->events[0];
	if (perfdata_decode_sample_event_id(h, r->events[0].attr.sample_type, &id))
		return NULL;
	if (!id)
		return &r->events[0];
	return event_by_id(r, id);
}

int perfdata_reader_parse_sample(const struct perfdata_reader *r, const struct perf_event_header *h,
				 struct perfdata_sample *s, const struct perfdata_event **ev)
{
	const struct perfdata_event *e = perfdata_reader_sample_event(r, h);

	if (ev)
		*ev = e;
	if (!e) {
		memset(s, 0, sizeof(*s));
		return -ENOENT;
	}
	return perfdata_decode_sample(h, &e->attr, s);
}

int perfdata_reader_parse_sample_id(const struct perfdata_reader *r,
				    const struct perf_event_header *h,
				    struct perfdata_sample_id *sid)
{
	memset(sid, 0, sizeof(*sid));
	if (h->type == PERF_RECORD_SAMPLE)
		return -EINVAL;
	if (h->type >= PERFDATA_RECORD_HEADER_ATTR || !r->nr_events ||
	    !r->events[0].attr.sample_id_all)
		return 0;
	return perfdata_decode_sample_id(h, r->events[0].attr.sample_type, sid);
}

/* ---- features and build-ids ----------------------------------------------- */

const struct perfdata_file_header *perfdata_reader_file_header(const struct perfdata_reader *r)
{
	return r->pipe ? NULL : &r->hdr;
}

const void *perfdata_reader_feature(const struct perfdata_reader *r, unsigned int feat,
				    size_t *size)
{
	if (feat >= PERFDATA_FEAT_BITS || !r->feat[feat].present) {
		if (size)
			*size = 0;
		return NULL;
	}
	if (size)
		*size = r->feat[feat].size;
	return r->feat[feat].data;
}

const char *perfdata_reader_feature_string(const struct perfdata_reader *r, unsigned int feat)
{
	if (feat >= PERFDATA_FEAT_BITS || !r->feat[feat].present)
		return NULL;
	/* Stored payloads end in an extra NUL, as the decoder asks. */
	return perfdata_feature_string(r->feat[feat].data, r->feat[feat].size);
}

int perfdata_reader_for_each_build_id(const struct perfdata_reader *r, perfdata_build_id_fn fn,
				      void *ctx)
{
	for (size_t i = 0; i < r->nr_build_ids; i++) {
		int err = fn(&r->build_ids[i], ctx);

		if (err)
			return err;
	}
	return 0;
}
