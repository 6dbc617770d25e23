// SPDX-License-Identifier: MIT
/*
 * html.c - the interactive page: the template (flame.html, embedded at
 * build time as flame_template.h) with the graph's data as JSON where it
 * says @FG_DATA@. The page itself merges nothing: it gets the folded tree
 * (parent, name, module, kind, folded count per node) and the samples
 * (node, label set, values), and sums the samples its filters keep.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "flame_template.h"
#include "graph.h"

#define MARKER "@FG_DATA@"

/* JSON string body; '<', '>' and '&' escaped so no "</script>" can close the block. */
void fg_put_json(FILE *f, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			putc(c, f);
	}
}

static void put_string(FILE *f, const char *s)
{
	putc('"', f);
	fg_put_json(f, s, strlen(s));
	putc('"', f);
}

static void put_view(FILE *f, const struct fg_view *v)
{
	const struct fg_tree *t = v->folded;
	size_t cols = fg_tree_nr_columns(t);

	fprintf(f, "{\"name\":");
	put_string(f, v->name);
	fprintf(f, ",\"types\":[");
	for (size_t i = 0; i < v->nr_types; i++) {
		fprintf(f, "%s[", i ? "," : "");
		put_string(f, v->types[i].type);
		putc(',', f);
		put_string(f, v->types[i].unit);
		putc(']', f);
	}
	fprintf(f, "],\"default\":%zu,\"diff\":%s,\"cols\":%zu,\"folded\":%" PRIu64 ",\"nodes\":[",
		v->default_type, v->has_base ? "true" : "false", cols, fg_tree_folded(t));
	for (uint32_t id = 0; id < fg_tree_nr_nodes(t); id++) {
		struct fg_node n;

		fg_tree_node(t, id, &n);
		fprintf(f, "%s%d,%d,%d,%u,%" PRIu64 "%s", id ? "," : "",
			n.parent == FG_NO_PARENT ? -1 : (int)n.parent,
			n.frame.name == FG_NO_STRING ? -1 : (int)n.frame.name,
			n.frame.module == FG_NO_STRING ? -1 : (int)n.frame.module,
			n.frame.kind, n.folded, id % 16 == 15 ? "\n" : "");
	}
	fprintf(f, "],\"samples\":[");
	for (size_t s = 0; s < fg_tree_nr_samples(t); s++) {
		uint32_t node, label;
		const int64_t *val;

		fg_tree_sample(t, s, &node, &label, &val);
		fprintf(f, "%s%u,%u", s ? "," : "", node, label);
		for (size_t c = 0; c < cols; c++)
			fprintf(f, ",%" PRId64, val[c]);
		if (s % 8 == 7)
			putc('\n', f);
	}
	fprintf(f, "]}");
}

static void put_data(const struct fg_graph *g, FILE *f)
{
	fprintf(f, "{\"title\":");
	put_string(f, g->title);
	fprintf(f, ",\"input\":");
	put_string(f, g->input);
	fprintf(f, ",\"base\":");
	if (g->base)
		put_string(f, g->base);
	else
		fprintf(f, "null");
	fprintf(f, ",\"icicle\":%s,\"minShare\":%g,\n\"strings\":[", g->icicle ? "true" : "false",
		g->min_share);
	for (size_t i = 0; i < pp_intern_count(g->strs); i++) {
		size_t len;
		const char *s = pp_intern_get(g->strs, i, &len);

		fprintf(f, "%s\"", i ? "," : "");
		fg_put_json(f, s, len);
		putc('"', f);
		if (i % 16 == 15)
			putc('\n', f);
	}
	fprintf(f, "],\n\"labels\":[");
	for (size_t i = 0; i < pp_intern_count(g->labels); i++) {
		const struct fg_labels *l = pp_intern_get(g->labels, i, NULL);

		fprintf(f, "%s%u,%u,%d", i ? "," : "", l->pid, l->tid,
			l->comm == FG_NO_STRING ? -1 : (int)l->comm);
	}
	fprintf(f, "],\n\"views\":[");
	for (size_t i = 0; i < g->nr_views; i++) {
		if (i)
			fprintf(f, ",\n");
		put_view(f, &g->views[i]);
	}
	fprintf(f, "]}");
}

int fg_write_html(const struct fg_graph *g, FILE *f)
{
	const char *tpl = (const char *)fg_template;
	const char *at = memmem(tpl, fg_template_len, MARKER, strlen(MARKER));
	size_t head;

	if (!at)
		return -EINVAL;
	head = at - tpl;
	fwrite(tpl, 1, head, f);
	put_data(g, f);
	fwrite(at + strlen(MARKER), 1, fg_template_len - head - strlen(MARKER), f);
	return ferror(f) ? -EIO : 0;
}
