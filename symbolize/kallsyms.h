/* SPDX-License-Identifier: MIT */
/*
 * kallsyms.h - the kernel's symbol table from /proc/kallsyms (or a copy of
 * it taken on another machine), internal to the symbolize library.
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
 * file cannot be read; it prints a one-line reason and fix on stderr.
 */
#ifndef SYMBOLIZE_KALLSYMS_H
#define SYMBOLIZE_KALLSYMS_H

#include <stdint.h>

struct kallsyms;

/* path NULL = /proc/kallsyms. */
int kallsyms_load(const char *path, struct kallsyms **out);
void kallsyms_free(struct kallsyms *ks);

/* The text symbol containing addr: 0, or -ENOENT. *module is NULL for the
 * core kernel; strings live as long as ks. module may be NULL. */
int kallsyms_lookup(const struct kallsyms *ks, uint64_t addr, const char **name,
		    uint64_t *offset, const char **module);
/* Address of a symbol by exact name (any type, core kernel first): 0 or -ENOENT.
 * Used for _text and _etext, which the kernel map needs. */
int kallsyms_find(const struct kallsyms *ks, const char *name, uint64_t *addr);

#endif /* SYMBOLIZE_KALLSYMS_H */
