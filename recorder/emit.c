// SPDX-License-Identifier: MIT
/* emit.c - one BPF-captured sample into perf.data (contract in emit.h). */
#include <string.h>
#include <linux/perf_event.h>

#include "perfdata/writer.h"
#include "recorder/emit.h"
#include "recorder/tasks.h"

#include "bpf/profile.h"

int emit_sample(struct perfdata_writer *w, struct task_tracker *t, const struct emit_sample *e,
		bool describe_only)
{
	size_t len = e->comm_len < PROFILE_COMM_LEN ? e->comm_len : PROFILE_COMM_LEN;
	char comm[PROFILE_COMM_LEN + 1];
	struct callchain_input chain = e->chain;
	/* The block carries registers (and stack bytes), not only "none". */
	bool has_regs = e->ustack.present && e->ustack.abi != PROFILE_UREGS_ABI_NONE;
	const uint64_t *user_ips;
	size_t nr_user_ips;
	struct callchain cc;
	int err;

	chain.no_user_part = e->ustack.present;
	callchain_build(&chain, &cc);
	memcpy(comm, e->comm, len);
	comm[len] = '\0';
	/* The tracker checks user addresses against known maps: the user ip is one. */
	user_ips = cc.user;
	nr_user_ips = cc.nr_user;
	if (has_regs) {
		user_ips = &e->ustack.regs[PROFILE_UREG_IP];
		nr_user_ips = 1;
	}
	err = task_tracker_see(t, e->pid, e->tid, comm, e->time, e->cpu, user_ips, nr_user_ips);
	if (err || describe_only)
		return err;

	struct perfdata_sample out = {
		.misc = cc.misc, .id = e->id, .ip = cc.ip, .pid = e->pid, .tid = e->tid,
		.time = e->time, .cpu = e->cpu, .period = e->period,
		.nr_callchain = cc.nr, .callchain = cc.ips,
		.raw = e->raw, .raw_size = e->raw_size,
	};
	if (has_regs) {
		out.regs_abi = e->ustack.abi;
		out.nr_regs = PROFILE_NR_UREGS;
		out.regs = e->ustack.regs;
		out.stack_size = e->ustack.size;
		out.stack_dyn_size = e->ustack.dyn_size;
		out.stack = e->ustack.stack;
	}
	return perfdata_write_sample(w, &out);
}

size_t emit_ustack_parse(const void *p, size_t len, struct emit_ustack *u)
{
	const struct profile_ustack *in = p;

	*u = (struct emit_ustack){ .present = true };
	if (len < sizeof(*in))
		return 0;
	if (in->abi == PROFILE_UREGS_ABI_NONE)
		return sizeof(*in);
	if (in->abi != PROFILE_UREGS_ABI_64 || in->size > PROFILE_USTACK_MAX || in->size % 8 ||
	    in->dyn_size > in->size || len - sizeof(*in) < in->dyn_size)
		return 0;
	u->abi = in->abi;
	u->regs = (const uint64_t *)in->regs;
	u->size = in->size;
	u->dyn_size = in->dyn_size;
	u->stack = in + 1;
	return sizeof(*in) + in->dyn_size;
}

#define TRAILER_BITS (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
		      PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

void emit_bpf_output_attr(const struct perf_event_attr *cpu_attr, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_BPF_OUTPUT;
	a->size = sizeof(*a) < 128 ? sizeof(*a) : 128;
	a->sample_period = 1;
	a->sample_type = (cpu_attr->sample_type & TRAILER_BITS) | PERF_SAMPLE_IDENTIFIER |
			 PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
			 PERF_SAMPLE_RAW;
	a->sample_id_all = cpu_attr->sample_id_all;
	a->use_clockid = cpu_attr->use_clockid;
	a->clockid = cpu_attr->clockid;
	a->inherit = cpu_attr->inherit;
}

size_t emit_raw_text_pad(char *buf, size_t len, size_t size)
{
	while ((len + 1 + 4) % 8 && len + 1 < size)
		buf[len++] = ' ';
	buf[len] = '\0';
	return len + 1;
}
