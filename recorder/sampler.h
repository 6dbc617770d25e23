/* SPDX-License-Identifier: MIT */
/*
 * sampler.h - the default event source (source.h): one perf event per CPU
 * (opened disabled) with bpf/profile.bpf.c attached to it, the fork, exit
 * and exec notices, the target maps, and, as asked, the off-CPU tracer
 * (offcpu.h), the in-kernel unwind tables (unwind_bpf.h) and the mmap
 * side-band (sideband.h).
 *
 * check: CAP_BPF and CAP_PERFMON (privs.h), the kernel's BTF.
 * open: the kernel's text range (CAP_SYSLOG), the perf events at the
 * session's rate, the sampler loaded with its ring buffers sized for the
 * CPUs and the call-graph mode, the side-band (a warning when refused).
 * attach: task programs first (nothing forked after the first sample
 * escapes), then the off-CPU tracer, then the sampler on each CPU.
 * counters: the sampler's per-CPU counters (enum profile_stat).
 * Each refusal names the capability it lacks.
 */
#ifndef RECORDER_SAMPLER_H
#define RECORDER_SAMPLER_H

#include "recorder/source.h"

/* record_opts.source == NULL means this one. */
extern const struct record_source_ops record_source_bpf;

#endif /* RECORDER_SAMPLER_H */
