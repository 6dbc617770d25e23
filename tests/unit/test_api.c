// SPDX-License-Identifier: MIT
/*
 * test_api.c - the public API's contract where it needs no BPF: options
 * structs of other sizes (BPFREC_OPTS, sz checks), the recording's state
 * machine before open, error messages, and the conversion and reader APIs
 * on a small recording made by our writer (file and pipe format, output to
 * an fd and to a write callback).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpfrec/bpfrec.h>

#include "perfdata/writer.h"
#include "tests/unit/test_roundtrip.h"

/* ---- options structs ---- */

/* A caller built against a newer header: one more field after ours. */
struct newer_record_opts {
	struct bpfrec_record_opts known;
	uint64_t future_field;
};

static pid_t self_pid[1];

Test(api_opts, declared_with_sz_and_fields)
{
	BPFREC_OPTS(bpfrec_record_opts, o, .freq = 99, .system_wide = true);

	cr_assert_eq(o.sz, sizeof(struct bpfrec_record_opts));
	cr_assert_eq(o.freq, 99);
	cr_assert(o.system_wide);
	cr_assert_null(o.output_path);
	cr_assert_eq(o.callgraph, BPFREC_CALLGRAPH_NONE);
}

Test(api_opts, sz_too_small_is_refused_with_a_message)
{
	BPFREC_OPTS(bpfrec_record_opts, o, .system_wide = true);
	struct bpfrec_record *rec = NULL;

	o.sz = 4;
	cr_assert_eq(bpfrec_record_new(&o, &rec), -EINVAL);
	cr_assert_not_null(rec, "the handle carries the message");
	cr_assert(strstr(bpfrec_record_error(rec), "BPFREC_OPTS"), "%s", bpfrec_record_error(rec));
	cr_assert_eq(bpfrec_record_state(rec), BPFREC_RECORD_FAILED);
	bpfrec_record_free(rec);
}

Test(api_opts, an_older_caller_gets_defaults_for_what_it_lacks)
{
	BPFREC_OPTS(bpfrec_record_opts, o, .system_wide = true, .log_ctx = (void *)1);
	struct bpfrec_record *rec = NULL;

	/* Everything up to (not including) log: log_ctx's garbage is not read. */
	o.sz = offsetof(struct bpfrec_record_opts, log);
	cr_assert_eq(bpfrec_record_new(&o, &rec), 0, "%s", rec ? bpfrec_record_error(rec) : "");
	cr_assert_eq(bpfrec_record_state(rec), BPFREC_RECORD_NEW);
	bpfrec_record_free(rec);
}

Test(api_opts, a_newer_caller_is_accepted_only_with_zero_unknown_fields)
{
	struct newer_record_opts o = { .known = { .sz = sizeof(o), .system_wide = true } };
	struct bpfrec_record *rec = NULL;

	cr_assert_eq(bpfrec_record_new(&o.known, &rec), 0, "%s", bpfrec_record_error(rec));
	bpfrec_record_free(rec);
	o.future_field = 1;
	cr_assert_eq(bpfrec_record_new(&o.known, &rec), -EINVAL);
	cr_assert(strstr(bpfrec_record_error(rec), "does not know"), "%s", bpfrec_record_error(rec));
	bpfrec_record_free(rec);
}

Test(api_opts, stats_fill_only_what_the_caller_has)
{
	BPFREC_OPTS(bpfrec_record_opts, o, .system_wide = true);
	struct bpfrec_record_stats st;
	struct bpfrec_record *rec = NULL;

	cr_assert_eq(bpfrec_record_new(&o, &rec), 0);
	memset(&st, 0xab, sizeof(st));
	st.sz = offsetof(struct bpfrec_record_stats, lost);
	cr_assert_eq(bpfrec_record_get_stats(rec, &st), 0);
	cr_assert_eq(st.sz, offsetof(struct bpfrec_record_stats, lost));
	cr_assert_eq(st.samples, 0);
	cr_assert_eq(((unsigned char *)&st.lost)[0], 0xab, "wrote past the caller's sz");
	st.sz = sizeof(st);
	cr_assert_eq(bpfrec_record_get_stats(rec, &st), 0);
	cr_assert_eq(st.exit_code, -1);
	cr_assert_not(st.workload_done);
	bpfrec_record_free(rec);
}

/* Each tracer's counters are a struct of their own, sz-versioned like the rest. */
Test(api_opts, tracer_stats_have_their_own_getters)
{
	BPFREC_OPTS(bpfrec_record_opts, o, .system_wide = true);
	struct bpfrec_unwind_stats u;
	BPFREC_OPTS(bpfrec_alloc_stats, a);
	BPFREC_OPTS(bpfrec_offcpu_stats, off);
	struct bpfrec_record *rec = NULL;

	cr_assert_eq(bpfrec_record_new(&o, &rec), 0);
	memset(&u, 0xab, sizeof(u));
	u.sz = offsetof(struct bpfrec_unwind_stats, root);
	cr_assert_eq(bpfrec_record_get_unwind_stats(rec, &u), 0);
	cr_assert_not(u.enabled, "not open: no unwinder");
	cr_assert_eq(u.walks, 0);
	cr_assert_eq(((unsigned char *)&u.root)[0], 0xab, "wrote past the caller's sz");
	cr_assert_eq(bpfrec_record_get_alloc_stats(rec, &a), 0);
	cr_assert_not(a.enabled);
	cr_assert_eq(a.sz, sizeof(a));
	cr_assert_eq(bpfrec_record_get_offcpu_stats(rec, &off), 0);
	cr_assert_not(off.enabled);
	off.sz = 1;
	cr_assert_eq(bpfrec_record_get_offcpu_stats(rec, &off), -EINVAL, "sz cannot hold sz");
	bpfrec_record_free(rec);
}

/* ---- the state machine before open ---- */

Test(api_record, nothing_but_new_works_before_start)
{
	BPFREC_OPTS(bpfrec_record_opts, o, .pids = self_pid, .nr_pids = 1);
	struct bpfrec_record *rec = NULL;

	self_pid[0] = getpid();
	cr_assert_eq(bpfrec_record_new(&o, &rec), 0, "%s", bpfrec_record_error(rec));
	cr_assert_eq(bpfrec_record_state(rec), BPFREC_RECORD_NEW);
	cr_assert_str_empty(bpfrec_record_error(rec));
	cr_assert_eq(bpfrec_record_poll(rec, 0), -EINVAL);
	cr_assert(strstr(bpfrec_record_error(rec), "not started"), "%s", bpfrec_record_error(rec));
	cr_assert_eq(bpfrec_record_stop(rec), -EINVAL);
	cr_assert(strstr(bpfrec_record_error(rec), "stop"), "%s", bpfrec_record_error(rec));
	cr_assert_eq(bpfrec_record_switch_output(rec), -EINVAL);
	cr_assert_eq(bpfrec_record_poll_fd(rec), -EINVAL);
	{
		struct bpfrec_sched_metrics *m = (void *)1;

		cr_assert_eq(bpfrec_record_sched_metrics(rec, &m), -ENOENT, "no sched, no metrics");
		cr_assert_null(m);
	}
	cr_assert_eq(bpfrec_record_state(rec), BPFREC_RECORD_NEW, "failed calls change nothing");
	bpfrec_record_free(rec);
}

Test(api_record, bad_options_say_what_to_fix)
{
	static const struct {
		struct bpfrec_record_opts o;
		const char *msg;
	} cases[] = {
		{ { .sz = sizeof(struct bpfrec_record_opts) }, "nothing to record" },
		{ { .sz = sizeof(struct bpfrec_record_opts), .system_wide = true, .callgraph = 9 },
		  "BPFREC_CALLGRAPH_" },
		{ { .sz = sizeof(struct bpfrec_record_opts), .system_wide = true, .output = 7 },
		  "BPFREC_OUTPUT_" },
		{ { .sz = sizeof(struct bpfrec_record_opts), .system_wide = true,
		    .output = BPFREC_OUTPUT_CALLBACK }, "output_write" },
		{ { .sz = sizeof(struct bpfrec_record_opts), .system_wide = true,
		    .output = BPFREC_OUTPUT_FD, .output_fd = 9999 }, "not open" },
		{ { .sz = sizeof(struct bpfrec_record_opts), .system_wide = true,
		    .output = BPFREC_OUTPUT_FD, .output_fd = 1, .switch_output = BPFREC_SWITCH_MANUAL },
		  "switch-output" },
		{ { .sz = sizeof(struct bpfrec_record_opts), .system_wide = true, .event = "bogus" },
		  "unknown event 'bogus'" },
		{ { .sz = sizeof(struct bpfrec_record_opts), .system_wide = true,
		    .unwind_table_bytes = BPFREC_UNWIND_TABLE_MIN_BYTES - 1 }, "4 KiB to 4 GiB" },
		{ { .sz = sizeof(struct bpfrec_record_opts), .system_wide = true,
		    .unwind_table_bytes = BPFREC_UNWIND_TABLE_MAX_BYTES + 1 }, "4 KiB to 4 GiB" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bpfrec_record *rec = NULL;

		cr_assert_lt(bpfrec_record_new(&cases[i].o, &rec), 0, "case %zu", i);
		cr_assert(strstr(bpfrec_record_error(rec), cases[i].msg), "case %zu: %s", i,
			  bpfrec_record_error(rec));
		cr_assert_eq(bpfrec_record_start(rec), -EINVAL, "case %zu", i);
		cr_assert_eq(bpfrec_record_open(rec), -EALREADY, "case %zu", i);
		bpfrec_record_free(rec);
	}
}

Test(api_record, the_output_fd_must_be_writable_and_stays_open)
{
	BPFREC_OPTS(bpfrec_record_opts, o, .system_wide = true, .output = BPFREC_OUTPUT_FD);
	struct bpfrec_record *rec = NULL;
	int fds[2];

	/* A read-only fd is refused before anything is recorded. */
	o.output_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	cr_assert_eq(bpfrec_record_new(&o, &rec), -EBADF);
	cr_assert(strstr(bpfrec_record_error(rec), "not open for writing"), "%s",
		  bpfrec_record_error(rec));
	bpfrec_record_free(rec);
	close(o.output_fd);
	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
	o.output_fd = fds[1];
	cr_assert_eq(bpfrec_record_new(&o, &rec), 0, "%s", bpfrec_record_error(rec));
	bpfrec_record_free(rec);
	cr_assert_eq(fcntl(fds[1], F_GETFD), FD_CLOEXEC, "the caller's fd stays open");
	close(fds[0]);
	close(fds[1]);
}

/* ---- option values as a command line spells them ---- */

Test(api_parse, cpulists_sizes_and_switch_output)
{
	enum bpfrec_switch mode;
	uint64_t bytes, ns;
	int *cpus = NULL;
	size_t nr = 0;

	cr_assert_eq(bpfrec_cpulist_parse("3,0-1,1", &cpus, &nr), 0);
	cr_assert_eq(nr, 3);
	cr_assert(cpus[0] == 0 && cpus[1] == 1 && cpus[2] == 3);
	free(cpus);
	cr_assert_eq(bpfrec_cpulist_parse("2-1", &cpus, &nr), -EINVAL);
	cr_assert_eq(bpfrec_cpulist_parse("", &cpus, &nr), -EINVAL);

	cr_assert_eq(bpfrec_size_parse("64M", &bytes), 0);
	cr_assert_eq(bytes, 64ull << 20);
	cr_assert_eq(bpfrec_size_parse("7B", &bytes), 0);
	cr_assert_eq(bytes, 7);
	/* A size needs its unit; an age is not a size. */
	cr_assert_eq(bpfrec_size_parse("64", &bytes), -EINVAL);
	cr_assert_eq(bpfrec_size_parse("30s", &bytes), -EINVAL);

	cr_assert_eq(bpfrec_switch_output_parse(NULL, &mode, &bytes, &ns), 0);
	cr_assert_eq(mode, BPFREC_SWITCH_MANUAL);
	cr_assert_eq(bpfrec_switch_output_parse("signal", &mode, &bytes, &ns), 0);
	cr_assert_eq(mode, BPFREC_SWITCH_MANUAL);
	cr_assert_eq(bpfrec_switch_output_parse("2G", &mode, &bytes, &ns), 0);
	cr_assert(mode == BPFREC_SWITCH_SIZE && bytes == 2ull << 30 && ns == 0);
	cr_assert_eq(bpfrec_switch_output_parse("5m", &mode, &bytes, &ns), 0);
	cr_assert(mode == BPFREC_SWITCH_TIME && ns == 300ull * 1000000000 && bytes == 0);
	mode = BPFREC_SWITCH_NONE;
	cr_assert_eq(bpfrec_switch_output_parse("5x", &mode, &bytes, &ns), -EINVAL);
	cr_assert_eq(mode, BPFREC_SWITCH_NONE, "nothing is set on error");
}

Test(api_common, version_matches_the_header)
{
	char want[32];

	snprintf(want, sizeof(want), "%d.%d.", BPFREC_VERSION_MAJOR, BPFREC_VERSION_MINOR);
	cr_assert_eq(strncmp(bpfrec_version(), want, strlen(want)), 0, "%s", bpfrec_version());
}

/* ---- conversion and reading, on a recording made by our writer ---- */

#define NR_SAMPLES 50

/* 50 cpu-clock samples of pid 42 ("tiny") at 3 addresses in the kernel. */
static int make_recording(bool pipe)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = 999, .freq = 1, .sample_id_all = 1, .comm = 1,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD,
	};
	struct perfdata_writer_opts wo = { .pipe = pipe };
	struct perfdata_comm comm = { .pid = 42, .tid = 42, .comm = "tiny" };
	struct perfdata_sample_id sid = { .pid = 42, .tid = 42, .time = 1, .id = 7 };
	uint64_t id = 7;
	int fd = trip_memfd("rec");
	struct perfdata_writer *w = trip_writer(fd, &wo, "cpu-clock", &a, &id, 1);

	cr_assert_eq(perfdata_write_comm(w, &comm, &sid), 0);
	for (int i = 0; i < NR_SAMPLES; i++) {
		struct perfdata_sample s = {
			.misc = PERF_RECORD_MISC_KERNEL, .id = 7, .pid = 42, .tid = 42,
			.time = 10 + (uint64_t)i, .period = 1000000,
			.ip = 0xffffffff81000000ull + (uint64_t)(i % 3) * 0x100,
		};

		cr_assert_eq(perfdata_write_sample(w, &s), 0);
	}
	cr_assert_eq(perfdata_write_finished_round(w), 0);
	trip_finish(w, fd);
	return fd;
}

Test(api_perfdata, reads_samples_of_both_formats)
{
	for (int pipe = 0; pipe < 2; pipe++) {
		struct bpfrec_perfdata *r = NULL;
		const struct perf_event_header *h;
		int fd = make_recording(pipe), n = 0, err;

		cr_assert_eq(bpfrec_perfdata_open_fd(fd, "tiny.data", &r), 0, "%s",
			     bpfrec_perfdata_error(r));
		cr_assert_eq(bpfrec_perfdata_is_pipe(r), pipe);
		while ((err = bpfrec_perfdata_next(r, &h)) == 1) {
			BPFREC_OPTS(bpfrec_perfdata_sample, s);

			if (h->type != PERF_RECORD_SAMPLE)
				continue;
			cr_assert_eq(bpfrec_perfdata_parse_sample(r, h, &s), 0);
			cr_assert_eq(s.pid, 42);
			cr_assert_eq(s.event, 0);
			cr_assert_eq(s.period, 1000000);
			n++;
		}
		cr_assert_eq(err, 0, "%s", bpfrec_perfdata_error(r));
		cr_assert_eq(n, NR_SAMPLES);
		cr_assert_eq(bpfrec_perfdata_nr_events(r), 1);
		cr_assert_str_eq(bpfrec_perfdata_event_name(r, 0), "cpu-clock");
		cr_assert_eq(bpfrec_perfdata_event_attr(r, 0)->config, PERF_COUNT_SW_CPU_CLOCK);
		cr_assert_null(bpfrec_perfdata_event_name(r, 1));
		bpfrec_perfdata_free(r);
		close(fd);
	}
}

/* Every kind of record the writer makes, decoded through the public API. */
static int make_records(bool pipe)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000, .sample_id_all = 1,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME,
	};
	static const uint8_t bid[20] = { 0xab, 0xcd };
	struct perfdata_writer_opts wo = { .pipe = pipe };
	struct perfdata_mmap m = { .misc = PERF_RECORD_MISC_USER, .pid = 42, .tid = 43,
				   .start = 0x400000, .len = 0x1000, .build_id_size = 20,
				   .prot = 5, .filename = "/bin/tiny" };
	struct perfdata_task t = { .pid = 44, .ppid = 42, .tid = 44, .ptid = 42, .time = 5 };
	struct perfdata_comm comm = { .pid = 42, .tid = 43, .exec = true, .comm = "tiny" };
	struct perfdata_sample_id sid = { .pid = 42, .tid = 43, .time = 3, .id = 7 };
	struct perfdata_sample smp = { .id = 8, .pid = 42, .tid = 43, .time = 6 };
	struct perfdata_ksymbol k = { .addr = 0xffffffffc0001000ull, .len = 0x80,
				      .ksym_type = PERF_RECORD_KSYMBOL_TYPE_BPF,
				      .name = "bpf_prog_0123456789abcdef_tiny" };
	uint64_t id = 7, id2 = 8;
	int fd = trip_memfd("rec");
	struct perfdata_writer *w = trip_writer_new(fd, &wo, "cpu-clock", &a, &id, 1);

	memcpy(m.build_id, bid, sizeof(bid));
	/* A second event, so a sample's id must name one of them. */
	cr_assert_eq(perfdata_writer_add_event(w, "other", &a, &id2, 1), 0);
	cr_assert_eq(perfdata_writer_start(w), 0);
	cr_assert_eq(perfdata_write_comm(w, &comm, &sid), 0);
	cr_assert_eq(perfdata_write_mmap2(w, &m, &sid), 0);
	cr_assert_eq(perfdata_write_fork(w, &t, &sid), 0);
	cr_assert_eq(perfdata_write_ksymbol(w, &k, &sid), 0);
	cr_assert_eq(perfdata_write_lost_samples(w, 17, &sid), 0);
	cr_assert_eq(perfdata_write_sample(w, &smp), 0);
	cr_assert_eq(perfdata_writer_add_build_id(w, PERF_RECORD_MISC_USER, bid, 20, "/bin/tiny"), 0);
	trip_finish(w, fd);
	return fd;
}

static int count_build_id(void *ctx, const struct bpfrec_perfdata_build_id *b)
{
	cr_assert_eq(b->size, 20);
	cr_assert_eq(b->id[0], 0xab);
	cr_assert_eq(b->filename_len, strlen("/bin/tiny"));
	cr_assert_eq(strncmp(b->filename, "/bin/tiny", b->filename_len), 0);
	(*(int *)ctx)++;
	return 0;
}

Test(api_perfdata, decodes_every_record_kind)
{
	for (int pipe = 0; pipe < 2; pipe++) {
		struct bpfrec_perfdata *r = NULL;
		const struct perf_event_header *h;
		BPFREC_OPTS(bpfrec_perfdata_header, hdr);
		int fd = make_records(pipe), seen = 0, nr_bids = 0, err;
		size_t nr_ids;
		char text[256];

		cr_assert_eq(bpfrec_perfdata_open_fd(fd, "kinds.data", &r), 0);
		while ((err = bpfrec_perfdata_next(r, &h)) == 1) {
			BPFREC_OPTS(bpfrec_perfdata_mmap, m);
			BPFREC_OPTS(bpfrec_perfdata_comm, c);
			BPFREC_OPTS(bpfrec_perfdata_task, t);
			BPFREC_OPTS(bpfrec_perfdata_ksymbol, k);
			BPFREC_OPTS(bpfrec_perfdata_sample_id, sid);
			BPFREC_OPTS(bpfrec_perfdata_sample, s);
			BPFREC_OPTS(bpfrec_perfdata_build_id, b);
			uint64_t lid, lost;

			cr_assert_not_null(bpfrec_perfdata_record_name(h->type), "type %u", h->type);
			switch (h->type) {
			case PERF_RECORD_COMM:
				cr_assert_eq(bpfrec_perfdata_parse_comm(h, &c), 0);
				cr_assert(c.pid == 42 && c.tid == 43 && c.exec);
				cr_assert_str_eq(c.comm, "tiny");
				cr_assert_eq(bpfrec_perfdata_parse_sample_id(r, h, &sid), 0);
				cr_assert(sid.pid == 42 && sid.time == 3 && sid.id == 7);
				cr_assert_eq(bpfrec_perfdata_parse_mmap(h, &m), -EINVAL, "not an MMAP");
				seen |= 1;
				break;
			case PERF_RECORD_MMAP2:
				cr_assert_eq(bpfrec_perfdata_parse_mmap(h, &m), 0);
				cr_assert(m.pid == 42 && m.start == 0x400000 && m.len == 0x1000);
				cr_assert(m.build_id_size == 20 && m.build_id[1] == 0xcd && m.prot == 5);
				cr_assert_str_eq(m.filename, "/bin/tiny");
				seen |= 2;
				break;
			case PERF_RECORD_FORK:
				cr_assert_eq(bpfrec_perfdata_parse_task(h, &t), 0);
				cr_assert(t.pid == 44 && t.ppid == 42 && t.time == 5);
				seen |= 4;
				break;
			case PERF_RECORD_LOST_SAMPLES:
				cr_assert_eq(bpfrec_perfdata_parse_lost(h, &lid, &lost), 0);
				cr_assert_eq(lost, 17);
				seen |= 8;
				break;
			case PERF_RECORD_KSYMBOL:
				cr_assert_eq(bpfrec_perfdata_parse_ksymbol(h, &k), 0);
				cr_assert(k.addr == 0xffffffffc0001000ull && k.len == 0x80);
				cr_assert(k.ksym_type == PERF_RECORD_KSYMBOL_TYPE_BPF && !k.flags);
				cr_assert_str_eq(k.name, "bpf_prog_0123456789abcdef_tiny");
				cr_assert_eq(bpfrec_perfdata_parse_sample_id(r, h, &sid), 0);
				cr_assert(sid.pid == 42 && sid.time == 3 && sid.id == 7);
				cr_assert_eq(bpfrec_perfdata_parse_task(h, &t), -EINVAL, "not a FORK");
				seen |= 32;
				break;
			case PERF_RECORD_SAMPLE:
				cr_assert_eq(bpfrec_perfdata_parse_sample(r, h, &s), 0);
				cr_assert(s.event == 1 && s.id == 8 && s.time == 6);
				seen |= 16;
				break;
			case BPFREC_PERFDATA_RECORD_HEADER_BUILD_ID:
				cr_assert_eq(bpfrec_perfdata_parse_build_id(h, &b), 0);
				count_build_id(&nr_bids, &b);
				break;
			}
		}
		cr_assert_eq(err, 0, "%s", bpfrec_perfdata_error(r));
		cr_assert_eq(seen, 63);
		{
			/* A SAMPLE whose id is no event's: the error names the id. */
			uint64_t rec[5] = { 0, 99, 0x1234, 42 | 43ull << 32, 6 };
			struct perf_event_header fake = { .type = PERF_RECORD_SAMPLE,
							  .size = sizeof(rec) };
			BPFREC_OPTS(bpfrec_perfdata_sample, s);

			memcpy(rec, &fake, sizeof(fake));
			cr_assert_eq(bpfrec_perfdata_parse_sample(r, (void *)rec, &s), -ENOENT);
			cr_assert_eq(s.id, 99);
			cr_assert_eq(s.event, -1);
		}
		cr_assert_eq(nr_bids, pipe, "HEADER_BUILD_ID records are the pipe's");
		cr_assert_eq(bpfrec_perfdata_for_each_build_id(r, count_build_id, &nr_bids), 0);
		cr_assert_eq(nr_bids, pipe + 1);
		cr_assert_eq(bpfrec_perfdata_event_ids(r, 1, &nr_ids)[0], 8);
		cr_assert_eq(nr_ids, 1);
		cr_assert_null(bpfrec_perfdata_event_ids(r, 2, &nr_ids));
		cr_assert_eq(nr_ids, 0);
		cr_assert_eq(bpfrec_perfdata_get_header(r, &hdr), pipe ? -EINVAL : 0);
		if (!pipe) {
			cr_assert_eq(hdr.size, 104);
			cr_assert(hdr.features[0] & (1ull << BPFREC_PERFDATA_FEAT_HOSTNAME));
			cr_assert_gt(hdr.data_size, 0);
		}
		/* Features as text: a string quoted, a number decoded, the rest sized. */
		cr_assert_gt(bpfrec_perfdata_describe_feature(r, BPFREC_PERFDATA_FEAT_HOSTNAME, text,
							      sizeof(text)), 2);
		cr_assert_eq(text[0], '"');
		cr_assert_eq(bpfrec_perfdata_describe_feature(r, 7, text, sizeof(text)),
			     (int)strlen(text));
		cr_assert(strstr(text, "available ") && strstr(text, " online "), "%s", text);
		/* Too small a buffer: cut, NUL-terminated, the length needed returned. */
		cr_assert_gt(bpfrec_perfdata_describe_feature(r, 7, text, 5), 4);
		cr_assert_eq(strlen(text), 4);
		cr_assert_eq(bpfrec_perfdata_describe_feature(r, 200, text, sizeof(text)), -ENOENT);
		bpfrec_perfdata_free(r);
		close(fd);
	}
	cr_assert_str_eq(bpfrec_perfdata_record_name(PERF_RECORD_SAMPLE), "SAMPLE");
	cr_assert_str_eq(bpfrec_perfdata_record_name(BPFREC_PERFDATA_RECORD_FINISHED_ROUND),
			 "FINISHED_ROUND");
	cr_assert_null(bpfrec_perfdata_record_name(63));
	cr_assert_str_eq(bpfrec_perfdata_feature_name(BPFREC_PERFDATA_FEAT_CMDLINE), "CMDLINE");
	cr_assert_null(bpfrec_perfdata_feature_name(255));
	cr_assert_str_eq(bpfrec_perfdata_event_generic_name(PERF_TYPE_HARDWARE,
							    PERF_COUNT_HW_CPU_CYCLES), "cycles");
}

Test(api_perfdata, a_missing_file_is_named)
{
	struct bpfrec_perfdata *r = NULL;

	cr_assert_eq(bpfrec_perfdata_open_path("/nonexistent/perf.data", &r), -ENOENT);
	cr_assert(strstr(bpfrec_perfdata_error(r), "/nonexistent/perf.data"), "%s",
		  bpfrec_perfdata_error(r));
	bpfrec_perfdata_free(r);
}

struct sink {
	uint8_t *buf;
	size_t len;
	int fail_after;		/* calls before returning -ENOSPC; 0 = never */
	int calls;
};

static int sink_write(void *ctx, const void *buf, size_t len)
{
	struct sink *s = ctx;

	if (s->fail_after && ++s->calls >= s->fail_after)
		return -ENOSPC;
	s->buf = realloc(s->buf, s->len + len);
	memcpy(s->buf + s->len, buf, len);
	s->len += len;
	return 0;
}

Test(api_pprof, converts_to_an_fd_and_a_callback_alike)
{
	BPFREC_OPTS(bpfrec_pprof_opts, o, .no_symbolize = true, .labels = "pid,comm");
	BPFREC_OPTS(bpfrec_pprof_profile_info, info);
	BPFREC_OPTS(bpfrec_pprof_stats, st);
	struct bpfrec_pprof *c = NULL;
	struct sink s = { 0 };
	int in = make_recording(true), out = memfd_create("out", MFD_CLOEXEC);
	uint8_t *file;
	off_t len;

	cr_assert_eq(bpfrec_pprof_new(&o, &c), 0, "%s", bpfrec_pprof_error(c));
	cr_assert_eq(bpfrec_pprof_write_fd(c, 0, out, NULL), -EINVAL, "nothing read yet");
	cr_assert_eq(bpfrec_pprof_read_fd(c, in), 0, "%s", bpfrec_pprof_error(c));
	cr_assert_eq(bpfrec_pprof_read_fd(c, in), -EALREADY);
	cr_assert_eq(bpfrec_pprof_nr_profiles(c), 1);
	cr_assert_str_eq(bpfrec_pprof_profile_name(c, 0), "cpu-clock");
	cr_assert_eq(bpfrec_pprof_profile_samples(c, 0), NR_SAMPLES);
	cr_assert_eq(bpfrec_pprof_write_fd(c, 0, out, &info), 0, "%s", bpfrec_pprof_error(c));
	cr_assert_eq(info.samples, NR_SAMPLES);
	cr_assert_eq(info.locations, 3);
	cr_assert_gt(info.bytes, 18);
	cr_assert_eq(bpfrec_pprof_write_callback(c, 0, sink_write, &s, NULL), 0, "%s",
		     bpfrec_pprof_error(c));
	/* The same profile, byte for byte, whichever way it left. */
	len = lseek(out, 0, SEEK_END);
	cr_assert_eq((uint64_t)len, info.bytes);
	cr_assert_eq(s.len, (size_t)len);
	file = malloc((size_t)len);
	cr_assert_eq(pread(out, file, (size_t)len, 0), len);
	cr_assert_eq(memcmp(file, s.buf, s.len), 0);
	cr_assert_eq(file[0], 0x1f, "gzip");
	cr_assert_eq(file[1], 0x8b, "gzip");
	cr_assert_eq(bpfrec_pprof_get_stats(c, &st), 0);
	cr_assert_eq(st.samples, NR_SAMPLES);
	cr_assert_eq(st.kept, NR_SAMPLES);
	cr_assert_eq(bpfrec_pprof_write_fd(c, 1, out, NULL), -EINVAL, "one profile only");
	cr_assert(strstr(bpfrec_pprof_error(c), "no profile 1"), "%s", bpfrec_pprof_error(c));
	free(file);
	free(s.buf);
	bpfrec_pprof_free(c);
	close(in);
	close(out);
}

static void keep_warning(void *ctx, enum bpfrec_log_level level, const char *msg)
{
	char *last = ctx;

	cr_assert_eq(level, BPFREC_LOG_WARN);
	cr_assert_eq(last[0], '\0', "one warning, once: had '%s', now '%s'", last, msg);
	snprintf(last, 512, "%s", msg);
}

/* A kallsyms the symbolizer cannot use: the reason reaches the log, nothing is printed. */
Test(api_pprof, unusable_kallsyms_is_a_logged_warning)
{
	char path[] = "/tmp/bpfrec-test-kallsyms.XXXXXX", last[512] = "";
	static const char hidden[] = "0000000000000000 T _text\n0000000000000000 T ksys_write\n";
	int kfd = mkstemp(path), in = make_recording(false), out = memfd_create("out", MFD_CLOEXEC);
	BPFREC_OPTS(bpfrec_pprof_opts, o, .kallsyms = path, .log = keep_warning, .log_ctx = last);
	struct bpfrec_pprof *c = NULL;

	cr_assert_geq(kfd, 0);
	cr_assert_eq(write(kfd, hidden, sizeof(hidden) - 1), (ssize_t)sizeof(hidden) - 1);
	close(kfd);
	cr_assert_eq(bpfrec_pprof_new(&o, &c), 0, "%s", bpfrec_pprof_error(c));
	cr_assert_eq(bpfrec_pprof_read_fd(c, in), 0, "%s", bpfrec_pprof_error(c));
	cr_assert_eq(bpfrec_pprof_write_fd(c, 0, out, NULL), 0, "%s", bpfrec_pprof_error(c));
	cr_assert(strstr(last, path) && strstr(last, "kptr_restrict"), "warning: '%s'", last);
	cr_assert_eq(bpfrec_pprof_write_fd(c, 0, out, NULL), 0, "%s", bpfrec_pprof_error(c));
	bpfrec_pprof_free(c);
	unlink(path);
	close(in);
	close(out);
}

Test(api_pprof, a_failing_callback_fails_the_write)
{
	BPFREC_OPTS(bpfrec_pprof_opts, o, .no_symbolize = true);
	struct bpfrec_pprof *c = NULL;
	struct sink s = { .fail_after = 1 };
	int in = make_recording(false);

	cr_assert_eq(bpfrec_pprof_new(&o, &c), 0);
	cr_assert_eq(bpfrec_pprof_read_fd(c, in), 0, "%s", bpfrec_pprof_error(c));
	cr_assert_eq(bpfrec_pprof_write_callback(c, 0, sink_write, &s, NULL), -ENOSPC);
	cr_assert(strstr(bpfrec_pprof_error(c), "write callback"), "%s", bpfrec_pprof_error(c));
	bpfrec_pprof_free(c);
	close(in);
}

static const char *group_named(void *ctx, uint32_t pid, const char *comm)
{
	(void)pid;
	(void)comm;
	return ctx;
}

/* The group callback (bpfrec agent: one profile per service) through the public API. */
Test(api_pprof, profiles_by_group)
{
	BPFREC_OPTS(bpfrec_pprof_opts, o, .no_symbolize = true, .group = group_named,
		    .group_ctx = "svc");
	BPFREC_OPTS(bpfrec_pprof_opts, drop, .no_symbolize = true, .group = group_named);
	BPFREC_OPTS(bpfrec_pprof_stats, st);
	struct bpfrec_pprof *c = NULL;
	int in = make_recording(false);

	cr_assert_eq(bpfrec_pprof_new(&o, &c), 0, "%s", bpfrec_pprof_error(c));
	cr_assert_eq(bpfrec_pprof_read_fd(c, in), 0, "%s", bpfrec_pprof_error(c));
	cr_assert_eq(bpfrec_pprof_nr_profiles(c), 1);
	cr_assert_str_eq(bpfrec_pprof_profile_group(c, 0), "svc");
	cr_assert_str_eq(bpfrec_pprof_profile_event(c, 0), "cpu-clock");
	cr_assert_eq(bpfrec_pprof_profile_samples(c, 0), NR_SAMPLES);
	cr_assert_null(bpfrec_pprof_profile_group(c, 1));
	cr_assert_null(bpfrec_pprof_profile_event(c, 1));
	bpfrec_pprof_free(c);

	/* Every process dropped (NULL): no profiles, and that is no error. */
	cr_assert_eq(lseek(in, 0, SEEK_SET), 0);
	cr_assert_eq(bpfrec_pprof_new(&drop, &c), 0, "%s", bpfrec_pprof_error(c));
	cr_assert_eq(bpfrec_pprof_read_fd(c, in), 0, "%s", bpfrec_pprof_error(c));
	cr_assert_eq(bpfrec_pprof_nr_profiles(c), 0);
	cr_assert_eq(bpfrec_pprof_get_stats(c, &st), 0);
	cr_assert_eq(st.filtered, NR_SAMPLES);
	bpfrec_pprof_free(c);

	/* Without a callback: no group names. */
	BPFREC_OPTS(bpfrec_pprof_opts, plain, .no_symbolize = true);

	cr_assert_eq(lseek(in, 0, SEEK_SET), 0);
	cr_assert_eq(bpfrec_pprof_new(&plain, &c), 0, "%s", bpfrec_pprof_error(c));
	cr_assert_eq(bpfrec_pprof_read_fd(c, in), 0, "%s", bpfrec_pprof_error(c));
	cr_assert_null(bpfrec_pprof_profile_group(c, 0));
	cr_assert_str_eq(bpfrec_pprof_profile_event(c, 0), "cpu-clock");
	bpfrec_pprof_free(c);
	close(in);
}

Test(api_pprof, bad_labels_and_missing_input_say_what_to_fix)
{
	BPFREC_OPTS(bpfrec_pprof_opts, bad, .labels = "pid,bogus");
	BPFREC_OPTS(bpfrec_pprof_opts, o, .event = "cycles");
	struct bpfrec_pprof *c = NULL;
	int in;

	cr_assert_eq(bpfrec_pprof_new(&bad, &c), -EINVAL);
	cr_assert(strstr(bpfrec_pprof_error(c), "pid,bogus"), "%s", bpfrec_pprof_error(c));
	bpfrec_pprof_free(c);
	cr_assert_eq(bpfrec_pprof_new(&o, &c), 0);
	cr_assert_eq(bpfrec_pprof_read_path(c, "/nonexistent/perf.data"), -ENOENT);
	cr_assert(strstr(bpfrec_pprof_error(c), "cannot open /nonexistent/perf.data"), "%s",
		  bpfrec_pprof_error(c));
	bpfrec_pprof_free(c);
	/* An event the file does not have. */
	in = make_recording(false);
	cr_assert_eq(bpfrec_pprof_new(&o, &c), 0);
	cr_assert_eq(bpfrec_pprof_read_fd(c, in), -ENOENT);
	cr_assert(strstr(bpfrec_pprof_error(c), "no event 'cycles'"), "%s", bpfrec_pprof_error(c));
	bpfrec_pprof_free(c);
	close(in);
}

/* The shared tables' size through the API: nothing for NULL, next to nothing
 * before a conversion loaded anything (test_pprof_convert has them grow). */
Test(api_pprof, symbols_size_of_fresh_tables)
{
	BPFREC_OPTS(bpfrec_pprof_opts, o);
	struct bpfrec_pprof_symbols *sym = NULL;
	size_t size;

	cr_assert_eq(bpfrec_pprof_symbols_size(NULL), 0);
	cr_assert_eq(bpfrec_pprof_symbols_new(&o, &sym), 0);
	size = bpfrec_pprof_symbols_size(sym);
	cr_assert(size > 0 && size < 65536, "%zu bytes, nothing loaded", size);
	bpfrec_pprof_symbols_free(sym);
}
