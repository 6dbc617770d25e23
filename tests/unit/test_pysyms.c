// SPDX-License-Identifier: MIT
/*
 * test_pysyms.c - the Python symbol file, read back the way its readers
 * read it: libelf for the layout, symbols and build-id note, libdwfl (as
 * hotspot and bpfrec's symbolizer) for address -> symbol and file:line,
 * libdw's line table for every row; the project's build-id reader and
 * the build-id cache for filing it. Also: equal contents give equal
 * build-ids, different ones different; bounds and nonsense are refused.
 */
#include <criterion/criterion.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/buildid_cache.h"
#include "recorder/pysyms_cache.h"
#include "symbolize/buildid.h"
#include "symbolize/pysyms.h"

static const struct py_symfile_row alpha_rows[] = { { 0, 10 }, { 4, 11 }, { 8, 12 } };
static const struct py_symfile_row beta_rows[] = { { 2, 20 }, { 6, 21 } };
static const struct py_symfile_row gamma_rows[] = { { 0, 30 }, { 0x30, 0 }, { 0x40, 35 } };

/* Three functions, two files; beta's first row is past its start. */
static const struct py_symfile_func funcs[] = {
	{ 0x100, 0x10, "hot_alpha", "/srv/app/app.py", alpha_rows, 3 },
	{ 0x110, 0x10, "Klass.hot_beta", "/srv/app/app.py", beta_rows, 2 },
	{ 0x200, 0x80, "<module>", "lib/other.py", gamma_rows, 3 },
};

static struct py_symfile *three(void)
{
	struct py_symfile *sf;

	cr_assert_eq(py_symfile_new(&sf), 0);
	/* Out of address order on purpose: the writer sorts. */
	cr_assert_eq(py_symfile_add(sf, &funcs[2]), 0);
	cr_assert_eq(py_symfile_add(sf, &funcs[0]), 0);
	cr_assert_eq(py_symfile_add(sf, &funcs[1]), 0);
	return sf;
}

/* Write sf into a fresh memfd (at offset 0 again); the fd. */
static int write_memfd(struct py_symfile *sf, uint8_t id[PY_SYMFILE_BUILD_ID_SIZE])
{
	int fd = memfd_create("test_pysyms", MFD_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_assert_eq(py_symfile_write(sf, NULL, fd, id), 0);
	cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

static Elf_Scn *section(Elf *e, const char *name, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	cr_assert_eq(elf_getshdrstrndx(e, &shstrndx), 0);
	while ((scn = elf_nextscn(e, scn))) {
		cr_assert_not_null(gelf_getshdr(scn, sh));
		if (!strcmp(elf_strptr(e, shstrndx, sh->sh_name), name))
			return scn;
	}
	return NULL;
}

Test(pysyms, elf_layout_symbols_and_note)
{
	struct py_symfile *sf = three();
	uint8_t id[PY_SYMFILE_BUILD_ID_SIZE], read_id[BUILDID_MAX];
	size_t id_size, nph;
	int fd = write_memfd(sf, id);
	GElf_Ehdr eh;
	GElf_Phdr ph;
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf *e;
	struct {
		const char *name;
		uint64_t value, size;
		bool seen;
	} want[] = {
		{ "hot_alpha (app.py)", 0x100, 0x10, false },
		{ "Klass.hot_beta (app.py)", 0x110, 0x10, false },
		{ "<module> (other.py)", 0x200, 0x80, false },
	};

	cr_assert_eq(py_symfile_nr(sf), 3);
	cr_assert_eq(py_symfile_map_len(sf), 0x1000, "end 0x280, a page");
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert_not_null(e);
	cr_assert_not_null(gelf_getehdr(e, &eh));
	cr_assert_eq(eh.e_ident[EI_CLASS], ELFCLASS64);
	cr_assert_eq(eh.e_type, ET_DYN);
	cr_assert_eq(eh.e_machine, EM_X86_64);

	/* One R+X PT_LOAD from offset and vaddr 0 up to the last function's end. */
	cr_assert_eq(elf_getphdrnum(e, &nph), 0);
	cr_assert_eq(nph, 2);
	cr_assert_not_null(gelf_getphdr(e, 0, &ph));
	cr_assert_eq(ph.p_type, PT_LOAD);
	cr_assert_eq(ph.p_offset, 0);
	cr_assert_eq(ph.p_vaddr, 0);
	cr_assert_eq(ph.p_filesz, 0x280);
	cr_assert_eq(ph.p_memsz, 0x280);
	cr_assert_eq(ph.p_flags, PF_R | PF_X);
	cr_assert_not_null(gelf_getphdr(e, 1, &ph));
	cr_assert_eq(ph.p_type, PT_NOTE);

	/* .text: vaddr == file offset, covering the functions. */
	cr_assert_not_null(section(e, ".text", &sh));
	cr_assert_eq(sh.sh_type, SHT_PROGBITS);
	cr_assert_eq(sh.sh_addr, PY_SYMFILE_TEXT_START);
	cr_assert_eq(sh.sh_offset, sh.sh_addr);
	cr_assert_eq(sh.sh_addr + sh.sh_size, 0x280);

	/* The symbols, as perf reads .symtab. */
	scn = section(e, ".symtab", &sh);
	cr_assert_not_null(scn);
	{
		Elf_Data *d = elf_getdata(scn, NULL);

		cr_assert_eq(sh.sh_size / sh.sh_entsize, 4, "null + 3");
		for (size_t i = 1; i < 4; i++) {
			GElf_Sym sym;
			const char *name;

			cr_assert_not_null(gelf_getsym(d, (int)i, &sym));
			cr_assert_eq(GELF_ST_TYPE(sym.st_info), STT_FUNC);
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			for (size_t k = 0; k < 3; k++) {
				if (strcmp(name, want[k].name))
					continue;
				cr_assert_eq(sym.st_value, want[k].value, "%s", name);
				cr_assert_eq(sym.st_size, want[k].size, "%s", name);
				want[k].seen = true;
			}
		}
		for (size_t k = 0; k < 3; k++)
			cr_assert(want[k].seen, "no symbol %s", want[k].name);
	}
	elf_end(e);

	/* The build-id note reads back (the project's reader, as the cache checks it). */
	cr_assert_eq(buildid_read_fd(fd, read_id, &id_size), 0);
	cr_assert_eq(id_size, PY_SYMFILE_BUILD_ID_SIZE);
	cr_assert_arr_eq(read_id, id, PY_SYMFILE_BUILD_ID_SIZE);
	close(fd);
	py_symfile_free(sf);
}

static const Dwfl_Callbacks dwfl_cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

/* Loaded at a non-canonical base as the recorder maps it: address -> symbol and line. */
Test(pysyms, dwfl_names_and_lines)
{
	static const struct {
		uint64_t addr;
		const char *sym, *file;
		int line;
	} want[] = {
		{ 0x100, "hot_alpha (app.py)", "/srv/app/app.py", 10 },
		{ 0x103, "hot_alpha (app.py)", "/srv/app/app.py", 10 },
		{ 0x105, "hot_alpha (app.py)", "/srv/app/app.py", 11 },
		{ 0x10f, "hot_alpha (app.py)", "/srv/app/app.py", 12 },
		{ 0x110, "Klass.hot_beta (app.py)", "/srv/app/app.py", 20 },	/* row 2 holds from 0 */
		{ 0x117, "Klass.hot_beta (app.py)", "/srv/app/app.py", 21 },
		{ 0x201, "<module> (other.py)", "lib/other.py", 30 },
		{ 0x231, "<module> (other.py)", "lib/other.py", 0 },
		{ 0x27f, "<module> (other.py)", "lib/other.py", 35 },
	};
	const uint64_t base = PY_SYMFILE_MAP_BASE;
	struct py_symfile *sf = three();
	uint8_t id[PY_SYMFILE_BUILD_ID_SIZE];
	int fd = write_memfd(sf, id);
	Dwfl *dwfl = dwfl_begin(&dwfl_cb);
	Dwfl_Module *mod;
	const unsigned char *mod_id;
	GElf_Addr vaddr;

	cr_assert_not_null(dwfl);
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, "pysyms", "pysyms", fd, base, false);	/* takes fd */
	cr_assert_not_null(mod, "%s", dwfl_errmsg(-1));
	cr_assert_eq(dwfl_report_end(dwfl, NULL, NULL), 0);
	cr_assert_eq(dwfl_module_build_id(mod, &mod_id, &vaddr), PY_SYMFILE_BUILD_ID_SIZE);
	cr_assert_arr_eq(mod_id, id, PY_SYMFILE_BUILD_ID_SIZE);

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		uint64_t a = base + want[i].addr;
		const char *sym = dwfl_module_addrname(mod, a), *file;
		Dwfl_Line *line = dwfl_module_getsrc(mod, a);
		int l = -1;

		cr_assert_str_eq(sym ? sym : "(none)", want[i].sym, "at %#lx", want[i].addr);
		cr_assert_not_null(line, "no line at %#lx: %s", want[i].addr, dwfl_errmsg(-1));
		file = dwfl_lineinfo(line, NULL, &l, NULL, NULL, NULL);
		cr_assert_str_eq(file, want[i].file, "at %#lx", want[i].addr);
		cr_assert_eq(l, want[i].line, "at %#lx: line %d", want[i].addr, l);
	}
	/* A frame as the recorder writes it, and the address - 1 a caller is looked up at. */
	{
		uint64_t frame = py_symfile_frame(base, funcs[0].start, alpha_rows[1].offset);
		Dwfl_Line *at = dwfl_module_getsrc(mod, frame), *before = dwfl_module_getsrc(mod, frame - 1);
		int l1 = 0, l2 = 0;

		cr_assert(at && before);
		dwfl_lineinfo(at, NULL, &l1, NULL, NULL, NULL);
		dwfl_lineinfo(before, NULL, &l2, NULL, NULL, NULL);
		cr_assert_eq(l1, 11);
		cr_assert_eq(l2, 11);
	}
	/* Between functions and past the end: nothing. */
	cr_assert_null(dwfl_module_getsrc(mod, base + 0x150));
	cr_assert_null(dwfl_module_addrname(mod, base + 0x150));
	dwfl_end(dwfl);
	py_symfile_free(sf);
}

/* The line table itself: one sequence per function with rows, each row where it was put. */
Test(pysyms, dwarf_line_rows)
{
	struct py_symfile *sf = three();
	uint8_t id[PY_SYMFILE_BUILD_ID_SIZE];
	int fd = write_memfd(sf, id);
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	Dwarf_Off off = 0, next;
	size_t hsize, nlines, nrows = 0, nsubprograms = 0;
	Dwarf_Lines *lines;
	Dwarf_Die cu, child;

	cr_assert_not_null(dw, "%s", dwarf_errmsg(-1));
	cr_assert_eq(dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL), 0);
	cr_assert_not_null(dwarf_offdie(dw, off + hsize, &cu));
	cr_assert_eq(dwarf_tag(&cu), DW_TAG_compile_unit);
	cr_assert_eq(dwarf_srclang(&cu), DW_LANG_Python);
	cr_assert_eq(dwarf_getsrclines(&cu, &lines, &nlines), 0, "%s", dwarf_errmsg(-1));
	for (size_t i = 0; i < nlines; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		bool end;
		int line;

		cr_assert_eq(dwarf_lineaddr(l, &a), 0);
		cr_assert_eq(dwarf_lineendsequence(l, &end), 0);
		cr_assert_eq(dwarf_lineno(l, &line), 0);
		if (end)
			continue;
		for (size_t f = 0; f < 3; f++)
			for (size_t r = 0; r < funcs[f].nr_rows; r++)
				if (a == funcs[f].start + (r ? funcs[f].rows[r].offset : 0) &&
				    line == (int)funcs[f].rows[r].line)
					nrows++;
	}
	cr_assert_eq(nrows, 3 + 2 + 3, "every row once, where it was put");

	/* A subprogram per function, with its declaration file and line. */
	cr_assert_eq(dwarf_child(&cu, &child), 0);
	do {
		int line = 0;

		cr_assert_eq(dwarf_tag(&child), DW_TAG_subprogram);
		cr_assert_eq(dwarf_decl_line(&child, &line), 0);
		if (!strcmp(dwarf_diename(&child), "<module> (other.py)")) {
			cr_assert_str_eq(dwarf_decl_file(&child), "lib/other.py");
			cr_assert_eq(line, 30);
		}
		nsubprograms++;
	} while (dwarf_siblingof(&child, &child) == 0);
	cr_assert_eq(nsubprograms, 3);
	dwarf_end(dw);
	close(fd);
	py_symfile_free(sf);
}

Test(pysyms, build_id_follows_content)
{
	struct py_symfile *a = three(), *b = three(), *c = three(), *d;
	uint8_t ia[PY_SYMFILE_BUILD_ID_SIZE], ib[PY_SYMFILE_BUILD_ID_SIZE];
	uint8_t ic[PY_SYMFILE_BUILD_ID_SIZE], id[PY_SYMFILE_BUILD_ID_SIZE];
	struct py_symfile_func moved = funcs[0];
	struct py_symfile_row other_line[] = { { 0, 10 }, { 4, 11 }, { 8, 13 } };
	struct py_symfile_func relined = funcs[0];

	close(write_memfd(a, ia));
	close(write_memfd(b, ib));
	cr_assert_arr_eq(ia, ib, sizeof(ia), "equal contents, equal build-ids");

	/* One more function: another id. */
	moved.start = 0x300;
	cr_assert_eq(py_symfile_add(c, &moved), 0);
	close(write_memfd(c, ic));
	cr_assert_arr_neq(ia, ic, sizeof(ia));

	/* The same functions but one line differs: another id. */
	cr_assert_eq(py_symfile_new(&d), 0);
	relined.rows = other_line;
	cr_assert_eq(py_symfile_add(d, &relined), 0);
	cr_assert_eq(py_symfile_add(d, &funcs[1]), 0);
	cr_assert_eq(py_symfile_add(d, &funcs[2]), 0);
	close(write_memfd(d, id));
	cr_assert_arr_neq(ia, id, sizeof(ia));

	/* The same functions under another recorded name: another id; the same name: the same. */
	{
		uint8_t n1[PY_SYMFILE_BUILD_ID_SIZE], n2[PY_SYMFILE_BUILD_ID_SIZE];
		uint8_t n3[PY_SYMFILE_BUILD_ID_SIZE];
		int fd = memfd_create("test_pysyms", MFD_CLOEXEC);

		cr_assert_eq(py_symfile_write(a, "/proc/version/bpfrec-python-1-0", fd, n1), 0);
		cr_assert_eq(py_symfile_write(a, "/proc/version/bpfrec-python-2-0", fd, n2), 0);
		cr_assert_eq(py_symfile_write(b, "/proc/version/bpfrec-python-1-0", fd, n3), 0);
		cr_assert_arr_neq(n1, n2, sizeof(n1));
		cr_assert_arr_neq(n1, ia, sizeof(n1));
		cr_assert_arr_eq(n1, n3, sizeof(n1));
		close(fd);
	}

	/* Writing twice gives the same id (the first write's sort changes nothing). */
	close(write_memfd(a, ib));
	cr_assert_arr_eq(ia, ib, sizeof(ia));
	py_symfile_free(a);
	py_symfile_free(b);
	py_symfile_free(c);
	py_symfile_free(d);
}

/* An id chosen before the contents: carried as given, whatever the contents. */
Test(pysyms, build_id_as_given)
{
	struct py_symfile *sf = three();
	uint8_t id[PY_SYMFILE_BUILD_ID_SIZE], hashed[PY_SYMFILE_BUILD_ID_SIZE];
	uint8_t read_id[BUILDID_MAX];
	size_t id_size;
	int fd;

	for (size_t i = 0; i < sizeof(id); i++)
		id[i] = (uint8_t)(i * 13 + 1);
	fd = memfd_create("pysyms-test", 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(py_symfile_write_id(sf, "python", fd, id), 0);
	cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
	cr_assert_eq(buildid_read_fd(fd, read_id, &id_size), 0);
	cr_assert_eq(id_size, sizeof(id));
	cr_assert_arr_eq(read_id, id, sizeof(id));
	close(fd);
	/* The contents' own id is another one. */
	fd = memfd_create("pysyms-test", 0);
	cr_assert_eq(py_symfile_write(sf, "python", fd, hashed), 0);
	cr_assert_arr_neq(hashed, id, sizeof(id));
	close(fd);
	py_symfile_free(sf);
}

Test(pysyms, refused)
{
	struct py_symfile *sf;
	struct py_symfile_func f = funcs[0];
	struct py_symfile_row unordered[] = { { 4, 1 }, { 4, 2 } }, past[] = { { 0x10, 1 } };
	static struct py_symfile_row many[PY_SYMFILE_MAX_ROWS + 1];
	char *long_name = malloc(PY_SYMFILE_MAX_NAME + 2);
	uint8_t id[PY_SYMFILE_BUILD_ID_SIZE];
	int fd = memfd_create("test_pysyms", MFD_CLOEXEC);

	cr_assert_not_null(long_name);
	cr_assert_eq(py_symfile_new(&sf), 0);
	cr_assert_eq(py_symfile_write(sf, NULL, fd, id), -EINVAL, "an empty file");

	f.name = NULL;
	cr_assert_eq(py_symfile_add(sf, &f), -EINVAL);
	f.name = "";
	cr_assert_eq(py_symfile_add(sf, &f), -EINVAL);
	f = funcs[0];
	f.size = 0;
	cr_assert_eq(py_symfile_add(sf, &f), -EINVAL);
	f = funcs[0];
	f.start = PY_SYMFILE_TEXT_START - 1;
	cr_assert_eq(py_symfile_add(sf, &f), -EINVAL, "over the headers");
	f = funcs[0];
	f.rows = unordered;
	f.nr_rows = 2;
	cr_assert_eq(py_symfile_add(sf, &f), -EINVAL, "rows not increasing");
	f.rows = past;
	f.nr_rows = 1;
	cr_assert_eq(py_symfile_add(sf, &f), -EINVAL, "a row past the end");
	f.rows = NULL;
	cr_assert_eq(py_symfile_add(sf, &f), -EINVAL, "rows without rows");

	f = funcs[0];
	memset(long_name, 'x', PY_SYMFILE_MAX_NAME + 1);
	long_name[PY_SYMFILE_MAX_NAME + 1] = '\0';
	f.name = long_name;
	cr_assert_eq(py_symfile_add(sf, &f), -E2BIG);
	f = funcs[0];
	f.file = long_name;
	cr_assert_eq(py_symfile_add(sf, &f), -E2BIG);
	long_name[PY_SYMFILE_MAX_NAME] = '\0';	/* at the bound: taken */
	f.rows = NULL;
	f.nr_rows = 0;
	cr_assert_eq(py_symfile_add(sf, &f), 0);
	f = funcs[0];
	f.start = PY_SYMFILE_MAX_END - 8;
	f.size = 16;
	f.rows = NULL;
	f.nr_rows = 0;
	cr_assert_eq(py_symfile_add(sf, &f), -E2BIG, "past the end bound");
	f.start = UINT64_MAX - 8;
	cr_assert_eq(py_symfile_add(sf, &f), -E2BIG, "wraps");
	f = funcs[0];
	f.start = 0x1000;
	f.size = PY_SYMFILE_MAX_ROWS + 2;
	for (uint32_t i = 0; i < PY_SYMFILE_MAX_ROWS + 1; i++)
		many[i] = (struct py_symfile_row){ i, i + 1 };
	f.rows = many;
	f.nr_rows = PY_SYMFILE_MAX_ROWS + 1;
	cr_assert_eq(py_symfile_add(sf, &f), -E2BIG, "too many rows");
	cr_assert_eq(py_symfile_nr(sf), 1, "refusals leave the builder as it was");

	/* Two functions that overlap: refused when written. */
	f = funcs[1];
	f.start = 0x108;
	cr_assert_eq(py_symfile_add(sf, &f), 0);
	cr_assert_eq(py_symfile_write(sf, NULL, fd, id), -EINVAL);
	close(fd);
	fd = memfd_create("test_pysyms", MFD_CLOEXEC);
	py_symfile_free(sf);
	cr_assert_eq(py_symfile_new(&sf), 0);
	cr_assert_eq(py_symfile_add(sf, &funcs[0]), 0);
	memset(long_name, 'x', PY_SYMFILE_MAX_NAME + 1);
	long_name[PY_SYMFILE_MAX_NAME + 1] = '\0';
	cr_assert_eq(py_symfile_write(sf, long_name, fd, id), -E2BIG, "a recorded name too long");
	close(fd);
	free(long_name);
	py_symfile_free(sf);
}

Test(pysyms, too_many_functions)
{
	struct py_symfile *sf;
	struct py_symfile_func f = { .start = PY_SYMFILE_TEXT_START, .size = 1, .name = "f" };

	cr_assert_eq(py_symfile_new(&sf), 0);
	for (uint32_t i = 0; i < PY_SYMFILE_MAX_FUNCS; i++, f.start++)
		cr_assert_eq(py_symfile_add(sf, &f), 0);
	cr_assert_eq(py_symfile_add(sf, &f), -E2BIG);
	py_symfile_free(sf);
}

Test(pysyms, path_shape)
{
	char buf[64], small[16];

	cr_assert_eq(py_symfile_path(buf, sizeof(buf), 4242, 3), 0);
	cr_assert_str_eq(buf, "/proc/version/bpfrec-python-4242-3");
	cr_assert_eq(py_symfile_path(buf, sizeof(buf), 2147483647, 4294967295u), 0);
	cr_assert_eq(py_symfile_path(small, sizeof(small), 4242, 0), -ENOSPC);
}

/* Filed in a build-id cache in a temporary dir; it stays there after the memfd is gone. */
Test(pysyms, filed_in_the_cache)
{
	char dir[] = "/tmp/bpfrec-pysyms.XXXXXX", path[64], link[512], hex[41], cmd[128];
	struct buildid_cache_opts opts = { .dir = dir };
	struct py_symfile *sf = three();
	struct buildid_cache *cache;
	uint8_t id[PY_SYMFILE_BUILD_ID_SIZE], read_id[BUILDID_MAX];
	size_t id_size;
	struct stat st;

	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(buildid_cache_new(&opts, &cache), 0);
	/* The recorder's ids are chosen before the file is complete: any id, as given. */
	for (size_t i = 0; i < sizeof(id); i++)
		id[i] = (uint8_t)(0xa0 + i);
	cr_assert_eq(py_symfile_path(path, sizeof(path), 4242, 0), 0);
	cr_assert_eq(py_symfile_cache(sf, cache, path, id), 0);
	buildid_cache_flush(cache);
	cr_assert_eq(buildid_cache_stats(cache)->copied, 1);
	cr_assert_eq(buildid_cache_stats(cache)->failed, 0);
	buildid_cache_free(cache);

	buildid_to_hex(id, sizeof(id), hex);
	cr_assert_lt(snprintf(link, sizeof(link), "%s/.build-id/%.2s/%s/elf", dir, hex, hex + 2),
		     (int)sizeof(link));
	cr_assert_eq(stat(link, &st), 0, "perf's lookup path");
	cr_assert(S_ISREG(st.st_mode));
	cr_assert_eq(buildid_read_file(link, read_id, &id_size), 0);
	cr_assert_arr_eq(read_id, id, sizeof(id));
	cr_assert_lt(snprintf(link, sizeof(link), "%s%s/%s/elf", dir, path, hex), (int)sizeof(link));
	cr_assert_eq(stat(link, &st), 0, "hotspot's lookup path");

	/* A second process running the same functions: a file of its own, under its own path. */
	{
		uint8_t id2[PY_SYMFILE_BUILD_ID_SIZE];
		char path2[64], hex2[41];

		cr_assert_eq(buildid_cache_new(&opts, &cache), 0);
		memcpy(id2, id, sizeof(id2));
		id2[0] ^= 1;
		cr_assert_eq(py_symfile_path(path2, sizeof(path2), 4243, 0), 0);
		cr_assert_eq(py_symfile_cache(sf, cache, path2, id2), 0);
		buildid_cache_flush(cache);
		cr_assert_eq(buildid_cache_stats(cache)->copied, 1);
		buildid_cache_free(cache);
		cr_assert_arr_neq(id, id2, sizeof(id));
		buildid_to_hex(id2, sizeof(id2), hex2);
		cr_assert_lt(snprintf(link, sizeof(link), "%s%s/%s/elf", dir, path2, hex2),
			     (int)sizeof(link));
		cr_assert_eq(stat(link, &st), 0, "the second process's file under its path");
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	py_symfile_free(sf);
}

/* The cache's copy of the file filed under id, as perf finds it. */
static void cached_elf(const char *dir, const uint8_t id[PY_SYMFILE_BUILD_ID_SIZE], char *out,
		       size_t size)
{
	char hex[2 * PY_SYMFILE_BUILD_ID_SIZE + 1];

	buildid_to_hex(id, PY_SYMFILE_BUILD_ID_SIZE, hex);
	cr_assert_lt(snprintf(out, size, "%s/.build-id/%.2s/%s/elf", dir, hex, hex + 2), (int)size);
}

/*
 * A file filed while its process runs (before a --switch-output file is
 * retired) and again once it has grown, under the same id: the second copy
 * replaces the first at once, whole (the bytes of the grown file), and
 * leaves no temporary file beside it; a later hand-over of the id for the
 * end of the recording does not put an older state back.
 */
Test(pysyms, grown_file_replaces_its_copy)
{
	char dir[] = "/tmp/bpfrec-pysyms.XXXXXX", path[64], elf[512], cmd[600];
	struct buildid_cache_opts opts = { .dir = dir };
	const struct buildid_cache_stats *bst;
	uint8_t id[PY_SYMFILE_BUILD_ID_SIZE];
	struct buildid_cache *cache;
	struct py_symfile *sf;
	struct stat before, after;
	int fd, old;

	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(buildid_cache_new(&opts, &cache), 0);
	for (size_t i = 0; i < sizeof(id); i++)
		id[i] = (uint8_t)(0x50 + i);
	cr_assert_eq(py_symfile_path(path, sizeof(path), 4244, 0), 0);
	cached_elf(dir, id, elf, sizeof(elf));

	/* Two functions: in the cache at once, no flush needed. */
	cr_assert_eq(py_symfile_new(&sf), 0);
	cr_assert_eq(py_symfile_add(sf, &funcs[0]), 0);
	cr_assert_eq(py_symfile_add(sf, &funcs[1]), 0);
	cr_assert_eq(py_symfile_cache(sf, cache, path, id), 0);
	cr_assert_eq(stat(elf, &before), 0, "not in the cache before the flush");
	/* Open, as a reader of the first rotated file holds it. */
	old = open(elf, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(old, 0);

	/* The third function: filed again, over the first copy. */
	cr_assert_eq(py_symfile_add(sf, &funcs[2]), 0);
	cr_assert_eq(py_symfile_cache(sf, cache, path, id), 0);
	bst = buildid_cache_stats(cache);
	cr_assert_eq(bst->copied, 1);
	cr_assert_eq(bst->replaced, 1);
	cr_assert_eq(bst->failed + bst->present + bst->too_big, 0);
	cr_assert_eq(stat(elf, &after), 0);
	cr_assert_gt(after.st_size, before.st_size);
	cr_assert_neq(after.st_ino, before.st_ino, "replaced by a rename, not rewritten in place");
	fd = memfd_create("test_pysyms", MFD_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(py_symfile_write_id(sf, path, fd, id), 0);
	snprintf(cmd, sizeof(cmd), "cmp -s /proc/%d/fd/%d '%s'", (int)getpid(), fd, elf);
	cr_assert_eq(system(cmd), 0, "the cache's copy is the grown file");
	close(fd);
	/* The first copy, still open, reads as it was: no reader sees half a file. */
	cr_assert_eq(fstat(old, &after), 0);
	cr_assert_eq(after.st_size, before.st_size);
	close(old);

	/* The end of the recording hands the id over as a held file: nothing older comes back. */
	buildid_cache_add(cache, path, id, sizeof(id), open(elf, O_RDONLY | O_CLOEXEC));
	buildid_cache_flush(cache);
	cr_assert_eq(bst->copied + bst->replaced, 2);
	buildid_cache_free(cache);

	snprintf(cmd, sizeof(cmd), "test -z \"$(find '%s' -name '*.tmp')\"", dir);
	cr_assert_eq(system(cmd), 0, "a temporary file left in the cache");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	py_symfile_free(sf);
}
