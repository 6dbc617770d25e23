/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * ustack.bpf.h - the user registers and a copy of the user stack, as
 * perf's --call-graph dwarf records them, for the sampler (profile.bpf.c)
 * and the off-CPU tracer (offcpu.bpf.c). Both run in the context of the
 * task whose stack they copy (current), so its user memory is mapped.
 *
 * The registers are the task's saved user registers (task_regs.bpf.h),
 * also when the sample hit kernel code. A task without an mm (a kernel
 * thread) has none: abi NONE, no stack.
 *
 * bpf_probe_read_user() is all or nothing: a read that touches one missing
 * page fails whole. The stack is therefore copied in PROFILE_USTACK_CHUNK
 * pieces from SP upwards; at the first piece that fails, the bytes before
 * the page boundary inside it are read once more and the copy stops there,
 * so the valid size (dyn_size) is exact and a fault near the top of the
 * stack never costs the frames below it.
 */
#ifndef BPFREC_USTACK_BPF_H
#define BPFREC_USTACK_BPF_H

#include "task_regs.bpf.h"

#define USTACK_PAGE_SIZE	4096

/* A copy of the saved registers, too big for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pt_regs);
} ustack_regs SEC(".maps");

/*
 * Fill u->abi and u->regs from task's user registers, u->size with size and
 * dyn_size with 0. Returns the user SP, or 0 when the task has none.
 */
static __always_inline __u64 ustack_read_regs(struct task_struct *task,
					      struct profile_ustack *u, __u32 size)
{
	__u32 zero = 0;
	struct pt_regs *r = bpf_map_lookup_elem(&ustack_regs, &zero);

	u->abi = PROFILE_UREGS_ABI_NONE;
	u->size = 0;
	u->dyn_size = 0;
	if (!r || !BPF_CORE_READ(task, mm))
		return 0;
	if (bpf_probe_read_kernel(r, sizeof(*r), task_user_regs(task)))
		return 0;
	/* perf_regs order for mask PROFILE_UREGS_MASK. */
	u->regs[0] = r->ax;
	u->regs[1] = r->bx;
	u->regs[2] = r->cx;
	u->regs[3] = r->dx;
	u->regs[4] = r->si;
	u->regs[5] = r->di;
	u->regs[6] = r->bp;
	u->regs[7] = r->sp;
	u->regs[8] = r->ip;
	u->regs[9] = r->flags;
	u->regs[10] = r->cs;
	u->regs[11] = r->ss;
	u->regs[12] = r->r8;
	u->regs[13] = r->r9;
	u->regs[14] = r->r10;
	u->regs[15] = r->r11;
	u->regs[16] = r->r12;
	u->regs[17] = r->r13;
	u->regs[18] = r->r14;
	u->regs[19] = r->r15;
	u->abi = PROFILE_UREGS_ABI_64;
	u->size = size;
	return r->sp;
}

/*
 * Copy up to size bytes of user memory from sp into dst at off. dst must
 * have room for whole chunks: off + size rounded up to PROFILE_USTACK_CHUNK.
 * Returns the bytes copied (dyn_size).
 */
static __always_inline __u32 ustack_copy(struct bpf_dynptr *dst, __u32 off, __u64 sp,
					 __u32 size)
{
	__u32 done = 0;

	for (int i = 0; i < PROFILE_USTACK_MAX / PROFILE_USTACK_CHUNK + 1; i++) {
		__u64 addr = sp + done;
		__u32 len, to_page;
		void *p;

		if (done >= size)
			break;
		len = size - done;
		if (len > PROFILE_USTACK_CHUNK)
			len = PROFILE_USTACK_CHUNK;
		p = bpf_dynptr_data(dst, off + done, PROFILE_USTACK_CHUNK);
		if (!p)
			break;
		if (!bpf_probe_read_user(p, len, (void *)addr)) {
			done += len;
			continue;
		}
		/* A piece spans at most one page boundary: keep what lies before it. */
		to_page = USTACK_PAGE_SIZE - (addr & (USTACK_PAGE_SIZE - 1));
		if (to_page < len &&
		    !bpf_probe_read_user(p, to_page & (PROFILE_USTACK_CHUNK - 1), (void *)addr))
			done += to_page;
		break;
	}
	return done;
}

/*
 * ustack_copy() into plain memory, for kernels without dynptrs (before 6.0):
 * dst has room bytes (a constant: the verifier checks every write against
 * it, so each offset is clamped right where it is used). Returns dyn_size.
 */
static __always_inline __u32 ustack_copy_mem(char *dst, __u32 room, __u64 sp, __u32 size)
{
	__u32 done = 0;

	for (int i = 0; i < PROFILE_USTACK_MAX / PROFILE_USTACK_CHUNK + 1; i++) {
		__u64 addr = sp + done;
		__u32 len, to_page;

		if (done >= size || room < PROFILE_USTACK_CHUNK || done > room - PROFILE_USTACK_CHUNK)
			break;
		len = size - done;
		if (len > PROFILE_USTACK_CHUNK)
			len = PROFILE_USTACK_CHUNK;
		if (!bpf_probe_read_user(dst + done, len, (void *)addr)) {
			done += len;
			continue;
		}
		to_page = USTACK_PAGE_SIZE - (addr & (USTACK_PAGE_SIZE - 1));
		if (to_page < len &&
		    !bpf_probe_read_user(dst + done, to_page & (PROFILE_USTACK_CHUNK - 1), (void *)addr))
			done += to_page;
		break;
	}
	return done;
}

/* Bytes a copy of size needs in its destination (whole chunks). */
static __always_inline __u32 ustack_room(__u32 size)
{
	return (size + PROFILE_USTACK_CHUNK - 1) & ~(__u32)(PROFILE_USTACK_CHUNK - 1);
}

#endif /* BPFREC_USTACK_BPF_H */
