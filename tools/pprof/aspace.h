/* SPDX-License-Identifier: MIT */
/*
 * aspace.h - the processes of a recording as its MMAP, MMAP2, COMM and FORK
 * records, replayed in time order, describe them: the converter's one
 * replay of process state. Internal to tools/pprof.
 *
 * pp_aspace_record() takes those records one by one; between two records
 * it tells, as of the last one:
 *   - which mapping covers an address of a process (pp_aspace_find()),
 *   - each thread's command name (pp_aspace_comm()),
 *   - which mappings were executables (pp_aspace_is_exe()).
 *
 * Mappings are kept as recorded, each distinct one once, under dense ids
 * (struct pp_mapping): an id stays valid for the whole conversion, whatever
 * is mapped over it later. Anonymous executable memory (JIT code) has no
 * file: its mapping is named "[anon]", "[memfd:jit]"... (bracketed, without
 * '/', as [vdso]: pprof then knows not to look for it on disk); the kernel
 * image's is "[kernel.kallsyms]". Names (of files and commands) go into the
 * caller's string table, which must outlive the aspace.
 *
 * Underneath is one interval map per pid (tgid): threads share their
 * process's maps. A new mapping replaces whatever part of older ones it
 * overlaps, as mmap(2) does. fork copies the parent's maps to the child,
 * executable included, and a new thread starts with its parent's command
 * name; exec empties the maps. The kernel's maps live under
 * PP_ASPACE_KERNEL. Memory: 24 bytes per live interval, one small header
 * per pid seen, one entry per distinct mapping and per thread named.
 */
#ifndef TOOLS_PPROF_ASPACE_H
#define TOOLS_PPROF_ASPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdata/perfdata.h"
#include "symbolize/symbolize.h"
#include "intern.h"

/* The pid of kernel maps (perf writes pid -1 in their MMAP records). */
#define PP_ASPACE_KERNEL UINT32_MAX

enum pp_mapping_kind { PP_MAPPING_FILE, PP_MAPPING_KERNEL, PP_MAPPING_ANON };

/* A mapping as recorded; also its key, so pad bytes are zero. */
struct pp_mapping {
	uint64_t start, len, pgoff;	/* the kernel image's pgoff: see pp_aspace_kernel_ref() */
	uint32_t filename;		/* sid */
	uint32_t pid;			/* owner of anonymous memory, else 0 */
	uint8_t kind;			/* enum pp_mapping_kind */
	uint8_t build_id_size;		/* the MMAP2's build-id; 0 = none recorded */
	uint8_t build_id[PERFDATA_BUILD_ID_MAX];
	uint8_t pad[2];
};

struct pp_aspace;

/* Names are interned in strs. 0 or -ENOMEM. */
int pp_aspace_new(struct pp_intern *strs, struct pp_aspace **out);
void pp_aspace_free(struct pp_aspace *a);

/*
 * Replay one record: MMAP and MMAP2 of executable memory (data mappings
 * hold no code: left out), COMM, FORK; any other type is ignored. 0; 1 for
 * a malformed record, which is skipped (the caller counts it); -ENOMEM.
 */
int pp_aspace_record(struct pp_aspace *a, const struct perf_event_header *h);

size_t pp_aspace_nr_mappings(const struct pp_aspace *a);
/* Mapping id (< pp_aspace_nr_mappings()). */
const struct pp_mapping *pp_aspace_mapping(const struct pp_aspace *a, uint32_t id);
/* Mapping id as the symbolizer takes it: its file, with the build-id its
 * MMAP2 recorded (none otherwise). Pointers live as long as a and strs. */
void pp_aspace_sym_mapping(const struct pp_aspace *a, uint32_t id, struct sym_mapping *out);
/* Whether mapping id was the first file some process mapped after exec:
 * its executable (the ELF loader maps it before the interpreter). */
bool pp_aspace_is_exe(const struct pp_aspace *a, uint32_t id);
/* The kernel image's mapping: the last [kernel.kallsyms] one recorded, else
 * one over every kernel address, made on first call. Its id or -ENOMEM. */
int64_t pp_aspace_kernel_mapping(struct pp_aspace *a);
/* The symbol ("_text") whose address the recorded kernel image's pgoff
 * holds, *addr that address; "" and 0 when no kernel image was recorded. */
const char *pp_aspace_kernel_ref(const struct pp_aspace *a, uint64_t *addr);
/* sid + 1 of tid's command name, 0 when no record named it. */
uint32_t pp_aspace_comm(const struct pp_aspace *a, uint32_t tid);

/*
 * The interval maps, as pp_aspace_record() drives them; values are mapping
 * ids for it, any 32-bit value for other callers (tests).
 */
/* [start, start + len) of pid now maps to value. -EINVAL for len 0. */
int pp_aspace_map(struct pp_aspace *a, uint32_t pid, uint64_t start, uint64_t len,
		  uint32_t value);
/* The value covering addr in pid, 0 or -ENOENT. */
int pp_aspace_find(const struct pp_aspace *a, uint32_t pid, uint64_t addr, uint32_t *value);
/* child's maps become a copy of parent's, its executable already mapped (a
 * fork; also fine for pid reuse). */
int pp_aspace_fork(struct pp_aspace *a, uint32_t child, uint32_t parent);
/* pid exec'd: its old maps are gone, its next file mapping is the executable. */
void pp_aspace_exec(struct pp_aspace *a, uint32_t pid);
/* Whether any MMAP/FORK ever described pid. */
bool pp_aspace_known(const struct pp_aspace *a, uint32_t pid);
/* A number that changes whenever pid's maps change (0 for an unknown pid):
 * lookups cached under (pid, generation) stay valid while it holds. */
uint32_t pp_aspace_generation(const struct pp_aspace *a, uint32_t pid);
/* Number of intervals of pid (for tests and statistics). */
size_t pp_aspace_count(const struct pp_aspace *a, uint32_t pid);
/* The i-th interval of pid in address order (i < pp_aspace_count()):
 * [*start, *end) maps to *value. 0 or -ENOENT. */
int pp_aspace_at(const struct pp_aspace *a, uint32_t pid, size_t i, uint64_t *start,
		 uint64_t *end, uint32_t *value);

#endif /* TOOLS_PPROF_ASPACE_H */
