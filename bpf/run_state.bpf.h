/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * run_state.bpf.h - the state a task leaves the CPU in, for the
 * sched_switch programs of offcpu.bpf.c and sched.bpf.c.
 *
 * The sched_switch tracepoint passes prev's state as its fourth argument
 * from 5.18 only; a program that reads it is refused before that. So both
 * tracers read it from the task, as it is while __schedule() switches it
 * out: `__state` from 5.14, `state` (a long) before.
 */
#ifndef BPFREC_RUN_STATE_BPF_H
#define BPFREC_RUN_STATE_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

/* task_struct before 5.14. */
struct task_struct___state_long {
	long state;
} __attribute__((preserve_access_index));

static __always_inline unsigned int task_run_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return (unsigned int)BPF_CORE_READ((struct task_struct___state_long *)t, state);
}

#endif /* BPFREC_RUN_STATE_BPF_H */
