// SPDX-License-Identifier: MIT
/*
 * records.c - encode single perf.data records into a caller's buffer.
 *
 * Layouts follow include/uapi/linux/perf_event.h; the sample_id trailer
 * follows perf's __perf_event__synthesize_id_sample(). Every encoder zeroes
 * its padding, so identical input gives identical bytes.
 */
#include <errno.h>
#include <string.h>

#include "records.h"

/* The sample_type bits that make up the sample_id trailer. */
#define TRAILER_BITS (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
		      PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)
/* A record's size is a u16. */
#define RECORD_MAX 0xfff8

/* A cursor over the output buffer; an overflow is remembered, not written. */
struct out {
	uint8_t *p;
	size_t len, cap;
	bool overflow;
};

static void put(struct out *o, const void *src, size_t n)
{
	if (o->overflow || n > o->cap - o->len) {
		o->overflow = true;
		return;
	}
	if (src)
		memcpy(o->p + o->len, src, n);
	else
		memset(o->p + o->len, 0, n);
	o->len += n;
}

static void put_u64(struct out *o, uint64_t v) { put(o, &v, 8); }

static void put_u32x2(struct out *o, uint32_t a, uint32_t b)
{
	uint32_t v[2] = { a, b };
	put(o, v, 8);
}

/* A NUL-terminated string zero-padded so the record ends 8-byte aligned. */
static void put_string8(struct out *o, const char *s)
{
	size_t n = strlen(s) + 1;

	put(o, s, n);
	put(o, NULL, perfdata_align8(n) - n);
}

static void put_header(struct out *o, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = 0 };

	put(o, &h, sizeof(h));
}

static void put_sample_id(struct out *o, uint64_t id_type, const struct perfdata_sample_id *sid)
{
	static const struct perfdata_sample_id zero;

	if (!sid)
		sid = &zero;
	if (id_type & PERF_SAMPLE_TID)
		put_u32x2(o, sid->pid, sid->tid);
	if (id_type & PERF_SAMPLE_TIME)
		put_u64(o, sid->time);
	if (id_type & PERF_SAMPLE_ID)
		put_u64(o, sid->id);
	if (id_type & PERF_SAMPLE_STREAM_ID)
		put_u64(o, sid->stream_id);
	if (id_type & PERF_SAMPLE_CPU)
		put_u32x2(o, sid->cpu, 0);
	if (id_type & PERF_SAMPLE_IDENTIFIER)
		put_u64(o, sid->id);
}

/* Patch the size into the header; the record's length or -errno. */
static ssize_t finish(struct out *o)
{
	if (o->overflow)
		return -E2BIG;
	if (o->len > RECORD_MAX || o->len % 8)
		return -EINVAL;
	((struct perf_event_header *)o->p)->size = (uint16_t)o->len;
	return (ssize_t)o->len;
}

/* The end of every record but a sample: its sample_id trailer, then its size. */
static ssize_t finish_id(struct out *o, uint64_t id_type, const struct perfdata_sample_id *sid)
{
	put_sample_id(o, id_type, sid);
	return finish(o);
}

static struct out out_init(void *buf, size_t cap)
{
	return (struct out){ .p = buf, .cap = cap };
}

/* A record's start: the cursor, with the header put (finish() patches its size). */
static struct out out_record(void *buf, size_t cap, uint32_t type, uint16_t misc)
{
	struct out o = out_init(buf, cap);

	put_header(&o, type, misc);
	return o;
}

size_t perfdata_sample_id_size(uint64_t id_type)
{
	return 8 * (size_t)__builtin_popcountll(id_type & TRAILER_BITS);
}

ssize_t perfdata_encode_mmap(void *buf, size_t cap, const struct perfdata_mmap *m,
			     uint64_t id_type, const struct perfdata_sample_id *sid)
{
	struct out o = out_record(buf, cap, PERF_RECORD_MMAP, m->misc);

	put_u32x2(&o, m->pid, m->tid);
	put_u64(&o, m->start);
	put_u64(&o, m->len);
	put_u64(&o, m->pgoff);
	put_string8(&o, m->filename);
	return finish_id(&o, id_type, sid);
}

ssize_t perfdata_encode_mmap2(void *buf, size_t cap, const struct perfdata_mmap *m,
			      uint64_t id_type, const struct perfdata_sample_id *sid)
{
	struct out o;
	uint16_t misc = m->misc;

	if (m->build_id_size > PERFDATA_BUILD_ID_MAX)
		return -EINVAL;
	if (m->build_id_size)
		misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	else
		misc &= ~PERF_RECORD_MISC_MMAP_BUILD_ID;
	o = out_record(buf, cap, PERF_RECORD_MMAP2, misc);
	put_u32x2(&o, m->pid, m->tid);
	put_u64(&o, m->start);
	put_u64(&o, m->len);
	put_u64(&o, m->pgoff);
	if (m->build_id_size) {
		/* u8 size, u8 reserved[3], u8 build_id[20]: the 24 bytes of maj..ino_generation */
		uint8_t bid[24] = { m->build_id_size };

		memcpy(bid + 4, m->build_id, m->build_id_size);
		put(&o, bid, sizeof(bid));
	} else {
		put_u32x2(&o, m->maj, m->min);
		put_u64(&o, m->ino);
		put_u64(&o, m->ino_generation);
	}
	put_u32x2(&o, m->prot, m->flags);
	put_string8(&o, m->filename);
	return finish_id(&o, id_type, sid);
}

ssize_t perfdata_encode_comm(void *buf, size_t cap, const struct perfdata_comm *c,
			     uint64_t id_type, const struct perfdata_sample_id *sid)
{
	struct out o = out_record(buf, cap, PERF_RECORD_COMM, c->exec ? PERF_RECORD_MISC_COMM_EXEC : 0);

	put_u32x2(&o, c->pid, c->tid);
	put_string8(&o, c->comm);
	return finish_id(&o, id_type, sid);
}

ssize_t perfdata_encode_ksymbol(void *buf, size_t cap, const struct perfdata_ksymbol *k,
				uint64_t id_type, const struct perfdata_sample_id *sid)
{
	struct out o = out_record(buf, cap, PERF_RECORD_KSYMBOL, 0);
	struct {
		uint32_t len;
		uint16_t ksym_type, flags;
	} fixed = { k->len, k->ksym_type, k->flags };

	put_u64(&o, k->addr);
	put(&o, &fixed, sizeof(fixed));
	put_string8(&o, k->name);
	return finish_id(&o, id_type, sid);
}

ssize_t perfdata_encode_task(void *buf, size_t cap, uint32_t type, const struct perfdata_task *t,
			     uint64_t id_type, const struct perfdata_sample_id *sid)
{
	struct out o;

	if (type != PERF_RECORD_FORK && type != PERF_RECORD_EXIT)
		return -EINVAL;
	o = out_record(buf, cap, type, 0);
	put_u32x2(&o, t->pid, t->ppid);
	put_u32x2(&o, t->tid, t->ptid);
	put_u64(&o, t->time);
	return finish_id(&o, id_type, sid);
}

ssize_t perfdata_encode_lost(void *buf, size_t cap, uint64_t id, uint64_t lost,
			     uint64_t id_type, const struct perfdata_sample_id *sid)
{
	struct out o = out_record(buf, cap, PERF_RECORD_LOST, 0);

	put_u64(&o, id);
	put_u64(&o, lost);
	return finish_id(&o, id_type, sid);
}

ssize_t perfdata_encode_lost_samples(void *buf, size_t cap, uint64_t lost,
				     uint64_t id_type, const struct perfdata_sample_id *sid)
{
	struct out o = out_record(buf, cap, PERF_RECORD_LOST_SAMPLES, 0);

	put_u64(&o, lost);
	return finish_id(&o, id_type, sid);
}

/* The sample_type bits this encoder knows how to lay out. */
#define SAMPLE_BITS_SUPPORTED (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
			       PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | \
			       PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
			       PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER | \
			       PERF_SAMPLE_STACK_USER)

ssize_t perfdata_encode_sample(void *buf, size_t cap, const struct perf_event_attr *attr,
			       const struct perfdata_sample *s)
{
	uint64_t st = attr->sample_type;
	struct out o;

	if (st & ~SAMPLE_BITS_SUPPORTED)
		return -EINVAL;
	o = out_record(buf, cap, PERF_RECORD_SAMPLE, s->misc);
	if (st & PERF_SAMPLE_IDENTIFIER)
		put_u64(&o, s->id);
	if (st & PERF_SAMPLE_IP)
		put_u64(&o, s->ip);
	if (st & PERF_SAMPLE_TID)
		put_u32x2(&o, s->pid, s->tid);
	if (st & PERF_SAMPLE_TIME)
		put_u64(&o, s->time);
	if (st & PERF_SAMPLE_ADDR)
		put_u64(&o, s->addr);
	if (st & PERF_SAMPLE_ID)
		put_u64(&o, s->id);
	if (st & PERF_SAMPLE_STREAM_ID)
		put_u64(&o, s->stream_id);
	if (st & PERF_SAMPLE_CPU)
		put_u32x2(&o, s->cpu, 0);
	if (st & PERF_SAMPLE_PERIOD)
		put_u64(&o, s->period);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		put_u64(&o, s->nr_callchain);
		put(&o, s->callchain, s->nr_callchain * 8);
	}
	if (st & PERF_SAMPLE_RAW) {
		/* u32 size + data, padded so the whole is a multiple of 8 (perf pads the data). */
		size_t padded = perfdata_align8(4 + (size_t)s->raw_size) - 4;
		uint32_t sz = (uint32_t)padded;

		put(&o, &sz, 4);
		put(&o, s->raw, s->raw_size);
		put(&o, NULL, padded - s->raw_size);
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		uint64_t want = (uint64_t)__builtin_popcountll(attr->sample_regs_user);

		put_u64(&o, s->regs_abi);
		if (s->regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
			if (s->nr_regs != want)
				return -EINVAL;
			put(&o, s->regs, want * 8);
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		/* size, data[size], then dyn_size only when size != 0 */
		if (s->stack_size % 8 || s->stack_dyn_size > s->stack_size)
			return -EINVAL;
		put_u64(&o, s->stack_size);
		if (s->stack_size) {
			/* Only dyn_size bytes are valid; the rest is written as zeros. */
			put(&o, s->stack, s->stack_dyn_size);
			put(&o, NULL, s->stack_size - s->stack_dyn_size);
			put_u64(&o, s->stack_dyn_size);
		}
	}
	return finish(&o);
}

size_t perfdata_sample_size(const struct perf_event_attr *attr, const struct perfdata_sample *s)
{
	uint64_t st = attr->sample_type;
	size_t n = sizeof(struct perf_event_header);

	if (st & ~SAMPLE_BITS_SUPPORTED)
		return 0;
	n += 8 * (size_t)__builtin_popcountll(st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
						    PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
						    PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
						    PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
						    PERF_SAMPLE_PERIOD));
	if (st & PERF_SAMPLE_CALLCHAIN)
		n += 8 + 8 * s->nr_callchain;
	if (st & PERF_SAMPLE_RAW)
		n += perfdata_align8(4 + (size_t)s->raw_size);
	if (st & PERF_SAMPLE_REGS_USER)
		n += 8 + (s->regs_abi ? 8 * (size_t)__builtin_popcountll(attr->sample_regs_user) : 0);
	if (st & PERF_SAMPLE_STACK_USER)
		n += 8 + (s->stack_size ? s->stack_size + 8 : 0);
	return n > RECORD_MAX ? 0 : n;
}

void perfdata_sample_fit_stack(const struct perf_event_attr *attr, struct perfdata_sample *s)
{
	uint64_t size = s->stack_size, room;
	size_t rest;

	if (!(attr->sample_type & PERF_SAMPLE_STACK_USER) || !size)
		return;
	s->stack_size = 0;
	rest = perfdata_sample_size(attr, s);
	/* Without the stack: the u64 size is counted; the data and dyn_size are not. */
	room = rest && rest + 8 < RECORD_MAX ? (RECORD_MAX - rest - 8) & ~(uint64_t)7 : 0;
	s->stack_size = size < room ? size : room;
	if (s->stack_dyn_size > s->stack_size)
		s->stack_dyn_size = s->stack_size;
}

size_t perfdata_callchain_join(const uint64_t *kernel, size_t nr_kernel, const uint64_t *user,
			       size_t nr_user, uint64_t *out)
{
	size_t n = 0;

	if (nr_kernel) {
		out[n++] = PERF_CONTEXT_KERNEL;
		memcpy(&out[n], kernel, nr_kernel * sizeof(*out));
		n += nr_kernel;
	}
	if (nr_user) {
		out[n++] = PERF_CONTEXT_USER;
		memcpy(&out[n], user, nr_user * sizeof(*out));
		n += nr_user;
	}
	return n;
}

uint16_t perfdata_sample_cpumode(bool kernel)
{
	return kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
}

ssize_t perfdata_encode_finished_round(void *buf, size_t cap)
{
	struct out o = out_record(buf, cap, PERFDATA_RECORD_FINISHED_ROUND, 0);

	return finish(&o);
}

ssize_t perfdata_encode_header_attr(void *buf, size_t cap, const struct perf_event_attr *attr,
				    const uint64_t *ids, uint32_t nr_ids)
{
	struct out o = out_record(buf, cap, PERFDATA_RECORD_HEADER_ATTR, 0);
	uint8_t a[PERFDATA_ATTR_SIZE] = { 0 };

	memcpy(a, attr, sizeof(*attr) < sizeof(a) ? sizeof(*attr) : sizeof(a));
	((struct perf_event_attr *)a)->size = PERFDATA_ATTR_SIZE;
	put(&o, a, sizeof(a));
	put(&o, ids, (size_t)nr_ids * 8);
	return finish(&o);
}

ssize_t perfdata_encode_header_feature(void *buf, size_t cap, uint32_t feat,
				       const void *payload, size_t size)
{
	struct out o;

	if (feat >= PERFDATA_FEAT_LAST)
		return -EINVAL;
	o = out_record(buf, cap, PERFDATA_RECORD_HEADER_FEATURE, 0);
	put_u64(&o, feat);
	put(&o, payload, size);
	put(&o, NULL, perfdata_align8(size) - size);
	return finish(&o);
}

ssize_t perfdata_encode_build_id(void *buf, size_t cap, uint32_t type, uint16_t cpumode,
				 int32_t pid, const uint8_t *build_id, size_t size,
				 const char *filename)
{
	struct perfdata_build_id_record r;
	size_t name_len = strlen(filename) + 1;
	size_t padded = (name_len + PERFDATA_NAME_ALIGN - 1) / PERFDATA_NAME_ALIGN * PERFDATA_NAME_ALIGN;
	struct out o = out_init(buf, cap);

	if (size > PERFDATA_BUILD_ID_MAX)
		return -EINVAL;
	/* In a pipe every record must keep the stream 8-byte aligned: 36 + 64k + 4. */
	if (type == PERFDATA_RECORD_HEADER_BUILD_ID)
		padded += 4;
	if (sizeof(r) + padded > RECORD_MAX)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	r.header.type = type;
	r.header.misc = cpumode | PERFDATA_MISC_BUILD_ID_SIZE;
	r.header.size = (uint16_t)(sizeof(r) + padded);
	r.pid = pid;
	memcpy(r.build_id, build_id, size);
	r.size = (uint8_t)size;
	put(&o, &r, sizeof(r));
	put(&o, filename, name_len);
	put(&o, NULL, padded - name_len);
	if (o.overflow)
		return -E2BIG;
	return (ssize_t)o.len;
}

size_t perfdata_raw_text_pad(char *buf, size_t len, size_t size)
{
	while ((len + 1 + 4) % 8 && len + 1 < size)
		buf[len++] = ' ';
	buf[len] = '\0';
	return len + 1;
}
