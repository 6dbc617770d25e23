/* SPDX-License-Identifier: MIT */
/*
 * pysyms.h - a "Python symbol file": a small ELF that names the Python
 * functions of one process, so that stock perf, hotspot and bpfrec pprof
 * turn a sample address inside it into `hot_alpha (app.py)` and app.py:12,
 * as `perf inject --jit` does for JIT code with its jitted-PID-N.so files.
 *
 * Python functions have no machine code. The recorder gives each one it
 * names an address range of its own inside a synthetic mapping (an MMAP2
 * record, below) and writes the frame as an address in that range: the
 * function's start plus the instruction offset, so the line rows tell
 * lines apart inside a function.
 *
 * The file (ELF64, x86-64, ET_DYN, all offsets chosen here):
 *   PT_LOAD  offset 0, vaddr 0, up to the end of the last function, R+X:
 *            the mapping is the file loaded at the MMAP2 start with pgoff
 *            0, as a shared library's first segment is;
 *   PT_NOTE  the build-id note;
 *   .note.gnu.build-id  20 bytes, GNU NT_GNU_BUILD_ID;
 *   .text    SHT_PROGBITS from vaddr == file offset == PY_SYMFILE_TEXT_START
 *            up to the end of the last function, zeros (there is no code).
 *            vaddr == offset makes file-offset and vaddr views one: perf
 *            looks symbols up by file offset, libdwfl (hotspot) by vaddr.
 *            The bytes are there, not NOBITS, because readers that follow
 *            the loader (bpfrec's symbolizer) find an address's vaddr
 *            through the file bytes of a PT_LOAD: the file is as big as
 *            the address range, so give functions compact ranges;
 *   .symtab/.strtab  one STT_FUNC per function, value = start, its size,
 *            named "NAME (BASENAME)" where BASENAME is the last path
 *            component of its file (just NAME when it has no file);
 *   .debug_abbrev/.debug_info  one DWARF 4 compile unit (language
 *            Python, named as the file is recorded) with a
 *            DW_TAG_subprogram per function, the same name;
 *   .debug_aranges  the functions' ranges (libdw of Debian 12 finds the CU
 *            of an address only there);
 *   .debug_line  DWARF 4, one sequence per function: its rows, each
 *            at start + row offset, in its file (the path as given).
 *
 * The build-id is a hash of every byte the file carries but the note
 * itself (the sections' contents, the .text size, a format tag): three
 * runs of tools/lib/hash.h's hash_bytes() with fixed seeds, 8 + 8 + 4
 * bytes. Not cryptographic: it only has to tell different contents apart
 * (equal contents give equal ids, so an unchanged file is cached once).
 * py_symfile_write_id() takes one the caller chose instead.
 *
 * The MMAP2 the recorder writes for it (perfdata_write_mmap2()):
 *   pid/tid    the process; start a page-aligned address no real mapping
 *              can take (PY_SYMFILE_MAP_BASE and up: above the 57-bit user
 *              space of 5-level paging, below the 1 << 63 that perf takes
 *              for kernel addresses); len py_symfile_map_len() or more
 *              (the recorder reserves a range and fills it); pgoff 0;
 *   prot       PROT_READ | PROT_EXEC, flags MAP_PRIVATE;
 *   misc       PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID
 *              with the 20-byte build-id (perfdata_mmap.build_id), and the
 *              same id in the BUILD_ID feature
 *              (perfdata_writer_add_build_id(), PERF_RECORD_MISC_USER);
 *   filename   py_symfile_path(): "/proc/version/bpfrec-python-PID-SEQ",
 *              a path that cannot exist (/proc/version is a file on every
 *              Linux, also in containers), absolute as the build-id cache
 *              needs, and of none of the shapes readers take for special
 *              regions: perf "[..." and "//anon", hotspot also "/dev/..."
 *              and "/memfd:...". Readers find the file by build-id alone.
 * The file goes into the build-id cache with py_symfile_cache()
 * (recorder/pysyms_cache.h). A frame of function f at instruction offset o
 * is written as start + f.start + o + 1: perf looks a frame up at its
 * address, bpfrec pprof a caller's at address - 1, and with rows at least
 * 2 bytes apart (CPython's instruction offsets are even) both land on o's
 * row. A process's later file (its functions filled the first one, the
 * next SEQ) gets an MMAP2 of its own, at a start clear of every other
 * file's range: readers differ in how they replace an overlapped mapping.
 *
 * Functions are copied in; they must not overlap (checked when writing).
 * Errors are 0 or -errno: -EINVAL for what makes no sense, -E2BIG past the
 * bounds below, -ENOMEM. A builder is not thread-safe.
 */
#ifndef SYMBOLIZE_PYSYMS_H
#define SYMBOLIZE_PYSYMS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PY_SYMFILE_BUILD_ID_SIZE 20
/* The lowest function start: the headers and the build-id note come first. */
#define PY_SYMFILE_TEXT_START	0x100ull
/* The highest function end, so the file's size (zeros up to here). */
#define PY_SYMFILE_MAX_END	(1ull << 28)
#define PY_SYMFILE_MAX_FUNCS	(1u << 20)
/* The longest name or file path, in bytes (without the NUL). */
#define PY_SYMFILE_MAX_NAME	4096u
/* Line rows: per function, and in the whole file. */
#define PY_SYMFILE_MAX_ROWS	(1u << 16)
#define PY_SYMFILE_MAX_TOTAL_ROWS (1u << 24)
/* Where the recorder may put these mappings: no real mapping can be there. */
#define PY_SYMFILE_MAP_BASE	0x0200000000000000ull
#define PY_SYMFILE_MAP_LIMIT	0x7000000000000000ull

struct py_symfile;

/* One line row: from byte offset `offset` in the function on, line `line`. */
struct py_symfile_row {
	uint32_t offset;
	uint32_t line;		/* 0: no line (DWARF's meaning too) */
};

struct py_symfile_func {
	uint64_t start;		/* address in the file, >= PY_SYMFILE_TEXT_START */
	uint64_t size;		/* > 0; [start, start + size) is the function */
	const char *name;	/* qualified name, UTF-8, not empty */
	const char *file;	/* source path as Python has it; NULL or "": none */
	/*
	 * Strictly increasing offsets, each < size; a function whose first row
	 * is past offset 0 gets that row's line from its start. None (or no
	 * file): no lines.
	 */
	const struct py_symfile_row *rows;
	size_t nr_rows;
};

/* 0 or -ENOMEM. */
int py_symfile_new(struct py_symfile **out);
/*
 * Copy in one function. -EINVAL: no name, size 0, start below
 * PY_SYMFILE_TEXT_START, rows out of order or past size; -E2BIG: more than
 * PY_SYMFILE_MAX_FUNCS functions or _MAX_TOTAL_ROWS rows, a name or file
 * longer than PY_SYMFILE_MAX_NAME, more than _MAX_ROWS rows, an end past
 * PY_SYMFILE_MAX_END. A refused function leaves the builder as it was.
 */
int py_symfile_add(struct py_symfile *sf, const struct py_symfile_func *f);
size_t py_symfile_nr(const struct py_symfile *sf);
/* The MMAP2 len: the end of the last function rounded up to a page; 0 when empty. */
uint64_t py_symfile_map_len(const struct py_symfile *sf);
/*
 * Write the ELF to fd (from its current offset; any fd, a memfd works) and
 * give its build-id. name is the MMAP2 filename it is recorded under
 * (py_symfile_path()), kept in the file as its compile unit's name: two
 * processes running the same functions then still get files, and
 * build-ids, of their own, and the cache files each under its own path,
 * where hotspot looks (it finds a file by recorded path and build-id, not
 * by build-id alone). NULL: "python". -EINVAL when empty or when two
 * functions overlap, -E2BIG for a name over PY_SYMFILE_MAX_NAME (or
 * tables too big for 32-bit DWARF), -ENOMEM, -EIO when libelf fails to
 * write (which says no more: a full disk is -EIO too).
 */
int py_symfile_write(struct py_symfile *sf, const char *name, int fd,
		     uint8_t build_id[PY_SYMFILE_BUILD_ID_SIZE]);
/*
 * The same, under a build-id chosen before the file's contents were known
 * (the recorder describes a symbol file before its last function is in
 * it): the caller makes it unique to the file, as equal contents no longer
 * give equal ids.
 */
int py_symfile_write_id(struct py_symfile *sf, const char *name, int fd,
			const uint8_t build_id[PY_SYMFILE_BUILD_ID_SIZE]);
void py_symfile_free(struct py_symfile *sf);

/*
 * The address a frame of the function at func_start, at instruction
 * offset `offset`, is written as in a file mapped at map_start (see above).
 */
static inline uint64_t py_symfile_frame(uint64_t map_start, uint64_t func_start, uint64_t offset)
{
	return map_start + func_start + offset + 1;
}

/*
 * The MMAP2 filename for the seq-th symbol file of process pid (see above).
 * 0, or -ENOSPC when buf is too small (64 bytes always do).
 */
int py_symfile_path(char *buf, size_t size, pid_t pid, unsigned int seq);

#endif /* SYMBOLIZE_PYSYMS_H */
