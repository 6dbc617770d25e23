// SPDX-License-Identifier: MIT
/*
 * fuzz_pycode.c - libFuzzer harness for naming Python code objects from
 * another process's memory (symbolize/pycode.c): the three line table
 * formats and the str decoder over hostile bytes, then the whole reader
 * over a code object made of the input, read through process_vm_readv
 * from this process as from any other.
 *
 * The input: one control byte (line table kind, str kind and ASCII bit,
 * CPython minor version), an int32 instruction offset, an int32 first line,
 * then the bytes. What is accepted must be what a caller can print: a line
 * from a table, UTF-8 that is well-formed and ends where it says.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/pycode.h"
#include "fuzz.h"

/* Well-formed UTF-8 (no overlong form, no surrogate, nothing past U+10FFFF), no NUL. */
static void check_utf8(const char *s, size_t len)
{
	const uint8_t *p = (const uint8_t *)s;

	if (strlen(s) != len)
		abort();
	for (size_t i = 0; i < len;) {
		uint32_t c = p[i];
		size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
			   (c & 0xf8) == 0xf0 ? 4 : 0;

		if (!n || i + n > len)
			abort();
		c = n == 1 ? c : n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
		for (size_t k = 1; k < n; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				abort();
			c = c << 6 | (p[i + k] & 0x3f);
		}
		if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
		    c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			abort();
		i += n;
	}
}

static void fuzz_lines(enum py_lines_kind kind, const uint8_t *t, size_t len, int first,
		       int64_t addr)
{
	int line, err;

	err = py_code_line(kind, t, len, first, addr, &line);
	if (err && err != -ENOENT && err != -EINVAL)
		abort();
	/* Before the first instruction: the first line, whatever the table. */
	if (py_code_line(kind, t, len, first, -1, &line) || line != first)
		abort();
	/* A walk over every instruction the table could cover. */
	for (int64_t a = 0; a < 2 * (int64_t)len + 4 && a < 1024; a += 2) {
		err = py_code_line(kind, t, len, first, a, &line);
		if (err && err != -ENOENT && err != -EINVAL)
			abort();
		/* Every address has a line there (only a line past int's range is refused). */
		if (kind == PY_LINES_LNOTAB && err == -ENOENT)
			abort();
	}
}

static void fuzz_str(unsigned int kind, bool ascii, const uint8_t *chars, size_t size,
		     size_t out_size)
{
	size_t n = kind >= 1 && kind <= 4 ? size / kind : size, len;
	/* Exactly out_size bytes: AddressSanitizer sees one written past it. */
	char *out = malloc(out_size ? out_size : 1);
	int err;

	if (!out)
		return;
	err = py_str_to_utf8(kind, ascii, chars, n, out, out_size, &len);
	if (err && err != -EILSEQ && err != -ENOSPC)
		abort();
	if (!err)
		check_utf8(out, len);
	if (!err && len > 4 * n)
		abort();
	if (err == -ENOSPC && out_size >= 4 * n + 1)
		abort();	/* the contract's bound was enough */
	free(out);
}

/* A readable area that ends at an unreadable page: reads past the input fault. */
static uint8_t *area;
static size_t area_size;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	long page = sysconf(_SC_PAGESIZE);

	(void)argc;
	(void)argv;
	area_size = 1 << 20;
	area = mmap(NULL, area_size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	if (area == MAP_FAILED || mprotect(area + area_size, page, PROT_NONE))
		abort();
	return 0;
}

/*
 * The bytes as a code object at the start of a copy that ends at the
 * unreadable page, its pointers turned into offsets inside the copy (a
 * pointer elsewhere would read the fuzzer's own memory, and results would
 * depend on it).
 */
static void fuzz_reader(unsigned int minor, bool is_code, uint64_t instr, const uint8_t *data,
			size_t size)
{
	const struct py_layout *l = py_layout_table(3, minor);
	const uint32_t ptrs[] = { l->code_name, l->code_qualname, l->code_filename, l->code_lines };
	struct py_code_opts opts = { .sz = sizeof(opts), .max_entries = 2 };
	struct py_code_reader *r;
	struct py_code_name n;
	uint8_t *obj;
	int err;

	if (size < 256 || size > area_size)
		return;
	obj = area + area_size - size;
	memcpy(obj, data, size);
	for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++) {
		uint64_t v;

		if (ptrs[i] == PY_LAYOUT_NONE)
			continue;
		memcpy(&v, obj + ptrs[i], sizeof(v));
		v = (uintptr_t)obj + v % size;
		memcpy(obj + ptrs[i], &v, sizeof(v));
	}
	if (is_code) {
		uint64_t type = (uintptr_t)area;

		memcpy(obj + l->object_type, &type, sizeof(type));
	}
	if (l->instr_kind == PY_INSTR_CODE_PTR)
		instr += (uintptr_t)obj;
	if (py_code_reader_new(getpid(), l, (uintptr_t)area, &opts, &r))
		abort();
	/* Twice: the second time from the cache, which must say the same. */
	for (int pass = 0; pass < 2; pass++) {
		err = py_code_name(r, (uintptr_t)obj, instr, &n);
		if (err && err != -EFAULT && err != -EINVAL && err != -EILSEQ && err != -E2BIG &&
		    err != -ENOMEM)
			abort();
		if (!err) {
			check_utf8(n.qualname, strlen(n.qualname));
			check_utf8(n.filename, strlen(n.filename));
		}
	}
	py_code_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int32_t addr, first;
	uint8_t ctl;

	if (size < 9)
		return 0;
	ctl = data[0];
	memcpy(&addr, data + 1, sizeof(addr));
	memcpy(&first, data + 5, sizeof(first));
	data += 9;
	size -= 9;
	fuzz_lines((enum py_lines_kind)(ctl % 3), data, size, first, addr);
	/* Kinds 0 to 7: 3, 5, 6, 7 and 0 are none. */
	fuzz_str(ctl >> 2 & 7, ctl >> 5 & 1, data, size, (size_t)(first & 0xffff));
	fuzz_str(ctl >> 2 & 7, ctl >> 5 & 1, data, size, 4 * size + 1);
	fuzz_reader(8 + ((ctl >> 6) ^ (ctl & 3)) % 6, addr & 1, (uint64_t)(int64_t)addr, data, size);
	return 0;
}
