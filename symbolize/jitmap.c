// SPDX-License-Identifier: MIT
/* jitmap.c - parse and search perf-PID.map files (jitmap.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/jitmap.h"
#include "symbolize/safeopen.h"
#include "symbolize/util.h"
#include "tools/lib/array.h"
#include "tools/lib/sorted.h"

struct jit_sym {
	uint64_t start, size;
	const char *name;
	uint32_t index;	/* line order: later lines win */
};

struct jitmap {
	char *buf;
	struct jit_sym *syms;
	size_t nr;
	uint64_t max_size;	/* bounds the backward scan of a lookup */
};

static bool parse_hex(char **pp, uint64_t *out)
{
	char *p = *pp;
	uint64_t v = 0;
	int digits = 0;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (;; p++) {
		int d = hex_digit(*p);

		if (d < 0)
			break;
		if (++digits > 16)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits)
		return false;
	*out = v;
	*pp = p;
	return true;
}

/* "START SIZE NAME", NUL-terminated in place. */
static bool parse_line(char *line, struct jit_sym *s)
{
	char *p = line, *end;

	if (!parse_hex(&p, &s->start) || *p != ' ')
		return false;
	p++;
	if (!parse_hex(&p, &s->size) || *p != ' ' || !s->size)
		return false;
	p++;
	end = p + strlen(p);
	while (end > p && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	if (end == p || s->start + s->size < s->start)
		return false;
	s->name = p;
	return true;
}

static int sym_cmp(const void *pa, const void *pb)
{
	const struct jit_sym *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

int jitmap_load(const char *path, uid_t owner, struct jitmap **out)
{
	const struct safeopen_want want = {
		.check_owner = true, .owner = owner, .max_size = JITMAP_MAX_BYTES, .no_follow = true,
	};
	struct jitmap *jm;
	char *line, *eol, *end;
	size_t len, cap = 0;
	int err, fd;

	jm = calloc(1, sizeof(*jm));
	if (!jm)
		return -ENOMEM;
	err = safeopen(-1, path, &want, &fd, NULL);
	if (err)
		goto fail;
	err = read_whole_fd(fd, &jm->buf, &len);
	close(fd);
	/* It grew past the bound since it was looked at. */
	if (!err && len > JITMAP_MAX_BYTES)
		err = -EFBIG;
	if (err)
		goto fail;
	end = jm->buf + len;
	for (line = jm->buf; line < end; line = eol + 1) {
		struct jit_sym s;

		eol = memchr(line, '\n', (size_t)(end - line));
		if (!eol)
			eol = end;
		*eol = '\0';
		if (!parse_line(line, &s))
			continue;
		if (ARRAY_RESERVE(jm->syms, cap, jm->nr + 1, 256)) {
			err = -ENOMEM;
			goto fail;
		}
		s.index = (uint32_t)jm->nr;
		jm->syms[jm->nr++] = s;
		if (s.size > jm->max_size)
			jm->max_size = s.size;
	}
	if (jm->nr)
		qsort(jm->syms, jm->nr, sizeof(*jm->syms), sym_cmp);
	*out = jm;
	return 0;
fail:
	jitmap_free(jm);
	return err;
}

void jitmap_free(struct jitmap *jm)
{
	if (!jm)
		return;
	free(jm->syms);
	free(jm->buf);
	free(jm);
}

int jitmap_lookup(const struct jitmap *jm, uint64_t addr, const char **name, uint64_t *offset)
{
	const struct jit_sym *best = NULL;
	size_t n = SORTED_COUNT_LE(jm->syms, jm->nr, start, addr);

	/* Entries may overlap: look back as far as the largest entry reaches. */
	for (size_t i = n; i-- > 0;) {
		const struct jit_sym *s = &jm->syms[i];

		if (addr - s->start >= jm->max_size)
			break;
		if (addr - s->start < s->size && (!best || s->index > best->index))
			best = s;
	}
	if (!best)
		return -ENOENT;
	*name = best->name;
	*offset = addr - best->start;
	return 0;
}
