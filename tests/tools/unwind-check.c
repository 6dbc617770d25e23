// SPDX-License-Identifier: MIT
/*
 * unwind-check - try the BPF user-stack walker (bpf/unwind.bpf.h) on one
 * running process, outside the recorder (needs root).
 *
 *   unwind-check [--fp] [--no-tables] [--bounded] PID SECONDS
 *
 * Builds the unwind table of every file PID maps (symbolize/cfitable.h),
 * loads them and PID's mappings into the maps of bpf/unwind_check.bpf.c,
 * samples each thread of PID with cpu-clock at 999 Hz for SECONDS, then
 * prints how the walks ended ("STOP-REASON N" for each reason seen, then
 * "walks N", their sum), the walker's counters ("stat NAME N" for each of
 * enum unwind_stat), each CPU's last walk ("last CPU frames N stop REASON
 * fp N") and the program's mean run time ("ns_per_walk N", from BPF
 * run-time stats; informative, it depends on the machine and its load).
 *
 * --fp also samples every thread with the frame-pointer program at the
 * same rate in the same run and prints its mean run time
 * ("fp_ns_per_sample N"): the baseline the walker's cost is measured
 * against. --bounded runs the walker as kernels without bpf_loop run it
 * (bounded loops, at most UNWIND_BOUNDED_FRAMES frames), on any kernel;
 * without it, the walker the recorder would pick for this kernel runs.
 * --no-tables leaves PID without tables (no unwind_procs entry),
 * as the recorder does before it has built them: the walks are then
 * frame-pointer walks.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "recorder/kfeatures.h"
#include "recorder/percpu.h"
#include "symbolize/cfitable.h"
#include "symbolize/cfiwalk.h"
#include "symbolize/procmaps.h"
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

/* The threads of pid (at most max), from /proc/PID/task. */
static int list_threads(uint32_t pid, pid_t *tids, int max)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((d = readdir(dir)) && n < max)
		if (d->d_name[0] != '.')
			tids[n++] = (pid_t)strtol(d->d_name, NULL, 10);
	closedir(dir);
	return n ? n : -ESRCH;
}

/* cpu-clock at 999 Hz on each of the n threads, each running prog. */
static int attach_threads(struct bpf_program *prog, const pid_t *tids, int n,
			  struct bpf_link **links)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr), .type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK, .freq = 1, .sample_freq = 999,
	};

	for (int i = 0; i < n; i++) {
		int pfd = (int)syscall(SYS_perf_event_open, &attr, tids[i], -1, -1, 0);

		if (pfd < 0)
			return -errno;
		links[i] = bpf_program__attach_perf_event(prog, pfd);
		if (!links[i]) {
			int err = -errno;

			close(pfd);
			return err;
		}
	}
	return 0;
}

/* The mean run time of prog ("NAME N"), when run-time stats are on. */
static void print_run_time(const char *name, const struct bpf_program *prog)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	if (!bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) && info.run_cnt)
		printf("%s %llu\n", name, (unsigned long long)(info.run_time_ns / info.run_cnt));
}

static int print_results(struct unwind_check *skel, struct bpf_program *walker, int fp)
{
	int ncpus = libbpf_num_possible_cpus(), err;
	struct unwind_walk_state *st;
	uint64_t sum, total = 0;
	uint32_t zero = 0;

	for (uint32_t r = 0; r < UNWIND_STOP_MAX; r++) {
		err = percpu_sum(bpf_map__fd(skel->maps.unwind_stops), r, &sum);
		if (err)
			return err;
		total += sum;
		if (sum)
			printf("%s %llu\n", cfi_walk_stop_name(r), (unsigned long long)sum);
	}
	printf("walks %llu\n", (unsigned long long)total);
	for (uint32_t s = 0; s < UNWIND_STAT_MAX; s++) {
		err = percpu_sum(bpf_map__fd(skel->maps.unwind_stats), s, &sum);
		if (err)
			return err;
		printf("stat %s %llu\n", cfi_walk_stat_name(s), (unsigned long long)sum);
	}
	st = calloc((size_t)ncpus, sizeof(*st));
	if (!st)
		return -ENOMEM;
	if (!bpf_map_lookup_elem(bpf_map__fd(skel->maps.unwind_scratch), &zero, st))
		for (int c = 0; c < ncpus; c++)
			if (st[c].nr)
				printf("last %d frames %u stop %s fp %u\n", c, st[c].nr,
				       cfi_walk_stop_name(st[c].stop), st[c].fp_frames);
	free(st);
	print_run_time("ns_per_walk", walker);
	if (fp)
		print_run_time("fp_ns_per_sample", skel->progs.fp_check);
	return 0;
}

#define MAX_THREADS 64

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fp", no_argument, NULL, 'f' },
		{ "no-tables", no_argument, NULL, 'n' },
		{ "bounded", no_argument, NULL, 'b' },
		{ 0 },
	};
	struct bpf_link *links[2 * MAX_THREADS] = { 0 };
	struct unwind_proc *proc = calloc(1, sizeof(*proc));
	struct unwind_check *skel = NULL;
	struct unwind_row *rows = NULL;
	int fp = 0, tables = 1, bounded = 0, nr_tids = 0, err = 0, stats_fd, opt;
	struct bpf_program *walker;
	pid_t tids[MAX_THREADS];
	size_t nr_rows = 0;
	uint32_t pid, seconds;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'f')
			fp = 1;
		else if (opt == 'n')
			tables = 0;
		else if (opt == 'b')
			bounded = 1;
		else
			argc = 0;
	}
	if (argc - optind != 2 || !proc) {
		fprintf(stderr, "usage: unwind-check [--fp] [--no-tables] [--bounded] PID SECONDS\n");
		return 2;
	}
	pid = (uint32_t)strtoul(argv[optind], NULL, 10);
	seconds = (uint32_t)strtoul(argv[optind + 1], NULL, 10);
	if (tables) {
		err = load_proc(pid, &rows, &nr_rows, proc);
		if (err || !nr_rows) {
			fprintf(stderr, "unwind-check: no tables for pid %u: %s\n", pid,
				strerror(err ? -err : ENOENT));
			return 1;
		}
	}
	nr_tids = list_threads(pid, tids, MAX_THREADS);
	if (nr_tids < 0) {
		fprintf(stderr, "unwind-check: threads of pid %u: %s\n", pid, strerror(-nr_tids));
		return 1;
	}
	skel = unwind_check__open();
	if (!skel)
		return 1;
	skel->rodata->target_tgid = pid;
	if (!bounded) {
		struct kfeatures kf;

		kfeatures_probe(&kf);
		bounded = !kf.bpf_loop;
	}
	walker = bounded ? skel->progs.unwind_check_bounded : skel->progs.unwind_check;
	bpf_program__set_autoload(bounded ? skel->progs.unwind_check : skel->progs.unwind_check_bounded,
				  false);
	bpf_map__set_max_entries(skel->maps.unwind_rows, nr_rows ? (uint32_t)nr_rows : 1);
	err = unwind_check__load(skel);
	if (err) {
		fprintf(stderr, "unwind-check: load: %s\n", strerror(-err));
		goto out;
	}
	for (uint32_t i = 0; i < nr_rows && !err; i++)
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.unwind_rows), &i, &rows[i], 0))
			err = -errno;
	if (!err && tables &&
	    bpf_map_update_elem(bpf_map__fd(skel->maps.unwind_procs), &pid, proc, 0))
		err = -errno;
	if (err) {
		fprintf(stderr, "unwind-check: filling the maps: %s\n", strerror(-err));
		goto out;
	}
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);	/* -1: no timing, nothing else lost */
	err = attach_threads(walker, tids, nr_tids, links);
	if (!err && fp)
		err = attach_threads(skel->progs.fp_check, tids, nr_tids, links + nr_tids);
	if (err) {
		fprintf(stderr, "unwind-check: sampling pid %u: %s\n", pid, strerror(-err));
	} else {
		sleep(seconds);
		for (int i = 0; i < 2 * nr_tids; i++) {
			bpf_link__destroy(links[i]);
			links[i] = NULL;
		}
		err = print_results(skel, walker, fp);
	}
	if (stats_fd >= 0)
		close(stats_fd);
out:
	for (int i = 0; i < 2 * MAX_THREADS; i++)
		bpf_link__destroy(links[i]);
	unwind_check__destroy(skel);
	free(rows);
	free(proc);
	return err ? 1 : 0;
}
