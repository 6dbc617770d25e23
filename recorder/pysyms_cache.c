// SPDX-License-Identifier: MIT
/* pysyms_cache.c - a Python symbol file into the build-id cache (see pysyms_cache.h). */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "recorder/buildid_cache.h"
#include "recorder/pysyms_cache.h"

int py_symfile_cache(struct py_symfile *sf, struct buildid_cache *cache, const char *path,
		     const uint8_t build_id[PY_SYMFILE_BUILD_ID_SIZE])
{
	int fd, err;

	fd = memfd_create("bpfrec-pysyms", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = py_symfile_write_id(sf, path, fd, build_id);
	if (err) {
		close(fd);
		return err;
	}
	return buildid_cache_put(cache, path, build_id, PY_SYMFILE_BUILD_ID_SIZE, fd);	/* takes fd */
}
