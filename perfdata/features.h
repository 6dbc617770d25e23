/* SPDX-License-Identifier: MIT */
/*
 * features.h - perf.data's feature sections: the one table of them, and
 * the layouts of their payloads.
 *
 * The table (perf keeps the same in header.c's feat_ops[]) has one row per
 * feature id perf 6.1 knows, and each row says all bpfrec knows of that
 * feature:
 *   name      perf's name ("HOSTNAME"): `dump`, bpfrec_perfdata_feature_name()
 *   write     its payload from what the writer knows (struct
 *             perfdata_feature_facts), laid out exactly as perf's write_*()
 *             lays it out, so one payload serves the file's feature section
 *             and a pipe's HEADER_FEATURE record. -ENOENT when the recording
 *             has nothing to say (no CPUID on this machine, no samples).
 *             NULL: bpfrec never writes this feature.
 *   late      its payload is only known when the recording ends (build-ids,
 *             sample times): a pipe, which sends its features at start, goes
 *             without it.
 *   describe  its payload as one line of text for people (describe.h).
 *             NULL: shown as "N bytes".
 * The writer writes every feature whose row has a write op, in id order
 * (perf reads them in bit order); describe.c describes whatever a file holds
 * by its row. The reader stores every payload as it is, bounded by its
 * section; the payloads both it and describe.c read (strings, EVENT_DESC's
 * event names, COMPRESSED's zstd window) are taken apart by the decoders
 * below, once. BUILD_ID holds build-id records, which the reader decodes as
 * it decodes those records in a pipe (records.h).
 *
 * perfdata_sysinfo_read() gathers the facts about the running system that
 * perf records (uname, CPUs, memory, topology).
 */
#ifndef PERFDATA_FEATURES_H
#define PERFDATA_FEATURES_H

#include "cursor.h"
#include "perfdata.h"
#include "records.h"
#include "tools/lib/buf.h"

#define PERFDATA_MAX_TOPO_CPUS 4096

struct perfdata_sysinfo {
	char hostname[256];
	char osrelease[256];
	char arch[128];
	char cpudesc[256];
	char cpuid[128];
	uint32_t nr_cpus_avail;		/* present CPUs (perf: max present + 1) */
	uint32_t nr_cpus_online;
	uint64_t total_mem_kb;
	/* CPU_TOPOLOGY: deduplicated sibling lists, per-CPU ids; NULL when unknown */
	struct perfdata_topology *topo;
};

struct perfdata_topology {
	uint32_t nr_core_sib, nr_thread_sib, nr_die_sib;
	char **core_sib, **thread_sib, **die_sib;
	uint32_t nr_cpus;
	int32_t *core_id, *socket_id, *die_id;
};

/* Fill si from the running system (sysfs_root: NULL = "/sys", for tests). */
int perfdata_sysinfo_read(struct perfdata_sysinfo *si, const char *sysfs_root);
void perfdata_sysinfo_free(struct perfdata_sysinfo *si);

/* What a recording's features say; the writer fills it in when it writes them. */
struct perfdata_feature_facts {
	const struct perfdata_sysinfo *si;		/* HOSTNAME ... CPU_TOPOLOGY */
	int argc;					/* CMDLINE; 0 = none */
	const char *const *argv;
	/* EVENT_DESC; the first event's attr also says whether CLOCKID and
	 * CLOCK_DATA are written (use_clockid) and for which clock */
	const struct perfdata_event *events;
	size_t nr_events;
	const struct perfdata_build_id *build_ids;	/* BUILD_ID */
	size_t nr_build_ids;
	uint64_t nr_samples, first_time, last_time;	/* SAMPLE_TIME */
	/* COMPRESSED (zlevel 0: none): record bytes into zstd and compressed
	 * bytes out give the ratio; mmap_len is the most one COMPRESSED record
	 * inflates to */
	int zlevel;
	uint64_t zin, zout;
	uint32_t zmmap_len;
	/* CLOCKID: the clock's resolution; CLOCK_DATA: one reading of the
	 * wall clock and of the clock at the same moment */
	uint64_t clock_res_ns, tod_ns, clockid_ns;
};

struct perfdata_text;	/* describe.h */

struct perfdata_feature_ops {
	const char *name;
	int (*write)(struct growbuf *b, const struct perfdata_feature_facts *f);
	bool late;
	void (*describe)(struct perfdata_text *t, const void *data, size_t size);
};

/* The row of feature id feat, or NULL for an id perf 6.1 does not know. */
const struct perfdata_feature_ops *perfdata_feature_ops(unsigned int feat);

/*
 * The decoders. Payloads come from the file: every size in them is checked
 * against the payload's before it is used.
 */

/*
 * A string feature (HOSTNAME, ...): a perf string (u32 len, len bytes
 * NUL-padded). NULL when it does not fit, or has no NUL in its len bytes and
 * does not end the payload: data[size] must be readable and NUL (the reader
 * stores every payload so), which ends a string that fills the payload.
 */
const char *perfdata_feature_string(const void *data, size_t size);

/*
 * EVENT_DESC: u32 nr, u32 attr_size, then nr times { attr (attr_size
 * bytes), u32 nr_ids, string name, u64 ids[nr_ids] }. _begin() reads nr and
 * attr_size (-EINVAL when they are not there); each _next() the next
 * description: 1 and *d, 0 after the last, -EINVAL when it runs past the
 * payload. On -EINVAL, i is the index of that description and *d holds
 * what of it is there: name NULL when it breaks off before its name ends,
 * else the name and only the whole ids there (nr_ids fewer than it claims).
 */
struct perfdata_event_desc_iter {
	struct perfdata_cursor c;
	uint32_t nr, attr_size;
	uint32_t i;		/* descriptions read so far */
};

struct perfdata_event_desc {
	const char *name;	/* name_max bytes, NUL-padded, perhaps without a NUL */
	size_t name_max;
	uint32_t nr_ids;
	const void *ids;	/* nr_ids u64, at any alignment */
};

int perfdata_event_desc_begin(struct perfdata_event_desc_iter *it, const void *data, size_t size);
int perfdata_event_desc_next(struct perfdata_event_desc_iter *it, struct perfdata_event_desc *d);

/* COMPRESSED: u32 version, type (1 = zstd), level, ratio, mmap_len; -EINVAL when short. */
struct perfdata_feature_compressed {
	uint32_t version, type, level, ratio, mmap_len;
};

int perfdata_feature_decode_compressed(const void *data, size_t size,
				       struct perfdata_feature_compressed *out);

#endif /* PERFDATA_FEATURES_H */
