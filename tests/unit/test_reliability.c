// SPDX-License-Identifier: MIT
/*
 * test_reliability.c - the recorder's reliability pieces that need no BPF:
 * --switch-output parsing, naming and pruning (rotate), the pid bitmap
 * behind "pids seen" (pidset), the live status line (status), and the
 * options that reach them (record_args).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "recorder/pidset.h"
#include "tools/cli/record_args.h"
#include "recorder/rotate.h"
#include "tools/cli/status.h"

/* ---- rotate_parse ---- */

Test(rotate, parses_sizes_times_and_signal_like_perf)
{
	struct rotate_spec r;

	cr_assert_eq(rotate_parse("100M", &r), 0);
	cr_assert_eq(r.mode, ROTATE_SIZE);
	cr_assert_eq(r.bytes, 100ull << 20);
	cr_assert_eq(rotate_parse("4096B", &r), 0);
	cr_assert_eq(r.bytes, 4096);
	cr_assert_eq(rotate_parse("2G", &r), 0);
	cr_assert_eq(r.bytes, 2ull << 30);
	cr_assert_eq(rotate_parse("30s", &r), 0);
	cr_assert_eq(r.mode, ROTATE_TIME);
	cr_assert_eq(r.ns, 30ull * 1000000000);
	/* Lower-case m is minutes, as in perf; upper-case M megabytes. */
	cr_assert_eq(rotate_parse("5m", &r), 0);
	cr_assert_eq(r.mode, ROTATE_TIME);
	cr_assert_eq(r.ns, 300ull * 1000000000);
	cr_assert_eq(rotate_parse("1d", &r), 0);
	cr_assert_eq(r.ns, 86400ull * 1000000000);
	cr_assert_eq(rotate_parse("signal", &r), 0);
	cr_assert_eq(r.mode, ROTATE_SIGNAL);
	cr_assert_eq(rotate_parse(NULL, &r), 0);
	cr_assert_eq(r.mode, ROTATE_SIGNAL);
}

Test(rotate, rejects_malformed_values)
{
	static const char *bad[] = { "", "0M", "M", "10", "10x", "10MB", "-1M", "1.5M",
				     "99999999999999999999G", "18446744073709551615G" };
	struct rotate_spec r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(rotate_parse(bad[i], &r), -EINVAL, "accepted '%s'", bad[i]);
}

/* ---- rotate_stamp, rotator_retire ---- */

static uint64_t local_ns(int y, int mo, int d, int h, int mi, int s, long ns)
{
	struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
			 .tm_min = mi, .tm_sec = s, .tm_isdst = -1 };

	return (uint64_t)mktime(&tm) * 1000000000ull + (uint64_t)ns;
}

Test(rotate, stamp_is_perfs_yyyymmddhhmmsscc)
{
	cr_assert_eq(rotate_stamp(local_ns(2026, 11, 22, 0, 12, 34, 567890123)),
		     2026112200123456ull);
	cr_assert_eq(rotate_stamp(local_ns(1999, 1, 2, 3, 4, 5, 0)), 1999010203040500ull);
}

static char dir[] = "/tmp/bpfrec-rotate.XXXXXX";

static void make_dir(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[512];

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static void touch(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

static int count_files(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

TestSuite(rotator, .init = make_dir, .fini = remove_dir);

Test(rotator, names_grow_and_never_replace)
{
	struct rotator r;
	char base[300], name[400], name2[400], planted[400], buf[16] = { 0 };
	uint64_t t = local_ns(2026, 11, 22, 0, 12, 34, 560000000);
	FILE *f;

	snprintf(base, sizeof(base), "%s/perf.data", dir);
	cr_assert_eq(rotator_init(&r, base, 0), 0);
	touch(base, "one");
	cr_assert_eq(rotator_retire(&r, t, name, sizeof(name)), 0);
	cr_assert_str_eq(strrchr(name, '.'), ".2026112200123456");
	cr_assert_eq(access(base, F_OK), -1, "the output path is still there");

	/* Same centisecond: the next number. A name already taken: skipped. */
	snprintf(planted, sizeof(planted), "%s/perf.data.2026112200123458", dir);
	touch(planted, "mine");
	touch(base, "two");
	cr_assert_eq(rotator_retire(&r, t, name2, sizeof(name2)), 0);
	cr_assert_str_eq(strrchr(name2, '.'), ".2026112200123457");
	touch(base, "three");
	cr_assert_eq(rotator_retire(&r, t, name2, sizeof(name2)), 0);
	cr_assert_str_eq(strrchr(name2, '.'), ".2026112200123459");
	f = fopen(planted, "r");
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	cr_assert_str_eq(buf, "mine", "a planted file was replaced");
	cr_assert_eq(r.nr_files, 3);

	/* Nothing to rename: an error, and nothing counted. */
	cr_assert_eq(rotator_retire(&r, t, name2, sizeof(name2)), -ENOENT);
	cr_assert_eq(r.nr_files, 3);
	rotator_free(&r);
}

Test(rotator, keeps_the_newest_max_files)
{
	struct rotator r;
	char base[300], names[5][400];
	uint64_t t = local_ns(2026, 1, 1, 10, 0, 0, 0);

	snprintf(base, sizeof(base), "%s/x.data", dir);
	touch(base, "planted-before");
	cr_assert_eq(rename(base, (snprintf(names[0], sizeof(names[0]), "%s.old", base), names[0])), 0);
	cr_assert_eq(rotator_init(&r, base, 2), 0);
	for (int i = 0; i < 5; i++) {
		touch(base, "data");
		cr_assert_eq(rotator_retire(&r, t + (uint64_t)i * 1000000000ull, names[i],
					    sizeof(names[i])), 0);
	}
	/* The two newest, plus the unrelated x.data.old that is not ours to delete. */
	cr_assert_eq(count_files(), 3);
	cr_assert_eq(access(names[4], F_OK), 0);
	cr_assert_eq(access(names[3], F_OK), 0);
	cr_assert_eq(access(names[2], F_OK), -1);
	cr_assert_eq(access(names[0], F_OK), -1);
	rotator_free(&r);
}

/* ---- pidset ---- */

Test(pidset, counts_distinct_pids_in_fixed_memory)
{
	struct pidset p;

	cr_assert_eq(pidset_init(&p, 1000), 0);
	pidset_add(&p, 0);
	pidset_add(&p, 1);
	pidset_add(&p, 1);
	pidset_add(&p, 999);
	pidset_add(&p, 1000);	/* beyond the limit: ignored, not a crash */
	pidset_add(&p, 64);
	pidset_add(&p, 64);
	cr_assert_eq(p.count, 4);
	pidset_free(&p);
	cr_assert_eq(pidset_init(&p, 0), 0);
	pidset_add(&p, 4194303);
	cr_assert_eq(p.count, 1);
	pidset_free(&p);
}

/* ---- status line ---- */

Test(status, formats_every_field)
{
	struct bpfrec_record_stats st = { .samples = 1000, .lost = 7, .bytes = 3 << 20, .nr_processes = 42 };
	char buf[256];

	status_line_format(buf, sizeof(buf), &st, 12.04, 7998.4);
	cr_assert_str_eq(buf, "bpfrec record: 12.0s  7998 samples/s  7 lost  3.0 MB  42 pids");
}

Test(status, bpf_program_time_or_why_it_is_missing)
{
	struct bpfrec_record_stats st = { .bpf_counted = true, .bpf_run_ns = 12345678,
					  .bpf_runs = 4000 };
	char buf[256];

	status_bpf_format(buf, sizeof(buf), &st);
	cr_assert_str_eq(buf, "bpfrec record: BPF programs ran 12.346 ms in 4000 runs (3.09 us a run)");
	st.bpf_runs = 0;
	st.bpf_run_ns = 0;
	status_bpf_format(buf, sizeof(buf), &st);
	cr_assert_str_eq(buf, "bpfrec record: BPF programs ran 0.000 ms in 0 runs (0.00 us a run)");
	st.bpf_counted = false;
	status_bpf_format(buf, sizeof(buf), &st);
	cr_assert(strstr(buf, "not counted") && strstr(buf, "kernel.bpf_stats_enabled=1"), "%s", buf);
}

Test(status, redraws_in_place_at_most_every_interval_and_erases)
{
	struct bpfrec_record_stats st = { .samples = 100, .nr_processes = 1 };
	struct status_line l;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	uint64_t t0 = 5000000000ull, ms = 1000000;

	cr_assert_not_null(f);
	status_line_init(&l, f, t0);
	status_line_update(&l, &st, t0 + 10 * ms);	/* too soon: no redraw */
	fflush(f);
	cr_assert_eq(len, 0);
	st.samples = 4100;
	status_line_update(&l, &st, t0 + STATUS_INTERVAL_MS * ms);
	st.samples = 6100;
	status_line_update(&l, &st, t0 + 2 * STATUS_INTERVAL_MS * ms);
	status_line_clear(&l);
	status_line_clear(&l);	/* nothing shown: nothing to erase */
	fclose(f);
	cr_assert_str_eq(text,
			 "\rbpfrec record: 0.5s  8200 samples/s  0 lost  0.0 MB  1 pids\033[K"
			 "\rbpfrec record: 1.0s  4000 samples/s  0 lost  0.0 MB  1 pids\033[K"
			 "\r\033[K");
	free(text);
}

Test(status, disabled_prints_nothing)
{
	struct bpfrec_record_stats st = { .samples = 100 };
	struct status_line l;

	status_line_init(&l, NULL, 0);
	status_line_update(&l, &st, 10000000000ull);
	status_line_clear(&l);
	cr_assert_not(l.shown);
}

/* ---- options ---- */

static int parse(struct record_args *a, char *err, size_t len, char **argv, int argc)
{
	return record_args_parse(argc, argv, a, err, len);
}

Test(record_args, switch_output_options)
{
	char *ok[] = { "record", "--switch-output=100M", "--switch-max-files", "3", "-a" };
	char *sig[] = { "record", "--switch-output", "-a" };
	char *bad[] = { "record", "--switch-output=100", "-a" };
	char *badmax[] = { "record", "--switch-max-files", "0", "-a" };
	struct record_args a;
	char err[256];

	cr_assert_eq(parse(&a, err, sizeof(err), ok, 5), 0, "%s", err);
	cr_assert_eq(a.opts.switch_output, BPFREC_SWITCH_SIZE);
	cr_assert_eq(a.opts.switch_bytes, 100ull << 20);
	cr_assert_eq(a.opts.switch_max_files, 3);
	record_args_free(&a);
	cr_assert_eq(parse(&a, err, sizeof(err), sig, 3), 0, "%s", err);
	cr_assert_eq(a.opts.switch_output, BPFREC_SWITCH_MANUAL);
	record_args_free(&a);
	cr_assert_eq(parse(&a, err, sizeof(err), bad, 3), -EINVAL);
	cr_assert(strstr(err, "--switch-output='100'"), "%s", err);
	record_args_free(&a);
	cr_assert_eq(parse(&a, err, sizeof(err), badmax, 4), -EINVAL);
	cr_assert(strstr(err, "--switch-max-files '0'"), "%s", err);
	record_args_free(&a);
}
