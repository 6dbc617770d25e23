// SPDX-License-Identifier: MIT
/*
 * dump.c - `bpfrec dump`: print a perf.data file's header, events, features
 * and records, one line per record, then a summary.
 *
 *   bpfrec dump [-i FILE|-] [--header-only | --records-only]
 *
 * It reads any perf.data the reader accepts (file or pipe mode, ours or
 * perf's) and is the tool to look at what a writer actually produced. The
 * output is meant for people and for grep: every record line starts with
 * its offset and type name, and the summary ends with "# samples: N".
 *
 * Exit status: 0 when the whole file was read, 1 when the file is not
 * readable perf.data or a record in it is malformed (one line on stderr:
 * "bpfrec dump: FILE: problem at offset"), 2 for bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perfdata/cursor.h"
#include "perfdata/events.h"
#include "perfdata/reader.h"
#include "tools/cli/commands.h"
#include "tools/cli/escape.h"

#define NR_RECORD_TYPES	128

struct dump_opts {
	const char *input;
	bool header_only;
	bool records_only;
};

struct dump_stats {
	uint64_t by_type[NR_RECORD_TYPES];
	uint64_t records;
	uint64_t samples;
	uint64_t samples_unknown_event;	/* ids that no event claims */
	uint64_t lost;
	uint64_t lost_samples;
	uint64_t malformed;
	uint64_t *samples_by_event;	/* grows with the event list (pipe mode) */
	size_t nr_samples_by_event;
	char first_error[512];
};

/* ---- names ------------------------------------------------------------------ */

static const char *record_type_name(uint32_t type)
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

static const char *feature_name(unsigned int feat)
{
	static const char *const names[PERFDATA_FEAT_LAST] = {
		[PERFDATA_FEAT_TRACING_DATA] = "TRACING_DATA",
		[PERFDATA_FEAT_BUILD_ID] = "BUILD_ID",
		[PERFDATA_FEAT_HOSTNAME] = "HOSTNAME",
		[PERFDATA_FEAT_OSRELEASE] = "OSRELEASE",
		[PERFDATA_FEAT_VERSION] = "VERSION",
		[PERFDATA_FEAT_ARCH] = "ARCH",
		[PERFDATA_FEAT_NRCPUS] = "NRCPUS",
		[PERFDATA_FEAT_CPUDESC] = "CPUDESC",
		[PERFDATA_FEAT_CPUID] = "CPUID",
		[PERFDATA_FEAT_TOTAL_MEM] = "TOTAL_MEM",
		[PERFDATA_FEAT_CMDLINE] = "CMDLINE",
		[PERFDATA_FEAT_EVENT_DESC] = "EVENT_DESC",
		[PERFDATA_FEAT_CPU_TOPOLOGY] = "CPU_TOPOLOGY",
		[PERFDATA_FEAT_NUMA_TOPOLOGY] = "NUMA_TOPOLOGY",
		[PERFDATA_FEAT_BRANCH_STACK] = "BRANCH_STACK",
		[PERFDATA_FEAT_PMU_MAPPINGS] = "PMU_MAPPINGS",
		[PERFDATA_FEAT_GROUP_DESC] = "GROUP_DESC",
		[PERFDATA_FEAT_AUXTRACE] = "AUXTRACE",
		[PERFDATA_FEAT_STAT] = "STAT",
		[PERFDATA_FEAT_CACHE] = "CACHE",
		[PERFDATA_FEAT_SAMPLE_TIME] = "SAMPLE_TIME",
		[PERFDATA_FEAT_MEM_TOPOLOGY] = "MEM_TOPOLOGY",
		[PERFDATA_FEAT_CLOCKID] = "CLOCKID",
		[PERFDATA_FEAT_DIR_FORMAT] = "DIR_FORMAT",
		[PERFDATA_FEAT_BPF_PROG_INFO] = "BPF_PROG_INFO",
		[PERFDATA_FEAT_BPF_BTF] = "BPF_BTF",
		[PERFDATA_FEAT_COMPRESSED] = "COMPRESSED",
		[PERFDATA_FEAT_CPU_PMU_CAPS] = "CPU_PMU_CAPS",
		[PERFDATA_FEAT_CLOCK_DATA] = "CLOCK_DATA",
		[PERFDATA_FEAT_HYBRID_TOPOLOGY] = "HYBRID_TOPOLOGY",
		[PERFDATA_FEAT_PMU_CAPS] = "PMU_CAPS",
	};

	return feat < PERFDATA_FEAT_LAST ? names[feat] : NULL;
}

static const char *cpumode_name(uint16_t misc)
{
	static const char *const names[8] = {
		"unknown", "kernel", "user", "hv", "guest-kernel", "guest-user", "mode6", "mode7",
	};

	return names[misc & PERF_RECORD_MISC_CPUMODE_MASK];
}

static const char *event_type_name(uint32_t type)
{
	static const char *const names[] = {
		"hardware", "software", "tracepoint", "hw-cache", "raw", "breakpoint",
	};

	return type < sizeof(names) / sizeof(names[0]) ? names[type] : "pmu";
}

static const char *event_name(const struct perfdata_event *ev)
{
	const char *n;

	if (!ev)
		return "(unknown)";
	if (ev->name)
		return ev->name;
	n = perfdata_event_generic_name(ev->attr.type, ev->attr.config);
	return n ? n : "(unnamed)";
}

/* Strings from the file (names, comm, paths) never reach the terminal raw. */
static size_t print_str(FILE *out, const char *s)
{
	return escape_fputs(out, s, SIZE_MAX);
}

/* Print the names of the set bits of v, "A|B|C", unknown bits in hex. */
static void print_flags(FILE *out, uint64_t v, const char *const *names, unsigned int nr)
{
	bool first = true;

	for (unsigned int i = 0; i < nr; i++) {
		if (!(v & (1ULL << i)) || !names[i])
			continue;
		fprintf(out, "%s%s", first ? "" : "|", names[i]);
		v &= ~(1ULL << i);
		first = false;
	}
	if (v)
		fprintf(out, "%s%#" PRIx64, first ? "" : "|", v);
	else if (first)
		fprintf(out, "0");
}

static void print_sample_type(FILE *out, uint64_t v)
{
	static const char *const names[] = {
		"IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID", "CPU", "PERIOD",
		"STREAM_ID", "RAW", "BRANCH_STACK", "REGS_USER", "STACK_USER", "WEIGHT",
		"DATA_SRC", "IDENTIFIER", "TRANSACTION", "REGS_INTR", "PHYS_ADDR", "AUX",
		"CGROUP", "DATA_PAGE_SIZE", "CODE_PAGE_SIZE", "WEIGHT_STRUCT",
	};

	print_flags(out, v, names, sizeof(names) / sizeof(names[0]));
}

static void print_read_format(FILE *out, uint64_t v)
{
	static const char *const names[] = {
		"TOTAL_TIME_ENABLED", "TOTAL_TIME_RUNNING", "ID", "GROUP", "LOST",
	};

	print_flags(out, v, names, sizeof(names) / sizeof(names[0]));
}

static void print_attr_flags(FILE *out, const struct perf_event_attr *a)
{
	const struct { const char *name; uint64_t on; } flags[] = {
		{ "disabled", a->disabled }, { "inherit", a->inherit }, { "pinned", a->pinned },
		{ "exclusive", a->exclusive }, { "exclude_user", a->exclude_user },
		{ "exclude_kernel", a->exclude_kernel }, { "exclude_hv", a->exclude_hv },
		{ "exclude_idle", a->exclude_idle }, { "mmap", a->mmap }, { "comm", a->comm },
		{ "freq", a->freq }, { "inherit_stat", a->inherit_stat },
		{ "enable_on_exec", a->enable_on_exec }, { "task", a->task },
		{ "watermark", a->watermark }, { "precise_ip", a->precise_ip },
		{ "mmap_data", a->mmap_data }, { "sample_id_all", a->sample_id_all },
		{ "exclude_host", a->exclude_host }, { "exclude_guest", a->exclude_guest },
		{ "exclude_callchain_kernel", a->exclude_callchain_kernel },
		{ "exclude_callchain_user", a->exclude_callchain_user }, { "mmap2", a->mmap2 },
		{ "comm_exec", a->comm_exec }, { "use_clockid", a->use_clockid },
		{ "context_switch", a->context_switch }, { "write_backward", a->write_backward },
		{ "namespaces", a->namespaces }, { "ksymbol", a->ksymbol },
		{ "bpf_event", a->bpf_event }, { "aux_output", a->aux_output },
		{ "cgroup", a->cgroup }, { "text_poke", a->text_poke }, { "build_id", a->build_id },
		{ "inherit_thread", a->inherit_thread }, { "remove_on_exec", a->remove_on_exec },
		{ "sigtrap", a->sigtrap },
	};

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (!flags[i].on)
			continue;
		fprintf(out, " %s", flags[i].name);
		if (flags[i].on != 1)
			fprintf(out, "=%" PRIu64, flags[i].on);
	}
}

static void print_build_id_hex(FILE *out, const uint8_t *id, size_t size)
{
	for (size_t i = 0; i < size; i++)
		fprintf(out, "%02x", id[i]);
	if (!size)
		fprintf(out, "(empty)");
}

static void print_time(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%09" PRIu64, ns / 1000000000, ns % 1000000000);
}

/* ---- header, events, features ----------------------------------------------- */

static void print_file_header(FILE *out, int fd, const char *name)
{
	struct perfdata_file_header h;

	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return;
	fprintf(out, "# %s: file mode, header size %" PRIu64 ", attr_size %" PRIu64 "\n", name,
		h.size, h.attr_size);
	fprintf(out, "#   attrs [%#" PRIx64 ", +%" PRIu64 ")  data [%#" PRIx64 ", +%" PRIu64
		")  event_types [%#" PRIx64 ", +%" PRIu64 ")\n", h.attrs.offset, h.attrs.size,
		h.data.offset, h.data.size, h.event_types.offset, h.event_types.size);
	fprintf(out, "#   feature bits:");
	for (unsigned int i = 0; i < PERFDATA_FEAT_BITS; i++)
		if ((h.features[i / 64] >> (i % 64)) & 1)
			fprintf(out, " %u", i);
	fprintf(out, "\n");
}

static void print_event(FILE *out, size_t i, const struct perfdata_event *ev)
{
	const struct perf_event_attr *a = &ev->attr;
	const char *cfg = perfdata_event_generic_name(a->type, a->config);

	fprintf(out, "# event %zu: ", i);
	print_str(out, ev->name ? ev->name : "(no name in file)");
	fputc('\n', out);
	fprintf(out, "#   type %u (%s) config %#llx", a->type, event_type_name(a->type),
		(unsigned long long)a->config);
	if (cfg)
		fprintf(out, " (%s)", cfg);
	fprintf(out, " size %u\n", a->size);
	fprintf(out, "#   sample_type %#llx = ", (unsigned long long)a->sample_type);
	print_sample_type(out, a->sample_type);
	fprintf(out, "\n#   read_format %#llx = ", (unsigned long long)a->read_format);
	print_read_format(out, a->read_format);
	fprintf(out, "\n#   %s %llu\n", a->freq ? "sample_freq" : "sample_period",
		(unsigned long long)a->sample_period);
	fprintf(out, "#   flags:");
	print_attr_flags(out, a);
	fprintf(out, "\n");
	if (a->use_clockid)
		fprintf(out, "#   clockid %d\n", a->clockid);
	if (a->sample_type & PERF_SAMPLE_REGS_USER)
		fprintf(out, "#   sample_regs_user %#llx\n", (unsigned long long)a->sample_regs_user);
	if (a->sample_type & PERF_SAMPLE_STACK_USER)
		fprintf(out, "#   sample_stack_user %u\n", a->sample_stack_user);
	if (a->sample_type & PERF_SAMPLE_BRANCH_STACK)
		fprintf(out, "#   branch_sample_type %#llx\n",
			(unsigned long long)a->branch_sample_type);
	fprintf(out, "#   ids (%u):", ev->nr_ids);
	for (uint32_t j = 0; j < ev->nr_ids; j++) {
		if (j == 64) {
			fprintf(out, " ... (%u more)", ev->nr_ids - j);
			break;
		}
		fprintf(out, " %" PRIu64, ev->ids[j]);
	}
	fprintf(out, "\n");
}

/* perf string: u32 len, len bytes, NUL-padded. Printed up to the NUL. */
static bool print_payload_string(FILE *out, struct perfdata_cursor *c)
{
	const char *s;
	size_t max;

	if (perfdata_cursor_string(c, &s, &max))
		return false;
	escape_fputs(out, s, max);
	return true;
}

static void print_cmdline(FILE *out, struct perfdata_cursor *c)
{
	uint32_t nr;

	if (perfdata_cursor_u32(c, &nr)) {
		fprintf(out, "(malformed)");
		return;
	}
	for (uint32_t i = 0; i < nr; i++) {
		if (i)
			fputc(' ', out);
		if (!print_payload_string(out, c)) {
			fprintf(out, " (malformed)");
			return;
		}
	}
}

static void print_event_desc(FILE *out, struct perfdata_cursor *c)
{
	uint32_t nr, attr_size;

	if (perfdata_cursor_u32(c, &nr) || perfdata_cursor_u32(c, &attr_size)) {
		fprintf(out, "(malformed)");
		return;
	}
	fprintf(out, "%u event(s)", nr);
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t nr_ids;
		uint64_t id;

		fprintf(out, "%s", i ? ", " : ": ");
		if (perfdata_cursor_take(c, attr_size, NULL) || perfdata_cursor_u32(c, &nr_ids) ||
		    !print_payload_string(out, c)) {
			fprintf(out, " (malformed)");
			return;
		}
		fprintf(out, " (ids");
		for (uint32_t j = 0; j < nr_ids; j++) {
			if (perfdata_cursor_u64(c, &id)) {
				fprintf(out, " (malformed))");
				return;
			}
			if (j < 16)
				fprintf(out, " %" PRIu64, id);
		}
		fprintf(out, "%s)", nr_ids > 16 ? " ..." : "");
	}
}

static const char *clockid_name(uint64_t id)
{
	switch (id) {
	case CLOCK_REALTIME:	return "CLOCK_REALTIME";
	case CLOCK_MONOTONIC:	return "CLOCK_MONOTONIC";
	case CLOCK_MONOTONIC_RAW: return "CLOCK_MONOTONIC_RAW";
	case CLOCK_BOOTTIME:	return "CLOCK_BOOTTIME";
	case CLOCK_TAI:		return "CLOCK_TAI";
	default:		return "?";
	}
}

static int print_one_build_id(const struct perfdata_build_id *b, void *ctx)
{
	FILE *out = ctx;

	fprintf(out, "#   %s pid %d ", cpumode_name(b->cpumode), b->pid);
	print_build_id_hex(out, b->id, b->size);
	fputc(' ', out);
	print_str(out, b->filename);
	fputc('\n', out);
	return 0;
}

static void print_feature(FILE *out, struct perfdata_reader *r, unsigned int feat)
{
	const char *name = feature_name(feat);
	size_t size;
	const uint8_t *data = perfdata_reader_feature(r, feat, &size);
	struct perfdata_cursor c;
	uint32_t a, b;
	uint64_t x, y;

	perfdata_cursor_init(&c, data, size);
	if (name)
		fprintf(out, "# feature %s: ", name);
	else
		fprintf(out, "# feature %u: ", feat);
	switch (feat) {
	case PERFDATA_FEAT_HOSTNAME:
	case PERFDATA_FEAT_OSRELEASE:
	case PERFDATA_FEAT_VERSION:
	case PERFDATA_FEAT_ARCH:
	case PERFDATA_FEAT_CPUDESC:
	case PERFDATA_FEAT_CPUID: {
		const char *s = perfdata_reader_feature_string(r, feat);

		if (s) {
			fputc('"', out);
			print_str(out, s);
			fputs("\"\n", out);
		} else {
			fprintf(out, "(malformed string, %zu bytes)\n", size);
		}
		return;
	}
	case PERFDATA_FEAT_NRCPUS:
		if (!perfdata_cursor_u32(&c, &a) && !perfdata_cursor_u32(&c, &b))
			fprintf(out, "available %u online %u\n", a, b);
		else
			fprintf(out, "(malformed, %zu bytes)\n", size);
		return;
	case PERFDATA_FEAT_TOTAL_MEM:
		if (!perfdata_cursor_u64(&c, &x))
			fprintf(out, "%" PRIu64 " kB\n", x);
		else
			fprintf(out, "(malformed, %zu bytes)\n", size);
		return;
	case PERFDATA_FEAT_CMDLINE:
		print_cmdline(out, &c);
		fprintf(out, "\n");
		return;
	case PERFDATA_FEAT_EVENT_DESC:
		print_event_desc(out, &c);
		fprintf(out, "\n");
		return;
	case PERFDATA_FEAT_SAMPLE_TIME:
		if (!perfdata_cursor_u64(&c, &x) && !perfdata_cursor_u64(&c, &y)) {
			fprintf(out, "first ");
			print_time(out, x);
			fprintf(out, " last ");
			print_time(out, y);
			fprintf(out, "\n");
		} else {
			fprintf(out, "(malformed, %zu bytes)\n", size);
		}
		return;
	case PERFDATA_FEAT_CLOCKID:
		if (!perfdata_cursor_u64(&c, &x))
			fprintf(out, "%" PRIu64 " (%s)\n", x, clockid_name(x));
		else
			fprintf(out, "(malformed, %zu bytes)\n", size);
		return;
	case PERFDATA_FEAT_CLOCK_DATA:
		/* u32 version, u32 clockid, u64 wall-clock ns, u64 clockid ns */
		if (!perfdata_cursor_u32(&c, &a) && !perfdata_cursor_u32(&c, &b) &&
		    !perfdata_cursor_u64(&c, &x) && !perfdata_cursor_u64(&c, &y)) {
			fprintf(out, "version %u clockid %u (%s) wall ", a, b, clockid_name(b));
			print_time(out, x);
			fprintf(out, " at clock ");
			print_time(out, y);
			fprintf(out, "\n");
		} else {
			fprintf(out, "(malformed, %zu bytes)\n", size);
		}
		return;
	case PERFDATA_FEAT_BUILD_ID:
		fprintf(out, "%zu bytes\n", size);
		perfdata_reader_for_each_build_id(r, print_one_build_id, out);
		return;
	case PERFDATA_FEAT_COMPRESSED: {
		/* u32 version, type (1 = zstd), level, ratio, mmap_len */
		uint32_t type, level, ratio, mmap_len;

		if (!perfdata_cursor_u32(&c, &a) && !perfdata_cursor_u32(&c, &type) &&
		    !perfdata_cursor_u32(&c, &level) && !perfdata_cursor_u32(&c, &ratio) &&
		    !perfdata_cursor_u32(&c, &mmap_len))
			fprintf(out, "%s level %u ratio %u mmap_len %u (version %u)\n",
				type == 1 ? "zstd" : "unknown type", level, ratio, mmap_len, a);
		else
			fprintf(out, "(malformed, %zu bytes)\n", size);
		return;
	}
	default:
		fprintf(out, "%zu bytes\n", size);
	}
}

static void print_metadata(FILE *out, struct perfdata_reader *r)
{
	size_t size;

	for (size_t i = 0; i < perfdata_reader_nr_events(r); i++)
		print_event(out, i, perfdata_reader_event(r, i));
	for (unsigned int f = 0; f < PERFDATA_FEAT_BITS; f++)
		if (perfdata_reader_feature(r, f, &size))
			print_feature(out, r, f);
	/* In a pipe, build-ids arrive as records, not as the BUILD_ID feature. */
	if (perfdata_reader_is_pipe(r) && !perfdata_reader_feature(r, PERFDATA_FEAT_BUILD_ID, &size))
		perfdata_reader_for_each_build_id(r, print_one_build_id, out);
}

/* ---- records ---------------------------------------------------------------- */

static void note_malformed(struct dump_stats *st, struct perfdata_reader *r,
			   const struct perf_event_header *h, const char *why)
{
	st->malformed++;
	if (!st->first_error[0])
		snprintf(st->first_error, sizeof(st->first_error),
			 "%s record at offset %#" PRIx64 " (size %u) is malformed: %s",
			 record_type_name(h->type) ?: "unknown",
			 perfdata_reader_offset(r), h->size, why);
}

static void print_sample_id(FILE *out, struct perfdata_reader *r,
			    const struct perf_event_header *h, struct dump_stats *st)
{
	const struct perfdata_event *ev = perfdata_reader_event(r, 0);
	uint64_t type;
	struct perfdata_sample_id sid;

	if (!ev || !ev->attr.sample_id_all || h->type >= PERFDATA_RECORD_HEADER_ATTR)
		return;
	type = ev->attr.sample_type;
	if (perfdata_reader_parse_sample_id(r, h, &sid)) {
		fprintf(out, " {MALFORMED sample_id}");
		note_malformed(st, r, h, "sample_id trailer does not fit");
		return;
	}
	fprintf(out, " {");
	if (type & PERF_SAMPLE_TID)
		fprintf(out, " pid/tid %d/%d", (int32_t)sid.pid, (int32_t)sid.tid);
	if (type & PERF_SAMPLE_TIME) {
		fprintf(out, " time ");
		print_time(out, sid.time);
	}
	if (type & PERF_SAMPLE_CPU)
		fprintf(out, " cpu %u", sid.cpu);
	if (type & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER))
		fprintf(out, " id %" PRIu64, sid.id);
	if (type & PERF_SAMPLE_STREAM_ID)
		fprintf(out, " stream_id %" PRIu64, sid.stream_id);
	fprintf(out, " }");
}

static const char *context_name(uint64_t ip)
{
	switch (ip) {
	case (uint64_t)PERF_CONTEXT_HV:			return "[hv]";
	case (uint64_t)PERF_CONTEXT_KERNEL:		return "[kernel]";
	case (uint64_t)PERF_CONTEXT_USER:		return "[user]";
	case (uint64_t)PERF_CONTEXT_GUEST:		return "[guest]";
	case (uint64_t)PERF_CONTEXT_GUEST_KERNEL:	return "[guest-kernel]";
	case (uint64_t)PERF_CONTEXT_GUEST_USER:		return "[guest-user]";
	default:					return "[context?]";
	}
}

static void count_sample(struct dump_stats *st, struct perfdata_reader *r,
			 const struct perfdata_event *ev)
{
	size_t idx;

	st->samples++;
	if (!ev) {
		st->samples_unknown_event++;
		return;
	}
	idx = (size_t)(ev - perfdata_reader_event(r, 0));
	if (idx >= st->nr_samples_by_event) {
		size_t n = perfdata_reader_nr_events(r);
		uint64_t *v = realloc(st->samples_by_event, n * sizeof(*v));

		if (!v)
			return;
		memset(v + st->nr_samples_by_event, 0, (n - st->nr_samples_by_event) * sizeof(*v));
		st->samples_by_event = v;
		st->nr_samples_by_event = n;
	}
	st->samples_by_event[idx]++;
}

static void print_sample(FILE *out, struct perfdata_reader *r, const struct perf_event_header *h,
			 struct dump_stats *st, bool quiet)
{
	const struct perfdata_event *ev;
	struct perfdata_sample s;
	uint64_t type;
	int err = perfdata_reader_parse_sample(r, h, &s, &ev);

	count_sample(st, r, ev);
	if (quiet && !err)
		return;
	if (err == -ENOENT) {
		uint64_t id = 0;

		if (perfdata_reader_nr_events(r))
			perfdata_decode_sample_event_id(h, perfdata_reader_event(r, 0)->attr.sample_type,
							&id);
		if (!quiet)
			fprintf(out, " MALFORMED: no event has sample id %" PRIu64, id);
		note_malformed(st, r, h, "its sample id belongs to no event");
		return;
	}
	if (err) {
		if (!quiet) {
			fprintf(out, " event ");
			print_str(out, event_name(ev));
			fprintf(out, " MALFORMED: fields do not fit its sample_type");
		}
		note_malformed(st, r, h, "its fields do not fit the event's sample_type");
		return;
	}
	type = ev->attr.sample_type;
	fprintf(out, " event ");
	print_str(out, event_name(ev));
	if (type & PERF_SAMPLE_TID)
		fprintf(out, " pid %u tid %u", s.pid, s.tid);
	if (type & PERF_SAMPLE_TIME) {
		fprintf(out, " time ");
		print_time(out, s.time);
	}
	if (type & PERF_SAMPLE_CPU)
		fprintf(out, " cpu %u", s.cpu);
	fprintf(out, " period %" PRIu64, s.period);
	if (type & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER))
		fprintf(out, " id %" PRIu64, s.id);
	if (type & PERF_SAMPLE_IP)
		fprintf(out, " ip %#" PRIx64, s.ip);
	if (type & PERF_SAMPLE_ADDR)
		fprintf(out, " addr %#" PRIx64, s.addr);
	if (type & PERF_SAMPLE_RAW)
		fprintf(out, " raw %u bytes", s.raw_size);
	if (type & PERF_SAMPLE_REGS_USER)
		fprintf(out, " regs abi %" PRIu64 " nr %" PRIu64, s.regs_abi, s.nr_regs);
	if (type & PERF_SAMPLE_STACK_USER)
		fprintf(out, " stack %" PRIu64 "/%" PRIu64, s.stack_dyn_size, s.stack_size);
	if (type & PERF_SAMPLE_CALLCHAIN) {
		fprintf(out, " callchain %" PRIu64 ":", s.nr_callchain);
		for (uint64_t i = 0; i < s.nr_callchain; i++) {
			uint64_t ip;

			memcpy(&ip, &s.callchain[i], sizeof(ip));
			if (perfdata_is_context_marker(ip))
				fprintf(out, " %s", context_name(ip));
			else
				fprintf(out, " %#" PRIx64, ip);
		}
	}
}

static void print_mmap(FILE *out, const struct perfdata_mmap *m, bool mmap2)
{
	fprintf(out, " pid %d tid %u [%#" PRIx64 ", +%#" PRIx64 ") pgoff %#" PRIx64,
		(int32_t)m->pid, m->tid, m->start, m->len, m->pgoff);
	if (mmap2) {
		if (m->build_id_size) {
			fprintf(out, " build-id ");
			print_build_id_hex(out, m->build_id, m->build_id_size);
		} else {
			fprintf(out, " dev %x:%x ino %" PRIu64 " gen %" PRIu64, m->maj, m->min, m->ino,
				m->ino_generation);
		}
		fprintf(out, " prot %c%c%c flags %#x", m->prot & 1 ? 'r' : '-',
			m->prot & 2 ? 'w' : '-', m->prot & 4 ? 'x' : '-', m->flags);
	}
	fputc(' ', out);
	print_str(out, m->filename);
}

static void print_record(FILE *out, struct perfdata_reader *r, const struct perf_event_header *h,
			 struct dump_stats *st, bool quiet)
{
	const char *tname = record_type_name(h->type);
	const uint8_t *body = (const uint8_t *)(h + 1);
	size_t body_size = h->size - sizeof(*h);
	uint64_t a = 0, b = 0, lost_id = 0, lost = 0;
	union {
		struct perfdata_mmap m;
		struct perfdata_comm c;
		struct perfdata_task t;
	} u;

	st->records++;
	st->by_type[h->type < NR_RECORD_TYPES ? h->type : 0]++;
	if (body_size >= 8)
		memcpy(&a, body, 8);
	if (body_size >= 16)
		memcpy(&b, body + 8, 8);
	if ((h->type == PERF_RECORD_LOST || h->type == PERF_RECORD_LOST_SAMPLES) &&
	    !perfdata_decode_lost(h, &lost_id, &lost))
		*(h->type == PERF_RECORD_LOST ? &st->lost : &st->lost_samples) += lost;

	if (!quiet) {
		/* Records decompressed from a COMPRESSED one carry its offset, marked. */
		fprintf(out, "%#010" PRIx64 "%c", perfdata_reader_offset(r),
			perfdata_reader_in_compressed(r) ? '+' : ' ');
		if (tname)
			fprintf(out, "%-15s", tname);
		else
			fprintf(out, "TYPE_%-10u", h->type);
		fprintf(out, " size %5u misc 0x%04x %-7s", h->size, h->misc, cpumode_name(h->misc));
	}

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		print_sample(out, r, h, st, quiet);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if ((h->type == PERF_RECORD_MMAP ? perfdata_decode_mmap(h, &u.m)
						  : perfdata_decode_mmap2(h, &u.m))) {
			if (!quiet)
				fprintf(out, " MALFORMED");
			note_malformed(st, r, h, "fields or filename do not fit");
		} else if (!quiet) {
			print_mmap(out, &u.m, h->type == PERF_RECORD_MMAP2);
		}
		break;
	case PERF_RECORD_COMM:
		if (perfdata_decode_comm(h, &u.c)) {
			if (!quiet)
				fprintf(out, " MALFORMED");
			note_malformed(st, r, h, "fields or name do not fit");
		} else if (!quiet) {
			fprintf(out, " pid %u tid %u comm \"", u.c.pid, u.c.tid);
			print_str(out, u.c.comm);
			fprintf(out, "\"%s", u.c.exec ? " exec" : "");
		}
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (perfdata_decode_task(h, &u.t)) {
			if (!quiet)
				fprintf(out, " MALFORMED");
			note_malformed(st, r, h, "record too short");
		} else if (!quiet) {
			fprintf(out, " pid %u ppid %u tid %u ptid %u time ", u.t.pid, u.t.ppid,
				u.t.tid, u.t.ptid);
			print_time(out, u.t.time);
		}
		break;
	case PERF_RECORD_LOST:
		if (!quiet)
			fprintf(out, " id %" PRIu64 " lost %" PRIu64, lost_id, lost);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (!quiet)
			fprintf(out, " lost %" PRIu64, lost);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		if (!quiet) {
			fprintf(out, " time ");
			print_time(out, a);
			fprintf(out, " id %" PRIu64, b);
		}
		break;
	case PERFDATA_RECORD_HEADER_ATTR:
		if (!quiet && perfdata_reader_is_pipe(r) && perfdata_reader_nr_events(r)) {
			size_t i = perfdata_reader_nr_events(r) - 1;
			const struct perfdata_event *ev = perfdata_reader_event(r, i);

			fprintf(out, " event %zu type %u config %#llx sample_type %#llx ids %u", i,
				ev->attr.type, (unsigned long long)ev->attr.config,
				(unsigned long long)ev->attr.sample_type, ev->nr_ids);
		}
		break;
	case PERFDATA_RECORD_HEADER_FEATURE:
		if (!quiet && body_size >= 8) {
			const char *fname = a < PERFDATA_FEAT_BITS ? feature_name((unsigned int)a) : NULL;

			if (fname)
				fprintf(out, " feature %s", fname);
			else
				fprintf(out, " feature %" PRIu64, a);
			fprintf(out, " %zu bytes", body_size - 8);
		}
		break;
	case PERFDATA_RECORD_HEADER_BUILD_ID:
		if (!quiet && h->size >= PERFDATA_BUILD_ID_RECORD_SIZE) {
			struct perfdata_build_id_record bid;
			uint8_t n;

			memcpy(&bid, h, sizeof(bid));
			n = (h->misc & PERFDATA_MISC_BUILD_ID_SIZE) ? bid.size : 20;
			fprintf(out, " pid %d build-id ", bid.pid);
			print_build_id_hex(out, bid.build_id, n > 20 ? 20 : n);
			fputc(' ', out);
			escape_fputs(out, (const char *)h + sizeof(bid), h->size - sizeof(bid));
		}
		break;
	case PERFDATA_RECORD_COMPRESSED:
		if (!quiet)
			fprintf(out, " %zu bytes of zstd stream; its records follow, marked '+'",
				body_size);
		break;
	default:
		break;
	}
	if (h->type != PERF_RECORD_SAMPLE && !quiet)
		print_sample_id(out, r, h, st);
	if (!quiet)
		fputc('\n', out);
}

static void print_summary(FILE *out, struct perfdata_reader *r, const struct dump_stats *st)
{
	fprintf(out, "# records: %" PRIu64 "\n", st->records);
	for (unsigned int t = 0; t < NR_RECORD_TYPES; t++) {
		const char *n = record_type_name(t);

		if (!st->by_type[t])
			continue;
		if (n)
			fprintf(out, "#   %-16s %10" PRIu64 "\n", n, st->by_type[t]);
		else
			fprintf(out, "#   TYPE_%-11u %10" PRIu64 "\n", t, st->by_type[t]);
	}
	fprintf(out, "# samples: %" PRIu64 "\n", st->samples);
	for (size_t i = 0; i < perfdata_reader_nr_events(r); i++) {
		fprintf(out, "#   ");
		for (size_t w = print_str(out, event_name(perfdata_reader_event(r, i))); w < 16; w++)
			fputc(' ', out);
		fprintf(out, " %10" PRIu64 "\n",
			i < st->nr_samples_by_event ? st->samples_by_event[i] : 0);
	}
	if (st->samples_unknown_event)
		fprintf(out, "#   %-16s %10" PRIu64 "\n", "(no event)", st->samples_unknown_event);
	if (st->lost || st->lost_samples)
		fprintf(out, "# lost: %" PRIu64 " (LOST) %" PRIu64 " (LOST_SAMPLES)\n", st->lost,
			st->lost_samples);
	if (st->malformed)
		fprintf(out, "# malformed records: %" PRIu64 "\n", st->malformed);
}

/* ---- command ---------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bpfrec dump [-i FILE|-] [--header-only | --records-only]\n"
		"\n"
		"Print a perf.data file (file or pipe mode): header, events, features,\n"
		"one line per record, and a summary of records per type and samples.\n"
		"\n"
		"  -i, --input FILE   the file to read; '-' reads stdin (default perf.data)\n"
		"  -H, --header-only  header, events and features only\n"
		"  -R, --records-only record lines only, no header and no summary\n"
		"  -h, --help         this help\n");
}

static int parse_opts(int argc, char **argv, struct dump_opts *o)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "header-only", no_argument, NULL, 'H' },
		{ "records-only", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->input = "perf.data";
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":i:HRh", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->input = optarg;
			break;
		case 'H':
			o->header_only = true;
			break;
		case 'R':
			o->records_only = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "bpfrec dump: option '%s' needs a value; see 'bpfrec dump --help'\n",
				argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "bpfrec dump: unknown option '%s'; see 'bpfrec dump --help'\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "bpfrec dump: unexpected argument '%s'; use -i FILE\n", argv[optind]);
		return 2;
	}
	if (o->header_only && o->records_only) {
		fprintf(stderr, "bpfrec dump: --header-only and --records-only exclude each other\n");
		return 2;
	}
	return -1;
}

static int dump(struct perfdata_reader *r, int fd, const char *name, const struct dump_opts *o)
{
	FILE *out = stdout;
	struct dump_stats st = { 0 };
	const struct perf_event_header *h;
	bool pipe = perfdata_reader_is_pipe(r);
	/* Pipe-mode metadata arrives with the records: read them all, print at the end. */
	bool quiet = o->header_only;
	int ret;

	if (!o->records_only) {
		if (pipe)
			fprintf(out, "# %s: pipe mode, header size 16\n", name);
		else
			print_file_header(out, fd, name);
		if (!pipe)
			print_metadata(out, r);
	}
	if (o->header_only && !pipe) {
		free(st.samples_by_event);
		return 0;
	}
	while ((ret = perfdata_reader_next(r, &h)) > 0)
		print_record(out, r, h, &st, quiet);
	if (!o->records_only) {
		if (pipe)
			print_metadata(out, r);
		if (!o->header_only)
			print_summary(out, r, &st);
	}
	free(st.samples_by_event);
	if (fflush(out) || ferror(out)) {
		fprintf(stderr, "bpfrec dump: writing the output failed: %s\n", strerror(errno));
		return 1;
	}
	if (ret < 0) {
		fprintf(stderr, "bpfrec dump: %s\n", perfdata_reader_error(r));
		return 1;
	}
	if (st.malformed) {
		fprintf(stderr, "bpfrec dump: %s: %s\n", name, st.first_error);
		return 1;
	}
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	struct dump_opts o = { 0 };
	struct perfdata_reader *r = NULL;
	const char *name;
	int fd, err, ret;

	ret = parse_opts(argc, argv, &o);
	if (ret >= 0)
		return ret;
	if (!strcmp(o.input, "-")) {
		fd = STDIN_FILENO;
		name = "stdin";
	} else {
		fd = open(o.input, O_RDONLY | O_CLOEXEC);
		name = o.input;
		if (fd < 0) {
			fprintf(stderr, "bpfrec dump: %s: %s\n", name, strerror(errno));
			return 1;
		}
	}
	err = perfdata_reader_open(fd, name, &r);
	if (err) {
		if (r && perfdata_reader_error(r)[0])
			fprintf(stderr, "bpfrec dump: %s\n", perfdata_reader_error(r));
		else
			fprintf(stderr, "bpfrec dump: %s: %s\n", name, strerror(-err));
		ret = 1;
	} else {
		ret = dump(r, fd, name, &o);
	}
	perfdata_reader_free(r);
	if (fd != STDIN_FILENO)
		close(fd);
	return ret;
}
