/* SPDX-License-Identifier: MIT */
/*
 * pprof_int.h - what other parts of libbpfrec take from a conversion
 * (bpfrec/pprof.h) beyond the public API: the in-memory profile itself, so
 * that other outputs (the flame graph) reuse the reading and symbolization
 * instead of repeating them. Not exported from the shared library.
 */
#ifndef TOOLS_PPROF_PPROF_INT_H
#define TOOLS_PPROF_PPROF_INT_H

#include <stddef.h>

#include <bpfrec/pprof.h>

struct pprof_builder;

/*
 * Profile i of a conversion that has read its input, built in memory
 * (profile.h reads it back); the caller frees it with pprof_builder_free().
 * 0 or -errno, bpfrec_pprof_error() then says what.
 */
int bpfrec_pprof_build(struct bpfrec_pprof *conv, size_t i, struct pprof_builder **out);

#endif /* TOOLS_PPROF_PPROF_INT_H */
