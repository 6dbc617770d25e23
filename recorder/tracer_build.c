// SPDX-License-Identifier: MIT
/* tracer_build.c - which of a tracer's two program builds to load and attach (tracer_build.h). */
#include <errno.h>

#include <bpf/libbpf.h>

#include "recorder/kfeatures.h"
#include "recorder/tracer_build.h"

bool tracer_build_compat(const struct kfeatures *kf)
{
	return !kf->task_storage || !kf->bpf_loop;
}

int tracer_build_choose(bool compat, const struct tracer_build_prog *progs, size_t nr_progs,
			struct bpf_map *const *current_maps, size_t nr_current,
			struct bpf_map *const *compat_maps, size_t nr_compat)
{
	struct bpf_map *const *unused = compat ? current_maps : compat_maps;
	size_t nr_unused = compat ? nr_current : nr_compat;
	int err = 0;

	for (size_t i = 0; i < nr_progs && !err; i++) {
		err = bpf_program__set_autoload(progs[i].current, !compat);
		if (!err)
			err = bpf_program__set_autoload(progs[i].compat, compat);
	}
	for (size_t i = 0; i < nr_unused && !err; i++)
		err = bpf_map__set_autocreate(unused[i], false);
	return err;
}

int tracer_build_attach(bool compat, const struct tracer_build_prog *progs, size_t nr,
			struct bpf_link **links)
{
	for (size_t i = 0; i < nr; i++) {
		links[i] = bpf_program__attach(tracer_build_prog(compat, &progs[i]));
		if (!links[i]) {
			int err = errno ? -errno : -EINVAL;

			tracer_build_detach(links, i);
			return err;
		}
	}
	return 0;
}

void tracer_build_detach(struct bpf_link **links, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		bpf_link__destroy(links[i]);
		links[i] = NULL;
	}
}
