/* SPDX-License-Identifier: MIT */
/*
 * graph.h - what the flame graph writers (html.c, svg.c) are given: the
 * views, each a folded call tree with its columns' types and units, and
 * the string and label set tables their ids point into. Internal to
 * tools/flamegraph/; bpfrec_flamegraph.c fills it.
 */
#ifndef TOOLS_FLAMEGRAPH_GRAPH_H
#define TOOLS_FLAMEGRAPH_GRAPH_H

#include <stdbool.h>
#include <stdio.h>

#include "tools/pprof/intern.h"
#include "tree.h"

struct fg_column {
	char *type, *unit;		/* pprof's: "cpu", "nanoseconds" */
};

struct fg_view {
	char *name;			/* the event */
	size_t nr_types;		/* columns of one side */
	struct fg_column *types;
	size_t default_type;
	bool has_base;			/* columns nr_types.. hold the diff base's values */
	struct fg_tree *tree;		/* as read */
	struct fg_tree *folded;		/* as drawn */
};

/* A label set: whose samples (the key of struct fg_graph.labels). */
struct fg_labels {
	uint32_t pid, tid;
	uint32_t comm;			/* string id, FG_NO_STRING = unknown */
};

struct fg_graph {
	const char *title, *input, *base;	/* base: NULL unless a diff */
	bool icicle;
	double min_share;
	struct fg_view *views;
	size_t nr_views;
	const struct pp_intern *strs;		/* string ids: bytes, no NUL */
	const struct pp_intern *labels;		/* struct fg_labels */
};

/* 0 or -errno (-EIO: the stream failed). */
int fg_write_html(const struct fg_graph *g, FILE *f);
int fg_write_svg(const struct fg_graph *g, size_t view, FILE *f);

/* Text for the writers: s[0..len) as a JSON string body, or as XML text. */
void fg_put_json(FILE *f, const char *s, size_t len);
void fg_put_xml(FILE *f, const char *s, size_t len);

#endif /* TOOLS_FLAMEGRAPH_GRAPH_H */
