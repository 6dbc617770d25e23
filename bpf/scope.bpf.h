/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * scope.bpf.h - what the sampler (profile.bpf.c) and the off-CPU program
 * (offcpu.bpf.c) share: the sample ring buffer, the target maps and the
 * rules for who is in scope and when to wake user space.
 *
 * Both BPF objects define these maps from this one place, and user space
 * makes the off-CPU object reuse the sampler's fds (bpf_map__reuse_fd), so
 * the definitions must match; keeping them here makes sure they do.
 */
#ifndef BPFREC_SCOPE_BPF_H
#define BPFREC_SCOPE_BPF_H

const volatile __u32 filter_mode = PROFILE_FILTER_ALL;
/* Forced wakeup threshold in bytes (set to half the ring buffer). */
const volatile __u64 wakeup_bytes = 1 << 20;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);	/* resized by user space before load */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} target_tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} target_tids SEC(".maps");

static __always_inline bool in_scope(__u32 tgid, __u32 tid)
{
	if (filter_mode == PROFILE_FILTER_TGID)
		return bpf_map_lookup_elem(&target_tgids, &tgid) != NULL;
	if (filter_mode == PROFILE_FILTER_TID)
		return bpf_map_lookup_elem(&target_tids, &tid) != NULL;
	return true;
}

static __always_inline __u64 submit_flags(void)
{
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

#endif /* BPFREC_SCOPE_BPF_H */
