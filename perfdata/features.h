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
 * The writer writes every feature whose row has a write op, in id order
 * (perf reads them in bit order).
 *
 * perfdata_sysinfo_read() gathers the facts about the running system that
 * perf records (uname, CPUs, memory, topology).
 */
#ifndef PERFDATA_FEATURES_H
#define PERFDATA_FEATURES_H

#include "buf.h"
#include "perfdata.h"
#include "records.h"

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

struct perfdata_feature_ops {
	const char *name;
	int (*write)(struct perfdata_buf *b, const struct perfdata_feature_facts *f);
	bool late;
};

/* The row of feature id feat, or NULL for an id perf 6.1 does not know. */
const struct perfdata_feature_ops *perfdata_feature_ops(unsigned int feat);

#endif /* PERFDATA_FEATURES_H */
