/* SPDX-License-Identifier: MIT */
/*
 * lru.h - a table of u32-keyed entries (pids, tids) on tools/lib/hash.h,
 * with a least-recently-used list and a list of entries that are gone but
 * kept a while, for callers that bound what they hold.
 *
 * Entries are intrusive: embed struct lru_entry, set its key, insert it;
 * the table never allocates an entry nor frees one (the caller removes and
 * frees). lru_table_touch() moves an entry to the front; lru_table_oldest()
 * is the one to evict. lru_table_mark_dead() puts an entry on the dead
 * list with a round number; lru_table_dead_before(round) gives back, oldest
 * first, those marked in an earlier round, for the caller to remove.
 *
 * struct lru_link is the doubly linked list the table uses, open to
 * callers for their own lists (a process's threads).
 */
#ifndef RECORDER_LRU_H
#define RECORDER_LRU_H

#include <stddef.h>
#include <stdint.h>

#include "tools/lib/hash.h"

struct lru_link {
	struct lru_link *prev, *next;
};

struct lru_entry {
	struct hash_node node;
	struct lru_link lru;	/* most recently seen first */
	struct lru_link dead;	/* on the table's dead list once it exited */
	uint64_t dead_round;	/* the round in which it exited */
	uint32_t key;
};

struct lru_table {
	struct hash_table map;	/* tools/lib/hash.h */
	struct lru_link lru;	/* sentinel */
	struct lru_link dead;	/* sentinel: exited entries, oldest last */
	size_t nr_dead;
};

/* An empty list (also what lru_link_del() leaves behind). */
void lru_link_init(struct lru_link *l);
void lru_link_del(struct lru_link *l);
void lru_link_add_front(struct lru_link *head, struct lru_link *l);

void lru_table_init(struct lru_table *t);
/* The entry with key, or NULL. */
struct lru_entry *lru_table_find(const struct lru_table *t, uint32_t key);
/* Insert e (its key set; not in the table), at the front. 0 or -ENOMEM. */
int lru_table_insert(struct lru_table *t, struct lru_entry *e);
/* Take e out of the table and of the dead list. */
void lru_table_remove(struct lru_table *t, struct lru_entry *e);
/* e was just used: to the front. */
void lru_table_touch(struct lru_table *t, struct lru_entry *e);
/* The least recently used entry, or NULL when empty. */
struct lru_entry *lru_table_oldest(const struct lru_table *t);
/* e is gone as of round; kept on the dead list (once: later marks are ignored). */
void lru_table_mark_dead(struct lru_table *t, struct lru_entry *e, uint64_t round);
/* The entry marked dead longest ago, when that was before round; else NULL. */
struct lru_entry *lru_table_dead_before(const struct lru_table *t, uint64_t round);
/* Every entry on the dead list is kept as if it had died in round (the list stays ordered). */
void lru_table_dead_renew(struct lru_table *t, uint64_t round);

#endif /* RECORDER_LRU_H */
