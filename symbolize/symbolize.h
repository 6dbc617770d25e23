/* SPDX-License-Identifier: MIT */
/*
 * symbolize.h - turn addresses from a profile into functions, files and lines.
 *
 * One symbolizer serves a whole conversion, naming and DWARF unwinding
 * (unwind.h) alike. It caches every file it opens (found and opened once
 * per distinct file, with one libdw Dwfl module for naming) and every
 * kernel symbol table, so callers can ask per address; callers should
 * still look each distinct address up once.
 *
 * Where debug info is found, in the order perf and gdb use:
 *   the file itself, its .gnu_debuglink (next to it, in .debug/, and under
 *   the debug dir), <debug-dir>/.build-id/xx/yyyy.debug,
 *   ~/.debug/.build-id/xx/yyyy/ (perf's build-id cache).
 * A file whose build-id differs from the recorded one is not used.
 *
 * Every file opened stays open (the binary, kept once, plus the duplicate
 * of it, the debug file and the dwz file a naming Dwfl holds: up to four
 * fds), so a program symbolizing a system-wide profile should raise its
 * RLIMIT_NOFILE soft limit (symbolizer_new() raises it to the hard limit).
 *
 * Addresses: user addresses are runtime addresses inside a mapping; the
 * caller passes the mapping (start, pgoff, path, build-id). Return addresses
 * (callers) should be looked up at address - 1 by the caller.
 */
#ifndef SYMBOLIZE_SYMBOLIZE_H
#define SYMBOLIZE_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buildid.h"

struct symbolizer;

struct symbolizer_opts {
	const char *kallsyms;	/* NULL = /proc/kallsyms */
	const char *symfs;	/* prefix for every file path, as perf --symfs; NULL = none */
	const char *debug_dir;	/* NULL = /usr/lib/debug */
	const char *jit_dir;	/* where perf-PID.map files are; NULL = /tmp */
	bool no_inlines;	/* only the outermost function per address */
	/*
	 * For a series (symbolizer_next_recording()): every change to a file
	 * with a build-id is told (symbolizer_file_filed()), so such a file is
	 * checked again only when its build-id was filed since it was last
	 * looked for, not at each recording (see there).
	 */
	bool filed_told;
	bool kernel_now;	/* load kallsyms in symbolizer_new(), not at first use */
};

/* One inline level of an address: innermost first. Strings are owned by the symbolizer. */
struct sym_frame {
	const char *function;	/* NULL when unknown */
	const char *file;	/* NULL when unknown */
	int line;		/* 0 when unknown */
};

#define SYM_MAX_FRAMES 16

struct sym_result {
	size_t nr_frames;	/* >= 1 when anything was found, else 0 */
	struct sym_frame frames[SYM_MAX_FRAMES];
	/* What the source of the answer had, for pprof's Mapping.has_* flags. */
	bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

/* A mapping as recorded (MMAP/MMAP2). */
struct sym_mapping {
	const char *path;
	uint64_t start, len, pgoff;
	const uint8_t *build_id;	/* NULL when not recorded */
	size_t build_id_size;
};

int symbolizer_new(const struct symbolizer_opts *opts, struct symbolizer **out);
void symbolizer_free(struct symbolizer *s);
/*
 * About the bytes s holds, to bound a long-lived one: its kernel table and
 * the tables made of its files (heap), plus the pages of those files (the
 * binaries, debug files and dwz files libdw mapped) resident in this
 * process, from /proc/self/smaps: what they add to RSS, not their size
 * (a big library's DWARF is mapped whole and read in small part). libdw's
 * own parse state is not counted. Walks the files and reads smaps: call it
 * between conversions, not per address.
 */
size_t symbolizer_size(const struct symbolizer *s);
/*
 * The next recording of a series (for a symbolizer serving one after
 * another: bpfrec agent's windows): forget what was learnt per process
 * (the JIT maps, by pid: a pid may be another process, a JIT map has
 * grown), keep the files and kernel symbols, and check each file once,
 * when this recording first needs it: one found in an earlier one is
 * found and opened anew when what is at the path it came from has
 * changed (another inode, size or mtime: a Python symbol file filed again,
 * grown, under the same build-id; a binary replaced), and one not found
 * is looked for again (it may have been filed since). A stat, or a
 * lookup that fails again, per file and recording.
 * With opts.filed_told, a file with a build-id (found or not) is checked
 * only when symbolizer_file_filed() named its build-id after it was last
 * looked for: what a build-id names changes only when the recorder files
 * it again (a binary has a new build-id when it is replaced). A file
 * without one is checked as above.
 */
void symbolizer_next_recording(struct symbolizer *s);
/*
 * A file was written (or written again) into the build-id cache under
 * build_id: what the symbolizer found or failed to find for that build-id
 * is checked at its next use in a later recording. Without memory the
 * symbolizer checks every file once in the next recording instead.
 */
void symbolizer_file_filed(struct symbolizer *s, const uint8_t *build_id, size_t size);

/* Kernel address from kallsyms. 0, -ENOENT when not found, -errno. */
int symbolize_kernel(struct symbolizer *s, uint64_t addr, struct sym_result *out);
/*
 * The address of the core kernel's symbol name (its first in file order)
 * in the kallsyms symbolize_kernel() uses, loaded now if need be: 0,
 * -ENOENT, or the load's -errno (symbolize_kernel_error() says why).
 */
int symbolize_kernel_symbol(struct symbolizer *s, const char *name, uint64_t *addr);
/* Why kallsyms could not be loaded (one line, the fix included), or NULL. */
const char *symbolize_kernel_error(const struct symbolizer *s);
/* User address inside mapping m. 0, -ENOENT (nothing found: out->nr_frames = 0). */
int symbolize_user(struct symbolizer *s, const struct sym_mapping *m, uint64_t addr,
		   struct sym_result *out);
/* The file mapping m had mapped, the one symbolize_user() reads (found,
 * checked and opened once per symbolizer): *fd, a duplicate of its fd (the
 * caller closes it), and the path it was found at (the caller frees it).
 * 0, -ENOENT (anonymous memory, no acceptable file). */
int symbolize_open_binary(struct symbolizer *s, const struct sym_mapping *m, int *fd,
			  char **found_path);
/* Address in anonymous executable memory of pid, from perf-PID.map. */
int symbolize_jit(struct symbolizer *s, int pid, uint64_t addr, struct sym_result *out);

#endif /* SYMBOLIZE_SYMBOLIZE_H */
