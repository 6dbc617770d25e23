// SPDX-License-Identifier: MIT
/*
 * names.c - perf's names of record types and feature sections, for people
 * (bpfrec/perfdata.h), so `dump` and error messages name them alike: the one
 * table of record types, and the feature table's names (features.h).
 */
#include <bpfrec/perfdata.h>

#include "perfdata/features.h"

const char *bpfrec_perfdata_record_name(uint32_t type)
{
	static const char *const kernel[] = {
		[PERF_RECORD_MMAP] = "MMAP",
		[PERF_RECORD_LOST] = "LOST",
		[PERF_RECORD_COMM] = "COMM",
		[PERF_RECORD_EXIT] = "EXIT",
		[PERF_RECORD_THROTTLE] = "THROTTLE",
		[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
		[PERF_RECORD_FORK] = "FORK",
		[PERF_RECORD_READ] = "READ",
		[PERF_RECORD_SAMPLE] = "SAMPLE",
		[PERF_RECORD_MMAP2] = "MMAP2",
		[PERF_RECORD_AUX] = "AUX",
		[PERF_RECORD_ITRACE_START] = "ITRACE_START",
		[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
		[PERF_RECORD_SWITCH] = "SWITCH",
		[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
		[PERF_RECORD_NAMESPACES] = "NAMESPACES",
		[PERF_RECORD_KSYMBOL] = "KSYMBOL",
		[PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
		[PERF_RECORD_CGROUP] = "CGROUP",
		[PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
		[21] = "AUX_OUTPUT_HW_ID",
	};
	/* From PERFDATA_RECORD_HEADER_ATTR (64) on, in order. */
	static const char *const user[] = {
		"HEADER_ATTR", "HEADER_EVENT_TYPE", "HEADER_TRACING_DATA", "HEADER_BUILD_ID",
		"FINISHED_ROUND", "ID_INDEX", "AUXTRACE_INFO", "AUXTRACE", "AUXTRACE_ERROR",
		"THREAD_MAP", "CPU_MAP", "STAT_CONFIG", "STAT", "STAT_ROUND", "EVENT_UPDATE",
		"TIME_CONV", "HEADER_FEATURE", "COMPRESSED", "FINISHED_INIT",
	};

	if (type < sizeof(kernel) / sizeof(kernel[0]) && kernel[type])
		return kernel[type];
	if (type >= PERFDATA_RECORD_HEADER_ATTR &&
	    type - PERFDATA_RECORD_HEADER_ATTR < sizeof(user) / sizeof(user[0]))
		return user[type - PERFDATA_RECORD_HEADER_ATTR];
	return NULL;
}

const char *bpfrec_perfdata_feature_name(unsigned int feat)
{
	const struct perfdata_feature_ops *ops = perfdata_feature_ops(feat);

	return ops ? ops->name : NULL;
}
