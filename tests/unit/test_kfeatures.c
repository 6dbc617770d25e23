// SPDX-License-Identifier: MIT
/* test_kfeatures.c - which options each kernel's features allow, and the refusal's words. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/kfeatures.h"
#include "recorder/tracer_build.h"

/* Debian 11's kernel: ring buffer and BTF, none of the later helpers. */
static const struct kfeatures linux_5_10 = { .release = "5.10.0-35-amd64" };
/* 5.15: task storage, no bpf_loop, no dynptr. */
static const struct kfeatures linux_5_15 = { .release = "5.15.0-1", .task_storage = true };
static const struct kfeatures linux_6_1 = {
	.release = "6.1.0-56-amd64", .bpf_loop = true, .task_storage = true, .ringbuf_dynptr = true,
};

Test(kfeatures, plain_and_fp_sampling_fit_every_kernel)
{
	struct kfeatures_want none = { 0 };
	char msg[256] = "";

	cr_assert_eq(kfeatures_check(&linux_5_10, &none, msg, sizeof(msg)), 0);
	cr_assert_eq(kfeatures_check(&linux_6_1, &none, msg, sizeof(msg)), 0);
	cr_assert_str_empty(msg);
}

Test(kfeatures, everything_fits_6_1)
{
	struct kfeatures_want all = { .off_cpu = true, .sched = true, .alloc = true };
	struct kfeatures_want dwarf = { .dwarf = true, .off_cpu = true };
	char msg[256];

	cr_assert_eq(kfeatures_check(&linux_6_1, &all, msg, sizeof(msg)), 0);
	cr_assert_eq(kfeatures_check(&linux_6_1, &dwarf, msg, sizeof(msg)), 0);
}

Test(kfeatures, refusal_names_option_version_kernel_and_remedy)
{
	struct kfeatures_want alloc = { .alloc = true };
	char msg[256];

	cr_assert_eq(kfeatures_check(&linux_5_10, &alloc, msg, sizeof(msg)), -ENOTSUP);
	cr_assert_str_eq(msg, "--alloc needs Linux 5.17 or newer (this is 5.10.0-35-amd64): "
			      "record without it");
	cr_assert_null(strchr(msg, '\n'));
}

Test(kfeatures, off_cpu_and_sched_fit_every_kernel_with_the_compat_build)
{
	struct kfeatures_want tracers = { .off_cpu = true, .sched = true };
	char msg[256];

	cr_assert_eq(kfeatures_check(&linux_5_10, &tracers, msg, sizeof(msg)), 0);
	cr_assert_eq(kfeatures_check(&linux_5_15, &tracers, msg, sizeof(msg)), 0);
	/* The compat build: without task storage (5.10) or bpf_loop (5.15). */
	cr_assert(tracer_build_compat(&linux_5_10));
	cr_assert(tracer_build_compat(&linux_5_15));
	cr_assert_not(tracer_build_compat(&linux_6_1));
}

Test(kfeatures, alloc_needs_task_storage_and_bpf_loop)
{
	struct kfeatures_want alloc = { .alloc = true };
	char msg[256];

	/* 5.15 has task storage but not bpf_loop, which its table walker needs. */
	cr_assert_eq(kfeatures_check(&linux_5_15, &alloc, msg, sizeof(msg)), -ENOTSUP);
	cr_assert(strstr(msg, "--alloc needs Linux 5.17"), "%s", msg);
	cr_assert_eq(kfeatures_check(&linux_6_1, &alloc, msg, sizeof(msg)), 0);
}

Test(kfeatures, dwarf_fits_every_kernel_off_cpu_dwarf_needs_ringbuf_dynptr)
{
	struct kfeatures_want dwarf = { .dwarf = true };
	struct kfeatures_want off_dwarf = { .dwarf = true, .off_cpu = true };
	struct kfeatures no_dynptr = linux_6_1;
	char msg[256];

	/* CPU samples with stack copies reserve their longest record there. */
	cr_assert_eq(kfeatures_check(&linux_5_10, &dwarf, msg, sizeof(msg)), 0);
	no_dynptr.ringbuf_dynptr = false;
	cr_assert_eq(kfeatures_check(&no_dynptr, &dwarf, msg, sizeof(msg)), 0);
	cr_assert_eq(kfeatures_check(&no_dynptr, &off_dwarf, msg, sizeof(msg)), -ENOTSUP);
	cr_assert(strstr(msg, "--off-cpu with --call-graph dwarf needs Linux 6.0"), "%s", msg);
	cr_assert_eq(kfeatures_check(&linux_5_10, &off_dwarf, msg, sizeof(msg)), -ENOTSUP);
	cr_assert(strstr(msg, "--off-cpu with --call-graph dwarf needs Linux 6.0"), "%s", msg);
}

Test(kfeatures, environment_takes_features_away_never_adds)
{
	struct kfeatures kf, all;

	cr_assert_eq(setenv("BPFREC_KERNEL_LACKS", "", 1), 0);
	kfeatures_probe(&all);
	cr_assert_eq(setenv("BPFREC_KERNEL_LACKS", "task_storage,bogus,bpf_loop", 1), 0);
	kfeatures_probe(&kf);
	unsetenv("BPFREC_KERNEL_LACKS");
	cr_assert_not(kf.task_storage);
	cr_assert_not(kf.bpf_loop);
	cr_assert_eq(kf.ringbuf_dynptr, all.ringbuf_dynptr);
	cr_assert_eq(kf.hash_nonprealloc, all.hash_nonprealloc);
	cr_assert(tracer_build_compat(&kf));
}

Test(kfeatures, probe_of_this_kernel_names_it)
{
	struct kfeatures kf;

	kfeatures_probe(&kf);
	cr_assert_str_not_empty(kf.release);
}
