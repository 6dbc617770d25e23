/* SPDX-License-Identifier: MIT */
/*
 * schedstats.h - the scheduler metrics of `record --sched` in perf.data:
 * the record that carries them (encode, decode) and the set they make
 * (struct bpfrec_sched_metrics of <bpfrec/sched.h>).
 *
 * The vehicle is a PERF_RECORD_HEADER_EVENT_TYPE (65) record in the data
 * section, in file and pipe mode alike. perf has ignored that type since it
 * stopped writing it (session.c: "Deprecated, but we need to handle it for
 * sake of old data files create in pipe mode" and returns 0), without a
 * warning, in both modes and in every tool that reads events (report,
 * script, buildid-list, sched, inject). The alternatives warn or break:
 * a feature bit above perf's last is skipped in file mode but a HEADER_FEATURE
 * record with such an id makes pipe-mode perf print "invalid record type ..
 * in pipe-mode", and a new record type fails the whole read.
 * Documentation/bpfrec-sched.md says the same for users.
 *
 * Layout (native endian, as the rest of the file), 8-byte aligned:
 *   struct perf_event_header   type 65, misc 0, size
 *   char magic[8]              "BPFRSCH\0": ours, not an old perf's record
 *   u32 version                1
 *   u32 entry_size             bytes per thread entry (>= 216; a later
 *                              version appends fields, readers skip them)
 *   u32 nr                     entries in this record
 *   u32 reserved               0
 *   entries: u32 pid, u32 tid, char comm[16], u64 oncpu_ns, u64 runq_count,
 *            u64 runq_total_ns, u64 runq_max_ns, u64 switches[4] (preempted,
 *            sleep, io, exit), u32 hist[32] (log2 microseconds)
 * A recording's metrics fill as many records as needed (a record is at most
 * 64 KiB), at least one, written once at the end of the recording.
 */
#ifndef PERFDATA_SCHEDSTATS_H
#define PERFDATA_SCHEDSTATS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include <bpfrec/sched.h>

#define PERFDATA_SCHED_RECORD_TYPE	65	/* PERF_RECORD_HEADER_EVENT_TYPE */
#define PERFDATA_SCHED_MAGIC		"BPFRSCH"
#define PERFDATA_SCHED_VERSION		1
#define PERFDATA_SCHED_HEAD_SIZE	32	/* header, magic, version, entry_size, nr, reserved */
#define PERFDATA_SCHED_ENTRY_SIZE	216	/* version 1 */

struct bpfrec_sched_metrics {
	struct bpfrec_sched_thread *t;
	size_t nr, cap;
	char err[256];		/* bpfrec_sched_metrics_error(): why a read failed */
};

/*
 * Encode up to nr threads into buf (cap bytes) as one record; *taken says
 * how many went in (at least one when cap allows; nr 0 makes a record that
 * says "recorded, no thread ran"). Returns the record's size, or -ENOSPC
 * when not even one fits.
 */
ssize_t perfdata_sched_encode(void *buf, size_t cap, const struct bpfrec_sched_thread *t,
			      size_t nr, size_t *taken);
/*
 * Add the threads a record holds to m.
 * 0; -ENOENT: not a metrics record (another type, or an old perf's
 * HEADER_EVENT_TYPE); -EINVAL: ours but malformed (nothing added); -ENOMEM.
 */
int perfdata_sched_decode(const struct perf_event_header *rec, struct bpfrec_sched_metrics *m);

/* A new empty set; NULL without memory. */
struct bpfrec_sched_metrics *perfdata_sched_metrics_new(void);
/* Append one thread. 0 or -ENOMEM. */
int perfdata_sched_metrics_put(struct bpfrec_sched_metrics *m, const struct bpfrec_sched_thread *t);
/* Sort by pid, then tid; of rows with one tid, the last added is kept. */
void perfdata_sched_metrics_sort(struct bpfrec_sched_metrics *m);
/* Add src's counts, max and histogram into dst. */
void perfdata_sched_thread_add(struct bpfrec_sched_thread *dst, const struct bpfrec_sched_thread *src);

#endif /* PERFDATA_SCHEDSTATS_H */
