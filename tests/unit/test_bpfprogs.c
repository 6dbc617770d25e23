// SPDX-License-Identifier: MIT
/*
 * test_bpfprogs.c - the loaded BPF programs' functions (recorder/bpfprogs.h):
 * the name format, and, as root, that a walk finds a program of ours with
 * functions (unwind_check: the walker and its bpf_loop callbacks) and one
 * without (fp_check), each function at the address and under the name
 * /proc/kallsyms gives it, and closes every fd it opened.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "recorder/bpfprogs.h"
#include "unwind_check.skel.h"

static const uint8_t tag[BPFPROGS_TAG_SIZE] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };

Test(bpfprogs, name_is_tag_in_hex_then_short_name)
{
	char buf[BPFPROGS_NAME_MAX];

	cr_assert_eq(bpfprogs_func_name(buf, sizeof(buf), tag, "on_sample"), 35);
	cr_assert_str_eq(buf, "bpf_prog_0123456789abcdef_on_sample");
	/* a nameless program of one function: the tag alone */
	cr_assert_eq(bpfprogs_func_name(buf, sizeof(buf), tag, NULL), 25);
	cr_assert_str_eq(buf, "bpf_prog_0123456789abcdef");
	/* cut like snprintf, the full length returned */
	cr_assert_eq(bpfprogs_func_name(buf, 10, tag, "F"), 27);
	cr_assert_str_eq(buf, "bpf_prog_");
}

struct found {
	uint32_t ids[2];
	struct {
		uint64_t addr;
		uint32_t len, index;
		char name[BPFPROGS_NAME_MAX];
	} f[64];
	size_t nr, nr_all;
};

static int collect(void *ctx, const struct bpfprog_func *f)
{
	struct found *fd = ctx;

	fd->nr_all++;
	cr_assert_neq(f->addr, 0);
	cr_assert_neq(f->len, 0);
	cr_assert(!strncmp(f->name, "bpf_prog_", 9), "%s", f->name);
	if (f->prog_id != fd->ids[0] && f->prog_id != fd->ids[1])
		return 0;
	cr_assert_lt(fd->nr, 64);
	fd->f[fd->nr].addr = f->addr;
	fd->f[fd->nr].len = f->len;
	fd->f[fd->nr].index = f->index;
	snprintf(fd->f[fd->nr].name, sizeof(fd->f[0].name), "%s", f->name);
	fd->nr++;
	return 0;
}

/* Is "ADDR t NAME\t[bpf]" in /proc/kallsyms? */
static bool in_kallsyms(uint64_t addr, const char *name)
{
	char line[1024], want[BPFPROGS_NAME_MAX + 32];
	bool found = false;
	FILE *f = fopen("/proc/kallsyms", "re");

	cr_assert_not_null(f);
	snprintf(want, sizeof(want), "%016" PRIx64 " t %s\t[bpf]\n", addr, name);
	while (!found && fgets(line, sizeof(line), f))
		found = !strcmp(line, want);
	fclose(f);
	return found;
}

static size_t nr_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	size_t n = 0;

	cr_assert_not_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static uint32_t prog_id(const struct bpf_program *p)
{
	struct bpf_prog_info info = { 0 };
	uint32_t len = sizeof(info);

	cr_assert_eq(bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len), 0);
	return info.id;
}

Test(bpfprogs, walk_names_our_programs_as_kallsyms_does)
{
	static struct found found;
	struct unwind_check *skel;
	size_t fds, entries = 0;

	if (geteuid() != 0)
		cr_skip_test("needs root to load and list BPF programs");
	libbpf_set_print(quiet);
	skel = unwind_check__open();
	cr_assert_not_null(skel);
	bpf_program__set_autoload(skel->progs.unwind_check_bounded, false);
	if (unwind_check__load(skel)) {
		unwind_check__destroy(skel);
		cr_skip_test("unwind_check does not load here (before Linux 5.17: no bpf_loop)");
	}
	found.ids[0] = prog_id(skel->progs.unwind_check);
	found.ids[1] = prog_id(skel->progs.fp_check);

	fds = nr_fds();
	cr_assert_eq(bpfprogs_for_each_func(collect, &found), 0);
	cr_assert_eq(nr_fds(), fds, "the walk left fds open");
	if (!found.nr_all)
		cr_skip_test("the kernel shows no JIT-compiled BPF function here (JIT off, or "
			     "addresses hidden)");
	/* unwind_check and its callbacks, fp_check alone */
	cr_assert_geq(found.nr, 3, "found %zu functions of unwind_check and fp_check", found.nr);
	for (size_t i = 0; i < found.nr; i++) {
		cr_assert(in_kallsyms(found.f[i].addr, found.f[i].name), "%#" PRIx64 " %s is not in "
			  "/proc/kallsyms", found.f[i].addr, found.f[i].name);
		if (!found.f[i].index) {
			entries++;
			cr_assert(strstr(found.f[i].name, "_unwind_check") ||
				  strstr(found.f[i].name, "_fp_check"), "%s", found.f[i].name);
		}
	}
	cr_assert_eq(entries, 2);
	unwind_check__destroy(skel);
}

/* The callback's non-zero return stops the walk and comes back as is. */
static int stop(void *ctx, const struct bpfprog_func *f)
{
	(void)f;
	++*(int *)ctx;
	return 42;
}

Test(bpfprogs, callback_stops_the_walk)
{
	struct unwind_check *skel;
	int calls = 0, ret;

	if (geteuid() != 0)
		cr_skip_test("needs root to load and list BPF programs");
	libbpf_set_print(quiet);
	skel = unwind_check__open();
	cr_assert_not_null(skel);
	bpf_program__set_autoload(skel->progs.unwind_check, false);
	bpf_program__set_autoload(skel->progs.unwind_check_bounded, false);
	cr_assert_eq(unwind_check__load(skel), 0);
	ret = bpfprogs_for_each_func(stop, &calls);
	if (!calls)
		cr_skip_test("the kernel shows no JIT-compiled BPF function here");
	cr_assert_eq(ret, 42);
	cr_assert_eq(calls, 1);
	unwind_check__destroy(skel);
}
