// SPDX-License-Identifier: MIT
/* escape.c - terminal-safe printing of untrusted strings (see escape.h). */
#include <stdint.h>

#include "tools/cli/escape.h"

/*
 * Length of the well-formed UTF-8 sequence of a printable non-ASCII
 * character at p (n bytes left), or 0. Rejects overlong forms, surrogates,
 * code points over U+10FFFF and the C1 controls U+0080..U+009F.
 */
static size_t utf8_printable(const uint8_t *p, size_t n)
{
	uint32_t cp;
	size_t len;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp < 0xa0)
		return 0;
	return len;
}

size_t escape_fputs(FILE *out, const char *s, size_t max)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t cols = 0;

	for (size_t i = 0; i < max && p[i];) {
		size_t len;

		if (p[i] == '\\') {
			fputs("\\\\", out);
			cols += 2;
			i++;
		} else if (p[i] >= 0x20 && p[i] < 0x7f) {
			fputc(p[i], out);
			cols++;
			i++;
		} else if ((len = utf8_printable(p + i, max - i))) {
			fwrite(p + i, 1, len, out);
			cols++;
			i += len;
		} else {
			fprintf(out, "\\x%02x", p[i]);
			cols += 4;
			i++;
		}
	}
	return cols;
}
