/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * perf_ctx.bpf.h - the context of a perf_event BPF program, as the UAPI
 * lays it out on x86_64 (struct bpf_perf_event_data, whose regs are the
 * UAPI struct pt_regs: 21 registers of 8 bytes each).
 *
 * Why not vmlinux.h's struct: its types carry preserve_access_index, so
 * every field access is a CO-RE relocation against the running kernel's
 * *internal* struct pt_regs, and that struct changes between kernels
 * (6.9+ declares cs as a 16-bit field in a union, 6.1 as 8 bytes). libbpf
 * then either refuses the object ("unexpected mem size") or narrows the
 * load, which the verifier refuses ("invalid bpf_context access"): the
 * perf_event context only takes 8-byte loads. The UAPI layout is fixed
 * for every kernel, so this struct is read without relocations and the
 * same object loads on 5.10, 6.1 and 6.18, whichever kernel built it.
 */
#ifndef BPFREC_PERF_CTX_BPF_H
#define BPFREC_PERF_CTX_BPF_H

struct bpfrec_perf_ctx {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	__u64 ax, cx, dx, si, di, orig_ax;
	__u64 ip, cs, flags, sp, ss;
	__u64 sample_period;
	__u64 addr;
};

/* True when the sample interrupted kernel code (CPL 0 in cs). */
static __always_inline bool perf_ctx_in_kernel(const void *ctx)
{
	return !(((const struct bpfrec_perf_ctx *)ctx)->cs & 3);
}

#endif /* BPFREC_PERF_CTX_BPF_H */
