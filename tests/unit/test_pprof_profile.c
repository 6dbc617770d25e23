// SPDX-License-Identifier: MIT
/*
 * Unit tests for tools/pprof/profile.c: dedup of every table, ids, sample
 * aggregation, labels, UTF-8 clean-up and the gzip output, checked by
 * decoding the bytes back with an independent decoder.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "tools/pprof/profile.h"
#include "test_pprof_decode.h"

static struct tp_profile *round_trip(const struct pprof_builder *b)
{
	struct tpb_buf m = { 0 };
	struct tp_profile *p;

	cr_assert_eq(pprof_serialize(b, tpb_sink, &m), 0);
	p = tp_decode(m.data, m.len);
	free(m.data);
	return p;
}

static struct pprof_builder *new_cpu_builder(void)
{
	struct pprof_builder *b;

	cr_assert_eq(pprof_builder_new(&b), 0);
	cr_assert_eq(pprof_add_sample_type(b, "samples", "count"), 0);
	cr_assert_eq(pprof_add_sample_type(b, "cpu", "nanoseconds"), 0);
	return b;
}

Test(profile, empty_profile_is_valid)
{
	struct pprof_builder *b;

	cr_assert_eq(pprof_builder_new(&b), 0);
	struct tp_profile *p = round_trip(b);

	cr_assert_eq(p->nr_strings, 1);
	cr_assert_eq(p->nr_samples, 0);
	tp_free(p);
	pprof_builder_free(b);
}

Test(profile, strings_dedup_and_zero_is_empty)
{
	struct pprof_builder *b;

	cr_assert_eq(pprof_builder_new(&b), 0);
	cr_assert_eq(pprof_string(b, ""), 0);
	cr_assert_eq(pprof_string(b, NULL), 0);
	cr_assert_eq(pprof_string(b, "main"), 1);
	cr_assert_eq(pprof_string(b, "work"), 2);
	cr_assert_eq(pprof_string(b, "main"), 1);
	cr_assert_eq(pprof_nr_strings(b), 3);
	pprof_builder_free(b);
}

Test(profile, invalid_utf8_is_replaced)
{
	struct pprof_builder *b;

	cr_assert_eq(pprof_builder_new(&b), 0);
	int64_t bad = pprof_string(b, "a\xff" "b\xc3");	/* stray byte, truncated sequence */
	int64_t overlong = pprof_string(b, "\xc0\xaf");
	int64_t surrogate = pprof_string(b, "\xed\xa0\x80");
	int64_t good = pprof_string(b, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5");

	struct tp_profile *p = round_trip(b);

	cr_assert_str_eq(p->strings[bad], "a\xef\xbf\xbd" "b\xef\xbf\xbd");
	cr_assert_str_eq(p->strings[overlong], "\xef\xbf\xbd\xef\xbf\xbd");
	cr_assert_str_eq(p->strings[surrogate], "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	cr_assert_str_eq(p->strings[good], "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5",
			 "valid UTF-8 is kept as is");
	tp_free(p);
	pprof_builder_free(b);
}

Test(profile, header_fields)
{
	struct pprof_builder *b = new_cpu_builder();

	cr_assert_eq(pprof_set_period(b, "cpu", "nanoseconds", 250000), 0);
	pprof_set_time(b, 1700000000123456789LL, 1500000000LL);
	cr_assert_eq(pprof_add_comment(b, "converted by test"), 0);
	cr_assert_eq(pprof_set_default_sample_type(b, "cpu"), 0);

	struct tp_profile *p = round_trip(b);

	cr_assert_eq(p->nr_types, 2);
	cr_assert_str_eq(p->types[0][0], "samples");
	cr_assert_str_eq(p->types[0][1], "count");
	cr_assert_str_eq(p->types[1][0], "cpu");
	cr_assert_str_eq(p->types[1][1], "nanoseconds");
	cr_assert_str_eq(p->period_type[0], "cpu");
	cr_assert_str_eq(p->period_type[1], "nanoseconds");
	cr_assert_eq(p->period, 250000);
	cr_assert_eq(p->time_nanos, 1700000000123456789LL);
	cr_assert_eq(p->duration_nanos, 1500000000LL);
	cr_assert_eq(p->nr_comments, 1);
	cr_assert_str_eq(p->comments[0], "converted by test");
	cr_assert_str_eq(p->default_sample_type, "cpu");
	tp_free(p);
	pprof_builder_free(b);
}

Test(profile, mappings_dedup_ids_and_flags)
{
	struct pprof_builder *b = new_cpu_builder();
	struct pprof_mapping exe = { 0x400000, 0x401000, 0x1000, "/bin/prog", "abcd01", 0 };
	struct pprof_mapping libc = { 0x7f0000, 0x7f8000, 0, "/lib/libc.so.6", NULL, 0 };
	struct pprof_mapping jit1 = { 0x10000, 0x20000, 0, "//anon", NULL, 101 };
	struct pprof_mapping jit2 = { 0x10000, 0x20000, 0, "//anon", NULL, 102 };
	uint64_t id[6];

	cr_assert_eq(pprof_mapping(b, &exe, &id[0]), 0);
	cr_assert_eq(pprof_mapping(b, &libc, &id[1]), 0);
	cr_assert_eq(pprof_mapping(b, &exe, &id[2]), 0);
	cr_assert_eq(pprof_mapping(b, &jit1, &id[3]), 0);
	cr_assert_eq(pprof_mapping(b, &jit2, &id[4]), 0);
	cr_assert_eq(id[0], 1);
	cr_assert_eq(id[1], 2);
	cr_assert_eq(id[2], 1, "same mapping, same id");
	cr_assert_eq(id[3], 3);
	cr_assert_eq(id[4], 4, "the discriminator keeps JIT mappings of two processes apart");
	cr_assert_eq(pprof_mapping_add_flags(b, 1, PPROF_HAS_FUNCTIONS), 0);
	cr_assert_eq(pprof_mapping_add_flags(b, 1, PPROF_HAS_LINE_NUMBERS | PPROF_HAS_FILENAMES), 0);
	cr_assert_eq(pprof_mapping_add_flags(b, 9, PPROF_HAS_FUNCTIONS), -EINVAL);
	cr_assert_eq(pprof_mapping_add_flags(b, 0, PPROF_HAS_FUNCTIONS), -EINVAL);

	struct tp_profile *p = round_trip(b);
	const struct tp_mapping *m = tp_mapping(p, 1);

	cr_assert_eq(p->nr_mappings, 4);
	cr_assert_eq(m->start, 0x400000);
	cr_assert_eq(m->limit, 0x401000);
	cr_assert_eq(m->offset, 0x1000);
	cr_assert_str_eq(m->filename, "/bin/prog");
	cr_assert_str_eq(m->build_id, "abcd01");
	cr_assert(m->has_functions && m->has_filenames && m->has_line_numbers);
	cr_assert(!m->has_inline_frames, "flags are only what was added");
	m = tp_mapping(p, 2);
	cr_assert_str_eq(m->build_id, "");
	cr_assert(!m->has_functions);
	tp_free(p);
	pprof_builder_free(b);
}

Test(profile, functions_and_locations_dedup)
{
	struct pprof_builder *b = new_cpu_builder();
	struct pprof_mapping exe = { 0x400000, 0x401000, 0, "/bin/prog", NULL, 0 };
	/* An inlined frame: leaf_inl inlined into work, innermost first. */
	struct pprof_line inl[] = {
		{ "leaf_inl", NULL, "prog.c", 12 },
		{ "work", NULL, "prog.c", 30 },
	};
	struct pprof_line work[] = { { "work", NULL, "prog.c", 31 } };
	struct pprof_line work_other_line[] = { { "work", NULL, "prog.c", 32 } };
	uint64_t mid, l1, l2, l3, l4, l5, f1, f2;

	cr_assert_eq(pprof_mapping(b, &exe, &mid), 0);
	cr_assert_eq(pprof_location(b, mid, 0x400100, inl, 2, &l1), 0);
	cr_assert_eq(pprof_location(b, mid, 0x400200, work, 1, &l2), 0);
	cr_assert_eq(pprof_location(b, mid, 0x400100, inl, 2, &l3), 0);
	cr_assert_eq(pprof_location(b, mid, 0x400200, work_other_line, 1, &l4), 0);
	cr_assert_eq(pprof_location(b, 0, 0xdead, NULL, 0, &l5), 0);
	cr_assert_eq(pprof_location(b, 7, 0xdead, NULL, 0, &l5), -EINVAL, "unknown mapping");
	cr_assert_eq(l1, 1);
	cr_assert_eq(l2, 2);
	cr_assert_eq(l3, 1, "same address and lines: same location");
	cr_assert_eq(l4, 3, "same address, different lines: another location");
	cr_assert_eq(pprof_nr_locations(b), 4);
	cr_assert_eq(pprof_nr_functions(b), 2, "leaf_inl and work, whatever the line");
	cr_assert_eq(pprof_function(b, "work", NULL, "prog.c", 0, &f1), 0);
	cr_assert_eq(pprof_function(b, "work", "_Z4workv", "prog.c", 0, &f2), 0);
	cr_assert_eq(f1, 2);
	cr_assert_eq(f2, 3, "another system name is another function");

	struct tp_profile *p = round_trip(b);
	const struct tp_location *loc = tp_location(p, 1);

	cr_assert_eq(loc->mapping_id, 1);
	cr_assert_eq(loc->address, 0x400100);
	cr_assert_eq(loc->nr_lines, 2);
	cr_assert_str_eq(tp_function(p, loc->lines[0].function_id)->name, "leaf_inl");
	cr_assert_eq(loc->lines[0].line, 12);
	cr_assert_str_eq(tp_function(p, loc->lines[1].function_id)->name, "work");
	cr_assert_eq(loc->lines[1].line, 30);
	const struct tp_function *fn = tp_function(p, loc->lines[0].function_id);

	cr_assert_str_eq(fn->system_name, "leaf_inl", "system name defaults to the name");
	cr_assert_str_eq(fn->filename, "prog.c");
	loc = tp_location(p, 4);
	cr_assert_eq(loc->mapping_id, 0);
	cr_assert_eq(loc->address, 0xdead);
	cr_assert_eq(loc->nr_lines, 0);
	tp_free(p);
	pprof_builder_free(b);
}

Test(profile, samples_aggregate_by_stack_and_labels)
{
	struct pprof_builder *b = new_cpu_builder();
	struct pprof_line a[] = { { "a", NULL, NULL, 0 } }, m[] = { { "main", NULL, NULL, 0 } };
	uint64_t la, lm;
	struct pprof_label p1[] = { { "pid", NULL, 10, NULL }, { "comm", "prog", 0, NULL } };
	struct pprof_label p2[] = { { "pid", NULL, 11, NULL }, { "comm", "prog", 0, NULL } };
	int64_t v[] = { 1, 250000 }, v2[] = { 1, 500000 };

	cr_assert_eq(pprof_location(b, 0, 0x10, a, 1, &la), 0);
	cr_assert_eq(pprof_location(b, 0, 0x20, m, 1, &lm), 0);
	uint64_t stack[] = { la, lm }, other[] = { lm };

	cr_assert_eq(pprof_add_sample(b, stack, 2, v, p1, 2), 0);
	cr_assert_eq(pprof_add_sample(b, stack, 2, v2, p1, 2), 0);
	cr_assert_eq(pprof_add_sample(b, stack, 2, v, p2, 2), 0);
	cr_assert_eq(pprof_add_sample(b, other, 1, v, p1, 2), 0);
	cr_assert_eq(pprof_add_sample(b, stack, 2, v, NULL, 0), 0);
	cr_assert_eq(pprof_add_sample(b, stack, 2, v, p1, 2), 0);
	cr_assert_eq(pprof_nr_samples(b), 4);
	uint64_t bad[] = { 99 };

	cr_assert_eq(pprof_add_sample(b, bad, 1, v, NULL, 0), -EINVAL, "unknown location");
	cr_assert_eq(pprof_add_sample_type(b, "late", "count"), -EINVAL,
		     "types cannot change once samples exist");

	struct tp_profile *p = round_trip(b);

	cr_assert_eq(p->nr_samples, 4);
	const struct tp_sample *s = &p->samples[0];

	cr_assert_eq(s->nr_locs, 2);
	cr_assert_eq(s->locs[0], la, "leaf first");
	cr_assert_eq(s->locs[1], lm);
	cr_assert_eq(s->values[0], 3);
	cr_assert_eq(s->values[1], 1000000);
	cr_assert_eq(s->nr_labels, 2);
	cr_assert_str_eq(s->labels[0].key, "pid");
	cr_assert_eq(s->labels[0].num, 10);
	cr_assert_null(s->labels[0].str);
	cr_assert_str_eq(s->labels[1].key, "comm");
	cr_assert_str_eq(s->labels[1].str, "prog");
	cr_assert_eq(p->samples[1].labels[0].num, 11);
	cr_assert_eq(p->samples[1].values[0], 1);
	cr_assert_eq(p->samples[2].nr_locs, 1);
	cr_assert_eq(p->samples[3].nr_labels, 0);
	tp_free(p);
	pprof_builder_free(b);
}

Test(profile, numeric_label_units)
{
	struct pprof_builder *b = new_cpu_builder();
	struct pprof_label l[] = { { "cpu", NULL, 0, "cpu" }, { "bytes", NULL, 4096, "bytes" } };
	int64_t v[] = { 1, 1 };

	cr_assert_eq(pprof_add_sample(b, NULL, 0, v, l, 2), 0);

	struct tp_profile *p = round_trip(b);

	cr_assert_str_eq(p->samples[0].labels[0].key, "cpu");
	cr_assert_eq(p->samples[0].labels[0].num, 0);
	cr_assert_str_eq(p->samples[0].labels[0].unit, "cpu");
	cr_assert_eq(p->samples[0].labels[1].num, 4096);
	cr_assert_str_eq(p->samples[0].labels[1].unit, "bytes");
	tp_free(p);
	pprof_builder_free(b);
}

Test(profile, sample_needs_types)
{
	struct pprof_builder *b;
	int64_t v[] = { 1 };

	cr_assert_eq(pprof_builder_new(&b), 0);
	cr_assert_eq(pprof_add_sample(b, NULL, 0, v, NULL, 0), -EINVAL);
	pprof_builder_free(b);
}

/* Large enough that serialization flushes many times; written gzip-compressed to a file. */
Test(profile, gzip_file_round_trip)
{
	struct pprof_builder *b = new_cpu_builder();
	char path[] = "/tmp/test_pprof_profile.XXXXXX";
	int fd = mkstemp(path);
	enum { NLOC = 5000 };
	static uint64_t locs[NLOC];
	char name[64];

	cr_assert_geq(fd, 0);
	unlink(path);
	for (int i = 0; i < NLOC; i++) {
		struct pprof_line line = { name, NULL, "big.c", i };

		snprintf(name, sizeof(name), "function_number_%d", i);
		cr_assert_eq(pprof_location(b, 0, 0x1000 + i, &line, 1, &locs[i]), 0);
	}
	for (int i = 0; i < NLOC; i++) {
		int64_t v[] = { 1, i };

		cr_assert_eq(pprof_add_sample(b, &locs[i], NLOC - i > 64 ? 64 : NLOC - i, v, NULL, 0), 0);
	}
	cr_assert_eq(pprof_write_gzip(b, fd), 0);

	size_t len = lseek(fd, 0, SEEK_END);
	uint8_t *gz = malloc(len);

	cr_assert_eq(pread(fd, gz, len, 0), (ssize_t)len);
	uint8_t *plain = tp_gunzip(gz, &len);
	struct tp_profile *p = tp_decode(plain, len);

	cr_assert_eq(p->nr_locations, NLOC);
	cr_assert_eq(p->nr_functions, NLOC);
	cr_assert_eq(p->nr_samples, NLOC);
	cr_assert_eq(p->samples[NLOC - 1].values[1], NLOC - 1);
	cr_assert_str_eq(tp_loc_name(p, p->samples[42].locs[0]), "function_number_42");
	cr_assert_eq(tp_location(p, 4243)->lines[0].line, 4242);
	tp_free(p);
	free(plain);
	free(gz);
	close(fd);
	pprof_builder_free(b);
}
