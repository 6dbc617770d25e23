/* SPDX-License-Identifier: MIT */
/*
 * buildid.h - GNU build-ids of ELF files and of the running kernel.
 *
 * A build-id is the NT_GNU_BUILD_ID note (usually 20 bytes of SHA-1). perf
 * keys its caches and `perf buildid-list` on it; we use it to tell whether a
 * file on disk is the one that was mapped when a sample was taken.
 */
#ifndef SYMBOLIZE_BUILDID_H
#define SYMBOLIZE_BUILDID_H

#include <stddef.h>
#include <stdint.h>

#define BUILDID_MAX 20

/*
 * Build-id of an ELF file (a regular file only: opened with safeopen.h).
 * 0 and *size set, -ENOENT when it has none, -errno.
 */
int buildid_read_file(const char *path, uint8_t id[BUILDID_MAX], size_t *size);
/* The same for an open file; fd stays open. */
int buildid_read_fd(int fd, uint8_t id[BUILDID_MAX], size_t *size);
/* Build-id from raw ELF notes, as in /sys/kernel/notes (NT_GNU_BUILD_ID, "GNU"). */
int buildid_parse_notes(const void *notes, size_t len, uint8_t id[BUILDID_MAX], size_t *size);
/* Build-id of the running kernel, from notes_path (NULL = /sys/kernel/notes). */
int buildid_read_kernel(const char *notes_path, uint8_t id[BUILDID_MAX], size_t *size);
/* Lower-case hex into out (2*size+1 bytes). Returns out. */
char *buildid_to_hex(const uint8_t *id, size_t size, char *out);

#endif /* SYMBOLIZE_BUILDID_H */
