// SPDX-License-Identifier: MIT
/*
 * unwind-tables-size - how big the unwind row store must be: the tables of
 * every file that the given processes (default: every process in /proc)
 * map executable, put through the table manager (recorder/unwind_tables.h)
 * with an unbounded store that only counts.
 *
 *   unwind-tables-size [PID...]
 *
 * Prints one "name value" line each: processes, tables (distinct files with
 * a table), rows, bytes (rows * 8), files_built, build_ms (time spent
 * building, which depends on the machine and its load), files_no_cfi,
 * files_failed (files that could not be opened: run as root to see them
 * all), mappings_truncated, maps_denied (processes whose maps were refused).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/unwind_tables.h"
#include "symbolize/procmaps.h"

static int count_rows(void *ctx, uint32_t first, const struct unwind_row *rows, uint32_t nr)
{
	(void)ctx, (void)first, (void)rows, (void)nr;
	return 0;
}

static int count_proc(void *ctx, uint32_t pid, const struct unwind_proc *proc)
{
	(void)pid, (void)proc;
	++*(size_t *)ctx;
	return 0;
}

static int no_delete(void *ctx, uint32_t pid)
{
	(void)ctx, (void)pid;
	return 0;
}

static const struct unwind_store_ops counting_ops = {
	.write_rows = count_rows, .write_proc = count_proc, .delete_proc = no_delete,
};

static size_t maps_denied;

/* pid's tables into t; a process gone meanwhile is skipped, one whose maps are refused counted. */
static int add_pid(struct unwind_tables *t, uint32_t pid)
{
	struct procmaps m;
	int err = procmaps_read(NULL, pid, 0, &m);

	if (!err && m.nr)
		err = unwind_tables_set_proc(t, pid, m.entries, m.nr);
	procmaps_release(&m);
	if (err == -EACCES || err == -EPERM) {
		maps_denied++;
		return 0;
	}
	return err == -ENOENT || err == -ESRCH ? 0 : err;
}

static int add_all(struct unwind_tables *t)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int err = 0;

	if (!d)
		return -errno;
	while (!err && (de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]))
			err = add_pid(t, (uint32_t)strtoul(de->d_name, NULL, 10));
	closedir(d);
	return err;
}

int main(int argc, char **argv)
{
	size_t written = 0;
	struct unwind_tables_opts o = {
		.store_rows = UINT32_MAX, .max_procs = SIZE_MAX, .ops = &counting_ops,
		.ctx = &written,
	};
	struct unwind_tables_stats st;
	struct unwind_tables *t;
	int err;

	err = unwind_tables_new(&o, &t);
	for (int i = 1; !err && i < argc; i++)
		err = add_pid(t, (uint32_t)strtoul(argv[i], NULL, 10));
	if (!err && argc == 1)
		err = add_all(t);
	if (err) {
		fprintf(stderr, "unwind-tables-size: %s\n", strerror(-err));
		return 1;
	}
	unwind_tables_stats(t, &st);
	printf("processes %zu\ntables %zu\nrows %llu\nbytes %llu\nfiles_built %zu\n"
	       "build_ms %llu\nfiles_no_cfi %zu\nfiles_failed %zu\nmappings_truncated %zu\nmaps_denied %zu\n",
	       st.procs, st.tables, (unsigned long long)st.rows_used,
	       (unsigned long long)st.rows_used * sizeof(struct unwind_row), st.files_built,
	       (unsigned long long)(st.build_ns / 1000000), st.files_no_cfi, st.files_failed,
	       st.mappings_truncated, maps_denied);
	unwind_tables_free(t);
	return 0;
}
