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

struct jitmap;

/* 0, -ENOENT when the file does not exist, -errno. An empty map is valid. */
int jitmap_load(const char *path, struct jitmap **out);
void jitmap_free(struct jitmap *jm);
/* The entry containing addr: 0 and its name (lives as long as jm), or -ENOENT. */
int jitmap_lookup(const struct jitmap *jm, uint64_t addr, const char **name, uint64_t *offset);

#endif /* SYMBOLIZE_JITMAP_H */
