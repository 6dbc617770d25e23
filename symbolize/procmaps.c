// SPDX-License-Identifier: MIT
/*
 * procmaps.c - parse /proc/PID/maps into executable mappings, and
 * modules.dep into module name -> file. See procmaps.h for what is kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/procmaps.h"
#include "symbolize/util.h"
#include "tools/lib/array.h"
#include "tools/lib/sorted.h"

/* ---- one line ---------------------------------------------------------- */

/* At least one digit in base 16 (or 10), no overflow; advances *p. */
static int parse_num(const char **p, unsigned int base, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int d;

	if (base == 16)
		d = hex_digit(*s);
	else
		d = (*s >= '0' && *s <= '9') ? *s - '0' : -1;
	if (d < 0)
		return -EINVAL;
	do {
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			return -EINVAL;
		v = v * base + (uint64_t)d;
		s++;
		if (base == 16)
			d = hex_digit(*s);
		else
			d = (*s >= '0' && *s <= '9') ? *s - '0' : -1;
	} while (d >= 0);
	*p = s;
	*out = v;
	return 0;
}

static int expect(const char **p, char c)
{
	if (**p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

/* Anonymous memory under a bracketed name: kept as "//anon" when executable. */
static bool is_anon_pseudo(const char *path)
{
	return !strcmp(path, "[heap]") || !strncmp(path, "[stack", 6) ||
	       !strncmp(path, "[anon:", 6) || !strncmp(path, "[anon_shmem:", 12);
}

const char *procmaps_kept_name(const char *name, uint32_t prot, unsigned int flags)
{
	if (!(prot & PROT_EXEC)) {
		/* Data of a file (PROCMAPS_DATA): "/..." or "/... (deleted)". */
		if (!(flags & PROCMAPS_DATA) || *name != '/' || !(prot & PROT_READ))
			return NULL;
		return name;
	}
	if (*name == '\0' || !strcmp(name, PROCMAPS_ANON_NAME) || is_anon_pseudo(name))
		return PROCMAPS_ANON_NAME;
	if (*name == '[' && strcmp(name, "[vdso]"))
		return NULL;	/* [vsyscall], [uprobes], ...: nothing perf can read */
	return name;
}

static int parse_line(const char *line, unsigned int flags, struct procmaps_entry *e)
{
	const char *p = line;
	uint64_t maj, min;

	memset(e, 0, sizeof(*e));
	if (parse_num(&p, 16, &e->start) || expect(&p, '-') ||
	    parse_num(&p, 16, &e->end) || expect(&p, ' '))
		return -EINVAL;
	if (e->end <= e->start)
		return -EINVAL;

	/* "rwxp": each position is its letter or '-', the last is p or s. */
	if ((p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') ||
	    (p[2] != 'x' && p[2] != '-') || (p[3] != 'p' && p[3] != 's'))
		return -EINVAL;
	e->prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
		  (p[2] == 'x' ? PROT_EXEC : 0);
	e->flags = p[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	p += 4;

	if (expect(&p, ' ') || parse_num(&p, 16, &e->pgoff) || expect(&p, ' ') ||
	    parse_num(&p, 16, &maj) || expect(&p, ':') || parse_num(&p, 16, &min) ||
	    expect(&p, ' ') || parse_num(&p, 10, &e->ino))
		return -EINVAL;
	if (maj > UINT32_MAX || min > UINT32_MAX)
		return -EINVAL;
	e->maj = (uint32_t)maj;
	e->min = (uint32_t)min;

	/* The path starts after the padding; everything up to the end is its. */
	if (*p != '\0' && *p != ' ')
		return -EINVAL;
	while (*p == ' ')
		p++;

	e->path = procmaps_kept_name(p, e->prot, flags);
	return e->path != NULL;
}

int procmaps_parse_line(const char *line, struct procmaps_entry *e)
{
	return parse_line(line, 0, e);
}

/* ---- a whole file ------------------------------------------------------- */

void procmaps_release(struct procmaps *m)
{
	if (!m)
		return;
	free(m->entries);
	free(m->strings);
	memset(m, 0, sizeof(*m));
}

static int cmp_entry_start(const void *a, const void *b)
{
	const struct procmaps_entry *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Parse text (len bytes in a buffer of at least len + 1 bytes) that becomes
 * out->strings: lines are cut in place, paths point into it.
 */
static int parse_owned(char *text, size_t len, unsigned int flags, struct procmaps *out)
{
	struct procmaps_entry *v = NULL, e;
	size_t nr = 0, cap = 0, pos = 0, i, kept;
	bool sorted = true;

	memset(out, 0, sizeof(*out));
	text[len] = '\0';
	while (pos < len) {
		char *nl = memchr(text + pos, '\n', len - pos);

		if (!nl)
			break;	/* cut short: the process exited mid-read */
		*nl = '\0';
		if (parse_line(text + pos, flags, &e) == 1) {
			if (ARRAY_RESERVE(v, cap, nr + 1, 32)) {
				free(v);
				free(text);
				return -ENOMEM;
			}
			if (nr && e.start < v[nr - 1].start)
				sorted = false;
			v[nr++] = e;
		}
		pos = (size_t)(nl - text) + 1;
	}

	/* The kernel prints them sorted and disjoint; hand-made files may not be. */
	if (!sorted)
		qsort(v, nr, sizeof(*v), cmp_entry_start);
	for (i = 0, kept = 0; i < nr; i++) {
		if (kept && v[i].start < v[kept - 1].end)
			continue;
		v[kept++] = v[i];
	}

	out->entries = v;
	out->nr = kept;
	out->strings = text;
	return 0;
}

int procmaps_parse(const char *text, size_t len, struct procmaps *out)
{
	char *copy = malloc(len + 1);

	memset(out, 0, sizeof(*out));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	return parse_owned(copy, len, 0, out);
}

/* A maps file is some KiB: read it from there, not from read_whole_fd()'s 1 MiB. */
#define MAPS_FIRST_READ 16384

int procmaps_read(const char *proc_root, uint32_t pid, unsigned int flags, struct procmaps *out)
{
	char path[PATH_MAX], *text;
	size_t len;
	int fd, err;

	memset(out, 0, sizeof(*out));
	if (snprintf(path, sizeof(path), "%s/%u/maps", proc_root ? proc_root : "/proc", pid) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = read_whole_fd_sized(fd, MAPS_FIRST_READ, &text, &len);
	close(fd);
	if (err)
		return err;
	return parse_owned(text, len, flags, out);
}

/* ---- modules.dep --------------------------------------------------------- */

struct kmod_path {
	char *name;		/* normalized: '-' -> '_' */
	char *path;		/* absolute */
	size_t line;		/* first line wins among duplicates */
};

struct kmod_paths {
	struct kmod_path *v;
	size_t nr;
};

static void normalize_name(char *s)
{
	for (; *s; s++)
		if (*s == '-')
			*s = '_';
}

static int cmp_kmod(const void *a, const void *b)
{
	const struct kmod_path *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* "kernel/fs/xfs/xfs.ko.xz" -> "xfs"; NULL if it does not name a module. */
static char *module_name_of(const char *file, size_t len)
{
	const char *base = file, *ext;
	size_t i;
	char *name;

	for (i = 0; i < len; i++)
		if (file[i] == '/')
			base = file + i + 1;
	ext = NULL;
	for (const char *q = base; q + 3 <= file + len; q++) {
		if (!memcmp(q, ".ko", 3) && (q + 3 == file + len || q[3] == '.')) {
			ext = q;
			break;
		}
	}
	if (!ext || ext == base)
		return NULL;
	name = strndup(base, (size_t)(ext - base));
	if (name)
		normalize_name(name);
	return name;
}

static int kmod_add(struct kmod_paths *p, size_t *cap, const char *dir, const char *file,
		    size_t len, size_t line)
{
	struct kmod_path *k;
	char *name = module_name_of(file, len);
	int n;

	if (!name)
		return 0;
	if (ARRAY_RESERVE(p->v, *cap, p->nr + 1, 256)) {
		free(name);
		return -ENOMEM;
	}
	k = &p->v[p->nr];
	k->name = name;
	k->line = line;
	if (file[0] == '/')
		n = asprintf(&k->path, "%.*s", (int)len, file);
	else
		n = asprintf(&k->path, "%s/%.*s", dir, (int)len, file);
	if (n < 0) {
		free(name);
		return -ENOMEM;
	}
	p->nr++;
	return 0;
}

int kmod_paths_load(const char *modules_dir, struct kmod_paths **out)
{
	struct kmod_paths *p;
	char path[PATH_MAX], *text = NULL;
	size_t len = 0, pos = 0, cap = 0, line = 0;
	int fd, err = 0;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (snprintf(path, sizeof(path), "%s/modules.dep", modules_dir) >= (int)sizeof(path)) {
		free(p);
		return -ENAMETOOLONG;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*out = p;	/* no modules.dep: every lookup fails */
		return 0;
	}
	err = read_whole_fd_sized(fd, MAPS_FIRST_READ, &text, &len);
	close(fd);
	if (err) {
		free(p);
		return err;
	}
	while (pos < len && !err) {
		char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		char *colon = memchr(text + pos, ':', end - pos);

		if (colon)
			err = kmod_add(p, &cap, modules_dir, text + pos,
				       (size_t)(colon - (text + pos)), line);
		pos = end + 1;
		line++;
	}
	free(text);
	if (err) {
		kmod_paths_free(p);
		return err;
	}
	qsort(p->v, p->nr, sizeof(*p->v), cmp_kmod);
	*out = p;
	return 0;
}

const char *kmod_paths_find(const struct kmod_paths *p, const char *name)
{
	char key[256];
	size_t lo;

	if (!p || snprintf(key, sizeof(key), "%s", name) >= (int)sizeof(key))
		return NULL;
	normalize_name(key);
	/* Lower bound: the first entry with this name is the one modules.dep lists first. */
	lo = SORTED_PARTITION(p->nr, i, strcmp(p->v[i].name, key) < 0);
	if (lo < p->nr && !strcmp(p->v[lo].name, key))
		return p->v[lo].path;
	return NULL;
}

void kmod_paths_free(struct kmod_paths *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nr; i++) {
		free(p->v[i].name);
		free(p->v[i].path);
	}
	free(p->v);
	free(p);
}
