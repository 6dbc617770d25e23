/* SPDX-License-Identifier: MIT */
/*
 * unwind.h - the compact unwind rows that user space builds from an ELF
 * file's .eh_frame (symbolize/cfitable.h) and a stack walker follows, in
 * user space (symbolize/cfiwalk.h, the reference) and later in BPF. Shared
 * by both sides, so it uses only fixed-size kernel types (__u32, __u64; the
 * includer provides them) and no libc; see Documentation/unwinding.md.
 *
 * A table is an array of struct unwind_row sorted by pc, strictly
 * increasing. Row i covers the ELF addresses [rows[i].pc, rows[i + 1].pc);
 * the last row of a table is always a UNWIND_CFA_NONE row at the end of the
 * code, and every gap between FDEs has its own NONE row, so a binary search
 * ("the last row whose pc <= address") never answers for a gap with the
 * row of the function before it.
 *
 * pc is the ELF virtual address as in the file (p_vaddr based), not a
 * runtime address: one table serves every process that maps the file, at
 * any base. A walker turns a runtime pc into it with the mapping's bias
 * (struct unwind_mapping). Files with code at or above 4 GiB get no table.
 *
 * rule packs, from bit 0:
 *   bits  0-2   CFA kind (enum unwind_cfa)
 *   bits  3-4   rbp kind (enum unwind_rbp)
 *   bits  5-12  rbp offset from the CFA in units of 8 bytes, signed
 *   bits 13-31  CFA offset in bytes, unsigned (up to 512 KiB - 1)
 * The return address is always at CFA - 8 (x86_64): a row whose CFI puts it
 * elsewhere is UNWIND_CFA_UNSUPPORTED. Rows whose rule does not fit the
 * bits are UNSUPPORTED too, never truncated.
 */
#ifndef BPFREC_UNWIND_H
#define BPFREC_UNWIND_H

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

struct unwind_row {
	__u32 pc;	/* ELF address where the rule starts */
	__u32 rule;	/* UNWIND_RULE(...) */
};

enum unwind_cfa {
	UNWIND_CFA_NONE = 0,		/* no CFI covers this code (a gap, or past the end) */
	UNWIND_CFA_RSP = 1,		/* CFA = rsp + off */
	UNWIND_CFA_RBP = 2,		/* CFA = rbp + off */
	UNWIND_CFA_PLT = 3,		/* CFA = rsp + off + ((pc & 15) >= 11 ? 8 : 0): a .plt entry */
	UNWIND_CFA_UNSUPPORTED = 4,	/* any other expression or register, or a rule that does not fit */
	UNWIND_CFA_ROOT = 5,		/* return address undefined: the outermost frame (_start, clone) */
	UNWIND_CFA_SIGNAL = 6,		/* a signal trampoline (__restore_rt) */
};

enum unwind_rbp {
	UNWIND_RBP_SAME = 0,	/* the caller's rbp is this frame's rbp (not saved, or not yet) */
	UNWIND_RBP_AT_CFA = 1,	/* saved at CFA + rbp offset */
	UNWIND_RBP_LOST = 2,	/* recovered by a rule we do not follow: unknown in the caller */
};

#define UNWIND_CFA_BITS		3
#define UNWIND_RBP_SHIFT	3
#define UNWIND_RBP_OFF_SHIFT	5
#define UNWIND_CFA_OFF_SHIFT	13
#define UNWIND_CFA_OFF_MAX	((1u << (32 - UNWIND_CFA_OFF_SHIFT)) - 1)
#define UNWIND_RBP_OFF_MIN	(-128 * 8)
#define UNWIND_RBP_OFF_MAX	(127 * 8)

#define UNWIND_RULE(cfa, cfa_off, rbp, rbp_off)                                  \
	((__u32)(cfa) | ((__u32)(rbp) << UNWIND_RBP_SHIFT) |                       \
	 (((__u32)((rbp_off) / 8) & 0xff) << UNWIND_RBP_OFF_SHIFT) |               \
	 ((__u32)(cfa_off) << UNWIND_CFA_OFF_SHIFT))

static __always_inline __u32 unwind_rule_cfa(__u32 rule)
{
	return rule & ((1u << UNWIND_CFA_BITS) - 1);
}

static __always_inline __u32 unwind_rule_cfa_off(__u32 rule)
{
	return rule >> UNWIND_CFA_OFF_SHIFT;
}

static __always_inline __u32 unwind_rule_rbp(__u32 rule)
{
	return (rule >> UNWIND_RBP_SHIFT) & 3;
}

static __always_inline int unwind_rule_rbp_off(__u32 rule)
{
	return (int)(signed char)(rule >> UNWIND_RBP_OFF_SHIFT) * 8;
}

/*
 * Tables are at most UNWIND_TABLE_MAX_ROWS rows, so a search takes at most
 * UNWIND_SEARCH_STEPS steps. Most files need a few thousand rows, libc and
 * python3 30-65k; compilers and LLVM need 350-860k (gcc's cc1 and
 * cc1plus, libLLVM-15, libclang), so the bound is 2^20 (an 8 MiB table).
 */
#define UNWIND_TABLE_MAX_ROWS	(1u << 20)
#define UNWIND_SEARCH_STEPS	21

/*
 * The binary search of the walkers: the index of the last of nr entries,
 * sorted by start, whose start is <= key, or -1 when there is none.
 * START(i) is a macro giving entry i's start. At most `steps` steps, enough
 * for nr < 2^steps. The BPF walker (unwind.bpf.h) runs these same steps one
 * per bpf_loop iteration: as one loop, the verifier would follow each of
 * its 2^steps paths.
 */
#define UNWIND_LAST_LE(START, nr, key, steps)                                    \
	({                                                                       \
		__u32 __lo = 0, __hi = (nr);                                     \
		for (int __s = 0; __s < (steps) && __lo < __hi; __s++) {         \
			__u32 __mid = __lo + (__hi - __lo) / 2;                  \
			if (START(__mid) <= (key))                               \
				__lo = __mid + 1;                                \
			else                                                     \
				__hi = __mid;                                    \
		}                                                                \
		(int)__lo - 1;                                                   \
	})

/* The row of the table rows[0, nr) (nr <= UNWIND_TABLE_MAX_ROWS) that covers key, or -1. */
static __always_inline int unwind_search(const struct unwind_row *rows, __u32 nr, __u32 key)
{
#define UNWIND_ROW_PC(i) rows[(i) & (UNWIND_TABLE_MAX_ROWS - 1)].pc
	return UNWIND_LAST_LE(UNWIND_ROW_PC, nr, key, UNWIND_SEARCH_STEPS);
#undef UNWIND_ROW_PC
}

/* The most executable mappings a walker knows per process. */
#define UNWIND_MAX_MAPPINGS	512
#define UNWIND_MAPPING_STEPS	10

/*
 * One executable mapping of a process, as a walker needs it: runtime pcs in
 * [start, end) are ELF address pc - bias of the table at rows [first_row,
 * first_row + nr_rows) of the row store (all tables, one after the other);
 * nr_rows 0 = no table.
 */
struct unwind_mapping {
	__u64 start, end;
	__u64 bias;
	__u32 first_row, nr_rows;
};

/* Index of the mapping of m[0, nr) (sorted by start, nr <= UNWIND_MAX_MAPPINGS) holding pc, or -1. */
static __always_inline int unwind_find_mapping(const struct unwind_mapping *m, __u32 nr, __u64 pc)
{
#define UNWIND_MAP_START(i) m[(i) & (UNWIND_MAX_MAPPINGS - 1)].start
	int i = UNWIND_LAST_LE(UNWIND_MAP_START, nr, pc, UNWIND_MAPPING_STEPS);
#undef UNWIND_MAP_START

	if (i < 0 || pc >= m[i & (UNWIND_MAX_MAPPINGS - 1)].end)
		return -1;
	return i;
}

/* What a walker knows of one process: its executable mappings, sorted by start. */
struct unwind_proc {
	__u32 nr;
	__u32 pad;
	struct unwind_mapping maps[UNWIND_MAX_MAPPINGS];
};

/* The deepest walk: perf's default perf_event_max_stack. */
#define UNWIND_MAX_FRAMES	127

/* Why a walk ended; a walker counts each. */
enum unwind_stop {
	UNWIND_STOP_ROOT = 0,		/* clean: the outermost frame, or a zero return address */
	UNWIND_STOP_SIGNAL = 1,		/* clean: a signal frame (not walked through yet) */
	UNWIND_STOP_NO_MAPPING = 2,	/* the pc is in no known mapping */
	UNWIND_STOP_NO_TABLE = 3,	/* its mapping has no table (JIT, no .eh_frame, over budget) */
	UNWIND_STOP_NO_ROW = 4,		/* its table has no CFI there */
	UNWIND_STOP_UNSUPPORTED = 5,	/* the row's rule is an expression we do not follow */
	UNWIND_STOP_NO_RBP = 6,		/* the CFA is rbp-based but rbp is unknown */
	UNWIND_STOP_STACK_READ = 7,	/* a read outside the captured stack (or a fault) */
	UNWIND_STOP_BAD_FRAME = 8,	/* the CFA does not move up the stack: corrupt data */
	UNWIND_STOP_DEPTH = 9,		/* UNWIND_MAX_FRAMES reached */
	UNWIND_STOP_MAX = 10,
};

/*
 * Per-CPU counters of the BPF walker (map unwind_stats), next to the count
 * of walks by stop reason (unwind_stops, which sums to UNWIND_STAT_WALKS).
 */
enum unwind_stat {
	UNWIND_STAT_WALKS = 0,		/* walks made */
	UNWIND_STAT_NO_PROC = 1,	/* walks of a process without tables (unwind_procs): all by fp */
	UNWIND_STAT_FP_WALKS = 2,	/* walks with at least one frame found by frame pointer */
	UNWIND_STAT_FP_FRAMES = 3,	/* frames found by frame pointer */
	UNWIND_STAT_FRAMES = 4,		/* frames found in all (pcs[0] included) */
	UNWIND_STAT_MAX = 5,
};

/*
 * Whether a frame that ended with stop may be stepped over by frame
 * pointer instead: the frames the tables cannot describe (no mapping, no
 * table, a gap, an expression). A walk that read bad data (stack-read,
 * bad-frame) or lost rbp has nothing trustworthy to follow.
 */
static __always_inline int unwind_stop_takes_fp(int stop)
{
	return stop == UNWIND_STOP_NO_MAPPING || stop == UNWIND_STOP_NO_TABLE ||
	       stop == UNWIND_STOP_NO_ROW || stop == UNWIND_STOP_UNSUPPORTED;
}

/*
 * Whether rbp can be a frame pointer of the frame whose stack pointer is
 * sp: 8-aligned, at or above sp (so the caller's rsp, rbp + 16, moves up
 * the stack) and not at the top of the address space. Then the return
 * address is at rbp + 8 and the caller's rbp at rbp.
 */
static __always_inline int unwind_fp_usable(__u64 bp, __u64 sp)
{
	return !(bp & 7) && bp >= sp && bp < (__u64)-16;
}

/*
 * Whether a frame reached by frame pointer, that has no table, is the
 * outermost one: its rbp is 0, where _start leaves the frame-pointer chain
 * (the ABI's end marker; bpf_get_stack ends there too). Only for frames
 * reached by frame pointer: in code without frame pointers rbp is just a
 * register, 0 or not.
 */
static __always_inline int unwind_fp_chain_ends(int reached_by_fp, int bp_known, __u64 bp)
{
	return reached_by_fp && bp_known && !bp;
}

/*
 * The CFA of a frame from its row's rule and the frame's registers (pc is
 * the frame's own pc, for the PLT rule). Returns -1 to go on with *cfa set,
 * else the enum unwind_stop that ends the walk here.
 */
static __always_inline int unwind_frame_cfa(__u32 rule, __u64 pc, __u64 sp, __u64 bp,
					    int bp_known, __u64 *cfa)
{
	__u64 off = unwind_rule_cfa_off(rule);

	switch (unwind_rule_cfa(rule)) {
	case UNWIND_CFA_RSP:
		*cfa = sp + off;
		return -1;
	case UNWIND_CFA_RBP:
		if (!bp_known)
			return UNWIND_STOP_NO_RBP;
		*cfa = bp + off;
		return -1;
	case UNWIND_CFA_PLT:
		*cfa = sp + off + ((pc & 15) >= 11 ? 8 : 0);
		return -1;
	case UNWIND_CFA_ROOT:
		return UNWIND_STOP_ROOT;
	case UNWIND_CFA_SIGNAL:
		return UNWIND_STOP_SIGNAL;
	case UNWIND_CFA_NONE:
		return UNWIND_STOP_NO_ROW;
	default:
		return UNWIND_STOP_UNSUPPORTED;
	}
}

/*
 * The BPF walker's per-CPU state (unwind.bpf.h): registers of the frame at
 * hand, the PCs so far. A caller of unwind_user_stack() reads pcs[0, nr),
 * stop and fp_frames; the rest is the walker's own.
 */
struct unwind_walk_state {
	__u64 pc, sp, bp;
	__u32 tgid, bp_known;
	__u32 nr, stop;				/* frames in pcs; enum unwind_stop */
	__u32 fp_frames;			/* of pcs[1, nr), those found by frame pointer */
	__u32 map_idx;				/* the last frame's mapping: tried first */
	__u32 by_fp;				/* pc was found by frame pointer */
	/*
	 * Frames whose pc was in no mapping the tables know (all of them when
	 * the process has no tables yet): the walk may be cut only because
	 * the tables are still being built (see PROFILE_SAMPLE_LATE).
	 */
	__u32 unmapped;
	/*
	 * pc is a return address (every frame's but the first): the call is
	 * at pc - 1, the row to look up. A field, not the frame's index: a
	 * walk in pieces (bounded, before 5.17) starts a piece mid-walk, and
	 * the verifier would follow both values of an index it cannot know.
	 */
	__u32 ret_addr;
	__u32 pad;
	__u64 pcs[UNWIND_MAX_FRAMES + 1];	/* +1: indexes are masked with 127 */
};

#endif /* BPFREC_UNWIND_H */
