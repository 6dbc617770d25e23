// SPDX-License-Identifier: MIT
/*
 * Unit tests for tools/pprof/ustack.c: perf's REGS_USER order to DWARF
 * order, and which samples carry a usable user stack, bounded.
 * The register bit numbers are written out from the kernel's uapi
 * asm/perf_regs.h (AX=0 BX=1 CX=2 DX=3 SI=4 DI=5 BP=6 SP=7 IP=8 ... R8=16).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tools/pprof/ustack.h"

/* perf record --call-graph dwarf's mask on x86_64: AX..SS and R8..R15. */
#define PERF_DWARF_MASK 0xff0fffULL

Test(ustack, regs_in_dwarf_order)
{
	uint64_t regs[20];
	struct unw_regs r;

	/* Value = perf bit number + 100, stored in bit order (12 low bits, then R8..R15). */
	for (int i = 0; i < 12; i++)
		regs[i] = 100 + i;
	for (int i = 0; i < 8; i++)
		regs[12 + i] = 116 + i;
	pp_ustack_regs(PERF_DWARF_MASK, regs, 20, &r);
	cr_expect_eq(r.valid, (1u << UNW_NR_REGS) - 1, "all 17 DWARF registers: %#x", r.valid);
	cr_expect_eq(r.r[UNW_REG_RAX], 100);
	cr_expect_eq(r.r[UNW_REG_RDX], 103);
	cr_expect_eq(r.r[UNW_REG_RCX], 102);
	cr_expect_eq(r.r[UNW_REG_RBX], 101);
	cr_expect_eq(r.r[UNW_REG_RSI], 104);
	cr_expect_eq(r.r[UNW_REG_RDI], 105);
	cr_expect_eq(r.r[UNW_REG_RBP], 106);
	cr_expect_eq(r.r[UNW_REG_RSP], 107);
	cr_expect_eq(r.r[UNW_REG_RIP], 108);
	for (int i = 0; i < 8; i++)
		cr_expect_eq(r.r[UNW_REG_R8 + i], 116 + i, "r%d", 8 + i);
}

Test(ustack, partial_mask_and_short_array)
{
	/* Only IP, SP and BP recorded (bits 6, 7, 8): three values in bit order. */
	uint64_t regs[3] = { 0xb9, 0x5b, 0x1b };
	struct unw_regs r;

	pp_ustack_regs(1u << 6 | 1u << 7 | 1u << 8, regs, 3, &r);
	cr_expect_eq(r.valid, 1u << UNW_REG_RBP | 1u << UNW_REG_RSP | 1u << UNW_REG_RIP);
	cr_expect_eq(r.r[UNW_REG_RBP], 0xb9);
	cr_expect_eq(r.r[UNW_REG_RSP], 0x5b);
	cr_expect_eq(r.r[UNW_REG_RIP], 0x1b);
	/* An array shorter than the mask says: the missing ones are not valid. */
	pp_ustack_regs(1u << 6 | 1u << 7 | 1u << 8, regs, 2, &r);
	cr_expect_eq(r.valid, 1u << UNW_REG_RBP | 1u << UNW_REG_RSP);
}

static struct perf_event_attr dwarf_attr(void)
{
	struct perf_event_attr a = { 0 };

	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
			PERF_SAMPLE_STACK_USER;
	a.sample_regs_user = PERF_DWARF_MASK;
	a.sample_stack_user = 8192;
	return a;
}

Test(ustack, which_samples_carry_a_stack)
{
	static uint8_t stack[8192];
	uint64_t regs[20] = { 0 };
	struct perf_event_attr a = dwarf_attr();
	struct perfdata_sample s = {
		.regs_abi = PERF_SAMPLE_REGS_ABI_64, .nr_regs = 20, .regs = regs,
		.stack_size = sizeof(stack), .stack = stack, .stack_dyn_size = 1000,
	};
	const size_t head = sizeof(struct unw_regs);
	bool cut;

	cr_expect_eq(pp_ustack_size(&a, &s, 65536, &cut), head + 1000);
	cr_expect(!cut);
	/* Only the valid bytes, in whole words. */
	s.stack_dyn_size = 1001;
	cr_expect_eq(pp_ustack_size(&a, &s, 65536, &cut), head + 1000);
	/* Cut to the room left in the record. */
	s.stack_dyn_size = 8192;
	cr_expect_eq(pp_ustack_size(&a, &s, head + 4096, &cut), head + 4096);
	cr_expect(cut);
	/* No registers (abi NONE: a kernel thread), 32-bit registers, no valid bytes. */
	s.regs_abi = PERF_SAMPLE_REGS_ABI_NONE;
	cr_expect_eq(pp_ustack_size(&a, &s, 65536, &cut), 0);
	s.regs_abi = PERF_SAMPLE_REGS_ABI_32;
	cr_expect_eq(pp_ustack_size(&a, &s, 65536, &cut), 0);
	s.regs_abi = PERF_SAMPLE_REGS_ABI_64;
	s.stack_dyn_size = 0;
	cr_expect_eq(pp_ustack_size(&a, &s, 65536, &cut), 0);
	/* dyn_size larger than size (the decoder rejects it; never trust it here). */
	s.stack_dyn_size = 1 << 20;
	cr_expect_eq(pp_ustack_size(&a, &s, 1 << 24, &cut), head + sizeof(stack));
	/* An event that does not record both. */
	s.stack_dyn_size = 1000;
	a.sample_type &= ~PERF_SAMPLE_STACK_USER;
	cr_expect_eq(pp_ustack_size(&a, &s, 65536, &cut), 0);
}

Test(ustack, pack_puts_regs_then_stack)
{
	static uint8_t stack[64];
	uint64_t regs[20] = { 0 }, out[64];
	struct perf_event_attr a = dwarf_attr();
	struct perfdata_sample s = {
		.regs_abi = PERF_SAMPLE_REGS_ABI_64, .nr_regs = 20, .regs = regs,
		.stack_size = sizeof(stack), .stack = stack, .stack_dyn_size = sizeof(stack),
	};
	struct unw_regs r;
	bool cut;
	size_t len;

	for (size_t i = 0; i < sizeof(stack); i++)
		stack[i] = (uint8_t)i;
	regs[7] = 0x7ffd0000;	/* SP */
	regs[8] = 0x401000;	/* IP */
	len = pp_ustack_size(&a, &s, sizeof(out), &cut);
	cr_assert_eq(len, sizeof(r) + sizeof(stack));
	pp_ustack_pack(&a, &s, out, len);
	memcpy(&r, out, sizeof(r));
	cr_expect_eq(r.r[UNW_REG_RSP], 0x7ffd0000);
	cr_expect_eq(r.r[UNW_REG_RIP], 0x401000);
	cr_expect_eq(memcmp((uint8_t *)out + sizeof(r), stack, sizeof(stack)), 0);
}
