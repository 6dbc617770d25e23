// SPDX-License-Identifier: MIT
/* progstats.c - BPF program run time and runs (contract in progstats.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "recorder/progstats.h"

struct progstats {
	int stats_fd;		/* held: the kernel counts while it is open; -1 = not counting */
	int *prog_fds;		/* the programs' own fds, owned by their objects */
	size_t nr_progs;
};

int progstats_new(struct progstats **out)
{
	struct progstats *p = calloc(1, sizeof(*p));

	*out = p;
	if (!p)
		return -ENOMEM;
	/* EPERM (no CAP_SYS_ADMIN) or EINVAL (before 5.8): the numbers stay unavailable. */
	p->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (p->stats_fd < 0)
		p->stats_fd = -1;
	return 0;
}

void progstats_free(struct progstats *p)
{
	if (!p)
		return;
	if (p->stats_fd >= 0)
		close(p->stats_fd);
	free(p->prog_fds);
	free(p);
}

int progstats_add_object(struct progstats *p, const struct bpf_object *obj)
{
	struct bpf_program *prog;

	if (!p || p->stats_fd < 0 || !obj)
		return 0;
	bpf_object__for_each_program(prog, obj) {
		int fd = bpf_program__fd(prog), *fds;

		if (fd < 0)	/* not loaded (autoload off) */
			continue;
		fds = realloc(p->prog_fds, (p->nr_progs + 1) * sizeof(*fds));
		if (!fds)
			return -ENOMEM;
		p->prog_fds = fds;
		p->prog_fds[p->nr_progs++] = fd;
	}
	return 0;
}

void progstats_read(const struct progstats *p, struct progstats_sum *sum)
{
	memset(sum, 0, sizeof(*sum));
	if (!p || p->stats_fd < 0)
		return;
	sum->counted = true;
	for (size_t i = 0; i < p->nr_progs; i++) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);

		memset(&info, 0, sizeof(info));
		/* A program already closed (after the session freed it) adds nothing. */
		if (bpf_obj_get_info_by_fd(p->prog_fds[i], &info, &len))
			continue;
		sum->run_ns += info.run_time_ns;
		sum->runs += info.run_cnt;
	}
}
