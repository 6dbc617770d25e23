// SPDX-License-Identifier: MIT
/*
 * Unit tests for tools/flamegraph/tree.c: identical paths merge, totals are
 * inclusive, samples aggregate per (node, label set), folding makes one
 * node per parent with the folded count and keeps every value, a diff's
 * base columns stay apart; and for profile.c's read-back accessors, the
 * seam the flame graph reads the pprof converter's profiles through.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "tools/flamegraph/tree.h"
#include "tools/pprof/profile.h"

enum { MAIN = 1, WORK, LEAF_A, LEAF_B, LEAF_C, MOD = 100 };

static struct fg_frame fr(uint32_t name)
{
	return (struct fg_frame){ name, MOD, FG_KIND_NATIVE };
}

/* The node under parent named name, or UINT32_MAX. */
static uint32_t child(const struct fg_tree *t, uint32_t parent, uint32_t name, uint32_t kind)
{
	for (uint32_t id = 1; id < fg_tree_nr_nodes(t); id++) {
		struct fg_node n;

		fg_tree_node(t, id, &n);
		if (n.parent == parent && n.frame.name == name && n.frame.kind == kind)
			return id;
	}
	return UINT32_MAX;
}

static const int64_t *total(const struct fg_tree *t, uint32_t id)
{
	struct fg_node n;

	fg_tree_node(t, id, &n);
	return n.total;
}

/* main -> work -> leaf_a / leaf_b / leaf_c, values (samples, ns) 6:3:1 and some in work. */
static struct fg_tree *shares_tree(void)
{
	struct fg_tree *t;
	struct fg_frame a[] = { fr(MAIN), fr(WORK), fr(LEAF_A) };
	struct fg_frame b[] = { fr(MAIN), fr(WORK), fr(LEAF_B) };
	struct fg_frame c[] = { fr(MAIN), fr(WORK), fr(LEAF_C) };
	int64_t v6[] = { 600, 600000 }, v3[] = { 300, 300000 }, v1[] = { 99, 99000 };
	int64_t one[] = { 1, 1000 };

	cr_assert_eq(fg_tree_new(2, &t), 0);
	cr_assert_eq(fg_tree_add(t, a, 3, v6, 7), 0);
	cr_assert_eq(fg_tree_add(t, b, 3, v3, 7), 0);
	cr_assert_eq(fg_tree_add(t, c, 3, v1, 8), 0);
	cr_assert_eq(fg_tree_add(t, a, 2, one, 7), 0, "a sample in work itself");
	return t;
}

Test(flamegraph_tree, merges_identical_paths)
{
	struct fg_tree *t = shares_tree();
	struct fg_frame a[] = { fr(MAIN), fr(WORK), fr(LEAF_A) };
	int64_t v[] = { 10, 10000 };
	uint32_t m, w, la;

	cr_assert_eq(fg_tree_add(t, a, 3, v, 7), 0);
	cr_assert_eq(fg_tree_nr_nodes(t), 6, "root, main, work and three leaves");
	m = child(t, 0, MAIN, FG_KIND_NATIVE);
	w = child(t, m, WORK, FG_KIND_NATIVE);
	la = child(t, w, LEAF_A, FG_KIND_NATIVE);
	cr_assert_neq(la, UINT32_MAX);
	cr_assert_eq(total(t, la)[0], 610);
	cr_assert_eq(total(t, la)[1], 610000);
	cr_assert_eq(total(t, w)[0], 1010, "inclusive: leaves and work's own sample");
	cr_assert_eq(total(t, 0)[0], 1010);
	cr_assert_eq(fg_tree_max_depth(t), 3);
	cr_assert_eq(fg_tree_nr_samples(t), 4, "(leaf_a, 7) aggregated, not added");

	struct fg_node n;

	fg_tree_node(t, la, &n);
	cr_assert_eq(n.depth, 3);
	cr_assert_lt(n.parent, la, "a parent's id is below its child's");
	fg_tree_free(t);
}

Test(flamegraph_tree, kinds_and_labels_keep_nodes_and_samples_apart)
{
	struct fg_tree *t;
	struct fg_frame native[] = { fr(MAIN) };
	struct fg_frame inl[] = { { MAIN, MOD, FG_KIND_INLINED } };
	int64_t v[] = { 1 };
	uint32_t node, label;
	const int64_t *val;

	cr_assert_eq(fg_tree_new(1, &t), 0);
	cr_assert_eq(fg_tree_add(t, native, 1, v, 1), 0);
	cr_assert_eq(fg_tree_add(t, inl, 1, v, 1), 0);
	cr_assert_eq(fg_tree_add(t, native, 1, v, 2), 0);
	cr_assert_eq(fg_tree_add(t, native, 1, v, 2), 0);
	cr_assert_eq(fg_tree_nr_nodes(t), 3, "an inlined copy of a name is its own frame");
	cr_assert_eq(fg_tree_nr_samples(t), 3);
	fg_tree_sample(t, 2, &node, &label, &val);
	cr_assert_eq(label, 2);
	cr_assert_eq(val[0], 2);
	cr_assert_eq(total(t, 0)[0], 4);
	fg_tree_free(t);
}

Test(flamegraph_tree, rejects_misuse)
{
	struct fg_tree *t;
	struct fg_frame bad[] = { { MAIN, MOD, FG_KIND_ROOT } };
	int64_t v[] = { 1 };

	cr_assert_eq(fg_tree_new(0, &t), -EINVAL);
	cr_assert_null(t);
	cr_assert_eq(fg_tree_new(1, &t), 0);
	cr_assert_eq(fg_tree_add(t, bad, 1, v, 0), -EINVAL, "no second root");
	cr_assert_eq(fg_tree_nr_nodes(t), 1);
	cr_assert_eq(total(t, 0)[0], 0, "a refused path adds nothing");
	fg_tree_free(t);
}

Test(flamegraph_tree, folds_narrow_children_into_one_per_parent)
{
	struct fg_tree *t = shares_tree(), *f;
	struct fg_frame tiny1[] = { fr(MAIN), fr(WORK), fr(200), fr(201) };
	struct fg_frame tiny2[] = { fr(MAIN), fr(WORK), fr(202) };
	int64_t v[] = { 2, 2000 };
	uint32_t m, w, fold;
	struct fg_node n;

	cr_assert_eq(fg_tree_add(t, tiny1, 4, v, 9), 0);
	cr_assert_eq(fg_tree_add(t, tiny2, 3, v, 9), 0);
	/* root total 1004: 2/1004 < 0.5 %, leaf_c 99/1004 is not */
	cr_assert_eq(fg_tree_fold(t, 0.005, &f), 0);
	m = child(f, 0, MAIN, FG_KIND_NATIVE);
	w = child(f, m, WORK, FG_KIND_NATIVE);
	cr_assert_neq(child(f, w, LEAF_C, FG_KIND_NATIVE), UINT32_MAX, "leaf_c stays");
	cr_assert_eq(child(f, w, 200, FG_KIND_NATIVE), UINT32_MAX, "200 is folded");
	fold = child(f, w, FG_NO_STRING, FG_KIND_FOLDED);
	cr_assert_neq(fold, UINT32_MAX);
	fg_tree_node(f, fold, &n);
	cr_assert_eq(n.folded, 3, "200, its child 201, and 202");
	cr_assert_eq(n.total[0], 4);
	cr_assert_eq(n.total[1], 4000);
	cr_assert_eq(fg_tree_folded(f), 3);
	cr_assert_eq(fg_tree_nr_nodes(f), 7, "root, main, work, three leaves, one folded");
	cr_assert_eq(total(f, 0)[0], total(t, 0)[0], "folding keeps every value");
	cr_assert_eq(total(f, w)[1], total(t, child(t, child(t, 0, MAIN, 0), WORK, 0))[1]);

	/* The samples below the fold are counted at it, per label set. */
	size_t at_fold = 0;

	for (size_t s = 0; s < fg_tree_nr_samples(f); s++) {
		uint32_t node, label;
		const int64_t *val;

		fg_tree_sample(f, s, &node, &label, &val);
		if (node == fold) {
			at_fold++;
			cr_assert_eq(label, 9);
			cr_assert_eq(val[0], 4);
		}
	}
	cr_assert_eq(at_fold, 1);
	fg_tree_free(f);

	/* A negative share folds nothing. */
	cr_assert_eq(fg_tree_fold(t, -1, &f), 0);
	cr_assert_eq(fg_tree_nr_nodes(f), fg_tree_nr_nodes(t));
	cr_assert_eq(fg_tree_folded(f), 0);
	fg_tree_free(f);
	fg_tree_free(t);
}

Test(flamegraph_tree, a_frame_wide_in_any_column_stays)
{
	struct fg_tree *t, *f;
	struct fg_frame a[] = { fr(LEAF_A) }, b[] = { fr(LEAF_B) };
	/* columns: new, base (a diff); leaf_b is 0.1 % now but 50 % in the base */
	int64_t va[] = { 999, 100 }, vb[] = { 1, 100 };

	cr_assert_eq(fg_tree_new(2, &t), 0);
	cr_assert_eq(fg_tree_add(t, a, 1, va, 0), 0);
	cr_assert_eq(fg_tree_add(t, b, 1, vb, 0), 0);
	cr_assert_eq(fg_tree_fold(t, 0.01, &f), 0);
	cr_assert_neq(child(f, 0, LEAF_B, FG_KIND_NATIVE), UINT32_MAX,
		      "shrunk from half to nothing: the diff must show it");
	cr_assert_eq(total(f, child(f, 0, LEAF_B, FG_KIND_NATIVE))[1], 100);
	cr_assert_eq(fg_tree_folded(f), 0);
	fg_tree_free(f);
	fg_tree_free(t);
}

Test(flamegraph_tree, children_lists)
{
	struct fg_tree *t = shares_tree();
	uint32_t *first, *list, w;

	cr_assert_eq(fg_tree_children(t, &first, &list), 0);
	w = child(t, child(t, 0, MAIN, 0), WORK, 0);
	cr_assert_eq(first[w + 1] - first[w], 3, "work has three leaves");
	cr_assert_eq(first[1] - first[0], 1, "the root has main");
	cr_assert_eq(first[fg_tree_nr_nodes(t)], fg_tree_nr_nodes(t) - 1, "every node but the root once");
	free(first);
	free(list);
	fg_tree_free(t);
}

/* The seam: what a built pprof profile gives back. */
Test(flamegraph_seam, profile_reads_back)
{
	struct pprof_builder *b;
	struct pprof_mapping m = { .memory_start = 0x1000, .memory_limit = 0x2000,
				   .filename = "/usr/bin/prog" };
	struct pprof_line inl[] = { { .function = "inner" }, { .function = "outer" } };
	struct pprof_line k[] = { { .function = "schedule" } };
	struct pprof_label labels[] = { { .key = "pid", .num = 42, .num_unit = "pid" },
					{ .key = "comm", .str = "prog" } };
	uint64_t mid, l1, l2, locs[2], map, addr, disc;
	int64_t values[] = { 3, 3000 }, fname, type, unit;
	struct pprof_sample_view sv;
	struct pprof_label_view lv;
	size_t nl, len;
	const char *s;

	cr_assert_eq(pprof_builder_new(&b), 0);
	cr_assert_eq(pprof_add_sample_type(b, "samples", "count"), 0);
	cr_assert_eq(pprof_add_sample_type(b, "cpu", "nanoseconds"), 0);
	cr_assert_eq(pprof_mapping(b, &m, &mid), 0);
	cr_assert_eq(pprof_location(b, mid, 0x1234, inl, 2, &l1), 0);
	cr_assert_eq(pprof_location(b, 0, 0xffffffff81000000ULL, k, 1, &l2), 0);
	locs[0] = l2;
	locs[1] = l1;
	cr_assert_eq(pprof_add_sample(b, locs, 2, values, labels, 2), 0);
	cr_assert_eq(pprof_add_sample(b, locs, 2, values, labels, 2), 0);

	pprof_sample_type_at(b, 1, &type, &unit);
	s = pprof_string_at(b, type, &len);
	cr_assert(len == 3 && !memcmp(s, "cpu", 3));
	s = pprof_string_at(b, unit, &len);
	cr_assert(len == 11 && !memcmp(s, "nanoseconds", 11));
	cr_assert_eq(pprof_nr_samples(b), 1);
	pprof_sample_at(b, 0, &sv);
	cr_assert_eq(sv.nr_locs, 2);
	cr_assert_eq(sv.locs[0], l2, "leaf first");
	cr_assert_eq(sv.values[1], 6000, "identical samples summed");
	cr_assert_eq(sv.nr_labels, 2);
	pprof_sample_label_at(b, 0, 0, &lv);
	cr_assert(!lv.is_str && lv.num == 42);
	pprof_sample_label_at(b, 0, 1, &lv);
	s = pprof_string_at(b, lv.str, &len);
	cr_assert(lv.is_str && len == 4 && !memcmp(s, "prog", 4));
	pprof_location_at(b, l1, &map, &addr, &nl);
	cr_assert(map == mid && addr == 0x1234 && nl == 2);
	s = pprof_string_at(b, pprof_location_function_name(b, l1, 1), &len);
	cr_assert(len == 5 && !memcmp(s, "outer", 5), "lines innermost first");
	pprof_mapping_at(b, mid, &fname, &disc);
	s = pprof_string_at(b, fname, &len);
	cr_assert(len == 13 && !memcmp(s, "/usr/bin/prog", 13) && disc == 0);
	pprof_builder_free(b);
}
