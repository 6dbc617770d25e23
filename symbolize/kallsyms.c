// SPDX-License-Identifier: MIT
/*
 * kallsyms.c - read, sort and search the kernel symbol table (kallsyms.h).
 *
 * The whole file is read into one buffer and parsed in place: names and
 * module names point into it, so a 120k-symbol table costs one read, one
 * pass and one sort; the table keeps the reader's buffer.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/kallsyms.h"
#include "symbolize/util.h"
#include "tools/lib/array.h"
#include "tools/lib/sorted.h"

struct ksym {
	uint64_t addr;
	const char *name;
	const char *module;	/* NULL for the core kernel */
	uint32_t index;		/* line order: keeps the sort deterministic */
	char type;
	bool text;		/* can be returned by an address lookup */
};

struct kallsyms {
	char *buf;
	size_t buf_len;		/* for kallsyms_size() */
	struct ksym *syms;
	size_t nr;
};

static bool is_text_type(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

/* By address, then in file order (the order perf keeps aliases in). */
static int ksym_cmp(const void *pa, const void *pb)
{
	const struct ksym *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* The symbols perf loads from kallsyms: text, weak, data and bss, not ARM's "$x". */
static bool perf_loads(const struct ksym *s)
{
	return strchr("tTwWdDbB", s->type) && s->name[0] != '$';
}

static struct sym_alias ksym_alias(const struct ksym *s, bool sized)
{
	/* perf: only 'W' is weak; upper case is global, so 'w' is a local. */
	return (struct sym_alias){ .name = s->name, .sized = sized, .weak = s->type == 'W',
				   .global = s->type >= 'A' && s->type <= 'Z' && s->type != 'W' };
}

/*
 * Move perf's choice among the aliases at syms[0..n) to syms[0], whose
 * text flag then says whether the address is text at all. perf sizes
 * kallsyms symbols by the next one it loaded, so of several at an address
 * only the last it loaded is sized; sym_alias_replaces() decides the rest.
 */
static void pick_alias(struct ksym *syms, size_t n)
{
	size_t best = n, last = n;
	bool text = false;

	for (size_t i = 0; i < n; i++) {
		text |= syms[i].text;
		if (perf_loads(&syms[i]))
			last = i;
	}
	for (size_t i = 0; i < n; i++) {
		struct sym_alias a, b;

		if (!perf_loads(&syms[i]))
			continue;
		if (best == n) {
			best = i;
			continue;
		}
		a = ksym_alias(&syms[best], best == last);
		b = ksym_alias(&syms[i], i == last);
		if (sym_alias_replaces(&a, &b))
			best = i;
	}
	if (best != n && best != 0) {
		struct ksym tmp = syms[0];

		syms[0] = syms[best];
		syms[best] = tmp;
	}
	syms[0].text = text && best != n;
}

/* One line "ADDR TYPE NAME[\t[MODULE]]", NUL-terminated in place. */
static int parse_line(char *line, struct kallsyms_sym *s)
{
	uint64_t addr = 0;
	char *p = line, *end;
	int digits = 0, v;

	while ((v = hex_digit(*p)) >= 0) {
		if (++digits > 16)
			return -EINVAL;
		addr = addr << 4 | (uint64_t)v;
		p++;
	}
	if (!digits || *p != ' ' || !p[1] || p[2] != ' ' || !p[3])
		return -EINVAL;
	s->addr = addr;
	s->type = p[1];
	p += 3;
	s->name = p;
	p += strcspn(p, " \t");
	s->module = NULL;
	if (!*p)
		return 0;
	*p++ = '\0';
	p += strspn(p, " \t");
	if (!*p)
		return 0;
	if (*p != '[' || !(end = strchr(p, ']')) || end == p + 1)
		return -EINVAL;
	*end = '\0';
	s->module = p + 1;
	return 0;
}

int kallsyms_reader_open(struct kallsyms_reader *r, const char *path)
{
	memset(r, 0, sizeof(*r));
	return read_whole_file(path ? path : "/proc/kallsyms", &r->buf, &r->len);
}

int kallsyms_reader_next(struct kallsyms_reader *r, struct kallsyms_sym *sym)
{
	char *end = r->buf + r->len;

	while (r->pos < r->len) {
		char *line = r->buf + r->pos, *eol = memchr(line, '\n', (size_t)(end - line));

		if (!eol)
			eol = end;	/* buf has a spare byte past len for the NUL */
		*eol = '\0';
		r->pos = (size_t)(eol - r->buf) + 1;
		r->lineno++;
		if (!*line)
			continue;
		return parse_line(line, sym) ? -EINVAL : 1;
	}
	return 0;
}

void kallsyms_reader_close(struct kallsyms_reader *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

int kallsyms_find_names(const char *path, struct kallsyms_want *want, size_t n)
{
	struct kallsyms_reader r;
	struct kallsyms_sym s;
	size_t prev = 0;	/* the line of the last symbol read */
	int ret;

	for (size_t i = 0; i < n; i++)
		want[i] = (struct kallsyms_want){ .name = want[i].name };
	ret = kallsyms_reader_open(&r, path);
	if (ret)
		return ret;
	while ((ret = kallsyms_reader_next(&r, &s)) != 0) {
		bool more = false;

		if (ret < 0)
			continue;	/* not a symbol line */
		for (size_t i = 0; i < n; i++) {
			struct kallsyms_want *w = &want[i];

			if (w->found && w->lineno == prev) {
				w->next = s.addr;	/* the line after w's */
			} else if (!w->found && !s.module && !strcmp(s.name, w->name)) {
				*w = (struct kallsyms_want){ .name = w->name, .found = true,
							     .type = s.type, .addr = s.addr,
							     .lineno = r.lineno };
				more = true;	/* its next is still to come */
			} else if (!w->found) {
				more = true;
			}
		}
		prev = r.lineno;
		if (!more)
			break;
	}
	kallsyms_reader_close(&r);
	return 0;
}

static int parse(struct kallsyms *ks, struct kallsyms_reader *r, const char *path, char *err,
		 size_t errlen)
{
	size_t cap = 0, nonzero = 0;
	uint64_t etext = 0;
	bool have_etext = false;
	struct kallsyms_sym line;
	int ret;

	while ((ret = kallsyms_reader_next(r, &line)) != 0) {
		struct ksym *s;

		if (ret < 0) {
			snprintf(err, errlen, "%s:%zu: not a kallsyms line (want 'ADDRESS TYPE NAME "
				 "[MODULE]'); pass a copy of /proc/kallsyms", path, r->lineno);
			return -EINVAL;
		}
		if (ARRAY_RESERVE(ks->syms, cap, ks->nr + 1, 16384))
			return -ENOMEM;
		s = &ks->syms[ks->nr];
		*s = (struct ksym){ .addr = line.addr, .name = line.name, .module = line.module,
				    .type = line.type, .index = (uint32_t)ks->nr };
		ks->nr++;
		if (s->addr)
			nonzero++;
		if (!s->module && !strcmp(s->name, "_etext")) {
			etext = s->addr;
			have_etext = true;
		}
	}
	if (!ks->nr) {
		snprintf(err, errlen, "%s: no symbols in it; pass a copy of /proc/kallsyms", path);
		return -EINVAL;
	}
	if (!nonzero) {
		snprintf(err, errlen, "%s: all addresses are 0 (kernel.kptr_restrict hides them); run "
			 "as root, set 'sysctl kernel.kptr_restrict=0' or pass --kallsyms with a "
			 "readable copy", path);
		return -EPERM;
	}
	for (size_t i = 0; i < ks->nr; i++) {
		struct ksym *s = &ks->syms[i];

		s->text = is_text_type(s->type) && !(have_etext && !s->module && s->addr >= etext);
	}
	qsort(ks->syms, ks->nr, sizeof(*ks->syms), ksym_cmp);
	for (size_t i = 0, j; i < ks->nr; i = j) {
		for (j = i + 1; j < ks->nr && ks->syms[j].addr == ks->syms[i].addr; j++)
			;
		if (j - i > 1)
			pick_alias(&ks->syms[i], j - i);
	}
	return 0;
}

int kallsyms_load(const char *path, struct kallsyms **out, char *msg, size_t msglen)
{
	struct kallsyms_reader r;
	struct kallsyms *ks;
	char ignored[1];
	int err;

	if (!msg) {
		msg = ignored;
		msglen = sizeof(ignored);
	}
	if (msglen)
		msg[0] = '\0';
	if (!path)
		path = "/proc/kallsyms";
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	err = kallsyms_reader_open(&r, path);
	if (err) {
		snprintf(msg, msglen, "cannot read %s: %s; pass --kallsyms with a copy of "
			 "/proc/kallsyms", path, strerror(-err));
		goto fail;
	}
	ks->buf = r.buf;	/* the names point into it: the table keeps it */
	ks->buf_len = r.len + 1;
	err = parse(ks, &r, path, msg, msglen);
	if (err)
		goto fail;
	*out = ks;
	return 0;
fail:
	kallsyms_free(ks);
	return err;
}

size_t kallsyms_size(const struct kallsyms *ks)
{
	return ks ? sizeof(*ks) + ks->buf_len + ks->nr * sizeof(*ks->syms) : 0;
}

void kallsyms_free(struct kallsyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->buf);
	free(ks);
}

int kallsyms_lookup(const struct kallsyms *ks, uint64_t addr, const char **name,
		    uint64_t *offset, const char **module)
{
	size_t n = SORTED_COUNT_LE(ks->syms, ks->nr, addr, addr), last, first;
	const struct ksym *s;

	if (n == 0)
		return -ENOENT;
	last = n - 1;	/* the last symbol at or below addr */
	first = last;
	while (first > 0 && ks->syms[first - 1].addr == ks->syms[last].addr)
		first--;
	s = &ks->syms[first];
	if (!s->text)
		return -ENOENT;
	/* The next symbol bounds this one; the very last one gets its page. */
	if (last + 1 == ks->nr && addr >= (s->addr | 0xfff) + 1)
		return -ENOENT;
	*name = s->name;
	*offset = addr - s->addr;
	if (module)
		*module = s->module;
	return 0;
}

/*
 * The symbol kallsyms_find() gives: the core kernel's of that name first
 * in file order (as kallsyms_find_names() finds it in the file), else the
 * first module's in address order; NULL for none.
 */
static const struct ksym *find_name(const struct kallsyms *ks, const char *name)
{
	const struct ksym *core = NULL, *mod = NULL;

	for (size_t i = 0; i < ks->nr; i++) {
		const struct ksym *s = &ks->syms[i];

		if (strcmp(s->name, name))
			continue;
		if (!s->module && (!core || s->index < core->index))
			core = s;
		else if (s->module && !mod)
			mod = s;
	}
	return core ? core : mod;
}

int kallsyms_find(const struct kallsyms *ks, const char *name, uint64_t *addr)
{
	const struct ksym *s = find_name(ks, name);

	if (!s)
		return -ENOENT;
	*addr = s->addr;
	return 0;
}

int kallsyms_find_core(const struct kallsyms *ks, const char *name, uint64_t *addr)
{
	const struct ksym *s = find_name(ks, name);

	if (!s || s->module)
		return -ENOENT;
	*addr = s->addr;
	return 0;
}
