/* SPDX-License-Identifier: MIT */
/*
 * procmaps.h - the executable mappings of a process, from /proc/PID/maps,
 * and the files of kernel modules, from modules.dep.
 *
 * The one parser of maps files: for the recorder's task tracker, side-band,
 * unwind tables and kernel maps (recorder/), and for the copy of this
 * process's vDSO (vdso.c). They keep what perf describes with MMAP2 records:
 *   - executable file mappings, with the path as the kernel prints it (it may
 *     contain spaces and end in " (deleted)");
 *   - "[vdso]", under that name, as perf does;
 *   - executable anonymous memory ("", "[heap]", "[stack]", "[anon:NAME]")
 *     as "//anon", the name perf gives it, so JIT maps (/tmp/perf-PID.map)
 *     apply to it;
 * and drop everything else (non-executable mappings, other "[...]" pseudo
 * files such as "[vsyscall]" or "[uprobes]"). With PROCMAPS_DATA,
 * procmaps_read() also keeps the readable non-executable mappings of files
 * (perf's mmap_data): a DWARF unwinder reads .eh_frame_hdr through them.
 *
 * A maps file is read whole (any line length); a line not ended by a newline
 * is a file cut short (the process exited mid-read) and is ignored, as are
 * malformed lines. Nothing here writes records.
 */
#ifndef SYMBOLIZE_PROCMAPS_H
#define SYMBOLIZE_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>

/* The name anonymous executable memory gets, as in perf. */
#define PROCMAPS_ANON_NAME "//anon"

struct procmaps_entry {
	uint64_t start, end, pgoff;
	uint32_t maj, min;	/* device of the file (0:0 for anonymous memory) */
	uint64_t ino;
	uint32_t prot;		/* PROT_READ | PROT_WRITE | PROT_EXEC */
	uint32_t flags;		/* MAP_PRIVATE or MAP_SHARED */
	const char *path;	/* "//anon", "[vdso]" or the file as the kernel prints it */
};

/*
 * The name under which a mapping of name (as the kernel prints it, in maps
 * or in an MMAP2 record) with protection prot is kept: name itself,
 * "//anon" or "[vdso]"; NULL when it is not kept. flags: PROCMAPS_DATA
 * (below) also keeps readable non-executable file mappings.
 */
const char *procmaps_kept_name(const char *name, uint32_t prot, unsigned int flags);

/*
 * Parse one line of a maps file (NUL-terminated, without its newline).
 * Returns 1 and fills e when the line is an executable mapping kept as
 * described above (e->path then points into line, or at a constant string),
 * 0 when the line is valid but not kept, -EINVAL when it is malformed.
 */
int procmaps_parse_line(const char *line, struct procmaps_entry *e);

/* The kept mappings of one process, sorted by start, not overlapping. */
struct procmaps {
	struct procmaps_entry *entries;
	size_t nr;
	char *strings;		/* owns the entries' paths */
};

/* procmaps_read() flags. */
#define PROCMAPS_DATA	1u	/* also readable non-executable file mappings */

/*
 * Read proc_root/PID/maps (proc_root NULL = "/proc"). 0 on success (maybe
 * with no entries: a kernel thread), -ENOENT or -ESRCH when the process is
 * gone, -errno otherwise. out is zeroed on failure; release it with
 * procmaps_release() either way.
 */
int procmaps_read(const char *proc_root, uint32_t pid, unsigned int flags, struct procmaps *out);
/* Parse a whole maps file already in memory (len bytes, need not be NUL-terminated). */
int procmaps_parse(const char *text, size_t len, struct procmaps *out);
void procmaps_release(struct procmaps *m);

/*
 * Where the kernel modules of /proc/modules live: modules.dep under
 * modules_dir (normally /lib/modules/$(uname -r)) maps a module name to its
 * file. Names are compared as the kernel does: "-" and "_" are the same.
 * A missing modules.dep is not an error: every lookup then fails.
 */
struct kmod_paths;
int kmod_paths_load(const char *modules_dir, struct kmod_paths **out);
/* The absolute path of module name's file, or NULL when it is unknown. */
const char *kmod_paths_find(const struct kmod_paths *p, const char *name);
void kmod_paths_free(struct kmod_paths *p);

#endif /* SYMBOLIZE_PROCMAPS_H */
