// SPDX-License-Identifier: MIT
/*
 * privprobe - ask the kernel itself whether this process may do what
 * `bpfrec record` does, so a test decides what to expect from the kernel's
 * answer instead of from rules that vary between kernels.
 *
 *   privprobe bpf      load a two-instruction BPF_PROG_TYPE_PERF_EVENT program
 *   privprobe events   open a cpu-clock perf event on CPU 0 for every task
 *   privprobe caps     print the effective capability mask (hex)
 *
 * Exit 0 and "allowed" when the kernel allows it, 1 and the errno's name
 * when it refuses, 2 on usage errors. Nothing of ours is used: the probe
 * must not share a bug with the recorder it checks.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/perf_event.h>

static int answer(int fd)
{
	if (fd < 0) {
		printf("refused: %s\n", strerrorname_np(errno) ? strerrorname_np(errno) : "?");
		return 1;
	}
	close(fd);
	printf("allowed\n");
	return 0;
}

static int probe_bpf(void)
{
	/* r0 = 0; exit */
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	attr.insns = (uint64_t)(uintptr_t)insns;
	attr.insn_cnt = 2;
	attr.license = (uint64_t)(uintptr_t)"GPL";
	return answer((int)syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr)));
}

static int probe_events(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 1000000;
	a.disabled = 1;
	return answer((int)syscall(SYS_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC));
}

static int probe_caps(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };

	if (syscall(SYS_capget, &hdr, data) < 0) {
		perror("capget");
		return 1;
	}
	printf("%llx\n", (unsigned long long)data[1].effective << 32 | data[0].effective);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "bpf"))
		return probe_bpf();
	if (argc == 2 && !strcmp(argv[1], "events"))
		return probe_events();
	if (argc == 2 && !strcmp(argv[1], "caps"))
		return probe_caps();
	fprintf(stderr, "usage: privprobe bpf|events|caps\n");
	return 2;
}
