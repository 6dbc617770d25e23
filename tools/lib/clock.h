/* SPDX-License-Identifier: MIT */
/*
 * clock.h - a clock read as nanoseconds in one uint64_t, the unit every
 * deadline, interval and perf.data timestamp of bpfrec is kept in.
 */
#ifndef TOOLS_LIB_CLOCK_H
#define TOOLS_LIB_CLOCK_H

#include <stdint.h>
#include <time.h>

/* clk now, in ns (clock_gettime() cannot fail for the clocks we pass). */
static inline uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC now, in ns: the recording's clock (perf's -k monotonic). */
static inline uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

#endif /* TOOLS_LIB_CLOCK_H */
