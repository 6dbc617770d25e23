/* SPDX-License-Identifier: MIT */
/*
 * cfiwalk.h - the reference user-stack walker over unwind tables
 * (bpf/unwind.h, symbolize/cfitable.h): the algorithm the BPF sampler is to
 * run, in plain C, for tests and for checking the BPF walker against.
 *
 * Input: the user registers of the sampled thread, a copy of its stack
 * (the bytes at [base, base + size)), its executable mappings sorted by
 * start, and the row store they point into (every table, one after the
 * other, as in the BPF map). Per frame: find the mapping of the pc, binary
 * search its table (at pc for the first frame, at pc - 1 for return
 * addresses, which may sit just past a call at the end of a function),
 * compute the CFA, read the return address at CFA - 8 and the caller's rbp
 * where the row says, move to the caller. Everything is bounded: at most
 * UNWIND_MAX_FRAMES frames, UNWIND_SEARCH_STEPS search steps a frame.
 *
 * A frame the tables cannot describe (pc in no mapping or in one without a
 * table, no row, an UNSUPPORTED rule) is stepped over by frame pointer
 * while rbp is known and sane (unwind_fp_usable(): return address at
 * rbp + 8, the caller's rbp at rbp, its rsp at rbp + 16), and the walk goes
 * on with the tables from the caller; such frames are counted. An empty
 * mapping list (a process without tables) makes it a frame-pointer walk.
 *
 * The walk ends cleanly at the root (return address undefined or 0) or at a
 * signal frame, otherwise at the first frame it cannot continue (by table,
 * then by frame pointer): the table's reason is reported (enum unwind_stop)
 * and the frames found so far are kept. The BPF walker (bpf/unwind.bpf.h)
 * makes the same steps.
 */
#ifndef SYMBOLIZE_CFIWALK_H
#define SYMBOLIZE_CFIWALK_H

#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/unwind.h"

struct cfi_regs {
	uint64_t ip, sp, bp;
};

/* A copy of user stack memory: the bytes at addresses [base, base + size). */
struct cfi_stack {
	uint64_t base;
	const uint8_t *data;
	size_t size;
};

struct cfi_walk {
	uint64_t pcs[UNWIND_MAX_FRAMES];	/* pcs[0] = regs.ip, then return addresses */
	uint32_t nr;
	uint32_t fp_frames;	/* of pcs[1, nr), those found by frame pointer */
	enum unwind_stop stop;
};

/*
 * Walk one stack. rows: the row store, store_rows rows (a mapping whose
 * table does not lie inside it counts as one without a table); maps:
 * nr_maps <= UNWIND_MAX_MAPPINGS, sorted by start.
 */
void cfi_walk_stack(const struct unwind_row *rows, uint32_t store_rows,
		    const struct unwind_mapping *maps, uint32_t nr_maps,
		    const struct cfi_regs *regs, const struct cfi_stack *stack, struct cfi_walk *out);

/*
 * The same where the tables are not one array: rows_of(ctx, m, key, &nr)
 * gives nr rows of mapping m's table (m->first_row says which one it is)
 * to search for the ELF address key: all m->nr_rows of them, or a run of
 * them that holds the row a search of the whole table finds (the last one
 * at or below key; where there is none, a run whose first row is above
 * key). NULL when the table is not there (the mapping counts as one
 * without a table).
 */
typedef const struct unwind_row *(*cfi_rows_fn)(void *ctx, const struct unwind_mapping *m,
						uint32_t key, uint32_t *nr);
void cfi_walk_stack_with(cfi_rows_fn rows_of, void *ctx, const struct unwind_mapping *maps,
			 uint32_t nr_maps, const struct cfi_regs *regs,
			 const struct cfi_stack *stack, struct cfi_walk *out);

/*
 * For a rows_of that hands out a page of a row store at a time: the run of
 * the table at rows [first, first + nr) of the store to search for key,
 * given page_pcs[p], the pc of store row p * page_rows (the first row of
 * page p). The rows of the last page that starts inside the table at or
 * below key, or, below all of those, the rows before the table's first
 * page start: never more than page_rows rows, never across a page start.
 */
void cfi_page_run(const uint32_t *page_pcs, uint32_t page_rows, uint32_t first, uint32_t nr,
		  uint32_t key, uint32_t *run_first, uint32_t *run_nr);

/* A name for a stop reason ("root", "no-row", ...). */
const char *cfi_walk_stop_name(enum unwind_stop stop);

/* A name for a counter of the BPF walker ("walks", "fp-frames", ...). */
const char *cfi_walk_stat_name(enum unwind_stat stat);

#endif /* SYMBOLIZE_CFIWALK_H */
