/* SPDX-License-Identifier: MIT */
/*
 * test_nm.h - symbol addresses for unit tests from binutils' nm, so that
 * expected values never come from the library under test. Header-only.
 */
#ifndef TEST_NM_H
#define TEST_NM_H

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/*
 * Value and size of a symbol, as `nm -S` prints them (the last one listed);
 * dynamic: from the dynamic symbols (`nm -D`), all a stripped file has.
 */
static inline void nm_symbol_of(const char *path, bool dynamic, const char *name, uint64_t *value,
				uint64_t *size)
{
	char cmd[4200], line[1024], sym[512], type;
	unsigned long long v, s;
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm %s '%s'", dynamic ? "-D -S" : "-S", path);
	p = popen(cmd, "r");
	cr_assert(p, "cannot run nm (binutils missing?)");
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, "%llx %llx %c %511s", &v, &s, &type, sym) == 4 &&
		    !strcmp(sym, name)) {
			*value = v;
			*size = s;
			found = true;
		}
	}
	cr_assert(pclose(p) == 0, "nm failed on %s (binutils missing?)", path);
	cr_assert(found, "nm finds no %s in %s", name, path);
}

static inline void nm_symbol(const char *path, const char *name, uint64_t *value, uint64_t *size)
{
	nm_symbol_of(path, false, name, value, size);
}

/*
 * fn(value, size, type, name, ctx) for every defined symbol `nm -S` lists
 * with a size, in nm's order (dynamic: the dynamic symbols, `nm -D`).
 */
static inline void nm_each_sized(const char *path, bool dynamic,
				 void (*fn)(uint64_t value, uint64_t size, char type,
					    const char *name, void *ctx),
				 void *ctx)
{
	char cmd[4200], line[1024], sym[512], type;
	unsigned long long v, s;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm -S --defined-only %s '%s'", dynamic ? "-D" : "", path);
	p = popen(cmd, "r");
	cr_assert(p, "cannot run nm (binutils missing?)");
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %llx %c %511s", &v, &s, &type, sym) == 4 && s)
			fn(v, s, type, sym, ctx);
	cr_assert(pclose(p) == 0, "nm failed on %s (binutils missing?)", path);
}

#endif /* TEST_NM_H */
