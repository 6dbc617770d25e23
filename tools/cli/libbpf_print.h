/* SPDX-License-Identifier: MIT */
/*
 * libbpf_print.h - what the commands that load BPF let libbpf say: nothing,
 * or with -v everything (the verifier's log included), on stderr.
 */
#ifndef TOOLS_CLI_LIBBPF_PRINT_H
#define TOOLS_CLI_LIBBPF_PRINT_H

#include <stdbool.h>

void cli_libbpf_print(bool verbose);

#endif
