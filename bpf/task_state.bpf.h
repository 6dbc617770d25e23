/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * task_state.bpf.h - what a tracer keeps per task, on every kernel.
 *
 * Where the kernel lets tracing programs use task-local storage (5.11) the
 * state lives there and the kernel frees it with the task. Older kernels
 * have none: there the same state lives in a hash keyed by tid, created on
 * first use from a zeroed value, and the tracer drops a task's entry at
 * its last switch-out (the one whose state is TASK_DEAD, which every
 * exiting task makes). A task that dies unseen keeps its entry until the
 * recording ends; when the hash is full, new tasks get no state and the
 * tracer counts them as it counts a failed task-storage allocation.
 *
 * TASK_STATE_MAPS(name, T) declares both maps, `name` and `name_by_tid`.
 * Each tracer builds its programs twice from the same code (a constant
 * `compat` argument, as profile.bpf.c builds its sample program): the
 * current build uses task storage and bpf_loop (5.17), the compat build the
 * hash and bounded loops. The two share no instruction a kernel could
 * refuse: user space loads one build and does not create the other's map
 * (tracer_build.h).
 */
#ifndef BPFREC_TASK_STATE_BPF_H
#define BPFREC_TASK_STATE_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

/* Tasks the compat build can keep state for at once (entries allocated on use). */
#define TASK_STATE_MAX_TIDS 32768

#define TASK_STATE_MAPS(name, value_type)                               \
	struct {                                                        \
		__uint(type, BPF_MAP_TYPE_TASK_STORAGE);                \
		__uint(map_flags, BPF_F_NO_PREALLOC);                   \
		__type(key, int);                                       \
		__type(value, value_type);                              \
	} name SEC(".maps");                                            \
	struct {                                                        \
		__uint(type, BPF_MAP_TYPE_HASH);                        \
		__uint(map_flags, BPF_F_NO_PREALLOC);                   \
		__uint(max_entries, TASK_STATE_MAX_TIDS);               \
		__type(key, __u32);                                     \
		__type(value, value_type);                              \
	} name##_by_tid SEC(".maps");                                   \
	static value_type name##_zero	/* the compat build's first value; never written */

static __always_inline void *task_state_get_(void *storage, void *by_tid, const void *zero,
					     struct task_struct *task, bool create, bool compat)
{
	__u32 tid;
	void *v;

	if (!compat)
		return bpf_task_storage_get(storage, task, NULL,
					    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	tid = BPF_CORE_READ(task, pid);
	v = bpf_map_lookup_elem(by_tid, &tid);
	if (v || !create)
		return v;
	bpf_map_update_elem(by_tid, &tid, zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(by_tid, &tid);
}

/* task's state in the maps `name` declares; created (zeroed) when create; NULL when none. */
#define task_state_get(name, task, create, compat)                                   \
	((typeof(name##_zero) *)task_state_get_(&name, &name##_by_tid, &name##_zero, \
						(task), (create), (compat)))

/* task is gone: the compat build frees its entry (task storage goes with the task). */
#define task_state_drop(name, task, compat)                                   \
	do {                                                                  \
		if (compat) {                                                 \
			__u32 tid_ = BPF_CORE_READ((struct task_struct *)(task), pid); \
			bpf_map_delete_elem(&name##_by_tid, &tid_);           \
		}                                                             \
	} while (0)

#endif /* BPFREC_TASK_STATE_BPF_H */
