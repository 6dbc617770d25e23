// SPDX-License-Identifier: MIT
/* loadlog.c - the verifier's log of a failed load, per program (loadlog.h). */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <bpf/libbpf.h>

#include "recorder/loadlog.h"

/*
 * A rejected program's log at log level 1 is one line per instruction the
 * verifier walked before it gave up: this holds the logs of large
 * programs whole. A longer one is cut (kernels before 6.4 keep its start,
 * later ones its end) and the load fails with ENOSPC, still with a log.
 * The mapping is reserved, not used: only the pages the kernel writes cost
 * memory.
 */
#define LOAD_LOG_BYTES	(8u << 20)

void load_log_attach(struct load_log *l, struct bpf_object *obj)
{
	struct bpf_program *prog;
	size_t nr = 0, i = 0;
	void *bufs;

	if (!l || l->bufs)
		return;
	bpf_object__for_each_program(prog, obj)
		nr++;
	if (!nr)
		return;
	bufs = mmap(NULL, nr * LOAD_LOG_BYTES, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (bufs == MAP_FAILED)
		return;
	l->bufs = bufs;
	l->nr = nr;
	bpf_object__for_each_program(prog, obj) {
		/* A program libbpf refuses a buffer for keeps libbpf's logging. */
		bpf_program__set_log_buf(prog, l->bufs + i * LOAD_LOG_BYTES, LOAD_LOG_BYTES);
		i++;
	}
}

bool load_log_failed(struct load_log *l, const struct bpf_object *obj)
{
	struct bpf_program *prog;

	if (!l || !l->bufs)
		return false;
	bpf_object__for_each_program(prog, obj) {
		size_t size = 0, n;
		const char *log = bpf_program__log_buf(prog, &size);

		/* Ours only, and not empty: the verifier wrote it. */
		if (!log || log < l->bufs || log >= l->bufs + l->nr * LOAD_LOG_BYTES || !log[0])
			continue;
		snprintf(l->prog, sizeof(l->prog), "%s", bpf_program__name(prog));
		/* Ours to change: without its last newline, as one message. */
		n = strlen(log);
		if (log[n - 1] == '\n')
			((char *)log)[n - 1] = '\0';
		l->text = log;
		return true;
	}
	return false;
}

void load_log_free(struct load_log *l)
{
	if (l && l->bufs)
		munmap(l->bufs, l->nr * LOAD_LOG_BYTES);
	if (l)
		*l = (struct load_log){ 0 };
}
