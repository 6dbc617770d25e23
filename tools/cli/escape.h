/* SPDX-License-Identifier: MIT */
/*
 * escape.h - print strings taken from input files safely on a terminal.
 *
 * comm, file names, event names and feature strings in a perf.data come from
 * whoever made the file. Printed raw, an ESC or CSI byte in them would drive
 * the terminal of the person reading `bpfrec dump` output (move the cursor,
 * retitle the window, hide lines). escape_fputs() keeps printable ASCII and
 * well-formed UTF-8 text as it is and writes everything else as \xNN: C0
 * and C1 control characters, DEL, bytes of invalid or overlong UTF-8
 * sequences, surrogates. A backslash becomes \\ so the output stays
 * unambiguous.
 */
#ifndef TOOLS_ESCAPE_H
#define TOOLS_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* Print s up to its first NUL or max bytes; returns the columns written
 * (one per printed character, for padding). */
size_t escape_fputs(FILE *out, const char *s, size_t max);

#endif /* TOOLS_ESCAPE_H */
