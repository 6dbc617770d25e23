// SPDX-License-Identifier: MIT
/* debugfind.c - locate and check binaries and debug files (debugfind.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <libelf.h>
#include <zlib.h>

#include "symbolize/buildid.h"
#include "symbolize/debugfind.h"
#include "symbolize/safeopen.h"
#include "symbolize/util.h"
#include "symbolize/vdso.h"

/* What a candidate must be to be used. */
struct want {
	const uint8_t *build_id;	/* NULL: any build-id, or none */
	size_t build_id_size;
	bool check_crc;			/* .gnu_debuglink CRC, when no build-id decides */
	uint32_t crc;
	const struct stat *not_this;	/* the binary itself is no debug file */
};

static int file_crc32(int fd, uint32_t *out)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	off_t off = 0;

	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	*out = (uint32_t)crc;
	return 0;
}

static bool elf_matches(int fd, const struct want *w)
{
	const void *id;
	ssize_t len;
	bool ok = true;
	Elf *elf;

	if (elf_open_fd(fd, &elf))
		return false;
	if (w->build_id) {
		len = dwelf_elf_gnu_build_id(elf, &id);
		ok = len > 0 && (size_t)len == w->build_id_size &&
		     !memcmp(id, w->build_id, w->build_id_size);
	}
	elf_end(elf);
	return ok;
}

/* Open path if it is what w asks for. 0, or -ENOENT for any mismatch. */
static int try_candidate(const char *path, const struct want *w, struct found_file *out)
{
	struct stat st;
	uint32_t crc;
	int fd;

	if (!path)
		return -ENOMEM;
	/* Regular files only, looked at before they are opened. */
	if (safeopen(-1, path, NULL, &fd, &st))
		return -ENOENT;
	if (w->not_this && st.st_dev == w->not_this->st_dev && st.st_ino == w->not_this->st_ino)
		goto mismatch;
	if (!elf_matches(fd, w))
		goto mismatch;
	if (w->check_crc && (file_crc32(fd, &crc) || crc != w->crc))
		goto mismatch;
	out->path = strdup(path);
	if (!out->path) {
		close(fd);
		return -ENOMEM;
	}
	out->fd = fd;
	return 0;
mismatch:
	close(fd);
	return -ENOENT;
}

/* Try a malloc'd path and free it. */
static int try_owned(char *path, const struct want *w, struct found_file *out)
{
	int err = try_candidate(path, w, out);

	free(path);
	return err;
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

/* <debug_dir>/.build-id/xx/rest.debug */
static char *debug_dir_build_id_path(const struct debug_paths *dp, const char *hex)
{
	char xx[3] = { hex[0], hex[1], '\0' };

	return str_join(dp->debug_dir, "/.build-id/", xx, "/", hex + 2, ".debug", NULL);
}

/* $HOME/.debug/.build-id/xx/rest/<leaf> (perf's build-id cache), or NULL */
static char *home_cache_path(const struct debug_paths *dp, const char *hex, const char *leaf)
{
	char xx[3] = { hex[0], hex[1], '\0' };

	if (!dp->home)
		return NULL;
	return str_join(dp->home, "/.debug/.build-id/", xx, "/", hex + 2, "/", leaf, NULL);
}

/* perf's cache (.../<id>/vdso), else this process's own vDSO if it matches. */
static int find_vdso(const struct debug_paths *dp, const struct want *w, struct found_file *out)
{
	char hex[2 * BUILDID_MAX + 1];
	char *p;
	int fd;

	if (w->build_id) {
		buildid_to_hex(w->build_id, w->build_id_size, hex);
		p = home_cache_path(dp, hex, "vdso");
		if (p && !try_owned(p, w, out))
			return 0;
	}
	if (vdso_open_self(&fd))
		return -ENOENT;
	if (!elf_matches(fd, w) || !(out->path = strdup("[vdso]"))) {
		close(fd);
		return -ENOENT;
	}
	out->fd = fd;
	return 0;
}

int found_file_dup(const struct found_file *f, struct found_file *out)
{
	out->fd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
	if (out->fd < 0)
		return -errno;
	out->path = strdup(f->path);
	if (!out->path) {
		close(out->fd);
		return -ENOMEM;
	}
	return 0;
}

int debugfind_binary(const struct debug_paths *dp, const char *path, const uint8_t *build_id,
		     size_t build_id_size, struct found_file *out)
{
	struct want w = { .build_id = build_id, .build_id_size = build_id_size };
	char hex[2 * BUILDID_MAX + 1];
	char *p;

	if (build_id && (!build_id_size || build_id_size > BUILDID_MAX))
		return -EINVAL;
	if (!strcmp(path, "[vdso]"))
		return find_vdso(dp, &w, out);
	if (!try_owned(str_join(dp->symfs, path, NULL), &w, out))
		return 0;
	if (!build_id)
		return -ENOENT;
	buildid_to_hex(build_id, build_id_size, hex);
	/* The real binary first: its program headers still map file offsets. */
	p = home_cache_path(dp, hex, "elf");
	if (p && !try_owned(p, &w, out))
		return 0;
	if (!try_owned(debug_dir_build_id_path(dp, hex), &w, out))
		return 0;
	p = home_cache_path(dp, hex, "debug");
	if (p && !try_owned(p, &w, out))
		return 0;
	return -ENOENT;
}

int debugfind_debuginfo(const struct debug_paths *dp, const char *orig_path,
			const char *binary_path, const uint8_t *build_id, size_t build_id_size,
			const char *debuglink, uint32_t crc, struct found_file *out)
{
	struct want w = { .build_id = build_id, .build_id_size = build_id_size };
	char hex[2 * BUILDID_MAX + 1];
	struct stat binary_st;
	char *p;

	if (!stat(binary_path, &binary_st))
		w.not_this = &binary_st;
	if (debuglink && *debuglink && !strchr(debuglink, '/')) {
		char *host = str_join(dp->symfs, orig_path, NULL);
		char *host_dir = host ? dir_of(host) : NULL;
		char *orig_dir = dir_of(orig_path);
		int err = -ENOENT;

		w.check_crc = !build_id;
		w.crc = crc;
		if (host_dir && orig_dir) {
			err = try_owned(str_join(host_dir, "/", debuglink, NULL), &w, out);
			if (err)
				err = try_owned(str_join(host_dir, "/.debug/", debuglink, NULL), &w, out);
			if (err && orig_dir[0] == '/')
				err = try_owned(str_join(dp->debug_dir, orig_dir, "/", debuglink, NULL),
						&w, out);
		}
		free(host);
		free(host_dir);
		free(orig_dir);
		if (!err)
			return 0;
		w.check_crc = false;
	}
	if (!build_id)
		return -ENOENT;
	buildid_to_hex(build_id, build_id_size, hex);
	if (!try_owned(debug_dir_build_id_path(dp, hex), &w, out))
		return 0;
	p = home_cache_path(dp, hex, "debug");
	if (p && !try_owned(p, &w, out))
		return 0;
	p = home_cache_path(dp, hex, "elf");
	if (p && !try_owned(p, &w, out))
		return 0;
	return -ENOENT;
}

/* The build-id stored in a file's .gnu_debugaltlink ("name\0id"). */
static int read_altlink_id(const char *path, uint8_t id[BUILDID_MAX], size_t *size)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int fd, err = -ENOENT;
	Elf *elf;

	err = elf_open_path(path, &fd, &elf);
	if (err)
		return err;
	err = -ENOENT;
	if (elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		const char *name, *nul;
		Elf_Data *data;
		size_t len;

		if (!gelf_getshdr(scn, &shdr))
			break;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (!name || strcmp(name, ".gnu_debugaltlink"))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || !(nul = memchr(data->d_buf, '\0', data->d_size)))
			break;
		len = data->d_size - (size_t)(nul + 1 - (const char *)data->d_buf);
		if (len < 2 || len > BUILDID_MAX)
			break;
		memcpy(id, nul + 1, len);
		*size = len;
		err = 0;
		break;
	}
out:
	elf_end(elf);
	close(fd);
	return err;
}

int debugfind_altfile(const struct debug_paths *dp, const char *referrer_path,
		      const char *altname, struct found_file *out)
{
	uint8_t id[BUILDID_MAX];
	char hex[2 * BUILDID_MAX + 1];
	struct want w = { .build_id = id };
	char *dir;
	int err;

	if (read_altlink_id(referrer_path, id, &w.build_id_size))
		return -ENOENT;
	if (altname[0] == '/') {
		err = try_owned(str_join(dp->symfs, altname, NULL), &w, out);
	} else {
		dir = dir_of(referrer_path);
		err = dir ? try_owned(str_join(dir, "/", altname, NULL), &w, out) : -ENOMEM;
		free(dir);
	}
	if (!err)
		return 0;
	buildid_to_hex(id, w.build_id_size, hex);
	return try_owned(debug_dir_build_id_path(dp, hex), &w, out);
}
