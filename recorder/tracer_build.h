/* SPDX-License-Identifier: MIT */
/*
 * tracer_build.h - which of a tracer's two program builds to load, and
 * attaching it.
 *
 * The sched_switch tracers (bpf/offcpu.bpf.c, bpf/sched.bpf.c) carry each
 * program twice (bpf/task_state.bpf.h): the current build keeps per-task
 * state in task storage and walks stacks with bpf_loop (both there from
 * 5.17), the compat build keeps it in a tid-keyed hash and walks with
 * bounded loops. A kernel refuses a program that merely mentions what it
 * lacks, and a map type it lacks even unused, so the build not chosen is
 * neither loaded nor are its own maps created.
 */
#ifndef RECORDER_TRACER_BUILD_H
#define RECORDER_TRACER_BUILD_H

#include <stdbool.h>
#include <stddef.h>

struct bpf_link;
struct bpf_map;
struct bpf_program;
struct kfeatures;

/* One program in both builds. */
struct tracer_build_prog {
	struct bpf_program *current, *compat;
};

/* True when this kernel needs the compat build (kfeatures_probe()'s findings). */
bool tracer_build_compat(const struct kfeatures *kf);

/*
 * Before loading: load each program's chosen build only, and create the
 * maps only the other build uses (current_maps: the current build's,
 * compat_maps: the compat build's). 0 or libbpf's -errno.
 */
int tracer_build_choose(bool compat, const struct tracer_build_prog *progs, size_t nr_progs,
			struct bpf_map *const *current_maps, size_t nr_current,
			struct bpf_map *const *compat_maps, size_t nr_compat);

/* The chosen build of p. */
static inline struct bpf_program *tracer_build_prog(bool compat, const struct tracer_build_prog *p)
{
	return compat ? p->compat : p->current;
}

/*
 * After loading: attach the chosen build of each of progs, in order, into
 * links (nr of each). 0, or the first failure's -errno (-EINVAL when
 * libbpf set none) with the links attached so far destroyed.
 */
int tracer_build_attach(bool compat, const struct tracer_build_prog *progs, size_t nr,
			struct bpf_link **links);
/* Destroy links (nr of them, NULL ones skipped) and set them NULL. */
void tracer_build_detach(struct bpf_link **links, size_t nr);

#endif /* RECORDER_TRACER_BUILD_H */
