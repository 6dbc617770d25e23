// SPDX-License-Identifier: MIT
/*
 * test_alloc.c - what --alloc computes without BPF (recorder/alloc.c and
 * the countdown draw of bpf/alloc.h): the Poisson weight, the RAW text,
 * the attr, which libraries are allocators, and the draw's distribution.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdint.h>
#include <string.h>
#include <linux/perf_event.h>
#include <linux/types.h>

#include "recorder/alloc.h"
#include "symbolize/util.h"
#include "bpf/alloc.h"

#define TRAILER (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
		 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

static const __u32 frac[ALLOC_LOG2_FRAC_LEN] = ALLOC_LOG2_FRAC;

Test(alloc, weight_is_size_over_the_sampling_probability)
{
	const uint64_t r = 512 * 1024;
	const uint64_t sizes[] = { 1, 24, 4096, 65536, 512 * 1024, 64ull << 20 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		double s = (double)sizes[i], want = s / (1.0 - exp(-s / (double)r));
		uint64_t w = alloc_weight(sizes[i], r);

		cr_assert(fabs((double)w - want) <= 1.0, "size %llu: weight %llu, want %.1f",
			  (unsigned long long)sizes[i], (unsigned long long)w, want);
		/* Never below the size itself; about the interval for small blocks. */
		cr_assert_geq(w, sizes[i]);
	}
	/* A tiny block stands for about one interval (plus half its size). */
	cr_assert(llabs((long long)alloc_weight(1, r) - (long long)r) <= 1);
	/* A huge one is nearly always sampled: it stands for itself. */
	cr_assert_eq(alloc_weight(64ull << 20, r), (64ull << 20) + 0);
}

Test(alloc, weight_at_rate_one_is_the_size)
{
	cr_assert_eq(alloc_weight(4096, 1), 4096);
	cr_assert_eq(alloc_weight(1, 1), 1);
	cr_assert_eq(alloc_weight(0, 512 * 1024), 0);
}

static void expect_raw(uint32_t func, uint64_t size, const char *text)
{
	char buf[ALLOC_RAW_TEXT_MAX];
	size_t n = alloc_raw_text(func, size, buf, sizeof(buf));

	cr_assert_gt(n, 0);
	cr_assert_eq(strncmp(buf, text, strlen(text)), 0, "raw '%s', want '%s'", buf, text);
	/* Only padding after the text. */
	for (size_t i = strlen(text); i + 1 < n; i++)
		cr_assert_eq(buf[i], ' ', "byte %zu of '%s' is not padding", i, buf);
	/* perf shows RAW as a string only when the NUL is its last byte after padding. */
	cr_assert_eq((n + 4) % 8, 0, "'%s': %zu bytes do not fill the padded RAW", text, n);
	cr_assert_eq(buf[n - 1], '\0');
	for (size_t i = 0; i + 1 < n; i++)
		cr_assert(isprint((unsigned char)buf[i]));
}

Test(alloc, raw_text_is_func_and_size)
{
	expect_raw(ALLOC_FUNC_MALLOC, 4096, "malloc 4096");
	expect_raw(ALLOC_FUNC_CALLOC, 65536, "calloc 65536");
	expect_raw(ALLOC_FUNC_REALLOC, 24, "realloc 24");
	expect_raw(ALLOC_FUNC_MMAP, 1048576, "mmap 1048576");
	expect_raw(ALLOC_FUNC_POSIX_MEMALIGN, 1, "posix_memalign 1");
	expect_raw(ALLOC_FUNC_ALIGNED_ALLOC, UINT64_MAX, "aligned_alloc 18446744073709551615");
}

Test(alloc, raw_text_refuses_a_short_buffer)
{
	char buf[16];

	cr_assert_eq(alloc_raw_text(ALLOC_FUNC_MALLOC, 1, buf, sizeof(buf)), 0);
}

Test(alloc, func_names)
{
	cr_assert_str_eq(alloc_func_name(ALLOC_FUNC_MALLOC), "malloc");
	cr_assert_str_eq(alloc_func_name(ALLOC_FUNC_MEMALIGN), "memalign");
	cr_assert_str_eq(alloc_func_name(ALLOC_FUNC_MUNMAP), "munmap");
	cr_assert_null(alloc_func_name(ALLOC_FUNC_MAX));
}

Test(alloc, attr_is_bpf_output_with_the_cpu_trailer)
{
	struct perf_event_attr cpu = {
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_type = TRAILER | PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_PERIOD,
		.sample_id_all = 1, .use_clockid = 1, .clockid = 1,
	}, a;

	alloc_build_attr(&cpu, 512 * 1024, &a);
	cr_assert_eq(a.type, PERF_TYPE_SOFTWARE);
	cr_assert_eq(a.config, PERF_COUNT_SW_BPF_OUTPUT);
	cr_assert_eq(a.sample_period, 512 * 1024);
	cr_assert_eq(a.freq, 0);
	cr_assert_eq(a.sample_type & TRAILER, cpu.sample_type & TRAILER);
	cr_assert(a.sample_type & PERF_SAMPLE_RAW);
	cr_assert(a.sample_type & PERF_SAMPLE_PERIOD);
	cr_assert(a.sample_type & PERF_SAMPLE_CALLCHAIN);
	cr_assert_eq(a.sample_id_all, 1);
	cr_assert_eq(a.use_clockid, 1);
	cr_assert_eq(a.clockid, 1);
	alloc_build_attr(&cpu, 1, &a);
	cr_assert_eq(a.sample_period, 1);
}

Test(alloc, allocator_libraries)
{
	cr_assert(alloc_is_allocator_lib("/usr/lib/x86_64-linux-gnu/libc.so.6"));
	cr_assert(alloc_is_allocator_lib("/lib/libc-2.31.so"));
	cr_assert(alloc_is_allocator_lib("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"));
	cr_assert(alloc_is_allocator_lib("/usr/lib/libtcmalloc_minimal.so.4"));
	cr_assert_not(alloc_is_allocator_lib("/usr/lib/x86_64-linux-gnu/libcrypto.so.3"));
	cr_assert_not(alloc_is_allocator_lib("/usr/lib/x86_64-linux-gnu/libcap.so.2"));
	cr_assert_not(alloc_is_allocator_lib("/usr/bin/python3"));
}

/*
 * The countdown is an exponential draw with mean 1 (times the interval):
 * over x spread evenly across the 32-bit range, its mean is 1 and the
 * share above t is exp(-t), each to well within the table's step.
 */
Test(alloc, countdown_draw_is_exponential)
{
	const uint64_t steps = 1u << 20, stride = (1ull << 32) / steps;
	double sum = 0, above1 = 0, above3 = 0;

	for (uint64_t i = 0; i < steps; i++) {
		double v = (double)alloc_neg_log_q16((uint32_t)(i * stride + stride / 2), frac) /
			   65536.0;

		sum += v;
		above1 += v > 1.0;
		above3 += v > 3.0;
	}
	cr_assert(fabs(sum / steps - 1.0) < 0.001, "mean %.5f", sum / steps);
	cr_assert(fabs(above1 / steps - exp(-1.0)) < 0.001, "P(>1) %.5f", above1 / steps);
	cr_assert(fabs(above3 / steps - exp(-3.0)) < 0.001, "P(>3) %.5f", above3 / steps);
	/* The ends: the smallest u gives the largest draw, u = 1 gives 0. */
	cr_assert_gt(alloc_neg_log_q16(0, frac), 22 * 65536 - 65536);
	cr_assert_eq(alloc_neg_log_q16(UINT32_MAX, frac), 0);
}

/*
 * Whether a block of S bytes is sampled depends on the short draws: the
 * share of draws below S / interval must be 1 - exp(-S / interval), also
 * for blocks near the interval and far below it.
 */
Test(alloc, countdown_samples_a_block_with_its_probability)
{
	const uint64_t steps = 1u << 22, stride = (1ull << 32) / steps;
	const double t[] = { 0.0078125, 0.03125, 0.125, 0.5, 2.0 };

	for (size_t j = 0; j < sizeof(t) / sizeof(t[0]); j++) {
		double want = 1.0 - exp(-t[j]), below = 0;

		for (uint64_t i = 0; i < steps; i++)
			below += (double)alloc_neg_log_q16((uint32_t)(i * stride + stride / 2), frac) /
				 65536.0 <= t[j];
		cr_assert(fabs(below / steps / want - 1.0) < 0.005,
			  "P(draw <= %g) = %.5f, want %.5f", t[j], below / steps, want);
	}
}

Test(alloc, countdown_scales_with_the_interval)
{
	uint32_t x = 0x12345678;
	uint64_t q = alloc_neg_log_q16(x, frac);

	cr_assert_eq(alloc_next_countdown(512 * 1024, x, frac), (512 * 1024 * q >> 16) + 1);
	/* Never zero: zero means "not drawn yet" in BPF. */
	cr_assert_geq(alloc_next_countdown(1, UINT32_MAX, frac), 1);
	/* Capped so that interval * draw stays in 64 bits. */
	cr_assert_eq(alloc_next_countdown(UINT64_MAX, 0, frac),
		     alloc_next_countdown(ALLOC_INTERVAL_MAX, 0, frac));
}

/* Where the probes go: the C library this test runs with has its allocator. */
Test(alloc, func_offsets_of_the_c_library)
{
	const char *names[] = { "malloc", "free", "bpfrec_no_such_function" };
	const char *none[] = { "bpfrec_no_such_function" };
	uint64_t off[3], off1[1];
	Dl_info libc;
	Elf *elf;
	int fd;

	cr_assert(dladdr((void *)(uintptr_t)free, &libc) && libc.dli_fname);
	cr_assert_eq(elf_open_path(libc.dli_fname, &fd, &elf), 0, "%s", libc.dli_fname);
	cr_assert_eq(elf_func_offsets(elf, names, 3, off), 0);
	cr_assert_neq(off[0], 0);
	cr_assert_neq(off[1], 0);
	cr_assert_neq(off[0], off[1]);
	cr_assert_eq(off[2], 0);
	cr_assert_eq(elf_func_offsets(elf, none, 1, off1), -ENOENT);
	elf_end(elf);
	close(fd);
}
