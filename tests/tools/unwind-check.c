// SPDX-License-Identifier: MIT
/*
 * unwind-check - try the BPF user-stack walker (bpf/unwind.bpf.h) on one
 * running process, outside the recorder (needs root).
 *
 *   unwind-check PID SECONDS
 *
 * Builds the unwind table of every file PID maps (symbolize/cfitable.h),
 * loads them and PID's mappings into the maps of bpf/unwind_check.bpf.c,
 * samples PID's main thread with cpu-clock at 999 Hz for SECONDS, then
 * prints how the walks ended ("walks N", then "STOP-REASON N" for each
 * reason seen), each CPU's last walk ("last CPU frames N stop REASON") and
 * the program's mean run time ("ns_per_walk N", from BPF run-time stats;
 * informative, it depends on the machine).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "recorder/procmaps.h"
#include "symbolize/cfitable.h"
#include "symbolize/cfiwalk.h"
#include "unwind_check.skel.h"

/* Tables for the file mappings of pid, appended to one row store. */
static int load_proc(uint32_t pid, struct unwind_row **rows, size_t *nr_rows,
		     struct unwind_proc *proc)
{
	struct procmaps maps;
	int err = procmaps_read(NULL, pid, 0, &maps);

	if (err)
		return err;
	for (size_t i = 0; i < maps.nr && proc->nr < UNWIND_MAX_MAPPINGS; i++) {
		const struct procmaps_entry *e = &maps.entries[i];
		struct unwind_mapping *m = &proc->maps[proc->nr++];
		struct cfi_table *t;
		uint64_t bias;

		*m = (struct unwind_mapping){ .start = e->start, .end = e->end };
		if (e->path[0] != '/' || cfi_table_build(e->path, &t))
			continue;
		if (!cfi_table_bias(t, e->start, e->end - e->start, e->pgoff, &bias)) {
			struct unwind_row *r = realloc(*rows, (*nr_rows + t->nr) * sizeof(**rows));

			if (!r) {
				cfi_table_free(t);
				procmaps_release(&maps);
				return -ENOMEM;
			}
			memcpy(r + *nr_rows, t->rows, t->nr * sizeof(*r));
			*rows = r;
			m->bias = bias;
			m->first_row = (uint32_t)*nr_rows;
			m->nr_rows = (uint32_t)t->nr;
			*nr_rows += t->nr;
		}
		cfi_table_free(t);
	}
	procmaps_release(&maps);
	return 0;
}

int main(int argc, char **argv)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr), .type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK, .freq = 1, .sample_freq = 999,
	};
	int ncpus = libbpf_num_possible_cpus(), pfd, err, stats_fd;
	struct bpf_prog_info info = { 0 };
	__u32 info_len = sizeof(info);
	struct unwind_check *skel = NULL;
	struct unwind_proc *proc = calloc(1, sizeof(*proc));
	struct unwind_walk_state *st = NULL;
	struct unwind_row *rows = NULL;
	struct bpf_link *link = NULL;
	uint64_t *counts = NULL, total = 0;
	size_t nr_rows = 0;
	uint32_t pid;

	if (argc != 3 || !proc || ncpus <= 0) {
		fprintf(stderr, "usage: unwind-check PID SECONDS\n");
		return 2;
	}
	pid = (uint32_t)strtoul(argv[1], NULL, 10);
	err = load_proc(pid, &rows, &nr_rows, proc);
	if (err || !nr_rows) {
		fprintf(stderr, "unwind-check: no tables for pid %u: %s\n", pid,
			strerror(err ? -err : ENOENT));
		return 1;
	}
	skel = unwind_check__open();
	if (!skel)
		return 1;
	skel->rodata->target_tgid = pid;
	bpf_map__set_max_entries(skel->maps.unwind_rows, (uint32_t)nr_rows);
	err = unwind_check__load(skel);
	if (err) {
		fprintf(stderr, "unwind-check: load: %s\n", strerror(-err));
		return 1;
	}
	for (uint32_t i = 0; i < nr_rows; i++) {
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.unwind_rows), &i, &rows[i], 0)) {
			fprintf(stderr, "unwind-check: rows: %s\n", strerror(errno));
			return 1;
		}
	}
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.unwind_procs), &pid, proc, 0)) {
		fprintf(stderr, "unwind-check: procs: %s\n", strerror(errno));
		return 1;
	}
	pfd = (int)syscall(SYS_perf_event_open, &attr, (int)pid, -1, -1, 0);
	if (pfd < 0) {
		fprintf(stderr, "unwind-check: perf_event_open: %s\n", strerror(errno));
		return 1;
	}
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);	/* -1: no timing, nothing else lost */
	link = bpf_program__attach_perf_event(skel->progs.unwind_check, pfd);
	if (!link) {
		fprintf(stderr, "unwind-check: attach: %s\n", strerror(errno));
		return 1;
	}
	sleep((unsigned int)strtoul(argv[2], NULL, 10));
	bpf_link__destroy(link);
	close(pfd);

	counts = calloc((size_t)ncpus, sizeof(*counts));
	st = calloc((size_t)ncpus, sizeof(*st));
	if (!counts || !st)
		return 1;
	for (uint32_t r = 0; r < UNWIND_STOP_MAX; r++) {
		uint64_t sum = 0;

		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.unwind_stops), &r, counts))
			return 1;
		for (int c = 0; c < ncpus; c++)
			sum += counts[c];
		total += sum;
		if (sum)
			printf("%s %llu\n", cfi_walk_stop_name(r), (unsigned long long)sum);
	}
	printf("walks %llu\n", (unsigned long long)total);
	{
		uint32_t zero = 0;

		if (!bpf_map_lookup_elem(bpf_map__fd(skel->maps.unwind_scratch), &zero, st))
			for (int c = 0; c < ncpus; c++)
				if (st[c].nr)
					printf("last %d frames %u stop %s\n", c, st[c].nr,
					       cfi_walk_stop_name(st[c].stop));
	}
	if (stats_fd >= 0 &&
	    !bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.unwind_check), &info, &info_len) &&
	    info.run_cnt)
		printf("ns_per_walk %llu\n", (unsigned long long)(info.run_time_ns / info.run_cnt));
	if (stats_fd >= 0)
		close(stats_fd);
	unwind_check__destroy(skel);
	free(counts);
	free(st);
	free(rows);
	free(proc);
	return 0;
}
