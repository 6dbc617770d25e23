// SPDX-License-Identifier: MIT
/* taskfiles.c - the tracker's table of mapped files and their build-ids (taskfiles.h). */
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "recorder/buildid_cache.h"
#include "recorder/privs.h"
#include "recorder/taskfiles.h"
#include "recorder/tasks.h"
#include "symbolize/procmaps.h"
#include "symbolize/safeopen.h"

static uint64_t file_hash(uint64_t seed, uint32_t maj, uint32_t min, uint64_t ino,
			  const char *path)
{
	uint64_t dev_ino[2] = { (uint64_t)maj << 32 | min, ino };

	/* The inode's hash seeds the path's: one hash over both. */
	return hash_bytes(hash_bytes(seed, dev_ino, sizeof(dev_ino)), path, strlen(path));
}

/* x86_64 maps the vDSO of 32-bit (and x32) processes below 4 GiB: a different image. */
static bool is_vdso32(const struct procmaps_entry *e)
{
	return !strcmp(e->path, "[vdso]") && e->end <= (1ull << 32);
}

/* The build-id of our own vDSO, from its ELF notes in memory. */
static void read_self_vdso_build_id(struct task_files *t)
{
	const unsigned char *base = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const void *)base;
	const Elf64_Phdr *ph;

	if (!base || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return;
	ph = (const void *)(base + eh->e_phoff);
	for (unsigned int i = 0; i < eh->e_phnum; i++) {
		/* The image is mapped as laid out in the file: offsets are addresses. */
		if (ph[i].p_type == PT_NOTE &&
		    !buildid_parse_notes(base + ph[i].p_offset, ph[i].p_filesz, t->vdso_id,
					 &t->vdso_id_size))
			return;
	}
	t->vdso_id_size = 0;
}

/*
 * The build-id of the file mapped at e in pid, read through safeopen_mapped():
 * the mapping itself (map_files), else the path inside the process's root,
 * and only a file with the maps line's device and inode. Anything else
 * leaves no build-id: the MMAP2 then carries maj/min/ino, never another
 * file's build-id.
 */
static void read_build_id(struct task_files *t, uint32_t pid,
			  const struct procmaps_entry *e, struct task_file *f)
{
	size_t size = 0;
	int fd, err, mf_err = 0;

	if (!strcmp(e->path, "[vdso]")) {
		/* perf, too, takes the image from its own process. */
		if (!f->vdso32 && t->vdso_id_size) {
			memcpy(f->build_id, t->vdso_id, t->vdso_id_size);
			f->build_id_size = (uint8_t)t->vdso_id_size;
		}
		return;
	}
	if (e->path[0] != '/' || !strcmp(e->path, PROCMAPS_ANON_NAME))
		return;	/* "//anon": no file to read */
	err = safeopen_mapped(t->proc_root, pid, e->start, e->end, e->path, e->maj, e->min, e->ino,
			      &fd, &mf_err);
	/* map_files refused: say which capability is missing, also when the path worked. */
	if (privs_is_denial(mf_err) && !t->denied->map_files++)
		t->denied->map_files_err = mf_err;
	if (err)
		return;
	err = buildid_read_fd(fd, f->build_id, &size);
	if (!err && size > 0 && size <= BUILDID_MAX)
		f->build_id_size = (uint8_t)size;
	if (t->hooks && t->hooks->file_new)
		t->hooks->file_new(t->hooks_ctx, pid, e, fd, f);
	/*
	 * For the build-id cache: this is the very file, while its process
	 * lives. Not one the cache has already (most of a system's libraries,
	 * listed again by every new process): they would fill the bound.
	 */
	if (f->build_id_size && t->nr_kept < t->max_kept &&
	    !buildid_cache_has(t->keep_for, f->build_id, f->build_id_size)) {
		f->fd = fd;
		t->nr_kept++;
		return;
	}
	close(fd);
}

static void file_free(struct task_files *t, struct task_file *f)
{
	if (f->fd >= 0) {
		close(f->fd);
		t->nr_kept--;
	}
	free(f->hook_data);
	free(f);
}

static void files_sweep(struct task_files *t)
{
	struct hash_node *n, *tmp;
	size_t i;

	hash_table_for_each_safe(&t->map, n, tmp, i) {
		struct task_file *f = container_of(n, struct task_file, node);

		if (f->refs)
			continue;
		hash_table_del(&t->map, n);
		file_free(t, f);
	}
	t->sweep_at = t->map.nr * 2 > TASK_FILES_SWEEP_MIN ? t->map.nr * 2 : TASK_FILES_SWEEP_MIN;
}

struct task_file *task_file_get(struct task_files *t, uint32_t pid, const struct procmaps_entry *e)
{
	bool vdso32 = is_vdso32(e);
	uint64_t h = file_hash(hash_table_seed(&t->map), e->maj, e->min, e->ino, e->path) + vdso32;
	struct hash_node *n;
	struct task_file *f;
	size_t len;

	hash_table_for_each_possible(&t->map, n, h) {
		f = container_of(n, struct task_file, node);
		if (f->maj == e->maj && f->min == e->min && f->ino == e->ino &&
		    f->vdso32 == vdso32 && !strcmp(f->path, e->path)) {
			f->refs++;
			return f;
		}
	}
	if (t->map.nr >= t->sweep_at)
		files_sweep(t);
	len = strlen(e->path) + 1;
	f = calloc(1, sizeof(*f) + len);
	if (!f)
		return NULL;
	f->maj = e->maj;
	f->min = e->min;
	f->ino = e->ino;
	f->vdso32 = vdso32;
	f->refs = 1;
	f->fd = -1;
	memcpy(f->path, e->path, len);
	read_build_id(t, pid, e, f);
	if (hash_table_add(&t->map, &f->node, h)) {
		file_free(t, f);
		return NULL;
	}
	return f;
}

void task_file_put(struct task_file *f)
{
	if (f && f->refs)
		f->refs--;
}

void task_files_keep(struct task_files *tf, size_t max, const struct buildid_cache *cache)
{
	tf->max_kept = max;
	tf->keep_for = cache;
}

int task_file_take_fd(struct task_files *tf, struct task_file *f)
{
	int fd = f->fd;

	if (fd >= 0) {
		f->fd = -1;
		tf->nr_kept--;
	}
	return fd;
}

void task_files_init(struct task_files *tf, const char *proc_root,
		     struct task_tracker_denied *denied, const struct task_tracker_hooks *hooks,
		     void *hooks_ctx)
{
	memset(tf, 0, sizeof(*tf));
	tf->proc_root = proc_root;
	tf->denied = denied;
	tf->hooks = hooks;
	tf->hooks_ctx = hooks_ctx;
	tf->sweep_at = TASK_FILES_SWEEP_MIN;
	read_self_vdso_build_id(tf);
}

void task_files_free(struct task_files *tf)
{
	struct hash_node *n, *tmp;
	size_t i;

	hash_table_for_each_safe(&tf->map, n, tmp, i)
		file_free(tf, container_of(n, struct task_file, node));
	hash_table_free(&tf->map);
}

size_t task_files_bytes(const struct task_files *tf)
{
	size_t bytes = tf->map.nr_buckets * sizeof(void *);

	for (size_t i = 0; i < tf->map.nr_buckets; i++)
		for (const struct hash_node *n = tf->map.buckets[i]; n; n = n->next)
			bytes += sizeof(struct task_file) +
				 strlen(container_of(n, struct task_file, node)->path) + 1;
	return bytes;
}
