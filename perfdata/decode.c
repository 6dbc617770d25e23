// SPDX-License-Identifier: MIT
/*
 * decode.c - parse single perf.data records into the structs of records.h.
 *
 * Contract (see records.h): each decoder gets a whole record, header->size
 * bytes, and returns 0 or -EINVAL. Every field is bounds-checked against
 * header->size before it is read, so a corrupt record can never make us read
 * past its end. Scalars are read with memcpy, so the record itself may sit at
 * any address; the array pointers handed out (callchain, regs) are only
 * naturally aligned when the record is 8-byte aligned, which the reader
 * guarantees.
 *
 * The SAMPLE layout is the one of perf_output_sample() in the kernel and
 * evsel__parse_sample() in perf: fields in sample_type bit order except that
 * IDENTIFIER comes first and the u64-sized fields after STACK_USER follow
 * their own order (WEIGHT, DATA_SRC, TRANSACTION, REGS_INTR, PHYS_ADDR,
 * CGROUP, DATA_PAGE_SIZE, CODE_PAGE_SIZE, AUX).
 */
#include <errno.h>
#include <string.h>

#include "cursor.h"
#include "records.h"

/* Added to branch_sample_type in Linux 6.8; older uapi headers lack it. */
#define PERFDATA_SAMPLE_BRANCH_HW_INDEX		(1ULL << 17)
#define PERFDATA_SAMPLE_BRANCH_COUNTERS		(1ULL << 19)

/* The sample_type bits whose layout we know; anything else cannot be skipped. */
#define PERFDATA_SAMPLE_KNOWN_MASK	((uint64_t)PERF_SAMPLE_MAX - 1)

/* Skip `count` items of `item` bytes each, without overflowing. */
static int cursor_skip_array(struct perfdata_cursor *c, uint64_t count, uint64_t item, const void **out)
{
	if (item && count > perfdata_cursor_left(c) / item)
		return -EINVAL;
	return perfdata_cursor_take(c, count * item, out);
}

static void cursor_init(struct perfdata_cursor *c, const struct perf_event_header *h)
{
	c->p = (const uint8_t *)(h + 1);
	c->end = (const uint8_t *)h + h->size;
}

static int popcount64(uint64_t v)
{
	return __builtin_popcountll(v);
}

/* The sample_id trailer size for these sample_type bits (private copy of
 * perfdata_sample_id_size(), which lives with the encoders). */
static size_t trailer_size(uint64_t type)
{
	size_t n = 0;

	n += (type & PERF_SAMPLE_TID) ? 8 : 0;
	n += (type & PERF_SAMPLE_TIME) ? 8 : 0;
	n += (type & PERF_SAMPLE_ID) ? 8 : 0;
	n += (type & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	n += (type & PERF_SAMPLE_CPU) ? 8 : 0;
	n += (type & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	return n;
}

/*
 * Bytes of fixed fields a kernel record type has before its trailer, so a
 * trailer can never overlap them. 0 for types without a fixed part or that
 * we do not know (the trailer then only has to fit in the record).
 */
static size_t kernel_record_fixed_size(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_MMAP:			return 8 + 24;	/* pid,tid,start,len,pgoff */
	case PERF_RECORD_LOST:			return 16;	/* id, lost */
	case PERF_RECORD_COMM:			return 8;	/* pid, tid */
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:			return 24;	/* pid,ppid,tid,ptid,time */
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:		return 24;	/* time, id, stream_id */
	case PERF_RECORD_READ:			return 16;	/* pid, tid, value */
	case PERF_RECORD_MMAP2:			return 64;	/* up to prot/flags */
	case PERF_RECORD_AUX:			return 24;	/* offset, size, flags */
	case PERF_RECORD_ITRACE_START:		return 8;	/* pid, tid */
	case PERF_RECORD_LOST_SAMPLES:		return 8;	/* lost */
	case PERF_RECORD_SWITCH_CPU_WIDE:	return 8;	/* next/prev pid, tid */
	case PERF_RECORD_NAMESPACES:		return 16;	/* pid, tid, nr */
	case PERF_RECORD_KSYMBOL:		return 16;	/* addr, len, type, flags */
	case PERF_RECORD_BPF_EVENT:		return 8 + 8;	/* type,flags,id,tag */
	case PERF_RECORD_CGROUP:		return 8;	/* id */
	case PERF_RECORD_TEXT_POKE:		return 12;	/* addr, old_len, new_len */
	case 21: /* PERF_RECORD_AUX_OUTPUT_HW_ID */	return 8;
	default:				return 0;
	}
}

int perfdata_decode_sample_id(const struct perf_event_header *h, uint64_t id_type,
			      struct perfdata_sample_id *sid)
{
	size_t tsize = trailer_size(id_type);
	struct perfdata_cursor c;
	uint64_t id = 0;

	memset(sid, 0, sizeof(*sid));
	if (h->size < sizeof(*h) || h->type == PERF_RECORD_SAMPLE)
		return -EINVAL;
	/* perf indexes the trailer in u64 words from the end of the record. */
	uint64_t body = (uint64_t)(h->size - sizeof(*h)) & ~(uint64_t)7;

	if (body < tsize || body - tsize < kernel_record_fixed_size(h->type))
		return -EINVAL;
	c.p = (const uint8_t *)(h + 1) + body - tsize;
	c.end = (const uint8_t *)(h + 1) + body;

	if (id_type & PERF_SAMPLE_TID)
		perfdata_cursor_u32_pair(&c, &sid->pid, &sid->tid);
	if (id_type & PERF_SAMPLE_TIME)
		perfdata_cursor_u64(&c, &sid->time);
	if (id_type & PERF_SAMPLE_ID)
		perfdata_cursor_u64(&c, &sid->id);
	if (id_type & PERF_SAMPLE_STREAM_ID)
		perfdata_cursor_u64(&c, &sid->stream_id);
	if (id_type & PERF_SAMPLE_CPU)
		perfdata_cursor_u32_pair(&c, &sid->cpu, NULL);
	if (id_type & PERF_SAMPLE_IDENTIFIER) {
		perfdata_cursor_u64(&c, &id);
		sid->id = id;
	}
	return 0;
}

/* read_format values: {nr | value} [enabled] [running] then ids/lost. */
static int skip_read_values(struct perfdata_cursor *c, uint64_t read_format)
{
	uint64_t per_value = 8, nr;

	if (read_format & PERF_FORMAT_ID)
		per_value += 8;
	if (read_format & PERF_FORMAT_LOST)
		per_value += 8;

	if (!(read_format & PERF_FORMAT_GROUP)) {
		/* value [enabled] [running] [id] [lost] */
		if (perfdata_cursor_u64(c, NULL))
			return -EINVAL;
		if ((read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) && perfdata_cursor_u64(c, NULL))
			return -EINVAL;
		if ((read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) && perfdata_cursor_u64(c, NULL))
			return -EINVAL;
		return perfdata_cursor_take(c, per_value - 8, NULL);
	}
	/* nr [enabled] [running] {value [id] [lost]}[nr] */
	if (perfdata_cursor_u64(c, &nr))
		return -EINVAL;
	if ((read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) && perfdata_cursor_u64(c, NULL))
		return -EINVAL;
	if ((read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) && perfdata_cursor_u64(c, NULL))
		return -EINVAL;
	return cursor_skip_array(c, nr, per_value, NULL);
}

/* { u64 abi; u64 regs[popcount(mask)] } -- no regs when abi is NONE. */
static int read_regs(struct perfdata_cursor *c, uint64_t mask, uint64_t *abi, uint64_t *nr,
		     const uint64_t **regs)
{
	const void *at = NULL;
	uint64_t n;

	if (perfdata_cursor_u64(c, abi))
		return -EINVAL;
	if (*abi == PERF_SAMPLE_REGS_ABI_NONE) {
		*nr = 0;
		*regs = NULL;
		return 0;
	}
	n = (uint64_t)popcount64(mask);
	if (cursor_skip_array(c, n, 8, &at))
		return -EINVAL;
	*nr = n;
	*regs = n ? at : NULL;
	return 0;
}

int perfdata_decode_sample(const struct perf_event_header *h, const struct perf_event_attr *attr,
			   struct perfdata_sample *s)
{
	uint64_t type = attr->sample_type;
	struct perfdata_cursor c;
	const void *at;
	uint64_t v;

	memset(s, 0, sizeof(*s));
	if (h->size < sizeof(*h) || h->type != PERF_RECORD_SAMPLE)
		return -EINVAL;
	if (type & ~PERFDATA_SAMPLE_KNOWN_MASK)
		return -EINVAL;	/* a field we cannot skip: everything after it is unknown */
	cursor_init(&c, h);
	s->misc = h->misc;
	/* Without PERIOD, a fixed-period event's samples all weigh sample_period. */
	if (!(type & PERF_SAMPLE_PERIOD) && !attr->freq)
		s->period = attr->sample_period;

	if ((type & PERF_SAMPLE_IDENTIFIER) && perfdata_cursor_u64(&c, &s->id))
		return -EINVAL;
	if ((type & PERF_SAMPLE_IP) && perfdata_cursor_u64(&c, &s->ip))
		return -EINVAL;
	if ((type & PERF_SAMPLE_TID) && perfdata_cursor_u32_pair(&c, &s->pid, &s->tid))
		return -EINVAL;
	if ((type & PERF_SAMPLE_TIME) && perfdata_cursor_u64(&c, &s->time))
		return -EINVAL;
	if ((type & PERF_SAMPLE_ADDR) && perfdata_cursor_u64(&c, &s->addr))
		return -EINVAL;
	if ((type & PERF_SAMPLE_ID) && perfdata_cursor_u64(&c, &s->id))
		return -EINVAL;
	if ((type & PERF_SAMPLE_STREAM_ID) && perfdata_cursor_u64(&c, &s->stream_id))
		return -EINVAL;
	if ((type & PERF_SAMPLE_CPU) && perfdata_cursor_u32_pair(&c, &s->cpu, NULL))
		return -EINVAL;
	if ((type & PERF_SAMPLE_PERIOD) && perfdata_cursor_u64(&c, &s->period))
		return -EINVAL;
	if ((type & PERF_SAMPLE_READ) && skip_read_values(&c, attr->read_format))
		return -EINVAL;

	if (type & PERF_SAMPLE_CALLCHAIN) {
		if (perfdata_cursor_u64(&c, &v) || cursor_skip_array(&c, v, 8, &at))
			return -EINVAL;
		s->nr_callchain = v;
		s->callchain = v ? at : NULL;
	}

	if (type & PERF_SAMPLE_RAW) {
		uint32_t size;

		if (perfdata_cursor_take(&c, 4, &at))
			return -EINVAL;
		memcpy(&size, at, 4);
		/* The kernel pads the data so that u32 size + data is u64-aligned;
		 * anything else would misalign every field that follows. */
		if ((size + 4ULL) % 8 || perfdata_cursor_take(&c, size, &at))
			return -EINVAL;
		s->raw_size = size;
		s->raw = size ? at : NULL;
	}

	if (type & PERF_SAMPLE_BRANCH_STACK) {
		uint64_t entry = 24;	/* from, to, flags */

		if (attr->branch_sample_type & PERFDATA_SAMPLE_BRANCH_COUNTERS)
			entry += 8;	/* one counters word per entry, after the entries */
		if (perfdata_cursor_u64(&c, &v))
			return -EINVAL;
		if ((attr->branch_sample_type & PERFDATA_SAMPLE_BRANCH_HW_INDEX) &&
		    perfdata_cursor_u64(&c, NULL))
			return -EINVAL;
		if (cursor_skip_array(&c, v, entry, NULL))
			return -EINVAL;
	}

	if ((type & PERF_SAMPLE_REGS_USER) &&
	    read_regs(&c, attr->sample_regs_user, &s->regs_abi, &s->nr_regs, &s->regs))
		return -EINVAL;

	if (type & PERF_SAMPLE_STACK_USER) {
		if (perfdata_cursor_u64(&c, &v))
			return -EINVAL;
		if (v) {
			if (perfdata_cursor_take(&c, v, &at) || perfdata_cursor_u64(&c, &s->stack_dyn_size))
				return -EINVAL;
			if (s->stack_dyn_size > v)
				return -EINVAL;
			s->stack_size = v;
			s->stack = at;
		}
	}

	if ((type & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) && perfdata_cursor_u64(&c, NULL))
		return -EINVAL;
	if ((type & PERF_SAMPLE_DATA_SRC) && perfdata_cursor_u64(&c, NULL))
		return -EINVAL;
	if ((type & PERF_SAMPLE_TRANSACTION) && perfdata_cursor_u64(&c, NULL))
		return -EINVAL;
	if (type & PERF_SAMPLE_REGS_INTR) {
		uint64_t abi, nr;
		const uint64_t *regs;

		if (read_regs(&c, attr->sample_regs_intr, &abi, &nr, &regs))
			return -EINVAL;
	}
	if ((type & PERF_SAMPLE_PHYS_ADDR) && perfdata_cursor_u64(&c, NULL))
		return -EINVAL;
	if ((type & PERF_SAMPLE_CGROUP) && perfdata_cursor_u64(&c, NULL))
		return -EINVAL;
	if ((type & PERF_SAMPLE_DATA_PAGE_SIZE) && perfdata_cursor_u64(&c, NULL))
		return -EINVAL;
	if ((type & PERF_SAMPLE_CODE_PAGE_SIZE) && perfdata_cursor_u64(&c, NULL))
		return -EINVAL;
	if (type & PERF_SAMPLE_AUX) {
		if (perfdata_cursor_u64(&c, &v) || perfdata_cursor_take(&c, v, NULL))
			return -EINVAL;
	}
	return 0;
}

int perfdata_decode_sample_event_id(const struct perf_event_header *h, uint64_t sample_type,
				    uint64_t *id)
{
	struct perfdata_cursor c;
	uint64_t skip;

	*id = 0;
	if (h->size < sizeof(*h) || h->type != PERF_RECORD_SAMPLE)
		return -EINVAL;
	cursor_init(&c, h);
	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		return perfdata_cursor_u64(&c, id);
	if (!(sample_type & PERF_SAMPLE_ID))
		return 0;
	skip = (uint64_t)popcount64(sample_type & (PERF_SAMPLE_IP | PERF_SAMPLE_TID |
						   PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR));
	if (cursor_skip_array(&c, skip, 8, NULL))
		return -EINVAL;
	return perfdata_cursor_u64(&c, id);
}

/* A NUL-terminated string starting at the cursor and ending inside the record. */
static int cursor_string(struct perfdata_cursor *c, const char **out)
{
	const char *s = (const char *)c->p;

	if (!memchr(s, '\0', perfdata_cursor_left(c)))
		return -EINVAL;
	*out = s;
	return 0;
}

int perfdata_decode_mmap(const struct perf_event_header *h, struct perfdata_mmap *m)
{
	struct perfdata_cursor c;

	memset(m, 0, sizeof(*m));
	if (h->size < sizeof(*h) || h->type != PERF_RECORD_MMAP)
		return -EINVAL;
	cursor_init(&c, h);
	m->misc = h->misc;
	if (perfdata_cursor_u32_pair(&c, &m->pid, &m->tid) || perfdata_cursor_u64(&c, &m->start) ||
	    perfdata_cursor_u64(&c, &m->len) || perfdata_cursor_u64(&c, &m->pgoff))
		return -EINVAL;
	return cursor_string(&c, &m->filename);
}

int perfdata_decode_mmap2(const struct perf_event_header *h, struct perfdata_mmap *m)
{
	struct perfdata_cursor c;
	const uint8_t *ids;

	memset(m, 0, sizeof(*m));
	if (h->size < sizeof(*h) || h->type != PERF_RECORD_MMAP2)
		return -EINVAL;
	cursor_init(&c, h);
	/* The build-id flag is implied by build_id_size (records.h). */
	m->misc = h->misc & ~PERF_RECORD_MISC_MMAP_BUILD_ID;
	if (perfdata_cursor_u32_pair(&c, &m->pid, &m->tid) || perfdata_cursor_u64(&c, &m->start) ||
	    perfdata_cursor_u64(&c, &m->len) || perfdata_cursor_u64(&c, &m->pgoff))
		return -EINVAL;
	/* union { maj, min, ino, ino_generation } or { size, res[3], build_id[20] }: 24 bytes */
	if (perfdata_cursor_take(&c, 24, (const void **)&ids))
		return -EINVAL;
	if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		if (ids[0] > PERFDATA_BUILD_ID_MAX)
			return -EINVAL;
		m->build_id_size = ids[0];
		memcpy(m->build_id, ids + 4, m->build_id_size);
	} else {
		memcpy(&m->maj, ids, 4);
		memcpy(&m->min, ids + 4, 4);
		memcpy(&m->ino, ids + 8, 8);
		memcpy(&m->ino_generation, ids + 16, 8);
	}
	if (perfdata_cursor_u32_pair(&c, &m->prot, &m->flags))
		return -EINVAL;
	return cursor_string(&c, &m->filename);
}

int perfdata_decode_comm(const struct perf_event_header *h, struct perfdata_comm *cm)
{
	struct perfdata_cursor c;

	memset(cm, 0, sizeof(*cm));
	if (h->size < sizeof(*h) || h->type != PERF_RECORD_COMM)
		return -EINVAL;
	cursor_init(&c, h);
	cm->exec = !!(h->misc & PERF_RECORD_MISC_COMM_EXEC);
	if (perfdata_cursor_u32_pair(&c, &cm->pid, &cm->tid))
		return -EINVAL;
	return cursor_string(&c, &cm->comm);
}

int perfdata_decode_lost(const struct perf_event_header *h, uint64_t *id, uint64_t *lost)
{
	struct perfdata_cursor c;

	*id = *lost = 0;
	if (h->size < sizeof(*h))
		return -EINVAL;
	cursor_init(&c, h);
	if (h->type == PERF_RECORD_LOST)
		return perfdata_cursor_u64(&c, id) || perfdata_cursor_u64(&c, lost) ? -EINVAL : 0;
	if (h->type == PERF_RECORD_LOST_SAMPLES)
		return perfdata_cursor_u64(&c, lost) ? -EINVAL : 0;
	return -EINVAL;
}

int perfdata_decode_build_id(const void *rec, size_t size, struct perfdata_build_id *b,
			     size_t *filename_len)
{
	struct perfdata_build_id_record hdr;

	memset(b, 0, sizeof(*b));
	*filename_len = 0;
	if (size < PERFDATA_BUILD_ID_RECORD_SIZE)
		return -EINVAL;
	memcpy(&hdr, rec, sizeof(hdr));
	b->cpumode = hdr.header.misc & PERF_RECORD_MISC_CPUMODE_MASK;
	b->pid = hdr.pid;
	b->size = (hdr.header.misc & PERFDATA_MISC_BUILD_ID_SIZE) ? hdr.size : 20;
	if (b->size > PERFDATA_BUILD_ID_MAX)
		return -EINVAL;
	memcpy(b->id, hdr.build_id, b->size);
	b->filename = (const char *)rec + PERFDATA_BUILD_ID_RECORD_SIZE;
	*filename_len = strnlen(b->filename, size - PERFDATA_BUILD_ID_RECORD_SIZE);
	return 0;
}

int perfdata_decode_task(const struct perf_event_header *h, struct perfdata_task *t)
{
	struct perfdata_cursor c;

	memset(t, 0, sizeof(*t));
	if (h->size < sizeof(*h) || (h->type != PERF_RECORD_FORK && h->type != PERF_RECORD_EXIT))
		return -EINVAL;
	cursor_init(&c, h);
	if (perfdata_cursor_u32_pair(&c, &t->pid, &t->ppid) || perfdata_cursor_u32_pair(&c, &t->tid, &t->ptid) ||
	    perfdata_cursor_u64(&c, &t->time))
		return -EINVAL;
	return 0;
}

int perfdata_decode_ksymbol(const struct perf_event_header *h, struct perfdata_ksymbol *k)
{
	struct perfdata_cursor c;

	memset(k, 0, sizeof(*k));
	if (h->size < sizeof(*h) || h->type != PERF_RECORD_KSYMBOL)
		return -EINVAL;
	cursor_init(&c, h);
	if (perfdata_cursor_u64(&c, &k->addr) || perfdata_cursor_u32(&c, &k->len) ||
	    perfdata_cursor_copy(&c, &k->ksym_type, sizeof(k->ksym_type)) ||
	    perfdata_cursor_copy(&c, &k->flags, sizeof(k->flags)))
		return -EINVAL;
	return cursor_string(&c, &k->name);
}
