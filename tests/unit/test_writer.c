// SPDX-License-Identifier: MIT
/*
 * The writer's file and pipe layouts, checkpoints and failure handling,
 * checked by parsing the bytes it produced with the format facts alone.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "perfdata/writer.h"
#include "tests/unit/test_roundtrip.h"

#define TRAILER_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		      PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)

static struct perf_event_attr cpu_clock_attr(void)
{
	return (struct perf_event_attr){
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = 999, .freq = 1,
		.sample_type = TRAILER_TYPE | PERF_SAMPLE_CALLCHAIN,
		.sample_id_all = 1, .mmap = 1, .comm = 1, .mmap2 = 1, .use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
	};
}

static char path[64];
static uint8_t *file;
static size_t file_len;

static int tmp_file(void)
{
	int fd;

	strcpy(path, "/tmp/test_writer.XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	unlink(path);
	return fd;
}

static void slurp(int fd)
{
	free(file);
	file = trip_slurp(fd, &file_len);
}

static uint64_t u64_at(size_t off) { uint64_t v; memcpy(&v, file + off, 8); return v; }

static struct perfdata_writer *new_writer(int fd, bool pipe, size_t nr_events)
{
	struct perfdata_writer_opts o = { .pipe = pipe };
	static const char *argv[] = { "bpfrec", "record", "-g" };
	struct perfdata_writer *w;
	struct perf_event_attr a = cpu_clock_attr();
	uint64_t id = 100;

	o.argc = 3;
	o.argv = argv;
	w = trip_writer_new(fd, &o, "cpu-clock", &a, &id, 1);
	for (size_t i = 1; i < nr_events; i++) {
		id = 100 + i;
		cr_assert_eq(perfdata_writer_add_event(w, "offcpu-time", &a, &id, 1), 0);
	}
	return w;
}

static void write_samples(struct perfdata_writer *w, int n, uint64_t id)
{
	uint64_t chain[] = { PERF_CONTEXT_USER, 0x401000, 0x401100 };

	for (int i = 0; i < n; i++) {
		struct perfdata_sample s = { .misc = PERF_RECORD_MISC_USER, .id = id, .ip = 0x401000,
					     .pid = 1, .tid = 1, .time = 1000 + (uint64_t)i,
					     .period = 1, .nr_callchain = 3, .callchain = chain };
		cr_assert_eq(perfdata_write_sample(w, &s), 0);
	}
}

/* Walk records in [start, end): every size sane and 8-aligned; returns the count of `type`. */
static int count_records(size_t start, size_t end, uint32_t type)
{
	int n = 0;

	while (start < end) {
		struct perf_event_header *h = (void *)(file + start);

		cr_assert(h->size >= 8 && h->size % 8 == 0, "bad record size %u at %zu", h->size, start);
		cr_assert_leq(start + h->size, end, "record past the end at %zu", start);
		n += h->type == type;
		start += h->size;
	}
	return n;
}

/* The file as it is now: the SAMPLE records its header's data section covers. */
static int samples_on_file(int fd)
{
	slurp(fd);
	return count_records(u64_at(40), u64_at(40) + u64_at(48), PERF_RECORD_SAMPLE);
}

static bool feature_bit(unsigned int f) { return u64_at(72 + 8 * (f / 64)) >> (f % 64) & 1; }

Test(writer, file_layout)
{
	int fd = tmp_file();
	struct perfdata_writer *w = new_writer(fd, false, 1);
	struct perfdata_comm c = { .pid = 1, .tid = 1, .comm = "prog" };
	uint8_t bid[20] = { 1, 2, 3 };

	cr_assert_eq(perfdata_writer_start(w), 0);
	cr_assert_eq(perfdata_write_comm(w, &c, NULL), 0);
	write_samples(w, 10, 100);
	cr_assert_eq(perfdata_write_finished_round(w), 0);
	cr_assert_eq(perfdata_writer_add_build_id(w, PERF_RECORD_MISC_USER, bid, 20, "/bin/prog"), 0);
	cr_assert_eq(perfdata_writer_add_build_id(w, PERF_RECORD_MISC_USER, bid, 20, "/bin/prog"), 0);
	cr_assert_eq(perfdata_writer_finish(w), 0);
	cr_assert_eq(perfdata_writer_nr_samples(w), 10);
	slurp(fd);

	cr_assert_eq(memcmp(file, "PERFILE2", 8), 0);
	cr_assert_eq(u64_at(8), 104);
	cr_assert_eq(u64_at(16), 128 + 16, "attr_size");
	/* header | ids (8) | attr+section (144) | data */
	cr_assert_eq(u64_at(24), 112, "attrs offset");
	cr_assert_eq(u64_at(32), 144, "attrs size");
	cr_assert_eq(u64_at(104), 100, "the event's id");
	cr_assert_eq(u64_at(112 + 4), 128, "attr.size written as 128");
	cr_assert_eq(u64_at(112 + 128), 104, "ids offset");
	cr_assert_eq(u64_at(112 + 136), 8, "ids size");
	uint64_t doff = u64_at(40), dsize = u64_at(48);
	cr_assert_eq(doff, 256);
	cr_assert_eq(u64_at(56) | u64_at(64), 0, "event_types section unused");
	cr_assert_eq(count_records(doff, doff + dsize, PERF_RECORD_SAMPLE), 10);
	cr_assert_eq(count_records(doff, doff + dsize, PERF_RECORD_COMM), 1);
	cr_assert_eq(count_records(doff, doff + dsize, PERFDATA_RECORD_FINISHED_ROUND), 1);

	unsigned int want[] = { PERFDATA_FEAT_BUILD_ID, PERFDATA_FEAT_HOSTNAME,
				PERFDATA_FEAT_OSRELEASE, PERFDATA_FEAT_VERSION, PERFDATA_FEAT_ARCH,
				PERFDATA_FEAT_NRCPUS, PERFDATA_FEAT_TOTAL_MEM, PERFDATA_FEAT_CMDLINE,
				PERFDATA_FEAT_EVENT_DESC, PERFDATA_FEAT_SAMPLE_TIME,
				PERFDATA_FEAT_CLOCKID, PERFDATA_FEAT_CLOCK_DATA };
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_assert(feature_bit(want[i]), "feature %u missing", want[i]);
	for (unsigned int f = PERFDATA_FEAT_LAST; f < 256; f++)
		cr_assert(!feature_bit(f), "feature %u unknown to perf 6.1", f);

	/* Feature table right after the data; sections contiguous up to EOF. */
	size_t nr = 0, table = doff + dsize, end = 0, sample_time = 0, bids = 0, bids_size = 0;
	for (unsigned int f = 0; f < 256; f++) {
		if (!feature_bit(f))
			continue;
		uint64_t off = u64_at(table + 16 * nr), size = u64_at(table + 16 * nr + 8);
		cr_assert_leq(off + size, file_len);
		if (f == PERFDATA_FEAT_SAMPLE_TIME)
			sample_time = off;
		if (f == PERFDATA_FEAT_BUILD_ID)
			bids = off, bids_size = size;
		end = off + size;
		nr++;
	}
	cr_assert_eq(end, file_len);
	cr_assert_eq(u64_at(sample_time), 1000);
	cr_assert_eq(u64_at(sample_time + 8), 1009);
	cr_assert_eq(bids_size, 36 + 64, "one build-id, duplicates ignored");
	cr_assert_str_eq((char *)file + bids + 36, "/bin/prog");
	perfdata_writer_free(w);
	close(fd);
}

Test(writer, checkpoint_makes_partial_file_readable)
{
	int fd = tmp_file();
	struct perfdata_writer *w = new_writer(fd, false, 1);

	cr_assert_eq(perfdata_writer_start(w), 0);
	slurp(fd);
	cr_assert_eq(u64_at(48), 0, "no data yet");
	write_samples(w, 5, 100);
	cr_assert_eq(perfdata_write_finished_round(w), 0);
	cr_assert_eq(perfdata_writer_checkpoint(w), 0);
	slurp(fd);
	/* What a SIGKILL now would leave: data.size covers every record, no features. */
	cr_assert_eq(u64_at(40) + u64_at(48), file_len);
	cr_assert_eq(count_records(u64_at(40), file_len, PERF_RECORD_SAMPLE), 5);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(u64_at(72 + 8 * i), 0, "feature bits stay 0 while recording");

	/* Records after the checkpoint are buffered, then counted by the next one. */
	write_samples(w, 3, 100);
	cr_assert_eq(samples_on_file(fd), 5);
	cr_assert_eq(perfdata_writer_checkpoint(w), 0);
	cr_assert_eq(samples_on_file(fd), 8);
	perfdata_writer_free(w);
	close(fd);
}

Test(writer, rounds_checkpoint_by_themselves)
{
	int fd = tmp_file();
	struct perfdata_writer_opts o = { .checkpoint_interval_ms = 1 };
	struct perfdata_writer *w;
	struct perf_event_attr a = cpu_clock_attr();
	uint64_t id = 1;

	cr_assert_eq(perfdata_writer_new(fd, &o, &w), 0);
	cr_assert_eq(perfdata_writer_add_event(w, "cpu-clock", &a, &id, 1), 0);
	cr_assert_eq(perfdata_writer_start(w), 0);
	write_samples(w, 4, 1);
	usleep(5000);
	cr_assert_eq(perfdata_write_finished_round(w), 0);
	cr_assert_eq(samples_on_file(fd), 4);
	perfdata_writer_free(w);
	close(fd);
}

Test(writer, two_events_need_identifier)
{
	struct perfdata_writer *w;
	struct perf_event_attr a = cpu_clock_attr(), b = cpu_clock_attr();
	uint64_t id1 = 1, id2 = 2;

	cr_assert_eq(perfdata_writer_new(-1, NULL, &w), 0);
	cr_assert_eq(perfdata_writer_add_event(w, "cpu-clock", &a, &id1, 1), 0);
	b.sample_type &= ~(uint64_t)PERF_SAMPLE_IDENTIFIER;
	cr_assert_eq(perfdata_writer_add_event(w, "offcpu-time", &b, &id2, 1), -EINVAL);
	b = cpu_clock_attr();
	b.sample_type &= ~(uint64_t)PERF_SAMPLE_CPU;	/* different trailer layout */
	cr_assert_eq(perfdata_writer_add_event(w, "offcpu-time", &b, &id2, 1), -EINVAL);
	b = cpu_clock_attr();
	cr_assert_eq(perfdata_writer_add_event(w, "offcpu-time", &b, NULL, 0), -EINVAL);
	cr_assert_eq(perfdata_writer_add_event(w, "offcpu-time", &b, &id2, 1), 0);
	perfdata_writer_free(w);
}

Test(writer, samples_pick_their_event_by_id)
{
	int fd = tmp_file();
	struct perfdata_writer *w = new_writer(fd, false, 2);
	struct perfdata_sample s = { .id = 555 };

	cr_assert_eq(perfdata_writer_start(w), 0);
	write_samples(w, 2, 100);
	write_samples(w, 3, 101);
	cr_assert_eq(perfdata_write_sample(w, &s), -EINVAL, "unknown id");
	cr_assert_eq(perfdata_writer_finish(w), 0);
	cr_assert_eq(samples_on_file(fd), 5);
	cr_assert_eq(u64_at(32), 2 * 144);
	perfdata_writer_free(w);
	close(fd);
}

Test(writer, pipe_mode_never_seeks)
{
	int p[2];
	struct perfdata_writer *w;
	uint8_t bid[20] = { 9 };

	cr_assert_eq(pipe(p), 0);
	fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
	w = new_writer(p[1], true, 2);
	cr_assert_eq(perfdata_writer_start(w), 0);
	write_samples(w, 4, 101);
	cr_assert_eq(perfdata_writer_add_build_id(w, PERF_RECORD_MISC_USER, bid, 20, "/bin/x"), 0);
	cr_assert_eq(perfdata_write_finished_round(w), 0);
	cr_assert_eq(perfdata_writer_finish(w), 0);
	close(p[1]);
	free(file);
	file = malloc(1 << 20);
	file_len = 0;
	for (ssize_t n; (n = read(p[0], file + file_len, (1 << 20) - file_len)) > 0;)
		file_len += (size_t)n;
	close(p[0]);

	cr_assert_eq(memcmp(file, "PERFILE2", 8), 0);
	cr_assert_eq(u64_at(8), 16);
	cr_assert_eq(count_records(16, file_len, PERFDATA_RECORD_HEADER_ATTR), 2);
	cr_assert_eq(count_records(16, file_len, PERF_RECORD_SAMPLE), 4);
	cr_assert_eq(count_records(16, file_len, PERFDATA_RECORD_HEADER_BUILD_ID), 1);
	/* Attrs come before everything that uses them; features never use an unknown id. */
	size_t off = 16;
	bool seen_desc = false;
	int attrs = 0;
	while (off < file_len) {
		struct perf_event_header *h = (void *)(file + off);

		if (h->type == PERFDATA_RECORD_HEADER_ATTR)
			attrs++;
		else if (h->type == PERFDATA_RECORD_HEADER_FEATURE) {
			uint64_t feat = u64_at(off + 8);

			cr_assert_lt(feat, PERFDATA_FEAT_LAST, "no end marker or unknown feature");
			if (feat == PERFDATA_FEAT_EVENT_DESC) {
				cr_assert_eq(attrs, 2, "EVENT_DESC after the attrs");
				seen_desc = true;
			}
		} else {
			cr_assert_eq(attrs, 2);
		}
		off += h->size;
	}
	cr_assert(seen_desc);
	perfdata_writer_free(w);
}

/*
 * From here on the "disk" holds max bytes of any file: a write past it
 * fails with EFBIG (SIGXFSZ ignored) as on a full disk.
 */
static void limit_file_size(uint64_t max)
{
	struct rlimit rl = { .rlim_cur = max, .rlim_max = max };

	signal(SIGXFSZ, SIG_IGN);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
}

Test(writer, write_error_keeps_last_checkpoint, .signal = 0)
{
	int fd = tmp_file();
	struct perfdata_writer *w = new_writer(fd, false, 1);
	uint64_t good;

	cr_assert_eq(perfdata_writer_start(w), 0);
	write_samples(w, 100, 100);
	cr_assert_eq(perfdata_write_finished_round(w), 0);
	cr_assert_eq(perfdata_writer_checkpoint(w), 0);
	good = perfdata_writer_size(w);
	/* The "disk" fills 1000 bytes later: too little for the next buffer or the features. */
	limit_file_size(good + 1000);
	int err = 0;
	for (int i = 0; i < 50000 && !err; i++) {
		uint64_t chain[] = { PERF_CONTEXT_USER, 1, 2 };
		struct perfdata_sample s = { .id = 100, .time = 5000, .nr_callchain = 3,
					     .callchain = chain };
		err = perfdata_write_sample(w, &s);
	}
	cr_assert_eq(err, -EFBIG, "the write error reaches the caller");
	cr_assert_eq(perfdata_write_finished_round(w), -EFBIG, "and stays");
	cr_assert_eq(perfdata_writer_finish(w), -EFBIG);
	slurp(fd);
	/* Truncated to the checkpoint: a valid file with the first 100 samples. */
	cr_assert_eq(u64_at(40) + u64_at(48), good);
	cr_assert_eq(count_records(u64_at(40), good, PERF_RECORD_SAMPLE), 100);
	cr_assert_leq(file_len, good + 1000);
	perfdata_writer_free(w);
	close(fd);
}

Test(writer, write_error_with_room_for_features)
{
	int fd = tmp_file();
	struct perfdata_writer *w = new_writer(fd, false, 1);
	uint64_t good;

	cr_assert_eq(perfdata_writer_start(w), 0);
	write_samples(w, 10, 100);
	cr_assert_eq(perfdata_writer_checkpoint(w), 0);
	good = perfdata_writer_size(w);
	limit_file_size(good + 60000);	/* features fit, 200 KiB of samples do not */
	write_samples(w, 4000, 100);
	cr_assert_eq(perfdata_writer_finish(w), -EFBIG);
	slurp(fd);
	cr_assert_eq(u64_at(48), good - u64_at(40));
	cr_assert(feature_bit(PERFDATA_FEAT_HOSTNAME), "features written after the checkpoint");
	perfdata_writer_free(w);
	close(fd);
}

Test(writer, enospc_at_start)
{
	int fd = open("/dev/full", O_WRONLY);
	struct perfdata_writer *w;

	cr_assert_geq(fd, 0);
	w = new_writer(fd, true, 1);
	cr_assert_eq(perfdata_writer_start(w), -ENOSPC);
	cr_assert_eq(perfdata_write_finished_round(w), -ENOSPC);
	perfdata_writer_free(w);
	close(fd);
}

Test(writer, misuse_is_einval)
{
	struct perfdata_writer *w;
	struct perfdata_sample s = { 0 };
	struct perf_event_attr a = cpu_clock_attr();
	uint64_t id = 1;

	cr_assert_eq(perfdata_writer_new(-1, NULL, &w), 0);
	cr_assert_eq(perfdata_writer_start(w), -EINVAL, "no events");
	cr_assert_eq(perfdata_write_sample(w, &s), -EINVAL, "not started");
	cr_assert_eq(perfdata_writer_add_event(w, "cpu-clock", &a, &id, 1), 0);
	cr_assert_eq(perfdata_writer_add_build_id(w, 0, (uint8_t[21]){ 0 }, 21, "x"), -EINVAL);
	perfdata_writer_free(w);
}
