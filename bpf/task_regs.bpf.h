/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * task_regs.bpf.h - the current task and its saved user registers, on
 * every kernel the sampler supports (5.10 and up).
 *
 * bpf_get_current_task_btf() (5.11) and bpf_task_pt_regs() (5.15) give
 * BTF pointers; older kernels have neither. The current task then comes
 * from bpf_get_current_task() and its user registers from where the kernel
 * saves them on entry: the top of the task's kernel stack (x86_64's
 * task_pt_regs(): THREAD_SIZE above task->stack, no padding). Either way
 * the result is read with BPF_CORE_READ (a probe read), so callers need
 * not know which one they got. The choice is a CO-RE check of the
 * running kernel's enum bpf_func_id, made once at load: the verifier sees
 * only the branch this kernel takes.
 */
#ifndef BPFREC_TASK_REGS_BPF_H
#define BPFREC_TASK_REGS_BPF_H

#include <bpf/bpf_core_read.h>

/* x86_64's THREAD_SIZE (PAGE_SIZE << 2) without KASAN, as every distribution builds. */
#define TASK_REGS_THREAD_SIZE	(4096 << 2)

/* The current task: a BTF pointer where the kernel has one (bpf_task_pt_regs() needs it). */
static __always_inline struct task_struct *current_task(void)
{
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf))
		return bpf_get_current_task_btf();
	return (struct task_struct *)bpf_get_current_task();
}

/* task's saved user registers, to be read with BPF_CORE_READ (NULL without a kernel stack). */
static __always_inline struct pt_regs *task_user_regs(struct task_struct *task)
{
	__u64 stack;

	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs))
		return (struct pt_regs *)bpf_task_pt_regs(task);
	stack = (__u64)BPF_CORE_READ(task, stack);
	if (!stack)
		return NULL;
	return (struct pt_regs *)(stack + TASK_REGS_THREAD_SIZE) - 1;
}

#endif /* BPFREC_TASK_REGS_BPF_H */
