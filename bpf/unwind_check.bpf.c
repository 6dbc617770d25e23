// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * unwind_check.bpf.c - a stand-alone perf_event program that walks the
 * sampled task's user stack with the unwind tables (unwind.bpf.h). Not used
 * by the recorder: it exists so the BPF walker is compiled with every build
 * and can be loaded (verifier-checked) and tried on its own before it moves
 * into profile.bpf.c. The last walk of each CPU stays in unwind_scratch,
 * stop reasons are counted in unwind_stops.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "unwind.bpf.h"

/* bpf_probe_read_user() is GPL-only: the kernel accepts this dual licence as GPL-compatible. */
char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Walk only this process (0 = every process with a table). */
const volatile __u32 target_tgid = 0;

SEC("perf_event")
int unwind_check(struct bpf_perf_event_data *ctx)
{
	__u32 tgid = (__u32)(bpf_get_current_pid_tgid() >> 32);

	(void)ctx;
	if (target_tgid && tgid != target_tgid)
		return 0;
	unwind_user_stack();
	return 0;
}
