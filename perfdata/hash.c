// SPDX-License-Identifier: MIT
/* hash.c - the seeded hash function of every hash table (see hash.h). */
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "hash.h"

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

uint64_t perfdata_hash_seed(void)
{
	struct timespec ts;
	uint64_t seed;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == sizeof(seed))
		return seed;
	/* No entropy yet (early boot) or no getrandom: still differs per run. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return mix((uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 32 ^ (uint64_t)getpid() << 16 ^
		   (uint64_t)(uintptr_t)&ts);
}

/*
 * One multiply per 8-byte word (keys are mostly short arrays of ids and
 * addresses), a full avalanche at the end. The seed enters the initial
 * state and the tail, so equal-length keys that collide under one seed do
 * not under another.
 */
uint64_t perfdata_hash(uint64_t seed, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t h = mix(seed ^ 0x9e3779b97f4a7c15ULL) ^ (len * 0x100000001b3ULL);
	uint64_t w;

	while (len >= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 32;
		p += 8;
		len -= 8;
	}
	if (len) {
		w = 0;
		memcpy(&w, p, len);
		h = (h ^ w ^ 0xa0761d6478bd642fULL) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 32;
	}
	return mix(h ^ seed);
}
