// SPDX-License-Identifier: MIT
/*
 * tree.c - the flame graph's call tree (see tree.h).
 *
 * Nodes and samples are pp_intern sets (tools/pprof/intern.h): a node's key
 * is (parent, name, module, kind), a sample's (node, label), so "merge
 * identical paths" is one hash lookup per frame. Per-node arrays (totals,
 * depth, folded counts) sit beside the set, indexed by id.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tools/pprof/intern.h"
#include "tree.h"
#include "tools/lib/array.h"

struct node_key {
	uint32_t parent, name, module, kind;
};

struct sample_key {
	uint32_t node, label;
};

struct fg_tree {
	size_t nr_cols;
	struct pp_intern nodes, samples;
	int64_t *totals;		/* nr_cols per node */
	uint32_t *depth;
	uint64_t *folded;
	size_t nodes_cap;
	int64_t *values;		/* nr_cols per sample */
	size_t samples_cap;
	uint32_t max_depth;
	uint64_t nr_folded;
	uint32_t *path_ids;		/* scratch: the node of each path level */
	size_t path_cap;
};

/* Room for per-node arrays of at least n nodes. */
static int nodes_room(struct fg_tree *t, size_t n)
{
	size_t cap = t->nodes_cap ? t->nodes_cap : 256;
	void *p;

	if (n <= t->nodes_cap)
		return 0;
	while (cap < n)
		cap *= 2;
	p = realloc(t->totals, cap * t->nr_cols * sizeof(*t->totals));
	if (!p)
		return -ENOMEM;
	t->totals = p;
	p = realloc(t->depth, cap * sizeof(*t->depth));
	if (!p)
		return -ENOMEM;
	t->depth = p;
	p = realloc(t->folded, cap * sizeof(*t->folded));
	if (!p)
		return -ENOMEM;
	t->folded = p;
	t->nodes_cap = cap;
	return 0;
}

/* The id of (parent, frame), added with zero totals when new. */
static int64_t node_id(struct fg_tree *t, uint32_t parent, const struct fg_frame *f)
{
	struct node_key k = { parent, f->name, f->module, f->kind };
	bool added;
	int64_t id;
	int err = nodes_room(t, pp_intern_count(&t->nodes) + 1);

	if (err)
		return err;
	id = pp_intern_put(&t->nodes, &k, sizeof(k), &added);
	if (id < 0 || !added)
		return id;
	memset(&t->totals[id * t->nr_cols], 0, t->nr_cols * sizeof(*t->totals));
	t->depth[id] = parent == FG_NO_PARENT ? 0 : t->depth[parent] + 1;
	t->folded[id] = 0;
	if (t->depth[id] > t->max_depth)
		t->max_depth = t->depth[id];
	return id;
}

/* The sample (node, label): its values, zero when new. */
static int64_t *sample_values(struct fg_tree *t, uint32_t node, uint32_t label)
{
	struct sample_key k = { node, label };
	bool added;
	int64_t id;

	if (ARRAY_RESERVE_ROWS(t->values, t->samples_cap, pp_intern_count(&t->samples) + 1,
			       t->nr_cols, 256))
		return NULL;
	id = pp_intern_put(&t->samples, &k, sizeof(k), &added);
	if (id < 0)
		return NULL;
	if (added)
		memset(&t->values[id * t->nr_cols], 0, t->nr_cols * sizeof(*t->values));
	return &t->values[id * t->nr_cols];
}

int fg_tree_new(size_t nr_columns, struct fg_tree **out)
{
	static const struct fg_frame root = { FG_NO_STRING, FG_NO_STRING, FG_KIND_ROOT };
	struct fg_tree *t;

	*out = NULL;
	if (!nr_columns || nr_columns > 64)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->nr_cols = nr_columns;
	if (node_id(t, FG_NO_PARENT, &root) != 0) {
		fg_tree_free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void fg_tree_free(struct fg_tree *t)
{
	if (!t)
		return;
	pp_intern_free(&t->nodes);
	pp_intern_free(&t->samples);
	free(t->totals);
	free(t->depth);
	free(t->folded);
	free(t->values);
	free(t->path_ids);
	free(t);
}

static void add_to(int64_t *dst, const int64_t *v, size_t n)
{
	for (size_t c = 0; c < n; c++)
		dst[c] += v[c];
}

int fg_tree_add(struct fg_tree *t, const struct fg_frame *path, size_t depth,
		const int64_t *values, uint32_t label)
{
	uint32_t node = 0;
	int64_t *sv;

	if (depth >= UINT32_MAX)
		return -EINVAL;
	for (size_t i = 0; i < depth; i++)
		if (path[i].kind >= FG_KIND_NR || path[i].kind == FG_KIND_ROOT)
			return -EINVAL;
	if (depth > t->path_cap) {
		uint32_t *p = realloc(t->path_ids, depth * sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->path_ids = p;
		t->path_cap = depth;
	}
	/* Every node first, then the values: a failure adds nothing to a total. */
	for (size_t i = 0; i < depth; i++) {
		int64_t id = node_id(t, node, &path[i]);

		if (id < 0)
			return id;
		node = t->path_ids[i] = id;
	}
	sv = sample_values(t, node, label);
	if (!sv)
		return -ENOMEM;
	add_to(sv, values, t->nr_cols);
	add_to(&t->totals[0], values, t->nr_cols);
	for (size_t i = 0; i < depth; i++)
		add_to(&t->totals[(size_t)t->path_ids[i] * t->nr_cols], values, t->nr_cols);
	return 0;
}

/* Below min_share of the root in every column (a zero root column does not count). */
static bool narrow(const struct fg_tree *t, uint32_t id, double min_share)
{
	const int64_t *v = &t->totals[(size_t)id * t->nr_cols];

	for (size_t c = 0; c < t->nr_cols; c++) {
		double root = (double)llabs(t->totals[c]);

		if (v[c] && (double)llabs(v[c]) >= min_share * root)
			return false;
	}
	return true;
}

int fg_tree_fold(const struct fg_tree *t, double min_share, struct fg_tree **out)
{
	static const struct fg_frame fold = { FG_NO_STRING, FG_NO_STRING, FG_KIND_FOLDED };
	size_t n = pp_intern_count(&t->nodes);
	uint32_t *map = malloc(n * sizeof(*map));
	bool *gone = calloc(n, sizeof(*gone));
	struct fg_tree *nt = NULL;
	int err;

	*out = NULL;
	err = map && gone ? fg_tree_new(t->nr_cols, &nt) : -ENOMEM;
	if (err)
		goto out;
	map[0] = 0;
	for (uint32_t id = 1; id < n; id++) {
		const struct node_key *k = pp_intern_get(&t->nodes, id, NULL);
		struct fg_frame f = { k->name, k->module, k->kind };
		int64_t nid;

		if (gone[k->parent]) {
			/* below a folded frame: counted in it */
			map[id] = map[k->parent];
			gone[id] = true;
			nt->folded[map[id]]++;
			nt->nr_folded++;
			continue;
		}
		gone[id] = narrow(t, id, min_share);
		nid = node_id(nt, map[k->parent], gone[id] ? &fold : &f);
		if (nid < 0) {
			err = nid;
			goto out;
		}
		map[id] = nid;
		if (gone[id]) {
			nt->folded[nid]++;
			nt->nr_folded++;
		}
	}
	/* Samples to their new nodes; totals from them, children before parents. */
	for (size_t s = 0; s < pp_intern_count(&t->samples); s++) {
		const struct sample_key *k = pp_intern_get(&t->samples, s, NULL);
		int64_t *sv = sample_values(nt, map[k->node], k->label);

		if (!sv) {
			err = -ENOMEM;
			goto out;
		}
		add_to(sv, &t->values[s * t->nr_cols], t->nr_cols);
		add_to(&nt->totals[(size_t)map[k->node] * t->nr_cols], &t->values[s * t->nr_cols],
		       t->nr_cols);
	}
	for (size_t id = pp_intern_count(&nt->nodes); id-- > 1;) {
		const struct node_key *k = pp_intern_get(&nt->nodes, id, NULL);

		add_to(&nt->totals[(size_t)k->parent * t->nr_cols], &nt->totals[id * t->nr_cols],
		       t->nr_cols);
	}
	*out = nt;
	nt = NULL;
out:
	fg_tree_free(nt);
	free(map);
	free(gone);
	return err;
}

size_t fg_tree_nr_columns(const struct fg_tree *t)
{
	return t->nr_cols;
}

size_t fg_tree_nr_nodes(const struct fg_tree *t)
{
	return pp_intern_count(&t->nodes);
}

void fg_tree_node(const struct fg_tree *t, uint32_t id, struct fg_node *out)
{
	const struct node_key *k = pp_intern_get(&t->nodes, id, NULL);

	*out = (struct fg_node){
		.parent = k->parent,
		.depth = t->depth[id],
		.frame = { k->name, k->module, k->kind },
		.folded = t->folded[id],
		.total = &t->totals[(size_t)id * t->nr_cols],
	};
}

uint32_t fg_tree_max_depth(const struct fg_tree *t)
{
	return t->max_depth;
}

uint64_t fg_tree_folded(const struct fg_tree *t)
{
	return t->nr_folded;
}

size_t fg_tree_nr_samples(const struct fg_tree *t)
{
	return pp_intern_count(&t->samples);
}

void fg_tree_sample(const struct fg_tree *t, size_t i, uint32_t *node, uint32_t *label,
		    const int64_t **values)
{
	const struct sample_key *k = pp_intern_get(&t->samples, i, NULL);

	*node = k->node;
	*label = k->label;
	*values = &t->values[i * t->nr_cols];
}

int fg_tree_children(const struct fg_tree *t, uint32_t **first_out, uint32_t **list_out)
{
	size_t n = pp_intern_count(&t->nodes);
	uint32_t *first = calloc(n + 1, sizeof(*first));
	uint32_t *list = malloc((n ? n : 1) * sizeof(*list));
	uint32_t *fill = calloc(n + 1, sizeof(*fill));

	if (!first || !list || !fill) {
		free(first);
		free(list);
		free(fill);
		return -ENOMEM;
	}
	/* Count per parent, prefix sums, then place in id order. */
	for (uint32_t id = 1; id < n; id++)
		first[((const struct node_key *)pp_intern_get(&t->nodes, id, NULL))->parent + 1]++;
	for (size_t i = 0; i < n; i++)
		first[i + 1] += first[i];
	memcpy(fill, first, (n + 1) * sizeof(*fill));
	for (uint32_t id = 1; id < n; id++)
		list[fill[((const struct node_key *)pp_intern_get(&t->nodes, id, NULL))->parent]++] = id;
	free(fill);
	*first_out = first;
	*list_out = list;
	return 0;
}
