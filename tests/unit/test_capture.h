/* SPDX-License-Identifier: MIT */
/*
 * test_capture.h - a real user stack sample of the test process itself,
 * for the unwinding tests: cap_f3 -> cap_f2 -> cap_f1, where cap_f1 copies
 * its registers and the stack above its stack pointer, as perf does for
 * --call-graph dwarf. The expected return addresses do not come from an
 * unwinder: each function stores __builtin_return_address(0) (which the
 * compiler computes from its own frame layout) before calling the next.
 * Header-only; include it in one test file.
 */
#ifndef TEST_CAPTURE_H
#define TEST_CAPTURE_H

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "symbolize/unwind.h"

#define STACK_COPY 16384

struct snapshot {
	uint64_t rsp, rbp, rip, rbx, r12, r13, r14, r15;
	uint8_t stack[STACK_COPY];
	size_t len;
	uint64_t ra[4];		/* ra[i]: where cap_f<i> returns to */
};

static struct snapshot snap;

/* Read the live stack word by word: an instrumented memcpy would see the
 * other frames' redzones as overflows under ASan. */
__attribute__((noinline, no_sanitize_address)) static void copy_stack(uint64_t from, size_t len)
{
	const volatile uint64_t *src = (const volatile uint64_t *)from;
	uint64_t *dst = (uint64_t *)snap.stack;

	for (size_t i = 0; i < len / 8; i++)
		dst[i] = src[i];
	snap.len = len / 8 * 8;
}

static size_t stack_room(uint64_t sp)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;
	uint64_t top;

	cr_assert_eq(pthread_getattr_np(pthread_self(), &attr), 0);
	cr_assert_eq(pthread_attr_getstack(&attr, &addr, &size), 0);
	pthread_attr_destroy(&attr);
	top = (uint64_t)addr + size;
	cr_assert(sp < top);
	return top - sp < STACK_COPY ? top - sp : STACK_COPY;
}

__attribute__((noinline)) static void cap_f1(void)
{
	snap.ra[1] = (uint64_t)__builtin_return_address(0);
	/* The registers here: rip is inside cap_f1, rsp is cap_f1's. */
	__asm__ volatile("movq %%rsp, %0\n\t"
			 "movq %%rbp, %1\n\t"
			 "leaq 0(%%rip), %%rax\n\t"
			 "movq %%rax, %2\n\t"
			 "movq %%rbx, %3\n\t"
			 "movq %%r12, %4\n\t"
			 "movq %%r13, %5\n\t"
			 "movq %%r14, %6\n\t"
			 "movq %%r15, %7\n\t"
			 : "=m"(snap.rsp), "=m"(snap.rbp), "=m"(snap.rip), "=m"(snap.rbx),
			   "=m"(snap.r12), "=m"(snap.r13), "=m"(snap.r14), "=m"(snap.r15)
			 :
			 : "rax", "memory");
	copy_stack(snap.rsp, stack_room(snap.rsp));
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void cap_f2(void)
{
	snap.ra[2] = (uint64_t)__builtin_return_address(0);
	cap_f1();
	__asm__ volatile("" ::: "memory");	/* no tail call */
}

__attribute__((noinline)) static void cap_f3(void)
{
	snap.ra[3] = (uint64_t)__builtin_return_address(0);
	cap_f2();
	__asm__ volatile("" ::: "memory");
}

static __attribute__((unused)) void regs_of_snapshot(struct unw_regs *r)
{
	memset(r, 0, sizeof(*r));
	r->r[UNW_REG_RSP] = snap.rsp;
	r->r[UNW_REG_RBP] = snap.rbp;
	r->r[UNW_REG_RIP] = snap.rip;
	r->r[UNW_REG_RBX] = snap.rbx;
	r->r[UNW_REG_R12] = snap.r12;
	r->r[UNW_REG_R13] = snap.r13;
	r->r[UNW_REG_R14] = snap.r14;
	r->r[UNW_REG_R15] = snap.r15;
	r->valid = 1u << UNW_REG_RSP | 1u << UNW_REG_RBP | 1u << UNW_REG_RIP | 1u << UNW_REG_RBX |
		   1u << UNW_REG_R12 | 1u << UNW_REG_R13 | 1u << UNW_REG_R14 | 1u << UNW_REG_R15;
}

/* The executable file mappings of this process, from /proc/self/maps. */
struct cap_map {
	uint64_t start, end, pgoff;
	char path[512];
};

static size_t cap_self_maps(struct cap_map *out, size_t max)
{
	char line[1024];
	size_t n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	cr_assert(f);
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff;
		char perms[8];
		struct cap_map *m = &out[n];

		m->path[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %511[^\n]", &start, &end, perms, &pgoff,
			   m->path) < 4 || perms[2] != 'x' || m->path[0] != '/')
			continue;
		m->start = start;
		m->end = end;
		m->pgoff = pgoff;
		n++;
	}
	fclose(f);
	cr_assert_gt(n, 0);
	return n;
}

#endif /* TEST_CAPTURE_H */
