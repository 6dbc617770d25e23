// SPDX-License-Identifier: MIT
/*
 * test_record.c - the recorder's user-space pieces that need no BPF:
 * option parsing (record_args), CPU lists, time-sorted batches and the
 * held-then-exec'd command (launch).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/batch.h"
#include "recorder/cpulist.h"
#include "recorder/launch.h"
#include "tools/cli/record_args.h"

/* ---- record_args ---- */

static int parse(struct record_args *a, char *err, size_t len, ...)
{
	static char *argv[32];
	va_list ap;
	int argc = 0;
	char *s;

	argv[argc++] = "record";
	va_start(ap, len);
	while ((s = va_arg(ap, char *)))
		argv[argc++] = s;
	va_end(ap);
	argv[argc] = NULL;
	return record_args_parse(argc, argv, a, err, len);
}

Test(record_args, defaults_follow_perf_record)
{
	struct record_args a;
	char err[256];

	cr_assert_eq(parse(&a, err, sizeof(err), "-a", NULL), 0, "%s", err);
	cr_assert_eq(a.opts.freq, 4000);
	cr_assert_eq(a.opts.period, 0);
	cr_assert(a.opts.system_wide);
	cr_assert_not(a.opts.callgraph);
	cr_assert_null(a.opts.output_path);
	cr_assert_null(a.opts.event);
	cr_assert_null(a.opts.command);
	cr_assert_eq(a.duration, 0);
	cr_assert_not(a.opts.no_buildid_cache, "the build-id cache is on by default, as in perf");
	record_args_free(&a);
}

Test(record_args, every_option)
{
	struct record_args a;
	char err[256];

	cr_assert_eq(parse(&a, err, sizeof(err), "-F", "999", "-g", "-o", "out.data", "-e",
			   "cpu-clock", "-C", "0,2-3", "-q", "--duration", "2.5", "-m", "16M",
			   "-a", NULL), 0, "%s", err);
	cr_assert_eq(a.opts.freq, 999);
	cr_assert(a.opts.callgraph);
	cr_assert_str_eq(a.opts.output_path, "out.data");
	cr_assert_str_eq(a.opts.event, "cpu-clock");
	cr_assert_eq(a.opts.nr_cpus, 3);
	cr_assert_eq(a.opts.cpus[0], 0);
	cr_assert_eq(a.opts.cpus[1], 2);
	cr_assert_eq(a.opts.cpus[2], 3);
	cr_assert(a.quiet);
	cr_assert_float_eq(a.duration, 2.5, 1e-9);
	cr_assert_eq(a.opts.ring_buffer_bytes, 16u << 20);
	record_args_free(&a);

	cr_assert_eq(parse(&a, err, sizeof(err), "--freq=50", "--call-graph", "fp", "--pid",
			   "12,34", "--output=-", "-m", "1024", NULL), 0, "%s", err);
	cr_assert_eq(a.opts.freq, 50);
	cr_assert(a.opts.callgraph);
	cr_assert_eq(a.opts.nr_pids, 2);
	cr_assert_eq(a.opts.pids[0], 12);
	cr_assert_eq(a.opts.pids[1], 34);
	cr_assert_str_eq(a.opts.output_path, "-");
	cr_assert_eq(a.opts.ring_buffer_bytes, 1024u * 4096);
	record_args_free(&a);

	cr_assert_eq(parse(&a, err, sizeof(err), "-c", "1000000", "-t", "7", NULL), 0, "%s", err);
	cr_assert_eq(a.opts.period, 1000000);
	cr_assert_eq(a.opts.nr_tids, 1);
	cr_assert_eq(a.opts.tids[0], 7);
	record_args_free(&a);

	cr_assert_eq(parse(&a, err, sizeof(err), "-F", "max", "-a", NULL), 0, "%s", err);
	cr_assert_eq(a.opts.freq, UINT64_MAX);
	record_args_free(&a);

	cr_assert_eq(parse(&a, err, sizeof(err), "-N", "-a", NULL), 0, "%s", err);
	cr_assert(a.opts.no_buildid_cache);
	record_args_free(&a);
	cr_assert_eq(parse(&a, err, sizeof(err), "--no-buildid-cache", "-a", NULL), 0, "%s", err);
	cr_assert(a.opts.no_buildid_cache);
	record_args_free(&a);
}

Test(record_args, call_graph_modes)
{
	struct record_args a;
	char err[256];

	cr_assert_eq(parse(&a, err, sizeof(err), "-a", "--call-graph", "dwarf", NULL), 0, "%s", err);
	cr_assert_eq(a.opts.callgraph, BPFREC_CALLGRAPH_DWARF);
	cr_assert_eq(a.opts.stack_user_bytes, BPFREC_STACK_USER_DEFAULT);
	record_args_free(&a);

	cr_assert_eq(parse(&a, err, sizeof(err), "-a", "--call-graph=dwarf,65528", NULL), 0, "%s",
		     err);
	cr_assert_eq(a.opts.stack_user_bytes, 65528);
	record_args_free(&a);

	cr_assert_eq(parse(&a, err, sizeof(err), "-a", "--call-graph", "dwarf,16", NULL), 0, "%s",
		     err);
	cr_assert_eq(a.opts.stack_user_bytes, 16);
	record_args_free(&a);

	/* The last one wins, as in perf; fp carries no stack size. */
	cr_assert_eq(parse(&a, err, sizeof(err), "-a", "--call-graph", "dwarf", "--call-graph",
			   "fp", NULL), 0, "%s", err);
	cr_assert_eq(a.opts.callgraph, BPFREC_CALLGRAPH_FP);
	cr_assert_eq(a.opts.stack_user_bytes, 0);
	record_args_free(&a);

	/* -g is the in-kernel unwinder; cfi takes no size. */
	cr_assert_eq(parse(&a, err, sizeof(err), "-a", "-g", NULL), 0, "%s", err);
	cr_assert_eq(a.opts.callgraph, BPFREC_CALLGRAPH_CFI);
	cr_assert_eq(a.opts.unwind_table_bytes, 0);
	record_args_free(&a);
	cr_assert_eq(parse(&a, err, sizeof(err), "-a", "--call-graph=dwarf", "--call-graph", "cfi",
			   "--unwind-tables", "64M", NULL), 0, "%s", err);
	cr_assert_eq(a.opts.callgraph, BPFREC_CALLGRAPH_CFI);
	cr_assert_eq(a.opts.stack_user_bytes, 0);
	cr_assert_eq(a.opts.unwind_table_bytes, 64ull << 20);
	record_args_free(&a);

	/* Off-CPU with DWARF stacks is fine without a threshold. */
	cr_assert_eq(parse(&a, err, sizeof(err), "-a", "--off-cpu", "--call-graph", "dwarf",
			   NULL), 0, "%s", err);
	record_args_free(&a);
}

Test(record_args, command_starts_at_first_word_or_after_dashes)
{
	struct record_args a;
	char err[256];

	cr_assert_eq(parse(&a, err, sizeof(err), "-g", "--", "./prog", "-x", "--y", NULL), 0);
	cr_assert_not_null(a.opts.command);
	cr_assert_str_eq(a.opts.command[0], "./prog");
	cr_assert_str_eq(a.opts.command[1], "-x");
	cr_assert_str_eq(a.opts.command[2], "--y");
	cr_assert_null(a.opts.command[3]);
	cr_assert(a.opts.callgraph);
	record_args_free(&a);

	/* Options after the command belong to the command, as with perf record. */
	cr_assert_eq(parse(&a, err, sizeof(err), "sleep", "-g", NULL), 0);
	cr_assert_str_eq(a.opts.command[0], "sleep");
	cr_assert_str_eq(a.opts.command[1], "-g");
	cr_assert_not(a.opts.callgraph);
	record_args_free(&a);
}

Test(record_args, help)
{
	struct record_args a;
	char err[256];

	cr_assert_eq(parse(&a, err, sizeof(err), "--help", NULL), 0);
	cr_assert(a.help);
	record_args_free(&a);
}

/* Each bad command line fails with a message that names the culprit. */
Test(record_args, bad_input_names_the_problem)
{
	static const struct {
		const char *args[4];
		const char *needle;
	} cases[] = {
		{ { "--bogus" }, "unknown option '--bogus'" },
		{ { "-Z" }, "unknown option '-Z'" },
		{ { "-F" }, "'-F' needs a value" },
		{ { "-F", "0" }, "-F '0'" },
		{ { "-F", "12x" }, "-F '12x'" },
		{ { "-c", "-5" }, "-c '-5'" },
		{ { "-p", "12,,3" }, "-p '12,,3'" },
		{ { "-p", "abc" }, "-p 'abc'" },
		{ { "-p", "0" }, "-p '0'" },
		{ { "-t", "5," }, "-t '5,'" },
		{ { "-C", "3-1" }, "-C '3-1'" },
		{ { "-C", "x" }, "-C 'x'" },
		{ { "--call-graph", "dwarf,100" }, "a multiple of 8" },
		{ { "--call-graph", "dwarf,0" }, "--call-graph 'dwarf,0'" },
		{ { "--call-graph", "dwarf,65536" }, "--call-graph 'dwarf,65536'" },
		{ { "--call-graph", "dwarf," }, "--call-graph 'dwarf,'" },
		{ { "--call-graph", "dwarfx" }, "give cfi, fp, or dwarf" },
		{ { "--call-graph", "cfi,8" }, "--call-graph 'cfi,8'" },
		{ { "--unwind-tables", "1" }, "--unwind-tables '1': give a size from 4K" },
		{ { "--unwind-tables", "8G" }, "--unwind-tables '8G'" },
		{ { "--unwind-tables", "10s" }, "--unwind-tables '10s'" },
		{ { "--call-graph", "fp,8" }, "--call-graph 'fp,8'" },
		{ { "--call-graph", "lbr" }, "give cfi, fp, or dwarf" },
		{ { "--off-cpu", "--off-cpu-thresh", "10", "--call-graph=dwarf" },
		  "cannot sum intervals with --call-graph dwarf" },
		{ { "--duration", "0" }, "--duration '0'" },
		{ { "--duration", "soon" }, "--duration 'soon'" },
		{ { "-m", "1000" }, "-m '1000'" },
		{ { "-F", "10", "-c", "5" }, "-F and -c exclude each other" },
		{ { "--sched-thresh", "10" }, "--sched-thresh needs --sched" },
		{ { "--sched", "--sched-thresh", "1ms" }, "--sched-thresh '1ms': give microseconds" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[6] = { "record" };
		struct record_args a;
		char err[256];
		int argc = 1;

		for (int j = 0; j < 4 && cases[i].args[j]; j++)
			argv[argc++] = (char *)cases[i].args[j];
		cr_assert_eq(record_args_parse(argc, argv, &a, err, sizeof(err)), -EINVAL,
			     "case %zu (%s) was accepted", i, cases[i].args[0]);
		cr_assert(strstr(err, cases[i].needle), "case %zu: '%s' lacks '%s'", i, err,
			  cases[i].needle);
		record_args_free(&a);
	}
}

Test(record_args, sched_and_its_threshold)
{
	struct record_args a;
	char err[256];

	cr_assert_eq(parse(&a, err, sizeof(err), "--sched", NULL), 0, "%s", err);
	cr_assert(a.opts.sched);
	cr_assert_eq(a.opts.sched_thresh_ns, 0, "0: the library's default");
	record_args_free(&a);
	cr_assert_eq(parse(&a, err, sizeof(err), "--sched", "--sched-thresh", "250", NULL), 0, "%s",
		     err);
	cr_assert_eq(a.opts.sched_thresh_ns, 250000);
	record_args_free(&a);
	cr_assert_eq(parse(&a, err, sizeof(err), "--sched", "--sched-thresh", "0", "--off-cpu", NULL),
		     0, "%s", err);
	cr_assert_eq(a.opts.sched_thresh_ns, 1, "0 us: every wait is a sample");
	cr_assert(a.opts.off_cpu);
	record_args_free(&a);
}

/* ---- cpulist ---- */

Test(cpulist, parses_lists_and_ranges_sorted_and_unique)
{
	int *cpus;
	size_t nr;

	cr_assert_eq(cpulist_parse("3,0-1,1\n", &cpus, &nr), 0);
	cr_assert_eq(nr, 3);
	cr_assert_eq(cpus[0], 0);
	cr_assert_eq(cpus[1], 1);
	cr_assert_eq(cpus[2], 3);
	free(cpus);
	cr_assert_eq(cpulist_parse("7", &cpus, &nr), 0);
	cr_assert_eq(nr, 1);
	cr_assert_eq(cpus[0], 7);
	free(cpus);
}

Test(cpulist, rejects_malformed_lists)
{
	static const char *bad[] = { "", ",", "1,", "-1", "1-", "2-1", "a", "1;2", "0-99999" };
	int *cpus;
	size_t nr;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(cpulist_parse(bad[i], &cpus, &nr), -EINVAL, "'%s' accepted", bad[i]);
}

Test(cpulist, online_file)
{
	char path[] = "/tmp/bpfrec-cpulist.XXXXXX";
	int fd = mkstemp(path), *cpus;
	size_t nr;

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, "0-2,5\n", 6), 6);
	close(fd);
	cr_assert_eq(cpulist_online(path, &cpus, &nr), 0);
	cr_assert_eq(nr, 4);
	cr_assert_eq(cpus[3], 5);
	free(cpus);
	unlink(path);
	cr_assert_eq(cpulist_online(path, &cpus, &nr), -ENOENT);
	/* The real one parses on any machine. */
	cr_assert_eq(cpulist_online(NULL, &cpus, &nr), 0);
	cr_assert_geq(nr, 1);
	free(cpus);
}

/* ---- batch ---- */

/*
 * b holds strlen(first) records: record i begins with byte first[i] and is
 * len[i] bytes long.
 */
static void expect_records(struct batch *b, const char *first, const size_t *len)
{
	size_t n = strlen(first), got;

	cr_assert_eq(b->nr, n, "%zu records, want %zu", b->nr, n);
	for (size_t i = 0; i < n; i++) {
		char c = *(const char *)batch_get(b, i, &got);

		cr_assert_eq(c, first[i], "record %zu is '%c', want '%c'", i, c, first[i]);
		cr_assert_eq(got, len[i], "record %zu ('%c'): %zu bytes, want %zu", i, c, got, len[i]);
	}
}

Test(batch, sorts_by_time_and_keeps_arrival_order_on_ties)
{
	struct batch b = { 0 };
	static const uint64_t times[] = { 30, 10, 20, 10, 5 };

	for (size_t i = 0; i < 5; i++) {
		char *p = batch_add(&b, times[i], 3);

		cr_assert_not_null(p);
		p[0] = (char)('a' + i);
		p[1] = p[2] = 0;
	}
	batch_sort(&b);
	/* b and d both at 10: in the order they came */
	expect_records(&b, "ebdca", (const size_t[]){ 3, 3, 3, 3, 3 });
	cr_assert_eq(batch_bytes(&b), 5 * 8, "records are 8-byte aligned");
	batch_clear(&b);
	cr_assert_eq(b.nr, 0);
	cr_assert_eq(batch_bytes(&b), 0);
	batch_free(&b);
}

/* Records kept for the next round: sorted ahead of new ones, ties in arrival order, shortened as asked. */
Test(batch, keeps_a_sorted_tail_for_the_next_round)
{
	struct batch b = { 0 };
	char *p;

	for (int i = 0; i < 6; i++) {
		p = batch_add(&b, (uint64_t)(60 - 10 * i), 16);	/* 60, 50, ... 10 */
		cr_assert_not_null(p);
		memset(p, 'a' + i, 16);
	}
	batch_sort(&b);
	batch_set_len(&b, 4, 4);	/* time 50 ('b'), kept shortened */
	batch_set_len(&b, 5, 99);	/* never longer than it is */
	cr_assert_eq(batch_keep_from(&b, 3), 0);
	cr_assert_eq(b.nr, 3);
	p = batch_add(&b, 50, 16);	/* a tie with a kept one: after it */
	memset(p, 'x', 16);
	p = batch_add(&b, 1, 16);
	memset(p, 'y', 16);
	batch_sort(&b);
	/* 1, 40, 50 kept (shortened), 50 new, 60 */
	expect_records(&b, "ycbxa", (const size_t[]){ 16, 16, 4, 16, 16 });
	cr_assert_eq(batch_keep_from(&b, 5), 0);
	cr_assert_eq(b.nr, 0);
	cr_assert_eq(batch_bytes(&b), 0);
	batch_free(&b);
}

/* Kept records are not copied round after round: only when the forgotten room is most of the arena. */
Test(batch, reclaims_the_room_of_records_written)
{
	struct batch b = { 0 };
	size_t len;
	char *p;

	for (int round = 0; round < 50; round++) {
		for (int i = 0; i < 1000; i++) {
			p = batch_add(&b, (uint64_t)(round * 1000 + i + 1), 256);
			cr_assert_not_null(p);
			memset(p, (char)round, 256);
		}
		batch_sort(&b);
		/* Keep one record of this round (the last), write the rest. */
		cr_assert_eq(batch_keep_from(&b, b.nr - 1), 0);
		cr_assert_eq(b.nr, 1);
		cr_assert_eq(*(const char *)batch_get(&b, 0, &len), (char)round);
		cr_assert_lt(batch_bytes(&b), (size_t)4 << 20, "round %d: %zu bytes", round,
			     batch_bytes(&b));
	}
	batch_free(&b);
}

/* After a burst the arena and the index go back to what the rounds since use; kept records survive it. */
Test(batch, shrinks_after_a_burst_keeping_what_waits)
{
	struct batch b = { 0 };
	size_t len;
	uint64_t t = 1;

	for (int i = 0; i < 32768; i++)	/* 8 MiB in 32768 records */
		cr_assert_not_null(batch_add(&b, t++, 256));
	cr_assert_geq(b.cap, (size_t)8 << 20);
	batch_sort(&b);
	batch_clear(&b);
	for (int round = 0; round < 2 * BATCH_SHRINK_ROUNDS; round++) {
		for (int i = 0; i < 10; i++) {
			uint64_t *p = batch_add(&b, t, 100);

			cr_assert_not_null(p);
			p[0] = t++;
		}
		batch_sort(&b);
		/* The last record of each round waits for the next one. */
		cr_assert_eq(batch_keep_from(&b, b.nr - 1), 0);
		cr_assert_eq(b.nr, 1);
		cr_assert_eq(*(const uint64_t *)batch_get(&b, 0, &len), t - 1);
		cr_assert_eq(len, 100);
	}
	/* Room written behind a kept record is reclaimed in bulk: some of it is still there. */
	cr_assert_leq(b.cap, (size_t)256 << 10, "arena still %zu bytes", b.cap);
	cr_assert_leq(b.cap_ents, (size_t)1024, "index still %zu entries", b.cap_ents);
	batch_free(&b);
}

Test(batch, grows_and_keeps_contents)
{
	struct batch b = { 0 };
	size_t len;

	for (uint64_t i = 0; i < 20000; i++) {
		uint64_t *p = batch_add(&b, 20000 - i, 24);

		cr_assert_not_null(p);
		p[0] = i;
		p[2] = ~i;
	}
	batch_sort(&b);
	for (uint64_t i = 0; i < 20000; i++) {
		const uint64_t *p = batch_get(&b, i, &len);

		cr_assert_eq(p[0], 19999 - i);
		cr_assert_eq(p[2], ~(19999 - i));
		cr_assert(((uintptr_t)p & 7) == 0);
	}
	batch_free(&b);
}

/* ---- launch ---- */

Test(launch, resolve_follows_path_like_execvp)
{
	char path[4096];
	char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;

	setenv("PATH", "/nonexistent:/bin:/usr/bin", 1);
	cr_assert_eq(launch_resolve("sh", path, sizeof(path)), 0);
	cr_assert(!strcmp(path, "/bin/sh") || !strcmp(path, "/usr/bin/sh"), "%s", path);
	cr_assert_eq(launch_resolve("no-such-command-bpfrec", path, sizeof(path)), -ENOENT);
	cr_assert_eq(launch_resolve("/bin/sh", path, sizeof(path)), 0);
	cr_assert_eq(launch_resolve("/no/such/file", path, sizeof(path)), -ENOENT);
	cr_assert_eq(launch_resolve("/etc/passwd", path, sizeof(path)), -EACCES);
	cr_assert_eq(launch_resolve("/etc", path, sizeof(path)), -EACCES);
	cr_assert_eq(launch_resolve("/etc/passwd/x", path, sizeof(path)), -ENOENT);
	cr_assert_eq(launch_resolve("", path, sizeof(path)), -ENOENT);
	if (old) {
		setenv("PATH", old, 1);
		free(old);
	}
	cr_assert_eq(launch_errno_exit_code(ENOENT), 127);
	cr_assert_eq(launch_errno_exit_code(EACCES), 126);
}

Test(launch, child_waits_for_release_then_execs)
{
	char marker[] = "/tmp/bpfrec-launch.XXXXXX";
	char script[256];
	struct launch l;
	int fd = mkstemp(marker);

	cr_assert(fd >= 0);
	close(fd);
	unlink(marker);
	snprintf(script, sizeof(script), "touch %s; exit 7", marker);
	char *argv[] = { "sh", "-c", script, NULL };

	cr_assert_eq(launch_fork(&l, "/bin/sh", argv, false), 0);
	cr_assert_gt(l.pid, 0);
	/* Held: it has not exec'd, so the marker cannot exist yet. */
	usleep(50000);
	cr_assert_eq(launch_poll(&l), 0);
	cr_assert_neq(access(marker, F_OK), 0, "the child ran before it was released");
	cr_assert_eq(launch_release(&l), 0);
	launch_terminate(&l);	/* already exiting; reaps it */
	cr_assert(l.reaped);
	cr_assert(launch_exit_code(&l) == 7 || launch_exit_code(&l) == 128 + SIGTERM,
		  "exit code %d", launch_exit_code(&l));
	unlink(marker);
}

Test(launch, exit_code_and_signals)
{
	char *ok[] = { "sh", "-c", "exit 3", NULL };
	char *killed[] = { "sh", "-c", "kill -9 $$", NULL };
	struct launch l;

	cr_assert_eq(launch_fork(&l, "/bin/sh", ok, false), 0);
	cr_assert_eq(launch_release(&l), 0);
	while (!launch_poll(&l))
		usleep(1000);
	cr_assert_eq(launch_exit_code(&l), 3);

	cr_assert_eq(launch_fork(&l, "/bin/sh", killed, false), 0);
	cr_assert_eq(launch_release(&l), 0);
	while (!launch_poll(&l))
		usleep(1000);
	cr_assert_eq(launch_exit_code(&l), 128 + SIGKILL);
}

Test(launch, failed_exec_is_reported_and_reaped)
{
	char *argv[] = { "nope", NULL };
	struct launch l;

	/* Not executable: the exec fails in the child and the parent hears why. */
	cr_assert_eq(launch_fork(&l, "/etc/passwd", argv, false), 0);
	cr_assert_eq(launch_release(&l), -EACCES);
	cr_assert(l.reaped);
	cr_assert_eq(launch_exit_code(&l), 126);
}

Test(launch, abandoned_child_never_runs)
{
	char *argv[] = { "sh", "-c", "exit 0", NULL };
	struct launch l;

	cr_assert_eq(launch_fork(&l, "/bin/sh", argv, false), 0);
	launch_terminate(&l);
	cr_assert(l.reaped);
	cr_assert_eq(launch_exit_code(&l), 127, "the child should exit without exec");
}
