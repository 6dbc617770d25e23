/* SPDX-License-Identifier: MIT */
/*
 * jitmap.h - symbols of JIT-compiled code from a perf map file (internal).
 *
 * JITs (V8/node --perf-basic-prof, the JVM with perf-map-agent, LuaJIT,
 * .NET, ...) write /tmp/perf-PID.map: one symbol per line, "START SIZE NAME"
 * with START and SIZE in hex (an 0x prefix is accepted) and NAME the rest of
 * the line, spaces included. Lines that do not parse are skipped, as perf
 * does. When code is regenerated at the same place the file holds several
 * entries for one address: the one written last wins.
 */
#ifndef SYMBOLIZE_JITMAP_H
#define SYMBOLIZE_JITMAP_H

#include <stdint.h>
#include <sys/types.h>

struct jitmap;

/* Larger perf maps are not read (-EFBIG). */
#define JITMAP_MAX_BYTES (512ull << 20)

/*
 * Read a perf map, if it is safe to: a regular file (not a symlink, FIFO or
 * device), owned by owner or root with a single link (perf's rule, which
 * keeps a planted /tmp/perf-PID.map or a hard link to a secret out), at
 * most JITMAP_MAX_BYTES. 0; -ENOENT when it does not exist; -EPERM, -ELOOP,
 * -EINVAL, -EFBIG when it fails those checks; -errno. An empty map is valid.
 */
int jitmap_load(const char *path, uid_t owner, struct jitmap **out);
void jitmap_free(struct jitmap *jm);
/* The entry containing addr: 0 and its name (lives as long as jm), or -ENOENT. */
int jitmap_lookup(const struct jitmap *jm, uint64_t addr, const char **name, uint64_t *offset);

#endif /* SYMBOLIZE_JITMAP_H */
