// SPDX-License-Identifier: MIT
/* kfeatures.c - the kernel's BPF features and the options they allow (kfeatures.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "recorder/kfeatures.h"
#include "recorder/tracer_build.h"

/*
 * Does the kernel let a perf_event program use a hash map created with
 * BPF_F_NO_PREALLOC? It checks when a program names the map, so a program
 * that only loads the map's address and returns answers.
 */
static bool probe_hash_nonprealloc(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_NO_PREALLOC);
	int map_fd, prog_fd;

	map_fd = bpf_map_create(BPF_MAP_TYPE_HASH, NULL, 4, 4, 1, &mo);
	if (map_fd < 0)
		return false;
	{
		const struct bpf_insn insns[] = {
			/* r1 = map (BPF_LD_IMM64 with BPF_PSEUDO_MAP_FD) */
			{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
			  .src_reg = BPF_PSEUDO_MAP_FD, .imm = map_fd },
			{ 0 },
			/* r0 = 0; exit */
			{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
			{ .code = BPF_JMP | BPF_EXIT },
		};

		prog_fd = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, NULL, "GPL", insns,
					sizeof(insns) / sizeof(insns[0]), NULL);
	}
	close(map_fd);
	if (prog_fd < 0)
		return false;
	close(prog_fd);
	return true;
}

/*
 * BPFREC_KERNEL_LACKS=bpf_loop,task_storage,... takes features away from
 * what the probes found (it never adds one): the older kernels' paths run
 * and are tested on any kernel.
 */
static void take_away(struct kfeatures *kf, const char *lacks)
{
	const struct {
		const char *name;
		bool *have;
	} names[] = {
		{ "bpf_loop", &kf->bpf_loop },
		{ "task_storage", &kf->task_storage },
		{ "ringbuf_dynptr", &kf->ringbuf_dynptr },
		{ "hash_nonprealloc", &kf->hash_nonprealloc },
	};

	while (lacks && *lacks) {
		size_t len = strcspn(lacks, ",");

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == len && !strncmp(lacks, names[i].name, len))
				*names[i].have = false;
		lacks += len + (lacks[len] == ',');
	}
}

void kfeatures_probe(struct kfeatures *kf)
{
	struct utsname u;

	memset(kf, 0, sizeof(*kf));
	if (uname(&u) == 0)
		snprintf(kf->release, sizeof(kf->release), "%s", u.release);
	kf->bpf_loop = libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop, NULL) > 0;
	kf->task_storage = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) > 0;
	kf->ringbuf_dynptr = libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT,
						     BPF_FUNC_ringbuf_reserve_dynptr, NULL) > 0;
	kf->hash_nonprealloc = probe_hash_nonprealloc();
	take_away(kf, getenv("BPFREC_KERNEL_LACKS"));
}

/* One requirement: the option, the feature it needs, the first Linux with it, what instead. */
struct kfeature_rule {
	bool wanted;
	bool present;
	const char *option;
	const char *linux_version;
	const char *instead;
};

int kfeatures_check(const struct kfeatures *kf, const struct kfeatures_want *want, char *msg,
		    size_t len)
{
	/*
	 * -g walks with bounded loops where bpf_loop is missing (unwind.bpf.h);
	 * dwarf samples reserve their longest record where dynptrs are missing
	 * (profile.bpf.c); the off-CPU and run-queue tracers have a compat
	 * build (tracer_build.h) with per-task state in a hash and bounded
	 * loops. Off-CPU's dwarf keeps its stack copy from switch-out to
	 * switch-in in task storage and sends it with a dynptr: current build
	 * only. The allocation tracer keeps task storage and bpf_loop.
	 */
	const struct kfeature_rule rules[] = {
		{ want->off_cpu && want->dwarf, kf->ringbuf_dynptr && !tracer_build_compat(kf),
		  "--off-cpu with --call-graph dwarf", "6.0", "record it with -g or --call-graph fp" },
		{ want->alloc, kf->task_storage && kf->bpf_loop, "--alloc", "5.17",
		  "record without it" },
	};

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		const struct kfeature_rule *r = &rules[i];

		if (!r->wanted || r->present)
			continue;
		snprintf(msg, len, "%s needs Linux %s or newer (this is %s): %s", r->option,
			 r->linux_version, kf->release[0] ? kf->release : "an older kernel",
			 r->instead);
		return -ENOTSUP;
	}
	return 0;
}
