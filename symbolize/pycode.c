// SPDX-License-Identifier: MIT
/* pycode.c - Python code objects of another process to names and lines (pycode.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "symbolize/cache.h"
#include "symbolize/pycode.h"
#include "tools/lib/opts.h"

/* ---- line tables ---- */

/*
 * A line table as address ranges: each range [start, end) of the bytecode
 * and its line, in table order, decoded one at a time (a lookup stops at
 * its address, a span goes to the end).
 */
struct line_iter {
	enum py_lines_kind kind;
	const uint8_t *t;
	size_t len, pos;
	int64_t start, line;
	bool done;
};

struct line_range {
	int64_t start, end;	/* [start, end) of the bytecode, in bytes */
	int64_t line;
	bool has_line;		/* false: an artificial instruction, no line */
};

/* The codes of a location table entry (3.11's Include/cpython/code.h _PyCodeLocationInfoKind). */
enum {
	LOC_ONE_LINE1 = 11,	/* line + 1, then two column bytes */
	LOC_ONE_LINE2 = 12,	/* line + 2, likewise */
	LOC_NO_COLUMNS = 13,	/* a signed varint line delta */
	LOC_LONG = 14,		/* a signed varint line delta, then three varints */
	LOC_NONE = 15,		/* no location: an artificial instruction */
	/* 0-9: the same line, columns in the next byte; 10: the same line, two column bytes */
};

/*
 * A varint of the location table at t[*pos]: 6 bits a byte, least
 * significant first, bit 6 set on every byte but the last. Bit 7 starts an
 * entry, so a byte with it cannot be inside a varint.
 */
static int read_varint(const uint8_t *t, size_t len, size_t *pos, uint32_t *out)
{
	uint32_t v = 0;

	for (unsigned int shift = 0;; shift += 6) {
		uint8_t b;

		if (*pos >= len || shift > 30)
			return -EINVAL;
		b = t[(*pos)++];
		if (b & 0x80)
			return -EINVAL;
		if (shift == 30 && (b & 63) > 3)
			return -EINVAL;	/* past 32 bits */
		v |= (uint32_t)(b & 63) << shift;
		if (!(b & 64))
			break;
	}
	*out = v;
	return 0;
}

/*
 * co_lnotab (3.8, 3.9): pairs of (bytecode delta, signed line delta); the
 * line of an instruction is the first line plus the line deltas of every
 * pair whose address is at or before it (3.9's PyCode_Addr2Line()): the
 * ranges lie between the pairs' addresses, the last one open-ended. An odd
 * last byte is no pair and is ignored, as CPython does.
 */
static int lnotab_next(struct line_iter *it, struct line_range *r)
{
	*r = (struct line_range){ .start = it->start, .line = it->line, .has_line = true };
	if (it->pos + 1 < it->len) {
		r->end = it->start + it->t[it->pos];
		it->line += (int8_t)it->t[it->pos + 1];
		it->start = r->end;
		it->pos += 2;
		return 1;
	}
	it->done = true;
	r->end = INT64_MAX;
	return 1;
}

/*
 * co_linetable of 3.10 (PEP 626): pairs of (bytecode delta, signed line
 * delta), each the range of bytes [start, start + delta) on the line so
 * far; a line delta of -128 says the range has no line and leaves the line
 * where it was. Empty ranges only move the line (_PyCode_CheckLineNumber()).
 */
static int linetable_next(struct line_iter *it, struct line_range *r)
{
	bool no_line;

	if (it->pos + 1 >= it->len)
		return 0;
	no_line = (int8_t)it->t[it->pos + 1] == -128;
	if (!no_line)
		it->line += (int8_t)it->t[it->pos + 1];
	*r = (struct line_range){ .start = it->start, .end = it->start + it->t[it->pos],
				  .line = it->line, .has_line = !no_line };
	it->start = r->end;
	it->pos += 2;
	return 1;
}

/*
 * The location table of 3.11 on: entries of one to eight code units each,
 * a first byte 1CCCCLLL (code C, L + 1 units) and what the code says
 * follows; only the line delta matters here (3.11's Objects/lnotab_notes.txt).
 */
static int locations_next(struct line_iter *it, struct line_range *r)
{
	const uint8_t *t = it->t;
	uint8_t first;
	unsigned int code;

	if (it->pos >= it->len)
		return 0;
	first = t[it->pos++];
	code = first >> 3 & 15;
	if (!(first & 0x80))
		return -EINVAL;	/* not the start of an entry */
	if (code == LOC_NO_COLUMNS || code == LOC_LONG) {
		uint32_t u;

		if (read_varint(t, it->len, &it->pos, &u))
			return -EINVAL;
		/* Signed: the sign in bit 0. */
		it->line += u & 1 ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	} else if (code == LOC_ONE_LINE1 || code == LOC_ONE_LINE2) {
		it->line += code - 10;
	}
	*r = (struct line_range){ .start = it->start, .end = it->start + 2 * ((first & 7) + 1),
				  .line = it->line, .has_line = code != LOC_NONE };
	it->start = r->end;
	/* The columns: whatever follows up to the next entry. */
	while (it->pos < it->len && !(t[it->pos] & 0x80))
		it->pos++;
	return 1;
}

/* The next range of the table: 1, 0 past its end, -EINVAL where it is malformed. */
static int line_next(struct line_iter *it, struct line_range *r)
{
	if (it->done)
		return 0;
	switch (it->kind) {
	case PY_LINES_LNOTAB:
		return lnotab_next(it, r);
	case PY_LINES_LINETABLE:
		return linetable_next(it, r);
	case PY_LINES_LOCATIONS:
		return locations_next(it, r);
	}
	return -EINVAL;
}

int py_code_line(enum py_lines_kind kind, const uint8_t *table, size_t len, int firstlineno,
		 int64_t addr, int *line)
{
	struct line_iter it = { .kind = kind, .t = table, .len = len, .line = firstlineno };
	struct line_range r;
	int rc;

	/* PyCode_Addr2Line(): no instruction started yet is the function's first line. */
	if (addr < 0) {
		*line = firstlineno;
		return 0;
	}
	while ((rc = line_next(&it, &r)) > 0) {
		if (addr < r.start || addr >= r.end)
			continue;
		if (!r.has_line)
			return -ENOENT;
		/* A table no compiler wrote: 64 Ki pairs of 127 stay far below. */
		if (r.line < INT32_MIN || r.line > INT32_MAX)
			return -EINVAL;
		*line = (int)r.line;
		return 0;
	}
	return rc < 0 ? rc : -ENOENT;
}

int py_code_line_span(enum py_lines_kind kind, const uint8_t *table, size_t len,
		      int firstlineno, int *lo, int *hi)
{
	struct line_iter it = { .kind = kind, .t = table, .len = len, .line = firstlineno };
	int64_t min = INT64_MAX, max = INT64_MIN;
	struct line_range r;
	int rc;

	while ((rc = line_next(&it, &r)) > 0) {
		/* Empty ranges only carry the line across a long jump: no instruction is there. */
		if (!r.has_line || r.end <= r.start || r.line <= 0 || r.line > INT32_MAX)
			continue;
		if (r.line < min)
			min = r.line;
		if (r.line > max)
			max = r.line;
	}
	if (rc < 0)
		return rc;
	if (min > max)
		return -ENOENT;
	*lo = (int)min;
	*hi = (int)max;
	return 0;
}

/* ---- str ---- */

int py_str_to_utf8(unsigned int kind, bool ascii, const void *chars, size_t n, char *out,
		   size_t out_size, size_t *out_len)
{
	const uint8_t *p = chars;
	size_t o = 0;

	if ((kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1) || !out_size)
		return out_size ? -EILSEQ : -ENOSPC;
	for (size_t i = 0; i < n; i++) {
		uint32_t c;
		size_t need;

		if (kind == 1) {
			c = p[i];
		} else if (kind == 2) {
			uint16_t u;

			memcpy(&u, p + 2 * i, 2);
			c = u;
		} else {
			memcpy(&c, p + 4 * i, 4);
		}
		if ((ascii && c >= 0x80) || c > 0x10ffff)
			return -EILSEQ;
		/* A lone surrogate has no UTF-8; NUL would end the C string. */
		if ((c >= 0xd800 && c <= 0xdfff) || c == 0)
			c = 0xfffd;
		need = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
		if (out_size - 1 - o < need)
			return -ENOSPC;
		switch (need) {
		case 1:
			out[o++] = (char)c;
			break;
		case 2:
			out[o++] = (char)(0xc0 | c >> 6);
			out[o++] = (char)(0x80 | (c & 0x3f));
			break;
		case 3:
			out[o++] = (char)(0xe0 | c >> 12);
			out[o++] = (char)(0x80 | (c >> 6 & 0x3f));
			out[o++] = (char)(0x80 | (c & 0x3f));
			break;
		default:
			out[o++] = (char)(0xf0 | c >> 18);
			out[o++] = (char)(0x80 | (c >> 12 & 0x3f));
			out[o++] = (char)(0x80 | (c >> 6 & 0x3f));
			out[o++] = (char)(0x80 | (c & 0x3f));
			break;
		}
	}
	out[o] = '\0';
	*out_len = o;
	return 0;
}

/* ---- the reader ---- */

#define DEFAULT_MAX_ENTRIES 4096
/* No offset of a code object's or a str's fixed fields is near this: a bigger one is no layout. */
#define HEAD_MAX 1024

/* What a code object never changes while it lives: compared on every cache hit. */
struct code_fixed {
	uint64_t type, name, qualname, filename, lines, size;
	int64_t firstlineno;
};

struct code_entry {
	struct code_fixed fixed;
	char *qualname, *filename;
	uint8_t *lines;		/* NULL when the table could not be read */
	size_t lines_len;
	int line_lo, line_hi;	/* py_code_line_span() of it; 0 when unknown */
};

struct py_code_reader {
	pid_t pid;
	/*
	 * The process was found gone (ESRCH): its pid is never read again
	 * (another process may get it), the cache alone answers.
	 */
	bool gone;
	struct py_layout l;
	uint64_t code_type;
	size_t head_len;	/* the bytes of a code object read to get its fixed fields */
	size_t max_entries;
	struct cache cache;	/* code object address -> struct code_entry */
	/* The addresses in the order they were cached, to drop the oldest. */
	uint64_t *ring;
	size_t ring_next, ring_used;
	struct py_code_stats stats;
};

/*
 * len bytes at addr in the process, whole or not at all: a read cut short
 * is memory that ended (unmapped) under the object.
 */
static int read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n;

	if (!len)
		return 0;
	if (addr + len < addr)
		return -EFAULT;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	/* ESRCH: the process is gone; EPERM: not ours to read; the rest is memory. */
	if (n < 0)
		return errno == ESRCH || errno == EPERM || errno == ENOMEM ? -errno : -EFAULT;
	return (size_t)n == len ? 0 : -EFAULT;
}

static uint64_t get_u64(const uint8_t *buf, uint32_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

static bool offset_ok(uint32_t off, uint32_t width)
{
	return off != PY_LAYOUT_NONE && off + width <= HEAD_MAX;
}

/* Grow *len to cover a field of width at off. */
static void cover(size_t *len, uint32_t off, uint32_t width)
{
	if (off != PY_LAYOUT_NONE && off + width > *len)
		*len = off + width;
}

int py_code_reader_new(pid_t pid, const struct py_layout *layout, uint64_t code_type,
		       const struct py_code_opts *opts, struct py_code_reader **out)
{
	const struct py_layout *l = layout;
	struct py_code_opts o;
	struct py_code_reader *r;
	bool ok;
	int err;

	err = OPTS_COPY(&o, py_code_opts, opts);
	if (err)
		return err;
	ok = code_type && offset_ok(l->object_type, 8) && offset_ok(l->var_size, 8) &&
	     offset_ok(l->code_name, 8) && offset_ok(l->code_filename, 8) &&
	     offset_ok(l->code_firstlineno, 4) && offset_ok(l->code_lines, 8) &&
	     offset_ok(l->bytes_data, 0) && offset_ok(l->unicode_length, 8) &&
	     offset_ok(l->unicode_state, 4) && offset_ok(l->unicode_ascii_data, 0) &&
	     offset_ok(l->unicode_compact_data, 0) &&
	     l->unicode_ascii_data >= l->unicode_state + 4 &&
	     l->unicode_ascii_data >= l->unicode_length + 8 &&
	     l->bytes_data >= l->var_size + 8;
	/* 3.11 on: the qualified name, and the bytecode the instruction pointer points into. */
	if (l->code_qualname != PY_LAYOUT_NONE || l->instr_kind == PY_INSTR_CODE_PTR)
		ok = ok && offset_ok(l->code_qualname, 8) && offset_ok(l->code_adaptive, 0);
	if (!ok)
		return -EINVAL;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->pid = pid;
	r->l = *l;
	r->code_type = code_type;
	r->max_entries = o.max_entries ? o.max_entries : DEFAULT_MAX_ENTRIES;
	r->ring = calloc(r->max_entries, sizeof(*r->ring));
	if (!r->ring) {
		free(r);
		return -ENOMEM;
	}
	cover(&r->head_len, l->object_type, 8);
	cover(&r->head_len, l->var_size, 8);
	cover(&r->head_len, l->code_name, 8);
	cover(&r->head_len, l->code_qualname, 8);
	cover(&r->head_len, l->code_filename, 8);
	cover(&r->head_len, l->code_firstlineno, 4);
	cover(&r->head_len, l->code_lines, 8);
	*out = r;
	return 0;
}

static void free_entry(void *value)
{
	struct code_entry *e = value;

	if (!e)
		return;
	free(e->qualname);
	free(e->filename);
	free(e->lines);
	free(e);
}

void py_code_reader_free(struct py_code_reader *r)
{
	if (!r)
		return;
	cache_clear(&r->cache, free_entry);
	free(r->ring);
	free(r);
}

void py_code_stats(const struct py_code_reader *r, struct py_code_stats *out)
{
	*out = r->stats;
}

/* The fixed fields of the code object whose first head_len bytes are head. */
static void parse_fixed(const struct py_code_reader *r, const uint8_t *head, struct code_fixed *f)
{
	const struct py_layout *l = &r->l;
	int32_t first;

	memset(f, 0, sizeof(*f));
	f->type = get_u64(head, l->object_type);
	f->size = get_u64(head, l->var_size);
	f->name = get_u64(head, l->code_name);
	if (l->code_qualname != PY_LAYOUT_NONE)
		f->qualname = get_u64(head, l->code_qualname);
	f->filename = get_u64(head, l->code_filename);
	f->lines = get_u64(head, l->code_lines);
	memcpy(&first, head + l->code_firstlineno, sizeof(first));
	f->firstlineno = first;
}

/*
 * The str at addr as a new UTF-8 string. Names and file names are compact
 * (their characters follow the object; interned and decoded strings always
 * are): anything else is memory that is no such str. The header is read
 * first and only as far as PyASCIIObject, which every str has, so a short
 * string at the end of a mapping is read whole and no further.
 */
static int read_str(const struct py_code_reader *r, uint64_t addr, char **out)
{
	const struct py_layout *l = &r->l;
	uint8_t head[HEAD_MAX];
	uint32_t state, kind;
	int64_t n;
	bool ascii;
	uint8_t *chars;
	char *utf8;
	size_t len;
	int err;

	err = read_mem(r->pid, addr, head, l->unicode_ascii_data);
	if (err)
		return err;
	memcpy(&state, head + l->unicode_state, sizeof(state));
	memcpy(&n, head + l->unicode_length, sizeof(n));
	kind = state >> PY_UNICODE_KIND_SHIFT & PY_UNICODE_KIND_MASK;
	ascii = state >> PY_UNICODE_ASCII_BIT & 1;
	if (!(state >> PY_UNICODE_COMPACT_BIT & 1) || (kind != 1 && kind != 2 && kind != 4) ||
	    (ascii && kind != 1) || n < 0)
		return -EILSEQ;
	if (n > PY_STR_MAX_CHARS)
		return -E2BIG;
	chars = malloc((size_t)n * kind + 1);
	utf8 = malloc((size_t)n * 4 + 1);
	if (!chars || !utf8) {
		err = -ENOMEM;
		goto out;
	}
	err = read_mem(r->pid, addr + (ascii ? l->unicode_ascii_data : l->unicode_compact_data),
		       chars, (size_t)n * kind);
	if (!err)
		err = py_str_to_utf8(kind, ascii, chars, (size_t)n, utf8, (size_t)n * 4 + 1, &len);
	if (!err) {
		*out = utf8;
		utf8 = NULL;
	}
out:
	free(chars);
	free(utf8);
	return err;
}

/* The bytes object at addr, when it is no bigger than PY_LINES_MAX_BYTES. */
static int read_bytes(const struct py_code_reader *r, uint64_t addr, uint8_t **out, size_t *len)
{
	uint8_t head[HEAD_MAX];
	int64_t n;
	int err;

	err = read_mem(r->pid, addr, head, r->l.bytes_data);
	if (err)
		return err;
	memcpy(&n, head + r->l.var_size, sizeof(n));
	if (n < 0 || n > PY_LINES_MAX_BYTES)
		return -E2BIG;
	*out = malloc(n ? (size_t)n : 1);
	if (!*out)
		return -ENOMEM;
	err = read_mem(r->pid, addr + r->l.bytes_data, *out, (size_t)n);
	if (err) {
		free(*out);
		*out = NULL;
		return err;
	}
	*len = (size_t)n;
	return 0;
}

/* Read what the code object with fixed fields f says, into a new entry. */
static int read_entry(const struct py_code_reader *r, const struct code_fixed *f,
		      struct code_entry **out)
{
	struct code_entry *e = calloc(1, sizeof(*e));
	int err;

	if (!e)
		return -ENOMEM;
	e->fixed = *f;
	err = read_str(r, r->l.code_qualname != PY_LAYOUT_NONE ? f->qualname : f->name,
		       &e->qualname);
	if (!err)
		err = read_str(r, f->filename, &e->filename);
	if (err) {
		free_entry(e);
		return err;
	}
	/* Without its line table the function is still named. */
	if (read_bytes(r, f->lines, &e->lines, &e->lines_len))
		e->lines = NULL;
	if (!e->lines || py_code_line_span(r->l.lines_kind, e->lines, e->lines_len,
					   (int)f->firstlineno, &e->line_lo, &e->line_hi))
		e->line_lo = e->line_hi = 0;
	*out = e;
	return 0;
}

/* Cache e for code, dropping the oldest entry when the cache is full. */
static int cache_put(struct py_code_reader *r, uint64_t code, struct code_entry *e)
{
	struct cache_entry *ce;

	if (r->ring_used == r->max_entries) {
		uint64_t old = r->ring[r->ring_next];

		/* Gone already when it was replaced and could not be read again. */
		ce = cache_get(&r->cache, &old, sizeof(old));
		if (ce) {
			free_entry(ce->value);
			cache_del(&r->cache, ce);
			r->stats.evicted++;
		}
		r->ring_used--;
	}
	ce = cache_add(&r->cache, &code, sizeof(code));
	if (!ce)
		return -ENOMEM;
	ce->value = e;
	r->ring[r->ring_next] = code;
	r->ring_next = (r->ring_next + 1) % r->max_entries;
	r->ring_used++;
	return 0;
}

/* The byte offset in the bytecode of instruction instr (pylayout.h's py_instr_kind); < 0: none yet. */
static int64_t instr_offset(const struct py_code_reader *r, uint64_t code, uint64_t instr)
{
	switch (r->l.instr_kind) {
	case PY_INSTR_LASTI_BYTES:
		return (int32_t)instr;
	case PY_INSTR_LASTI_UNITS:
		return (int64_t)(int32_t)instr * 2;
	case PY_INSTR_CODE_PTR:
		break;
	}
	code += r->l.code_adaptive;
	/* Before the bytecode: the frame has not started an instruction. */
	return instr < code ? -1 : instr - code > INT64_MAX ? INT64_MAX : (int64_t)(instr - code);
}

/* The line of instruction instr of the code object e, or 0. */
static int line_of(struct py_code_reader *r, uint64_t code, const struct code_entry *e,
		   uint64_t instr)
{
	int64_t addr = instr_offset(r, code, instr);
	int line;

	/* 3.11 on, the code object's size is its bytecode's, in code units. */
	if (r->l.instr_kind == PY_INSTR_CODE_PTR && addr >= 0 &&
	    (e->fixed.size > INT64_MAX / 2 || addr >= (int64_t)e->fixed.size * 2))
		goto none;
	if (!e->lines || py_code_line(r->l.lines_kind, e->lines, e->lines_len,
				      (int)e->fixed.firstlineno, addr, &line) || line <= 0)
		goto none;
	return line;
none:
	r->stats.no_line++;
	return 0;
}

static enum py_code_err err_kind(int err)
{
	switch (err) {
	case -EINVAL:
		return PY_CODE_ERR_NOT_CODE;
	case -EILSEQ:
	case -E2BIG:
		return PY_CODE_ERR_STRING;
	case -ENOMEM:
		return PY_CODE_ERR_NOMEM;
	default:
		return PY_CODE_ERR_READ;
	}
}

/* What e (cached for code) says of instruction instr, into *out. */
static void name_of(struct py_code_reader *r, uint64_t code, const struct code_entry *e,
		    uint64_t instr, struct py_code_name *out)
{
	out->qualname = e->qualname;
	out->filename = e->filename;
	out->firstlineno = (int)e->fixed.firstlineno;
	out->line = line_of(r, code, e, instr);
	out->line_lo = e->line_lo;
	out->line_hi = e->line_hi;
}

static int name_code(struct py_code_reader *r, uint64_t code, uint64_t instr,
		     struct py_code_name *out)
{
	uint8_t head[HEAD_MAX];
	struct code_fixed f;
	struct cache_entry *ce;
	struct code_entry *e;
	int err;

	/* Checked on every call, cached or not: the address may hold another object by now. */
	err = r->gone ? -ESRCH : read_mem(r->pid, code, head, r->head_len);
	r->gone |= err == -ESRCH;
	if (err)
		return err;
	parse_fixed(r, head, &f);
	if (f.type != r->code_type)
		return -EINVAL;
	ce = cache_get(&r->cache, &code, sizeof(code));
	if (ce && !memcmp(&((struct code_entry *)ce->value)->fixed, &f, sizeof(f))) {
		r->stats.hits++;
		e = ce->value;
	} else {
		if (ce) {
			r->stats.changed++;
			free_entry(ce->value);
			cache_del(&r->cache, ce);
		}
		r->stats.reads++;
		err = read_entry(r, &f, &e);
		if (err)
			return err;
		err = cache_put(r, code, e);
		if (err) {
			free_entry(e);
			return err;
		}
	}
	name_of(r, code, e, instr, out);
	return 0;
}

int py_code_name(struct py_code_reader *r, uint64_t code, uint64_t instr,
		 struct py_code_name *out)
{
	int err = name_code(r, code, instr, out);

	if (err)
		r->stats.errors[err_kind(err)]++;
	return err;
}

int py_code_name_last(struct py_code_reader *r, uint64_t code, uint64_t instr,
		      struct py_code_name *out)
{
	struct cache_entry *ce = cache_get(&r->cache, &code, sizeof(code));

	if (!ce)
		return -ENOENT;
	r->stats.last++;
	name_of(r, code, ce->value, instr, out);
	return 0;
}
