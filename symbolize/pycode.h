/* SPDX-License-Identifier: MIT */
/*
 * pycode.h - the name of a Python function from another process's memory:
 * a CPython 3.8 to 3.13 code object (pylayout.h) read with
 * process_vm_readv, to a qualified name, a file name and lines.
 *
 * The process is running, so every read is of memory that may be freed,
 * reused or unmapped the moment after (or the process may be gone): each
 * read is bounded, checked and copied before use, and what cannot be read
 * or makes no sense is an error code, never a crash. A code object is one
 * when its ob_type is the process's PyCode_Type; its strings are compact
 * str objects (ASCII, latin-1, UCS-2 or UCS-4), given out as UTF-8.
 *
 * What a code object says is cached by its address. A code object never
 * changes its names, file or line table, but it may be freed and another
 * object put at its address: each hit re-reads the object's fixed fields
 * (type, name, qualified name and file pointers, first line, line table
 * pointer) and reads it anew when they differ; py_code_name_last() names
 * it as last read, for a frame sampled before the object was freed or its
 * process exited. The cache holds at most max_entries code objects and
 * drops the oldest beyond that.
 *
 * The line table formats (CPython's Objects/lnotab_notes.txt of each
 * version) are decoded by py_code_line(), the str characters by
 * py_str_to_utf8(): both take bytes already copied out, for callers and
 * fuzzers that have them.
 */
#ifndef SYMBOLIZE_PYCODE_H
#define SYMBOLIZE_PYCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbolize/pylayout.h"

/* The longest str read, in characters: a name or a path longer than this is no name. */
#define PY_STR_MAX_CHARS 4096
/* The longest line table read, in bytes: a bigger one leaves lines unknown. */
#define PY_LINES_MAX_BYTES (64u << 10)

/*
 * The line of the instruction at byte offset addr (in co_code, or from
 * co_code_adaptive on in 3.11+) from a line table of kind copied into
 * table[0..len), for a code object whose first line is firstlineno, as
 * PyCode_Addr2Line() computes it: before the first instruction (addr < 0)
 * the first line. 0 and *line (> 0 or not: a line table may say so);
 * -ENOENT when the instruction has no line (an artificial one, or an
 * address past the table), -EINVAL when the table is malformed where it is
 * read (an entry cut by the end, a varint that overflows).
 */
int py_code_line(enum py_lines_kind kind, const uint8_t *table, size_t len, int firstlineno,
		 int64_t addr, int *line);

/*
 * The lowest and highest line (> 0) any instruction of that table is on:
 * what a function's line rows must cover to name all its lines. 0; -ENOENT
 * when no instruction has a line, -EINVAL when the table is malformed.
 */
int py_code_line_span(enum py_lines_kind kind, const uint8_t *table, size_t len,
		      int firstlineno, int *lo, int *hi);

/*
 * The n characters of a str of kind (1, 2 or 4 bytes each; ascii: the
 * object says they are ASCII) at chars, as NUL-terminated UTF-8 in
 * out[0..out_size): needs at most 4 * n + 1 bytes. Lone surrogates (a str
 * may hold them: undecodable file names) become U+FFFD. 0 and *out_len
 * (without the NUL); -EILSEQ for a kind that is none, a character above
 * U+10FFFF or a non-ASCII byte in an ASCII string (not a str: memory that
 * changed); -ENOSPC when out is too small. U+0000, which only a str built
 * on purpose holds, becomes U+FFFD too: the output is a C string.
 */
int py_str_to_utf8(unsigned int kind, bool ascii, const void *chars, size_t n, char *out,
		   size_t out_size, size_t *out_len);

/* Why a code object could not be named: the kinds counted in py_code_stats.errors. */
enum py_code_err {
	PY_CODE_ERR_READ,	/* its memory could not be read: unmapped, freed, or the process gone */
	PY_CODE_ERR_NOT_CODE,	/* its ob_type is not PyCode_Type */
	PY_CODE_ERR_STRING,	/* its name or file is no compact str, or is too long */
	PY_CODE_ERR_NOMEM,
	PY_CODE_ERR_NR,
};

struct py_code_stats {
	uint64_t hits;		/* named from the cache, the object checked unchanged */
	uint64_t reads;		/* code objects read (not cached, or changed since) */
	uint64_t changed;	/* cached ones found replaced by another object */
	uint64_t evicted;	/* dropped to stay within max_entries */
	uint64_t no_line;	/* named, but no line for the instruction (line 0) */
	uint64_t last;		/* named as last read (py_code_name_last()) */
	uint64_t errors[PY_CODE_ERR_NR];	/* not named, by kind */
};

struct py_code_opts {
	size_t sz;		/* sizeof(struct py_code_opts) */
	size_t max_entries;	/* code objects cached (0: 4096) */
};
#define py_code_opts__last_field max_entries

/* A named code object and the line of one of its instructions. */
struct py_code_name {
	const char *qualname;	/* co_qualname (3.11+), else co_name: UTF-8 */
	const char *filename;	/* co_filename: UTF-8 */
	int firstlineno;	/* co_firstlineno */
	int line;		/* of the instruction; 0 when unknown */
	/* The lines its instructions are on (py_code_line_span()); 0, 0 when unknown. */
	int line_lo, line_hi;
};

struct py_code_reader;

/*
 * A reader of code objects in process pid, whose runtime has layout (copied)
 * and whose PyCode_Type is at code_type in the process (pyruntime.h's
 * code_type_addr plus the load bias of the file that defines it). opts may
 * be NULL. 0; -EINVAL for a layout whose code or str offsets are no
 * plausible ones or a code_type of 0; -ENOMEM.
 */
int py_code_reader_new(pid_t pid, const struct py_layout *layout, uint64_t code_type,
		       const struct py_code_opts *opts, struct py_code_reader **out);
void py_code_reader_free(struct py_code_reader *r);

/*
 * Name the code object at code and the line of the instruction instr in
 * it, instr as the frame holds it (layout->instr_kind): f_lasti
 * sign-extended (-1: no instruction yet), or the instruction pointer.
 * 0 and *out, whose strings stay valid until the next call on r; else
 * *out is untouched and one error kind is counted: -ESRCH (the process is
 * gone: its pid, which another process may get, is not read again), -EFAULT or -EPERM (PY_CODE_ERR_READ), -EINVAL (NOT_CODE),
 * -EILSEQ or -E2BIG (STRING), -ENOMEM. An instruction whose line is not
 * known is no error: a line table that cannot be read or decoded, an
 * instruction outside the code object or one with no line; line is then 0
 * and no_line counts it.
 */
int py_code_name(struct py_code_reader *r, uint64_t code, uint64_t instr,
		 struct py_code_name *out);

/*
 * Name code and instruction instr as py_code_name() did when it last read
 * the object at code, reading nothing: for a frame sampled before that
 * object was freed, replaced or its process exited, which py_code_name()
 * can no longer name (the caller tells it is the same object, say by the
 * first line read at the sample). 0 and *out (valid until the next call
 * on r); -ENOENT when r holds no object read at code.
 */
int py_code_name_last(struct py_code_reader *r, uint64_t code, uint64_t instr,
		      struct py_code_name *out);

/* What r has done so far. */
void py_code_stats(const struct py_code_reader *r, struct py_code_stats *out);

#endif /* SYMBOLIZE_PYCODE_H */
