// SPDX-License-Identifier: MIT
/* cpulist.c - parse CPU lists (contract in cpulist.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/cpulist.h"

static int parse_cpu(const char **p, long *out)
{
	char *end;

	if (**p < '0' || **p > '9')
		return -EINVAL;
	errno = 0;
	*out = strtol(*p, &end, 10);
	if (errno || *out > CPULIST_MAX_CPU)
		return -EINVAL;
	*p = end;
	return 0;
}

int cpulist_parse(const char *s, int **cpus, size_t *nr)
{
	bool *set = calloc(CPULIST_MAX_CPU + 1, sizeof(*set));
	const char *p = s;
	size_t n = 0;
	int *out;
	int err = 0;

	if (!set)
		return -ENOMEM;
	while (*p && *p != '\n') {
		long lo, hi;

		err = parse_cpu(&p, &lo);
		if (err)
			goto out;
		hi = lo;
		if (*p == '-') {
			p++;
			err = parse_cpu(&p, &hi);
			if (err || hi < lo) {
				err = -EINVAL;
				goto out;
			}
		}
		for (long c = lo; c <= hi; c++)
			set[c] = true;
		if (*p == ',' && p[1] && p[1] != '\n')
			p++;
		else if (*p && *p != '\n') {
			err = -EINVAL;
			goto out;
		}
	}
	for (int c = 0; c <= CPULIST_MAX_CPU; c++)
		n += set[c];
	if (!n) {
		err = -EINVAL;
		goto out;
	}
	out = malloc(n * sizeof(*out));
	if (!out) {
		err = -ENOMEM;
		goto out;
	}
	n = 0;
	for (int c = 0; c <= CPULIST_MAX_CPU; c++)
		if (set[c])
			out[n++] = c;
	*cpus = out;
	*nr = n;
out:
	free(set);
	return err;
}

int cpulist_online(const char *path, int **cpus, size_t *nr)
{
	char buf[4096];
	size_t len;
	FILE *f = fopen(path ? path : "/sys/devices/system/cpu/online", "re");

	if (!f)
		return -errno;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	return cpulist_parse(buf, cpus, nr);
}
