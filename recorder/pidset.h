/* SPDX-License-Identifier: MIT */
/*
 * pidset.h - which process ids a recording has seen, for the live status
 * ("PIDs seen"). A bitmap over the pid space, so its memory is fixed
 * (512 KiB for the kernel's largest pid_max, touched only where pids are) however long the recording runs and
 * however many processes come and go. A pid reused later counts once.
 */
#ifndef RECORDER_PIDSET_H
#define RECORDER_PIDSET_H

#include <stddef.h>
#include <stdint.h>

struct pidset {
	uint64_t *bits;
	uint32_t limit;		/* pids >= limit are not tracked */
	size_t count;		/* distinct pids added */
};

/* limit 0 = 4194304, the largest pid_max the kernel allows. */
int pidset_init(struct pidset *p, uint32_t limit);
/* Add pid; pid 0 (idle) counts like any other. */
void pidset_add(struct pidset *p, uint32_t pid);
void pidset_free(struct pidset *p);

#endif /* RECORDER_PIDSET_H */
