/* SPDX-License-Identifier: MIT */
/*
 * libbpf_print.h - what the commands that load BPF share: what they let
 * libbpf say (nothing, or with -v everything, the verifier's log
 * included, on stderr), and, for those that record, the allocator's
 * settings.
 */
#ifndef TOOLS_CLI_LIBBPF_PRINT_H
#define TOOLS_CLI_LIBBPF_PRINT_H

#include <stdbool.h>

void cli_libbpf_print(bool verbose);

/*
 * A fixed mmap threshold for a recording process: glibc's own rises to
 * the largest block freed (the kernel's BTF at load, 5-6 MB; a big unwind
 * table's rows once in the store), and the blocks under it then come from
 * the heap and the unwind worker's arena and stay resident there when
 * freed. Mapped, they go back to the kernel at free().
 */
void cli_recording_malloc(void);

#endif
