/* SPDX-License-Identifier: MIT */
/*
 * hash.h - the one hash function of bpfrec, for every hash table.
 *
 * Tables are filled with keys taken from input files (stacks, paths and
 * strings of a perf.data) or from /proc. With a fixed hash, whoever writes
 * the file can precompute keys that all land in one slot and make every
 * lookup a linear scan. So each table draws its own random seed when it is
 * created (perfdata_hash_seed(), from getrandom) and hashes with it: the
 * same key hashes differently in two tables and in two runs. Nothing may
 * depend on the hash values or on slot order (ids and outputs follow
 * insertion order), so results stay deterministic.
 */
#ifndef PERFDATA_HASH_H
#define PERFDATA_HASH_H

#include <stddef.h>
#include <stdint.h>

/* A fresh random seed (getrandom; a time- and address-based one if that fails). */
uint64_t perfdata_hash_seed(void);
/* 64-bit hash of len bytes under seed; every bit depends on every key bit. */
uint64_t perfdata_hash(uint64_t seed, const void *data, size_t len);

#endif /* PERFDATA_HASH_H */
