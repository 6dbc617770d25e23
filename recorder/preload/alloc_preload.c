// SPDX-License-Identifier: MIT
/*
 * alloc_preload.c - libbpfrec-alloc.so, the in-process fast path of
 * `bpfrec record --alloc` for a command the recorder launches (it is put in
 * the command's LD_PRELOAD; Documentation/allocations.md says when and why).
 *
 * It replaces malloc and its relatives with calls into glibc's own
 * (__libc_malloc, ...: no dlsym, so nothing to bootstrap), counts the bytes
 * down per thread in process (recorder/preload/alloc_inproc.h) and, only for a
 * sampled allocation, calls bpfrec_alloc_sampled(); a sampled address is
 * remembered so that its free (or realloc) calls bpfrec_alloc_freed(). The
 * recorder puts uprobes on those two functions only: an unsampled call
 * costs a few ns instead of a uprobe trap. The BPF side (bpf/alloc.bpf.c)
 * unwinds from the marker and drops the marker's own frame, so a stack
 * starts at the allocator's entry point here, then its callers.
 *
 * Environment: BPFREC_ALLOC_INTERVAL, mean bytes between samples (1 =
 * every allocation); absent or invalid: nothing is sampled.
 *
 * Built with frame pointers and no sibling calls: the marker is called, not
 * jumped to, so the entry point's frame is on the stack when it is probed.
 */
#include <errno.h>
#include <malloc.h>	/* memalign(), pvalloc(): declared there */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "recorder/preload/alloc_inproc.h"
#include <linux/types.h>	/* bpf/alloc.h is in kernel types */
#include "bpf/alloc.h"

#define EXPORT	__attribute__((visibility("default")))
/*
 * The probed markers: never inlined, merged or dropped, and naked: their
 * first instruction is a 5-byte nop, which the kernel probes without
 * single-stepping an instruction out of line (recent kernels turn a probe
 * on it into a call instead of a breakpoint trap).
 */
#define MARKER	__attribute__((visibility("default"), noinline, noipa, used, naked))

extern void *__libc_malloc(size_t size);
extern void __libc_free(void *ptr);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void *__libc_memalign(size_t align, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

/* Set at load from the environment; 0 = off. */
static uint64_t interval;
static struct alloc_set sampled;
/* Initial-exec: a TLS access that never calls the allocator back. */
static __thread struct alloc_countdown countdown __attribute__((tls_model("initial-exec")));

/* A forked child draws its own numbers, not its parent's thread's again. */
static void reseed_child(void)
{
	countdown.rng = 0;
}

__attribute__((constructor)) static void read_interval(void)
{
	const char *v = getenv("BPFREC_ALLOC_INTERVAL");
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || *end || !n)
		return;
	interval = n > ALLOC_INTERVAL_MAX ? ALLOC_INTERVAL_MAX : n;
	pthread_atfork(NULL, NULL, reseed_child);
}

/* The probed markers: exported for the tracer's uprobes, called only from here. */
void bpfrec_alloc_sampled(uint32_t func, uint64_t size, void *ptr);
void bpfrec_alloc_freed(void *ptr);

/* Arguments (func, size, ptr) in rdi, rsi, rdx for the probe. */
MARKER void bpfrec_alloc_sampled(uint32_t func __attribute__((unused)), uint64_t size __attribute__((unused)),
				  void *ptr __attribute__((unused)))
{
	__asm__ volatile(".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\tret");	/* nop5 */
}

/* ptr in rdi. */
MARKER void bpfrec_alloc_freed(void *ptr __attribute__((unused)))
{
	__asm__ volatile(".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\tret");	/* nop5 */
}

/* A thread's first seed: its countdown's address (per thread) and the time. */
static uint64_t seed(void)
{
	struct timespec ts = { 0 };

	if (countdown.rng)
		return 0;	/* seeded already: unused */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)(uintptr_t)&countdown ^ ((uint64_t)ts.tv_sec << 32) ^
	       (uint64_t)ts.tv_nsec;
}

static inline void after_alloc(uint32_t func, uint64_t size, void *ptr)
{
	if (!interval || !ptr || !alloc_countdown_take(&countdown, size, interval, seed()))
		return;
	alloc_set_add(&sampled, (uint64_t)(uintptr_t)ptr);
	bpfrec_alloc_sampled(func, size, ptr);
}

static inline void before_free(void *ptr)
{
	if (ptr && alloc_set_take(&sampled, (uint64_t)(uintptr_t)ptr))
		bpfrec_alloc_freed(ptr);
}

EXPORT void *malloc(size_t size)
{
	void *p = __libc_malloc(size);

	after_alloc(ALLOC_FUNC_MALLOC, size, p);
	return p;
}

EXPORT void free(void *ptr)
{
	before_free(ptr);
	__libc_free(ptr);
}

EXPORT void *calloc(size_t n, size_t size)
{
	void *p = __libc_calloc(n, size);

	after_alloc(ALLOC_FUNC_CALLOC, (uint64_t)n * size, p);
	return p;
}

EXPORT void *realloc(void *ptr, size_t size)
{
	void *p;

	/*
	 * The old block is reported before it goes back: after, another
	 * thread could be given its address and sample it first. A realloc
	 * that then fails (out of memory) keeps a block no longer followed.
	 */
	before_free(ptr);
	p = __libc_realloc(ptr, size);
	after_alloc(ALLOC_FUNC_REALLOC, size, p);
	return p;
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	void *p;

	if (align % sizeof(void *) || (align & (align - 1)) || !align)
		return EINVAL;
	p = __libc_memalign(align, size);
	if (!p)
		return ENOMEM;
	*out = p;
	after_alloc(ALLOC_FUNC_POSIX_MEMALIGN, size, p);
	return 0;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
	void *p = __libc_memalign(align, size);

	after_alloc(ALLOC_FUNC_ALIGNED_ALLOC, size, p);
	return p;
}

EXPORT void *memalign(size_t align, size_t size)
{
	void *p = __libc_memalign(align, size);

	after_alloc(ALLOC_FUNC_MEMALIGN, size, p);
	return p;
}

EXPORT void *valloc(size_t size)
{
	void *p = __libc_valloc(size);

	after_alloc(ALLOC_FUNC_MEMALIGN, size, p);
	return p;
}

EXPORT void *pvalloc(size_t size)
{
	void *p = __libc_pvalloc(size);

	after_alloc(ALLOC_FUNC_MEMALIGN, size, p);
	return p;
}
