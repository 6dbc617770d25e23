// SPDX-License-Identifier: MIT
/*
 * features.c - the feature table, the payloads written the way perf's
 * header.c writes them, and the decoders the reader and describe share
 * (contract in features.h).
 */
#include <string.h>

#include "describe.h"
#include "features.h"

#define BPFREC_PERF_VERSION "0.1.0 (bpfrec)"

/* A perf header string: u32 length (padded), text NUL-padded to a multiple of 64. */
static void put_string(struct growbuf *b, const char *s)
{
	size_t n = strlen(s) + 1;
	size_t padded = (n + PERFDATA_NAME_ALIGN - 1) / PERFDATA_NAME_ALIGN * PERFDATA_NAME_ALIGN;

	growbuf_u32(b, (uint32_t)padded);
	growbuf_put(b, s, n);
	growbuf_put(b, NULL, padded - n);
}

/* A string the system may not know: no feature when it is empty. */
static int put_known_string(struct growbuf *b, const char *s)
{
	if (!s[0])
		return -ENOENT;
	put_string(b, s);
	return 0;
}

static bool uses_clockid(const struct perfdata_feature_facts *f)
{
	return f->nr_events && f->events[0].attr.use_clockid;
}

/* ---- write ops: 0, -ENOENT when there is nothing to say, -errno ---------- */

/* Build-id records back to back, each header.size long. */
static int write_build_id(struct growbuf *b, const struct perfdata_feature_facts *f)
{
	if (!f->nr_build_ids)
		return -ENOENT;
	for (size_t i = 0; i < f->nr_build_ids; i++) {
		const struct perfdata_build_id *e = &f->build_ids[i];
		size_t need = PERFDATA_BUILD_ID_RECORD_SIZE + strlen(e->filename) + 1 +
			      PERFDATA_NAME_ALIGN;
		uint8_t *p = growbuf_room(b, need);
		ssize_t n;

		if (!p)
			return -ENOMEM;
		n = perfdata_encode_build_id(p, need, 0, e->cpumode, e->pid, e->id, e->size,
					     e->filename);
		if (n < 0)
			return (int)n;
		b->len += (size_t)n;
	}
	return 0;
}

static int write_hostname(struct growbuf *b, const struct perfdata_feature_facts *f)
{
	put_string(b, f->si->hostname);
	return 0;
}

static int write_osrelease(struct growbuf *b, const struct perfdata_feature_facts *f)
{
	put_string(b, f->si->osrelease);
	return 0;
}

static int write_version(struct growbuf *b, const struct perfdata_feature_facts *f)
{
	(void)f;
	put_string(b, BPFREC_PERF_VERSION);
	return 0;
}

static int write_arch(struct growbuf *b, const struct perfdata_feature_facts *f)
{
	put_string(b, f->si->arch);
	return 0;
}

static int write_nrcpus(struct growbuf *b, const struct perfdata_feature_facts *f)
{
	growbuf_u32(b, f->si->nr_cpus_avail);
	growbuf_u32(b, f->si->nr_cpus_online);
	return 0;
}

static int write_cpudesc(struct growbuf *b, const struct perfdata_feature_facts *f)
{
	return put_known_string(b, f->si->cpudesc);
}

static int write_cpuid(struct growbuf *b, const struct perfdata_feature_facts *f)
{
	return put_known_string(b, f->si->cpuid);
}

static int write_total_mem(struct growbuf *b, const struct perfdata_feature_facts *f)
{
	growbuf_u64(b, f->si->total_mem_kb);
	return 0;
}

static int write_cmdline(struct growbuf *b, const struct perfdata_feature_facts *f)
{
	if (!f->argc)
		return -ENOENT;
	growbuf_u32(b, (uint32_t)f->argc);
	for (int i = 0; i < f->argc; i++)
		put_string(b, f->argv[i]);
	return 0;
}

/* u32 nr, u32 attr size, then per event: attr, u32 nr_ids, name, u64 ids[]. */
static int write_event_desc(struct growbuf *b, const struct perfdata_feature_facts *f)
{
	growbuf_u32(b, (uint32_t)f->nr_events);
	growbuf_u32(b, PERFDATA_ATTR_SIZE);
	for (size_t i = 0; i < f->nr_events; i++) {
		const struct perfdata_event *ev = &f->events[i];
		uint8_t a[PERFDATA_ATTR_SIZE] = { 0 };

		memcpy(a, &ev->attr, sizeof(ev->attr) < sizeof(a) ? sizeof(ev->attr) : sizeof(a));
		growbuf_put(b, a, sizeof(a));
		growbuf_u32(b, ev->nr_ids);
		put_string(b, ev->name ? ev->name : "");
		growbuf_put(b, ev->ids, (size_t)ev->nr_ids * 8);
	}
	return 0;
}

static void put_string_list(struct growbuf *b, char **list, uint32_t nr)
{
	growbuf_u32(b, nr);
	for (uint32_t i = 0; i < nr; i++)
		put_string(b, list[i]);
}

static int write_cpu_topology(struct growbuf *b, const struct perfdata_feature_facts *f)
{
	const struct perfdata_topology *t = f->si->topo;

	if (!t)
		return -ENOENT;
	put_string_list(b, t->core_sib, t->nr_core_sib);
	put_string_list(b, t->thread_sib, t->nr_thread_sib);
	for (uint32_t cpu = 0; cpu < t->nr_cpus; cpu++) {
		growbuf_u32(b, (uint32_t)t->core_id[cpu]);
		growbuf_u32(b, (uint32_t)t->socket_id[cpu]);
	}
	if (!t->nr_die_sib)
		return 0;
	put_string_list(b, t->die_sib, t->nr_die_sib);
	for (uint32_t cpu = 0; cpu < t->nr_cpus; cpu++)
		growbuf_u32(b, (uint32_t)t->die_id[cpu]);
	return 0;
}

static int write_sample_time(struct growbuf *b, const struct perfdata_feature_facts *f)
{
	if (!f->nr_samples)
		return -ENOENT;
	growbuf_u64(b, f->first_time);
	growbuf_u64(b, f->last_time);
	return 0;
}

static int write_clockid(struct growbuf *b, const struct perfdata_feature_facts *f)
{
	if (!uses_clockid(f))
		return -ENOENT;
	growbuf_u64(b, f->clock_res_ns);
	return 0;
}

_Static_assert(sizeof(struct perfdata_feature_compressed) == 20, "COMPRESSED is five u32");

static int write_compressed(struct growbuf *b, const struct perfdata_feature_facts *f)
{
	/* Version 0, type 1 = zstd, the ratio rounded: as perf writes them. */
	struct perfdata_feature_compressed c = {
		.version = 0,
		.type = 1,
		.level = (uint32_t)f->zlevel,
		.ratio = f->zout ? (uint32_t)((f->zin + f->zout / 2) / f->zout) : 0,
		.mmap_len = f->zmmap_len,
	};

	if (!f->zlevel)
		return -ENOENT;
	growbuf_put(b, &c, sizeof(c));
	return 0;
}

/* u32 version, u32 clockid, u64 wall-clock ns, u64 clockid ns. */
static int write_clock_data(struct growbuf *b, const struct perfdata_feature_facts *f)
{
	if (!uses_clockid(f))
		return -ENOENT;
	growbuf_u32(b, 1);
	growbuf_u32(b, (uint32_t)f->events[0].attr.clockid);
	growbuf_u64(b, f->tod_ns);
	growbuf_u64(b, f->clockid_ns);
	return 0;
}

/* ---- the table ------------------------------------------------------------ */

#define FEAT(id, write, late, describe) \
	[PERFDATA_FEAT_##id] = { #id, write, late, describe }

static const struct perfdata_feature_ops table[PERFDATA_FEAT_LAST] = {
	FEAT(TRACING_DATA,	NULL,			false,	NULL),
	FEAT(BUILD_ID,		write_build_id,		true,	NULL),
	FEAT(HOSTNAME,		write_hostname,		false,	perfdata_describe_string),
	FEAT(OSRELEASE,		write_osrelease,	false,	perfdata_describe_string),
	FEAT(VERSION,		write_version,		false,	perfdata_describe_string),
	FEAT(ARCH,		write_arch,		false,	perfdata_describe_string),
	FEAT(NRCPUS,		write_nrcpus,		false,	perfdata_describe_nrcpus),
	FEAT(CPUDESC,		write_cpudesc,		false,	perfdata_describe_string),
	FEAT(CPUID,		write_cpuid,		false,	perfdata_describe_string),
	FEAT(TOTAL_MEM,		write_total_mem,	false,	perfdata_describe_total_mem),
	FEAT(CMDLINE,		write_cmdline,		false,	perfdata_describe_cmdline),
	FEAT(EVENT_DESC,	write_event_desc,	false,	perfdata_describe_event_desc),
	FEAT(CPU_TOPOLOGY,	write_cpu_topology,	false,	NULL),
	FEAT(NUMA_TOPOLOGY,	NULL,			false,	NULL),
	FEAT(BRANCH_STACK,	NULL,			false,	NULL),
	FEAT(PMU_MAPPINGS,	NULL,			false,	NULL),
	FEAT(GROUP_DESC,	NULL,			false,	NULL),
	FEAT(AUXTRACE,		NULL,			false,	NULL),
	FEAT(STAT,		NULL,			false,	NULL),
	FEAT(CACHE,		NULL,			false,	NULL),
	FEAT(SAMPLE_TIME,	write_sample_time,	true,	perfdata_describe_sample_time),
	FEAT(MEM_TOPOLOGY,	NULL,			false,	NULL),
	FEAT(CLOCKID,		write_clockid,		false,	perfdata_describe_clockid),
	FEAT(DIR_FORMAT,	NULL,			false,	NULL),
	FEAT(BPF_PROG_INFO,	NULL,			false,	NULL),
	FEAT(BPF_BTF,		NULL,			false,	NULL),
	FEAT(COMPRESSED,	write_compressed,	false,	perfdata_describe_compressed),
	FEAT(CPU_PMU_CAPS,	NULL,			false,	NULL),
	FEAT(CLOCK_DATA,	write_clock_data,	false,	perfdata_describe_clock_data),
	FEAT(HYBRID_TOPOLOGY,	NULL,			false,	NULL),
	FEAT(PMU_CAPS,		NULL,			false,	NULL),
};

const struct perfdata_feature_ops *perfdata_feature_ops(unsigned int feat)
{
	/* Id 0 is perf's HEADER_RESERVED: its row stays empty. */
	return feat < PERFDATA_FEAT_LAST && table[feat].name ? &table[feat] : NULL;
}

/* ---- decoders ------------------------------------------------------------- */

const char *perfdata_feature_string(const void *data, size_t size)
{
	struct perfdata_cursor c;
	const char *s;
	size_t max;

	perfdata_cursor_init(&c, data, size);
	if (perfdata_cursor_string(&c, &s, &max))
		return NULL;
	if (!memchr(s, '\0', max) && c.p != c.end)
		return NULL;
	return s;
}

int perfdata_event_desc_begin(struct perfdata_event_desc_iter *it, const void *data, size_t size)
{
	perfdata_cursor_init(&it->c, data, size);
	it->i = 0;
	if (perfdata_cursor_u32(&it->c, &it->nr) || perfdata_cursor_u32(&it->c, &it->attr_size))
		return -EINVAL;
	return 0;
}

int perfdata_event_desc_next(struct perfdata_event_desc_iter *it, struct perfdata_event_desc *d)
{
	size_t whole;

	*d = (struct perfdata_event_desc){ 0 };
	if (it->i >= it->nr)
		return 0;
	if (perfdata_cursor_take(&it->c, it->attr_size, NULL) ||
	    perfdata_cursor_u32(&it->c, &d->nr_ids) ||
	    perfdata_cursor_string(&it->c, &d->name, &d->name_max)) {
		*d = (struct perfdata_event_desc){ 0 };
		return -EINVAL;
	}
	whole = perfdata_cursor_left(&it->c) / 8;
	if (d->nr_ids > whole) {
		d->ids = it->c.p;
		d->nr_ids = (uint32_t)whole;
		return -EINVAL;
	}
	perfdata_cursor_take(&it->c, (uint64_t)d->nr_ids * 8, &d->ids);
	it->i++;
	return 1;
}

int perfdata_feature_decode_compressed(const void *data, size_t size,
				       struct perfdata_feature_compressed *out)
{
	struct perfdata_cursor c;

	perfdata_cursor_init(&c, data, size);
	return perfdata_cursor_copy(&c, out, sizeof(*out));
}
