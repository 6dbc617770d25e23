/* SPDX-License-Identifier: MIT */
/*
 * tree.h - the call tree of one flame graph view: identical paths merged,
 * narrow frames folded.
 *
 * A node is a frame (name, module, kind; names are the caller's string
 * ids) under its parent; node 0 is the root ("all"). Paths are added root
 * first (outermost caller first) with one value per column and a label set
 * id (whose pid/tid/comm the caller keeps): identical paths become one
 * node chain, and identical (leaf node, label set) pairs one sample whose
 * values are summed. So memory follows distinct stacks and label sets,
 * never the number of samples. A node's total is its own samples plus its
 * descendants'; a parent's id is always below its children's.
 *
 * Columns are what the caller makes them: a profile's sample types, and for
 * a differential graph the base's types after the new input's.
 *
 * fg_tree_fold() makes the tree a page can draw: under each parent, the
 * children narrower than min_share of the root in every column become one
 * "folded" node holding their total, and their descendants go with them.
 * Every function returns 0 or -errno (-ENOMEM, -EINVAL for misuse).
 */
#ifndef TOOLS_FLAMEGRAPH_TREE_H
#define TOOLS_FLAMEGRAPH_TREE_H

#include <stddef.h>
#include <stdint.h>

enum fg_kind {
	FG_KIND_NATIVE,		/* compiled code in a file */
	FG_KIND_KERNEL,
	FG_KIND_JIT,		/* anonymous memory, perf-PID.map */
	FG_KIND_INLINED,	/* inlined into its caller (debug info says) */
	FG_KIND_FOLDED,		/* narrow frames folded into one */
	FG_KIND_ROOT,
	FG_KIND_NR
};

/* The root's and folded nodes' name and module. */
#define FG_NO_STRING UINT32_MAX
#define FG_NO_PARENT UINT32_MAX

struct fg_frame {
	uint32_t name, module;		/* the caller's string ids */
	uint32_t kind;			/* enum fg_kind */
};

struct fg_node {
	uint32_t parent;		/* FG_NO_PARENT for the root */
	uint32_t depth;			/* the root's is 0 */
	struct fg_frame frame;
	uint64_t folded;		/* folded nodes: how many frames they stand for */
	const int64_t *total;		/* one per column */
};

struct fg_tree;

int fg_tree_new(size_t nr_columns, struct fg_tree **out);
void fg_tree_free(struct fg_tree *t);

/* path[0] is the outermost caller; values: one per column. depth 0 = the root itself. */
int fg_tree_add(struct fg_tree *t, const struct fg_frame *path, size_t depth,
		const int64_t *values, uint32_t label);

/*
 * A copy of t where, under each parent, the children whose total is below
 * min_share (0..1) of the root's in every column are one FG_KIND_FOLDED
 * node. Samples below a folded node are counted at it.
 */
int fg_tree_fold(const struct fg_tree *t, double min_share, struct fg_tree **out);

size_t fg_tree_nr_columns(const struct fg_tree *t);
size_t fg_tree_nr_nodes(const struct fg_tree *t);
void fg_tree_node(const struct fg_tree *t, uint32_t id, struct fg_node *out);
uint32_t fg_tree_max_depth(const struct fg_tree *t);
/* Frames folded away (the sum of the folded nodes' counts). */
uint64_t fg_tree_folded(const struct fg_tree *t);

size_t fg_tree_nr_samples(const struct fg_tree *t);
void fg_tree_sample(const struct fg_tree *t, size_t i, uint32_t *node, uint32_t *label,
		    const int64_t **values);

/*
 * The children of every node, in one array: node id's children are
 * list[first[id]] .. list[first[id + 1] - 1], in id order. The caller frees
 * *first and *list.
 */
int fg_tree_children(const struct fg_tree *t, uint32_t **first, uint32_t **list);

#endif /* TOOLS_FLAMEGRAPH_TREE_H */
