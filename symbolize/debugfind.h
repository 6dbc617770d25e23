/* SPDX-License-Identifier: MIT */
/*
 * debugfind.h - find the ELF file to read for a recorded mapping and its
 * separate debug info on this machine (internal to the symbolize library).
 *
 * Every candidate is opened and checked before it is used: when a build-id
 * is known (recorded, or read from the binary), a candidate must carry the
 * same one; a .gnu_debuglink target without build-ids must match the CRC.
 * A file that fails the check is skipped, never used "close enough".
 *
 * Paths that come from the recording (mapping paths, the dirs derived from
 * them, the default /usr/lib/debug) are looked up under symfs, as perf's
 * --symfs does. Paths the user gave explicitly (debug_dir) and perf's
 * build-id cache in $HOME/.debug are used as they are, as perf does.
 */
#ifndef SYMBOLIZE_DEBUGFIND_H
#define SYMBOLIZE_DEBUGFIND_H

#include <stddef.h>
#include <stdint.h>

struct debug_paths {
	const char *symfs;	/* "" when none */
	const char *debug_dir;	/* already under symfs when it is the default */
	const char *home;	/* $HOME, or NULL: no build-id cache */
};

/* A candidate that passed the checks: an open fd and the path it came from. */
struct found_file {
	int fd;
	char *path;		/* malloc'd */
};

/*
 * A second handle on a found file for another owner: a duplicate of its
 * fd (the same open file, close-on-exec; nothing is looked up, opened or
 * checked again) and a copy of its path. 0 or -errno.
 */
int found_file_dup(const struct found_file *f, struct found_file *out);

/*
 * The binary for a mapping of `path` (as recorded): symfs+path when it is an
 * ELF file with the recorded build-id (or none was recorded), else the
 * build-id caches: ~/.debug/.build-id/xx/rest/elf, <debug_dir>/.build-id/
 * xx/rest.debug, ~/.debug/.build-id/xx/rest/debug. "[vdso]" is looked
 * for in perf's cache (.../xx/rest/vdso), then taken from this process
 * (same kernel, same vDSO: the build-id decides when one was recorded).
 * 0 or -ENOENT.
 */
int debugfind_binary(const struct debug_paths *dp, const char *path, const uint8_t *build_id,
		     size_t build_id_size, struct found_file *out);

/*
 * Separate debug info for a binary (recorded as orig_path, opened from
 * binary_path, with build-id bid or none, and an optional .gnu_debuglink):
 * the debuglink next to the binary, in .debug/ there, under
 * <debug_dir>/<dir of orig_path>/, then <debug_dir>/.build-id/xx/rest.debug,
 * ~/.debug/.build-id/xx/rest/debug and .../elf. 0 or -ENOENT.
 */
int debugfind_debuginfo(const struct debug_paths *dp, const char *orig_path,
			const char *binary_path, const uint8_t *build_id, size_t build_id_size,
			const char *debuglink, uint32_t crc, struct found_file *out);

/*
 * The dwz "alt" file that referrer_path's .gnu_debugaltlink names (altname,
 * absolute or relative to the referrer), checked against the build-id
 * stored in that section; else <debug_dir>/.build-id for that id. 0 or -ENOENT.
 */
int debugfind_altfile(const struct debug_paths *dp, const char *referrer_path,
		      const char *altname, struct found_file *out);

#endif /* SYMBOLIZE_DEBUGFIND_H */
