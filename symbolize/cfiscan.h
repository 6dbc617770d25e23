/* SPDX-License-Identifier: MIT */
/*
 * cfiscan.h - whether libdw can interpret an ELF file's .eh_frame in
 * bounded memory.
 *
 * libdw's CFA interpreter (dwarf_cfi_addrframe) grows its register array to
 * the largest register number an instruction names, up to 2 GiB that it
 * also clears, and copies the array at each DW_CFA_remember_state. The files
 * whose tables the recorder builds are mapped by processes it does not
 * trust, so before libdw runs an instruction, cfi_scan() decodes every
 * instruction libdw could reach in the file:
 *   - every entry of every .eh_frame section or, in a file with no such
 *     section, of the .eh_frame that PT_GNU_EH_FRAME's header points at, in
 *     the order libdw's linear search reads them (dwarf_next_cfi, skipping a
 *     bad entry as libdw does);
 *   - every FDE that a binary-search table (.eh_frame_hdr section or
 *     PT_GNU_EH_FRAME) names, in each of those .eh_frames;
 *   - for each FDE, the initial instructions of its CIE.
 * That is more than libdw reads for any one file (it picks one .eh_frame),
 * so a file that passes cannot make it allocate more than
 * CFI_SCAN_MAX_DEPTH copies of CFI_SCAN_MAX_REG + 1 registers.
 *
 * What the scan cannot decode is refused, not guessed: DW_CFA_set_loc,
 * opcodes libdw does not know, augmentations other than "" and "z[LRPS]*",
 * pointer encodings other than absolute, pc- and data-relative 2/4/8-byte
 * ones. gcc, clang and the linkers emit none of those.
 */
#ifndef SYMBOLIZE_CFISCAN_H
#define SYMBOLIZE_CFISCAN_H

#include <gelf.h>

/* x86_64's DWARF register numbers end at 125 (k7): 127 leaves room. */
#define CFI_SCAN_MAX_REG	127u
/* Nested DW_CFA_remember_state in one CIE's or FDE's program (real code: 1-2). */
#define CFI_SCAN_MAX_DEPTH	64
/* .eh_frame (or .eh_frame_hdr) sections one file may have: real ones have 1. */
#define CFI_SCAN_MAX_SECTIONS	4

/*
 * 0 when libdw may run elf's CFI; -EINVAL when an instruction names a
 * register above CFI_SCAN_MAX_REG, nests remember_state deeper than
 * CFI_SCAN_MAX_DEPTH, or uses something the scan does not decode (above);
 * -E2BIG when the scan would read more than a fixed multiple of the CFI's
 * bytes (FDEs sharing a large CIE, tables naming one FDE many times).
 */
int cfi_scan(Elf *elf);

/* Bytes of CFI decoded between two calls of cfi_scan_opts.pages, about. */
#define CFI_SCAN_PAGES_BYTES	(1u << 20)

/*
 * pages (may be NULL) is called after about every CFI_SCAN_PAGES_BYTES of
 * CFI decoded: the scan reads all of a file's CFI (libLLVM-14: 5.6 MB), and
 * a caller that reads the file through a mapping can give its pages back
 * meanwhile instead of holding them all at once (cfitable.c).
 */
struct cfi_scan_opts {
	size_t sz;		/* sizeof(struct cfi_scan_opts) */
	void (*pages)(void *ctx);
	void *ctx;
};

/* cfi_scan() with opts (NULL: none); -EINVAL for opts whose sz is too small. */
int cfi_scan_opts(Elf *elf, const struct cfi_scan_opts *opts);

#endif /* SYMBOLIZE_CFISCAN_H */
