/* SPDX-License-Identifier: MIT */
/*
 * kallsyms.h - the kernel's symbol table from /proc/kallsyms (or a copy of
 * it taken on another machine): the one parser of its lines, as a reader
 * of them in file order, a lookup of a few names in one pass over it
 * (kallsyms_find_names(): the kernel map's _text and _etext and where
 * __schedule ends, the reference symbol of a recording), and the sorted
 * table the symbolizer looks addresses up in.
 *
 * The reader: kallsyms_reader_open() reads the whole file (procfs reports
 * no size; one read is the fastest way through /proc/kallsyms), then each
 * kallsyms_reader_next() parses one line in place. Addresses are given as
 * the file has them: all zero when kptr_restrict hides them from this user
 * (the caller decides whether that is an error). A module's symbols carry
 * its name without brackets ("xfs", "bpf"); the core kernel's have NULL.
 *
 * Only text symbols can be found by address: t/T/w/W, both of the core
 * kernel and of modules ("name [module]", BPF programs are "[bpf]").
 * A symbol extends to the next symbol of any kind, so data symbols and the
 * end markers bound the text before them. Core-kernel addresses at or past
 * _etext are not text (init text there is freed after boot). The last
 * symbol of the table has no known size: it covers the rest of its page.
 * At one address several names may exist (_text, _stext, ...): lookups
 * return the one perf shows. perf loads t/T/w/W/d/D/b/B symbols and sizes
 * each by the next one, so only the last of them at an address in file
 * order has a size, and perf's rule (util.h, sym_alias_replaces()) picks
 * it. The address is text when any of its symbols is.
 *
 * kallsyms_load() fails with -EPERM when every address is 0 (kptr_restrict
 * hides them from this user), -EINVAL for a malformed line, -errno when the
 * file cannot be read; the one-line reason and fix go to the caller's msg.
 */
#ifndef SYMBOLIZE_KALLSYMS_H
#define SYMBOLIZE_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One line "ADDRESS TYPE NAME [MODULE]". Strings live as long as the reader. */
struct kallsyms_sym {
	uint64_t addr;
	const char *name;
	const char *module;	/* NULL for the core kernel */
	char type;		/* 't', 'T', 'd', ... as the file says */
};

struct kallsyms_reader {
	char *buf;		/* the file, NUL-terminated, parsed in place */
	size_t len, pos;
	size_t lineno;		/* of the line the last _next() read, from 1 */
};

/* Read path (NULL = /proc/kallsyms): 0 or -errno, silently (callers word the error). */
int kallsyms_reader_open(struct kallsyms_reader *r, const char *path);
/*
 * The next symbol in file order: 1 with *sym, 0 at the end, -EINVAL when
 * line r->lineno is not a kallsyms line (the next call goes on after it).
 * Empty lines are passed over.
 */
int kallsyms_reader_next(struct kallsyms_reader *r, struct kallsyms_sym *sym);
void kallsyms_reader_close(struct kallsyms_reader *r);

/*
 * A few symbols of the core kernel by name, in one pass over a kallsyms
 * file, for whoever needs them and not the table (the recording's kernel
 * map and __schedule, the converter's reference symbol): one reading of
 * the file serves them all. For each want, the first core-kernel symbol
 * (not a module's) of that name in file order; lines that are not
 * symbols are passed over. The pass stops once every name was found and
 * the symbol after each is known.
 */
struct kallsyms_want {
	const char *name;	/* asked */
	bool found;		/* the rest is set only when it was */
	char type;		/* 't', 'T', 'd', ... as the file says */
	uint64_t addr;		/* as the file has it: 0 when kptr_restrict hides it */
	/* The address of the next symbol line (of any module): where a core-kernel
	 * text symbol ends, the core kernel's being sorted; 0 when it was the last. */
	uint64_t next;
	size_t lineno;		/* its line, from 1 */
};

/* Fill want[0, n) from path (NULL = /proc/kallsyms): 0, or -errno when the
 * file cannot be read (silently: callers word the error). */
int kallsyms_find_names(const char *path, struct kallsyms_want *want, size_t n);

struct kallsyms;

/*
 * path NULL = /proc/kallsyms. On failure msg (msglen bytes; may be NULL)
 * says why and how to fix it, naming the file; "" on success.
 */
int kallsyms_load(const char *path, struct kallsyms **out, char *msg, size_t msglen);
void kallsyms_free(struct kallsyms *ks);
/* Heap bytes the table holds (the file's text and the symbol array). */
size_t kallsyms_size(const struct kallsyms *ks);

/* The text symbol containing addr: 0, or -ENOENT. *module is NULL for the
 * core kernel; strings live as long as ks. module may be NULL. */
int kallsyms_lookup(const struct kallsyms *ks, uint64_t addr, const char **name,
		    uint64_t *offset, const char **module);
/* Address of a symbol by exact name (any type, core kernel first): 0 or -ENOENT.
 * Used for _text and _etext, which the kernel map needs. */
int kallsyms_find(const struct kallsyms *ks, const char *name, uint64_t *addr);
/*
 * The same, of the core kernel only: its first symbol of that name in file
 * order, the one kallsyms_find_names() finds in the file (a converter
 * holding the table asks it instead of reading the file again). 0 or -ENOENT.
 */
int kallsyms_find_core(const struct kallsyms *ks, const char *name, uint64_t *addr);

#endif /* SYMBOLIZE_KALLSYMS_H */
