// SPDX-License-Identifier: MIT
/* Unit tests for recorder/taskfiles.c: one entry per mapped file, build-ids read once. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/buildid_cache.h"
#include "recorder/taskfiles.h"
#include "recorder/tasks.h"
#include "symbolize/buildid.h"
#include "symbolize/procmaps.h"

/* Our own mapping whose path is name (a substring), from /proc/self/maps. */
static bool own_mapping(const char *name, struct procmaps *pm, struct procmaps_entry *out)
{
	cr_assert_eq(procmaps_read("/proc", (uint32_t)getpid(), 0, pm), 0);
	for (size_t i = 0; i < pm->nr; i++)
		if (strstr(pm->entries[i].path, name)) {
			*out = pm->entries[i];
			return true;
		}
	return false;
}

Test(taskfiles, one_entry_per_file_with_its_build_id)
{
	struct task_tracker_denied denied = { 0 };
	struct task_files tf;
	struct procmaps pm = { 0 };
	struct procmaps_entry e;
	uint8_t id[BUILDID_MAX];
	size_t size = 0;

	cr_assert(own_mapping("libc", &pm, &e), "no libc mapping in our own maps");
	cr_assert_eq(buildid_read_file(e.path, id, &size), 0);
	task_files_init(&tf, "/proc", &denied, NULL, NULL);
	struct task_file *a = task_file_get(&tf, (uint32_t)getpid(), &e);
	struct task_file *b = task_file_get(&tf, (uint32_t)getpid(), &e);

	cr_assert_not_null(a);
	cr_assert_eq(a, b, "the same file twice is one entry");
	cr_assert_eq(a->refs, 2);
	cr_assert_eq(a->build_id_size, size);
	cr_assert_eq(memcmp(a->build_id, id, size), 0);
	cr_assert_eq(tf.map.nr, 1);
	cr_assert_gt(task_files_bytes(&tf), sizeof(struct task_file));
	task_file_put(a);
	task_file_put(b);
	cr_assert_eq(a->refs, 0);
	task_files_free(&tf);
	procmaps_release(&pm);
}

Test(taskfiles, anon_has_no_build_id_and_vdso_has_ours)
{
	struct task_tracker_denied denied = { 0 };
	struct task_files tf;
	struct procmaps pm = { 0 };
	struct procmaps_entry anon = { .start = 0x1000, .end = 0x2000, .path = "//anon" }, vdso;

	task_files_init(&tf, "/proc", &denied, NULL, NULL);
	struct task_file *f = task_file_get(&tf, (uint32_t)getpid(), &anon);

	cr_assert_not_null(f);
	cr_assert_eq(f->build_id_size, 0);
	if (own_mapping("[vdso]", &pm, &vdso)) {
		struct task_file *v = task_file_get(&tf, (uint32_t)getpid(), &vdso);

		cr_assert_not_null(v);
		cr_assert_eq(v->build_id_size, tf.vdso_id_size);
		cr_assert_gt(v->build_id_size, 0, "our vDSO has a build-id note");
		task_file_put(v);
	}
	task_file_put(f);
	task_files_free(&tf);
	procmaps_release(&pm);
}

Test(taskfiles, a_file_with_another_inode_gets_no_build_id)
{
	struct task_tracker_denied denied = { 0 };
	struct task_files tf;
	struct procmaps pm = { 0 };
	struct procmaps_entry e;

	cr_assert(own_mapping("libc", &pm, &e));
	e.ino += 1;	/* the maps line and the file on disk disagree: not this file */
	task_files_init(&tf, "/proc", &denied, NULL, NULL);
	struct task_file *f = task_file_get(&tf, (uint32_t)getpid(), &e);

	cr_assert_not_null(f);
	cr_assert_eq(f->build_id_size, 0);
	task_file_put(f);
	task_files_free(&tf);
	procmaps_release(&pm);
}

/*
 * Kept for the build-id cache: the file the build-id came from stays open,
 * up to the bound, handed over once; freeing the table closes the rest.
 */
Test(taskfiles, kept_fds_are_the_file_and_bounded)
{
	struct task_tracker_denied denied = { 0 };
	struct task_files tf;
	struct procmaps pm = { 0 };
	struct procmaps_entry libc, ld;
	struct stat st;

	cr_assert(own_mapping("libc", &pm, &libc));
	cr_assert(own_mapping("ld-linux", &pm, &ld), "no ld.so mapping in our own maps");
	task_files_init(&tf, "/proc", &denied, NULL, NULL);
	struct task_file *a = task_file_get(&tf, (uint32_t)getpid(), &libc);

	cr_assert_eq(a->fd, -1, "nothing kept without task_files_keep()");
	task_file_put(a);
	task_files_free(&tf);

	task_files_init(&tf, "/proc", &denied, NULL, NULL);
	task_files_keep(&tf, 1, NULL);
	a = task_file_get(&tf, (uint32_t)getpid(), &libc);
	struct task_file *b = task_file_get(&tf, (uint32_t)getpid(), &ld);

	cr_assert_gt(a->build_id_size, 0);
	cr_assert_gt(b->build_id_size, 0);
	cr_assert_eq(tf.nr_kept, 1);
	cr_assert_eq(b->fd, -1, "past the bound: not kept");
	int fd = task_file_take_fd(&tf, a);

	cr_assert_geq(fd, 0);
	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert_eq(st.st_ino, libc.ino, "the kept fd is the mapped file");
	cr_assert_eq(task_file_take_fd(&tf, a), -1, "handed over once");
	cr_assert_eq(tf.nr_kept, 0);
	close(fd);
	task_file_put(a);
	task_file_put(b);
	task_files_free(&tf);

	/* A build-id the cache has already is not kept: it would take a place for nothing. */
	char dir[] = "/tmp/bpfrec-taskfiles.XXXXXX", cmd[64];
	struct buildid_cache_opts o = { .dir = mkdtemp(dir) };
	struct buildid_cache *c;

	cr_assert_not_null(o.dir);
	cr_assert_eq(buildid_cache_new(&o, &c), 0);
	task_files_init(&tf, "/proc", &denied, NULL, NULL);
	task_files_keep(&tf, 2, c);
	a = task_file_get(&tf, (uint32_t)getpid(), &libc);
	cr_assert_geq(a->fd, 0, "not in the cache yet: kept");
	buildid_cache_add(c, a->path, a->build_id, a->build_id_size, task_file_take_fd(&tf, a));
	task_file_put(a);
	task_files_free(&tf);
	task_files_init(&tf, "/proc", &denied, NULL, NULL);
	task_files_keep(&tf, 2, c);
	a = task_file_get(&tf, (uint32_t)getpid(), &libc);
	b = task_file_get(&tf, (uint32_t)getpid(), &ld);
	cr_assert_eq(a->fd, -1, "the cache has libc's build-id: not kept");
	cr_assert_geq(b->fd, 0, "ld.so's it has not: kept");
	cr_assert_eq(tf.nr_kept, 1);
	task_file_put(a);
	task_file_put(b);
	task_files_free(&tf);
	buildid_cache_free(c);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	procmaps_release(&pm);
}

/* What the file_new hook saw: how often, and the first bytes of the file it was shown. */
struct seen_new {
	unsigned int calls;
	unsigned char magic[4];
	uint32_t pid;
};

static void note_new(void *ctx, uint32_t pid, const struct procmaps_entry *e, int fd,
		     struct task_file *f)
{
	struct seen_new *s = ctx;

	(void)e;
	s->calls++;
	s->pid = pid;
	cr_assert_eq(pread(fd, s->magic, sizeof(s->magic), 0), (ssize_t)sizeof(s->magic));
	f->hook_data = malloc(16);	/* freed with the entry (ASan: no leak) */
	cr_assert_not_null(f->hook_data);
}

static const struct task_tracker_hooks new_hooks = { .file_new = note_new };

/*
 * A new file is shown to the hooks through the descriptor its build-id was
 * read from, once: the Python probe reads it without opening it again, and
 * what it keeps in hook_data goes with the entry.
 */
Test(taskfiles, a_new_file_is_shown_to_the_hooks_once_while_open)
{
	struct task_tracker_denied denied = { 0 };
	struct seen_new s = { 0 };
	struct task_files tf;
	struct procmaps pm = { 0 };
	struct procmaps_entry e, anon = { .start = 0x1000, .end = 0x2000, .path = "//anon" };

	cr_assert(own_mapping("libc", &pm, &e));
	task_files_init(&tf, "/proc", &denied, &new_hooks, &s);
	struct task_file *a = task_file_get(&tf, (uint32_t)getpid(), &e);
	struct task_file *b = task_file_get(&tf, (uint32_t)getpid(), &e);
	struct task_file *c = task_file_get(&tf, (uint32_t)getpid(), &anon);

	cr_assert(a && a == b && c);
	cr_assert_eq(s.calls, 1, "shown once, at its first mapping: %u", s.calls);
	cr_assert_eq(s.pid, (uint32_t)getpid());
	cr_assert_eq(memcmp(s.magic, "\177ELF", 4), 0, "the fd reads the file itself");
	cr_assert_not_null(a->hook_data);
	cr_assert_null(c->hook_data, "no file behind //anon: nothing shown");
	task_file_put(a);
	task_file_put(b);
	task_file_put(c);
	task_files_free(&tf);
	procmaps_release(&pm);
}
