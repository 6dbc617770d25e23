/* SPDX-License-Identifier: MIT */
/*
 * safeopen.h - open files named by a traced process or a recording without
 * trusting the name: the one way the recorder and the symbolizer open them.
 *
 * A path from /proc/PID/maps, a perf.data file or a perf map is under
 * someone else's control: the file may have been swapped for a symlink to
 * a host secret, a FIFO that blocks forever, or a device whose open has side
 * effects. So every open here
 *   - first opens with O_PATH (which opens nothing: no FIFO blocks, no
 *     device driver runs), fstat()s, and checks what was asked: a regular
 *     file, optionally the (device, inode) the maps line named, a size
 *     bound, an owner;
 *   - only then opens it for reading (through /proc/self/fd, the same
 *     inode), O_RDONLY | O_NONBLOCK | O_CLOEXEC;
 *   - resolves paths with openat2(): inside a root directory given as an
 *     fd (RESOLVE_IN_ROOT: an absolute symlink in a container resolves
 *     inside the container, not on the host) and never through /proc
 *     magic links (RESOLVE_NO_MAGICLINKS).
 * A file that fails a check is not opened: -ESTALE for a (device, inode)
 * that differs, -EINVAL for anything but a regular file, -EFBIG above the
 * size bound, -EPERM for the wrong owner (or more than one link), -ELOOP
 * for a symlink where none may be.
 */
#ifndef SYMBOLIZE_SAFEOPEN_H
#define SYMBOLIZE_SAFEOPEN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* What the file must be. Zeroed: any regular file. */
struct safeopen_want {
	bool check_dev;		/* must be on this device (a maps line's maj:min) */
	dev_t dev;
	bool check_ino;		/* must be this inode */
	ino_t ino;
	uint64_t max_size;	/* 0: no bound */
	bool check_owner;	/* owned by owner or by root, with one link only */
	uid_t owner;
	bool no_follow;		/* the last component must not be a symlink */
};

/*
 * Open path for reading. root_fd < 0: resolve it as usual (relative to the
 * current directory, symlinks followed except magic links); else resolve it
 * inside root_fd as if it were "/". 0 with *fd (and *st when not NULL), or
 * -errno.
 */
int safeopen(int root_fd, const char *path, const struct safeopen_want *w, int *fd,
	     struct stat *st);

/*
 * The file that a mapping of process pid (a line of <proc_root>/PID/maps:
 * start-end, device maj:min, inode ino, path) maps, for reading; proc_root
 * NULL is "/proc". Tried in order, each checked against (device, inode):
 *   1. <proc_root>/PID/map_files/START-END: the mapping itself, right even
 *      for a deleted file (needs CAP_SYS_ADMIN); the inode only, as stat()
 *      may name another device than maps does (btrfs subvolumes);
 *   2. path inside the process's root (<proc_root>/PID/root);
 *   3. for a chroot in our mount namespace, maps prints paths as seen from
 *      our root: path less the root's own path, inside the process's root.
 *   4. when the process is gone (no <proc_root>/PID/root: its mappings came
 *      from the kernel's reports) and ino is known, path in our own root,
 *      with the same (device, inode) check: only the file it mapped passes.
 * Otherwise there is no try of the bare path: in another mount namespace it
 * is another file. On overlayfs and btrfs, where stat() names a file by
 * another device (overlayfs with xino: another inode too) than maps does,
 * a regular file found there that fails only that check is opened and kept
 * when a mapping of it shows the maps line's (device, inode) in our own
 * maps: the kernel's own name for it. 0 and *fd, or -errno (-ESTALE when only other files were
 * found).
 * *map_files_err (when not NULL) gets what opening map_files gave: a denial
 * there names a missing capability even when the path then worked.
 */
int safeopen_mapped(const char *proc_root, uint32_t pid, uint64_t start, uint64_t end,
		    const char *path, uint32_t maj, uint32_t min, uint64_t ino, int *fd,
		    int *map_files_err);

#endif /* SYMBOLIZE_SAFEOPEN_H */
