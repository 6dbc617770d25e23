// SPDX-License-Identifier: MIT
/* Unit tests for tools/escape.c: what reaches the terminal from a file's strings. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli/escape.h"

/* escape_fputs() of the first n bytes of s, as a string; *cols gets its return. */
static char *escaped(const char *s, size_t n, size_t *cols)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	cr_assert_not_null(f);
	*cols = escape_fputs(f, s, n);
	fclose(f);
	return out;
}

static void check(const char *s, size_t n, const char *want, size_t want_cols)
{
	size_t cols;
	char *got = escaped(s, n, &cols);

	cr_assert_str_eq(got, want);
	cr_assert_eq(cols, want_cols, "%zu columns for \"%s\", want %zu", cols, got, want_cols);
	free(got);
}

Test(escape, printable_text_and_utf8_pass_through)
{
	check("bash", SIZE_MAX, "bash", 4);
	check("/usr/lib/libc.so.6 (deleted)", SIZE_MAX, "/usr/lib/libc.so.6 (deleted)", 28);
	check("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xa7", SIZE_MAX, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xa7", 8);
}

Test(escape, terminal_controls_are_escaped)
{
	/* ESC [2J (clear screen), OSC title, BEL, CR, DEL, a C1 CSI in UTF-8 and raw. */
	check("a\x1b[2Jb", SIZE_MAX, "a\\x1b[2Jb", 9);
	check("\x1b]0;pwned\x07", SIZE_MAX, "\\x1b]0;pwned\\x07", 16);
	check("x\r\n\t\x7f", SIZE_MAX, "x\\x0d\\x0a\\x09\\x7f", 17);
	check("\xc2\x9b" "31m", SIZE_MAX, "\\xc2\\x9b31m", 11);
	check("\x9b", SIZE_MAX, "\\x9b", 4);
	check("a\\b", SIZE_MAX, "a\\\\b", 4);
}

Test(escape, invalid_utf8_is_escaped_byte_by_byte)
{
	check("\xc0\xaf", SIZE_MAX, "\\xc0\\xaf", 8);			/* overlong '/' */
	check("\xed\xa0\x80", SIZE_MAX, "\\xed\\xa0\\x80", 12);		/* surrogate */
	check("\xf4\x90\x80\x80", SIZE_MAX, "\\xf4\\x90\\x80\\x80", 16);	/* > U+10FFFF */
	check("\xe2\x82", SIZE_MAX, "\\xe2\\x82", 8);			/* cut short */
	check("\xe2\x82\xac", 2, "\\xe2\\x82", 8);			/* cut by max */
}

Test(escape, stops_at_nul_or_max)
{
	check("abc\0def", 7, "abc", 3);
	check("abcdef", 2, "ab", 2);
	check("", SIZE_MAX, "", 0);
}
