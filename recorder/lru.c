// SPDX-License-Identifier: MIT
/* lru.c - u32-keyed LRU tables (contract in lru.h). */
#include <string.h>

#include "recorder/lru.h"

void lru_link_init(struct lru_link *l)
{
	l->prev = l->next = l;
}

void lru_link_del(struct lru_link *l)
{
	l->prev->next = l->next;
	l->next->prev = l->prev;
	lru_link_init(l);
}

void lru_link_add_front(struct lru_link *head, struct lru_link *l)
{
	l->next = head->next;
	l->prev = head;
	head->next->prev = l;
	head->next = l;
}

void lru_table_init(struct lru_table *t)
{
	memset(&t->map, 0, sizeof(t->map));
	t->nr_dead = 0;
	lru_link_init(&t->lru);
	lru_link_init(&t->dead);
}

struct lru_entry *lru_table_find(const struct lru_table *t, uint32_t key)
{
	struct hash_node *n;

	if (!t->map.nr)
		return NULL;	/* nothing to find, and no seed drawn yet */
	hash_table_for_each_possible(&t->map, n, hash_bytes(t->map.seed, &key, sizeof(key))) {
		struct lru_entry *e = container_of(n, struct lru_entry, node);

		if (e->key == key)
			return e;
	}
	return NULL;
}

void lru_table_touch(struct lru_table *t, struct lru_entry *e)
{
	lru_link_del(&e->lru);
	lru_link_add_front(&t->lru, &e->lru);
}

int lru_table_insert(struct lru_table *t, struct lru_entry *e)
{
	int err = hash_table_add(&t->map, &e->node, hash_table_key(&t->map, &e->key, sizeof(e->key)));

	if (err)
		return err;
	lru_link_add_front(&t->lru, &e->lru);
	lru_link_init(&e->dead);
	return 0;
}

void lru_table_remove(struct lru_table *t, struct lru_entry *e)
{
	hash_table_del(&t->map, &e->node);
	lru_link_del(&e->lru);
	if (e->dead.next != &e->dead) {
		lru_link_del(&e->dead);
		t->nr_dead--;
	}
}

/* e exited in round: kept until the round after it ends (see task_tracker_round_end()). */
void lru_table_mark_dead(struct lru_table *t, struct lru_entry *e, uint64_t round)
{
	if (e->dead.next != &e->dead)
		return;
	e->dead_round = round;
	lru_link_add_front(&t->dead, &e->dead);
	t->nr_dead++;
}

/* The exited entry that has waited longest, when it exited before round. */
struct lru_entry *lru_table_dead_before(const struct lru_table *t, uint64_t round)
{
	struct lru_entry *e;

	if (t->dead.prev == &t->dead)
		return NULL;
	e = container_of(t->dead.prev, struct lru_entry, dead);
	return e->dead_round < round ? e : NULL;
}

void lru_table_dead_renew(struct lru_table *t, uint64_t round)
{
	for (struct lru_link *l = t->dead.next; l != &t->dead; l = l->next)
		container_of(l, struct lru_entry, dead)->dead_round = round;
}

struct lru_entry *lru_table_oldest(const struct lru_table *t)
{
	return t->lru.prev == &t->lru ? NULL : container_of(t->lru.prev, struct lru_entry, lru);
}
