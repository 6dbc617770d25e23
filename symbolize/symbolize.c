// SPDX-License-Identifier: MIT
/*
 * symbolize.c - the symbolizer (symbolize.h): options, caches, dispatch.
 *
 * Everything is loaded on first use and kept: kallsyms on the first kernel
 * address, one file per (path, build-id) when a mapping of it is first
 * named or unwound through, its elf_file on the first address in it, one
 * perf map per pid. Failures are cached as well, so a missing file costs
 * one lookup per conversion, not one per address.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libelf.h>

#include "symbolize/fdlimit.h"
#include "symbolize/cache.h"
#include "symbolize/debugfind.h"
#include "symbolize/elfsym.h"
#include "symbolize/jitmap.h"
#include "symbolize/kallsyms.h"
#include "symbolize/symbolize.h"
#include "symbolize/util.h"
#include "tools/lib/array.h"

struct symbolizer {
	struct debug_paths dp;	/* points into the strings below */
	char *symfs, *debug_dir, *home, *jit_dir, *kallsyms_path;
	bool no_inlines;

	struct kallsyms *ks;
	int ks_err;		/* cached kallsyms_load() failure */
	char ks_msg[512];	/* and what it said */
	struct cache files;	/* path + build-id -> struct sym_file */
	struct cache jitmaps;	/* pid -> struct jitmap */
	uint64_t recording;	/* symbolizer_next_recording() calls so far */
	/*
	 * opts.filed_told: build-id -> the recording it was last filed in
	 * (symbolizer_file_filed()), as value (uintptr_t) recording + 1.
	 */
	bool filed_told;
	struct cache filed;
	/* A filing not remembered (no memory): every file is checked up to this recording. */
	uint64_t check_all_until;
};

/*
 * One file mappings of a recording name, as found on this machine: found,
 * checked and opened once per symbolizer, then shared by naming (its
 * elf_file) and DWARF unwinding (symbolize_open_binary()), whose Dwfls
 * hold duplicates of the fd kept here.
 */
struct sym_file {
	struct found_file bin;
	struct elf_file *elf;	/* NULL until an address in the file is named */
	int elf_err;		/* elf_file_open()'s failure, kept */
	struct stat st;		/* bin as found (fstat) */
	/* The symbolizer's recording it was looked for or checked in; kept when not found, too. */
	uint64_t recording;
};

static char *dup_or_null(const char *s, int *err)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*err = -ENOMEM;
	return d;
}

static int kernel_table(struct symbolizer *s);

int symbolizer_new(const struct symbolizer_opts *opts, struct symbolizer **out)
{
	static const struct symbolizer_opts defaults;
	struct symbolizer *s;
	int err = 0;

	fd_limit_raise();	/* it keeps every file it opened: see fdlimit.h */

	if (!opts)
		opts = &defaults;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->no_inlines = opts->no_inlines;
	s->filed_told = opts->filed_told;
	s->symfs = strdup(opts->symfs ? opts->symfs : "");
	s->debug_dir = opts->debug_dir ? strdup(opts->debug_dir)
				       : str_join(s->symfs ? s->symfs : "", "/usr/lib/debug", NULL);
	s->jit_dir = opts->jit_dir ? strdup(opts->jit_dir)
				   : str_join(s->symfs ? s->symfs : "", "/tmp", NULL);
	s->home = dup_or_null(getenv("HOME"), &err);
	s->kallsyms_path = dup_or_null(opts->kallsyms, &err);
	if (err || !s->symfs || !s->debug_dir || !s->jit_dir) {
		symbolizer_free(s);
		return -ENOMEM;
	}
	s->dp.symfs = s->symfs;
	s->dp.debug_dir = s->debug_dir;
	s->dp.home = s->home && *s->home ? s->home : NULL;
	if (opts->kernel_now)
		kernel_table(s);	/* a failure is kept and told at the first use */
	*out = s;
	return 0;
}

static void free_sym_file(void *p)
{
	struct sym_file *f = p;

	elf_file_free(f->elf);
	if (f->bin.fd >= 0)
		close(f->bin.fd);
	free(f->bin.path);
	free(f);
}

static void free_jitmap(void *jm)
{
	jitmap_free(jm);
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	cache_clear(&s->files, free_sym_file);
	cache_clear(&s->jitmaps, free_jitmap);
	cache_clear(&s->filed, NULL);
	kallsyms_free(s->ks);
	free(s->symfs);
	free(s->debug_dir);
	free(s->home);
	free(s->jit_dir);
	free(s->kallsyms_path);
	free(s);
}

static int ino_cmp(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/*
 * The resident bytes (Rss in /proc/self/smaps) of this process's mappings
 * of the files whose inodes are inos (sorted): the pages of the files libdw
 * mapped that reading them made resident, what they add to RSS. By inode
 * alone: the device an overlay or btrfs file shows in smaps may not be the
 * one fstat() gave, and a collision only counts more.
 */
static size_t resident_bytes(const uint64_t *inos, size_t nr)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	unsigned long long lo, hi, off, ino, kb;
	unsigned int maj, min;
	char perms[8], *line = NULL;
	size_t cap = 0, bytes = 0;
	bool ours = false;

	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0) {
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu", &lo, &hi, perms, &off, &maj, &min,
			   &ino) == 7) {
			uint64_t key = ino;

			ours = ino && bsearch(&key, inos, nr, sizeof(*inos), ino_cmp);
		} else if (ours && sscanf(line, "Rss: %llu kB", &kb) == 1) {
			bytes += (size_t)kb << 10;
		}
	}
	free(line);
	fclose(f);
	return bytes;
}

size_t symbolizer_size(const struct symbolizer *s)
{
	const struct hash_table *t = &s->files.table;
	struct hash_node *n, *tmp;
	size_t i, nr = 0, cap = 0, bytes = sizeof(*s) + kallsyms_size(s->ks);
	uint64_t *inos = NULL;

	hash_table_for_each_safe(t, n, tmp, i) {
		const struct cache_entry *e = container_of(n, struct cache_entry, node);
		const struct sym_file *f = e->value;
		struct elf_file_id ids[ELF_FILE_MAX_IDS];
		size_t nid;

		bytes += sizeof(*e) + e->key_len;
		if (!f)
			continue;
		bytes += sizeof(*f) + elf_file_size(f->elf);
		nid = f->elf ? elf_file_ids(f->elf, ids) : 0;
		if (ARRAY_RESERVE(inos, cap, nr + nid, 64))
			continue;	/* out of memory: these files' pages go uncounted */
		for (size_t k = 0; k < nid; k++)
			inos[nr++] = ids[k].ino;
	}
	if (nr) {
		qsort(inos, nr, sizeof(*inos), ino_cmp);
		bytes += resident_bytes(inos, nr);
	}
	free(inos);
	return bytes;
}

void symbolizer_next_recording(struct symbolizer *s)
{
	cache_clear(&s->jitmaps, free_jitmap);
	s->recording++;
}

void symbolizer_file_filed(struct symbolizer *s, const uint8_t *build_id, size_t size)
{
	struct cache_entry *e;

	if (!size || size > BUILDID_MAX)
		return;
	e = cache_get(&s->filed, build_id, size);
	if (!e)
		e = cache_add(&s->filed, build_id, size);
	if (!e) {
		s->check_all_until = s->recording + 1;
		return;
	}
	e->value = (void *)(uintptr_t)(s->recording + 1);
}

const char *symbolize_kernel_error(const struct symbolizer *s)
{
	return s->ks_err ? s->ks_msg : NULL;
}

static void one_function(struct sym_result *out, const char *name)
{
	out->nr_frames = 1;
	out->frames[0] = (struct sym_frame){ .function = name };
	out->has_functions = true;
}

/* The kernel's table, loaded at the first question: 0 or the load's cached -errno. */
static int kernel_table(struct symbolizer *s)
{
	if (!s->ks && !s->ks_err) {
		int err = kallsyms_load(s->kallsyms_path, &s->ks, s->ks_msg, sizeof(s->ks_msg));

		if (err)
			s->ks_err = err;
	}
	return s->ks_err;
}

int symbolize_kernel_symbol(struct symbolizer *s, const char *name, uint64_t *addr)
{
	return kernel_table(s) ?: kallsyms_find_core(s->ks, name, addr);
}

int symbolize_kernel(struct symbolizer *s, uint64_t addr, struct sym_result *out)
{
	const char *name;
	uint64_t offset;
	int err;

	memset(out, 0, sizeof(*out));
	err = kernel_table(s);
	if (err)
		return err;
	err = kallsyms_lookup(s->ks, addr, &name, &offset, NULL);
	if (err)
		return err;
	one_function(out, name);
	return 0;
}

/*
 * The path of a file a mapping can be symbolized from, or NULL: anonymous
 * and special mappings ([heap], //anon, /memfd:...) have none ([vdso] is
 * found by debugfind_binary), and a
 * deleted file is only worth opening when the build-id can prove that
 * what is at its path now is what was mapped.
 */
static const char *file_path(const struct sym_mapping *m, bool have_build_id, char *buf,
			     size_t size)
{
	static const char deleted[] = " (deleted)";
	const char *p = m->path;
	size_t len = strlen(p);

	if (!strcmp(p, "[vdso]"))
		return p;
	if (p[0] != '/' || !strncmp(p, "//anon", 6) || !strncmp(p, "/memfd:", 7) ||
	    !strncmp(p, "/SYSV", 5))
		return NULL;
	if (len > sizeof(deleted) - 1 && !strcmp(p + len - (sizeof(deleted) - 1), deleted)) {
		len -= sizeof(deleted) - 1;
		if (!have_build_id || len >= size)
			return NULL;
		memcpy(buf, p, len);
		buf[len] = '\0';
		return buf;
	}
	return p;
}

/* The recorded build-id of m (NULL when none) and the path to look for. */
static int mapping_file(const struct sym_mapping *m, const uint8_t **build_id,
			size_t *build_id_size, char *buf, size_t size, const char **path)
{
	*build_id = NULL;
	*build_id_size = 0;
	if (!m || !m->path)
		return -EINVAL;
	if (m->build_id && m->build_id_size) {
		if (m->build_id_size > BUILDID_MAX)
			return -EINVAL;
		*build_id = m->build_id;
		*build_id_size = m->build_id_size;
	}
	*path = file_path(m, *build_id != NULL, buf, size);
	return *path ? 0 : -ENOENT;
}

/*
 * With filed_told, need a file with a build-id found (or not) in recording
 * `recording` be checked again? Only when its build-id was filed at or
 * after that recording: filed while the symbolizer served it, or after.
 */
static bool filed_since(const struct symbolizer *s, const uint8_t *build_id, size_t size,
			uint64_t recording)
{
	const struct cache_entry *e;

	if (recording < s->check_all_until)
		return true;
	e = cache_get(&s->filed, build_id, size);
	return e && (uintptr_t)e->value - 1 >= recording;
}

/*
 * Is what was found for e in an earlier recording (symbolizer_next_recording())
 * still what is there? A file not found then may be now; a file found is
 * looked for again when what is at the path it was opened from is another
 * inode, or the same one grown or rewritten: a Python symbol file filed
 * again, grown, under the same build-id (recorder/pysyms_cache.h), a
 * binary replaced. A file gone from there keeps the copy held open.
 */
static bool still_found(const struct cache_entry *e)
{
	const struct sym_file *f = e->value;
	struct stat st;

	if (e->err)
		return false;
	if (stat(f->bin.path, &st))
		return true;
	return st.st_dev == f->st.st_dev && st.st_ino == f->st.st_ino &&
	       st.st_size == f->st.st_size && st.st_mtim.tv_sec == f->st.st_mtim.tv_sec &&
	       st.st_mtim.tv_nsec == f->st.st_mtim.tv_nsec;
}

/*
 * The file mapping m names (path_buf may hold *path, the path looked for):
 * found and opened on the first request for it, kept after, and checked
 * once in each later recording (still_found()).
 */
static int file_of(struct symbolizer *s, const struct sym_mapping *m, char *path_buf,
		   size_t path_size, const char **path, struct sym_file **out)
{
	const uint8_t *build_id;
	size_t build_id_size, plen;
	unsigned char key[4096 + 1 + BUILDID_MAX];
	struct cache_entry *e;
	struct sym_file *f;
	int err;

	err = mapping_file(m, &build_id, &build_id_size, path_buf, path_size, path);
	if (err)
		return err;
	plen = strlen(*path);
	if (plen >= 4096)
		return -ENAMETOOLONG;
	/* Key: path, NUL, build-id: one entry per distinct file version. */
	memcpy(key, *path, plen + 1);
	if (build_id)
		memcpy(key + plen + 1, build_id, build_id_size);
	e = cache_get(&s->files, key, plen + 1 + build_id_size);
	f = e ? e->value : NULL;
	if (f && f->recording != s->recording) {
		/* Found anew: nothing of this recording uses the old one yet. */
		if ((s->filed_told && build_id &&
		     !filed_since(s, build_id, build_id_size, f->recording)) || still_found(e)) {
			f->recording = s->recording;
		} else {
			free_sym_file(f);
			cache_del(&s->files, e);
			e = NULL;
		}
	}
	if (!e) {
		f = calloc(1, sizeof(*f));
		e = f ? cache_add(&s->files, key, plen + 1 + build_id_size) : NULL;
		if (!e) {
			free(f);
			return -ENOMEM;
		}
		f->recording = s->recording;
		f->bin.fd = -1;
		e->value = f;
		e->err = debugfind_binary(&s->dp, *path, build_id, build_id_size, &f->bin);
		if (!e->err && fstat(f->bin.fd, &f->st))
			memset(&f->st, 0, sizeof(f->st));
	}
	if (e->err)
		return e->err;
	*out = e->value;
	return 0;
}

int symbolize_open_binary(struct symbolizer *s, const struct sym_mapping *m, int *fd,
			  char **found_path)
{
	char path_buf[4096];
	struct found_file dup;
	struct sym_file *f;
	const char *path;
	int err;

	err = file_of(s, m, path_buf, sizeof(path_buf), &path, &f);
	if (!err)
		err = found_file_dup(&f->bin, &dup);
	if (err)
		return err;
	*fd = dup.fd;
	*found_path = dup.path;
	return 0;
}

int symbolize_user(struct symbolizer *s, const struct sym_mapping *m, uint64_t addr,
		   struct sym_result *out)
{
	char path_buf[4096];
	struct sym_file *f;
	const char *path;
	int err;

	memset(out, 0, sizeof(*out));
	err = file_of(s, m, path_buf, sizeof(path_buf), &path, &f);
	if (err)
		return err;
	if (!f->elf && !f->elf_err)
		f->elf_err = elf_file_open(&s->dp, path, &f->bin, &f->elf);
	if (f->elf_err)
		return f->elf_err;
	return elf_file_symbolize(f->elf, m, addr, s->no_inlines, out);
}

int symbolize_jit(struct symbolizer *s, int pid, uint64_t addr, struct sym_result *out)
{
	struct cache_entry *e;
	const char *name;
	uint64_t offset;
	int err;

	memset(out, 0, sizeof(*out));
	e = cache_get(&s->jitmaps, &pid, sizeof(pid));
	if (!e) {
		struct jitmap *jm = NULL;
		char name_buf[32];
		char *path;

		e = cache_add(&s->jitmaps, &pid, sizeof(pid));
		if (!e)
			return -ENOMEM;
		snprintf(name_buf, sizeof(name_buf), "/perf-%d.map", pid);
		path = str_join(s->jit_dir, name_buf, NULL);
		/* perf's rule: the map of whoever runs the conversion, or root's. */
		e->err = path ? jitmap_load(path, geteuid(), &jm) : -ENOMEM;
		e->value = jm;
		free(path);
	}
	if (e->err)
		return e->err;
	err = jitmap_lookup(e->value, addr, &name, &offset);
	if (err)
		return err;
	one_function(out, name);
	return 0;
}
