// SPDX-License-Identifier: MIT
/*
 * -z: the zstd streams of perfdata/compress.c, and COMPRESSED records as the
 * writer lays them out and the reader takes them apart: perf's layout (one
 * flushed stream, u16 record sizes, rounds outside, every piece at most
 * mmap_len when decompressed), round trips in file and pipe mode, the
 * checkpointed prefix of an unfinished file, and hostile input (corrupt
 * data, a stream that ends inside a record, a piece that inflates to far
 * more than memory should hold).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "perfdata/compress.h"
#include "perfdata/reader.h"
#include "perfdata/writer.h"
#include "tests/unit/test_roundtrip.h"

#define MMAP_LEN 528384u	/* what the writer puts in the COMPRESSED feature */

static uint64_t u64_at(const uint8_t *f, size_t off)
{
	uint64_t v;

	memcpy(&v, f + off, 8);
	return v;
}

/* ---- the module itself ---------------------------------------------------- */

Test(zstd, stream_round_trip_with_flushes)
{
	struct perfdata_zstd_enc *e;
	struct perfdata_zstd_dec *d;
	size_t n = 1 << 20, zlen = 0, got = 0;
	uint8_t *src = malloc(n), *z = malloc(n), *dst = malloc(n);

	for (size_t i = 0; i < n; i++)
		src[i] = (uint8_t)(i % 251 ^ (i >> 9));
	cr_assert_eq(perfdata_zstd_enc_new(3, &e), 0);
	cr_assert_eq(perfdata_zstd_dec_new(&d), 0);
	/* Four pieces, each flushed: each decompresses whole on its own. */
	for (int piece = 0; piece < 4; piece++) {
		struct perfdata_zstd_buf in = { src + piece * (n / 4), n / 4, 0 };
		struct perfdata_zstd_buf out = { z + zlen, n - zlen, 0 };
		struct perfdata_zstd_buf zin, dout;

		cr_assert_eq(perfdata_zstd_compress(e, &in, &out, false), 0);
		cr_assert_eq(in.pos, in.size);
		cr_assert_eq(perfdata_zstd_compress(e, &in, &out, true), 0, "flush completes");
		zin = (struct perfdata_zstd_buf){ z + zlen, out.pos, 0 };
		dout = (struct perfdata_zstd_buf){ dst + got, n - got, 0 };
		cr_assert_eq(perfdata_zstd_decompress(d, &zin, &dout), 0);
		cr_assert_eq(dout.pos, n / 4, "piece %d decompressed to %zu bytes", piece, dout.pos);
		zlen += out.pos;
		got += dout.pos;
	}
	cr_assert_eq(memcmp(src, dst, n), 0);
	cr_assert_lt(zlen, n / 4, "compressible data compressed: %zu bytes", zlen);
	perfdata_zstd_enc_free(e);
	perfdata_zstd_dec_free(d);
	free(src);
	free(z);
	free(dst);
}

Test(zstd, flush_into_a_small_buffer_continues)
{
	struct perfdata_zstd_enc *e;
	size_t n = 256 << 10, total = 0;
	uint8_t *src = malloc(n), out_mem[512];
	struct perfdata_zstd_buf in = { src, n, 0 };
	int ret, calls = 0;

	srand(7);
	for (size_t i = 0; i < n; i++)
		src[i] = (uint8_t)rand();	/* incompressible: the output is as large */
	cr_assert_eq(perfdata_zstd_enc_new(1, &e), 0);
	do {
		struct perfdata_zstd_buf out = { out_mem, sizeof(out_mem), 0 };

		ret = perfdata_zstd_compress(e, &in, &out, true);
		cr_assert_geq(ret, 0);
		total += out.pos;
		calls++;
	} while (ret == 1);
	cr_assert_eq(in.pos, n);
	cr_assert_geq(total, n, "random data does not shrink (%zu)", total);
	cr_assert_gt(calls, (int)(n / sizeof(out_mem)) - 1);
	perfdata_zstd_enc_free(e);
	free(src);
}

Test(zstd, bad_level_and_corrupt_input)
{
	struct perfdata_zstd_enc *e;
	struct perfdata_zstd_dec *d;
	uint8_t junk[64], out_mem[64];
	struct perfdata_zstd_buf in = { junk, sizeof(junk), 0 }, out = { out_mem, sizeof(out_mem), 0 };

	cr_assert_eq(perfdata_zstd_enc_new(0, &e), -EINVAL);
	cr_assert_eq(perfdata_zstd_enc_new(23, &e), -EINVAL);
	memset(junk, 0x5a, sizeof(junk));
	cr_assert_eq(perfdata_zstd_dec_new(&d), 0);
	cr_assert_eq(perfdata_zstd_decompress(d, &in, &out), -EPROTO);
	cr_assert(strstr(perfdata_zstd_dec_error(d), "zstd: "), "%s", perfdata_zstd_dec_error(d));
	perfdata_zstd_dec_free(d);
}

/* ---- the writer's layout ---------------------------------------------------- */

#define SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		     PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

static struct perfdata_writer *new_writer(int fd, bool pipe, int level)
{
	struct perfdata_writer_opts o = { .pipe = pipe, .compression_level = level };
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = 999, .freq = 1, .sample_type = SAMPLE_TYPE, .sample_id_all = 1,
		.mmap = 1, .comm = 1, .mmap2 = 1, .use_clockid = 1, .clockid = CLOCK_MONOTONIC,
	};
	uint64_t id = 42;

	return trip_writer(fd, &o, "cpu-clock", &a, &id, 1);
}

/*
 * Sample i: a callchain whose length and addresses vary with i (so records
 * of many sizes, some large, straddle the pieces), time 1000 + i.
 */
static void write_sample(struct perfdata_writer *w, uint64_t i)
{
	static uint64_t chain[1 + 2000];
	size_t nr = 1 + (i * 37) % 200 + (i % 97 == 0 ? 1500 : 0);
	struct perfdata_sample s = { .misc = PERF_RECORD_MISC_USER, .id = 42, .ip = 0x401000 + i,
				     .pid = 7, .tid = 7 + (uint32_t)(i % 3), .time = 1000 + i,
				     .period = 1000000, .nr_callchain = nr, .callchain = chain };

	chain[0] = PERF_CONTEXT_USER;
	for (size_t k = 1; k < nr; k++)
		chain[k] = 0x400000 + ((i * 131 + k * 17) % 4096) * 16;
	cr_assert_eq(perfdata_write_sample(w, &s), 0);
}

static void check_sample(const struct perfdata_sample *s, uint64_t i)
{
	size_t nr = 1 + (i * 37) % 200 + (i % 97 == 0 ? 1500 : 0);

	cr_assert_eq(s->time, 1000 + i, "sample %llu has time %llu", (unsigned long long)i,
		     (unsigned long long)s->time);
	cr_assert_eq(s->ip, 0x401000 + i);
	cr_assert_eq(s->tid, 7 + (uint32_t)(i % 3));
	cr_assert_eq(s->nr_callchain, nr);
	for (size_t k = 1; k < nr; k++)
		cr_assert_eq(s->callchain[k], 0x400000 + ((i * 131 + k * 17) % 4096) * 16);
}

/* Decompress one piece on its own (continuing the stream): its size. */
static size_t piece_size(struct perfdata_zstd_dec *d, const uint8_t *payload, size_t len)
{
	static uint8_t out_mem[4 << 20];
	struct perfdata_zstd_buf in = { (void *)payload, len, 0 };
	struct perfdata_zstd_buf out = { out_mem, sizeof(out_mem), 0 };

	cr_assert_eq(perfdata_zstd_decompress(d, &in, &out), 0);
	cr_assert_lt(out.pos, sizeof(out_mem));
	return out.pos;
}

Test(writer_z, file_layout_as_perf_writes_it)
{
	int fd = trip_memfd("test_compress");
	struct perfdata_writer *w = new_writer(fd, false, 1);
	struct perfdata_zstd_dec *d;
	size_t len, off, end, nr_z = 0, nr_rounds = 0, plain = 0;
	uint64_t zin, zout;
	uint8_t *f;
	const int n = 20000;

	for (int i = 0; i < n; i++) {
		write_sample(w, (uint64_t)i);
		if (i % 2000 == 1999)
			cr_assert_eq(perfdata_write_finished_round(w), 0);
	}
	cr_assert_eq(perfdata_writer_finish(w), 0);
	perfdata_writer_compression_stats(w, &zin, &zout);
	cr_assert_null(perfdata_writer_compression_error(w));
	f = trip_slurp(fd, &len);
	cr_assert_eq(perfdata_writer_size(w), u64_at(f, 40) + u64_at(f, 48),
		     "the size the writer reports is the compressed size on disk");
	perfdata_writer_free(w);

	/* Only COMPRESSED records and FINISHED_ROUNDs in the data section, after the feature. */
	cr_assert_eq(perfdata_zstd_dec_new(&d), 0);
	off = u64_at(f, 40);
	end = off + u64_at(f, 48);
	while (off < end) {
		struct perf_event_header h;

		memcpy(&h, f + off, sizeof(h));
		cr_assert_geq(h.size, 8);
		cr_assert_leq(off + h.size, end);
		if (h.type == PERFDATA_RECORD_COMPRESSED) {
			size_t p = piece_size(d, f + off + 8, h.size - 8u);

			cr_assert_leq(p, MMAP_LEN, "a piece decompresses to %zu bytes, past mmap_len", p);
			plain += p;
			nr_z++;
		} else if (h.type == PERFDATA_RECORD_HEADER_FEATURE) {
			/* COMPRESSED, first, for perf to read a file killed before finish */
			cr_assert_eq(off, u64_at(f, 40));
			cr_assert_eq(u64_at(f, off + 8), PERFDATA_FEAT_COMPRESSED);
		} else {
			cr_assert_eq(h.type, PERFDATA_RECORD_FINISHED_ROUND, "type %u outside", h.type);
			cr_assert_eq(h.size, 8);
			nr_rounds++;
		}
		off += h.size;
	}
	cr_assert_eq(off, end);
	cr_assert_eq(nr_rounds, n / 2000);
	cr_assert_gt(nr_z, nr_rounds, "large rounds span several COMPRESSED records");
	cr_assert_eq(plain, zin, "every byte fed came out (%zu of %llu)", plain,
		     (unsigned long long)zin);
	cr_assert_lt(zout * 3, zin, "compressed %llu -> %llu", (unsigned long long)zin,
		     (unsigned long long)zout);
	/* The COMPRESSED feature (bit 27) is set. */
	cr_assert(u64_at(f, 72) >> PERFDATA_FEAT_COMPRESSED & 1);
	perfdata_zstd_dec_free(d);
	free(f);
	close(fd);
}

/* Read every record; check the samples are 0..n-1 in order. Returns the COMPRESSED count. */
static size_t read_back(int fd, uint64_t n, uint32_t *level_out)
{
	struct perfdata_reader *r;
	const struct perf_event_header *h;
	uint64_t next = 0;
	size_t nr_z = 0, fsize;
	const uint32_t *feat;
	int ret;

	r = trip_reader(fd, "z.data");
	while ((ret = perfdata_reader_next(r, &h)) > 0) {
		if (h->type == PERFDATA_RECORD_COMPRESSED) {
			cr_assert(!perfdata_reader_in_compressed(r));
			nr_z++;
		}
		if (h->type == PERF_RECORD_SAMPLE) {
			struct perfdata_sample s;

			cr_assert(perfdata_reader_in_compressed(r));
			cr_assert_eq(perfdata_reader_parse_sample(r, h, &s, NULL), 0);
			check_sample(&s, next++);
		}
	}
	cr_assert_eq(ret, 0, "%s", perfdata_reader_error(r));
	cr_assert_eq(next, n, "read %llu of %llu samples", (unsigned long long)next,
		     (unsigned long long)n);
	feat = perfdata_reader_feature(r, PERFDATA_FEAT_COMPRESSED, &fsize);
	cr_assert_not_null(feat);
	cr_assert_geq(fsize, 20);	/* a pipe pads the HEADER_FEATURE to 8 */
	cr_assert_eq(feat[1], 1, "type zstd");
	cr_assert_eq(feat[4], MMAP_LEN);
	*level_out = feat[2];
	perfdata_reader_free(r);
	return nr_z;
}

/*
 * A file and a pipe: each at its level, with a FINISHED_ROUND every
 * round_every samples, reads back whole, in more than one COMPRESSED
 * record. In a pipe the feature travels as a HEADER_FEATURE before the
 * first COMPRESSED record.
 */
static const struct {
	const char *name;
	bool pipe;
	uint32_t level;
	uint64_t n, round_every;
} trips[] = {
	{ "file", false, 5, 5000, 300 },
	{ "pipe", true, 1, 3000, 500 },
};

Test(writer_z, round_trip_through_the_reader)
{
	for (size_t t = 0; t < sizeof(trips) / sizeof(trips[0]); t++) {
		int fd = trip_memfd("test_compress");
		struct perfdata_writer *w = new_writer(fd, trips[t].pipe, (int)trips[t].level);
		uint32_t level;

		for (uint64_t i = 0; i < trips[t].n; i++) {
			write_sample(w, i);
			if (i % trips[t].round_every == trips[t].round_every - 1)
				cr_assert_eq(perfdata_write_finished_round(w), 0, "%s", trips[t].name);
		}
		trip_finish(w, fd);
		cr_assert_gt(read_back(fd, trips[t].n, &level), 1, "%s: COMPRESSED records",
			     trips[t].name);
		cr_assert_eq(level, trips[t].level, "%s: level", trips[t].name);
		close(fd);
	}
}

Test(writer_z, checkpointed_prefix_decompresses_whole)
{
	int fd = trip_memfd("test_compress"), copy = trip_memfd("test_compress");
	struct perfdata_writer *w = new_writer(fd, false, 1);
	struct perfdata_reader *r;
	const struct perf_event_header *h;
	uint8_t *f;
	size_t len;
	int ret, samples = 0;

	for (uint64_t i = 0; i < 700; i++)
		write_sample(w, i);
	cr_assert_eq(perfdata_writer_checkpoint(w), 0);
	for (uint64_t i = 700; i < 900; i++)
		write_sample(w, i);	/* buffered or in zstd: not covered */
	/* What a SIGKILL now leaves: data.size covers whole pieces only. */
	f = trip_slurp(fd, &len);
	cr_assert_eq(write(copy, f, len), (ssize_t)len);
	perfdata_writer_free(w);
	r = trip_reader(copy, "killed.data");
	while ((ret = perfdata_reader_next(r, &h)) > 0)
		if (h->type == PERF_RECORD_SAMPLE) {
			struct perfdata_sample s;

			cr_assert_eq(perfdata_reader_parse_sample(r, h, &s, NULL), 0);
			check_sample(&s, (uint64_t)samples++);
		}
	cr_assert_eq(ret, 0, "%s", perfdata_reader_error(r));
	cr_assert_eq(samples, 700);
	perfdata_reader_free(r);
	free(f);
	close(fd);
	close(copy);
}

/* ---- hostile input to the reader -------------------------------------------- */

/* A pipe-mode stream: header, one HEADER_ATTR, then COMPRESSED records of `payload`. */
static int pipe_file_with(const uint8_t *payload, size_t len, size_t piece)
{
	int fd = trip_memfd("test_compress");
	struct perfdata_pipe_header ph = { PERFDATA_MAGIC, PERFDATA_PIPE_HEADER_SIZE };
	struct {
		struct perf_event_header h;
		uint8_t attr[PERFDATA_ATTR_SIZE];
		uint64_t id;
	} a;

	memset(&a, 0, sizeof(a));
	a.h = (struct perf_event_header){ PERFDATA_RECORD_HEADER_ATTR, 0, sizeof(a) };
	((struct perf_event_attr *)a.attr)->size = PERFDATA_ATTR_SIZE;
	((struct perf_event_attr *)a.attr)->sample_type = PERF_SAMPLE_IP;
	a.id = 1;
	cr_assert_eq(write(fd, &ph, sizeof(ph)), (ssize_t)sizeof(ph));
	cr_assert_eq(write(fd, &a, sizeof(a)), (ssize_t)sizeof(a));
	for (size_t off = 0; off < len; off += piece) {
		size_t n = len - off < piece ? len - off : piece;
		struct perf_event_header h = { PERFDATA_RECORD_COMPRESSED, 0, (uint16_t)(8 + n) };

		cr_assert_eq(write(fd, &h, 8), 8);
		cr_assert_eq(write(fd, payload + off, n), (ssize_t)n);
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* Compress len bytes at level 19 in one flushed piece. */
static uint8_t *zstd_of(const uint8_t *src, size_t len, size_t *zlen)
{
	struct perfdata_zstd_enc *e;
	size_t cap = len + 4096;
	uint8_t *z = malloc(cap);
	struct perfdata_zstd_buf in = { (void *)src, len, 0 }, out = { z, cap, 0 };

	cr_assert_eq(perfdata_zstd_enc_new(19, &e), 0);
	cr_assert_eq(perfdata_zstd_compress(e, &in, &out, true), 0);
	perfdata_zstd_enc_free(e);
	*zlen = out.pos;
	return z;
}

static int read_records(int fd, uint64_t *nr, char *err, size_t errlen)
{
	struct perfdata_reader *r;
	const struct perf_event_header *h;
	int ret;

	*nr = 0;
	r = trip_reader(fd, "z.data");
	while ((ret = perfdata_reader_next(r, &h)) > 0)
		*nr += perfdata_reader_in_compressed(r);
	snprintf(err, errlen, "%s", perfdata_reader_error(r));
	perfdata_reader_free(r);
	return ret;
}

Test(reader_z, a_piece_that_inflates_enormously_is_refused_in_bounded_memory)
{
	/* 256 MiB of FINISHED_ROUNDs zstd-compresses to a few KiB: one piece. Streamed in a
	 * fixed buffer, and refused once past perf's own bound for one record. */
	size_t len = 256u << 20, zlen;
	uint8_t *src = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct perf_event_header round = { PERFDATA_RECORD_FINISHED_ROUND, 0, 8 };
	struct rusage before, after;
	uint8_t *z;
	uint64_t nr;
	char err[512];
	int fd;

	cr_assert_neq(src, MAP_FAILED);
	for (size_t off = 0; off < len; off += 8)
		memcpy(src + off, &round, 8);
	z = zstd_of(src, len, &zlen);
	munmap(src, len);
	cr_assert_lt(zlen, 65000, "the bomb fits one record (%zu bytes)", zlen);
	fd = pipe_file_with(z, zlen, zlen);
	getrusage(RUSAGE_SELF, &before);
	cr_assert_lt(read_records(fd, &nr, err, sizeof(err)), 0);
	getrusage(RUSAGE_SELF, &after);
	/* No COMPRESSED feature: at most 64 MiB from one record, then an error. */
	cr_assert(strstr(err, "compressed record at offset 0x") && strstr(err, "inflates past 67108864"),
		  "%s", err);
	cr_assert_leq(nr, (64u << 20) / 8);
	cr_assert_gt(nr, (60u << 20) / 8, "records up to the cap are yielded (%llu)",
		     (unsigned long long)nr);
	/* Peak RSS may not grow by what was inflated: 32 MiB is far below 64. */
	cr_assert_lt(after.ru_maxrss - before.ru_maxrss, 32 * 1024,
		     "peak RSS grew by %ld KiB", after.ru_maxrss - before.ru_maxrss);
	free(z);
	close(fd);
}

Test(reader_z, records_straddle_pieces_and_errors_name_the_offset)
{
	/* Three 4 KiB SAMPLE-less records (type 70: unknown user type), split in 100-byte pieces. */
	uint8_t recs[3 * 4096];
	size_t zlen;
	uint8_t *z;
	uint64_t nr;
	char err[512];
	int fd;

	memset(recs, 0xab, sizeof(recs));
	for (int i = 0; i < 3; i++) {
		struct perf_event_header h = { 70, 0, 4096 };

		memcpy(recs + i * 4096, &h, sizeof(h));
	}
	z = zstd_of(recs, sizeof(recs), &zlen);
	fd = pipe_file_with(z, zlen, 100);
	cr_assert_eq(read_records(fd, &nr, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(nr, 3);
	close(fd);

	/* The stream stops inside the last record. */
	free(z);
	z = zstd_of(recs, sizeof(recs) - 100, &zlen);
	fd = pipe_file_with(z, zlen, 100);
	cr_assert_lt(read_records(fd, &nr, err, sizeof(err)), 0);
	cr_assert_eq(nr, 2);
	cr_assert(strstr(err, "end inside a record"), "%s", err);
	close(fd);

	/* Corrupt payload: an error that names the record's offset. */
	memset(z, 0x11, zlen);
	fd = pipe_file_with(z, zlen, zlen);
	cr_assert_lt(read_records(fd, &nr, err, sizeof(err)), 0);
	cr_assert(strstr(err, "compressed record at offset 0x"), "%s", err);
	cr_assert(strstr(err, "zstd: "), "%s", err);
	close(fd);
	free(z);
}
