// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * alloc.bpf.c - who allocates, and what is still held: `bpfrec record
 * --alloc[=BYTES]`.
 *
 * Uprobes on the allocator's entries (malloc, calloc, realloc,
 * posix_memalign, aligned_alloc, memalign, mmap of anonymous memory) and
 * uretprobes on their returns, an entry probe on free and munmap. User
 * space attaches them per library file (recorder/alloc.c), for every
 * process mapping it; the programs keep only tasks in scope (the sampler's
 * target maps, shared as in offcpu.bpf.c) and never the recorder itself.
 *
 * Sampling (Poisson, as tcmalloc and Go): each thread counts down bytes
 * drawn from an exponential distribution with mean `interval`; the call
 * that takes the count to zero is sampled and a new count is drawn. An
 * unsampled call costs the two probes and a subtraction. A sampled one is
 * unwound at the allocator's entry (the walker of unwind.bpf.h with the
 * sampler's tables, or frame pointers), then at its return the address is
 * known: the record goes into alloc_events and into alloc_live, keyed by
 * (process, address), so that a free of the address removes it and what
 * is left at the end is what is still held. A full alloc_live is counted.
 *
 * Allocators call each other (realloc(NULL, n) is malloc, big blocks come
 * from mmap): a per-thread depth makes only the outermost call count.
 * Everything per thread lives in task-local storage, freed with the task.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "alloc.h"
/* Python walks cut count here (python.bpf.h). */
#define PY_STAT_CUT ALLOC_STAT_PY_CUT
#include "scope.bpf.h"
#include "stats.bpf.h"
#include "unwind.bpf.h"
#include "python.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Mean bytes between samples; 1 = every allocation. */
const volatile __u64 interval = 512 * 1024;
/* The recorder's own process: its allocations are not the workload's. */
const volatile __u32 self_tgid = 0;
/* User stacks walked with the unwind tables (maps shared with the sampler); else fp. */
const volatile bool unwind_cfi = false;

static const __u32 log2_frac[ALLOC_LOG2_FRAC_LEN] = ALLOC_LOG2_FRAC;

#define MAP_ANONYMOUS_FLAG	0x20

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);	/* resized by user space before load */
} alloc_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, ALLOC_LIVE_MAX);	/* resized by user space */
	__type(key, struct alloc_live_key);
	__type(value, struct alloc_sample);
} alloc_live SEC(".maps");

STATS_MAP(alloc_stats, ALLOC_STAT_MAX)

/* One thread's state: its countdown and the allocator call it is in. */
struct alloc_thread {
	__s64 countdown;	/* bytes until the next sample */
	__u32 depth;		/* allocator calls entered, not returned */
	__u32 func;		/* the outermost call's enum alloc_func */
	__u64 size;
	__u64 arg;		/* realloc: the old block; posix_memalign: where to put it */
	__u64 entry_sp;		/* the stack pointer at the outermost call's entry */
	__u32 sampled;		/* rec holds the outermost call's sample */
	__u32 pad;
	struct alloc_sample rec;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct alloc_thread);
} alloc_threads SEC(".maps");

static __always_inline __s64 draw(void)
{
	return (__s64)alloc_next_countdown(interval, bpf_get_prandom_u32(), log2_frac);
}

static __always_inline __u64 alloc_submit_flags(void)
{
	if (bpf_ringbuf_query(&alloc_events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/*
 * The user stack at the allocator's entry. The return address is on top
 * of the stack there, so the direct caller is known even when nothing
 * else is: without tables for the process (or for the allocator's library)
 * yet, the chain is the allocator and its caller; by frame pointers (which
 * at an entry skip the caller) the caller is put back second.
 */
static __always_inline __u32 entry_stack(struct pt_regs *ctx, __u64 *frames, __u32 tgid)
{
	__u64 sp = PT_REGS_SP(ctx), ret = 0;
	long n;

	/*
	 * A walk that stops at the allocator (its library not yet in the
	 * process's tables while they are being loaded) still has the caller
	 * from the stack.
	 */
	if (unwind_cfi && bpf_map_lookup_elem(&unwind_procs, &tgid)) {
		n = unwind_user_callchain(frames);
		if (n >= 2)
			return n;
	}
	frames[0] = PT_REGS_IP(ctx);
	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)sp) || !ret)
		return 1;
	if (unwind_cfi) {
		frames[1] = ret;
		return 2;
	}
	n = bpf_get_stack(ctx, &frames[1], (PROFILE_MAX_STACK - 1) * sizeof(__u64),
			  BPF_F_USER_STACK);
	frames[1] = ret;
	if (n <= 0)
		return 2;
	n = (n / sizeof(__u64)) & 0x7f;
	return n + 1 > PROFILE_MAX_STACK ? PROFILE_MAX_STACK : n + 1;
}

/*
 * The calling thread's Python frames after rec's user frames (python.bpf.h;
 * this object loads on 5.17+ only, bpf_loop being its walker's): how many.
 */
static __always_inline __u32 python_frames_into(struct alloc_sample *rec, __u32 tgid, __u32 tid)
{
	if (!python_frames)
		return 0;
	return py_frames_into(rec->frames, rec->nr_user, PROFILE_MAX_STACK, ALLOC_PY_ROOM, tgid,
			      tid, false);
}

/* An allocator entered: the outermost call remembers its arguments and, when sampled, its stack. */
static __always_inline void enter(struct pt_regs *ctx, __u32 func, __u64 size, __u64 arg)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct alloc_thread *t;
	bool sample;

	if (tgid == self_tgid || !in_scope(tgid, tid))
		return;
	t = bpf_task_storage_get(&alloc_threads, bpf_get_current_task_btf(), NULL,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		count(ALLOC_STAT_NO_STORAGE);
		return;
	}
	/*
	 * A call nested in another runs on a deeper stack. One at or above the
	 * outer call's entry means that call left without its return probe
	 * (a longjmp out of a handler, the kernel's limit on pending returns):
	 * start afresh rather than ignore this thread from now on.
	 */
	if (t->depth && PT_REGS_SP(ctx) >= t->entry_sp)
		t->depth = 0;
	if (t->depth++)
		return;		/* inside another allocator call: that one counts */
	t->entry_sp = PT_REGS_SP(ctx);
	t->func = func;
	t->size = size;
	t->arg = arg;
	t->sampled = 0;
	if (func == ALLOC_FUNC_NONE)
		return;
	count(ALLOC_STAT_CALLS);
	if (!t->countdown)
		t->countdown = draw();	/* the thread's first call */
	if (interval <= 1) {
		sample = size > 0;
	} else {
		t->countdown -= (__s64)size;
		sample = t->countdown <= 0;
		if (sample)
			t->countdown = draw();
	}
	if (!sample)
		return;
	t->sampled = 1;
	t->rec.hdr.kind = ALLOC_KIND_SAMPLE;
	t->rec.hdr.pid = tgid;
	t->rec.hdr.tid = tid;
	t->rec.size = size;
	t->rec.func = func;
	t->rec.addr = 0;
	bpf_get_current_comm(t->rec.comm, sizeof(t->rec.comm));
	t->rec.nr_user = entry_stack(ctx, t->rec.frames, tgid);
	t->rec.nr_py = python_frames_into(&t->rec, tgid, tid);
}

/* A sampled block (or mapping) at addr ends. */
static __always_inline void forget(__u32 tgid, __u64 addr)
{
	struct alloc_live_key key = { .pid = tgid, .addr = addr };

	if (!bpf_map_delete_elem(&alloc_live, &key))
		count(ALLOC_STAT_FREED);
}

/* A sampled allocation at addr, its record in t->rec: remember it and send it. */
static __always_inline void submit(struct alloc_thread *t, __u32 tgid, __u64 addr)
{
	struct alloc_live_key key = { .pid = tgid, .addr = addr };
	__u64 size;

	count(ALLOC_STAT_SAMPLED);
	/*
	 * Stamped when sent, not at the call's entry: a call can outlast a
	 * round of the recorder (a page-faulting calloc under a slow CPU), and
	 * a record older than the round before it is out of order for perf.
	 */
	t->rec.hdr.time = bpf_ktime_get_ns();
	t->rec.addr = addr;
	t->rec.hdr.cpu = bpf_get_smp_processor_id();
	if (bpf_map_update_elem(&alloc_live, &key, &t->rec, BPF_ANY))
		count(ALLOC_STAT_LIVE_FULL);
	size = ALLOC_SAMPLE_SIZE(ALLOC_SAMPLE_WORDS(&t->rec) & 0x3ff);
	if (size > sizeof(t->rec))	/* never true; keeps the bound visible to the verifier */
		size = sizeof(t->rec);
	if (bpf_ringbuf_output(&alloc_events, &t->rec, size, alloc_submit_flags()))
		count(ALLOC_STAT_LOST);
}

/* The outermost allocator call returns ret. */
static __always_inline void leave(__u64 ret)
{
	struct alloc_thread *t;
	__u64 addr = ret;
	__u32 tgid;

	t = bpf_task_storage_get(&alloc_threads, bpf_get_current_task_btf(), NULL, 0);
	if (!t || !t->depth)
		return;		/* entered before the probes were attached */
	if (--t->depth)
		return;
	tgid = bpf_get_current_pid_tgid() >> 32;
	switch (t->func) {
	case ALLOC_FUNC_REALLOC:
		/* A failed realloc keeps the old block; realloc(p, 0) frees it. */
		if (t->arg && (ret || !t->size))
			forget(tgid, t->arg);
		break;
	case ALLOC_FUNC_POSIX_MEMALIGN:
		addr = 0;
		if (ret || bpf_probe_read_user(&addr, sizeof(addr), (void *)t->arg))
			addr = 0;
		break;
	case ALLOC_FUNC_MMAP:
		if (ret == (__u64)-1)	/* MAP_FAILED */
			addr = 0;
		break;
	}
	if (!t->sampled || !addr)
		return;
	t->sampled = 0;
	submit(t, tgid, addr);
}

SEC("uprobe")
int BPF_KPROBE(malloc_entry, __u64 size)
{
	enter(ctx, ALLOC_FUNC_MALLOC, size, 0);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(calloc_entry, __u64 n, __u64 size)
{
	enter(ctx, ALLOC_FUNC_CALLOC, n * size, 0);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(realloc_entry, __u64 ptr, __u64 size)
{
	enter(ctx, ALLOC_FUNC_REALLOC, size, ptr);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(posix_memalign_entry, __u64 memptr, __u64 align, __u64 size)
{
	enter(ctx, ALLOC_FUNC_POSIX_MEMALIGN, size, memptr);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(aligned_alloc_entry, __u64 align, __u64 size)
{
	enter(ctx, ALLOC_FUNC_ALIGNED_ALLOC, size, 0);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(memalign_entry, __u64 align, __u64 size)
{
	enter(ctx, ALLOC_FUNC_MEMALIGN, size, 0);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(mmap_entry, __u64 addr, __u64 len, __u64 prot, __u64 flags)
{
	/* A file mapping is no allocation, but its return still unwinds the depth. */
	enter(ctx, (flags & MAP_ANONYMOUS_FLAG) ? ALLOC_FUNC_MMAP : ALLOC_FUNC_NONE, len, 0);
	return 0;
}

/* Every allocator's return (one program, attached at each of them). */
SEC("uretprobe")
int BPF_KRETPROBE(alloc_return, __u64 ret)
{
	leave(ret);
	return 0;
}

/* free(p) and munmap(p, len): a sampled p is no longer held. */
static __always_inline void release(__u64 addr)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	struct alloc_thread *t;

	if (!addr || tgid == self_tgid || !in_scope(tgid, (__u32)pid_tgid))
		return;
	/* Inside realloc (or an allocator's own bookkeeping): the outer call decides. */
	t = bpf_task_storage_get(&alloc_threads, bpf_get_current_task_btf(), NULL, 0);
	if (t && t->depth)
		return;
	forget(tgid, addr);
}

SEC("uprobe")
int BPF_KPROBE(free_entry, __u64 ptr)
{
	release(ptr);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(munmap_entry, __u64 addr)
{
	release(addr);
	return 0;
}

/*
 * The stack of a sampled allocation at the fast path's marker: the
 * allocator's entry point in the library (the marker's return address),
 * its caller, then theirs. The library keeps frame pointers, so those two
 * are known whatever the walk gives: a walk that agrees (its second frame
 * is the return address) loses only the marker's frame; one that went by
 * frame pointers from the marker's entry skipped the entry point, which is
 * put back; anything else is replaced by the two frames known.
 */
static __always_inline __u32 marker_stack(struct pt_regs *ctx, __u64 *frames, __u32 tgid)
{
	__u64 ret = 0, caller = 0;
	__u32 n = entry_stack(ctx, frames, tgid);

	bpf_probe_read_user(&ret, sizeof(ret), (void *)PT_REGS_SP(ctx));
	bpf_probe_read_user(&caller, sizeof(caller), (void *)(PT_REGS_FP(ctx) + 8));
	if (n > PROFILE_MAX_STACK)
		n = PROFILE_MAX_STACK;
	if (n >= 3 && frames[1] == ret && frames[2] == caller) {
		for (__u32 i = 0; i + 1 < PROFILE_MAX_STACK; i++) {
			if (i + 1 >= n)
				break;
			frames[i] = frames[i + 1];
			asm volatile("" ::: "memory");	/* a loop, not a memmove BPF has not */
		}
		return n - 1;
	}
	if (n >= 2 && frames[1] == caller) {
		frames[0] = ret;
		return n;
	}
	frames[0] = ret;
	frames[1] = caller;
	return caller ? 2 : 1;
}

/*
 * The fast path (recorder/preload/alloc_preload.c, libbpfrec-alloc.so, preloaded
 * into a launched command): the process samples by itself and calls these
 * two markers only for a sampled allocation and for the free of one. The
 * stack is walked at the marker's entry; its first frame (the marker) is
 * dropped, so the record starts at the allocator's entry point in the
 * library, then its caller, as a uprobe on the allocator gives.
 */
SEC("uprobe")
int BPF_KPROBE(marker_sampled, __u32 func, __u64 size, __u64 ptr)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid, n;
	struct alloc_thread *t;

	if (!ptr || func >= ALLOC_FUNC_FREE || tgid == self_tgid || !in_scope(tgid, tid))
		return 0;
	t = bpf_task_storage_get(&alloc_threads, bpf_get_current_task_btf(), NULL,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		count(ALLOC_STAT_NO_STORAGE);
		return 0;
	}
	count(ALLOC_STAT_CALLS);
	t->rec.hdr.kind = ALLOC_KIND_SAMPLE;
	t->rec.hdr.pid = tgid;
	t->rec.hdr.tid = tid;
	t->rec.size = size;
	t->rec.func = func;
	bpf_get_current_comm(t->rec.comm, sizeof(t->rec.comm));
	n = marker_stack(ctx, t->rec.frames, tgid);
	t->rec.nr_user = n;
	t->rec.nr_py = python_frames_into(&t->rec, tgid, tid);
	submit(t, tgid, ptr);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(marker_freed, __u64 ptr)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;

	if (!ptr || tgid == self_tgid || !in_scope(tgid, (__u32)pid_tgid))
		return 0;
	forget(tgid, ptr);
	return 0;
}
