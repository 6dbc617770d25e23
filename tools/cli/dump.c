// SPDX-License-Identifier: MIT
/*
 * dump.c - `bpfrec dump`: print a perf.data file's header, events, features
 * and records, one line per record, then a summary.
 *
 *   bpfrec dump [-i FILE|-] [--header-only | --records-only]
 *
 * It reads any perf.data the reader accepts (file or pipe mode, ours or
 * perf's, compressed with -z or not), through the public <bpfrec/perfdata.h>
 * only, and is the tool to look at what a writer actually produced. The
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

#include <bpfrec/perfdata.h>

#include "tools/cli/commands.h"
#include "tools/cli/escape.h"
#include "tools/cli/usage.h"

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

/* Event i's name: its own, else perf's generic one. */
static const char *event_name(struct bpfrec_perfdata *r, int i)
{
	const struct perf_event_attr *a;
	const char *n;

	if (i < 0 || !(a = bpfrec_perfdata_event_attr(r, (size_t)i)))
		return "(unknown)";
	n = bpfrec_perfdata_event_name(r, (size_t)i);
	if (!n)
		n = bpfrec_perfdata_event_generic_name(a->type, a->config);
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

static void print_file_header(FILE *out, struct bpfrec_perfdata *r, const char *name)
{
	BPFREC_OPTS(bpfrec_perfdata_header, h);

	if (bpfrec_perfdata_get_header(r, &h))
		return;
	fprintf(out, "# %s: file mode, header size %" PRIu64 ", attr_size %" PRIu64 "\n", name,
		h.size, h.attr_size);
	fprintf(out, "#   attrs [%#" PRIx64 ", +%" PRIu64 ")  data [%#" PRIx64 ", +%" PRIu64
		")  event_types [%#" PRIx64 ", +%" PRIu64 ")\n", h.attrs_offset, h.attrs_size,
		h.data_offset, h.data_size, h.event_types_offset, h.event_types_size);
	fprintf(out, "#   feature bits:");
	for (unsigned int i = 0; i < BPFREC_PERFDATA_FEAT_BITS; i++)
		if ((h.features[i / 64] >> (i % 64)) & 1)
			fprintf(out, " %u", i);
	fprintf(out, "\n");
}

static void print_event(FILE *out, struct bpfrec_perfdata *r, size_t i)
{
	const struct perf_event_attr *a = bpfrec_perfdata_event_attr(r, i);
	const char *cfg = bpfrec_perfdata_event_generic_name(a->type, a->config);
	const char *name = bpfrec_perfdata_event_name(r, i);
	size_t nr_ids;
	const uint64_t *ids = bpfrec_perfdata_event_ids(r, i, &nr_ids);

	fprintf(out, "# event %zu: ", i);
	print_str(out, name ? name : "(no name in file)");
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
	fprintf(out, "#   ids (%zu):", nr_ids);
	for (size_t j = 0; j < nr_ids; j++) {
		if (j == 64) {
			fprintf(out, " ... (%zu more)", nr_ids - j);
			break;
		}
		fprintf(out, " %" PRIu64, ids[j]);
	}
	fprintf(out, "\n");
}

static int print_one_build_id(void *ctx, const struct bpfrec_perfdata_build_id *b)
{
	FILE *out = ctx;

	fprintf(out, "#   %s pid %d ", cpumode_name(b->cpumode), b->pid);
	print_build_id_hex(out, b->id, b->size);
	fputc(' ', out);
	escape_fputs(out, b->filename, b->filename_len);
	fputc('\n', out);
	return 0;
}

static void print_feature(FILE *out, struct bpfrec_perfdata *r, unsigned int feat)
{
	const char *name = bpfrec_perfdata_feature_name(feat);
	char text[4096];

	if (name)
		fprintf(out, "# feature %s: ", name);
	else
		fprintf(out, "# feature %u: ", feat);
	if (bpfrec_perfdata_describe_feature(r, feat, text, sizeof(text)) >= (int)sizeof(text))
		memcpy(text + sizeof(text) - 4, "...", 4);
	print_str(out, text);
	fputc('\n', out);
	if (feat == BPFREC_PERFDATA_FEAT_BUILD_ID)
		bpfrec_perfdata_for_each_build_id(r, print_one_build_id, out);
}

static void print_metadata(FILE *out, struct bpfrec_perfdata *r)
{
	size_t size;

	for (size_t i = 0; i < bpfrec_perfdata_nr_events(r); i++)
		print_event(out, r, i);
	for (unsigned int f = 0; f < BPFREC_PERFDATA_FEAT_BITS; f++)
		if (bpfrec_perfdata_feature(r, f, &size))
			print_feature(out, r, f);
	/* In a pipe, build-ids arrive as records, not as the BUILD_ID feature. */
	if (bpfrec_perfdata_is_pipe(r) &&
	    !bpfrec_perfdata_feature(r, BPFREC_PERFDATA_FEAT_BUILD_ID, &size))
		bpfrec_perfdata_for_each_build_id(r, print_one_build_id, out);
}

/* ---- records ---------------------------------------------------------------- */

static void note_malformed(struct dump_stats *st, struct bpfrec_perfdata *r,
			   const struct perf_event_header *h, const char *why)
{
	st->malformed++;
	if (!st->first_error[0])
		snprintf(st->first_error, sizeof(st->first_error),
			 "%s record at offset %#" PRIx64 " (size %u) is malformed: %s",
			 bpfrec_perfdata_record_name(h->type) ?: "unknown",
			 bpfrec_perfdata_offset(r), h->size, why);
}

static void print_sample_id(FILE *out, struct bpfrec_perfdata *r,
			    const struct perf_event_header *h, struct dump_stats *st)
{
	const struct perf_event_attr *a = bpfrec_perfdata_event_attr(r, 0);
	BPFREC_OPTS(bpfrec_perfdata_sample_id, sid);
	uint64_t type;

	if (!a || !a->sample_id_all || h->type >= BPFREC_PERFDATA_RECORD_HEADER_ATTR)
		return;
	type = a->sample_type;
	if (bpfrec_perfdata_parse_sample_id(r, h, &sid)) {
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

static void count_sample(struct dump_stats *st, struct bpfrec_perfdata *r, int event)
{
	size_t idx;

	st->samples++;
	if (event < 0) {
		st->samples_unknown_event++;
		return;
	}
	idx = (size_t)event;
	if (idx >= st->nr_samples_by_event) {
		size_t n = bpfrec_perfdata_nr_events(r);
		uint64_t *v = realloc(st->samples_by_event, n * sizeof(*v));

		if (!v)
			return;
		memset(v + st->nr_samples_by_event, 0, (n - st->nr_samples_by_event) * sizeof(*v));
		st->samples_by_event = v;
		st->nr_samples_by_event = n;
	}
	st->samples_by_event[idx]++;
}

static void print_sample(FILE *out, struct bpfrec_perfdata *r, const struct perf_event_header *h,
			 struct dump_stats *st, bool quiet)
{
	BPFREC_OPTS(bpfrec_perfdata_sample, s, .event = -1);
	int err = bpfrec_perfdata_parse_sample(r, h, &s);
	uint64_t type;

	count_sample(st, r, err == -ENOENT ? -1 : s.event);
	if (quiet && !err)
		return;
	if (err == -ENOENT) {
		if (!quiet)
			fprintf(out, " MALFORMED: no event has sample id %" PRIu64, s.id);
		note_malformed(st, r, h, "its sample id belongs to no event");
		return;
	}
	if (err) {
		if (!quiet) {
			fprintf(out, " event ");
			print_str(out, event_name(r, s.event));
			fprintf(out, " MALFORMED: fields do not fit its sample_type");
		}
		note_malformed(st, r, h, "its fields do not fit the event's sample_type");
		return;
	}
	type = bpfrec_perfdata_event_attr(r, (size_t)s.event)->sample_type;
	fprintf(out, " event ");
	print_str(out, event_name(r, s.event));
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
			/* The markers perf puts between kernel and user frames. */
			if (ip >= (uint64_t)PERF_CONTEXT_MAX)
				fprintf(out, " %s", context_name(ip));
			else
				fprintf(out, " %#" PRIx64, ip);
		}
	}
}

static void print_mmap(FILE *out, const struct bpfrec_perfdata_mmap *m, bool mmap2)
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

static void print_record(FILE *out, struct bpfrec_perfdata *r, const struct perf_event_header *h,
			 struct dump_stats *st, bool quiet)
{
	const char *tname = bpfrec_perfdata_record_name(h->type);
	const uint8_t *body = (const uint8_t *)(h + 1);
	size_t body_size = h->size - sizeof(*h);
	uint64_t a = 0, b = 0, lost_id = 0, lost = 0;
	union {
		struct bpfrec_perfdata_mmap m;
		struct bpfrec_perfdata_comm c;
		struct bpfrec_perfdata_task t;
		struct bpfrec_perfdata_ksymbol k;
		struct bpfrec_perfdata_build_id b;
	} u;

	st->records++;
	st->by_type[h->type < NR_RECORD_TYPES ? h->type : 0]++;
	if (body_size >= 8)
		memcpy(&a, body, 8);
	if (body_size >= 16)
		memcpy(&b, body + 8, 8);
	if ((h->type == PERF_RECORD_LOST || h->type == PERF_RECORD_LOST_SAMPLES) &&
	    !bpfrec_perfdata_parse_lost(h, &lost_id, &lost))
		*(h->type == PERF_RECORD_LOST ? &st->lost : &st->lost_samples) += lost;

	if (!quiet) {
		/* Records decompressed from a COMPRESSED one carry its offset, marked. */
		fprintf(out, "%#010" PRIx64 "%c", bpfrec_perfdata_offset(r),
			bpfrec_perfdata_in_compressed(r) ? '+' : ' ');
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
		u.m.sz = sizeof(u.m);
		if (bpfrec_perfdata_parse_mmap(h, &u.m)) {
			if (!quiet)
				fprintf(out, " MALFORMED");
			note_malformed(st, r, h, "fields or filename do not fit");
		} else if (!quiet) {
			print_mmap(out, &u.m, h->type == PERF_RECORD_MMAP2);
		}
		break;
	case PERF_RECORD_COMM:
		u.c.sz = sizeof(u.c);
		if (bpfrec_perfdata_parse_comm(h, &u.c)) {
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
		u.t.sz = sizeof(u.t);
		if (bpfrec_perfdata_parse_task(h, &u.t)) {
			if (!quiet)
				fprintf(out, " MALFORMED");
			note_malformed(st, r, h, "record too short");
		} else if (!quiet) {
			fprintf(out, " pid %u ppid %u tid %u ptid %u time ", u.t.pid, u.t.ppid,
				u.t.tid, u.t.ptid);
			print_time(out, u.t.time);
		}
		break;
	case PERF_RECORD_KSYMBOL:
		u.k.sz = sizeof(u.k);
		if (bpfrec_perfdata_parse_ksymbol(h, &u.k)) {
			if (!quiet)
				fprintf(out, " MALFORMED");
			note_malformed(st, r, h, "fields or name do not fit");
		} else if (!quiet) {
			/* The range written as MMAP lines write theirs. */
			fprintf(out, " [%#" PRIx64 ", +%#x) type %u%s flags %#x%s ", u.k.addr, u.k.len,
				u.k.ksym_type,
				u.k.ksym_type == PERF_RECORD_KSYMBOL_TYPE_BPF ? " (bpf)" : "",
				u.k.flags,
				u.k.flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER ? " (unregister)" : "");
			print_str(out, u.k.name);
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
	case BPFREC_PERFDATA_RECORD_HEADER_ATTR:
		if (!quiet && bpfrec_perfdata_is_pipe(r) && bpfrec_perfdata_nr_events(r)) {
			size_t i = bpfrec_perfdata_nr_events(r) - 1, nr_ids;
			const struct perf_event_attr *attr = bpfrec_perfdata_event_attr(r, i);

			bpfrec_perfdata_event_ids(r, i, &nr_ids);
			fprintf(out, " event %zu type %u config %#llx sample_type %#llx ids %zu", i,
				attr->type, (unsigned long long)attr->config,
				(unsigned long long)attr->sample_type, nr_ids);
		}
		break;
	case BPFREC_PERFDATA_RECORD_HEADER_FEATURE:
		if (!quiet && body_size >= 8) {
			const char *fname = a < BPFREC_PERFDATA_FEAT_BITS ?
					    bpfrec_perfdata_feature_name((unsigned int)a) : NULL;

			if (fname)
				fprintf(out, " feature %s", fname);
			else
				fprintf(out, " feature %" PRIu64, a);
			fprintf(out, " %zu bytes", body_size - 8);
		}
		break;
	case BPFREC_PERFDATA_RECORD_HEADER_BUILD_ID:
		u.b.sz = sizeof(u.b);
		if (!quiet && !bpfrec_perfdata_parse_build_id(h, &u.b)) {
			fprintf(out, " pid %d build-id ", u.b.pid);
			print_build_id_hex(out, u.b.id, u.b.size);
			fputc(' ', out);
			escape_fputs(out, u.b.filename, u.b.filename_len);
		}
		break;
	case BPFREC_PERFDATA_RECORD_COMPRESSED:
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

static void print_summary(FILE *out, struct bpfrec_perfdata *r, const struct dump_stats *st)
{
	fprintf(out, "# records: %" PRIu64 "\n", st->records);
	for (unsigned int t = 0; t < NR_RECORD_TYPES; t++) {
		const char *n = bpfrec_perfdata_record_name(t);

		if (!st->by_type[t])
			continue;
		if (n)
			fprintf(out, "#   %-16s %10" PRIu64 "\n", n, st->by_type[t]);
		else
			fprintf(out, "#   TYPE_%-11u %10" PRIu64 "\n", t, st->by_type[t]);
	}
	fprintf(out, "# samples: %" PRIu64 "\n", st->samples);
	for (size_t i = 0; i < bpfrec_perfdata_nr_events(r); i++) {
		fprintf(out, "#   ");
		for (size_t w = print_str(out, event_name(r, (int)i)); w < 16; w++)
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
		default:
			return cli_bad_option("dump", c, argv);
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

static int dump(struct bpfrec_perfdata *r, const char *name, const struct dump_opts *o)
{
	FILE *out = stdout;
	struct dump_stats st = { 0 };
	const struct perf_event_header *h;
	bool pipe = bpfrec_perfdata_is_pipe(r);
	/* Pipe-mode metadata arrives with the records: read them all, print at the end. */
	bool quiet = o->header_only;
	int ret;

	if (!o->records_only) {
		if (pipe)
			fprintf(out, "# %s: pipe mode, header size 16\n", name);
		else
			print_file_header(out, r, name);
		if (!pipe)
			print_metadata(out, r);
	}
	if (o->header_only && !pipe) {
		free(st.samples_by_event);
		return 0;
	}
	while ((ret = bpfrec_perfdata_next(r, &h)) > 0)
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
		fprintf(stderr, "bpfrec dump: %s\n", bpfrec_perfdata_error(r));
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
	struct bpfrec_perfdata *r = NULL;
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
	err = bpfrec_perfdata_open_fd(fd, name, &r);
	if (err) {
		if (r && bpfrec_perfdata_error(r)[0])
			fprintf(stderr, "bpfrec dump: %s\n", bpfrec_perfdata_error(r));
		else
			fprintf(stderr, "bpfrec dump: %s: %s\n", name, strerror(-err));
		ret = 1;
	} else {
		ret = dump(r, name, &o);
	}
	bpfrec_perfdata_free(r);
	if (fd != STDIN_FILENO)
		close(fd);
	return ret;
}
