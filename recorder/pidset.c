// SPDX-License-Identifier: MIT
/* pidset.c - distinct pids as a bitmap (contract in pidset.h). */
#include <errno.h>
#include <stdlib.h>

#include "recorder/pidset.h"

/* The kernel's PID_MAX_LIMIT on 64-bit: pid_max can be raised while we run. */
#define PID_MAX_LIMIT	(4u << 20)

int pidset_init(struct pidset *p, uint32_t limit)
{
	p->limit = limit ? limit : PID_MAX_LIMIT;
	p->count = 0;
	p->bits = calloc(((size_t)p->limit + 63) / 64, sizeof(uint64_t));
	return p->bits ? 0 : -ENOMEM;
}

void pidset_add(struct pidset *p, uint32_t pid)
{
	uint64_t bit = 1ull << (pid % 64);

	if (!p->bits || pid >= p->limit || (p->bits[pid / 64] & bit))
		return;
	p->bits[pid / 64] |= bit;
	p->count++;
}

void pidset_free(struct pidset *p)
{
	free(p->bits);
	p->bits = NULL;
	p->count = 0;
}
