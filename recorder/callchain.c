// SPDX-License-Identifier: MIT
/* callchain.c - BPF stacks to a perf callchain; the rules are in callchain.h. */
#include "perfdata/perfdata.h"
#include "perfdata/records.h"
#include "recorder/callchain.h"

static bool is_kernel_addr(uint64_t ip)
{
	return ip >= PERFDATA_KERNEL_ADDR_MIN && !perfdata_is_context_marker(ip);
}

static bool is_user_addr(uint64_t ip)
{
	return ip && ip < PERFDATA_KERNEL_ADDR_MIN;
}

void callchain_build(const struct callchain_input *in, struct callchain *cc)
{
	size_t nr_kernel = in->nr_kernel < CALLCHAIN_MAX_STACK ? in->nr_kernel : CALLCHAIN_MAX_STACK;
	size_t nr_user = in->nr_user < CALLCHAIN_MAX_STACK ? in->nr_user : CALLCHAIN_MAX_STACK;
	uint64_t kernel[CALLCHAIN_MAX_STACK + 1], user[CALLCHAIN_MAX_STACK + 1];
	size_t nk = 0, nu = 0, i;
	bool leaked_ok;

	/* A sample in user code has no kernel part, whatever the stacks say. */
	for (i = 0; in->kernel_mode && i < nr_kernel; i++)
		if (is_kernel_addr(in->kernel[i]))
			kernel[nk++] = in->kernel[i];
	/*
	 * User stack: kernel addresses before the first user address are the
	 * kernel part leaking in; they fill an empty kernel part. Everything
	 * else that is not a user address is dropped.
	 */
	leaked_ok = in->kernel_mode && nk == 0;
	for (i = 0; !in->no_user_part && i < nr_user; i++) {
		uint64_t ip = in->user[i];

		if (is_user_addr(ip))
			user[nu++] = ip;
		else if (is_kernel_addr(ip) && leaked_ok && !nu)
			kernel[nk++] = ip;
	}
	/* The interrupted ip stands in for an empty stack of its own mode. */
	if (in->kernel_mode && !nk && is_kernel_addr(in->ip))
		kernel[nk++] = in->ip;
	if (!in->kernel_mode && !nu && !in->no_user_part && is_user_addr(in->ip))
		user[nu++] = in->ip;

	cc->nr = perfdata_callchain_join(nk ? kernel : NULL, nk, nu ? user : NULL, nu, cc->ips);
	cc->user = nu ? &cc->ips[cc->nr - nu] : NULL;
	cc->nr_user = nu;
	cc->ip = cc->nr ? cc->ips[1] : in->ip;
	cc->misc = perfdata_sample_cpumode(in->kernel_mode);
}
