// SPDX-License-Identifier: MIT
/*
 * svg.c - the static flame graph: one view (its default column), one <g>
 * per frame holding a <title> (name, module, value and share: the
 * tooltip), a <rect> and, where it fits, a <text>. Self-contained: no
 * script, no external font or style; it parses as plain XML.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

#define WIDTH 1200.0
#define ROW 17
#define HEAD 40		/* title and total above the frames */
#define CHAR_W 6.6	/* of 11px monospace */

/* XML text: markup escaped; control characters XML 1.0 forbids become '?'. */
void fg_put_xml(FILE *f, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			putc(c < 0x20 && c != '\t' && c != '\n' ? '?' : c, f);
		}
	}
}

static void put_cstr(FILE *f, const char *s)
{
	fg_put_xml(f, s, strlen(s));
}

/* A value with its unit, as the page writes it. */
static void put_value(FILE *f, double x, const struct fg_column *c)
{
	double a = fabs(x);

	if (!strcmp(c->unit, "nanoseconds")) {
		if (a >= 1e9)
			fprintf(f, "%.3f s", x / 1e9);
		else if (a >= 1e6)
			fprintf(f, "%.3f ms", x / 1e6);
		else if (a >= 1e3)
			fprintf(f, "%.3f us", x / 1e3);
		else
			fprintf(f, "%.0f ns", x);
	} else if (!strcmp(c->unit, "bytes")) {
		static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
		size_t i = 0;

		while (fabs(x) >= 1024 && i < 4) {
			x /= 1024;
			i++;
		}
		fprintf(f, i ? "%.2f %s" : "%.0f %s", x, u[i]);
	} else if (!strcmp(c->unit, "count")) {
		size_t tl = strlen(c->type);

		fprintf(f, "%.0f ", x);
		put_cstr(f, tl >= 7 && !strcmp(c->type + tl - 7, "objects") ? "objects" : c->type);
	} else {
		fprintf(f, "%.0f ", x);
		put_cstr(f, c->unit);
	}
}

struct svg_ctx {
	const struct fg_graph *g;
	const struct fg_view *v;
	const struct fg_tree *t;
	FILE *f;
	size_t col, bcol;		/* the drawn column, the base's */
	double total, btotal, scale, max_delta;
	uint32_t rows;
};

static const char *str(const struct fg_graph *g, uint32_t id, size_t *len)
{
	return pp_intern_get(g->strs, id, len);
}

/* Siblings by name, as flame graphs order them (qsort_r's comparator). */
static int by_name(const void *pa, const void *pb, void *ctx)
{
	const struct svg_ctx *x = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	struct fg_node na, nb;
	size_t la = 0, lb = 0;
	const char *sa = "", *sb = "";
	int r;

	fg_tree_node(x->t, a, &na);
	fg_tree_node(x->t, b, &nb);
	if (na.frame.name != FG_NO_STRING)
		sa = str(x->g, na.frame.name, &la);
	if (nb.frame.name != FG_NO_STRING)
		sb = str(x->g, nb.frame.name, &lb);
	r = memcmp(sa, sb, la < lb ? la : lb);
	return r ? r : la < lb ? -1 : la > lb;
}

static double delta(const struct svg_ctx *x, const struct fg_node *n)
{
	double a = x->total ? n->total[x->col] / x->total : 0;
	double b = x->btotal ? n->total[x->bcol] / x->btotal : 0;

	return a - b;
}

static void fill(const struct svg_ctx *x, uint32_t id, const struct fg_node *n, char *out, size_t len)
{
	static const int hue[FG_KIND_NR][2] = {
		{ 20, 60 }, { 200, 62 }, { 110, 55 }, { 50, 62 }, { 0, 80 }, { 0, 85 } };
	uint32_t h = id * 2654435761u;
	double r = (h >> 8) / 16777216.0;

	if (x->v->has_base) {
		double d = delta(x, n), s = x->max_delta ? fabs(d) / x->max_delta : 0;
		/* 50-95 % lightness: rounded by hand, bpfrec links no libm (alloc.c). */
		int l = (int)(95 - 45 * (s < 1 ? s : 1) + 0.5);

		snprintf(out, len, d > 0 ? "hsl(0,85%%,%d%%)" : d < 0 ? "hsl(220,85%%,%d%%)"
									: "hsl(0,0%%,%d%%)", l);
	} else if (n->frame.kind >= FG_KIND_FOLDED) {
		snprintf(out, len, "hsl(0,0%%,%d%%)", hue[n->frame.kind][1]);
	} else {
		snprintf(out, len, "hsl(%d,75%%,%d%%)", hue[n->frame.kind][0] + (int)(25 * r),
			 hue[n->frame.kind][1] + (int)(10 * r));
	}
}

static void put_name(const struct svg_ctx *x, const struct fg_node *n)
{
	size_t len;
	const char *s;

	if (n->frame.kind == FG_KIND_ROOT) {
		fputs("all", x->f);
	} else if (n->frame.kind == FG_KIND_FOLDED) {
		fprintf(x->f, "[%" PRIu64 " frames folded]", n->folded);
	} else {
		s = str(x->g, n->frame.name, &len);
		fg_put_xml(x->f, s, len);
	}
}

static void put_frame(const struct svg_ctx *x, uint32_t id, double px)
{
	struct fg_node n;
	double w, y;
	char colour[64];
	size_t len;

	fg_tree_node(x->t, id, &n);
	w = n.total[x->col] * x->scale;
	y = HEAD + (x->g->icicle ? n.depth : x->rows - 1 - n.depth) * ROW;
	fill(x, id, &n, colour, sizeof(colour));
	fputs("<g class=\"f\"><title>", x->f);
	put_name(x, &n);
	if (n.frame.kind < FG_KIND_FOLDED) {
		const char *m = str(x->g, n.frame.module, &len);

		fputs(" [", x->f);
		fg_put_xml(x->f, m, len);
		fputs("]", x->f);
	}
	fputs(": ", x->f);
	put_value(x->f, n.total[x->col], &x->v->types[x->col]);
	fprintf(x->f, ", %.2f%%", x->total ? 100.0 * n.total[x->col] / x->total : 0);
	if (x->v->has_base) {
		fputs("; base ", x->f);
		put_value(x->f, n.total[x->bcol], &x->v->types[x->col]);
		fprintf(x->f, ", %.2f%%; change %+.2f points",
			x->btotal ? 100.0 * n.total[x->bcol] / x->btotal : 0, 100 * delta(x, &n));
	}
	fprintf(x->f, "</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>",
		px, y, w, ROW - 1, colour);
	if (w > 3 * CHAR_W) {
		size_t fit = (size_t)((w - 4) / CHAR_W);

		fprintf(x->f, "<text x=\"%.2f\" y=\"%.0f\">", px + 2, y + ROW - 5);
		if (n.frame.kind == FG_KIND_ROOT || n.frame.kind == FG_KIND_FOLDED) {
			put_name(x, &n);
		} else {
			const char *s = str(x->g, n.frame.name, &len);

			if (len > fit) {
				/* whole UTF-8 characters only */
				len = fit > 2 ? fit - 2 : 0;
				while (len && ((unsigned char)s[len] & 0xc0) == 0x80)
					len--;
				fg_put_xml(x->f, s, len);
				fputs("..", x->f);
			} else {
				fg_put_xml(x->f, s, len);
			}
		}
		fputs("</text>", x->f);
	}
	fputs("</g>\n", x->f);
}

int fg_write_svg(const struct fg_graph *g, size_t view, FILE *f)
{
	struct svg_ctx x = { .g = g, .f = f };
	uint32_t *first = NULL, *list = NULL, *stack = NULL;
	double *xs = NULL;
	struct fg_node root;
	size_t n, sp = 0;
	int err;

	if (view >= g->nr_views)
		return -EINVAL;
	x.v = &g->views[view];
	x.t = x.v->folded;
	x.col = x.v->default_type;
	x.bcol = x.col + x.v->nr_types;
	x.rows = fg_tree_max_depth(x.t) + 1;
	fg_tree_node(x.t, 0, &root);
	x.total = root.total[x.col];
	x.btotal = x.v->has_base ? root.total[x.bcol] : 0;
	x.scale = x.total ? WIDTH / x.total : 0;
	n = fg_tree_nr_nodes(x.t);
	if (x.v->has_base)
		for (uint32_t id = 0; id < n; id++) {
			struct fg_node nd;
			double d;

			fg_tree_node(x.t, id, &nd);
			d = fabs(delta(&x, &nd));
			if (d > x.max_delta)
				x.max_delta = d;
		}
	err = fg_tree_children(x.t, &first, &list);
	stack = malloc(n * sizeof(*stack));
	xs = malloc(n * sizeof(*xs));
	if (err || !stack || !xs) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (first[i + 1] - first[i] > 1)
			qsort_r(&list[first[i]], first[i + 1] - first[i], sizeof(*list), by_name, &x);

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
		"height=\"%u\" viewBox=\"0 0 %.0f %u\" font-family=\"monospace\" font-size=\"11\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#fafafa\"/>\n"
		"<text x=\"4\" y=\"16\" font-size=\"14\" font-family=\"sans-serif\">",
		WIDTH, HEAD + x.rows * ROW, WIDTH, HEAD + x.rows * ROW);
	put_cstr(f, g->title);
	fputs("</text>\n<text x=\"4\" y=\"32\" font-family=\"sans-serif\">", f);
	put_cstr(f, x.v->name);
	fputs(": ", f);
	put_cstr(f, x.v->types[x.col].type);
	fputs(", total ", f);
	put_value(f, x.total, &x.v->types[x.col]);
	if (fg_tree_folded(x.t))
		fprintf(f, "; %" PRIu64 " frames narrower than %g%% folded", fg_tree_folded(x.t),
			100 * g->min_share);
	if (x.v->has_base)
		fputs("; red grew, blue shrank (share against the base)", f);
	fputs("</text>\n", f);

	/* Depth first, children by name, left to right. */
	stack[sp] = 0;
	xs[sp++] = 0;
	while (sp) {
		uint32_t id = stack[--sp];
		double px = xs[sp], cx = px;
		struct fg_node nd;

		fg_tree_node(x.t, id, &nd);
		if (!nd.total[x.col])
			continue;	/* nothing in this column: no width */
		put_frame(&x, id, px);
		/* pushed right to left so they come out left to right */
		for (uint32_t c = first[id]; c < first[id + 1]; c++) {
			struct fg_node cn;

			fg_tree_node(x.t, list[c], &cn);
			cx += cn.total[x.col] * x.scale;
		}
		for (uint32_t c = first[id + 1]; c-- > first[id];) {
			struct fg_node cn;

			fg_tree_node(x.t, list[c], &cn);
			cx -= cn.total[x.col] * x.scale;
			stack[sp] = list[c];
			xs[sp++] = cx;
		}
	}
	fputs("</svg>\n", f);
	err = ferror(f) ? -EIO : 0;
out:
	free(first);
	free(list);
	free(stack);
	free(xs);
	return err;
}
