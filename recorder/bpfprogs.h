/* SPDX-License-Identifier: MIT */
/*
 * bpfprogs.h - the JIT-compiled BPF functions loaded in the kernel now:
 * where each one is, how long it is and the name /proc/kallsyms gives it
 * ("bpf_prog_<tag>_<name>", module [bpf]). A sample whose kernel ip lies in
 * one (a recorder's own programs run in every sampled task) can then be
 * named by the file's reader, as perf record has it name them.
 *
 * The walk uses the BPF syscall's program ids (BPF_PROG_GET_NEXT_ID,
 * BPF_PROG_GET_FD_BY_ID, BPF_OBJ_GET_INFO_BY_FD, and each program's BTF for
 * the names of its functions), which needs CAP_SYS_ADMIN; the kernel gives
 * the addresses only to those it shows kernel pointers to. Names are the
 * ones kallsyms has (kernel/bpf/core.c, bpf_prog_ksym_set_name()):
 *   "bpf_prog_" + the function's tag in hex, then
 *   "_" + the name of its BTF FUNC when the program has BTF func_info,
 *   else, for the entry function, "_" + the program's name if it has one,
 *   else "_F" for the other functions (the kernel names them so, and perf).
 * The entry's tag is the program's own (bpf_prog_info.tag), the others'
 * are prog_tags[i]. perf record's synthesize_bpf_prog_name()
 * (tools/perf/util/bpf-event.c) takes prog_tags[0] for the entry too, a
 * name kallsyms no longer lists since Linux 6.5 (and its stable updates):
 * a program with functions kept both names at that address before.
 *
 * Nothing here knows about perf.data: the caller gets one callback per
 * function. No state outlives a call.
 */
#ifndef RECORDER_BPFPROGS_H
#define RECORDER_BPFPROGS_H

#include <stddef.h>
#include <stdint.h>

/* The kernel's KSYM_NAME_LEN since 6.1 (128 before): a name's room, NUL included. */
#define BPFPROGS_NAME_MAX	512
/* A program has at most this many functions (the verifier's BPF_MAX_SUBPROGS). */
#define BPFPROGS_MAX_FUNCS	256
/* A function's tag: the first 8 bytes of the SHA-1 of its instructions. */
#define BPFPROGS_TAG_SIZE	8

struct bpfprog_func {
	uint64_t addr;		/* where its JIT-compiled code starts */
	uint32_t len;		/* bytes of code */
	uint32_t prog_id;
	uint32_t index;		/* among its program's functions: 0 is the entry */
	const char *name;	/* valid during the callback only */
};

/* A non-zero return stops the walk, and bpfprogs_for_each_func() returns it. */
typedef int (*bpfprog_func_fn)(void *ctx, const struct bpfprog_func *f);

/*
 * Call fn for each function of each loaded, JIT-compiled program, in
 * program id order. Skipped, as perf skips them: programs that go away
 * during the walk (ENOENT), programs that are not JIT-compiled or whose
 * addresses the kernel hides (their jited_ksyms are 0), and programs whose
 * counts disagree or exceed BPFPROGS_MAX_FUNCS. Returns 0 when the walk got
 * to the end, fn's non-zero return, or -errno when the walk itself failed
 * (-EPERM without CAP_SYS_ADMIN, -EINVAL before Linux 4.13, -ENOMEM): the
 * functions already passed to fn stay valid. A caller that must tell fn's
 * errors from the walk's keeps its own in ctx. Every fd opened is closed.
 */
int bpfprogs_for_each_func(bpfprog_func_fn fn, void *ctx);

/*
 * Write "bpf_prog_<hex tag>" then "_<short_name>" unless short_name is NULL
 * to buf (size bytes, cut there like snprintf); returns the full length.
 */
size_t bpfprogs_func_name(char *buf, size_t size, const uint8_t tag[BPFPROGS_TAG_SIZE],
			  const char *short_name);

#endif /* RECORDER_BPFPROGS_H */
