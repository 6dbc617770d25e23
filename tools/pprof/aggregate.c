// SPDX-License-Identifier: MIT
/*
 * aggregate.c - samples into the frames, stacks and samples tables
 * (aggregate.h).
 *
 * Most samples repeat a callchain seen before: the raw callchain of a
 * process, with the generations of its maps and the kernel's, is looked up
 * whole first (rawstacks), and only a new one is resolved frame by frame.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "convert_int.h"
#include "tools/lib/array.h"

/* Longest raw callchain key looked up whole; longer ones go frame by frame. */
#define RAW_KEY_MAX (1 << 16)

static int grow_stack(struct pp_convert *c, size_t n)
{
	return ARRAY_RESERVE(c->stack_buf, c->stack_cap, n, 256);
}

/* FRAME_GUEST or FRAME_KERNEL of an address ip seen in cpumode mode. */
static uint32_t frame_flags(unsigned int mode, uint64_t ip)
{
	if (mode == PERF_RECORD_MISC_GUEST_KERNEL || mode == PERF_RECORD_MISC_GUEST_USER ||
	    mode == PERF_RECORD_MISC_HYPERVISOR)
		return FRAME_GUEST;
	if (mode == PERF_RECORD_MISC_KERNEL || ip >= PERFDATA_KERNEL_ADDR_MIN)
		return FRAME_KERNEL;
	return 0;
}

static int64_t intern_frame(struct pp_convert *c, uint64_t addr, uint32_t pid, uint32_t flags)
{
	struct frame_key k = { .addr = addr, .flags = flags };
	uint32_t cm;

	if (flags & FRAME_GUEST) {
		/* No maps of guests: the address is all we have. */
	} else if (flags & FRAME_KERNEL) {
		if (!pp_aspace_find(c->as, PP_ASPACE_KERNEL, addr, &cm)) {
			k.cmap = cm + 1;
		} else {
			int64_t id = pp_aspace_kernel_mapping(c->as);

			if (id < 0)
				return id;
			k.cmap = id + 1;
		}
	} else if (!pp_aspace_find(c->as, pid, addr, &cm)) {
		k.cmap = cm + 1;
	} else {
		k.pid = pid;	/* maybe JIT code: perf-PID.map may know it */
	}
	return pp_intern_put(&c->frames, &k, sizeof(k), NULL);
}

/* The frames of a sample, leaf first, context markers dropped. */
static int64_t intern_stack_slow(struct pp_convert *c, const struct csample *s)
{
	const uint64_t *ips = csample_ips(s);
	size_t n = 0, nr = s->nr_ips ? s->nr_ips : 1;
	unsigned int mode = s->h.misc & PERF_RECORD_MISC_CPUMODE_MASK;
	bool first_in_context = true;
	int err = grow_stack(c, nr);

	if (err)
		return err;
	for (size_t i = 0; i < nr; i++) {
		uint64_t ip = s->nr_ips ? ips[i] : s->ip;
		uint32_t flags;
		int64_t fid;

		if (s->nr_ips && perfdata_is_context_marker(ip)) {
			switch (ip) {
			case PERF_CONTEXT_KERNEL:
				mode = PERF_RECORD_MISC_KERNEL;
				break;
			case PERF_CONTEXT_USER:
				mode = PERF_RECORD_MISC_USER;
				break;
			case PERF_CONTEXT_GUEST_KERNEL:
				mode = PERF_RECORD_MISC_GUEST_KERNEL;
				break;
			case PERF_CONTEXT_GUEST_USER:
				mode = PERF_RECORD_MISC_GUEST_USER;
				break;
			case PERF_CONTEXT_HV:
				mode = PERF_RECORD_MISC_HYPERVISOR;
				break;
			default:
				break;
			}
			first_in_context = true;
			continue;
		}
		flags = frame_flags(mode, ip);
		/* The first address of each context is where execution was; the
		 * others are return addresses, looked up at address - 1. */
		if (!first_in_context)
			flags |= FRAME_CALLER;
		first_in_context = false;
		fid = intern_frame(c, ip, s->pid, flags);
		if (fid < 0)
			return fid;
		c->stack_buf[n++] = fid;
	}
	/* A callchain of markers only (the unwinder found nothing): the sample
	 * still has its ip, which is where perf report puts its time too. */
	if (!n && s->nr_ips) {
		int64_t fid = intern_frame(c, s->ip, s->pid,
					   frame_flags(s->h.misc & PERF_RECORD_MISC_CPUMODE_MASK, s->ip));

		if (fid < 0)
			return fid;
		c->stack_buf[n++] = fid;
	}
	return pp_intern_put(&c->stacks, c->stack_buf, n * sizeof(uint32_t), NULL);
}

/*
 * The same raw callchain of the same process, while neither its maps nor
 * the kernel's changed, is the same stack: look the whole chain up once
 * instead of each frame. The key is this head, then the callchain.
 */
struct raw_key_head {
	uint32_t pid, generation, kernel_generation;
	uint16_t mode, pad;
	uint64_t ip, nr_ips;
};

static int64_t intern_stack(struct pp_convert *c, const struct csample *s)
{
	size_t len = sizeof(struct raw_key_head) + (size_t)s->nr_ips * 8;
	struct raw_key_head *k;
	bool added;
	int64_t id, stack;

	if (len > RAW_KEY_MAX)
		return intern_stack_slow(c, s);
	if (!c->raw_key) {
		c->raw_key = malloc(RAW_KEY_MAX);
		if (!c->raw_key)
			return -ENOMEM;
	}
	k = c->raw_key;
	*k = (struct raw_key_head){
		.pid = s->pid,
		.generation = pp_aspace_generation(c->as, s->pid),
		.kernel_generation = pp_aspace_generation(c->as, PP_ASPACE_KERNEL),
		.mode = s->h.misc & PERF_RECORD_MISC_CPUMODE_MASK,
		.ip = s->ip,
		.nr_ips = s->nr_ips,
	};
	memcpy(k + 1, csample_ips(s), (size_t)s->nr_ips * 8);

	if (pp_intern_count(&c->rawstacks) > 4 * pp_intern_count(&c->stacks) + 65536) {
		pp_intern_free(&c->rawstacks);	/* stale generations: start over */
		pp_intern_init(&c->rawstacks);
	}
	if (ARRAY_RESERVE(c->raw_stack, c->raw_stack_cap, pp_intern_count(&c->rawstacks) + 1, 4096))
		return -ENOMEM;
	id = pp_intern_put(&c->rawstacks, k, len, &added);
	if (id < 0)
		return id;
	if (!added)
		return c->raw_stack[id];
	stack = intern_stack_slow(c, s);
	if (stack < 0)
		return stack;
	c->raw_stack[id] = stack;
	return stack;
}

int pp_cv_aggregate(struct pp_convert *c, const struct csample *s, uint32_t comm, uint32_t group,
		    uint64_t time)
{
	int64_t stack, labels, id;
	bool added;

	stack = intern_stack(c, s);
	if (stack < 0)
		return stack;
	labels = pp_cv_labelset(c, s, comm);
	if (labels < 0)
		return labels;

	struct sample_key k = { .event = s->event, .stack = stack, .labels = labels, .group = group };

	if (ARRAY_RESERVE(c->counts, c->counts_cap, pp_intern_count(&c->samples) + 1, 1024))
		return -ENOMEM;
	id = pp_intern_put(&c->samples, &k, sizeof(k), &added);
	if (id < 0)
		return id;
	if (added)
		c->counts[id] = (struct counts){ 0 };
	c->counts[id].count++;
	c->counts[id].weight += s->period;
	/* An allocation sample stands for period / S objects (perfdata/events.h). */
	c->counts[id].objects += s->alloc_size ? (double)s->period / (double)s->alloc_size : 1.0;
	c->stats.kept++;
	if (time) {
		if (!c->have_time || time < c->first_time)
			c->first_time = time;
		if (time > c->last_time)
			c->last_time = time;
		c->have_time = true;
	}
	return 0;
}
