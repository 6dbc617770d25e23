// SPDX-License-Identifier: MIT
/* alloc_inproc.c - the fast path's countdown and set (contract in alloc_inproc.h). */
#include <errno.h>

#include "recorder/preload/alloc_inproc.h"
#include <linux/types.h>	/* bpf/alloc.h is in kernel types */
#include "bpf/alloc.h"

#define SLOT_EMPTY	0
#define SLOT_REMOVED	1

static const uint32_t log2_frac[ALLOC_LOG2_FRAC_LEN] = ALLOC_LOG2_FRAC;

/* Fibonacci hashing: blocks are 16-byte aligned, the top bits are mixed. */
static uint32_t slot_of(uint64_t addr)
{
	return (uint32_t)((addr * 0x9e3779b97f4a7c15ull) >> 48) & (ALLOC_SET_SLOTS - 1);
}

int alloc_set_add(struct alloc_set *s, uint64_t addr)
{
	uint32_t i = slot_of(addr);

	for (uint32_t n = 0; n < ALLOC_SET_PROBE; n++, i = (i + 1) & (ALLOC_SET_SLOTS - 1)) {
		uint64_t cur = __atomic_load_n(&s->slots[i], __ATOMIC_RELAXED);

		if (cur != SLOT_EMPTY && cur != SLOT_REMOVED)
			continue;
		if (__atomic_compare_exchange_n(&s->slots[i], &cur, addr, false, __ATOMIC_RELEASE,
						__ATOMIC_RELAXED)) {
			__atomic_add_fetch(&s->used, 1, __ATOMIC_RELEASE);
			return 0;
		}
	}
	__atomic_store_n(&s->saturated, 1, __ATOMIC_RELEASE);
	return -ENOSPC;
}

bool alloc_set_take(struct alloc_set *s, uint64_t addr)
{
	uint32_t i = slot_of(addr);

	if (__atomic_load_n(&s->saturated, __ATOMIC_ACQUIRE))
		return true;
	if (!__atomic_load_n(&s->used, __ATOMIC_ACQUIRE))
		return false;
	for (uint32_t n = 0; n < ALLOC_SET_PROBE; n++, i = (i + 1) & (ALLOC_SET_SLOTS - 1)) {
		uint64_t cur = __atomic_load_n(&s->slots[i], __ATOMIC_ACQUIRE);

		if (cur == SLOT_EMPTY)
			return false;
		/* Only the thread freeing a block can take it: the swap cannot lose. */
		if (cur == addr && __atomic_compare_exchange_n(&s->slots[i], &cur, SLOT_REMOVED,
							      false, __ATOMIC_ACQ_REL,
							      __ATOMIC_RELAXED)) {
			__atomic_sub_fetch(&s->used, 1, __ATOMIC_RELEASE);
			return true;
		}
	}
	return false;
}

/* xorshift64*: the high 32 bits of its output. */
static uint32_t next_u32(struct alloc_countdown *c, uint64_t seed)
{
	uint64_t x = c->rng;

	if (!x)
		x = (seed ^ 0x2545f4914f6cdd1dull) | 1;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	c->rng = x;
	return (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32);
}

bool alloc_countdown_take(struct alloc_countdown *c, uint64_t size, uint64_t interval,
			  uint64_t seed)
{
	if (interval <= 1)
		return size > 0;
	if (!c->left)	/* the thread's first allocation */
		c->left = (int64_t)alloc_next_countdown(interval, next_u32(c, seed), log2_frac);
	c->left -= (int64_t)size;
	if (c->left > 0)
		return false;
	c->left = (int64_t)alloc_next_countdown(interval, next_u32(c, seed), log2_frac);
	return true;
}
