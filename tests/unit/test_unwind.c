// SPDX-License-Identifier: MIT
/*
 * test_unwind.c - DWARF unwinding of a copied stack (symbolize/unwind.h).
 *
 * The sample is real: f3 -> f2 -> f1 of this test binary (built -O2, so
 * without frame pointers in the plain build), where f1 copies its
 * registers and the stack above its stack pointer, as perf does for
 * --call-graph dwarf. The expected return addresses do not come from the
 * unwinder: each function stores __builtin_return_address(0) (which the
 * compiler computes from its own frame layout) before calling the next.
 * The mappings are this process's executable ones from /proc/self/maps.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/unwind.h"

#define STACK_COPY 16384

struct snapshot {
	uint64_t rsp, rbp, rip, rbx, r12, r13, r14, r15;
	uint8_t stack[STACK_COPY];
	size_t len;
	uint64_t ra[4];		/* ra[i]: where f_i returns to */
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

__attribute__((noinline)) static void f1(void)
{
	snap.ra[1] = (uint64_t)__builtin_return_address(0);
	/* The registers here: rip is inside f1, rsp is f1's. */
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

__attribute__((noinline)) static void f2(void)
{
	snap.ra[2] = (uint64_t)__builtin_return_address(0);
	f1();
	__asm__ volatile("" ::: "memory");	/* no tail call */
}

__attribute__((noinline)) static void f3(void)
{
	snap.ra[3] = (uint64_t)__builtin_return_address(0);
	f2();
	__asm__ volatile("" ::: "memory");
}

static void regs_of_snapshot(struct unw_regs *r)
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

static struct symbolizer *sym;

/* A space with every executable file mapping of this process. */
static struct unw_space *self_space(void)
{
	struct unw_space *sp;
	char line[4096];
	size_t found, missing;
	FILE *f;

	cr_assert_eq(symbolizer_new(NULL, &sym), 0);
	cr_assert_eq(unw_space_new(sym, getpid(), &sp), 0);
	f = fopen("/proc/self/maps", "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff;
		char perms[8], path[4096] = "";
		struct sym_mapping m;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &start, &end, perms, &pgoff,
			   path) < 4 || perms[2] != 'x' || path[0] != '/')
			continue;
		m = (struct sym_mapping){ .path = path, .start = start, .len = end - start,
					  .pgoff = pgoff };
		cr_assert_eq(unw_space_add(sp, &m), 0);
	}
	fclose(f);
	unw_space_files(sp, &found, &missing);
	cr_assert_geq(found, 2, "this binary and libc at least: %zu found", found);
	return sp;
}

static void done(struct unw_space *sp)
{
	unw_space_free(sp);
	symbolizer_free(sym);
}

Test(unwind, real_stack_without_frame_pointers)
{
	struct unw_frame frames[64];
	struct unw_regs regs;
	struct unw_space *sp;
	enum unw_stop stop;
	size_t nr;

	f3();
	regs_of_snapshot(&regs);
	sp = self_space();
	cr_assert_eq(unw_space_unwind(sp, &regs, snap.stack, snap.len, frames, 64, &nr, &stop), 0);
	cr_assert_geq(nr, 4, "only %zu frames (stop %d)", nr, stop);
	cr_expect_eq(frames[0].pc, snap.rip);
	cr_expect(!frames[0].is_return);
	for (int i = 1; i <= 3; i++) {
		cr_expect_eq(frames[i].pc, snap.ra[i], "frame %d: %#llx, expected %#llx", i,
			     (unsigned long long)frames[i].pc, (unsigned long long)snap.ra[i]);
		cr_expect(frames[i].is_return);
	}
	/* The same space serves the next sample (the Dwfl is reused). */
	cr_assert_eq(unw_space_unwind(sp, &regs, snap.stack, snap.len, frames, 64, &nr, &stop), 0);
	cr_expect_geq(nr, 4);
	cr_expect_eq(frames[3].pc, snap.ra[3]);
	done(sp);
}

Test(unwind, stops_are_told_apart)
{
	struct unw_frame frames[64];
	struct unw_regs regs;
	struct unw_space *sp, *empty;
	enum unw_stop stop;
	size_t nr;

	f3();
	regs_of_snapshot(&regs);
	sp = self_space();

	/* No stack bytes: f1's return address cannot be read. */
	cr_assert_eq(unw_space_unwind(sp, &regs, snap.stack, 0, frames, 64, &nr, &stop), 0);
	cr_expect_eq(nr, 1);
	cr_expect_eq(frames[0].pc, snap.rip);
	cr_expect_eq(stop, UNW_STOP_OUTSIDE_STACK, "stop %d", stop);

	/* The depth limit. */
	cr_assert_eq(unw_space_unwind(sp, &regs, snap.stack, snap.len, frames, 2, &nr, &stop), 0);
	cr_expect_eq(nr, 2);
	cr_expect_eq(stop, UNW_STOP_DEPTH);

	/* No stack pointer: nothing to start from. */
	regs.valid &= ~(1u << UNW_REG_RSP);
	cr_assert_eq(unw_space_unwind(sp, &regs, snap.stack, snap.len, frames, 64, &nr, &stop), 0);
	cr_expect_eq(nr, 0);
	cr_expect_eq(stop, UNW_STOP_NO_REGS);
	regs.valid |= 1u << UNW_REG_RSP;

	/* A space without files: the pc is all there is. */
	cr_assert_eq(unw_space_new(sym, 1, &empty), 0);
	cr_assert_eq(unw_space_unwind(empty, &regs, snap.stack, snap.len, frames, 64, &nr, &stop), 0);
	cr_expect_eq(nr, 1);
	cr_expect_eq(frames[0].pc, snap.rip);
	cr_expect_eq(stop, UNW_STOP_NO_FILE);
	/* Mappings come before the first walk. */
	struct sym_mapping m = { .path = "/bin/true", .start = 0x1000, .len = 0x1000 };

	cr_expect_eq(unw_space_add(empty, &m), -EBUSY);
	unw_space_free(empty);
	done(sp);
}

Test(unwind, missing_file_is_counted)
{
	struct sym_mapping m = { .path = "/nonexistent/libgone.so", .start = 0x7f0000000000,
				 .len = 0x10000 };
	struct unw_space *sp;
	size_t found, missing;

	cr_assert_eq(symbolizer_new(NULL, &sym), 0);
	cr_assert_eq(unw_space_new(sym, 1, &sp), 0);
	cr_expect_eq(unw_space_add(sp, &m), 0);
	m.path = NULL;
	cr_expect_eq(unw_space_add(sp, &m), -EINVAL);
	unw_space_files(sp, &found, &missing);
	cr_expect_eq(found, 0);
	cr_expect_eq(missing, 1);
	done(sp);
}
