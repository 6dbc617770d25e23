// SPDX-License-Identifier: MIT
/* percpu.c - sums of per-CPU BPF counters (contract in percpu.h). */
#include <errno.h>
#include <stdlib.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "recorder/percpu.h"

int percpu_sum(int map_fd, uint32_t key, uint64_t *sum)
{
	/* The kernel copies out one value per possible CPU, each 8-byte aligned. */
	int nr_cpus = libbpf_num_possible_cpus();
	uint64_t *v;

	if (nr_cpus <= 0)
		return nr_cpus ? nr_cpus : -EINVAL;
	v = calloc((size_t)nr_cpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(map_fd, &key, v)) {
		int err = -errno;

		free(v);
		return err;
	}
	*sum = 0;
	for (int c = 0; c < nr_cpus; c++)
		*sum += v[c];
	free(v);
	return 0;
}

uint64_t percpu_count(const struct bpf_map *map, uint32_t key)
{
	uint64_t sum = 0;

	percpu_sum(bpf_map__fd(map), key, &sum);
	return sum;
}
