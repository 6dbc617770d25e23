// SPDX-License-Identifier: MIT
/*
 * Unit tests for tools/pprof/aspace.c: overlaps, fork, exec, kernel maps;
 * the replay of MMAP2, COMM and FORK records (mappings, names, executables).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <sys/mman.h>

#include "perfdata/records.h"
#include "tools/pprof/aspace.h"

static struct pp_intern strs;	/* names: the interval maps make none */

static uint32_t at(struct pp_aspace *a, uint32_t pid, uint64_t addr)
{
	uint32_t v = 0;
	int err = pp_aspace_find(a, pid, addr, &v);

	return err ? 0 : v;	/* values in these tests are never 0 */
}

Test(aspace, lookup_bounds)
{
	struct pp_aspace *a;

	cr_assert_eq(pp_aspace_new(&strs, &a), 0);
	cr_assert_eq(pp_aspace_map(a, 10, 0x1000, 0x1000, 1), 0);
	cr_assert_eq(pp_aspace_map(a, 10, 0x3000, 0x1000, 2), 0);
	cr_assert_eq(at(a, 10, 0xfff), 0);
	cr_assert_eq(at(a, 10, 0x1000), 1, "start is inside");
	cr_assert_eq(at(a, 10, 0x1fff), 1);
	cr_assert_eq(at(a, 10, 0x2000), 0, "end is outside");
	cr_assert_eq(at(a, 10, 0x3800), 2);
	cr_assert_eq(at(a, 10, 0x4000), 0);
	cr_assert_eq(at(a, 11, 0x1000), 0, "another pid has its own maps");
	uint32_t v;

	cr_assert_eq(pp_aspace_find(a, 99, 0x1000, &v), -ENOENT);
	cr_assert_eq(pp_aspace_map(a, 10, 0x5000, 0, 3), -EINVAL);
	cr_assert(pp_aspace_known(a, 10));
	cr_assert(!pp_aspace_known(a, 11));
	pp_aspace_free(a);
}

Test(aspace, new_map_replaces_overlapped_parts)
{
	struct pp_aspace *a;

	cr_assert_eq(pp_aspace_new(&strs, &a), 0);
	pp_aspace_map(a, 1, 0x1000, 0x9000, 1);	/* [0x1000, 0xa000) */
	pp_aspace_map(a, 1, 0x4000, 0x2000, 2);	/* punch the middle: split in three */
	cr_assert_eq(pp_aspace_count(a, 1), 3);
	cr_assert_eq(at(a, 1, 0x3fff), 1);
	cr_assert_eq(at(a, 1, 0x4000), 2);
	cr_assert_eq(at(a, 1, 0x5fff), 2);
	cr_assert_eq(at(a, 1, 0x6000), 1);
	cr_assert_eq(at(a, 1, 0x9fff), 1);

	pp_aspace_map(a, 1, 0x3000, 0x4000, 3);	/* over the tail of 1, all of 2, head of 1 */
	cr_assert_eq(pp_aspace_count(a, 1), 3);
	cr_assert_eq(at(a, 1, 0x2fff), 1);
	cr_assert_eq(at(a, 1, 0x3000), 3);
	cr_assert_eq(at(a, 1, 0x6fff), 3);
	cr_assert_eq(at(a, 1, 0x7000), 1);

	pp_aspace_map(a, 1, 0x0, 0x10000, 4);	/* covers everything */
	cr_assert_eq(pp_aspace_count(a, 1), 1);
	cr_assert_eq(at(a, 1, 0x1000), 4);
	cr_assert_eq(at(a, 1, 0x9000), 4);

	pp_aspace_map(a, 1, 0x0, 0x10000, 5);	/* exactly the same range */
	cr_assert_eq(pp_aspace_count(a, 1), 1);
	cr_assert_eq(at(a, 1, 0x0), 5);
	pp_aspace_free(a);
}

Test(aspace, many_maps_stay_sorted)
{
	struct pp_aspace *a;

	cr_assert_eq(pp_aspace_new(&strs, &a), 0);
	/* Insert 1000 disjoint pages in a scrambled order. */
	for (uint32_t i = 0; i < 1000; i++) {
		uint32_t k = (i * 617) % 1000;

		cr_assert_eq(pp_aspace_map(a, 7, 0x100000 + (uint64_t)k * 0x2000, 0x1000, k + 1), 0);
	}
	cr_assert_eq(pp_aspace_count(a, 7), 1000);
	for (uint32_t k = 0; k < 1000; k++) {
		cr_assert_eq(at(a, 7, 0x100000 + (uint64_t)k * 0x2000 + 0x10), k + 1);
		cr_assert_eq(at(a, 7, 0x100000 + (uint64_t)k * 0x2000 + 0x1000), 0, "gap");
	}
	pp_aspace_free(a);
}

Test(aspace, fork_copies_exec_clears)
{
	struct pp_aspace *a;

	cr_assert_eq(pp_aspace_new(&strs, &a), 0);
	pp_aspace_map(a, 100, 0x400000, 0x1000, 1);
	pp_aspace_map(a, 100, 0x7f0000, 0x1000, 2);
	cr_assert_eq(pp_aspace_fork(a, 200, 100), 0);
	cr_assert_eq(at(a, 200, 0x400000), 1, "the child sees the parent's maps");
	cr_assert_eq(at(a, 200, 0x7f0000), 2);

	pp_aspace_exec(a, 200);
	cr_assert_eq(at(a, 200, 0x400000), 0, "exec forgets the old image");
	cr_assert_eq(at(a, 100, 0x400000), 1, "the parent keeps its maps");
	pp_aspace_map(a, 200, 0x500000, 0x1000, 3);
	cr_assert_eq(at(a, 200, 0x500000), 3);
	cr_assert_eq(at(a, 100, 0x500000), 0, "the child's new map is its own");

	/* A pid reused by another fork gets the new parent's maps only. */
	cr_assert_eq(pp_aspace_fork(a, 200, 100), 0);
	cr_assert_eq(at(a, 200, 0x500000), 0);
	cr_assert_eq(at(a, 200, 0x400000), 1);
	/* Fork from a pid never seen: empty maps, not an error. */
	cr_assert_eq(pp_aspace_fork(a, 300, 12345), 0);
	cr_assert_eq(pp_aspace_count(a, 300), 0);
	cr_assert(pp_aspace_known(a, 300));
	cr_assert_eq(pp_aspace_fork(a, 100, 100), 0, "a thread: nothing to copy");
	cr_assert_eq(at(a, 100, 0x7f0000), 2);
	pp_aspace_free(a);
}

Test(aspace, fork_survives_table_growth)
{
	struct pp_aspace *a;

	cr_assert_eq(pp_aspace_new(&strs, &a), 0);
	pp_aspace_map(a, 1, 0x1000, 0x1000, 9);
	/* Each fork adds a pid; the table of spaces moves while the parent is read. */
	for (uint32_t pid = 2; pid < 2000; pid++)
		cr_assert_eq(pp_aspace_fork(a, pid, pid - 1), 0);
	cr_assert_eq(at(a, 1999, 0x1800), 9);
	pp_aspace_free(a);
}

Test(aspace, kernel_and_top_of_address_space)
{
	struct pp_aspace *a;

	cr_assert_eq(pp_aspace_new(&strs, &a), 0);
	cr_assert_eq(pp_aspace_map(a, PP_ASPACE_KERNEL, 0xffffffff81000000ULL, 0x1200000, 1), 0);
	/* A length that runs past 2^64 is clamped, not wrapped. */
	cr_assert_eq(pp_aspace_map(a, PP_ASPACE_KERNEL, 0xffffffffff600000ULL, UINT64_MAX, 2), 0);
	cr_assert_eq(at(a, PP_ASPACE_KERNEL, 0xffffffff81234567ULL), 1);
	cr_assert_eq(at(a, PP_ASPACE_KERNEL, 0xfffffffffffffff0ULL), 2);
	cr_assert_eq(at(a, PP_ASPACE_KERNEL, 0x1000), 0);
	pp_aspace_free(a);
}

Test(aspace, generation_changes_with_the_maps)
{
	struct pp_aspace *a;
	uint32_t g0, g1, g2, g3;

	cr_assert_eq(pp_aspace_new(&strs, &a), 0);
	cr_assert_eq(pp_aspace_generation(a, 5), 0, "unknown pid");
	pp_aspace_map(a, 5, 0x1000, 0x1000, 1);
	g0 = pp_aspace_generation(a, 5);
	cr_assert_neq(g0, 0);
	uint32_t v;

	pp_aspace_find(a, 5, 0x1000, &v);
	cr_assert_eq(pp_aspace_generation(a, 5), g0, "lookups change nothing");
	pp_aspace_map(a, 5, 0x3000, 0x1000, 2);
	g1 = pp_aspace_generation(a, 5);
	cr_assert_neq(g1, g0);
	pp_aspace_exec(a, 5);
	g2 = pp_aspace_generation(a, 5);
	cr_assert_neq(g2, g1);
	pp_aspace_map(a, 6, 0x1000, 0x1000, 3);
	cr_assert_eq(pp_aspace_generation(a, 5), g2, "another pid's maps are not ours");
	pp_aspace_fork(a, 5, 6);
	g3 = pp_aspace_generation(a, 5);
	cr_assert(g3 != g2 && g3 != g1 && g3 != g0);
	pp_aspace_free(a);
}

Test(aspace, intervals_in_address_order)
{
	struct pp_aspace *a;
	uint64_t start, end;
	uint32_t v;

	cr_assert_eq(pp_aspace_new(&strs, &a), 0);
	cr_assert_eq(pp_aspace_map(a, 7, 0x5000, 0x1000, 2), 0);
	cr_assert_eq(pp_aspace_map(a, 7, 0x1000, 0x3000, 1), 0);
	cr_assert_eq(pp_aspace_map(a, 7, 0x2000, 0x1000, 3), 0);	/* splits the first */
	cr_assert_eq(pp_aspace_count(a, 7), 4);
	const uint64_t want[4][3] = {
		{ 0x1000, 0x2000, 1 }, { 0x2000, 0x3000, 3 }, { 0x3000, 0x4000, 1 }, { 0x5000, 0x6000, 2 },
	};

	for (size_t i = 0; i < 4; i++) {
		cr_assert_eq(pp_aspace_at(a, 7, i, &start, &end, &v), 0);
		cr_expect_eq(start, want[i][0], "interval %zu", i);
		cr_expect_eq(end, want[i][1], "interval %zu", i);
		cr_expect_eq(v, want[i][2], "interval %zu", i);
	}
	cr_expect_eq(pp_aspace_at(a, 7, 4, &start, &end, &v), -ENOENT);
	cr_expect_eq(pp_aspace_at(a, 8, 0, &start, &end, &v), -ENOENT);
	pp_aspace_free(a);
}

/* ---- records ---- */

static uint64_t rec_buf[1024];

static int mmap2(struct pp_aspace *a, uint32_t pid, uint64_t start, uint32_t prot, const char *file)
{
	struct perfdata_mmap m = { .pid = pid, .tid = pid, .start = start, .len = 0x1000,
				   .pgoff = 0x2000, .prot = prot, .filename = file };

	if (pid == PP_ASPACE_KERNEL)
		m.misc = PERF_RECORD_MISC_KERNEL;
	cr_assert_gt(perfdata_encode_mmap2(rec_buf, sizeof(rec_buf), &m, 0, NULL), 0);
	return pp_aspace_record(a, (const struct perf_event_header *)rec_buf);
}

static int comm(struct pp_aspace *a, uint32_t pid, uint32_t tid, bool exec, const char *name)
{
	struct perfdata_comm c = { .pid = pid, .tid = tid, .exec = exec, .comm = name };

	cr_assert_gt(perfdata_encode_comm(rec_buf, sizeof(rec_buf), &c, 0, NULL), 0);
	return pp_aspace_record(a, (const struct perf_event_header *)rec_buf);
}

static int fork_rec(struct pp_aspace *a, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid)
{
	struct perfdata_task t = { .pid = pid, .ppid = ppid, .tid = tid, .ptid = ptid };

	cr_assert_gt(perfdata_encode_task(rec_buf, sizeof(rec_buf), PERF_RECORD_FORK, &t, 0, NULL), 0);
	return pp_aspace_record(a, (const struct perf_event_header *)rec_buf);
}

static const char *comm_of(struct pp_aspace *a, uint32_t tid)
{
	uint32_t sid = pp_aspace_comm(a, tid);

	return sid ? pp_intern_get(&strs, sid - 1, NULL) : NULL;
}

static const char *name_at(struct pp_aspace *a, uint32_t pid, uint64_t addr, uint32_t *id)
{
	if (pp_aspace_find(a, pid, addr, id))
		return NULL;
	return pp_intern_get(&strs, pp_aspace_mapping(a, *id)->filename, NULL);
}

Test(aspace, records_replay_processes)
{
	struct pp_aspace *a;
	uint32_t exe, lib, id;

	cr_assert_eq(pp_aspace_new(&strs, &a), 0);
	cr_assert_eq(mmap2(a, 10, 0x10000, PROT_READ | PROT_EXEC, "/bin/app"), 0);
	cr_assert_eq(mmap2(a, 10, 0x20000, PROT_READ | PROT_EXEC, "/lib/libc.so"), 0);
	cr_assert_eq(mmap2(a, 10, 0x30000, PROT_READ, "/data"), 0);
	cr_assert_eq(pp_aspace_nr_mappings(a), 2, "data mappings hold no code");
	cr_assert_str_eq(name_at(a, 10, 0x10010, &exe), "/bin/app");
	cr_assert_str_eq(name_at(a, 10, 0x20010, &lib), "/lib/libc.so");
	cr_assert(pp_aspace_is_exe(a, exe), "the first file after exec");
	cr_assert(!pp_aspace_is_exe(a, lib));
	cr_assert_eq(comm(a, 10, 10, false, "app"), 0);
	cr_assert_eq(comm(a, 10, 13, false, "worker"), 0);

	/* A thread and a process start with their parent's name; a process
	 * with a copy of its maps, executable included. */
	cr_assert_eq(fork_rec(a, 10, 10, 12, 10), 0);
	cr_assert_str_eq(comm_of(a, 12), "app");
	cr_assert_eq(fork_rec(a, 11, 10, 11, 13), 0);
	cr_assert_str_eq(comm_of(a, 11), "worker", "the forking thread's name");
	cr_assert_str_eq(name_at(a, 11, 0x10010, &id), "/bin/app");
	cr_assert_eq(mmap2(a, 11, 0x40000, PROT_EXEC, "/lib/libm.so"), 0);
	cr_assert_str_eq(name_at(a, 11, 0x40010, &id), "/lib/libm.so");
	cr_assert(!pp_aspace_is_exe(a, id), "a forked child has its executable");

	/* exec: no maps, a new name; the next file is the executable. */
	cr_assert_eq(comm(a, 11, 11, true, "tool"), 0);
	cr_assert_str_eq(comm_of(a, 11), "tool");
	cr_assert_null(name_at(a, 11, 0x10010, &id));
	cr_assert_eq(mmap2(a, 11, 0x10000, PROT_EXEC, "/bin/tool"), 0);
	cr_assert(pp_aspace_is_exe(a, (name_at(a, 11, 0x10010, &id), id)));
	cr_assert_str_eq(name_at(a, 10, 0x10010, &id), "/bin/app", "the parent keeps its maps");
	cr_assert_null(comm_of(a, 99));
	pp_aspace_free(a);
	pp_intern_free(&strs);
}

Test(aspace, records_anonymous_and_kernel_mappings)
{
	struct pp_aspace *a;
	struct perf_event_header bad = { .type = PERF_RECORD_COMM, .size = sizeof(bad) };
	uint64_t ref;
	uint32_t id;

	cr_assert_eq(pp_aspace_new(&strs, &a), 0);
	cr_assert_eq(mmap2(a, 10, 0x10000, PROT_EXEC, "//anon"), 0);
	cr_assert_eq(mmap2(a, 10, 0x20000, PROT_EXEC, "/memfd:jit/code (deleted)"), 0);
	cr_assert_str_eq(name_at(a, 10, 0x10000, &id), "[anon]");
	cr_assert_eq(pp_aspace_mapping(a, id)->kind, PP_MAPPING_ANON);
	cr_assert_eq(pp_aspace_mapping(a, id)->pid, 10, "anonymous memory is its process's");
	cr_assert(!pp_aspace_is_exe(a, id));
	cr_assert_str_eq(name_at(a, 10, 0x20000, &id), "[memfd:jit_code]");

	cr_assert_str_eq(pp_aspace_kernel_ref(a, &ref), "");
	cr_assert_eq(ref, 0);
	cr_assert_eq(pp_aspace_kernel_mapping(a), 2, "a catch-all when none was recorded");
	cr_assert_eq(pp_aspace_kernel_mapping(a), 2);
	cr_assert_eq(mmap2(a, PP_ASPACE_KERNEL, 0xffffffff81000000ULL, PROT_EXEC,
			   "[kernel.kallsyms]_text"), 0);
	cr_assert_str_eq(pp_aspace_kernel_ref(a, &ref), "_text");
	cr_assert_eq(ref, 0x2000, "the address of _text is the map's pgoff");
	cr_assert_str_eq(name_at(a, PP_ASPACE_KERNEL, 0xffffffff81000010ULL, &id), "[kernel.kallsyms]");
	cr_assert_eq(pp_aspace_mapping(a, id)->kind, PP_MAPPING_KERNEL);
	cr_assert_eq(pp_aspace_kernel_mapping(a), id, "the recorded image now");

	cr_assert_eq(pp_aspace_record(a, &bad), 1, "malformed: skipped, for the caller to count");
	pp_aspace_free(a);
	pp_intern_free(&strs);
}
