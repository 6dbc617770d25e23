// SPDX-License-Identifier: MIT
/* util.c - file and string helpers for the symbolize library (util.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>

#include "symbolize/safeopen.h"
#include "symbolize/util.h"

int read_whole_file(const char *path, char **out, size_t *out_len)
{
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = read_whole_fd(fd, out, out_len);
	close(fd);
	return err;
}

int read_whole_fd(int fd, char **out, size_t *out_len)
{
	/* procfs reports size 0: start big enough for a kallsyms in few reads. */
	return read_whole_fd_sized(fd, 1 << 20, out, out_len);
}

int read_whole_fd_sized(int fd, size_t first, char **out, size_t *out_len)
{
	size_t cap, len = 0;
	struct stat st;
	char *buf = NULL;
	int err = 0;

	cap = fstat(fd, &st) == 0 && st.st_size > 0 ? (size_t)st.st_size + 1 : first;
	for (;;) {
		ssize_t n;

		if (len + 1 >= cap || !buf) {
			char *nbuf;

			if (buf)
				cap *= 2;
			nbuf = realloc(buf, cap);
			if (!nbuf) {
				err = -ENOMEM;
				break;
			}
			buf = nbuf;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	return 0;
}

char *str_join(const char *first, ...)
{
	size_t len = 0;
	const char *s;
	va_list ap;
	char *out, *p;

	va_start(ap, first);
	for (s = first; s; s = va_arg(ap, const char *))
		len += strlen(s);
	va_end(ap);
	out = malloc(len + 1);
	if (!out)
		return NULL;
	p = out;
	va_start(ap, first);
	for (s = first; s; s = va_arg(ap, const char *)) {
		size_t n = strlen(s);

		memcpy(p, s, n);
		p += n;
	}
	va_end(ap);
	*p = '\0';
	return out;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

bool sym_alias_replaces(const struct sym_alias *best, const struct sym_alias *cand)
{
	size_t ub, uc, lb, lc;

	if (best->sized != cand->sized)
		return cand->sized;
	if (best->weak != cand->weak)
		return best->weak;
	if (best->global != cand->global)
		return cand->global;
	ub = leading_underscores(best->name);
	uc = leading_underscores(cand->name);
	if (ub != uc)
		return uc < ub;
	lb = strlen(best->name);
	lc = strlen(cand->name);
	if (lb != lc)
		return lc > lb;
	return !strncmp(best->name, "SyS", 3) || !strncmp(best->name, "compat_SyS", 10);
}

int elf_open_fd(int fd, Elf **elf)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	*elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!*elf || elf_kind(*elf) != ELF_K_ELF) {
		elf_end(*elf);
		*elf = NULL;
		return -EINVAL;	/* not an ELF file */
	}
	return 0;
}

int elf_open_path(const char *path, int *fd, Elf **elf)
{
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	/* Regular files only, looked at before they are opened (safeopen.h). */
	err = safeopen(-1, path, NULL, fd, NULL);
	if (err)
		return err;
	err = elf_open_fd(*fd, elf);
	if (err)
		close(*fd);
	return err;
}

int elf_load_segments(Elf *elf, bool exec_only, struct load_seg **segs, size_t *nr)
{
	size_t phnum;

	*segs = NULL;
	*nr = 0;
	if (elf_getphdrnum(elf, &phnum))
		return -EINVAL;
	*segs = calloc(phnum ? phnum : 1, sizeof(**segs));
	if (!*segs)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    (exec_only && !(ph.p_flags & PF_X)))
			continue;
		/* A segment whose end wraps around cannot be mapped: not one of the file's. */
		if (ph.p_offset > UINT64_MAX - ph.p_filesz || ph.p_vaddr > UINT64_MAX - ph.p_memsz ||
		    ph.p_vaddr > UINT64_MAX - ph.p_filesz)
			continue;
		(*segs)[(*nr)++] = (struct load_seg){
			.offset = ph.p_offset, .vaddr = ph.p_vaddr, .filesz = ph.p_filesz,
			.memsz = ph.p_memsz, .exec = ph.p_flags & PF_X,
		};
	}
	if (*nr)
		return 0;
	/* Nothing for the caller to free: callers return at once on an error. */
	free(*segs);
	*segs = NULL;
	return -ENOENT;
}

/* The file offset of ELF address vaddr inside an executable segment, or 0. */
static uint64_t exec_offset(const struct load_seg *segs, size_t nr, uint64_t vaddr)
{
	for (size_t i = 0; i < nr; i++)
		if (segs[i].exec && vaddr >= segs[i].vaddr && vaddr - segs[i].vaddr < segs[i].filesz)
			return vaddr - segs[i].vaddr + segs[i].offset;
	return 0;
}

int elf_for_each_symbol(Elf *elf, uint32_t sh_type, elf_symbol_fn fn, void *ctx)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t nsyms;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != sh_type || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		/* Never past the data the section really has. */
		nsyms = d->d_size / sh.sh_entsize;
		for (size_t i = 0; i < nsyms && i <= INT32_MAX; i++) {
			GElf_Sym sym;
			const char *name;
			int ret;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name)
				continue;
			ret = fn(&sym, name, ctx);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int elf_read_addr(Elf *elf, uint64_t addr, void *buf, size_t len)
{
	struct load_seg *segs;
	size_t nr, file_size = 0;
	const char *image;
	int err;

	err = elf_load_segments(elf, false, &segs, &nr);
	if (err)
		return err;
	image = elf_rawfile(elf, &file_size);
	err = image ? -ENOENT : -EINVAL;
	for (size_t i = 0; i < nr && err == -ENOENT; i++) {
		const struct load_seg *s = &segs[i];
		uint64_t off;

		/* All of it in the bytes this segment takes from the file (not .bss),
		 * and in the file: a header may claim more than the file has. */
		if (addr < s->vaddr || addr - s->vaddr > s->filesz || len > s->filesz - (addr - s->vaddr))
			continue;
		off = s->offset + (addr - s->vaddr);
		if (off > file_size || len > file_size - off)
			continue;
		memcpy(buf, image + off, len);
		err = 0;
	}
	free(segs);
	return err;
}

/* What elf_func_offsets() looks for, and how far it got. */
struct func_search {
	const char *const *names;
	size_t n;
	uint64_t *offsets;
	const struct load_seg *segs;
	size_t nr_segs;
	size_t found;
};

static int match_func(const GElf_Sym *sym, const char *name, void *ctx)
{
	struct func_search *fs = ctx;

	/* An IFUNC symbol is its resolver, not the code called. */
	if (GELF_ST_TYPE(sym->st_info) != STT_FUNC)
		return 0;
	for (size_t k = 0; k < fs->n; k++) {
		if (fs->offsets[k] || strcmp(name, fs->names[k]))
			continue;
		fs->offsets[k] = exec_offset(fs->segs, fs->nr_segs, sym->st_value);
		fs->found += fs->offsets[k] != 0;
	}
	return 0;
}

int elf_func_offsets(Elf *elf, const char *const *names, size_t n, uint64_t *offsets)
{
	struct func_search fs = { .names = names, .n = n, .offsets = offsets };
	struct load_seg *segs;
	int err;

	memset(offsets, 0, n * sizeof(*offsets));
	err = elf_load_segments(elf, true, &segs, &fs.nr_segs);
	if (err)
		return err;
	fs.segs = segs;
	/* .dynsym first: what a dynamic library exports is what callers reach. */
	elf_for_each_symbol(elf, SHT_DYNSYM, match_func, &fs);
	if (!fs.found)
		elf_for_each_symbol(elf, SHT_SYMTAB, match_func, &fs);
	free(segs);
	return fs.found ? 0 : -ENOENT;
}

int elf_mapping_bias(Elf *elf, uint64_t start, uint64_t len, uint64_t pgoff, uint64_t *bias)
{
	struct load_seg *segs;
	size_t nr;
	int err = elf_load_segments(elf, true, &segs, &nr);

	if (err)
		return err;
	err = load_segs_bias(segs, nr, start, len, pgoff, bias);
	free(segs);
	return err;
}

int load_segs_bias(const struct load_seg *segs, size_t nr, uint64_t start, uint64_t len,
		   uint64_t pgoff, uint64_t *bias)
{
	for (size_t i = 0; i < nr; i++) {
		/* The mapping starts at a page boundary at or below the
		 * segment's offset: take the executable segment it covers. */
		if (segs[i].offset + segs[i].filesz <= pgoff || segs[i].offset >= pgoff + len)
			continue;
		*bias = start - pgoff - (segs[i].vaddr - segs[i].offset);
		return 0;
	}
	return -ENOENT;
}
