// SPDX-License-Identifier: MIT
/*
 * test_procmaps.c - /proc/PID/maps and modules.dep parsing: hand-written
 * lines and files in a fake proc root, and the real /proc/self/maps.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbolize/procmaps.h"
#include "tests/unit/test_fixture.h"

static char root[256];

static void make_root(void)
{
	snprintf(root, sizeof(root), "/tmp/bpfrec-procmaps.XXXXXX");
	cr_assert_not_null(mkdtemp(root));
}

static void remove_root(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(procmaps, .init = make_root, .fini = remove_root);

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "fopen %s: %s", path, strerror(errno));
	cr_assert_eq(fwrite(text, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
}

/* Write root/PID/maps. */
static void write_maps(unsigned int pid, const char *text, size_t len)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%u", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/maps", root, pid);
	write_file(path, text, len);
}

/* Write root/PID/maps, then read it back (no flags): it must read. */
static void read_fake(unsigned int pid, const char *text, size_t len, struct procmaps *m)
{
	write_maps(pid, text, len);
	cr_assert_eq(procmaps_read(root, pid, 0, m), 0, "pid %u", pid);
}

Test(procmaps, file_mapping_fields)
{
	struct procmaps_entry e;
	const char *line = "55d5c3a00000-55d5c3a05000 r-xp 00002000 fe:01 248056"
			   "                     /usr/bin/sleep";

	cr_assert_eq(procmaps_parse_line(line, &e), 1);
	cr_assert_eq(e.start, 0x55d5c3a00000ULL);
	cr_assert_eq(e.end, 0x55d5c3a05000ULL);
	cr_assert_eq(e.pgoff, 0x2000);
	cr_assert_eq(e.maj, 0xfe);
	cr_assert_eq(e.min, 1);
	cr_assert_eq(e.ino, 248056);
	cr_assert_eq(e.prot, PROT_READ | PROT_EXEC);
	cr_assert_eq(e.flags, MAP_PRIVATE);
	cr_assert_str_eq(e.path, "/usr/bin/sleep");
}

Test(procmaps, prot_and_shared_flags)
{
	struct procmaps_entry e;

	cr_assert_eq(procmaps_parse_line("1000-2000 rwxs 00000000 08:02 7 /dev/shm/x", &e), 1);
	cr_assert_eq(e.prot, PROT_READ | PROT_WRITE | PROT_EXEC);
	cr_assert_eq(e.flags, MAP_SHARED);
	cr_assert_eq(procmaps_parse_line("1000-2000 --xp 00000000 08:02 7 /lib/x.so", &e), 1);
	cr_assert_eq(e.prot, PROT_EXEC);
	cr_assert_eq(e.flags, MAP_PRIVATE);
}

Test(procmaps, path_with_spaces_and_deleted)
{
	struct procmaps_entry e;

	cr_assert_eq(procmaps_parse_line("7f0000000000-7f0000001000 r-xp 00001000 fe:01 99   "
					 "     /tmp/my dir/lib  two.so", &e), 1);
	cr_assert_str_eq(e.path, "/tmp/my dir/lib  two.so");
	cr_assert_eq(procmaps_parse_line("400000-401000 r-xp 00000000 fe:01 12 /tmp/a.out (deleted)",
					 &e), 1);
	cr_assert_str_eq(e.path, "/tmp/a.out (deleted)");
	cr_assert_eq(e.ino, 12);
}

Test(procmaps, pseudo_files)
{
	struct procmaps_entry e;

	cr_assert_eq(procmaps_parse_line("7ffd1000-7ffd3000 r-xp 00000000 00:00 0 [vdso]", &e), 1);
	cr_assert_str_eq(e.path, "[vdso]");
	cr_assert_eq(e.ino, 0);
	/* Executable, but nothing perf could read. */
	cr_assert_eq(procmaps_parse_line("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0"
					 "                  [vsyscall]", &e), 0);
	cr_assert_eq(procmaps_parse_line("7ffd0000-7ffd1000 r--p 00000000 00:00 0 [vvar]", &e), 0);
	cr_assert_eq(procmaps_parse_line("7ffd0000-7ffd1000 r-xp 00000000 00:00 0 [uprobes]", &e),
		     0);
}

Test(procmaps, anonymous_exec_is_anon)
{
	struct procmaps_entry e;

	cr_assert_eq(procmaps_parse_line("7f1000000000-7f1000100000 rwxp 00000000 00:00 0 ", &e), 1);
	cr_assert_str_eq(e.path, PROCMAPS_ANON_NAME);
	cr_assert_eq(e.start, 0x7f1000000000ULL);
	cr_assert_eq(procmaps_parse_line("7f1000000000-7f1000100000 r-xp 00000000 00:00 0", &e), 1);
	cr_assert_str_eq(e.path, "//anon");
	cr_assert_eq(procmaps_parse_line("7f10-7f20 r-xp 00000000 00:00 0    [anon:v8 jit]", &e), 1);
	cr_assert_str_eq(e.path, "//anon");
	cr_assert_eq(procmaps_parse_line("5000-6000 rwxp 00000000 00:00 0    [heap]", &e), 1);
	cr_assert_str_eq(e.path, "//anon");
	/* Not executable: dropped. */
	cr_assert_eq(procmaps_parse_line("5000-6000 rw-p 00000000 00:00 0    [heap]", &e), 0);
	cr_assert_eq(procmaps_parse_line("5000-6000 rw-p 00000000 00:00 0", &e), 0);
	cr_assert_eq(procmaps_parse_line("5000-6000 r--p 00000000 fe:01 3 /lib/libc.so.6", &e), 0);
}

Test(procmaps, malformed_lines)
{
	static const char *const bad[] = {
		"",
		"hello world",
		"1000 r-xp 00000000 00:00 0 /x",		/* no end */
		"2000-1000 r-xp 00000000 00:00 0 /x",		/* end before start */
		"1000-1000 r-xp 00000000 00:00 0 /x",		/* empty */
		"zz00-2000 r-xp 00000000 00:00 0 /x",
		"1000-2000 rwzp 00000000 00:00 0 /x",		/* bad perms */
		"1000-2000 r-xq 00000000 00:00 0 /x",
		"1000-2000 r-x 00000000 00:00 0 /x",		/* short perms */
		"1000-2000 r-xp 0000g000 00:00 0 /x",
		"1000-2000 r-xp 00000000 0000 0 /x",		/* no ':' */
		"1000-2000 r-xp 00000000 00:00 x /x",		/* inode not decimal */
		"1000-2000 r-xp 00000000 00:00 12/x",		/* no space before path */
		"11112222333344445-11112222333344446 r-xp 0 00:00 0 /x", /* overflow */
	};
	struct procmaps_entry e;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(procmaps_parse_line(bad[i], &e), -EINVAL, "line %zu: '%s'", i, bad[i]);
}

/* /opt/app/bin's read-only and text mappings, as the maps file shows them. */
#define APP_BIN \
	"00400000-00401000 r--p 00000000 fe:01 100 /opt/app/bin\n" \
	"00401000-00405000 r-xp 00001000 fe:01 100 /opt/app/bin\n"

Test(procmaps, fake_proc_file)
{
	static const char text[] =
		APP_BIN
		"this line is garbage\n"
		"7f0000000000-7f0000010000 r-xp 00000000 00:00 0 \n"
		"7f0000020000-7f0000030000 r-xp 00002000 fe:01 200        /opt/app/lib with space.so\n"
		"7f0000040000-7f0000041000 r-xp 00000000 fe:01 300 /tmp/gone.so (deleted)\n"
		"7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]\n"
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n";
	struct procmaps m;

	read_fake(4242, text, sizeof(text) - 1, &m);
	cr_assert_eq(m.nr, 5);
	cr_assert_eq(m.entries[0].start, 0x401000);
	cr_assert_eq(m.entries[0].pgoff, 0x1000);
	cr_assert_str_eq(m.entries[0].path, "/opt/app/bin");
	cr_assert_str_eq(m.entries[1].path, "//anon");
	cr_assert_str_eq(m.entries[2].path, "/opt/app/lib with space.so");
	cr_assert_eq(m.entries[2].pgoff, 0x2000);
	cr_assert_str_eq(m.entries[3].path, "/tmp/gone.so (deleted)");
	cr_assert_str_eq(m.entries[4].path, "[vdso]");
	procmaps_release(&m);
	cr_assert_null(m.entries);
}

Test(procmaps, data_mappings_of_files_on_request)
{
	static const char text[] =
		APP_BIN
		"00405000-00406000 rw-p 00005000 fe:01 100 /opt/app/bin\n"
		"00406000-00407000 rw-p 00000000 00:00 0 \n"
		"00407000-00408000 ---p 00000000 fe:01 200 /opt/app/guard\n"
		"01000000-01100000 rw-p 00000000 00:00 0 [heap]\n"
		"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0 [stack]\n";
	struct procmaps m;

	read_fake(4343, text, sizeof(text) - 1, &m);
	cr_assert_eq(m.nr, 1, "only the executable mapping by default");
	procmaps_release(&m);

	/* PROCMAPS_DATA: the readable mappings of files too, nothing anonymous. */
	cr_assert_eq(procmaps_read(root, 4343, PROCMAPS_DATA, &m), 0);
	cr_assert_eq(m.nr, 3);
	cr_assert_eq(m.entries[0].start, 0x400000);
	cr_assert_eq(m.entries[0].prot, PROT_READ);
	cr_assert_eq(m.entries[1].prot, PROT_READ | PROT_EXEC);
	cr_assert_eq(m.entries[2].start, 0x405000);
	cr_assert_eq(m.entries[2].prot, PROT_READ | PROT_WRITE);
	for (size_t i = 0; i < m.nr; i++)
		cr_assert_str_eq(m.entries[i].path, "/opt/app/bin");
	procmaps_release(&m);
}

Test(procmaps, long_lines_and_cut_short_file)
{
	size_t name_len = 50000, cap = name_len + 4096, len;
	char *text = malloc(cap), *name = malloc(name_len + 1);
	struct procmaps m;

	cr_assert(text && name);
	name[0] = '/';
	memset(name + 1, 'a', name_len - 1);
	name[name_len] = '\0';
	len = (size_t)snprintf(text, cap,
			       "1000-2000 r-xp 00000000 fe:01 1 %s\n"
			       "3000-4000 r-xp 00000000 fe:01 2 /short\n"
			       "5000-6000 r-xp 00000000 fe:01 3 /cut/sho", name);
	read_fake(7, text, len, &m);
	/* The last line has no newline: the file was cut short, its path is partial. */
	cr_assert_eq(m.nr, 2);
	cr_assert_eq(strlen(m.entries[0].path), name_len);
	cr_assert_str_eq(m.entries[1].path, "/short");
	procmaps_release(&m);
	free(text);
	free(name);
}

Test(procmaps, unsorted_and_overlapping_input)
{
	static const char text[] =
		"5000-6000 r-xp 00000000 fe:01 3 /c\n"
		"1000-2000 r-xp 00000000 fe:01 1 /a\n"
		"1800-2800 r-xp 00000000 fe:01 2 /overlaps-a\n"
		"3000-4000 r-xp 00000000 fe:01 2 /b\n";
	struct procmaps m;

	cr_assert_eq(procmaps_parse(text, sizeof(text) - 1, &m), 0);
	cr_assert_eq(m.nr, 3);
	cr_assert_str_eq(m.entries[0].path, "/a");
	cr_assert_str_eq(m.entries[1].path, "/b");
	cr_assert_str_eq(m.entries[2].path, "/c");
	procmaps_release(&m);
}

Test(procmaps, empty_file_and_missing_process)
{
	struct procmaps m;

	read_fake(8, "", 0, &m);
	cr_assert_eq(m.nr, 0);
	procmaps_release(&m);
	cr_assert_eq(procmaps_read(root, 9, 0, &m), -ENOENT);
	cr_assert_eq(m.nr, 0);
	procmaps_release(&m);
}

static const struct procmaps_entry *find(const struct procmaps *m, uint64_t addr)
{
	for (size_t i = 0; i < m->nr; i++)
		if (addr >= m->entries[i].start && addr < m->entries[i].end)
			return &m->entries[i];
	return NULL;
}

__attribute__((noinline)) static int here(void)
{
	return 42;
}

Test(procmaps, real_self_maps)
{
	char exe[PATH_MAX];
	struct stat st;
	const struct procmaps_entry *e;
	struct procmaps m;
	void *anon;

	self_exe(exe, sizeof(exe));
	cr_assert_eq(stat(exe, &st), 0);
	anon = mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(anon, MAP_FAILED);

	cr_assert_eq(procmaps_read(NULL, (uint32_t)getpid(), 0, &m), 0);
	cr_assert_gt(m.nr, 2);

	e = find(&m, (uint64_t)(uintptr_t)&here);
	cr_assert_not_null(e, "no mapping holds this test's code");
	cr_assert_str_eq(e->path, exe);
	cr_assert_eq(e->ino, st.st_ino);
	cr_assert(e->prot & PROT_EXEC);

	e = find(&m, (uint64_t)(uintptr_t)&getpid);
	cr_assert_not_null(e, "no mapping holds libc's getpid");
	cr_assert_not_null(strstr(e->path, "libc"), "getpid in %s", e->path);

	e = find(&m, (uint64_t)getauxval(AT_SYSINFO_EHDR));
	cr_assert_not_null(e, "no mapping holds the vdso");
	cr_assert_str_eq(e->path, "[vdso]");

	e = find(&m, (uint64_t)(uintptr_t)anon);
	cr_assert_not_null(e, "anonymous exec memory missing");
	cr_assert_str_eq(e->path, "//anon");
	cr_assert_eq(e->end - e->start >= 8192, 1);

	for (size_t i = 1; i < m.nr; i++)
		cr_assert_geq(m.entries[i].start, m.entries[i - 1].end);
	procmaps_release(&m);
	munmap(anon, 8192);
	(void)here();
}

Test(procmaps, real_deleted_file)
{
	char path[PATH_MAX + 32], want[PATH_MAX + 64];
	const struct procmaps_entry *e;
	struct procmaps m;
	void *p;
	int fd;

	snprintf(path, sizeof(path), "%s/code with space", root);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0755);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 4096), 0);
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	cr_assert_neq(p, MAP_FAILED, "mmap exec: %s", strerror(errno));
	close(fd);
	cr_assert_eq(unlink(path), 0);

	cr_assert_eq(procmaps_read("/proc", (uint32_t)getpid(), 0, &m), 0);
	e = find(&m, (uint64_t)(uintptr_t)p);
	cr_assert_not_null(e);
	snprintf(want, sizeof(want), "%s (deleted)", path);
	cr_assert_str_eq(e->path, want);
	procmaps_release(&m);
	munmap(p, 4096);
}

Test(procmaps, exited_process)
{
	struct procmaps m;
	siginfo_t si;
	pid_t pid = fork();
	int err;

	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(0);
	/* A zombie: /proc/PID exists, its address space is gone. */
	cr_assert_eq(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	err = procmaps_read(NULL, (uint32_t)pid, 0, &m);
	cr_assert(err == 0 || err == -ESRCH || err == -ENOENT, "zombie: %d", err);
	cr_assert_eq(m.nr, 0);
	procmaps_release(&m);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	/* Reaped: gone. */
	cr_assert_eq(procmaps_read(NULL, (uint32_t)pid, 0, &m), -ENOENT);
	procmaps_release(&m);
}

Test(procmaps, modules_dep)
{
	static const char dep[] =
		"kernel/fs/xfs/xfs.ko.xz: kernel/lib/libcrc32c.ko.xz\n"
		"kernel/sound/pci/hda/snd-hda-intel.ko: kernel/sound/core/snd.ko\n"
		"updates/dup.ko.zst:\n"
		"kernel/dup.ko:\n"
		"/abs/path/abs_mod.ko.gz:\n"
		"nonsense line\n"
		"kernel/notamodule.txt:\n"
		"kernel/fs/ext4/ext4.ko:";	/* no final newline */
	char path[PATH_MAX + 16], want[PATH_MAX + 64];
	struct kmod_paths *k;

	snprintf(path, sizeof(path), "%s/modules.dep", root);
	write_file(path, dep, sizeof(dep) - 1);
	cr_assert_eq(kmod_paths_load(root, &k), 0);

	snprintf(want, sizeof(want), "%s/kernel/fs/xfs/xfs.ko.xz", root);
	cr_assert_str_eq(kmod_paths_find(k, "xfs"), want);
	snprintf(want, sizeof(want), "%s/kernel/sound/pci/hda/snd-hda-intel.ko", root);
	cr_assert_str_eq(kmod_paths_find(k, "snd_hda_intel"), want);
	cr_assert_str_eq(kmod_paths_find(k, "snd-hda-intel"), want);
	snprintf(want, sizeof(want), "%s/updates/dup.ko.zst", root);
	cr_assert_str_eq(kmod_paths_find(k, "dup"), want);
	cr_assert_str_eq(kmod_paths_find(k, "abs_mod"), "/abs/path/abs_mod.ko.gz");
	snprintf(want, sizeof(want), "%s/kernel/fs/ext4/ext4.ko", root);
	cr_assert_str_eq(kmod_paths_find(k, "ext4"), want);
	cr_assert_null(kmod_paths_find(k, "libcrc32c"));	/* only a dependency */
	cr_assert_null(kmod_paths_find(k, "notamodule"));
	cr_assert_null(kmod_paths_find(k, "missing"));
	kmod_paths_free(k);
}

Test(procmaps, modules_dep_missing)
{
	char dir[PATH_MAX + 16];
	struct kmod_paths *k;

	snprintf(dir, sizeof(dir), "%s/no-such-release", root);
	cr_assert_eq(kmod_paths_load(dir, &k), 0);
	cr_assert_null(kmod_paths_find(k, "xfs"));
	kmod_paths_free(k);
}
