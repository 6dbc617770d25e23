// SPDX-License-Identifier: MIT
/* sysctl.c - one number from /proc/sys (contract in sysctl.h). */
#include <stdio.h>

#include "recorder/sysctl.h"

long long sysctl_read(const char *name, long long fallback)
{
	char path[256];
	long long v;
	FILE *f;
	int n = snprintf(path, sizeof(path), "/proc/sys/%s", name);

	if (n < 0 || (size_t)n >= sizeof(path))
		return fallback;
	for (char *p = path + sizeof("/proc/sys/") - 1; *p; p++)
		if (*p == '.')
			*p = '/';
	f = fopen(path, "re");
	if (!f)
		return fallback;
	if (fscanf(f, "%lld", &v) != 1)
		v = fallback;
	fclose(f);
	return v;
}
