// SPDX-License-Identifier: MIT
/*
 * Byte-exact tests of the record encoders: each expected image is laid out
 * here by hand from include/uapi/linux/perf_event.h, not by the encoder.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "perfdata/records.h"

static uint8_t got[4096], want[4096];

static void le16(uint8_t *b, size_t off, uint16_t v) { memcpy(b + off, &v, 2); }
static void le32(uint8_t *b, size_t off, uint32_t v) { memcpy(b + off, &v, 4); }
static void le64(uint8_t *b, size_t off, uint64_t v) { memcpy(b + off, &v, 8); }
static void hdr(uint8_t *b, uint32_t type, uint16_t misc, uint16_t size)
{
	le32(b, 0, type);
	le16(b, 4, misc);
	le16(b, 6, size);
}

/* Consecutive words from off on: LE32S(b, 8, pid, tid) is le32(b, 8, pid); le32(b, 12, tid). */
static void le32s(uint8_t *b, size_t off, const uint32_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		le32(b, off + 4 * i, v[i]);
}

static void le64s(uint8_t *b, size_t off, const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		le64(b, off + 8 * i, v[i]);
}
#define LE32S(b, off, ...) \
	le32s(b, off, (const uint32_t[]){ __VA_ARGS__ }, sizeof((uint32_t[]){ __VA_ARGS__ }) / 4)
#define LE64S(b, off, ...) \
	le64s(b, off, (const uint64_t[]){ __VA_ARGS__ }, sizeof((uint64_t[]){ __VA_ARGS__ }) / 8)

/* want, zeroed, begins with the header of a record of `size` bytes. */
static void new_want(uint32_t type, uint16_t misc, uint16_t size)
{
	memset(want, 0, sizeof(want));
	hdr(want, type, misc, size);
}

#define TRAILER (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)
static const struct perfdata_sample_id sid = { .pid = 11, .tid = 12, .time = 0x1122334455ull,
					       .id = 77, .cpu = 3 };

/* The trailer for TRAILER: {pid,tid} {time} {cpu,res} {identifier}. */
static size_t put_trailer(uint8_t *b, size_t off)
{
	LE32S(b, off, 11, 12);
	le64(b, off + 8, 0x1122334455ull);
	LE32S(b, off + 16, 3, 0);
	le64(b, off + 24, 77);
	return off + 32;
}

static void expect_same(ssize_t n, size_t size)
{
	cr_assert_eq(n, (ssize_t)size, "size %zd, expected %zu", n, size);
	for (size_t i = 0; i < size; i++)
		cr_assert_eq(got[i], want[i], "byte %zu: got 0x%02x want 0x%02x", i, got[i], want[i]);
}

Test(records, trailer_size)
{
	cr_assert_eq(perfdata_sample_id_size(TRAILER), 32);
	cr_assert_eq(perfdata_sample_id_size(PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN), 0);
	cr_assert_eq(perfdata_sample_id_size(PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID), 16);
}

Test(records, kernel_mmap)
{
	struct perfdata_mmap m = { .misc = PERF_RECORD_MISC_KERNEL, .pid = (uint32_t)-1, .tid = 0,
				   .start = 0xffffffff81000000ull, .len = 0x1000000,
				   .pgoff = 0xffffffff81000000ull,
				   .filename = "[kernel.kallsyms]_text" };
	/* 8 header + 8 pid/tid + 24 start/len/pgoff + 24 name (23 + 1 pad) + 32 trailer */
	new_want(PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, 96);
	LE32S(want, 8, 0xffffffff, 0);	/* pid, tid */
	LE64S(want, 16, 0xffffffff81000000ull, 0x1000000, 0xffffffff81000000ull);
	memcpy(want + 40, "[kernel.kallsyms]_text", 23);
	put_trailer(want, 64);
	memset(got, 0xaa, sizeof(got));
	expect_same(perfdata_encode_mmap(got, sizeof(got), &m, TRAILER, &sid), 96);
}

Test(records, mmap2_build_id)
{
	struct perfdata_mmap m = { .misc = PERF_RECORD_MISC_USER, .pid = 100, .tid = 100,
				   .start = 0x400000, .len = 0x2000, .pgoff = 0x1000,
				   .build_id_size = 20, .prot = PROT_READ | PROT_EXEC,
				   .flags = MAP_PRIVATE, .filename = "/bin/x" };
	for (int i = 0; i < 20; i++)
		m.build_id[i] = (uint8_t)(0xa0 + i);
	/* 8 + 8 + 24 + 24 (size, 3 reserved, 20 id) + 8 prot/flags + 8 name + 32 = 112 */
	new_want(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID, 112);
	LE32S(want, 8, 100, 100);
	LE64S(want, 16, 0x400000, 0x2000, 0x1000);
	want[40] = 20;
	for (int i = 0; i < 20; i++)
		want[44 + i] = (uint8_t)(0xa0 + i);
	LE32S(want, 64, PROT_READ | PROT_EXEC, MAP_PRIVATE);
	memcpy(want + 72, "/bin/x", 7);
	put_trailer(want, 80);
	memset(got, 0xaa, sizeof(got));
	expect_same(perfdata_encode_mmap2(got, sizeof(got), &m, TRAILER, &sid), 112);
}

Test(records, mmap2_inode)
{
	struct perfdata_mmap m = { .misc = PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID,
				   .pid = 5, .tid = 6, .start = 0x1000, .len = 0x1000, .pgoff = 0,
				   .maj = 8, .min = 1, .ino = 123456, .ino_generation = 9,
				   .prot = PROT_READ | PROT_EXEC, .flags = MAP_PRIVATE,
				   .filename = "/usr/lib/libfoo.so.1" };
	/* No build-id: the flag is cleared even if the caller set it. No trailer. */
	new_want(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, 96);
	LE32S(want, 8, 5, 6);
	LE64S(want, 16, 0x1000, 0x1000, 0);
	LE32S(want, 40, 8, 1);
	LE64S(want, 48, 123456, 9);
	LE32S(want, 64, PROT_READ | PROT_EXEC, MAP_PRIVATE);
	memcpy(want + 72, "/usr/lib/libfoo.so.1", 21);	/* 21 -> padded to 24 */
	memset(got, 0xaa, sizeof(got));
	expect_same(perfdata_encode_mmap2(got, sizeof(got), &m, 0, NULL), 96);
}

Test(records, comm_exec)
{
	struct perfdata_comm c = { .pid = 7, .tid = 8, .exec = true, .comm = "worker" };

	new_want(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, 56);
	LE32S(want, 8, 7, 8);
	memcpy(want + 16, "worker", 7);
	put_trailer(want, 24);
	memset(got, 0xaa, sizeof(got));
	expect_same(perfdata_encode_comm(got, sizeof(got), &c, TRAILER, &sid), 56);
	c.exec = false;
	cr_assert_eq(perfdata_encode_comm(got, sizeof(got), &c, TRAILER, &sid), 56);
	cr_assert_eq(got[4] | got[5], 0, "no exec flag");
}

Test(records, comm_exact_multiple_of_8)
{
	/* 7 chars + NUL = 8: no extra padding word. */
	struct perfdata_comm c = { .pid = 1, .tid = 1, .comm = "1234567" };

	cr_assert_eq(perfdata_encode_comm(got, sizeof(got), &c, 0, NULL), 24);
	cr_assert_eq(got[23], 0);
}

Test(records, ksymbol_bpf_with_trailer)
{
	struct perfdata_ksymbol k = { .addr = 0xffffffffc0025538ull, .len = 0x8c2,
				      .ksym_type = PERF_RECORD_KSYMBOL_TYPE_BPF,
				      .name = "bpf_prog_de3d2baa04cab2a8_on_sample" };
	/* 8 header + 8 addr + 4 len + 2 type + 2 flags + 40 name (35 + NUL, 4 pad) + 32 trailer */
	new_want(PERF_RECORD_KSYMBOL, 0, 96);
	le64(want, 8, 0xffffffffc0025538ull);
	le32(want, 16, 0x8c2);
	le16(want, 20, PERF_RECORD_KSYMBOL_TYPE_BPF);
	le16(want, 22, 0);
	memcpy(want + 24, "bpf_prog_de3d2baa04cab2a8_on_sample", 36);
	put_trailer(want, 64);
	memset(got, 0xaa, sizeof(got));
	expect_same(perfdata_encode_ksymbol(got, sizeof(got), &k, TRAILER, &sid), 96);
}

Test(records, ksymbol_name_of_8_bytes_gets_a_word_for_its_nul)
{
	/* 31 chars + NUL = 32: no padding; flags as given, no trailer. */
	struct perfdata_ksymbol k = { .addr = 0x1000, .len = 16, .ksym_type = 2,
				      .flags = PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER,
				      .name = "bpf_prog_0123456789abcdef_abcde" };
	/* and 32 chars: the NUL takes a word of its own (7 bytes of padding) */
	struct perfdata_ksymbol k8 = k;

	k8.name = "bpf_prog_0123456789abcdef_abcdef";
	new_want(PERF_RECORD_KSYMBOL, 0, 56);
	le64(want, 8, 0x1000);
	le32(want, 16, 16);
	le16(want, 20, 2);
	le16(want, 22, PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER);
	memcpy(want + 24, k.name, 32);
	memset(got, 0xaa, sizeof(got));
	expect_same(perfdata_encode_ksymbol(got, sizeof(got), &k, 0, NULL), 56);

	memcpy(want + 24, k8.name, 33);
	hdr(want, PERF_RECORD_KSYMBOL, 0, 64);
	memset(got, 0xaa, sizeof(got));
	expect_same(perfdata_encode_ksymbol(got, sizeof(got), &k8, 0, NULL), 64);
	cr_assert_eq(perfdata_encode_ksymbol(got, 56, &k8, 0, NULL), -E2BIG);
}

Test(records, fork_and_exit)
{
	struct perfdata_task t = { .pid = 10, .ppid = 1, .tid = 11, .ptid = 1, .time = 555 };

	new_want(PERF_RECORD_FORK, 0, 64);
	LE32S(want, 8, 10, 1, 11, 1);
	le64(want, 24, 555);
	put_trailer(want, 32);
	expect_same(perfdata_encode_task(got, sizeof(got), PERF_RECORD_FORK, &t, TRAILER, &sid), 64);
	hdr(want, PERF_RECORD_EXIT, 0, 64);
	expect_same(perfdata_encode_task(got, sizeof(got), PERF_RECORD_EXIT, &t, TRAILER, &sid), 64);
	cr_assert_eq(perfdata_encode_task(got, sizeof(got), PERF_RECORD_COMM, &t, 0, NULL), -EINVAL);
}

Test(records, lost_and_lost_samples)
{
	new_want(PERF_RECORD_LOST_SAMPLES, 0, 48);
	le64(want, 8, 1234);
	put_trailer(want, 16);
	expect_same(perfdata_encode_lost_samples(got, sizeof(got), 1234, TRAILER, &sid), 48);

	new_want(PERF_RECORD_LOST, 0, 56);
	LE64S(want, 8, 77, 5);
	put_trailer(want, 24);
	expect_same(perfdata_encode_lost(got, sizeof(got), 77, 5, TRAILER, &sid), 56);
}

Test(records, sample_with_callchain)
{
	struct perf_event_attr attr = {
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			       PERF_SAMPLE_CALLCHAIN,
	};
	uint64_t chain[] = { PERF_CONTEXT_KERNEL, 0xffffffff81111111ull, PERF_CONTEXT_USER, 0x401000 };
	struct perfdata_sample s = { .misc = PERF_RECORD_MISC_KERNEL, .id = 99,
				     .ip = 0xffffffff81111111ull, .pid = 20, .tid = 21,
				     .time = 1000, .cpu = 1, .period = 250000,
				     .nr_callchain = 4, .callchain = chain };
	/* 8 hdr, id, ip, pid/tid, time, cpu/res, period, nr, 4 ips = 8 + 7*8 + 32 = 96 */
	new_want(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, 96);
	LE64S(want, 8, 99, 0xffffffff81111111ull);
	LE32S(want, 24, 20, 21);
	le64(want, 32, 1000);
	le32(want, 40, 1);
	LE64S(want, 48, 250000, 4);
	memcpy(want + 64, chain, sizeof(chain));
	expect_same(perfdata_encode_sample(got, sizeof(got), &attr, &s), 96);
	cr_assert_eq(perfdata_sample_size(&attr, &s), 96);
}

Test(records, sample_addr_id_stream_raw_order)
{
	struct perf_event_attr attr = {
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
			       PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_RAW,
	};
	struct perfdata_sample s = { .ip = 1, .addr = 2, .id = 3, .stream_id = 4,
				     .raw_size = 5, .raw = "abcde" };
	/* ip, addr, id, stream_id, then u32 size (=12, padded) + 5 bytes + 7 zero = 16 */
	new_want(PERF_RECORD_SAMPLE, 0, 56);
	LE64S(want, 8, 1, 2, 3, 4);
	le32(want, 40, 12);
	memcpy(want + 44, "abcde", 5);
	expect_same(perfdata_encode_sample(got, sizeof(got), &attr, &s), 56);
}

Test(records, sample_regs_and_stack_user)
{
	struct perf_event_attr attr = {
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
		.sample_regs_user = 0x7,	/* three registers */
	};
	uint64_t regs[3] = { 0x10, 0x20, 0x30 };
	uint8_t stack[16];
	struct perfdata_sample s = { .ip = 0x401000, .regs_abi = PERF_SAMPLE_REGS_ABI_64,
				     .nr_regs = 3, .regs = regs, .stack_size = 16,
				     .stack = stack, .stack_dyn_size = 12 };

	for (int i = 0; i < 16; i++)
		stack[i] = (uint8_t)i;
	/* ip, abi, 3 regs, size, 16 bytes, dyn_size = 8 + 8 + 8 + 24 + 8 + 16 + 8 = 80 */
	new_want(PERF_RECORD_SAMPLE, 0, 80);
	LE64S(want, 8, 0x401000, PERF_SAMPLE_REGS_ABI_64);
	memcpy(want + 24, regs, 24);
	le64(want, 48, 16);
	memcpy(want + 56, stack, 12);	/* bytes past dyn_size are written as zeros */
	le64(want, 72, 12);
	expect_same(perfdata_encode_sample(got, sizeof(got), &attr, &s), 80);
	cr_assert_eq(perfdata_sample_size(&attr, &s), 80);

	/* dyn_size above size cannot be encoded. */
	s.stack_dyn_size = 24;
	cr_assert_eq(perfdata_encode_sample(got, sizeof(got), &attr, &s), -EINVAL);
	s.stack_dyn_size = 12;

	/* A wrong register count, or a stack size not a multiple of 8, is refused. */
	s.nr_regs = 2;
	cr_assert_eq(perfdata_encode_sample(got, sizeof(got), &attr, &s), -EINVAL);
	s.nr_regs = 3;
	s.stack_size = 12;
	cr_assert_eq(perfdata_encode_sample(got, sizeof(got), &attr, &s), -EINVAL);

	/* No user regs (kernel thread): abi NONE and no register words; empty stack: size only. */
	struct perfdata_sample k = { .ip = 5, .regs_abi = PERF_SAMPLE_REGS_ABI_NONE };
	cr_assert_eq(perfdata_encode_sample(got, sizeof(got), &attr, &k), 32);
}

Test(records, stack_user_is_cut_to_fit_a_record)
{
	struct perf_event_attr attr = {
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER,
	};
	uint64_t chain[3] = { PERF_CONTEXT_KERNEL, 1, 2 };
	struct perfdata_sample s = { .ip = 1, .nr_callchain = 3, .callchain = chain,
				     .stack_size = 65528, .stack_dyn_size = 65528 };
	/* header 8, ip 8, callchain 8 + 24, size 8, dyn_size 8: 64 bytes besides the data */
	uint64_t room = (0xfff8 - 64) & ~7ull;

	perfdata_sample_fit_stack(&attr, &s);
	cr_assert_eq(s.stack_size, room);
	cr_assert_eq(s.stack_dyn_size, room, "dyn_size follows the cut");
	cr_assert_eq(perfdata_sample_size(&attr, &s), 0xfff8);

	/* What fits stays as it is. */
	s.stack_size = 8192;
	s.stack_dyn_size = 100;
	perfdata_sample_fit_stack(&attr, &s);
	cr_assert_eq(s.stack_size, 8192);
	cr_assert_eq(s.stack_dyn_size, 100);
}

Test(records, finished_round)
{
	new_want(PERFDATA_RECORD_FINISHED_ROUND, 0, 8);
	expect_same(perfdata_encode_finished_round(got, sizeof(got)), 8);
}

Test(records, header_attr)
{
	struct perf_event_attr attr = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
					.size = 999, .sample_freq = 99, .freq = 1 };
	uint64_t ids[2] = { 5, 6 };
	struct perf_event_attr *a = (struct perf_event_attr *)(got + 8);

	cr_assert_eq(perfdata_encode_header_attr(got, sizeof(got), &attr, ids, 2), 8 + 128 + 16);
	cr_assert_eq(((struct perf_event_header *)got)->type, PERFDATA_RECORD_HEADER_ATTR);
	cr_assert_eq(a->size, 128, "attr.size forced to 128");
	cr_assert_eq(a->config, PERF_COUNT_SW_CPU_CLOCK);
	cr_assert_eq(a->sample_freq, 99);
	cr_assert_eq(memcmp(got + 136, ids, 16), 0);
}

Test(records, header_feature_pads)
{
	new_want(PERFDATA_RECORD_HEADER_FEATURE, 0, 24);
	le64(want, 8, PERFDATA_FEAT_ARCH);
	memcpy(want + 16, "abc", 3);
	expect_same(perfdata_encode_header_feature(got, sizeof(got), PERFDATA_FEAT_ARCH, "abc", 3), 24);
	cr_assert_eq(perfdata_encode_header_feature(got, sizeof(got), PERFDATA_FEAT_LAST, "", 0),
		     -EINVAL, "never a feature id perf does not know");
}

Test(records, build_id_feature_and_pipe)
{
	uint8_t id[20];

	for (int i = 0; i < 20; i++)
		id[i] = (uint8_t)i;
	/* Inside the BUILD_ID feature: 36 + name padded to 64, type 0, as perf writes it. */
	new_want(0, PERF_RECORD_MISC_KERNEL | PERFDATA_MISC_BUILD_ID_SIZE, 100);
	le32(want, 8, 0xffffffff);
	memcpy(want + 12, id, 20);
	want[32] = 20;
	memcpy(want + 36, "[kernel.kallsyms]", 18);
	memset(got, 0xaa, sizeof(got));
	expect_same(perfdata_encode_build_id(got, sizeof(got), 0, PERF_RECORD_MISC_KERNEL, -1, id,
					     20, "[kernel.kallsyms]"), 100);
	/* In a pipe: type 67 and 4 more bytes so the stream stays 8-byte aligned. */
	ssize_t n = perfdata_encode_build_id(got, sizeof(got), PERFDATA_RECORD_HEADER_BUILD_ID,
					     PERF_RECORD_MISC_USER, -1, id, 20, "/bin/true");
	cr_assert_eq(n, 104);
	cr_assert_eq(((struct perf_event_header *)got)->size, 104);
	cr_assert_eq(((struct perf_event_header *)got)->type, PERFDATA_RECORD_HEADER_BUILD_ID);
	cr_assert_eq(perfdata_encode_build_id(got, sizeof(got), 0, 0, -1, id, 21, "x"), -EINVAL);
}

Test(records, too_small_buffer)
{
	struct perfdata_comm c = { .pid = 1, .tid = 1, .comm = "abc" };

	cr_assert_eq(perfdata_encode_comm(got, 16, &c, TRAILER, &sid), -E2BIG);
	cr_assert_eq(perfdata_encode_finished_round(got, 4), -E2BIG);
}

Test(records, oversized_record_refused)
{
	static char name[70000];
	struct perfdata_comm c = { .pid = 1, .tid = 1, .comm = name };
	static uint8_t big[80000];

	memset(name, 'x', sizeof(name) - 1);
	cr_assert_eq(perfdata_encode_comm(big, sizeof(big), &c, 0, NULL), -EINVAL,
		     "a record's size must fit in u16");
}

Test(records, callchain_join_omits_empty_parts)
{
	const uint64_t k[] = { 0xffffffff81000010ull, 0xffffffff81000020ull }, u[] = { 0x401000 };
	uint64_t out[5];

	cr_assert_eq(perfdata_callchain_join(k, 2, u, 1, out), 5);
	cr_assert_eq(out[0], (uint64_t)PERF_CONTEXT_KERNEL);
	cr_assert_eq(out[2], k[1]);
	cr_assert_eq(out[3], (uint64_t)PERF_CONTEXT_USER);
	cr_assert_eq(out[4], u[0]);
	cr_assert_eq(perfdata_callchain_join(k, 0, u, 1, out), 2);
	cr_assert_eq(out[0], (uint64_t)PERF_CONTEXT_USER);
	cr_assert_eq(perfdata_callchain_join(k, 2, u, 0, out), 3);
	cr_assert_eq(out[0], (uint64_t)PERF_CONTEXT_KERNEL);
	cr_assert_eq(perfdata_callchain_join(k, 0, u, 0, out), 0);
	cr_assert_eq(perfdata_sample_cpumode(true), PERF_RECORD_MISC_KERNEL);
	cr_assert_eq(perfdata_sample_cpumode(false), PERF_RECORD_MISC_USER);
}
