/* SPDX-License-Identifier: MIT */
/*
 * sysctl.h - read one number from /proc/sys (kernel.perf_event_paranoid,
 * kernel.kptr_restrict, kernel.perf_event_max_sample_rate...).
 */
#ifndef RECORDER_SYSCTL_H
#define RECORDER_SYSCTL_H

/*
 * The value of sysctl name ("kernel.kptr_restrict": dots become slashes
 * under /proc/sys), or fallback when it is missing, unreadable or not a
 * number.
 */
long long sysctl_read(const char *name, long long fallback);

#endif /* RECORDER_SYSCTL_H */
