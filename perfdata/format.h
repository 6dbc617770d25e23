/* SPDX-License-Identifier: MIT */
/*
 * format.h - the on-disk layout of perf.data, as perf(1) reads it.
 *
 * Everything here is a fact of the file format (tools/perf/util/header.h and
 * include/uapi/linux/perf_event.h in the Linux tree); nothing is bpfrec
 * policy. The writer and the reader both include it, nobody else needs to.
 * All integers are host-endian (x86_64: little-endian), as perf writes them.
 */
#ifndef PERFDATA_FORMAT_H
#define PERFDATA_FORMAT_H

#include <stdint.h>
#include <linux/perf_event.h>

#define PERFDATA_MAGIC		0x32454c4946524550ULL	/* "PERFILE2" */
#define PERFDATA_FILE_HEADER_SIZE	104
#define PERFDATA_PIPE_HEADER_SIZE	16
/* perf 6.1 rejects attrs larger than the ones it knows ("incompatible file format"). */
#define PERFDATA_ATTR_SIZE	PERF_ATTR_SIZE_VER7	/* 128 */
/* Strings in features and build-id records are padded to this. */
#define PERFDATA_NAME_ALIGN	64

/* Offsets into the file header that are patched after the fact. */
#define PERFDATA_HDR_OFF_DATA_OFFSET	40
#define PERFDATA_HDR_OFF_DATA_SIZE	48
#define PERFDATA_HDR_OFF_FEATURES	72

struct perfdata_file_section {
	uint64_t offset;
	uint64_t size;
};

struct perfdata_file_header {
	uint64_t magic;
	uint64_t size;		/* 104 */
	uint64_t attr_size;	/* attr.size + sizeof(struct perfdata_file_section) */
	struct perfdata_file_section attrs;
	struct perfdata_file_section data;
	struct perfdata_file_section event_types;	/* unused: {0, 0} */
	uint64_t features[4];	/* 256-bit bitmap of HEADER_* feature ids */
};

struct perfdata_pipe_header {
	uint64_t magic;
	uint64_t size;		/* 16 */
};

/* Feature ids (bits in the header bitmap; perf's HEADER_* enum). */
enum perfdata_feature {
	PERFDATA_FEAT_TRACING_DATA = 1,
	PERFDATA_FEAT_BUILD_ID = 2,
	PERFDATA_FEAT_HOSTNAME = 3,
	PERFDATA_FEAT_OSRELEASE = 4,
	PERFDATA_FEAT_VERSION = 5,
	PERFDATA_FEAT_ARCH = 6,
	PERFDATA_FEAT_NRCPUS = 7,
	PERFDATA_FEAT_CPUDESC = 8,
	PERFDATA_FEAT_CPUID = 9,
	PERFDATA_FEAT_TOTAL_MEM = 10,
	PERFDATA_FEAT_CMDLINE = 11,
	PERFDATA_FEAT_EVENT_DESC = 12,
	PERFDATA_FEAT_CPU_TOPOLOGY = 13,
	PERFDATA_FEAT_NUMA_TOPOLOGY = 14,
	PERFDATA_FEAT_BRANCH_STACK = 15,
	PERFDATA_FEAT_PMU_MAPPINGS = 16,
	PERFDATA_FEAT_GROUP_DESC = 17,
	PERFDATA_FEAT_AUXTRACE = 18,
	PERFDATA_FEAT_STAT = 19,
	PERFDATA_FEAT_CACHE = 20,
	PERFDATA_FEAT_SAMPLE_TIME = 21,
	PERFDATA_FEAT_MEM_TOPOLOGY = 22,
	PERFDATA_FEAT_CLOCKID = 23,
	PERFDATA_FEAT_DIR_FORMAT = 24,
	PERFDATA_FEAT_BPF_PROG_INFO = 25,
	PERFDATA_FEAT_BPF_BTF = 26,
	PERFDATA_FEAT_COMPRESSED = 27,
	PERFDATA_FEAT_CPU_PMU_CAPS = 28,
	PERFDATA_FEAT_CLOCK_DATA = 29,
	PERFDATA_FEAT_HYBRID_TOPOLOGY = 30,
	PERFDATA_FEAT_PMU_CAPS = 31,
	/* perf 6.1 knows nothing at or above this: never write such an id. */
	PERFDATA_FEAT_LAST = 32,
	PERFDATA_FEAT_BITS = 256,
};

/* User-space-only record types (>= 64) that perf itself synthesizes. */
#define PERFDATA_RECORD_HEADER_ATTR		64
#define PERFDATA_RECORD_HEADER_EVENT_TYPE	65
#define PERFDATA_RECORD_HEADER_TRACING_DATA	66
#define PERFDATA_RECORD_HEADER_BUILD_ID		67
#define PERFDATA_RECORD_FINISHED_ROUND		68
#define PERFDATA_RECORD_ID_INDEX		69
#define PERFDATA_RECORD_AUXTRACE_INFO		70
#define PERFDATA_RECORD_AUXTRACE		71
#define PERFDATA_RECORD_AUXTRACE_ERROR		72
#define PERFDATA_RECORD_THREAD_MAP		73
#define PERFDATA_RECORD_CPU_MAP			74
#define PERFDATA_RECORD_STAT_CONFIG		75
#define PERFDATA_RECORD_STAT			76
#define PERFDATA_RECORD_STAT_ROUND		77
#define PERFDATA_RECORD_EVENT_UPDATE		78
#define PERFDATA_RECORD_TIME_CONV		79
#define PERFDATA_RECORD_HEADER_FEATURE		80
#define PERFDATA_RECORD_COMPRESSED		81
#define PERFDATA_RECORD_FINISHED_INIT		82

/*
 * Build-id record, in the BUILD_ID feature and as HEADER_BUILD_ID (67) in
 * pipe mode. 36 bytes, then a NUL-terminated, zero-padded file name.
 * header.misc holds the cpumode and PERFDATA_MISC_BUILD_ID_SIZE.
 */
struct perfdata_build_id_record {
	struct perf_event_header header;
	int32_t pid;
	uint8_t build_id[20];
	uint8_t size;
	uint8_t reserved[3];
} __attribute__((packed));
#define PERFDATA_BUILD_ID_RECORD_SIZE	36
#define PERFDATA_MISC_BUILD_ID_SIZE	(1 << 15)
#define PERFDATA_BUILD_ID_MAX		20

/* The x86_64 boundary between user and kernel addresses. */
#define PERFDATA_KERNEL_ADDR_MIN	0xffff800000000000ULL

#endif /* PERFDATA_FORMAT_H */
