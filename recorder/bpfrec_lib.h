/* SPDX-License-Identifier: MIT */
/*
 * bpfrec/bpfrec.h - all of libbpfrec's public API, for programs that
 * include one header: #include <bpfrec/bpfrec.h>, and build with
 * `pkg-config --cflags --libs bpfrec`.
 *
 *   <bpfrec/common.h>    version, options structs, errors, callbacks
 *   <bpfrec/record.h>    record with BPF into perf.data (path, fd, callback)
 *   <bpfrec/pprof.h>     perf.data to pprof profiles
 *   <bpfrec/perfdata.h>  read perf.data record by record
 *   <bpfrec/sched.h>     scheduler metrics (record --sched) and their exporters
 *
 * Installed under include/bpfrec/ (each public header lives in the module
 * that implements it, named bpfrec_*.h there; the build copies them under
 * their installed names, so in-tree code includes them as users do).
 */
#ifndef BPFREC_BPFREC_H
#define BPFREC_BPFREC_H

#include <bpfrec/agent.h>
#include <bpfrec/common.h>
#include <bpfrec/flamegraph.h>
#include <bpfrec/perfdata.h>
#include <bpfrec/pprof.h>
#include <bpfrec/record.h>
#include <bpfrec/sched.h>

#endif /* BPFREC_BPFREC_H */
