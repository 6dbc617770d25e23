// SPDX-License-Identifier: MIT
/*
 * features.c - encode feature payloads the way perf's header.c writes them.
 */
#include <string.h>

#include "features.h"

void perfdata_feature_put_string(struct perfdata_buf *b, const char *s)
{
	size_t n = strlen(s) + 1;
	size_t padded = (n + PERFDATA_NAME_ALIGN - 1) / PERFDATA_NAME_ALIGN * PERFDATA_NAME_ALIGN;

	perfdata_buf_u32(b, (uint32_t)padded);
	perfdata_buf_put(b, s, n);
	perfdata_buf_put(b, NULL, padded - n);
}

void perfdata_feature_encode_nrcpus(struct perfdata_buf *b, const struct perfdata_sysinfo *si)
{
	perfdata_buf_u32(b, si->nr_cpus_avail);
	perfdata_buf_u32(b, si->nr_cpus_online);
}

void perfdata_feature_encode_cmdline(struct perfdata_buf *b, int argc, const char *const *argv)
{
	perfdata_buf_u32(b, (uint32_t)argc);
	for (int i = 0; i < argc; i++)
		perfdata_feature_put_string(b, argv[i]);
}

/* u32 nr, u32 attr size, then per event: attr, u32 nr_ids, name, u64 ids[]. */
void perfdata_feature_encode_event_desc(struct perfdata_buf *b, const struct perfdata_event *ev,
					size_t nr)
{
	perfdata_buf_u32(b, (uint32_t)nr);
	perfdata_buf_u32(b, PERFDATA_ATTR_SIZE);
	for (size_t i = 0; i < nr; i++) {
		uint8_t a[PERFDATA_ATTR_SIZE] = { 0 };

		memcpy(a, &ev[i].attr, sizeof(ev[i].attr) < sizeof(a) ? sizeof(ev[i].attr) : sizeof(a));
		perfdata_buf_put(b, a, sizeof(a));
		perfdata_buf_u32(b, ev[i].nr_ids);
		perfdata_feature_put_string(b, ev[i].name ? ev[i].name : "");
		perfdata_buf_put(b, ev[i].ids, (size_t)ev[i].nr_ids * 8);
	}
}

static void put_string_list(struct perfdata_buf *b, char **list, uint32_t nr)
{
	perfdata_buf_u32(b, nr);
	for (uint32_t i = 0; i < nr; i++)
		perfdata_feature_put_string(b, list[i]);
}

void perfdata_feature_encode_cpu_topology(struct perfdata_buf *b, const struct perfdata_sysinfo *si)
{
	const struct perfdata_topology *t = si->topo;

	put_string_list(b, t->core_sib, t->nr_core_sib);
	put_string_list(b, t->thread_sib, t->nr_thread_sib);
	for (uint32_t cpu = 0; cpu < t->nr_cpus; cpu++) {
		perfdata_buf_u32(b, (uint32_t)t->core_id[cpu]);
		perfdata_buf_u32(b, (uint32_t)t->socket_id[cpu]);
	}
	if (!t->nr_die_sib)
		return;
	put_string_list(b, t->die_sib, t->nr_die_sib);
	for (uint32_t cpu = 0; cpu < t->nr_cpus; cpu++)
		perfdata_buf_u32(b, (uint32_t)t->die_id[cpu]);
}

void perfdata_feature_encode_clock_data(struct perfdata_buf *b, uint32_t clockid, uint64_t tod_ns,
					uint64_t clockid_ns)
{
	perfdata_buf_u32(b, 1);		/* version */
	perfdata_buf_u32(b, clockid);
	perfdata_buf_u64(b, tod_ns);
	perfdata_buf_u64(b, clockid_ns);
}
