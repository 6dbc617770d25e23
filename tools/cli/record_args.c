// SPDX-License-Identifier: MIT
/* record_args.c - `bpfrec record` options (contract in record_args.h). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli/record_args.h"
#include "tools/cli/usage.h"

enum {
	OPT_CALL_GRAPH = 0x100,
	OPT_DURATION,
	OPT_SWITCH_OUTPUT,
	OPT_SWITCH_MAX_FILES,
	OPT_OFF_CPU,
	OPT_OFF_CPU_THRESH,
	OPT_UNWIND_TABLES,
	OPT_ALLOC,
	/* --sched */
	OPT_SCHED,
	OPT_SCHED_THRESH,
	OPT_NO_PYTHON,
};

/* The zstd levels -z takes, as in perf; include the writer's header for no more. */
#define COMPRESSION_LEVEL_DEFAULT	1
#define COMPRESSION_LEVEL_MAX		22

static const struct option long_opts[] = {
	{ "freq", required_argument, NULL, 'F' },
	{ "count", required_argument, NULL, 'c' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "cpu", required_argument, NULL, 'C' },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "output", required_argument, NULL, 'o' },
	{ "event", required_argument, NULL, 'e' },
	{ "mmap-pages", required_argument, NULL, 'm' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "switch-output", optional_argument, NULL, OPT_SWITCH_OUTPUT },
	{ "switch-max-files", required_argument, NULL, OPT_SWITCH_MAX_FILES },
	{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
	{ "off-cpu-thresh", required_argument, NULL, OPT_OFF_CPU_THRESH },
	{ "unwind-tables", required_argument, NULL, OPT_UNWIND_TABLES },
	{ "alloc", optional_argument, NULL, OPT_ALLOC },
	{ "compression-level", optional_argument, NULL, 'z' },
	{ "no-buildid-cache", no_argument, NULL, 'N' },
	{ "sched", no_argument, NULL, OPT_SCHED },
	{ "sched-thresh", required_argument, NULL, OPT_SCHED_THRESH },
	{ "no-python", no_argument, NULL, OPT_NO_PYTHON },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

void record_usage(FILE *f)
{
	fputs(
"usage: bpfrec record [options] [--] [command [args...]]\n"
"\n"
"Sample CPUs with BPF and write perf.data for perf report, perf script,\n"
"hotspot and bpfrec pprof. Needs root (or CAP_BPF and CAP_PERFMON).\n"
"\n"
"What to record (one of them):\n"
"  command [args]         launch command and record it and its children until it exits\n"
"  -p, --pid PID[,PID]    record running processes (and their children)\n"
"  -t, --tid TID[,TID]    record running threads (and their children)\n"
"  -a, --all-cpus         record everything: every task, kernel threads and idle\n"
"                         (with a command: until it exits)\n"
"\n"
"How:\n"
"  -F, --freq HZ          samples per second per CPU (default 4000, or 'max':\n"
"                         kernel.perf_event_max_sample_rate, which also caps it)\n"
"  -c, --count N          sample every N events instead (ns for cpu-clock)\n"
"  -e, --event NAME       cpu-clock (default); cycles, instructions, cache-misses...\n"
"                         need a hardware PMU\n"
"  -g                     record call graphs (as --call-graph cfi)\n"
"      --call-graph MODE  how to record call graphs:\n"
"                         cfi (-g): BPF walks the user stack with unwind tables\n"
"                           built from each file's .eh_frame, both stacks in the\n"
"                           callchain: whole stacks without frame pointers, at\n"
"                           fp's size on disk (8 bytes a frame); 1-4 us of BPF a\n"
"                           sample, as fp; tables built once per file (50-150 ms\n"
"                           for big ones) and kept in --unwind-tables of memory\n"
"                         fp: walk frame pointers in BPF, both stacks in the\n"
"                           callchain (~8 bytes a frame, about 1 KiB a sample,\n"
"                           1-3 us of BPF; code built without frame pointers,\n"
"                           such as most of Debian's libraries, loses callers)\n"
"                         dwarf[,SIZE]: kernel stack in the callchain, plus the\n"
"                           user registers and SIZE bytes of user stack (default\n"
"                           8192, at most 65528, a multiple of 8) that perf\n"
"                           report, perf script and hotspot unwind with the\n"
"                           binaries' CFI: whole stacks without frame pointers,\n"
"                           at SIZE + ~250 bytes a sample on disk and in the ring\n"
"                           buffer (~34 MB/s per busy CPU at 4000 Hz), and a copy\n"
"                           of SIZE bytes in BPF per sample (~0.2 us at 8 KiB)\n"
"      --unwind-tables SIZE  memory for cfi's unwind tables, allocated up\n"
"                         front (default 32M; K/M/G suffixes): files that do not\n"
"                         fit are walked by frame pointers, counted at the end\n"
"  -C, --cpu LIST         only these CPUs, e.g. 0,2-3 (default: every online CPU)\n"
"  -m, --mmap-pages N     ring buffer size in pages (power of two), or with a\n"
"                         K/M/G suffix in bytes (default: 2 MiB per CPU, >= 8 MiB;\n"
"                         with dwarf 2 MiB more per CPU per 2 KiB of SIZE)\n"
"      --duration SEC     stop after SEC seconds (decimals allowed)\n"
"      --off-cpu          also record where threads wait: a second event,\n"
"                         offcpu-time, one sample per blocked interval (period\n"
"                         = ns off CPU, call chain at switch-out; user stacks\n"
"                         walked as cfi unless --call-graph fp or dwarf)\n"
"      --off-cpu-thresh USEC  sum blocked intervals shorter than USEC per thread\n"
"                         and stack, written at the end (default 0: none)\n"
"      --alloc[=BYTES]    also record allocations: uprobes on malloc, calloc,\n"
"                         realloc, free, memalign, anonymous mmap (glibc, jemalloc,\n"
"                         tcmalloc); one sample per BYTES allocated on average\n"
"                         (512K by default, 1 = every allocation), as the events\n"
"                         alloc (bytes allocated) and inuse (still held at the end)\n"
"      --sched            also record scheduler metrics per thread (on-CPU time,\n"
"                         run-queue latency, switch-outs by reason; see bpfrec\n"
"                         sched) and a third event, sched-delay, one sample per\n"
"                         wait for a CPU (period = ns runnable, call chain where\n"
"                         it was preempted or fell asleep)\n"
"      --sched-thresh USEC  sum waits shorter than USEC per thread and stack,\n"
"                         written at the end (default 1000; 0: every wait)\n"
"\n"
"Output:\n"
"  -o, --output FILE      write FILE (default perf.data; an existing one becomes\n"
"                         FILE.old); '-' streams pipe-mode perf.data to stdout\n"
"                         (a launched command's stdout then goes to stderr)\n"
"      --switch-output[=WHEN]  finish the file and start another as perf does:\n"
"                         FILE.YYYYmmddHHMMSScc; WHEN is a size (100M, 2G), an\n"
"                         age (30s, 5m, 1h) or 'signal' (default: on SIGUSR2)\n"
"      --switch-max-files N  keep only the newest N of those files\n"
"  -z, --compression-level[=N]  compress the records with zstd level N (1-22,\n"
"                         default 1) as perf record -z does: files several\n"
"                         times smaller, read by perf, bpfrec pprof and dump\n"
"  -N, --no-buildid-cache\n"
"                         do not copy the files with samples into the build-id\n"
"                         cache ($HOME/.debug, as perf): without the copies,\n"
"                         binaries that are gone (containers, upgrades) show\n"
"                         no names\n"
"      --no-python        with -g, no Python functions in the stacks of processes\n"
"                         running CPython 3.8-3.13 (there by default)\n"
"  -q, --quiet            no summary line, no warnings, no live status\n"
"  -v, --verbose          show libbpf's messages (verifier log on load errors) and\n"
"                         notes on what privileges left out\n"
"                         and the samples seen, written and lost at the end\n"
"  -h, --help             this text\n"
"\n"
"Recording stops when the command exits, on SIGINT, SIGTERM or SIGHUP, or\n"
"after --duration; the file is complete in every case. bpfrec exits with the\n"
"command's exit code (128+N when signal N killed it), 127 when the command\n"
"was not found, 126 when it could not be executed, 1 on other errors, 2 on\n"
"bad usage. See Documentation/bpfrec-record.md; its KERNELS table gives the\n"
"oldest Linux each option records on (5.10 for sampling with -g, fp or none).\n", f);
}

/* The message into the caller's err, and -EINVAL. */
#define bad(err, errlen, ...) cli_bad_msg(err, errlen, __VA_ARGS__)

static int parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "1234,5678" into a malloc'ed array of positive ids. */
static int parse_ids(const char *s, pid_t **out, size_t *nr)
{
	size_t n = 1, i = 0;
	pid_t *ids;

	for (const char *p = s; *p; p++)
		n += *p == ',';
	ids = calloc(n, sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	while (*s) {
		char *end;
		long v;

		errno = 0;
		v = strtol(s, &end, 10);
		if (errno || end == s || v <= 0 || v > INT_MAX || (*end && *end != ',') ||
		    (*end == ',' && !end[1])) {
			free(ids);
			return -EINVAL;
		}
		ids[i++] = (pid_t)v;
		s = *end ? end + 1 : end;
	}
	if (!i) {
		free(ids);
		return -EINVAL;
	}
	*out = ids;
	*nr = i;
	return 0;
}

/* Pages (a power of two) or bytes with a K/M/G suffix, as perf -m takes them. */
static int parse_ring_size(const char *s, size_t *bytes)
{
	unsigned long long v;
	char *end;
	int shift = -1;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (!*end)
		shift = 12;	/* pages */
	else if (!strcmp(end, "K") || !strcmp(end, "k"))
		shift = 10;
	else if (!strcmp(end, "M") || !strcmp(end, "m"))
		shift = 20;
	else if (!strcmp(end, "G") || !strcmp(end, "g"))
		shift = 30;
	if (shift < 0 || !v || v > (1ull << 30) >> shift || (v & (v - 1)))
		return -EINVAL;
	*bytes = (size_t)(v << shift);
	return 0;
}

/*
 * "cfi", "fp", "dwarf" or "dwarf,SIZE" (bytes of user stack, a multiple of 8 up to
 * 65528, as perf record takes it). Modes are looked up by name so that a new
 * one is one more row.
 */
static int parse_call_graph(const char *arg, struct bpfrec_record_opts *o)
{
	static const struct {
		const char *name;
		enum bpfrec_callgraph mode;
		bool takes_size;
	} modes[] = {
		{ "cfi", BPFREC_CALLGRAPH_CFI, false },
		{ "fp", BPFREC_CALLGRAPH_FP, false },
		{ "dwarf", BPFREC_CALLGRAPH_DWARF, true },
	};
	const char *comma = strchr(arg, ',');
	size_t len = comma ? (size_t)(comma - arg) : strlen(arg);

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		uint64_t size = BPFREC_STACK_USER_DEFAULT;

		if (strlen(modes[i].name) != len || strncmp(arg, modes[i].name, len))
			continue;
		if (comma && (!modes[i].takes_size || parse_u64(comma + 1, &size) || !size ||
			      size % 8 || size > BPFREC_STACK_USER_MAX))
			return -EINVAL;
		o->callgraph = modes[i].mode;
		o->stack_user_bytes = modes[i].takes_size ? (uint32_t)size : 0;
		return 0;
	}
	return -EINVAL;
}

int record_args_parse(int argc, char **argv, struct record_args *a, char *err, size_t errlen)
{
	bool freq_given = false, thresh_given = false, sched_thresh_given = false;
	size_t nr;
	int c;

	memset(a, 0, sizeof(*a));
	a->opts.sz = sizeof(a->opts);
	a->opts.freq = RECORD_DEFAULT_FREQ;
	a->opts.argc = argc;
	a->opts.argv = (const char *const *)argv;
	err[0] = '\0';
	optind = 1;
	opterr = 0;
	/* '+': the first non-option word starts the command. */
	while ((c = getopt_long(argc, argv, "+:F:c:ap:t:C:go:e:m:Nqvz::h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'F':
			freq_given = true;
			if (!strcmp(optarg, "max")) {
				a->opts.freq = UINT64_MAX;	/* capped to the kernel's maximum */
			} else if (parse_u64(optarg, &a->opts.freq) || !a->opts.freq) {
				return bad(err, errlen, "-F '%s': give a frequency in Hz (>= 1) or 'max'",
					   optarg);
			}
			break;
		case 'c':
			if (parse_u64(optarg, &a->opts.period) || !a->opts.period)
				return bad(err, errlen, "-c '%s': give a sample period (>= 1)", optarg);
			break;
		case 'a':
			a->opts.system_wide = true;
			break;
		case 'p':
			free(a->pids);
			a->pids = NULL;
			if (parse_ids(optarg, &a->pids, &a->opts.nr_pids))
				return bad(err, errlen, "-p '%s': give process ids like 1234,5678", optarg);
			a->opts.pids = a->pids;
			break;
		case 't':
			free(a->tids);
			a->tids = NULL;
			if (parse_ids(optarg, &a->tids, &a->opts.nr_tids))
				return bad(err, errlen, "-t '%s': give thread ids like 1234,5678", optarg);
			a->opts.tids = a->tids;
			break;
		case 'C':
			free(a->cpus);
			a->cpus = NULL;
			if (bpfrec_cpulist_parse(optarg, &a->cpus, &nr))
				return bad(err, errlen, "-C '%s': give CPUs like 0,2-3", optarg);
			a->opts.cpus = a->cpus;
			a->opts.nr_cpus = nr;
			break;
		case 'g':
			a->opts.callgraph = BPFREC_CALLGRAPH_CFI;
			a->opts.stack_user_bytes = 0;
			break;
		case OPT_CALL_GRAPH:
			if (parse_call_graph(optarg, &a->opts))
				return bad(err, errlen,
					   "--call-graph '%s': give cfi, fp, or dwarf[,SIZE] with SIZE a "
					   "multiple of 8 from 8 to %u bytes (default %u)",
					   optarg, BPFREC_STACK_USER_MAX, BPFREC_STACK_USER_DEFAULT);
			break;
		case OPT_UNWIND_TABLES: {
			uint64_t size;

			if (bpfrec_size_parse(optarg, &size) || size < BPFREC_UNWIND_TABLE_MIN_BYTES ||
			    size > BPFREC_UNWIND_TABLE_MAX_BYTES)
				return bad(err, errlen,
					   "--unwind-tables '%s': give a size from 4K to 4G, e.g. 64M",
					   optarg);
			a->opts.unwind_table_bytes = size;
			break;
		}
		case 'o':
			a->opts.output_path = optarg;
			break;
		case 'e':
			a->opts.event = optarg;
			break;
		case 'm':
			if (parse_ring_size(optarg, &a->opts.ring_buffer_bytes))
				return bad(err, errlen,
					   "-m '%s': give pages as a power of two (e.g. 1024) or a size like 16M",
					   optarg);
			break;
		case 'N':
			a->opts.no_buildid_cache = true;
			break;
		case OPT_NO_PYTHON:
			a->opts.no_python = true;
			break;
		case 'q':
			a->quiet = true;
			break;
		case 'v':
			a->verbose = true;
			break;
		case OPT_DURATION: {
			char *end;

			errno = 0;
			a->duration = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(a->duration > 0) ||
			    !isfinite(a->duration) || a->duration > 1e9)
				return bad(err, errlen, "--duration '%s': give seconds, e.g. 5 or 0.5",
					   optarg);
			break;
		}
		case OPT_SWITCH_OUTPUT:
			if (bpfrec_switch_output_parse(optarg, &a->opts.switch_output,
						       &a->opts.switch_bytes, &a->opts.switch_ns))
				return bad(err, errlen,
					   "--switch-output='%s': give a size (100M), an age (30s, 5m) or 'signal'",
					   optarg);
			break;
		case OPT_SWITCH_MAX_FILES: {
			uint64_t n;

			if (parse_u64(optarg, &n) || !n || n > 100000)
				return bad(err, errlen, "--switch-max-files '%s': give a count of files (>= 1)",
					   optarg);
			a->opts.switch_max_files = (unsigned int)n;
			break;
		}
		case OPT_OFF_CPU:
			a->opts.off_cpu = true;
			break;
		case OPT_ALLOC: {
			uint64_t bytes = 512 * 1024;

			/* A size as --unwind-tables takes it (512K), or plain bytes (1). */
			if (optarg && parse_u64(optarg, &bytes) && bpfrec_size_parse(optarg, &bytes))
				bytes = 0;
			if (!bytes || bytes > (1ull << 40))
				return bad(err, errlen, "--alloc='%s': give the mean bytes between "
					   "samples, from 1 to 1024G, e.g. 512K or 1", optarg);
			a->opts.alloc_interval = bytes;
			break;
		}
		case OPT_OFF_CPU_THRESH: {
			uint64_t us;

			if (parse_u64(optarg, &us) || us > UINT64_MAX / 1000)
				return bad(err, errlen,
					   "--off-cpu-thresh '%s': give microseconds, e.g. 1000", optarg);
			a->opts.off_cpu_thresh_ns = us * 1000;
			thresh_given = true;
			break;
		}
		case OPT_SCHED:
			a->opts.sched = true;
			break;
		case OPT_SCHED_THRESH: {
			uint64_t us;

			if (parse_u64(optarg, &us) || us > UINT64_MAX / 1000)
				return bad(err, errlen,
					   "--sched-thresh '%s': give microseconds, e.g. 1000", optarg);
			/* 0 is the library's default: every wait is 1 ns and up. */
			a->opts.sched_thresh_ns = us ? us * 1000 : 1;
			sched_thresh_given = true;
			break;
		}
		case 'z': {
			uint64_t level = COMPRESSION_LEVEL_DEFAULT;

			if (optarg && (parse_u64(optarg, &level) || level < 1 ||
				       level > COMPRESSION_LEVEL_MAX))
				return bad(err, errlen, "--compression-level '%s': give a zstd level from 1 to "
					   "%d (-z alone: %d)", optarg, COMPRESSION_LEVEL_MAX,
					   COMPRESSION_LEVEL_DEFAULT);
			a->opts.compression_level = (int)level;
			break;
		}
		case 'h':
			a->help = true;
			return 0;
		case ':':
			return bad(err, errlen, "option '%s' needs a value; see 'bpfrec record --help'",
				   argv[optind - 1]);
		default:
			if (optopt && optopt < 0x100)
				return bad(err, errlen, "unknown option '-%c'; see 'bpfrec record --help'",
					   optopt);
			return bad(err, errlen, "unknown option '%s'; see 'bpfrec record --help'",
				   argv[optind - 1]);
		}
	}
	if (freq_given && a->opts.period)
		return bad(err, errlen, "-F and -c exclude each other: give one of them");
	if (thresh_given && !a->opts.off_cpu)
		return bad(err, errlen, "--off-cpu-thresh needs --off-cpu: add --off-cpu");
	/* A sum keeps one stack for many intervals: a user stack copy cannot be summed. */
	if (thresh_given && a->opts.off_cpu_thresh_ns &&
	    a->opts.callgraph == BPFREC_CALLGRAPH_DWARF)
		return bad(err, errlen, "--off-cpu-thresh cannot sum intervals with --call-graph "
			   "dwarf: drop --off-cpu-thresh or use --call-graph fp");
	if (sched_thresh_given && !a->opts.sched)
		return bad(err, errlen, "--sched-thresh needs --sched: add --sched");
	if (optind < argc)
		a->opts.command = &argv[optind];
	return 0;
}

void record_args_free(struct record_args *a)
{
	free(a->pids);
	free(a->tids);
	free(a->cpus);
	memset(a, 0, sizeof(*a));
	a->opts.sz = sizeof(a->opts);
}
