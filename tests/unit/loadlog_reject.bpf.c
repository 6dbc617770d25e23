// SPDX-License-Identifier: MIT
/*
 * loadlog_reject.bpf.c - two programs for test_loadlog.c: one the verifier
 * accepts, one it rejects with EACCES (as it does a program that reads
 * past its context), so a rejection and a refusal can be told apart on a
 * real kernel.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

SEC("perf_event")
int accepted(struct bpf_perf_event_data *ctx)
{
	return ctx->sample_period > 0;
}

/* "invalid bpf_context access": far past the end of the context. */
SEC("perf_event")
int rejected(struct bpf_perf_event_data *ctx)
{
	return *(volatile __u64 *)((char *)ctx + 4096) > 0;
}
