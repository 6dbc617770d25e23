// SPDX-License-Identifier: MIT
/*
 * aspace.c - per-pid interval maps (see aspace.h).
 *
 * Each pid has a sorted array of disjoint [start, end) intervals; insertion
 * cuts the overlapped part out of the neighbours and splices the new
 * interval in. Processes map tens to hundreds of executable regions, so a
 * sorted array with binary search beats a tree here. Pids are found through
 * a pp_intern table (pid -> dense index).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata/sorted.h"
#include "aspace.h"
#include "intern.h"

struct interval {
	uint64_t start, end;
	uint32_t value;
};

struct space {
	struct interval *iv;
	size_t nr, cap;
	uint32_t generation;
};

struct pp_aspace {
	struct pp_intern pids;	/* key: uint32_t pid; id indexes spaces */
	struct space *spaces;
	size_t cap;
};

int pp_aspace_new(struct pp_aspace **out)
{
	struct pp_aspace *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	*out = a;
	return 0;
}

void pp_aspace_free(struct pp_aspace *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < pp_intern_count(&a->pids); i++)
		free(a->spaces[i].iv);
	free(a->spaces);
	pp_intern_free(&a->pids);
	free(a);
}

static struct space *find_space(const struct pp_aspace *a, uint32_t pid)
{
	int64_t id = pp_intern_find(&a->pids, &pid, sizeof(pid));

	return id < 0 ? NULL : &a->spaces[id];
}

static struct space *get_space(struct pp_aspace *a, uint32_t pid)
{
	int64_t id;

	if (pp_intern_count(&a->pids) >= a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		struct space *s = realloc(a->spaces, cap * sizeof(*s));

		if (!s)
			return NULL;
		a->spaces = s;
		a->cap = cap;
	}
	bool added;

	id = pp_intern_put(&a->pids, &pid, sizeof(pid), &added);
	if (id < 0)
		return NULL;
	if (added) {
		memset(&a->spaces[id], 0, sizeof(a->spaces[id]));
		a->spaces[id].generation = 1;
	}
	return &a->spaces[id];
}

/* Index of the first interval whose end is above addr. */
static size_t first_ending_after(const struct space *s, uint64_t addr)
{
	return SORTED_PARTITION(s->nr, i, s->iv[i].end <= addr);
}

int pp_aspace_map(struct pp_aspace *a, uint32_t pid, uint64_t start, uint64_t len,
		  uint32_t value)
{
	struct space *s;
	uint64_t end = start + len;

	if (!len)
		return -EINVAL;
	if (end < start)	/* wraps: clamp to the top of the address space */
		end = UINT64_MAX;
	s = get_space(a, pid);
	if (!s)
		return -ENOMEM;
	if (s->cap - s->nr < 2) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct interval *iv = realloc(s->iv, cap * sizeof(*iv));

		if (!iv)
			return -ENOMEM;
		s->iv = iv;
		s->cap = cap;
	}

	/* [lo, hi) are the intervals that overlap [start, end). */
	size_t lo = first_ending_after(s, start), hi = lo;

	while (hi < s->nr && s->iv[hi].start < end)
		hi++;

	struct interval piece[3];
	size_t n = 0;

	if (lo < hi && s->iv[lo].start < start)
		piece[n++] = (struct interval){ s->iv[lo].start, start, s->iv[lo].value };
	piece[n++] = (struct interval){ start, end, value };
	if (lo < hi && s->iv[hi - 1].end > end)
		piece[n++] = (struct interval){ end, s->iv[hi - 1].end, s->iv[hi - 1].value };

	/* Replace iv[lo, hi) by the n pieces (n <= hi - lo + 2: room reserved above). */
	memmove(&s->iv[lo + n], &s->iv[hi], (s->nr - hi) * sizeof(*s->iv));
	memcpy(&s->iv[lo], piece, n * sizeof(*piece));
	s->nr = s->nr - (hi - lo) + n;
	s->generation++;
	return 0;
}

int pp_aspace_find(const struct pp_aspace *a, uint32_t pid, uint64_t addr, uint32_t *value)
{
	const struct space *s = find_space(a, pid);
	size_t i;

	if (!s)
		return -ENOENT;
	i = first_ending_after(s, addr);
	if (i == s->nr || s->iv[i].start > addr)
		return -ENOENT;
	*value = s->iv[i].value;
	return 0;
}

int pp_aspace_fork(struct pp_aspace *a, uint32_t child, uint32_t parent)
{
	struct space *c, *p;
	struct interval *iv = NULL;
	size_t nr;

	if (child == parent)
		return 0;
	/* get_space() may move the array: look the parent up after it. */
	c = get_space(a, child);
	if (!c)
		return -ENOMEM;
	p = find_space(a, parent);
	nr = p ? p->nr : 0;
	if (nr) {
		iv = malloc(nr * sizeof(*iv));
		if (!iv)
			return -ENOMEM;
		memcpy(iv, p->iv, nr * sizeof(*iv));
	}
	free(c->iv);
	c->iv = iv;
	c->nr = c->cap = nr;
	c->generation++;
	return 0;
}

void pp_aspace_exec(struct pp_aspace *a, uint32_t pid)
{
	struct space *s = find_space(a, pid);

	if (s) {
		s->nr = 0;
		s->generation++;
	}
}

bool pp_aspace_known(const struct pp_aspace *a, uint32_t pid)
{
	return find_space(a, pid) != NULL;
}

uint32_t pp_aspace_generation(const struct pp_aspace *a, uint32_t pid)
{
	const struct space *s = find_space(a, pid);

	return s ? s->generation : 0;
}

size_t pp_aspace_count(const struct pp_aspace *a, uint32_t pid)
{
	const struct space *s = find_space(a, pid);

	return s ? s->nr : 0;
}

int pp_aspace_at(const struct pp_aspace *a, uint32_t pid, size_t i, uint64_t *start,
		 uint64_t *end, uint32_t *value)
{
	const struct space *s = find_space(a, pid);

	if (!s || i >= s->nr)
		return -ENOENT;
	*start = s->iv[i].start;
	*end = s->iv[i].end;
	*value = s->iv[i].value;
	return 0;
}
