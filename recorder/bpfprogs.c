// SPDX-License-Identifier: MIT
/* bpfprogs.c - the loaded BPF programs' JIT-compiled functions (contract in bpfprogs.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "recorder/bpfprogs.h"

_Static_assert(BPFPROGS_TAG_SIZE == BPF_TAG_SIZE, "a function's tag is BPF_TAG_SIZE bytes");

/* What the second info call fills in, for one program at a time. */
struct walk {
	uint64_t ksyms[BPFPROGS_MAX_FUNCS];
	uint32_t lens[BPFPROGS_MAX_FUNCS];
	uint8_t tags[BPFPROGS_MAX_FUNCS][BPF_TAG_SIZE];
	struct bpf_func_info finfo[BPFPROGS_MAX_FUNCS];
	/* The programs of one object share their BTF and come with ids in a row. */
	struct btf *btf;
	uint32_t btf_id;
	char name[BPFPROGS_NAME_MAX];
};

size_t bpfprogs_func_name(char *buf, size_t size, const uint8_t tag[BPFPROGS_TAG_SIZE],
			  const char *short_name)
{
	char hex[2 * BPFPROGS_TAG_SIZE + 1];
	int n;

	for (int i = 0; i < BPFPROGS_TAG_SIZE; i++)
		snprintf(hex + 2 * i, 3, "%02x", tag[i]);
	if (short_name)
		n = snprintf(buf, size, "bpf_prog_%s_%s", hex, short_name);
	else
		n = snprintf(buf, size, "bpf_prog_%s", hex);
	return n < 0 ? 0 : (size_t)n;
}

/* The program's BTF, kept while the next programs share it; NULL if it cannot be had. */
static struct btf *walk_btf(struct walk *wk, uint32_t btf_id)
{
	if (wk->btf && wk->btf_id == btf_id)
		return wk->btf;
	btf__free(wk->btf);
	wk->btf_id = btf_id;
	wk->btf = btf__load_from_kernel_by_id(btf_id);
	return wk->btf;
}

/* The name of function i's BTF FUNC, or NULL. */
static const char *btf_func_name(const struct btf *btf, const struct bpf_func_info *fi)
{
	const struct btf_type *t = btf__type_by_id(btf, fi->type_id);

	if (!t || !btf_is_func(t))
		return NULL;
	return btf__name_by_offset(btf, t->name_off);
}

/* One program's functions to fn: 0 when they went, or were skipped; fn's return or -errno. */
static int walk_prog(struct walk *wk, int fd, uint32_t id, bpfprog_func_fn fn, void *ctx)
{
	struct bpf_prog_info info;
	uint32_t info_len = sizeof(info), n, btf_id;
	char prog_name[sizeof(info.name) + 1];
	uint8_t entry_tag[BPF_TAG_SIZE];
	struct btf *btf = NULL;
	bool with_finfo;

	/* First the counts... */
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len))
		return errno == ENOENT ? 0 : -errno;
	n = info.nr_jited_ksyms;
	/* Interpreted: the kernel still gives one "address", the interpreter's. */
	if (!n || !info.jited_prog_len)
		return 0;
	if (n > BPFPROGS_MAX_FUNCS || info.nr_jited_func_lens != n || info.nr_prog_tags != n)
		return 0;
	/* Without func_info for every function the names cannot come from BTF (perf gives up too). */
	with_finfo = info.btf_id && info.nr_func_info == n &&
		     info.func_info_rec_size == sizeof(struct bpf_func_info);
	btf_id = info.btf_id;
	memcpy(prog_name, info.name, sizeof(info.name));
	prog_name[sizeof(info.name)] = '\0';
	memcpy(entry_tag, info.tag, sizeof(entry_tag));

	/* ...then the arrays, sized by those counts. */
	memset(&info, 0, sizeof(info));
	memset(wk->ksyms, 0, n * sizeof(wk->ksyms[0]));
	memset(wk->lens, 0, n * sizeof(wk->lens[0]));
	info.nr_jited_ksyms = n;
	info.jited_ksyms = (uint64_t)(uintptr_t)wk->ksyms;
	info.nr_jited_func_lens = n;
	info.jited_func_lens = (uint64_t)(uintptr_t)wk->lens;
	info.nr_prog_tags = n;
	info.prog_tags = (uint64_t)(uintptr_t)wk->tags;
	if (with_finfo) {
		info.nr_func_info = n;
		info.func_info_rec_size = sizeof(struct bpf_func_info);
		info.func_info = (uint64_t)(uintptr_t)wk->finfo;
	}
	info_len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len))
		return errno == ENOENT ? 0 : -errno;
	/* A program does not change, but the kernel's word is only trusted up to n. */
	if (info.nr_jited_ksyms != n || info.nr_jited_func_lens != n || info.nr_prog_tags != n)
		return 0;
	/* Addresses hidden from us (kptr_restrict): the kernel clears the pointers. */
	if (!info.jited_ksyms || !info.jited_func_lens)
		return 0;
	if (with_finfo && (info.nr_func_info != n || !info.func_info))
		with_finfo = false;
	if (with_finfo)
		btf = walk_btf(wk, btf_id);

	for (uint32_t i = 0; i < n; i++) {
		struct bpfprog_func f = {
			.addr = wk->ksyms[i], .len = wk->lens[i], .prog_id = id, .index = i,
			.name = wk->name,
		};
		const char *short_name = btf ? btf_func_name(btf, &wk->finfo[i]) : NULL;
		/*
		 * The entry is in kallsyms as the program itself: its tag is the
		 * program's, computed before the verifier rewrote the code, not
		 * prog_tags[0], computed after (perf takes prog_tags[0], a name
		 * kallsyms has not had since Linux 6.5 and its stable updates).
		 */
		const uint8_t *tag = i ? wk->tags[i] : entry_tag;
		int err;

		if (!f.addr || !f.len)
			continue;
		/* Without BTF: the program's own name for its entry, "F" for the others. */
		if (!short_name)
			short_name = i ? "F" : prog_name[0] ? prog_name : NULL;
		bpfprogs_func_name(wk->name, sizeof(wk->name), tag, short_name);
		err = fn(ctx, &f);
		if (err)
			return err;
	}
	return 0;
}

int bpfprogs_for_each_func(bpfprog_func_fn fn, void *ctx)
{
	struct walk *wk = calloc(1, sizeof(*wk));
	uint32_t id = 0;
	int err = 0;

	if (!wk)
		return -ENOMEM;
	for (;;) {
		int fd;

		if (bpf_prog_get_next_id(id, &id)) {
			/* ENOENT: past the last program, the walk's normal end. */
			err = errno == ENOENT ? 0 : -errno;
			break;
		}
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0) {
			if (errno == ENOENT)	/* unloaded since the id was read */
				continue;
			err = -errno;
			break;
		}
		err = walk_prog(wk, fd, id, fn, ctx);
		close(fd);
		if (err)
			break;
	}
	btf__free(wk->btf);
	free(wk);
	return err;
}
