// SPDX-License-Identifier: MIT
/* test_sysctl.c - sysctl_read(): dotted names, missing files, non-numbers. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "recorder/sysctl.h"

Test(sysctl, reads_a_number)
{
	long long want = -1;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");

	cr_assert_not_null(f);
	cr_assert_eq(fscanf(f, "%lld", &want), 1);
	fclose(f);
	cr_assert_eq(sysctl_read("kernel.pid_max", -5), want);
	/* Slashes work too: only dots are translated. */
	cr_assert_eq(sysctl_read("kernel/pid_max", -5), want);
}

Test(sysctl, fallback_when_missing_or_not_a_number)
{
	cr_assert_eq(sysctl_read("kernel.no_such_bpfrec_sysctl", -7), -7);
	/* A string, not a number. */
	cr_assert_eq(sysctl_read("kernel.ostype", 42), 42);
	cr_assert_eq(sysctl_read("", 3), 3);
}
