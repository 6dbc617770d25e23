/* SPDX-License-Identifier: MIT */
/*
 * unwind_tables.h - which unwind tables the BPF stack walker has, and where:
 * the user-space manager of the row store and of the per-process mapping
 * lists that --call-graph cfi walks (bpf/unwind.h, Documentation/unwinding.md).
 *
 * The store is one array of store_rows struct unwind_row (the BPF map
 * unwind_rows); every table sits in one contiguous range of it. The
 * manager does not touch BPF itself: the recorder gives it three
 * operations (struct unwind_store_ops) that write rows, write a process's
 * struct unwind_proc and delete it; tests give it an array in memory.
 *
 * Tables and their lifetime:
 *   - One table per ELF file, keyed by its build-id (a file without one by
 *     the maps line's device and inode plus the file's size and mtime),
 *     built with cfi_table_build_fd() from the file as safeopen_mapped()
 *     opens it for that process (never by a bare path), the first time a
 *     process maps it.
 *   - A table is referenced once by every process whose current mappings
 *     include the file (however many mappings of it the process has).
 *     While referenced it is in the store (if it fitted); when the last
 *     process lets go, its range is freed at once (coalesced with free
 *     neighbours) and the table leaves the store.
 *   - A table no process uses is cached, least recently used first out:
 *     a process that exec's the same program again, or a short-lived
 *     command run in a loop (every `make` step starts a new sh, cc, as...),
 *     then costs nothing instead of a rebuild (libc takes 50-90 ms to
 *     build, python3 100+). It stays parked where it is in the store, whose
 *     room is allocated whole anyway, until a table in use needs the room
 *     (parked tables go, oldest first, until the new one fits) or the
 *     cache's bookkeeping passes cache_bytes. A table built ahead of need
 *     (unwind_tables_warm()) waits parked the same way.
 *   - A table's rows go into the store as they are made, in chunks
 *     (cfi_table_build_fd_opts()), into the largest free range: no table
 *     is ever whole in user memory. One that turns out bigger than that
 *     range is only counted, then built again straight into a range that
 *     holds it once parked tables made room (builds_over), or left out.
 *   - Files without usable CFI are remembered the same way, so they are
 *     not opened and parsed again each time.
 *   - A file is known by its maps line, too: (device, inode, path) with
 *     the key of the table its file had when it was last opened and
 *     checked (safeopen_mapped()). For trust_ns after that (10 s by
 *     default) a mapping with the same line takes that table without the
 *     file being opened at all: a system-wide recording sees every new
 *     process map the same libc, sh, cc1, as..., and opening each of
 *     their files for each process (map_files, else the process's root,
 *     then reopening) was most of what a new process cost. A file
 *     replaced by another (a new inode, as install and linkers make) is
 *     another line and is opened. What the line cannot tell, a file
 *     rewritten in place or a deleted file's inode number given to a new
 *     file at the same path (a rebuilt binary), is noticed when the entry
 *     expires: the next process to map it opens it again and is keyed
 *     anew (by build-id, else by size and mtime). Until then a process
 *     of such a file is walked with the old file's table: wrong frames,
 *     never a read outside the store, and never a file opened unchecked.
 *
 * Ordering, so the walker never follows a row that is not its table's:
 *   - a table's rows are written before any struct unwind_proc names them;
 *   - a process's entry is rewritten (or deleted) before the tables it held
 *     are released, so a parked or freed range is never named by an entry
 *     when it is reused. (A walk already running when an entry is replaced may still
 *     read a range being rewritten: it reads bounded garbage, never out of
 *     the store, and its frames end as any bad frame does.)
 *
 * The bound: the store never holds more than store_rows rows, and a table
 * is placed whole or not at all (first fit in the free ranges). A table
 * that does not fit leaves its mappings with nr_rows 0, counted in
 * mappings_over_budget: the walk stops there (UNWIND_STOP_NO_TABLE) and the
 * recorder's frame-pointer fallback takes over. Such a table keeps only its
 * size in user memory; it is rebuilt and placed when a later
 * unwind_tables_set_proc() needs it and the room is there. Entries already
 * written are not revisited when room appears: a process gets the table at
 * its next unwind_tables_set_proc().
 *
 * User memory: per table its segments and key (rows are never kept here:
 * the store is their only copy), within cache_bytes for the tables no
 * process uses, plus per process the list of tables it holds; while a
 * table is built, one chunk of rows (64 KiB) and what libdw takes.
 * At most max_procs processes have an entry; later ones are counted and
 * not written.
 *
 * Not thread-safe: one thread (the recorder's reader) calls everything.
 */
#ifndef RECORDER_UNWIND_TABLES_H
#define RECORDER_UNWIND_TABLES_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/unwind.h"

struct procmaps_entry;	/* symbolize/procmaps.h */
struct unwind_tables;

/* Where tables and processes go: the recorder implements these on the BPF maps. 0 or -errno. */
struct unwind_store_ops {
	/* Put rows[0, nr) at store indexes [first, first + nr). */
	int (*write_rows)(void *ctx, uint32_t first, const struct unwind_row *rows, uint32_t nr);
	int (*write_proc)(void *ctx, uint32_t pid, const struct unwind_proc *proc);
	int (*delete_proc)(void *ctx, uint32_t pid);
};

/* The default of unwind_tables_opts.cache_bytes. */
#define UNWIND_TABLES_CACHE_BYTES	(16u << 20)
/* The default of unwind_tables_opts.trust_ns: how long a maps line stands for its file. */
#define UNWIND_TABLES_TRUST_NS	(10ull * 1000000000)
/* The default of unwind_tables_opts.max_procs. */
#define UNWIND_TABLES_MAX_PROCS		4096

struct unwind_tables_opts {
	const char *proc_root;	/* NULL = "/proc" (for safeopen_mapped) */
	uint32_t store_rows;	/* capacity of the row store, in rows (the memory bound / 8) */
	size_t max_procs;	/* entries the proc map holds; 0 = UNWIND_TABLES_MAX_PROCS */
	/*
	 * User memory of the tables no process uses (their bookkeeping, and
	 * the rows of warmed ones); 0 = UNWIND_TABLES_CACHE_BYTES.
	 */
	size_t cache_bytes;
	/* How long a maps line opened once stands for its file (see above); 0 = UNWIND_TABLES_TRUST_NS. */
	uint64_t trust_ns;
	const struct unwind_store_ops *ops;
	void *ctx;		/* passed to every op */
};

/* A manager with an empty store. 0, -EINVAL (no ops), -ENOMEM. */
int unwind_tables_new(const struct unwind_tables_opts *opts, struct unwind_tables **out);
/* Free the manager (the store and the BPF entries are left as they are). */
void unwind_tables_free(struct unwind_tables *t);

/*
 * pid's executable mappings are now maps[0, nr) (as procmaps_read() or the task tracker keeps them:
 * paths "//anon", "[vdso]" or files; sorted by start). Builds or reuses the table of every file
 * (keyed by build-id; (dev, ino) as a fallback key for files without one; "[vdso]" from our own
 * vDSO image, which the kernel maps into every 64-bit process), places new ones in the store,
 * writes pid's struct unwind_proc (mappings without a table get nr_rows 0: anonymous/JIT, no
 * .eh_frame, failed, or no room), then releases what pid held before (so a dlopen or a re-read
 * does not rebuild shared tables). 0 or -errno (store errors only; files without tables are
 * counted). On an error pid keeps its previous entry and tables.
 */
int unwind_tables_set_proc(struct unwind_tables *t, uint32_t pid, const struct procmaps_entry *maps,
			   size_t nr);

/* pid exited or exec'd: delete its entry, drop its references; a table nobody uses leaves the store (its rows may stay in the user-space cache). */
void unwind_tables_drop_proc(struct unwind_tables *t, uint32_t pid);

/*
 * Build the table of the open file fd ahead of need (the command a
 * recording is about to launch: its first samples would otherwise walk by
 * frame pointers while the table is built) and keep it in the cache, like
 * a table no process uses (parked in the store). 0 (also when the file has no CFI or is known
 * already) or -errno.
 */
int unwind_tables_warm(struct unwind_tables *t, int fd);

/*
 * Whether a table lies in the store at exactly [first, first + nr): a
 * mapping of a process entry names its rows there (then the store's rows
 * are that table's until the next call that changes the store). For
 * walking a copied stack with the tables a process has now
 * (cfi_walk_stack_with()).
 */
bool unwind_tables_placed_at(const struct unwind_tables *t, uint32_t first, uint32_t nr);

struct unwind_tables_stats {
	size_t procs;			/* processes with an entry */
	size_t tables;			/* tables in the store that processes use */
	size_t cached;			/* unused tables kept (parked or in user memory) */
	uint64_t rows_used, rows_capacity;	/* rows_used: of the tables in use */
	size_t files_built;		/* tables built (cache hits not counted) */
	uint64_t build_ns;		/* time spent building them */
	size_t files_no_cfi;		/* files without usable CFI (no .eh_frame, not ELF64, -E2BIG) */
	size_t files_failed;		/* files that could not be opened safely */
	size_t mappings_over_budget;	/* mappings left without a table: the store had no room (the reported fallback) */
	size_t procs_over_budget;	/* processes not written: max_procs reached */
	size_t mappings_truncated;	/* mappings past UNWIND_MAX_MAPPINGS */
	/* Added to the agreed set: */
	size_t free_ranges;		/* free ranges of the store (fragmentation: 1 = one hole) */
	uint64_t largest_free;		/* rows of the largest free range */
	size_t cache_hits;		/* tables taken from the user-space cache into the store */
	uint64_t cached_bytes;		/* user memory the cache holds (<= cache_bytes) */
	size_t store_errors;		/* delete_proc failures in unwind_tables_drop_proc() */
	size_t parked;			/* cached tables still in the store */
	uint64_t rows_parked;		/* their rows (not free, not in use) */
	size_t files_opened;		/* files opened to find their table */
	size_t files_known;		/* mappings whose table its maps line gave, no file opened */
	size_t procs_unchanged;		/* set_proc calls that left the written entry as it was */
	size_t builds_over;		/* builds whose rows outgrew the free range they went to */
};
void unwind_tables_stats(const struct unwind_tables *t, struct unwind_tables_stats *st);

#endif /* RECORDER_UNWIND_TABLES_H */
