// SPDX-License-Identifier: MIT
/*
 * test_unwind_tables.c - the unwind table manager (recorder/unwind_tables.h)
 * over a row store in memory.
 *
 * The processes are fake pids whose root (a fake proc tree) is "/" and
 * whose mappings are this test process's own executable mappings
 * (procmaps_read of ourselves), so the files are real ELF files of this
 * machine: expected sizes and rows come from cfi_table_build() of the same
 * files, never from constants. The fake store checks the manager's
 * ordering promises on every call: rows an entry names were written
 * before it, and no range an entry names is written over.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "recorder/unwind_tables.h"
#include "symbolize/cfitable.h"
#include "symbolize/procmaps.h"
#include "symbolize/vdso.h"
#include "symbolize/cfiwalk.h"
#include "test_want.h"
#include "test_want.h"

#define MAX_FAKE_PIDS 8

/* The row store and the proc map, in memory. */
struct fake_store {
	struct unwind_row *rows;
	bool *written;			/* rows ever written */
	uint32_t cap;
	struct {
		uint32_t pid;
		bool used;
		struct unwind_proc proc;
	} procs[MAX_FAKE_PIDS];
	int fail_rows, fail_proc;	/* -errno to return once, 0 = work */
	size_t rows_writes, proc_writes, proc_deletes;
	uint32_t largest_write;		/* rows */
};

static struct fake_store *store;
static char root[64];
static struct procmaps self_maps;

static int fake_write_rows(void *ctx, uint32_t first, const struct unwind_row *rows, uint32_t nr)
{
	struct fake_store *s = ctx;
	int err = s->fail_rows;

	s->fail_rows = 0;
	if (err)
		return err;
	cr_assert(nr > 0 && first <= s->cap && nr <= s->cap - first,
		  "rows [%u, +%u) outside the store of %u", first, nr, s->cap);
	/* Never over rows that a written entry still names. */
	for (int i = 0; i < MAX_FAKE_PIDS; i++) {
		const struct unwind_proc *p = &s->procs[i].proc;

		for (uint32_t m = 0; s->procs[i].used && m < p->nr; m++)
			cr_assert(!p->maps[m].nr_rows || p->maps[m].first_row >= first + nr ||
					  first >= p->maps[m].first_row + p->maps[m].nr_rows,
				  "rows [%u, +%u) written over pid %u's table at [%u, +%u)", first, nr,
				  s->procs[i].pid, p->maps[m].first_row, p->maps[m].nr_rows);
	}
	memcpy(&s->rows[first], rows, nr * sizeof(*rows));
	for (uint32_t i = 0; i < nr; i++)
		s->written[first + i] = true;
	s->rows_writes++;
	if (nr > s->largest_write)
		s->largest_write = nr;
	return 0;
}

static int slot_of(struct fake_store *s, uint32_t pid)
{
	for (int i = 0; i < MAX_FAKE_PIDS; i++)
		if (s->procs[i].used && s->procs[i].pid == pid)
			return i;
	return -1;
}

static int fake_write_proc(void *ctx, uint32_t pid, const struct unwind_proc *proc)
{
	struct fake_store *s = ctx;
	int err = s->fail_proc, i = slot_of(s, pid);

	s->fail_proc = 0;
	if (err)
		return err;
	cr_assert(proc->nr <= UNWIND_MAX_MAPPINGS);
	for (uint32_t m = 0; m < proc->nr; m++) {
		const struct unwind_mapping *um = &proc->maps[m];

		cr_assert(m == 0 || um->start >= proc->maps[m - 1].end, "mappings not sorted");
		cr_assert(um->first_row <= s->cap && um->nr_rows <= s->cap - um->first_row);
		for (uint32_t r = 0; r < um->nr_rows; r++)
			cr_assert(s->written[um->first_row + r], "entry names row %u before it is written",
				  um->first_row + r);
	}
	for (int k = 0; i < 0 && k < MAX_FAKE_PIDS; k++)
		if (!s->procs[k].used)
			i = k;
	cr_assert(i >= 0, "more pids than the fake store holds");
	s->procs[i].used = true;
	s->procs[i].pid = pid;
	s->procs[i].proc = *proc;
	s->proc_writes++;
	return 0;
}

static int fake_delete_proc(void *ctx, uint32_t pid)
{
	struct fake_store *s = ctx;
	int i = slot_of(s, pid);

	if (i < 0)
		return -ENOENT;
	s->procs[i].used = false;
	s->proc_deletes++;
	return 0;
}

static const struct unwind_store_ops fake_ops = {
	.write_rows = fake_write_rows,
	.write_proc = fake_write_proc,
	.delete_proc = fake_delete_proc,
};

static const struct unwind_proc *entry_of(uint32_t pid)
{
	int i = slot_of(store, pid);

	return i < 0 ? NULL : &store->procs[i].proc;
}

/* root/PID/root -> "/": a process outside any container. */
static void fake_pid(uint32_t pid)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%u", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/root", root, pid);
	if (access(path, F_OK))
		cr_assert_eq(symlink("/", path), 0);
}

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/bpfrec-unwind-tables.XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	for (uint32_t pid = 1001; pid <= 1008; pid++)
		fake_pid(pid);
	cr_assert_eq(procmaps_read(NULL, (uint32_t)getpid(), 0, &self_maps), 0);
	cr_assert_gt(self_maps.nr, 3);
}

static void teardown(void)
{
	char cmd[128];

	procmaps_release(&self_maps);
	if (store) {
		free(store->rows);
		free(store->written);
		free(store);
		store = NULL;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(unwind_tables, .init = setup, .fini = teardown);

/* A manager over a new fake store; trust_ns 0: the default. */
static struct unwind_tables *manager_trust(uint32_t store_rows, size_t cache_bytes,
					   size_t max_procs, uint64_t trust_ns)
{
	struct unwind_tables_opts o = {
		.proc_root = root, .store_rows = store_rows, .cache_bytes = cache_bytes,
		.max_procs = max_procs, .trust_ns = trust_ns, .ops = &fake_ops,
	};
	struct unwind_tables *t;

	store = calloc(1, sizeof(*store));
	cr_assert_not_null(store);
	store->cap = store_rows;
	store->rows = calloc(store_rows ? store_rows : 1, sizeof(*store->rows));
	store->written = calloc(store_rows ? store_rows : 1, sizeof(*store->written));
	cr_assert(store->rows && store->written);
	o.ctx = store;
	cr_assert_eq(unwind_tables_new(&o, &t), 0);
	return t;
}

static struct unwind_tables *manager(uint32_t store_rows, size_t cache_bytes, size_t max_procs)
{
	return manager_trust(store_rows, cache_bytes, max_procs, 0);
}

static struct unwind_tables_stats stats(const struct unwind_tables *t)
{
	struct unwind_tables_stats st;

	unwind_tables_stats(t, &st);
	return st;
}

/* The distinct files among our mappings that have a table, with their sizes. */
struct file_table {
	const struct procmaps_entry *e;	/* its first mapping */
	struct cfi_table *cfi;
};

static size_t self_tables(struct file_table *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < self_maps.nr; i++) {
		const struct procmaps_entry *e = &self_maps.entries[i];
		struct cfi_table *cfi;
		bool seen = false;

		if (!strcmp(e->path, "[vdso]")) {
			/* No file: the manager builds it from our own image, as here. */
			int fd;

			cr_assert_eq(vdso_open_self(&fd), 0);
			seen = cfi_table_build_fd(fd, &cfi) != 0;
			close(fd);
			if (seen)
				continue;
			cr_assert(n < max);
			out[n++] = (struct file_table){ e, cfi };
			continue;
		}
		if (e->path[0] != '/' || !strcmp(e->path, PROCMAPS_ANON_NAME))
			continue;
		for (size_t j = 0; j < n; j++)
			seen |= out[j].e->ino == e->ino && out[j].e->maj == e->maj &&
				out[j].e->min == e->min;
		if (seen || cfi_table_build(e->path, &cfi))
			continue;
		cr_assert(n < max);
		out[n++] = (struct file_table){ e, cfi };
	}
	return n;
}

static void free_tables(struct file_table *ft, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cfi_table_free(ft[i].cfi);
}

/* The end of a test: the manager and the tables built beside it. */
static void free_all(struct unwind_tables *t, struct file_table *ft, size_t n)
{
	free_tables(ft, n);
	unwind_tables_free(t);
}

static uint64_t total_rows(const struct file_table *ft, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += ft[i].cfi->nr;
	return sum;
}

static size_t largest_table(const struct file_table *ft, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (ft[i].cfi->nr > m)
			m = ft[i].cfi->nr;
	return m;
}

/* The rows entry mapping m names are exactly the file's table, at the file's bias. */
static void check_mapping(const struct procmaps_entry *e, const struct unwind_mapping *m)
{
	struct cfi_table *cfi;
	uint64_t bias;
	bool in_code = false;

	cr_assert_eq(m->start, e->start);
	cr_assert_eq(m->end, e->end);
	if (!strcmp(e->path, "[vdso]")) {
		int fd;

		cr_assert_eq(vdso_open_self(&fd), 0);
		cr_assert_eq(cfi_table_build_fd(fd, &cfi), 0, "[vdso]");
		close(fd);
	} else {
		cr_assert_eq(cfi_table_build(e->path, &cfi), 0, "%s", e->path);
	}
	cr_assert_eq(m->nr_rows, cfi->nr, "%s: %u rows stored, the file has %zu", e->path,
		     m->nr_rows, cfi->nr);
	cr_assert(!memcmp(&store->rows[m->first_row], cfi->rows, cfi->nr * sizeof(*cfi->rows)),
		  "%s: stored rows differ from its table", e->path);
	cr_assert_eq(cfi_table_bias(cfi, e->start, e->end - e->start, e->pgoff, &bias), 0);
	cr_assert_eq(m->bias, bias, "%s: bias", e->path);
	/* The mapping minus the bias overlaps one of the file's executable segments. */
	for (size_t s = 0; s < cfi->nr_segs; s++)
		in_code |= e->start - bias < cfi->segs[s].vaddr + cfi->segs[s].memsz &&
			   cfi->segs[s].vaddr < e->end - bias;
	cr_assert(in_code, "%s: [%#lx, %#lx) - bias %#lx is in none of its segments", e->path,
		  (unsigned long)e->start, (unsigned long)e->end, (unsigned long)bias);
	cfi_table_free(cfi);
}

static void set_self(struct unwind_tables *t, uint32_t pid)
{
	cr_assert_eq(unwind_tables_set_proc(t, pid, self_maps.entries, self_maps.nr), 0);
}

Test(unwind_tables, own_mappings_rows_and_biases)
{
	struct unwind_tables *t = manager(1u << 22, 0, 0);
	struct file_table ft[128];
	size_t n = self_tables(ft, 128), with_rows = 0;
	const struct unwind_proc *p;
	struct unwind_tables_stats st;

	cr_assert_geq(n, 2, "this test maps at least itself and libc");
	set_self(t, 1001);
	p = entry_of(1001);
	cr_assert_not_null(p);
	cr_assert_eq(p->nr, self_maps.nr);
	for (uint32_t i = 0; i < p->nr; i++) {
		const struct procmaps_entry *e = &self_maps.entries[i];
		uint64_t bias;
		bool has_table = false;

		for (size_t j = 0; j < n; j++)
			has_table |= ft[j].e->ino == e->ino && ft[j].e->maj == e->maj &&
				     ft[j].e->min == e->min &&
				     !cfi_table_bias(ft[j].cfi, e->start, e->end - e->start, e->pgoff,
						     &bias);
		if (!has_table) {
			/* [vdso], anonymous code, files without CFI */
			cr_assert_eq(p->maps[i].nr_rows, 0, "%s has rows", e->path);
			continue;
		}
		check_mapping(e, &p->maps[i]);
		with_rows++;
	}
	cr_assert_geq(with_rows, n);
	st = stats(t);
	EXPECT_ALL(
		WANT(st.procs, 1), WANT(st.tables, n), WANT(st.files_built, n),
		WANT(st.rows_used, total_rows(ft, n)), WANT(st.rows_capacity, 1u << 22),
		WANT(st.mappings_over_budget, 0), WANT(st.files_failed, 0), WANT(st.builds_over, 0));
	cr_assert_gt(st.build_ns, 0);
	/* Rows go to the store in chunks as they are made, not a whole table at once. */
	cr_assert_gt(largest_table(ft, n), 8192u, "libc's table is bigger than a chunk");
	cr_assert_leq(store->largest_write, 8192u);
	free_all(t, ft, n);
}

/* A copy of live stack memory, redzones included: not through ASan's memcpy. */
static __attribute__((no_sanitize_address)) void copy_stack(uint8_t *dst, uintptr_t src, size_t n)
{
	const volatile uint8_t *from = (const volatile uint8_t *)src;

	for (size_t i = 0; i < n; i++)
		dst[i] = from[i];
}

/*
 * Walk our own stack with the reference walker, over the tables and the
 * entry the manager wrote: the first return address must be our caller's,
 * and the walk must end at the thread's root (every frame from here to
 * _start has its table).
 */
static __attribute__((noinline)) void walk_here(const struct unwind_proc *p, struct cfi_walk *w,
						 uint64_t *ret)
{
	uint64_t ip, sp, bp;
	pthread_attr_t attr;
	void *lo;
	size_t size;
	struct cfi_regs regs;
	struct cfi_stack stack;
	uint8_t *copy;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	cr_assert_eq(pthread_getattr_np(pthread_self(), &attr), 0);
	cr_assert_eq(pthread_attr_getstack(&attr, &lo, &size), 0);
	pthread_attr_destroy(&attr);
	cr_assert(sp >= (uintptr_t)lo && sp < (uintptr_t)lo + size);
	stack.base = sp;
	stack.size = (uintptr_t)lo + size - sp;
	copy = malloc(stack.size);
	cr_assert_not_null(copy);
	copy_stack(copy, sp, stack.size);
	stack.data = copy;
	regs = (struct cfi_regs){ .ip = ip, .sp = sp, .bp = bp };
	cfi_walk_stack(store->rows, store->cap, p->maps, p->nr, &regs, &stack, w);
	free(copy);
	*ret = (uint64_t)(uintptr_t)__builtin_return_address(0);
}

Test(unwind_tables, walk_own_stack)
{
	struct unwind_tables *t = manager(1u << 22, 0, 0);
	struct cfi_walk w;
	uint64_t ret;

	set_self(t, 1001);
	walk_here(entry_of(1001), &w, &ret);
	cr_assert_geq(w.nr, 3, "walk of %u frames, stopped: %s", w.nr, cfi_walk_stop_name(w.stop));
	cr_assert_eq(w.pcs[1], ret, "first return address %#lx, expected %#lx",
		     (unsigned long)w.pcs[1], (unsigned long)ret);
	cr_assert_eq(w.stop, UNWIND_STOP_ROOT, "walk of %u frames stopped: %s", w.nr,
		     cfi_walk_stop_name(w.stop));
	unwind_tables_free(t);
}

Test(unwind_tables, processes_share_tables)
{
	struct unwind_tables *t = manager(1u << 22, 256u << 20, 0);
	struct file_table ft[128];
	size_t n = self_tables(ft, 128), writes;
	uint64_t rows = total_rows(ft, n);
	const struct unwind_proc *a, *b;
	struct unwind_tables_stats st;

	set_self(t, 1001);
	set_self(t, 1002);
	st = stats(t);
	EXPECT_ALL(
		WANT(st.procs, 2), WANT(st.tables, n),
		WANT_WHY(st.rows_used, rows, "shared tables are stored once"),
		WANT_WHY(st.files_built, n, "the second process built nothing"));
	a = entry_of(1001);
	b = entry_of(1002);
	cr_assert(a && b);
	cr_assert_eq(a->nr, b->nr);
	for (uint32_t i = 0; i < a->nr; i++) {
		cr_assert_eq(a->maps[i].first_row, b->maps[i].first_row);
		cr_assert_eq(a->maps[i].nr_rows, b->maps[i].nr_rows);
		cr_assert_eq(a->maps[i].bias, b->maps[i].bias);
	}

	/* One leaves: the other's tables stay. */
	unwind_tables_drop_proc(t, 1001);
	cr_assert_null(entry_of(1001));
	st = stats(t);
	EXPECT_ALL(
		WANT(st.procs, 1), WANT(st.tables, n), WANT(st.rows_used, rows), WANT(st.cached, 0));

	/* Both gone: no table in use, all cached, parked in the store (nothing needs the room). */
	unwind_tables_drop_proc(t, 1002);
	cr_assert_null(entry_of(1002));
	st = stats(t);
	EXPECT_ALL(
		WANT(st.procs, 0), WANT(st.tables, 0), WANT(st.rows_used, 0), WANT(st.parked, n),
		WANT(st.rows_parked, rows), WANT(st.largest_free, (1u << 22) - rows));
	cr_assert_geq(st.cached, n);
	cr_assert_leq(st.cached_bytes, 256u << 20);
	writes = store->rows_writes;

	/* A new process mapping them: from the cache, not rebuilt, not even copied. */
	set_self(t, 1003);
	st = stats(t);
	EXPECT_ALL(
		WANT_WHY(st.files_built, n, "cache hit: nothing rebuilt"), WANT(st.cache_hits, n));
	cr_assert_eq(store->rows_writes, writes, "parked tables are used where they are");
	EXPECT_ALL(WANT(st.parked, 0), WANT(st.tables, n), WANT(st.rows_used, rows));
	for (uint32_t i = 0; i < entry_of(1003)->nr; i++)
		if (entry_of(1003)->maps[i].nr_rows)
			check_mapping(&self_maps.entries[i], &entry_of(1003)->maps[i]);
	/* A re-read of the same maps changes nothing. */
	set_self(t, 1003);
	EXPECT_ALL(WANT(stats(t).rows_used, rows), WANT(stats(t).files_built, n));
	free_all(t, ft, n);
}

Test(unwind_tables, cache_bound_evicts)
{
	struct unwind_tables *t = manager(1u << 22, 1, 0);
	struct file_table ft[128];
	size_t n = self_tables(ft, 128);
	struct unwind_tables_stats st;

	set_self(t, 1001);
	unwind_tables_drop_proc(t, 1001);
	st = stats(t);
	EXPECT_ALL(
		WANT_WHY(st.cached, 0, "a 1-byte cache holds nothing"), WANT(st.cached_bytes, 0));
	set_self(t, 1001);
	st = stats(t);
	EXPECT_ALL(
		WANT_WHY(st.files_built, 2 * n, "evicted tables are built again"),
		WANT(st.cache_hits, 0), WANT(st.tables, n));
	free_all(t, ft, n);
}

/* The mapping of pid's entry for the file of ft, which must be there. */
static const struct unwind_mapping *mapping_of(uint32_t pid, const struct file_table *f)
{
	const struct unwind_proc *p = entry_of(pid);

	cr_assert_not_null(p);
	for (uint32_t i = 0; i < p->nr; i++)
		if (p->maps[i].start == f->e->start)
			return &p->maps[i];
	cr_assert_fail("no mapping of %s", f->e->path);
	return NULL;
}

Test(unwind_tables, over_budget_tables_are_left_out_whole)
{
	struct file_table ft[128];
	size_t n = self_tables(ft, 128), placed = 0, left = 0;
	uint64_t rows = total_rows(ft, n), placed_rows = 0;
	struct unwind_tables *t = manager((uint32_t)rows - 1, 0, 0);
	struct unwind_tables_stats st;

	set_self(t, 1001);
	st = stats(t);
	for (size_t i = 0; i < n; i++) {
		const struct unwind_mapping *m = mapping_of(1001, &ft[i]);

		if (m->nr_rows) {
			check_mapping(ft[i].e, m);
			placed++;
			placed_rows += m->nr_rows;
		} else {
			/* Never cut: it did not fit in any free range. */
			cr_assert_gt(ft[i].cfi->nr, st.largest_free, "%s fits in a free range",
				     ft[i].e->path);
			left++;
		}
	}
	cr_assert_geq(left, 1);
	cr_assert_geq(placed, 1, "the tables that fit are placed");
	cr_assert_geq(st.mappings_over_budget, left);
	EXPECT_ALL(WANT(st.tables, placed), WANT(st.rows_used, placed_rows));
	cr_assert_leq(st.rows_used, rows - 1);

	/* The same process read again: counted again, once per mapping. */
	set_self(t, 1001);
	EXPECT_ALL(
		WANT(stats(t).mappings_over_budget, 2 * st.mappings_over_budget),
		WANT(stats(t).rows_used, placed_rows));
	free_all(t, ft, n);
}

Test(unwind_tables, tiny_and_empty_store)
{
	struct unwind_tables *t = manager(4, 0, 0);
	const struct unwind_proc *p;
	struct unwind_tables_stats st;

	set_self(t, 1001);
	st = stats(t);
	EXPECT_ALL(WANT(st.tables, 0), WANT(st.rows_used, 0));
	cr_assert_gt(st.mappings_over_budget, 0);
	p = entry_of(1001);
	cr_assert_not_null(p, "the entry is written even without tables");
	for (uint32_t i = 0; i < p->nr; i++)
		cr_assert_eq(p->maps[i].nr_rows, 0);
	unwind_tables_drop_proc(t, 1001);
	unwind_tables_free(t);
	free(store->rows);
	free(store->written);
	free(store);

	t = manager(0, 0, 0);
	set_self(t, 1001);
	cr_assert_eq(stats(t).tables, 0);
	cr_assert_gt(stats(t).mappings_over_budget, 0);
	unwind_tables_free(t);
}

/* A process that maps just the file of f. */
static void set_one(struct unwind_tables *t, uint32_t pid, const struct file_table *f)
{
	cr_assert_eq(unwind_tables_set_proc(t, pid, f->e, 1), 0);
}

static int by_rows(const void *a, const void *b)
{
	const struct file_table *x = a, *y = b;

	return (x->cfi->nr > y->cfi->nr) - (x->cfi->nr < y->cfi->nr);
}

/* Of our files' tables: Y the smallest, W the next (bigger than Y), Z the third, X the largest. */
static void pick_xyzw(struct file_table *ft, size_t n, const struct file_table **x,
		      const struct file_table **y, const struct file_table **z,
		      const struct file_table **w)
{
	cr_assert_geq(n, 4, "needs four files with tables");
	qsort(ft, n, sizeof(*ft), by_rows);
	*y = &ft[0];
	*w = &ft[1];
	*z = &ft[2];
	*x = &ft[n - 1];
	cr_assert_gt((*w)->cfi->nr, (*y)->cfi->nr, "two files with tables of the same size");
}

/*
 * Three tables X, Y, Z fill the store exactly. Y leaves: its hole takes a
 * table that fits (first fit, not after Z) but not W, bigger than Y; X
 * leaves too: the holes merge and W fits at the start.
 */
Test(unwind_tables, holes_and_coalescing)
{
	struct file_table ft[128];
	size_t n = self_tables(ft, 128);
	const struct file_table *x, *y, *z, *w;
	struct unwind_tables_stats st;
	struct unwind_tables *t;
	uint32_t a, b, c;

	pick_xyzw(ft, n, &x, &y, &z, &w);
	a = (uint32_t)x->cfi->nr;
	b = (uint32_t)y->cfi->nr;
	c = (uint32_t)z->cfi->nr;
	/* A 1-byte cache: a table leaves the store when its last process lets go. */
	t = manager(a + b + c, 1, 0);

	set_one(t, 1001, x);
	set_one(t, 1002, y);
	set_one(t, 1003, z);
	cr_assert_eq(mapping_of(1001, x)->first_row, 0);
	cr_assert_eq(mapping_of(1002, y)->first_row, a);
	cr_assert_eq(mapping_of(1003, z)->first_row, a + b);
	st = stats(t);
	EXPECT_ALL(WANT(st.rows_used, a + b + c), WANT(st.free_ranges, 0));

	/* A hole of b rows in the middle. */
	unwind_tables_drop_proc(t, 1002);
	st = stats(t);
	EXPECT_ALL(WANT(st.free_ranges, 1), WANT(st.largest_free, b));
	/* W is bigger than the hole: left out, counted, not cut. */
	set_one(t, 1004, w);
	cr_assert_eq(mapping_of(1004, w)->nr_rows, 0);
	EXPECT_ALL(
		WANT(stats(t).mappings_over_budget, 1),
		WANT_WHY(stats(t).builds_over, 1, "its rows went to the hole until it was full"),
		WANT(stats(t).largest_free, b));
	/* Y again fits the hole exactly (rebuilt: nothing is cached). */
	set_one(t, 1005, y);
	cr_assert_eq(mapping_of(1005, y)->first_row, a);
	EXPECT_ALL(WANT(stats(t).free_ranges, 0), WANT(stats(t).cache_hits, 0));
	unwind_tables_drop_proc(t, 1005);

	/* X leaves: [0, a) and [a, a + b) merge. */
	unwind_tables_drop_proc(t, 1001);
	st = stats(t);
	EXPECT_ALL(WANT(st.free_ranges, 1), WANT(st.largest_free, a + b));
	/* W fits now: rebuilt (its rows were dropped when it did not fit), at the start. */
	set_one(t, 1004, w);
	cr_assert_eq(mapping_of(1004, w)->first_row, 0);
	check_mapping(w->e, mapping_of(1004, w));
	EXPECT_ALL(
		WANT(stats(t).mappings_over_budget, 1),
		WANT_WHY(stats(t).builds_over, 1, "built again where it fits, and it fitted"));
	st = stats(t);
	EXPECT_ALL(WANT(st.free_ranges, 1), WANT(st.largest_free, a + b - w->cfi->nr));

	/* Z leaves: its range merges with the hole before it. */
	unwind_tables_drop_proc(t, 1003);
	st = stats(t);
	EXPECT_ALL(WANT(st.free_ranges, 1), WANT(st.largest_free, a + b + c - w->cfi->nr));
	/* The last one: the store is one free range again. */
	unwind_tables_drop_proc(t, 1004);
	st = stats(t);
	EXPECT_ALL(
		WANT(st.free_ranges, 1), WANT(st.largest_free, a + b + c), WANT(st.rows_used, 0),
		WANT(st.tables, 0));
	free_all(t, ft, n);
}

/*
 * X, Y, Z fill the store exactly. Y's process leaves: Y stays parked in
 * the store, and a process mapping it again uses it there. W, bigger than
 * Y, needs room: the parked Y goes (and is rebuilt when mapped again), W
 * still does not fit beside X and Z in use. X leaves too: when W needs the
 * room, X parked after Y goes, and W takes their merged range.
 */
Test(unwind_tables, parked_tables_give_way)
{
	struct file_table ft[128];
	size_t n = self_tables(ft, 128), writes;
	const struct file_table *x, *y, *z, *w;
	struct unwind_tables_stats st;
	struct unwind_tables *t;
	uint32_t a, b, c;

	pick_xyzw(ft, n, &x, &y, &z, &w);
	cr_assert_gt(x->cfi->nr + y->cfi->nr, w->cfi->nr);
	a = (uint32_t)x->cfi->nr;
	b = (uint32_t)y->cfi->nr;
	c = (uint32_t)z->cfi->nr;
	t = manager(a + b + c, 256u << 20, 0);

	set_one(t, 1001, x);
	set_one(t, 1002, y);
	set_one(t, 1003, z);
	unwind_tables_drop_proc(t, 1002);
	st = stats(t);
	EXPECT_ALL(
		WANT(st.tables, 2), WANT(st.rows_used, a + c), WANT(st.parked, 1),
		WANT(st.rows_parked, b), WANT(st.free_ranges, 0));
	writes = store->rows_writes;
	set_one(t, 1005, y);
	cr_assert_eq(mapping_of(1005, y)->first_row, a);
	check_mapping(y->e, mapping_of(1005, y));
	cr_assert_eq(store->rows_writes, writes);
	EXPECT_ALL(WANT(stats(t).cache_hits, 1), WANT(stats(t).files_built, 3));
	unwind_tables_drop_proc(t, 1005);

	/* W: Y makes way, and W still does not fit. */
	set_one(t, 1004, w);
	cr_assert_eq(mapping_of(1004, w)->nr_rows, 0);
	st = stats(t);
	EXPECT_ALL(WANT(st.mappings_over_budget, 1), WANT(st.parked, 0), WANT(st.largest_free, b));
	unwind_tables_drop_proc(t, 1004);

	/* X parked too, after Y: W takes the room of both. */
	set_one(t, 1005, y);
	cr_assert_eq(stats(t).files_built, 5, "Y, gone from the cache, is built again");
	unwind_tables_drop_proc(t, 1005);
	unwind_tables_drop_proc(t, 1001);
	cr_assert_eq(stats(t).parked, 2);
	set_one(t, 1004, w);
	cr_assert_eq(mapping_of(1004, w)->first_row, 0);
	check_mapping(w->e, mapping_of(1004, w));
	st = stats(t);
	EXPECT_ALL(WANT(st.parked, 0), WANT(st.tables, 2), WANT(st.rows_used, w->cfi->nr + c));
	/* Everything gone: parked, then out when the manager goes. */
	unwind_tables_drop_proc(t, 1003);
	unwind_tables_drop_proc(t, 1004);
	st = stats(t);
	EXPECT_ALL(WANT(st.tables, 0), WANT(st.rows_used, 0), WANT(st.parked, 2));
	free_all(t, ft, n);
}

/* An exec: the process's new maps replace the old ones, whose tables leave the store. */
Test(unwind_tables, new_maps_release_old_tables)
{
	struct file_table ft[128];
	size_t n = self_tables(ft, 128);
	struct unwind_tables *t = manager(1u << 22, 256u << 20, 0);
	struct unwind_tables_stats st;
	const struct unwind_proc *p;

	set_self(t, 1001);
	cr_assert_eq(stats(t).tables, n);
	set_one(t, 1001, &ft[0]);
	st = stats(t);
	EXPECT_ALL(
		WANT(st.procs, 1), WANT(st.tables, 1), WANT(st.rows_used, ft[0].cfi->nr),
		WANT(st.cached, n - 1),
		WANT_WHY(st.files_built, n, "the table kept was not rebuilt"));
	p = entry_of(1001);
	cr_assert_eq(p->nr, 1);
	check_mapping(ft[0].e, &p->maps[0]);
	/* And back (a dlopen of everything): from the cache. */
	set_self(t, 1001);
	st = stats(t);
	EXPECT_ALL(WANT(st.tables, n), WANT(st.files_built, n), WANT(st.cache_hits, n - 1));
	free_all(t, ft, n);
}

Test(unwind_tables, max_procs)
{
	struct unwind_tables *t = manager(1u << 22, 0, 1);

	set_self(t, 1001);
	set_self(t, 1002);
	EXPECT_ALL(WANT(stats(t).procs, 1), WANT(stats(t).procs_over_budget, 1));
	cr_assert_null(entry_of(1002));
	/* The one there may still be updated. */
	set_self(t, 1001);
	cr_assert_eq(stats(t).procs_over_budget, 1);
	unwind_tables_drop_proc(t, 1002);	/* unknown: nothing happens */
	unwind_tables_drop_proc(t, 1001);
	set_self(t, 1002);
	cr_assert_not_null(entry_of(1002));
	unwind_tables_free(t);
}

Test(unwind_tables, too_many_mappings)
{
	size_t nr = UNWIND_MAX_MAPPINGS + 88;
	struct procmaps_entry *maps = calloc(nr, sizeof(*maps));
	struct unwind_tables *t = manager(1024, 0, 0);

	cr_assert_not_null(maps);
	for (size_t i = 0; i < nr; i++)
		maps[i] = (struct procmaps_entry){ .start = 0x10000 + i * 0x2000,
						   .end = 0x11000 + i * 0x2000,
						   .prot = 5, .path = PROCMAPS_ANON_NAME };
	cr_assert_eq(unwind_tables_set_proc(t, 1001, maps, nr), 0);
	cr_assert_eq(entry_of(1001)->nr, UNWIND_MAX_MAPPINGS);
	EXPECT_ALL(WANT(stats(t).mappings_truncated, 88), WANT(stats(t).files_failed, 0));
	free(maps);
	unwind_tables_free(t);
}

/* A file mapped as it was, and a file without CFI, and one that is not the one mapped. */
Test(unwind_tables, files_without_tables)
{
	struct unwind_tables *t = manager(1u << 22, 0, 0);
	struct procmaps_entry e[3];
	char text[PATH_MAX];
	struct stat st;
	int fd;

	snprintf(text, sizeof(text), "%s/not-elf", root);
	fd = open(text, O_WRONLY | O_CREAT | O_EXCL, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "#!/bin/sh\nexit 0\n", 17), 17);
	close(fd);
	cr_assert_eq(stat(text, &st), 0);
	e[0] = (struct procmaps_entry){ .start = 0x10000, .end = 0x11000, .maj = major(st.st_dev),
					.min = minor(st.st_dev), .ino = st.st_ino, .prot = 5,
					.path = text };
	/* Wrong inode: safeopen_mapped() refuses it (another file at that path). */
	e[1] = e[0];
	e[1].start = 0x20000;
	e[1].end = 0x21000;
	e[1].ino = st.st_ino + 1;
	e[2] = (struct procmaps_entry){ .start = 0x30000, .end = 0x31000, .prot = 5,
					.path = "[vdso]" };
	cr_assert_eq(unwind_tables_set_proc(t, 1001, e, 3), 0);
	cr_assert_eq(stats(t).files_no_cfi, 1);
	/* ...and a [vdso] smaller than our own image is not that image: no table either. */
	EXPECT_ALL(WANT(stats(t).files_failed, 2), WANT(stats(t).files_built, 0));
	cr_assert_eq(entry_of(1001)->nr, 3);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(entry_of(1001)->maps[i].nr_rows, 0);
	/* The file without CFI is remembered: not parsed again. */
	cr_assert_eq(unwind_tables_set_proc(t, 1002, e, 1), 0);
	EXPECT_ALL(WANT(stats(t).files_no_cfi, 1), WANT(stats(t).tables, 0));
	unwind_tables_free(t);
}

/* A store that fails: the error comes back, the process keeps what it had, nothing leaks. */
Test(unwind_tables, store_errors)
{
	struct file_table ft[128];
	size_t n = self_tables(ft, 128);
	struct unwind_tables *t = manager(1u << 22, 256u << 20, 0);
	struct unwind_tables_stats st;
	struct unwind_proc before;

	set_one(t, 1001, &ft[0]);
	before = *entry_of(1001);
	store->fail_rows = -ENOSPC;
	cr_assert_eq(unwind_tables_set_proc(t, 1001, self_maps.entries, self_maps.nr), -ENOSPC);
	st = stats(t);
	EXPECT_ALL(
		WANT_WHY(st.tables, 1, "only what 1001 held before is in the store"),
		WANT(st.rows_used, ft[0].cfi->nr));
	cr_assert(!memcmp(entry_of(1001), &before, sizeof(before)));

	store->fail_proc = -E2BIG;
	cr_assert_eq(unwind_tables_set_proc(t, 1001, self_maps.entries, self_maps.nr), -E2BIG);
	st = stats(t);
	EXPECT_ALL(WANT(st.tables, 1), WANT(st.rows_used, ft[0].cfi->nr));
	cr_assert(!memcmp(entry_of(1001), &before, sizeof(before)));

	/* A new process whose entry cannot be written: nothing held. */
	store->fail_proc = -E2BIG;
	cr_assert_eq(unwind_tables_set_proc(t, 1002, self_maps.entries, self_maps.nr), -E2BIG);
	EXPECT_ALL(WANT(stats(t).procs, 1), WANT(stats(t).tables, 1));

	/* And then it works. */
	set_self(t, 1001);
	cr_assert_eq(stats(t).tables, n);
	free_all(t, ft, n);
}

/* A table built ahead (the command about to be launched) is a cache hit for its first process. */
Test(unwind_tables, warmed_table_is_a_cache_hit)
{
	struct unwind_tables_stats st;
	struct file_table ft[128];
	int fd;
	struct unwind_tables *t = manager(1u << 22, 0, 0);
	size_t n = self_tables(ft, 128);

	cr_assert_geq(n, 1);
	fd = open(ft[0].e->path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "%s", ft[0].e->path);
	cr_assert_eq(unwind_tables_warm(t, fd), 0);
	st = stats(t);
	EXPECT_ALL(
		WANT(st.files_built, 1), WANT_WHY(st.cached, 1, "kept like a table nobody uses"),
		WANT_WHY(st.tables, 0, "not in the store before a process maps it"),
		WANT(st.rows_used, 0));
	/* Warming it again builds nothing. */
	cr_assert_eq(unwind_tables_warm(t, fd), 0);
	cr_assert_eq(stats(t).files_built, 1);
	close(fd);
	set_self(t, 1001);
	st = stats(t);
	EXPECT_ALL(
		WANT_WHY(st.files_built, n, "every other table built, not the warmed one again"),
		WANT(st.cache_hits, 1), WANT(st.cached, 0));
	cr_assert_eq(mapping_of(1001, &ft[0])->nr_rows, ft[0].cfi->nr);
	free_all(t, ft, n);
}

/* Our mappings of files with a path (what a maps line makes the manager open). */
static size_t self_file_mappings(void)
{
	size_t n = 0;

	for (size_t i = 0; i < self_maps.nr; i++)
		n += self_maps.entries[i].path[0] == '/' &&
		     strcmp(self_maps.entries[i].path, PROCMAPS_ANON_NAME);
	return n;
}

Test(unwind_tables, known_maps_lines_open_no_file)
{
	struct unwind_tables *t = manager(1u << 22, 256u << 20, 0);
	struct unwind_tables_stats st;
	size_t opened, writes, tables;

	set_self(t, 1001);
	st = stats(t);
	opened = st.files_opened;
	cr_assert_gt(opened, 0);
	cr_assert_leq(opened, self_file_mappings());
	cr_assert_eq(st.files_known, 0);
	/* Another process mapping the same files: every table from its maps line. */
	set_self(t, 1002);
	st = stats(t);
	cr_assert_eq(st.files_opened, opened, "no file opened again");
	cr_assert_eq(st.files_known, opened);
	tables = st.tables;
	cr_assert_eq(entry_of(1002)->nr, entry_of(1001)->nr);
	for (uint32_t i = 0; i < entry_of(1002)->nr; i++) {
		cr_assert_eq(entry_of(1002)->maps[i].first_row, entry_of(1001)->maps[i].first_row);
		cr_assert_eq(entry_of(1002)->maps[i].nr_rows, entry_of(1001)->maps[i].nr_rows);
		cr_assert_eq(entry_of(1002)->maps[i].bias, entry_of(1001)->maps[i].bias);
		if (entry_of(1002)->maps[i].nr_rows)
			check_mapping(&self_maps.entries[i], &entry_of(1002)->maps[i]);
	}
	/* The same maps again (a process described in the next file): the entry stands. */
	writes = store->proc_writes;
	set_self(t, 1002);
	cr_assert_eq(store->proc_writes, writes, "not written again");
	cr_assert_eq(stats(t).procs_unchanged, 1);
	cr_assert_eq(stats(t).tables, tables, "its tables held once, as before");
	/* One mapping fewer: written. */
	cr_assert_eq(unwind_tables_set_proc(t, 1002, self_maps.entries, self_maps.nr - 1), 0);
	cr_assert_eq(store->proc_writes, writes + 1);
	cr_assert_eq(entry_of(1002)->nr, self_maps.nr - 1);
	/* Both gone, the tables parked: a third process still opens nothing. */
	unwind_tables_drop_proc(t, 1001);
	unwind_tables_drop_proc(t, 1002);
	set_self(t, 1003);
	cr_assert_eq(stats(t).files_opened, opened);
	cr_assert_eq(stats(t).cache_hits, stats(t).tables);
	unwind_tables_free(t);
}

/* A maps line for path as stat() names the file now. */
static struct procmaps_entry line_of(const char *path, uint64_t start)
{
	struct stat st;

	cr_assert_eq(stat(path, &st), 0, "%s", path);
	return (struct procmaps_entry){ .start = start, .end = start + 0x1000,
					.maj = major(st.st_dev), .min = minor(st.st_dev),
					.ino = st.st_ino, .prot = 5, .path = path };
}

static void write_file(const char *path, const void *data, size_t len, int flags)
{
	int fd = open(path, O_WRONLY | O_CREAT | flags, 0644);

	cr_assert_geq(fd, 0, "%s", path);
	cr_assert_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
}

Test(unwind_tables, replaced_file_is_opened)
{
	struct unwind_tables *t = manager(1u << 22, 0, 0);
	char path[PATH_MAX], tmp[PATH_MAX];
	struct procmaps_entry e;

	snprintf(path, sizeof(path), "%s/tool", root);
	snprintf(tmp, sizeof(tmp), "%s/tool.new", root);
	write_file(path, "#!/bin/sh\n", 10, O_EXCL);
	e = line_of(path, 0x10000);
	cr_assert_eq(unwind_tables_set_proc(t, 1001, &e, 1), 0);
	cr_assert_eq(stats(t).files_opened, 1);
	cr_assert_eq(stats(t).files_no_cfi, 1);
	cr_assert_eq(unwind_tables_set_proc(t, 1002, &e, 1), 0);
	cr_assert_eq(stats(t).files_opened, 1, "the same line: known");
	/* Replaced as install does (a new inode under the name): another line, opened. */
	write_file(tmp, "#!/bin/sh\nexit 0\n", 17, O_EXCL);
	cr_assert_eq(rename(tmp, path), 0);
	e = line_of(path, 0x10000);
	cr_assert_eq(unwind_tables_set_proc(t, 1003, &e, 1), 0);
	cr_assert_eq(stats(t).files_opened, 2);
	cr_assert_eq(stats(t).files_no_cfi, 2, "a new file, keyed anew");
	unwind_tables_free(t);
}

Test(unwind_tables, maps_line_trusted_for_trust_ns_only)
{
	struct unwind_tables *t = manager_trust(1u << 22, 256u << 20, 0, 1);
	struct file_table ft[128];
	size_t n = self_tables(ft, 128), opened, f = 0;
	const struct procmaps_entry *code = NULL;
	char path[PATH_MAX];
	struct procmaps_entry e;
	struct stat st;
	void *elf;
	int fd;

	/* Expired at once: every process opens its files again, builds nothing again. */
	set_self(t, 1001);
	set_self(t, 1002);
	cr_assert_eq(stats(t).files_known, 0);
	cr_assert_eq(stats(t).files_built, n);
	cr_assert_gt(stats(t).files_opened, n);

	/* Rewritten in place (same inode) with an ELF: once expired, opened and keyed anew. */
	while (f < n && ft[f].e->path[0] != '/')
		f++;
	cr_assert_lt(f, n, "a file with a table");
	for (size_t i = 0; i < self_maps.nr && !code; i++)
		if (self_maps.entries[i].ino == ft[f].e->ino && (self_maps.entries[i].prot & 4))
			code = &self_maps.entries[i];
	cr_assert_not_null(code, "%s has an executable mapping", ft[f].e->path);
	snprintf(path, sizeof(path), "%s/lib", root);
	write_file(path, "not an ELF file\n", 16, O_EXCL);
	e = line_of(path, code->start);
	e.end = code->end;
	e.pgoff = code->pgoff;
	cr_assert_eq(unwind_tables_set_proc(t, 1003, &e, 1), 0);
	cr_assert_eq(stats(t).files_no_cfi, 1);
	cr_assert_eq(entry_of(1003)->maps[0].nr_rows, 0);
	fd = open(ft[f].e->path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(fstat(fd, &st), 0);
	elf = malloc((size_t)st.st_size);
	cr_assert_not_null(elf);
	cr_assert_eq(pread(fd, elf, (size_t)st.st_size, 0), st.st_size);
	close(fd);
	write_file(path, elf, (size_t)st.st_size, O_TRUNC);
	free(elf);
	cr_assert_eq(line_of(path, 0).ino, e.ino, "the same inode");
	opened = stats(t).files_opened;
	cr_assert_eq(unwind_tables_set_proc(t, 1004, &e, 1), 0);
	cr_assert_eq(stats(t).files_opened, opened + 1);
	cr_assert_eq(stats(t).files_no_cfi, 1);
	cr_assert_eq(entry_of(1004)->maps[0].nr_rows, ft[f].cfi->nr, "the ELF's table now");
	free_tables(ft, n);
	unwind_tables_free(t);
}
