// SPDX-License-Identifier: MIT
/* emit.c - one BPF-captured sample into perf.data (contract in emit.h). */
#include <string.h>

#include "perfdata/writer.h"
#include "recorder/emit.h"
#include "recorder/tasks.h"

#include "bpf/profile.h"

int emit_sample(struct perfdata_writer *w, struct task_tracker *t, const struct emit_sample *e,
		bool describe_only)
{
	size_t len = e->comm_len < PROFILE_COMM_LEN ? e->comm_len : PROFILE_COMM_LEN;
	char comm[PROFILE_COMM_LEN + 1];
	struct callchain cc;
	int err;

	callchain_build(&e->chain, &cc);
	memcpy(comm, e->comm, len);
	comm[len] = '\0';
	err = task_tracker_see(t, e->pid, e->tid, comm, e->time, e->cpu, cc.user, cc.nr_user);
	if (err || describe_only)
		return err;

	struct perfdata_sample out = {
		.misc = cc.misc, .id = e->id, .ip = cc.ip, .pid = e->pid, .tid = e->tid,
		.time = e->time, .cpu = e->cpu, .period = e->period,
		.nr_callchain = cc.nr, .callchain = cc.ips,
		.raw = e->raw, .raw_size = e->raw_size,
	};
	return perfdata_write_sample(w, &out);
}
