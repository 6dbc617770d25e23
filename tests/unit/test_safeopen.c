// SPDX-License-Identifier: MIT
/*
 * test_safeopen.c - opening files a traced process names: what is refused
 * (symlinks out of a container's root, another inode, FIFOs, someone
 * else's perf map) and what is still found (map_files, a chroot's paths).
 * A temporary tree stands for /proc and for a container's root.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbolize/buildid.h"
#include "symbolize/jitmap.h"
#include "symbolize/safeopen.h"
#include "tests/unit/test_fixture.h"

#define FMT(buf, ...) cr_assert_lt(snprintf(buf, sizeof(buf), __VA_ARGS__), (int)sizeof(buf))

static char dir[256];		/* everything of one test lives here */
static char exe[PATH_MAX];	/* this test binary: a "host" file with a build-id */
static struct stat exe_st;

static char *at(const char *rel);

static void setup(void)
{
	FMT(dir, "/tmp/bpfrec-safeopen.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	self_exe(exe, sizeof(exe));
	cr_assert_eq(stat(exe, &exe_st), 0);
}

static void teardown(void)
{
	char cmd[300];

	/* What a failed overlayfs test left mounted (in its own mount namespace). */
	umount2(at("merged"), MNT_DETACH);
	umount2(at("lowerfs"), MNT_DETACH);
	FMT(cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(safeopen, .init = setup, .fini = teardown);

static char *at(const char *rel)
{
	static char bufs[4][PATH_MAX];
	static int next;
	char *p = bufs[next++ % 4];

	cr_assert_lt(snprintf(p, PATH_MAX, "%s/%s", dir, rel), PATH_MAX);
	return p;
}

static void copy_file(const char *from, const char *to)
{
	char cmd[3 * PATH_MAX];

	FMT(cmd, "cp '%s' '%s'", from, to);
	cr_assert_eq(system(cmd), 0);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "fopen %s: %s", path, strerror(errno));
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

Test(safeopen, a_regular_file_opens_and_its_checks_hold)
{
	struct safeopen_want w = { .check_dev = true, .dev = exe_st.st_dev,
				   .check_ino = true, .ino = exe_st.st_ino };
	struct stat st;
	int fd;

	cr_assert_eq(safeopen(-1, exe, &w, &fd, &st), 0);
	cr_assert_eq(st.st_ino, exe_st.st_ino);
	cr_assert_eq(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	close(fd);
	/* Another inode than the one asked for: not opened. */
	w.ino++;
	cr_assert_eq(safeopen(-1, exe, &w, &fd, NULL), -ESTALE);
	w.ino--;
	w.dev = makedev(major(exe_st.st_dev) + 1, minor(exe_st.st_dev));
	cr_assert_eq(safeopen(-1, exe, &w, &fd, NULL), -ESTALE);
	/* Over the size bound. */
	w = (struct safeopen_want){ .max_size = (uint64_t)exe_st.st_size - 1 };
	cr_assert_eq(safeopen(-1, exe, &w, &fd, NULL), -EFBIG);
}

Test(safeopen, fifos_directories_and_devices_are_not_opened)
{
	int fd = -1;

	cr_assert_eq(mkfifo(at("fifo"), 0600), 0);
	/* Would block forever with a plain open(O_RDONLY) and no writer. */
	cr_assert_eq(safeopen(-1, at("fifo"), NULL, &fd, NULL), -EINVAL);
	cr_assert_eq(safeopen(-1, dir, NULL, &fd, NULL), -EINVAL);
	cr_assert_eq(safeopen(-1, "/dev/null", NULL, &fd, NULL), -EINVAL);
	cr_assert_eq(fd, -1);
}

Test(safeopen, an_absolute_symlink_in_a_root_stays_in_that_root)
{
	int root_fd, fd = -1;

	/* A container whose /app points at a host file, and one at a host secret. */
	cr_assert_eq(mkdir(at("ctr"), 0755), 0);
	cr_assert_eq(symlink(exe, at("ctr/app")), 0);
	cr_assert_eq(symlink("/etc/passwd", at("ctr/passwd")), 0);
	root_fd = open(at("ctr"), O_PATH | O_DIRECTORY);
	cr_assert_geq(root_fd, 0);
	cr_assert_eq(safeopen(root_fd, "/app", NULL, &fd, NULL), -ENOENT);
	cr_assert_eq(safeopen(root_fd, "/passwd", NULL, &fd, NULL), -ENOENT);
	/* Nor can ".." climb out of it. */
	cr_assert_eq(safeopen(root_fd, "/../../../../etc/passwd", NULL, &fd, NULL), -ENOENT);
	/* Inside the root, a file of the root opens. */
	copy_file(exe, at("ctr/real"));
	cr_assert_eq(symlink("/real", at("ctr/link")), 0);
	cr_assert_eq(safeopen(root_fd, "/link", NULL, &fd, NULL), 0);
	close(fd);
	close(root_fd);
}

Test(safeopen, no_follow_refuses_a_symlink)
{
	struct safeopen_want w = { .no_follow = true };
	int fd = -1;

	cr_assert_eq(symlink(exe, at("link")), 0);
	cr_assert_eq(safeopen(-1, at("link"), &w, &fd, NULL), -ELOOP);
	cr_assert_eq(safeopen(-1, at("link"), NULL, &fd, NULL), 0);
	close(fd);
}

/* ---- safeopen_mapped against a fake /proc --------------------------------- */

/* proc/PID with root -> target. */
static void fake_pid(unsigned int pid, const char *root_target)
{
	char p[PATH_MAX];

	mkdir(at("proc"), 0755);
	FMT(p, "%s/proc/%u", dir, pid);
	cr_assert_eq(mkdir(p, 0755), 0);
	FMT(p, "%s/proc/%u/root", dir, pid);
	cr_assert_eq(symlink(root_target, p), 0);
}

static int mapped(unsigned int pid, const char *path, const struct stat *st, int *fd)
{
	return safeopen_mapped(at("proc"), pid, 0x400000, 0x401000, path, major(st->st_dev),
			       minor(st->st_dev), st->st_ino, fd, NULL);
}

Test(safeopen, mapped_file_is_not_a_host_file_a_container_links_to)
{
	uint8_t id[BUILDID_MAX], host_id[BUILDID_MAX];
	size_t size, host_size;
	int fd = -1;

	/*
	 * The container's /app is a symlink to the host's binary and the maps
	 * line claims that binary's device and inode: the old fallback through
	 * /proc/PID/root<path> followed it to the host file.
	 */
	cr_assert_eq(mkdir(at("ctr"), 0755), 0);
	cr_assert_eq(symlink(exe, at("ctr/app")), 0);
	fake_pid(10, at("ctr"));
	cr_assert_neq(mapped(10, "/app", &exe_st, &fd), 0);
	cr_assert_eq(fd, -1);
	/* The same file name as on the host: still the container's file, or nothing. */
	cr_assert_eq(mkdir(at("ctr/bin"), 0755), 0);
	cr_assert_eq(buildid_read_file(exe, host_id, &host_size), 0);
	write_text(at("ctr/bin/app"), "not the host's binary\n");
	fake_pid(11, at("ctr"));
	cr_assert_eq(mapped(11, "/bin/app", &exe_st, &fd), -ESTALE);
	/* A copy inside the container with its own device and inode is found. */
	{
		struct stat st;

		copy_file(exe, at("ctr/bin/app"));
		cr_assert_eq(stat(at("ctr/bin/app"), &st), 0);
		cr_assert_eq(mapped(11, "/bin/app", &st, &fd), 0);
		cr_assert_eq(buildid_read_fd(fd, id, &size), 0);
		cr_assert_eq(size, host_size);
		close(fd);
	}
}

Test(safeopen, mapped_file_of_a_chroot_and_through_map_files)
{
	char path[PATH_MAX], mf[PATH_MAX];
	struct stat st, other;
	int fd = -1;

	/* A chroot in our mount namespace: maps prints OUR path of its files. */
	cr_assert_eq(mkdir(at("ctr"), 0755), 0);
	cr_assert_eq(mkdir(at("ctr/bin"), 0755), 0);
	copy_file(exe, at("ctr/bin/app"));
	cr_assert_eq(stat(at("ctr/bin/app"), &st), 0);
	fake_pid(20, at("ctr"));
	FMT(path, "%s", at("ctr/bin/app"));
	cr_assert_eq(mapped(20, path, &st, &fd), 0);
	close(fd);
	/* Deleted: only map_files can give it, and it must be the same inode. */
	FMT(path, "%s (deleted)", at("ctr/bin/app"));
	cr_assert_neq(mapped(20, path, &st, &fd), 0);
	FMT(mf, "%s/proc/20/map_files", dir);
	cr_assert_eq(mkdir(mf, 0755), 0);
	FMT(mf, "%s/proc/20/map_files/400000-401000", dir);
	cr_assert_eq(symlink(at("ctr/bin/app"), mf), 0);
	cr_assert_eq(mapped(20, path, &st, &fd), 0);
	close(fd);
	copy_file(exe, at("other"));
	cr_assert_eq(stat(at("other"), &other), 0);
	cr_assert_eq(mapped(20, path, &other, &fd), -ESTALE);
}

Test(safeopen, mapped_file_of_a_process_gone_only_with_the_reported_inode)
{
	struct stat st, other;
	int fd = -1;

	/* No proc/PID at all: the kernel reported the mapping, the process exited. */
	copy_file(exe, at("app"));
	copy_file(exe, at("other"));
	cr_assert_eq(stat(at("app"), &st), 0);
	cr_assert_eq(stat(at("other"), &other), 0);
	mkdir(at("proc"), 0755);
	cr_assert_eq(mapped(30, at("app"), &st, &fd), 0, "the very file it mapped");
	close(fd);
	fd = -1;
	/* The same name now holds another file (replaced, or another namespace's). */
	cr_assert_eq(mapped(30, at("app"), &other, &fd), -ESTALE);
	cr_assert_eq(fd, -1);
	/* A FIFO planted under the name is never opened for reading. */
	cr_assert_eq(unlink(at("app")), 0);
	cr_assert_eq(mkfifo(at("app"), 0600), 0);
	cr_assert_neq(mapped(30, at("app"), &st, &fd), 0);
	cr_assert_eq(fd, -1);
}

/* The maps line of this process's mapping of path (our own /proc): 0 or -ENOENT. */
static int maps_line_of(pid_t pid, const char *path, uint64_t *start, uint64_t *end,
			dev_t *dev, uint64_t *ino)
{
	char name[64], line[PATH_MAX + 128], p[PATH_MAX];
	unsigned int maj, min;
	FILE *f;
	int err = -ENOENT;

	FMT(name, "/proc/%d/maps", (int)pid);
	f = fopen(name, "r");
	cr_assert_not_null(f);
	while (err && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %*x %x:%x %" SCNu64 " %4095s", start,
			   end, &maj, &min, ino, p) == 6 && !strcmp(p, path)) {
			*dev = makedev(maj, min);
			err = 0;
		}
	}
	fclose(f);
	return err;
}

/* No proc root given: the real /proc, never "(null)/PID/map_files". */
Test(safeopen, mapped_with_no_proc_root_is_proc)
{
	uint64_t start, end, ino;
	int fd = -1, mf_err = 0;
	dev_t dev;

	cr_assert_eq(maps_line_of(getpid(), exe, &start, &end, &dev, &ino), 0);
	cr_assert_eq(safeopen_mapped(NULL, (uint32_t)getpid(), start, end, exe, major(dev),
				     minor(dev), ino, &fd, &mf_err), 0);
	close(fd);
	/* Found, or refused for want of a capability: not a path that does not exist. */
	cr_assert_neq(mf_err, -ENOENT, "map_files was looked up under another root");
}

/*
 * A child that maps path and waits; its pid. Its maps line is what a
 * traced process shows.
 */
static pid_t map_in_child(const char *path)
{
	int pipefd[2];
	pid_t pid;
	char c;

	cr_assert_eq(pipe(pipefd), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		int fd = open(path, O_RDONLY);

		/* Gone with the test, even one that fails before killing it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);

		if (fd < 0 || mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
			_exit(1);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	cr_assert_eq(read(pipefd[0], &c, 1), 1, "the child could not map %s", path);
	close(pipefd[0]);
	return pid;
}

/*
 * An overlayfs whose lower layer is on another filesystem (a container
 * image, a live system's root): stat() names its files by a per-layer
 * device, /proc/PID/maps otherwise. With map_files closed (no
 * CAP_CHECKPOINT_RESTORE) the file is still found by its path in the
 * process's root, and only the very file mapped.
 */
Test(safeopen, mapped_file_on_overlayfs_by_the_kernels_name)
{
	char opts[4 * PATH_MAX], merged[PATH_MAX];
	uint64_t start, end, ino;
	struct stat st, got;
	int fd = -1;
	dev_t dev;
	pid_t child;

	/* Our own mount namespace: nothing stays mounted if the test fails. */
	if (geteuid() != 0 || unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		cr_skip_test("needs root to mount an overlayfs");
	cr_assert_eq(mkdir(at("lowerfs"), 0755), 0);
	cr_assert_eq(mount("tmpfs", at("lowerfs"), "tmpfs", 0, NULL), 0);
	cr_assert_eq(mkdir(at("lowerfs/lower"), 0755), 0);
	copy_file(exe, at("lowerfs/lower/lib.so"));
	copy_file(exe, at("lowerfs/lower/other.so"));
	cr_assert_eq(mkdir(at("upper"), 0755), 0);
	cr_assert_eq(mkdir(at("work"), 0755), 0);
	cr_assert_eq(mkdir(at("merged"), 0755), 0);
	FMT(opts, "lowerdir=%s,upperdir=%s,workdir=%s", at("lowerfs/lower"), at("upper"),
	    at("work"));
	if (mount("overlay", at("merged"), "overlay", 0, opts))
		cr_skip_test("no overlayfs here: %s", strerror(errno));

	FMT(merged, "%s", at("merged/lib.so"));
	child = map_in_child(merged);
	cr_assert_eq(maps_line_of(child, merged, &start, &end, &dev, &ino), 0);
	cr_assert_eq(stat(merged, &st), 0);
	cr_assert(st.st_dev != dev || st.st_ino != ino,
		  "stat() and maps agree here: nothing to test");
	/* Our proc with the child's root and no map_files. */
	fake_pid((unsigned int)child, "/");
	cr_assert_eq(safeopen_mapped(at("proc"), (uint32_t)child, start, end, merged, major(dev),
				     minor(dev), ino, &fd, NULL), 0);
	cr_assert_eq(fstat(fd, &got), 0);
	cr_assert_eq(got.st_ino, st.st_ino);
	cr_assert_eq(got.st_dev, st.st_dev);
	close(fd);
	fd = -1;
	/* Another file of the same overlay under the mapped one's name: refused. */
	cr_assert_eq(safeopen_mapped(at("proc"), (uint32_t)child, start, end,
				     at("merged/other.so"), major(dev), minor(dev), ino, &fd, NULL),
		     -ESTALE);
	cr_assert_eq(fd, -1);
	/* The real /proc (map_files, as root) finds it too. */
	cr_assert_eq(safeopen_mapped(NULL, (uint32_t)child, start, end, merged, major(dev),
				     minor(dev), ino, &fd, NULL), 0);
	close(fd);

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	cr_assert_eq(umount2(at("merged"), MNT_DETACH), 0);
	cr_assert_eq(umount2(at("lowerfs"), MNT_DETACH), 0);
}

/* ---- perf maps ------------------------------------------------------------------ */

Test(safeopen, perf_map_must_be_a_plain_file_of_its_owner)
{
	struct jitmap *jm = NULL;
	uid_t me = geteuid();

	write_text(at("perf-1.map"), "1000 10 fn\n");
	cr_assert_eq(jitmap_load(at("perf-1.map"), me, &jm), 0);
	jitmap_free(jm);
	/* Owned by neither the reader nor root. */
	if (me == 0)
		cr_assert_eq(chown(at("perf-1.map"), 4321, 4321), 0);
	cr_assert_eq(jitmap_load(at("perf-1.map"), me == 0 ? 0 : me + 1, &jm), -EPERM);
	/* A FIFO (would block), a symlink to a secret, a hard link: never read. */
	cr_assert_eq(mkfifo(at("perf-2.map"), 0600), 0);
	cr_assert_eq(jitmap_load(at("perf-2.map"), me, &jm), -EINVAL);
	write_text(at("secret"), "2000 10 secret\n");
	cr_assert_eq(symlink(at("secret"), at("perf-3.map")), 0);
	cr_assert_eq(jitmap_load(at("perf-3.map"), me, &jm), -ELOOP);
	cr_assert_eq(link(at("secret"), at("perf-4.map")), 0);
	cr_assert_eq(jitmap_load(at("perf-4.map"), me, &jm), -EPERM);
	cr_assert_eq(jitmap_load(at("perf-5.map"), me, &jm), -ENOENT);
}
