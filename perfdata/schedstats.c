// SPDX-License-Identifier: MIT
/* schedstats.c - the scheduler-metrics record and set (contract in schedstats.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata/cursor.h"
#include "perfdata/schedstats.h"
#include "tools/lib/array.h"

_Static_assert(sizeof(PERFDATA_SCHED_MAGIC) == 8, "the magic is 8 bytes with its NUL");

static void put(uint8_t **p, const void *v, size_t n)
{
	memcpy(*p, v, n);
	*p += n;
}

static void put_u32(uint8_t **p, uint32_t v)
{
	put(p, &v, 4);
}

static void put_u64(uint8_t **p, uint64_t v)
{
	put(p, &v, 8);
}

ssize_t perfdata_sched_encode(void *buf, size_t cap, const struct bpfrec_sched_thread *t,
			      size_t nr, size_t *taken)
{
	struct perf_event_header h = { .type = PERFDATA_SCHED_RECORD_TYPE };
	size_t fit, size;
	uint8_t *p = buf;

	*taken = 0;
	if (cap > 0xffff)
		cap = 0xffff;	/* header.size is a u16 */
	if (cap < PERFDATA_SCHED_HEAD_SIZE + (nr ? PERFDATA_SCHED_ENTRY_SIZE : 0))
		return -ENOSPC;
	fit = (cap - PERFDATA_SCHED_HEAD_SIZE) / PERFDATA_SCHED_ENTRY_SIZE;
	if (fit > nr)
		fit = nr;
	size = PERFDATA_SCHED_HEAD_SIZE + fit * PERFDATA_SCHED_ENTRY_SIZE;
	h.size = (uint16_t)size;
	put(&p, &h, sizeof(h));
	put(&p, PERFDATA_SCHED_MAGIC, 8);
	put_u32(&p, PERFDATA_SCHED_VERSION);
	put_u32(&p, PERFDATA_SCHED_ENTRY_SIZE);
	put_u32(&p, (uint32_t)fit);
	put_u32(&p, 0);
	for (size_t i = 0; i < fit; i++) {
		const struct bpfrec_sched_thread *e = &t[i];
		char comm[16] = { 0 };

		put_u32(&p, e->pid);
		put_u32(&p, e->tid);
		/* Always NUL-terminated in the file. */
		memcpy(comm, e->comm, sizeof(comm) - 1);
		put(&p, comm, sizeof(comm));
		put_u64(&p, e->oncpu_ns);
		put_u64(&p, e->runq_count);
		put_u64(&p, e->runq_total_ns);
		put_u64(&p, e->runq_max_ns);
		for (int k = 0; k < BPFREC_SCHED_NR_SWITCH; k++)
			put_u64(&p, e->switches[k]);
		for (int k = 0; k < BPFREC_SCHED_HIST_SLOTS; k++)
			put_u32(&p, e->hist[k]);
	}
	*taken = fit;
	return (ssize_t)size;
}

/* One entry of entry_size bytes at c (checked by the caller). */
static void decode_entry(struct perfdata_cursor *c, struct bpfrec_sched_thread *e)
{
	memset(e, 0, sizeof(*e));
	perfdata_cursor_u32(c, &e->pid);
	perfdata_cursor_u32(c, &e->tid);
	perfdata_cursor_copy(c, e->comm, sizeof(e->comm));
	e->comm[sizeof(e->comm) - 1] = '\0';
	perfdata_cursor_u64(c, &e->oncpu_ns);
	perfdata_cursor_u64(c, &e->runq_count);
	perfdata_cursor_u64(c, &e->runq_total_ns);
	perfdata_cursor_u64(c, &e->runq_max_ns);
	for (int k = 0; k < BPFREC_SCHED_NR_SWITCH; k++)
		perfdata_cursor_u64(c, &e->switches[k]);
	for (int k = 0; k < BPFREC_SCHED_HIST_SLOTS; k++)
		perfdata_cursor_u32(c, &e->hist[k]);
}

int perfdata_sched_decode(const struct perf_event_header *rec, struct bpfrec_sched_metrics *m)
{
	uint32_t version, entry_size, nr, reserved;
	struct perfdata_cursor c;
	const void *magic;
	size_t before = m->nr;

	if (rec->type != PERFDATA_SCHED_RECORD_TYPE || rec->size < sizeof(*rec))
		return -ENOENT;
	perfdata_cursor_init(&c, rec + 1, rec->size - sizeof(*rec));
	if (perfdata_cursor_take(&c, 8, &magic) || memcmp(magic, PERFDATA_SCHED_MAGIC, 8))
		return -ENOENT;
	if (perfdata_cursor_u32(&c, &version) || perfdata_cursor_u32(&c, &entry_size) ||
	    perfdata_cursor_u32(&c, &nr) || perfdata_cursor_u32(&c, &reserved))
		return -EINVAL;
	if (version < 1 || entry_size < PERFDATA_SCHED_ENTRY_SIZE ||
	    (uint64_t)nr * entry_size > perfdata_cursor_left(&c))
		return -EINVAL;
	for (uint32_t i = 0; i < nr; i++) {
		struct perfdata_cursor one;
		struct bpfrec_sched_thread e;
		const void *bytes = NULL;

		if (perfdata_cursor_take(&c, entry_size, &bytes))
			break;		/* never: the size was checked above */
		perfdata_cursor_init(&one, bytes, entry_size);
		decode_entry(&one, &e);
		if (perfdata_sched_metrics_put(m, &e)) {
			m->nr = before;
			return -ENOMEM;
		}
	}
	return 0;
}

struct bpfrec_sched_metrics *perfdata_sched_metrics_new(void)
{
	return calloc(1, sizeof(struct bpfrec_sched_metrics));
}

int perfdata_sched_metrics_put(struct bpfrec_sched_metrics *m, const struct bpfrec_sched_thread *t)
{
	if (ARRAY_RESERVE(m->t, m->cap, m->nr + 1, 64))
		return -ENOMEM;
	m->t[m->nr] = *t;
	m->t[m->nr++].sz = sizeof(*t);
	return 0;
}

/* Rows with their insertion order, so that the sort is stable. */
struct ordered {
	struct bpfrec_sched_thread t;
	size_t seq;
};

static int cmp_ordered(const void *a, const void *b)
{
	const struct ordered *x = a, *y = b;

	if (x->t.pid != y->t.pid)
		return x->t.pid < y->t.pid ? -1 : 1;
	if (x->t.tid != y->t.tid)
		return x->t.tid < y->t.tid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void perfdata_sched_metrics_sort(struct bpfrec_sched_metrics *m)
{
	struct ordered *o;
	size_t n = 0;

	if (m->nr < 2)
		return;
	o = calloc(m->nr, sizeof(*o));
	if (!o)
		return;		/* unsorted rows are still right, only in another order */
	for (size_t i = 0; i < m->nr; i++) {
		o[i].t = m->t[i];
		o[i].seq = i;
	}
	qsort(o, m->nr, sizeof(*o), cmp_ordered);
	for (size_t i = 0; i < m->nr; i++) {
		/* The last of a run with one pid and tid wins. */
		if (i + 1 < m->nr && o[i + 1].t.pid == o[i].t.pid && o[i + 1].t.tid == o[i].t.tid)
			continue;
		m->t[n++] = o[i].t;
	}
	m->nr = n;
	free(o);
}

void perfdata_sched_thread_add(struct bpfrec_sched_thread *dst, const struct bpfrec_sched_thread *src)
{
	dst->oncpu_ns += src->oncpu_ns;
	dst->runq_count += src->runq_count;
	dst->runq_total_ns += src->runq_total_ns;
	if (src->runq_max_ns > dst->runq_max_ns)
		dst->runq_max_ns = src->runq_max_ns;
	for (int k = 0; k < BPFREC_SCHED_NR_SWITCH; k++)
		dst->switches[k] += src->switches[k];
	for (int k = 0; k < BPFREC_SCHED_HIST_SLOTS; k++)
		dst->hist[k] += src->hist[k];
}

size_t bpfrec_sched_metrics_nr_threads(const struct bpfrec_sched_metrics *m)
{
	return m ? m->nr : 0;
}

const struct bpfrec_sched_thread *bpfrec_sched_metrics_thread(const struct bpfrec_sched_metrics *m,
							      size_t i)
{
	return m && i < m->nr ? &m->t[i] : NULL;
}

const char *bpfrec_sched_metrics_error(const struct bpfrec_sched_metrics *m)
{
	return m ? m->err : "out of memory";
}

void bpfrec_sched_metrics_free(struct bpfrec_sched_metrics *m)
{
	if (!m)
		return;
	free(m->t);
	free(m);
}

uint64_t bpfrec_sched_hist_quantile_ns(const uint32_t *hist, uint64_t max_ns, double q)
{
	uint64_t total = 0, seen = 0, rank;

	for (int k = 0; k < BPFREC_SCHED_HIST_SLOTS; k++)
		total += hist[k];
	if (!total || !(q > 0))
		return 0;
	if (q > 1)
		q = 1;
	rank = (uint64_t)(q * (double)total + 0.999999);
	if (rank < 1)
		rank = 1;
	for (int k = 0; k < BPFREC_SCHED_HIST_SLOTS; k++) {
		seen += hist[k];
		if (seen >= rank) {
			/* The slot's upper bound: 2^(k+1) microseconds. */
			uint64_t ns = (k + 1 < 63 ? (1ull << (k + 1)) : UINT64_MAX / 1000) * 1000;

			return max_ns && ns > max_ns ? max_ns : ns;
		}
	}
	return max_ns;
}
