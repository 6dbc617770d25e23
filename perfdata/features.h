/* SPDX-License-Identifier: MIT */
/*
 * features.h - the payloads of perf.data feature sections.
 *
 * perfdata_sysinfo_read() gathers the facts about the running system that
 * perf records (uname, CPUs, memory, topology); perfdata_feature_encode_*()
 * lay them out exactly as perf's write_*() functions in header.c do, so one
 * payload serves both the file's feature section and a pipe's
 * HEADER_FEATURE record.
 */
#ifndef PERFDATA_FEATURES_H
#define PERFDATA_FEATURES_H

#include "buf.h"
#include "perfdata.h"

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

/* A perf header string: u32 length (padded), text NUL-padded to a multiple of 64. */
void perfdata_feature_put_string(struct perfdata_buf *b, const char *s);

void perfdata_feature_encode_nrcpus(struct perfdata_buf *b, const struct perfdata_sysinfo *si);
void perfdata_feature_encode_cmdline(struct perfdata_buf *b, int argc, const char *const *argv);
void perfdata_feature_encode_event_desc(struct perfdata_buf *b, const struct perfdata_event *ev,
					size_t nr);
void perfdata_feature_encode_cpu_topology(struct perfdata_buf *b, const struct perfdata_sysinfo *si);
void perfdata_feature_encode_clock_data(struct perfdata_buf *b, uint32_t clockid, uint64_t tod_ns,
					uint64_t clockid_ns);

#endif /* PERFDATA_FEATURES_H */
