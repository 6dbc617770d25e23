// SPDX-License-Identifier: MIT
/* libbpf_print.c - libbpf's messages and the allocator for the command line (libbpf_print.h). */
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>

#include <bpf/libbpf.h>

#include "tools/cli/libbpf_print.h"

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* fmt is libbpf's own: the attribute lets the compiler trust it. */
__attribute__((format(printf, 2, 0)))
static int libbpf_verbose(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return vfprintf(stderr, fmt, ap);
}

void cli_libbpf_print(bool verbose)
{
	libbpf_set_print(verbose ? libbpf_verbose : libbpf_quiet);
}

/* Blocks from this size up are mappings of their own (glibc's default before it adapts). */
#define RECORDING_MMAP_THRESHOLD	(128 << 10)

void cli_recording_malloc(void)
{
	mallopt(M_MMAP_THRESHOLD, RECORDING_MMAP_THRESHOLD);
}
