/* SPDX-License-Identifier: MIT */
/*
 * cpulist.h - CPU lists as the kernel and perf write them: "0", "0,2-3".
 *
 * Parsed lists are sorted and without duplicates. The online CPUs come from
 * /sys/devices/system/cpu/online (the path is a parameter for tests).
 */
#ifndef RECORDER_CPULIST_H
#define RECORDER_CPULIST_H

#include <stddef.h>

/* Largest CPU number accepted. */
#define CPULIST_MAX_CPU 8191

/* 0, or -EINVAL for a malformed list or a CPU above CPULIST_MAX_CPU; *cpus is malloc'ed. */
int cpulist_parse(const char *s, int **cpus, size_t *nr);
/* NULL path = /sys/devices/system/cpu/online. 0 or -errno. */
int cpulist_online(const char *path, int **cpus, size_t *nr);

#endif /* RECORDER_CPULIST_H */
