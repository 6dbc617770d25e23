/* SPDX-License-Identifier: MIT */
/*
 * cfitable.h - the compact unwind table of one ELF file, built from its
 * .eh_frame with libdw (dwarf_getcfi_elf, dwarf_cfi_addrframe,
 * dwarf_frame_info, dwarf_frame_cfa, dwarf_frame_register).
 *
 * The rows are struct unwind_row (bpf/unwind.h, where the layout is
 * documented), one per change of rule, covering every executable PT_LOAD
 * of the file: code without CFI gets explicit UNWIND_CFA_NONE rows, and one
 * NONE row ends each segment. A table depends only on the file, so it is
 * built once per build-id and shared by every process that maps the file.
 *
 * What the CFI says becomes:
 *   CFA = rsp/rbp + offset          -> UNWIND_CFA_RSP / UNWIND_CFA_RBP
 *   the .plt entry expression       -> UNWIND_CFA_PLT
 *   return address undefined        -> UNWIND_CFA_ROOT (ends a walk cleanly)
 *   FDE of a signal trampoline ('S') -> UNWIND_CFA_SIGNAL
 *   anything else (other registers or expressions, return address not at
 *   CFA-8, offsets that do not fit) -> UNWIND_CFA_UNSUPPORTED, counted
 *   rbp at CFA+off / unchanged ("same value" or "undefined", which is what
 *   libdw says where the CIE never mentions rbp) / any other rule
 *                                   -> UNWIND_RBP_AT_CFA / _SAME / _LOST
 */
#ifndef SYMBOLIZE_CFITABLE_H
#define SYMBOLIZE_CFITABLE_H

#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/unwind.h"
#include "symbolize/util.h"

/*
 * Bytes of code without CFI the builder probes one by one per file, at most
 * (the biggest real gaps: python3 36 KB, gcc's cc1 298 KB), and never more
 * than the file has bytes: code lies in the file, so only overlapping
 * segments could ask for more. Where the section headers say which bytes
 * of an executable segment are code (SHF_EXECINSTR sections), only those
 * are probed: gold puts the dynamic symbols and relocations (13 MB in
 * Debian's libLLVM-14) and .rodata into the executable segment.
 */
#define CFI_GAP_PROBES_MAX	(4u << 20)

/* How a table was made: what its rows hold and what was left out. */
struct cfi_table_stats {
	uint64_t cfi_rows;	/* rows libdw gave for the code (before merging equal ones) */
	uint64_t gap_bytes;	/* bytes of code without CFI (probed) */
	bool gap_truncated;	/* the probe budget ran out: code after that has no rows */
	/* Bytes of executable segments that are no code by the section headers (not probed). */
	uint64_t noncode_bytes;
	uint64_t plt_rows;	/* UNWIND_CFA_PLT rows */
	uint64_t unsupported_rows;	/* UNWIND_CFA_UNSUPPORTED rows */
	uint64_t rbp_lost_rows;	/* rows with UNWIND_RBP_LOST */
	uint64_t cfi_renewals;	/* libdw's FDE cache dropped on the way (cfitable.c) */
};

struct cfi_table {
	/* Sorted by pc, strictly increasing; NULL when they went to a sink (below). */
	struct unwind_row *rows;
	size_t nr;			/* rows made (also those handed to a sink) */
	struct load_seg *segs;		/* executable PT_LOADs, in file order */
	size_t nr_segs;
	struct cfi_table_stats stats;
};

/*
 * Build the table of the ELF file at path (opened with safeopen(): a regular
 * file only; for tools and tests). 0, -ENOENT when it has no
 * .eh_frame, -E2BIG when its code lies at or above 4 GiB or it needs more
 * than UNWIND_TABLE_MAX_ROWS rows, -EINVAL when it is not a usable ELF file
 * or its CFI is not one libdw can run in bounded memory (cfi_scan()),
 * -errno. Errors print nothing: the caller counts them per file.
 */
int cfi_table_build(const char *path, struct cfi_table **out);
/*
 * The same for a file already open for reading, as safeopen_mapped() opens
 * a mapped file (symbolize/safeopen.h): the way the recorder builds tables,
 * never by a path a traced process controls. fd stays open.
 */
int cfi_table_build_fd(int fd, struct cfi_table **out);

/*
 * emit: where the rows go instead of into cfi_table.rows: emit() gets them
 * in order, in chunks of at most 8192 rows, as the build makes them, so a
 * big file's table (cc1: 480k rows, 3.8 MB) is never in memory whole. The
 * recorder writes them straight into the row store. An error emit()
 * returns ends the build with that error. NULL: into the table.
 */
struct cfi_table_build_opts {
	size_t sz;		/* sizeof(struct cfi_table_build_opts) */
	int (*emit)(void *ctx, const struct unwind_row *rows, uint32_t nr);
	void *ctx;
};

/*
 * cfi_table_build_fd() with opts (NULL: as cfi_table_build_fd()). With
 * opts->emit, on success (*out)->rows is NULL and (*out)->nr is how many
 * rows emit() was given in all; on an error emit() may have had some of
 * them. -EINVAL for opts whose sz is too small.
 */
int cfi_table_build_fd_opts(int fd, const struct cfi_table_build_opts *opts,
			    struct cfi_table **out);
void cfi_table_free(struct cfi_table *t);

/*
 * The bias of a mapping of this file: runtime pc = ELF address + bias for
 * pcs in [start, start + len) mapped from file offset pgoff. 0, or -ENOENT
 * when the mapping holds none of the file's executable segments.
 */
int cfi_table_bias(const struct cfi_table *t, uint64_t start, uint64_t len, uint64_t pgoff,
		   uint64_t *bias);

/* The row covering ELF address vaddr (a NONE row in gaps), or NULL before the first row. */
const struct unwind_row *cfi_table_lookup(const struct cfi_table *t, uint64_t vaddr);

#endif /* SYMBOLIZE_CFITABLE_H */
