// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * unwind_check.bpf.c - stand-alone perf_event programs that take the
 * sampled task's stacks, for tests/tools/unwind-check: unwind_check walks
 * the user stack with the unwind tables (unwind.bpf.h), fp_check takes it
 * by frame pointer with bpf_get_stack() as the sampler's -g does (the
 * baseline of the walker's cost). Both take the kernel stack of samples in
 * kernel mode the same way, so their run times differ by the user stack
 * only. Not used by the recorder: it exists so the BPF walker is compiled
 * with every build and can be loaded (verifier-checked) and tried on its
 * own. The last walk of each CPU stays in unwind_scratch, stop reasons are
 * counted in unwind_stops, frames in unwind_stats.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "unwind.bpf.h"
#include "perf_ctx.bpf.h"

/* bpf_probe_read_user() is GPL-only: the kernel accepts this dual licence as GPL-compatible. */
char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Sample only this process (0 = every process). */
const volatile __u32 target_tgid = 0;

/* Where the frame-pointer baseline and both kernel stacks go (per CPU). */
struct fp_stack {
	__u64 kernel[UNWIND_MAX_FRAMES];
	__u64 user[UNWIND_MAX_FRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fp_stack);
} fp_scratch SEC(".maps");

/* The per-CPU buffer when the sample is of target_tgid, else NULL; the kernel stack taken. */
static __always_inline struct fp_stack *sampled(struct bpf_perf_event_data *ctx)
{
	__u32 tgid = (__u32)(bpf_get_current_pid_tgid() >> 32), zero = 0;
	struct fp_stack *buf;

	if (target_tgid && tgid != target_tgid)
		return NULL;
	buf = bpf_map_lookup_elem(&fp_scratch, &zero);
	if (buf && perf_ctx_in_kernel(ctx))
		bpf_get_stack(ctx, buf->kernel, sizeof(buf->kernel), 0);
	return buf;
}

SEC("perf_event")
int unwind_check(struct bpf_perf_event_data *ctx)
{
	if (sampled(ctx))
		unwind_user_stack();
	return 0;
}

/* The walker as kernels without bpf_loop (before 5.17) run it. */
SEC("perf_event")
int unwind_check_bounded(struct bpf_perf_event_data *ctx)
{
	if (sampled(ctx))
		unwind_user_stack_with(true);
	return 0;
}

SEC("perf_event")
int fp_check(struct bpf_perf_event_data *ctx)
{
	struct fp_stack *buf = sampled(ctx);

	if (buf)
		bpf_get_stack(ctx, buf->user, sizeof(buf->user), BPF_F_USER_STACK);
	return 0;
}
