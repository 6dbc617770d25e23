// SPDX-License-Identifier: MIT
/*
 * kmaps.c - describe the kernel to perf: the kernel map, one map per module
 * and their build-ids (kernel_text_read() and kernel_maps_write() in
 * kmaps.h).
 *
 * The records are the ones `perf record` synthesizes:
 *   MMAP pid -1 tid 0 misc KERNEL [_text, _etext) pgoff _text "[kernel.kallsyms]_text"
 *   MMAP pid -1 tid 0 misc KERNEL [addr, addr + size) pgoff 0 FILE per module,
 * where FILE is the module's file under /lib/modules/$(uname -r) (found
 * through modules.dep) or "[name]" when it is not installed, as perf names
 * them. Their sample_id trailers are all zero, as perf writes them.
 * Build-ids: the kernel's from the notes file as "[kernel.kallsyms]", each
 * module's from /sys/module/NAME/notes under the module's file name.
 * This file decides what they say; emit.c writes them (emit.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "recorder/emit.h"
#include "recorder/kmaps.h"
#include "symbolize/buildid.h"
#include "symbolize/kallsyms.h"
#include "symbolize/procmaps.h"

#define KERNEL_MMAP_NAME	"[kernel.kallsyms]_text"
#define KERNEL_BUILD_ID_NAME	"[kernel.kallsyms]"

int kernel_text_read(const char *kallsyms_path, struct kernel_text *kt)
{
	struct kallsyms_want want[] = { { .name = "_text" }, { .name = "_etext" },
					{ .name = "__schedule" } };
	const struct kallsyms_want *text = &want[0], *etext = &want[1], *sched = &want[2];
	int ret;

	memset(kt, 0, sizeof(*kt));
	ret = kallsyms_find_names(kallsyms_path, want, sizeof(want) / sizeof(want[0]));
	if (ret)
		return ret;
	/* The core kernel's symbols are sorted: __schedule ends where the next one starts. */
	if (sched->found && (sched->type == 't' || sched->type == 'T') && sched->addr &&
	    sched->next > sched->addr) {
		kt->sched_start = sched->addr;
		kt->sched_end = sched->next;
	}
	if (!text->found || !etext->found)
		return -ENOENT;
	kt->start = text->addr;
	kt->end = etext->addr;
	/* kptr_restrict shows every address as zero to those it hides them from. */
	if (!kt->start || !kt->end)
		return -EPERM;
	if (kt->end <= kt->start)
		return -EINVAL;
	return 0;
}

/* Register a module's build-id, if the kernel exposes it. */
static int add_module_build_id(struct perfdata_writer *w, const char *name, const char *file)
{
	uint8_t id[BUILDID_MAX];
	size_t size;
	char notes[PATH_MAX];

	if (snprintf(notes, sizeof(notes), "/sys/module/%s/notes/.note.gnu.build-id", name) >=
	    (int)sizeof(notes))
		return 0;
	if (buildid_read_kernel(notes, id, &size))
		return 0;	/* no notes for this module: perf goes without too */
	return emit_kernel_build_id(w, id, size, file);
}

static int write_modules(struct perfdata_writer *w, const char *modules_path)
{
	struct kmod_paths *paths = NULL;
	struct utsname uts;
	char dir[PATH_MAX], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int err = 0;

	f = fopen(modules_path, "re");
	if (!f)
		return 0;	/* a kernel without modules */
	if (!uname(&uts) &&
	    snprintf(dir, sizeof(dir), "/lib/modules/%s", uts.release) < (int)sizeof(dir))
		err = kmod_paths_load(dir, &paths);
	while (!err && getline(&line, &cap, f) > 0) {
		char name[256], file[PATH_MAX];
		const char *found;
		uint64_t size, addr;

		/* "xfs 1736704 1 - Live 0xffffffffc0a00000 (OE)" */
		if (sscanf(line, "%255s %" SCNu64 " %*s %*s %*s %" SCNx64, name, &size, &addr) != 3)
			continue;
		if (!addr || !size)
			continue;	/* hidden by kptr_restrict, or not loaded yet */
		found = kmod_paths_find(paths, name);
		if (found)
			snprintf(file, sizeof(file), "%s", found);
		else
			snprintf(file, sizeof(file), "[%s]", name);
		err = emit_kernel_mmap(w, addr, size, 0, file);
		if (!err)
			err = add_module_build_id(w, name, file);
	}
	free(line);
	fclose(f);
	kmod_paths_free(paths);
	return err;
}

int kernel_maps_write(struct perfdata_writer *w, const struct kernel_text *kt,
		      const char *modules_path, const char *notes_path)
{
	uint8_t id[BUILDID_MAX];
	size_t size;
	int err;

	/* pgoff is the address of _text: perf relocates kernel symbols with it. */
	err = emit_kernel_mmap(w, kt->start, kt->end - kt->start, kt->start, KERNEL_MMAP_NAME);
	if (err)
		return err;
	err = write_modules(w, modules_path ? modules_path : "/proc/modules");
	if (err)
		return err;
	/* Without a build-id perf still reads kallsyms: not worth failing for. */
	if (!buildid_read_kernel(notes_path, id, &size))
		err = emit_kernel_build_id(w, id, size, KERNEL_BUILD_ID_NAME);
	return err;
}
