/* SPDX-License-Identifier: MIT */
/*
 * pysyms_cache.h - put a Python symbol file (symbolize/pysyms.h) into
 * perf's build-id cache, where perf report, perf script, hotspot and
 * bpfrec pprof find it by the build-id of its MMAP2, on this machine or
 * on another one that has the perf.data and the cache.
 *
 * The file never exists on disk under its recorded name: it is written
 * into a memfd, which recorder/buildid_cache.h copies at once
 * (buildid_cache_put()), over an earlier copy of the same file, to
 *   DIR/proc/version/bpfrec-python-PID-SEQ/<build-id>/elf
 *   DIR/.build-id/<2 hex>/<38 hex> -> ../../proc/version/bpfrec-python-PID-SEQ/<build-id>
 * The path is written into the file (py_symfile_write()'s name), so each
 * process's file has a cache entry under its path of its own.
 */
#ifndef RECORDER_PYSYMS_CACHE_H
#define RECORDER_PYSYMS_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbolize/pysyms.h"

struct buildid_cache;

/*
 * Write sf under build_id into cache as the file recorded as path
 * (py_symfile_path()), replacing what the cache has under build_id: the
 * build-id its MMAP2 and the BUILD_ID feature carry, which the recorder
 * chose before the file was complete (py_symfile_write_id()), so a file
 * that has grown since is filed again under it. 0 or -errno
 * (memfd_create, the write, the copy: the cache counts and tells its own
 * failures, buildid_cache_stats()).
 */
int py_symfile_cache(struct py_symfile *sf, struct buildid_cache *cache, const char *path,
		     const uint8_t build_id[PY_SYMFILE_BUILD_ID_SIZE]);

#endif /* RECORDER_PYSYMS_CACHE_H */
