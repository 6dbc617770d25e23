// SPDX-License-Identifier: MIT
/* safeopen.c - look at a file before opening it (safeopen.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/magic.h>
#include <linux/openat2.h>

#include "symbolize/safeopen.h"

/* An O_PATH fd for path: nothing is really opened yet. */
static int path_fd(int root_fd, const char *path, bool no_follow)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (no_follow ? O_NOFOLLOW : 0),
		.resolve = RESOLVE_NO_MAGICLINKS | (root_fd >= 0 ? RESOLVE_IN_ROOT : 0),
	};
	long fd;

	/* glibc 2.36 has no openat2() wrapper. */
	fd = syscall(SYS_openat2, root_fd >= 0 ? root_fd : AT_FDCWD, path, &how, sizeof(how));
	if (fd >= 0)
		return (int)fd;
	/* Before Linux 5.6 there is no openat2: only a plain lookup is possible. */
	if (errno == ENOSYS && root_fd < 0) {
		fd = open(path, (int)how.flags);
		if (fd >= 0)
			return (int)fd;
	}
	return -errno;
}

static int check(const struct stat *st, const struct safeopen_want *w)
{
	if (S_ISLNK(st->st_mode))
		return -ELOOP;	/* O_PATH | O_NOFOLLOW stopped at a symlink */
	if (!S_ISREG(st->st_mode))
		return -EINVAL;
	if ((w->check_dev && st->st_dev != w->dev) || (w->check_ino && st->st_ino != w->ino))
		return -ESTALE;
	if (w->max_size && (uint64_t)st->st_size > w->max_size)
		return -EFBIG;
	/* perf's rule for its maps, plus one link: no hard link to someone's secret. */
	if (w->check_owner && ((st->st_uid && st->st_uid != w->owner) || st->st_nlink != 1))
		return -EPERM;
	return 0;
}

/* Check the O_PATH fd pfd (consumed), then open the same inode for reading. */
static int finish(int pfd, const struct safeopen_want *w, int *fd, struct stat *out)
{
	char self[64];
	struct stat st;
	int err = 0, rfd;

	if (fstat(pfd, &st))
		err = -errno;
	if (!err)
		err = check(&st, w);
	if (!err) {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
		rfd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (rfd < 0)
			err = -errno;
	}
	close(pfd);
	if (err)
		return err;
	*fd = rfd;
	if (out)
		*out = st;
	return 0;
}

/*
 * Whether stat() may name a file otherwise than /proc/PID/maps does: on
 * overlayfs maps names the layer's file (or, on newer kernels, the
 * overlay's superblock device) while stat() gives a per-layer device and,
 * with xino, another inode; on btrfs stat() gives the subvolume's device.
 */
static bool stat_differs_from_maps(int pfd)
{
	struct statfs sfs;

	if (fstatfs(pfd, &sfs))
		return false;
	return sfs.f_type == (typeof(sfs.f_type))OVERLAYFS_SUPER_MAGIC ||
	       sfs.f_type == (typeof(sfs.f_type))BTRFS_SUPER_MAGIC;
}

/*
 * The (device, inode) that a maps line shows for the file open at fd: the
 * kernel's own name for it, read from our maps line of a moment's mapping
 * of it (nothing is read from the file itself). 0 or -errno.
 */
static int maps_name(int fd, dev_t *dev, uint64_t *ino)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned int maj, min;
	uint64_t start, i;
	char *line = NULL;
	size_t cap = 0;
	int err = -ENOENT;
	void *m;
	FILE *f;

	m = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		err = -errno;
	while (f && getline(&line, &cap, f) > 0) {
		if (sscanf(line, "%" SCNx64 "-%*x %*s %*x %x:%x %" SCNu64, &start, &maj, &min,
			   &i) == 4 && start == (uintptr_t)m) {
			*dev = makedev(maj, min);
			*ino = i;
			err = 0;
			break;
		}
	}
	free(line);
	if (f)
		fclose(f);
	munmap(m, (size_t)page);
	return err;
}

/*
 * As finish(), for the file a maps line names as (w->dev, w->ino). Where
 * stat() disagrees with maps (stat_differs_from_maps()), a regular file
 * that fails only that check is opened (never a FIFO nor a device) and
 * kept only when the kernel names it as maps does: the very file mapped,
 * never another one that merely shares a name or an inode number.
 */
static int finish_mapped(int pfd, const struct safeopen_want *w, int *fd)
{
	struct safeopen_want rest = *w;
	struct stat st;
	uint64_t ino = 0;
	int err, rfd;
	dev_t dev = 0;

	if (fstat(pfd, &st) || check(&st, w) != -ESTALE || !w->check_ino ||
	    !stat_differs_from_maps(pfd))
		return finish(pfd, w, fd, NULL);
	rest.check_dev = rest.check_ino = false;
	err = finish(pfd, &rest, &rfd, NULL);
	if (err)
		return err;
	err = maps_name(rfd, &dev, &ino);
	if (err || ino != w->ino || (w->check_dev && dev != w->dev)) {
		close(rfd);
		return -ESTALE;
	}
	*fd = rfd;
	return 0;
}

/* safeopen() of path as the file a maps line names (finish_mapped()). */
static int safeopen_as_mapped(int root_fd, const char *path, const struct safeopen_want *w,
			      int *fd)
{
	int pfd = path_fd(root_fd, path, false);

	return pfd < 0 ? pfd : finish_mapped(pfd, w, fd);
}

int safeopen(int root_fd, const char *path, const struct safeopen_want *w, int *fd,
	     struct stat *st)
{
	static const struct safeopen_want any;
	int pfd;

	if (!w)
		w = &any;
	pfd = path_fd(root_fd, path, w->no_follow);
	if (pfd < 0)
		return pfd;
	return finish(pfd, w, fd, st);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* Of two failures, the one that says "found, but another file". */
static int worse(int a, int b)
{
	return a == -ESTALE || b == -ESTALE ? -ESTALE : b;
}

int safeopen_mapped(const char *proc_root, uint32_t pid, uint64_t start, uint64_t end,
		    const char *path, uint32_t maj, uint32_t min, uint64_t ino, int *fd,
		    int *map_files_err)
{
	struct safeopen_want w = { .check_dev = true, .dev = makedev(maj, min),
				   .check_ino = true, .ino = ino };
	struct safeopen_want same_inode = { .check_ino = true, .ino = ino };
	char p[PATH_MAX], root_path[PATH_MAX];
	int pfd, root_fd, err = -ENOENT;
	ssize_t n;

	if (!proc_root)
		proc_root = "/proc";
	if (snprintf(p, sizeof(p), "%s/%" PRIu32 "/map_files/%" PRIx64 "-%" PRIx64, proc_root,
		     pid, start, end) < (int)sizeof(p)) {
		/*
		 * A magic link to the mapping itself: opened directly. Its
		 * st_dev may differ from the maps line's where the kernel
		 * prints the superblock's device and stat() another (btrfs
		 * subvolumes): the inode decides here (and on overlayfs with
		 * xino, where even that differs, the kernel's name for it).
		 */
		pfd = open(p, O_PATH | O_CLOEXEC);
		if (pfd < 0)
			err = -errno;
		else
			err = finish_mapped(pfd, &same_inode, fd);
		if (map_files_err)
			*map_files_err = err;
		if (!err)
			return 0;
	}
	if (path[0] != '/' || ends_with(path, " (deleted)"))
		return err;
	if (snprintf(p, sizeof(p), "%s/%" PRIu32 "/root", proc_root, pid) >= (int)sizeof(p))
		return err;
	root_fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0) {
		/*
		 * The process is gone (its mappings came from the kernel's
		 * reports): only the very file it mapped will do, so the path
		 * in our root counts when device and inode are the ones the
		 * kernel reported. In another mount namespace that is another
		 * file, or none: no build-id, never a wrong one.
		 */
		if (ino && (errno == ENOENT || errno == ESRCH))
			err = worse(err, safeopen_as_mapped(-1, path, &w, fd));
		return err;
	}
	err = worse(err, safeopen_as_mapped(root_fd, path, &w, fd));
	if (err) {
		/* A chroot: maps prints our view of the path, ROOT/path. */
		n = readlink(p, root_path, sizeof(root_path) - 1);
		if (n > 1) {
			root_path[n] = '\0';
			if (!strncmp(path, root_path, (size_t)n) && path[n] == '/')
				err = worse(err, safeopen_as_mapped(root_fd, path + n, &w,
								       fd));
		}
	}
	close(root_fd);
	return err;
}
