// SPDX-License-Identifier: MIT
/* emit.c - the recorder's records into perf.data (contract in emit.h). */
#include <string.h>

#include "perfdata/schedstats.h"
#include "perfdata/writer.h"
#include "recorder/emit.h"
#include "recorder/taskdesc.h"
#include "recorder/tasks.h"

#include "bpf/profile.h"

int emit_desc(struct perfdata_writer *w, const struct task_desc *d)
{
	struct task_desc_rec r;
	int err = 0;

	for (size_t i = 0; !err && task_desc_get(d, i, &r); i++) {
		switch (r.kind) {
		case TASK_DESC_COMM:
			err = perfdata_write_comm(w, &r.comm, &r.sid);
			break;
		case TASK_DESC_MMAP2:
			err = perfdata_write_mmap2(w, &r.mmap, &r.sid);
			break;
		case TASK_DESC_BUILD_ID:
			err = perfdata_writer_add_build_id(w, PERF_RECORD_MISC_USER, r.build_id,
							   r.build_id_size, r.path);
			break;
		}
	}
	return err;
}

int emit_lost(struct perfdata_writer *w, uint64_t id, uint64_t total, uint64_t *written,
	      uint64_t time)
{
	struct perfdata_sample_id sid = { .time = time, .id = id };
	int err;

	if (total <= *written)
		return 0;
	err = perfdata_write_lost_samples(w, total - *written, &sid);
	if (err)
		return err;
	*written = total;
	return 1;
}

static void task_change(const struct emit_task_change *c, struct perfdata_task *t,
			struct perfdata_sample_id *sid)
{
	*t = (struct perfdata_task){
		.pid = c->pid, .tid = c->tid, .ppid = c->ppid, .ptid = c->ptid, .time = c->time,
	};
	*sid = (struct perfdata_sample_id){
		.pid = c->pid, .tid = c->tid, .time = c->time, .id = c->id, .cpu = c->cpu,
	};
}

int emit_fork(struct perfdata_writer *w, const struct emit_task_change *c)
{
	struct perfdata_sample_id sid;
	struct perfdata_task t;

	task_change(c, &t, &sid);
	return perfdata_write_fork(w, &t, &sid);
}

int emit_exit(struct perfdata_writer *w, const struct emit_task_change *c)
{
	struct perfdata_sample_id sid;
	struct perfdata_task t;

	task_change(c, &t, &sid);
	return perfdata_write_exit(w, &t, &sid);
}

int emit_round_end(struct perfdata_writer *w)
{
	return perfdata_write_finished_round(w);
}

/* perf zeroes the trailer of the kernel maps and KSYMBOLs it synthesizes. */
static const struct perfdata_sample_id synthesized_sid;

int emit_kernel_mmap(struct perfdata_writer *w, uint64_t start, uint64_t len, uint64_t pgoff,
		     const char *filename)
{
	struct perfdata_mmap m = {
		.misc = PERF_RECORD_MISC_KERNEL,
		.pid = UINT32_MAX,	/* -1: the kernel */
		.tid = 0,
		.start = start,
		.len = len,
		.pgoff = pgoff,
		.filename = filename,
	};

	return perfdata_write_mmap(w, &m, &synthesized_sid);
}

int emit_kernel_build_id(struct perfdata_writer *w, const uint8_t *build_id, size_t size,
			 const char *filename)
{
	return perfdata_writer_add_build_id(w, PERF_RECORD_MISC_KERNEL, build_id, size, filename);
}

int emit_bpf_ksymbol(struct perfdata_writer *w, uint64_t addr, uint32_t len, const char *name)
{
	struct perfdata_ksymbol k = {
		.addr = addr, .len = len, .ksym_type = PERF_RECORD_KSYMBOL_TYPE_BPF, .name = name,
	};

	return perfdata_write_ksymbol(w, &k, &synthesized_sid);
}

int emit_sched_metrics(struct perfdata_writer *w, const struct bpfrec_sched_metrics *m)
{
	return perfdata_write_sched_metrics(w, m->t, m->nr);
}

/* The block carries registers (and stack bytes), not only "none". */
static bool sample_has_regs(const struct emit_sample *e)
{
	return e->ustack.present && e->ustack.abi != PROFILE_UREGS_ABI_NONE;
}

static void sample_chain(const struct emit_sample *e, struct callchain *cc)
{
	struct callchain_input chain = e->chain;

	chain.no_user_part = e->ustack.present;
	callchain_build(&chain, cc);
}

static int write_sample(struct perfdata_writer *w, const struct emit_sample *e,
			const struct callchain *cc)
{
	struct perfdata_sample out = {
		.misc = cc->misc, .id = e->id, .ip = cc->ip, .pid = e->pid, .tid = e->tid,
		.time = e->time, .cpu = e->cpu, .period = e->period,
		.nr_callchain = cc->nr, .callchain = cc->ips,
		.raw = e->raw, .raw_size = e->raw_size,
	};

	if (sample_has_regs(e)) {
		out.regs_abi = e->ustack.abi;
		out.nr_regs = PROFILE_NR_UREGS;
		out.regs = e->ustack.regs;
		out.stack_size = e->ustack.size;
		out.stack_dyn_size = e->ustack.dyn_size;
		out.stack = e->ustack.stack;
	}
	return perfdata_write_sample(w, &out);
}

int emit_task(struct perfdata_writer *w, struct task_tracker *t, uint32_t pid, uint32_t tid,
	      const char *comm, uint64_t time, uint32_t cpu, const uint64_t *user_ips,
	      size_t nr_user)
{
	const struct task_desc *desc;
	int err = task_tracker_describe(t, pid, tid, comm, time, cpu, user_ips, nr_user, &desc);

	return err ? err : emit_desc(w, desc);
}

int emit_sample(struct perfdata_writer *w, struct task_tracker *t, const struct emit_sample *e,
		bool describe_only)
{
	size_t len = e->comm_len < PROFILE_COMM_LEN ? e->comm_len : PROFILE_COMM_LEN;
	char comm[PROFILE_COMM_LEN + 1];
	const uint64_t *user_ips;
	size_t nr_user_ips;
	struct callchain cc;
	int err;

	sample_chain(e, &cc);
	memcpy(comm, e->comm, len);
	comm[len] = '\0';
	/* The tracker checks user addresses against known maps: the user ip is one. */
	user_ips = cc.user;
	nr_user_ips = cc.nr_user;
	if (sample_has_regs(e)) {
		user_ips = &e->ustack.regs[PROFILE_UREG_IP];
		nr_user_ips = 1;
	}
	err = emit_task(w, t, e->pid, e->tid, comm, e->time, e->cpu, user_ips, nr_user_ips);
	if (err || describe_only)
		return err;
	return write_sample(w, e, &cc);
}

int emit_sample_alone(struct perfdata_writer *w, const struct emit_sample *e)
{
	struct callchain cc;

	sample_chain(e, &cc);
	return write_sample(w, e, &cc);
}

/* The block at p (len bytes: everything after the frames): the bytes it uses, 0 when malformed. */
static size_t ustack_parse(const void *p, size_t len, struct emit_ustack *u)
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

size_t emit_record_parse(const void *rec, size_t size, size_t frames_off, uint32_t nr_kernel,
			 uint32_t nr_user, size_t extra, bool has_ustack, struct emit_ustack *u)
{
	size_t head = frames_off + ((size_t)nr_kernel + nr_user) * sizeof(uint64_t) + extra;
	size_t used;

	*u = (struct emit_ustack){ 0 };
	if (nr_kernel > PROFILE_MAX_STACK || nr_user > PROFILE_MAX_STACK || size < head)
		return 0;
	if (!has_ustack)
		return head;
	used = ustack_parse((const char *)rec + head, size - head, u);
	if (!used) {
		*u = (struct emit_ustack){ 0 };
		return 0;
	}
	return head + used;
}
