// SPDX-License-Identifier: MIT
/*
 * test_unwind.c - DWARF unwinding of a copied stack (symbolize/unwind.h).
 *
 * The sample is real (test_capture.h): cap_f3 -> cap_f2 -> cap_f1 of this
 * test binary (built -O2, so without frame pointers in the plain build).
 * The mappings are this process's executable ones from /proc/self/maps.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/unwind.h"

#include "test_capture.h"

static struct symbolizer *sym;

/* A space with every executable file mapping of this process. */
static struct unw_space *self_space(void)
{
	struct cap_map maps[128];
	struct unw_space *sp;
	size_t n = cap_self_maps(maps, 128), found, missing;

	cr_assert_eq(symbolizer_new(NULL, &sym), 0);
	cr_assert_eq(unw_space_new(sym, getpid(), &sp), 0);
	for (size_t i = 0; i < n; i++) {
		struct sym_mapping m = { .path = maps[i].path, .start = maps[i].start,
					 .len = maps[i].end - maps[i].start, .pgoff = maps[i].pgoff };

		cr_assert_eq(unw_space_add(sp, &m), 0);
	}
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

	cap_f3();
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

	cap_f3();
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
