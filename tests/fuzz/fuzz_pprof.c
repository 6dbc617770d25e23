// SPDX-License-Identifier: MIT
/*
 * fuzz_pprof.c - libFuzzer harness for the whole `bpfrec pprof` conversion:
 * perf.data bytes in (file or pipe mode), every profile built, symbolized
 * and serialized (to nowhere).
 *
 * Symbolization must not depend on this machine: every path it may open
 * (--symfs, --debug-dir, perf-PID.map dir, $HOME/.debug) is one empty
 * scratch directory and kallsyms is a one-line file in it, so an input
 * gives the same run on any machine and no run reads a real binary.
 */
#include <stdio.h>
#include <stdlib.h>

#include "perfdata/reader.h"
#include "tools/pprof/convert.h"
#include "tools/pprof/profile.h"
#include "fuzz.h"

static char scratch[] = "/tmp/bpfrec-fuzz-pprof.XXXXXX";
static char kallsyms[sizeof(scratch) + 16];

static void remove_scratch(void)
{
	unlink(kallsyms);
	rmdir(scratch);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	FILE *f;

	(void)argc;
	(void)argv;
	if (!mkdtemp(scratch))
		abort();
	snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", scratch);
	f = fopen(kallsyms, "w");
	if (!f)
		abort();
	fputs("ffffffff81000000 T _stext\nffffffff81001000 T fuzz_kernel_function\n", f);
	fclose(f);
	setenv("HOME", scratch, 1);
	atexit(remove_scratch);
	return 0;
}

static int discard(const void *data, size_t len, void *ctx)
{
	(void)data;
	*(size_t *)ctx += len;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct pp_label_spec labels[] = {
		{ PP_LABEL_PID, NULL }, { PP_LABEL_COMM, NULL }, { PP_LABEL_CPU, NULL },
		{ PP_LABEL_TRACE, "prev_comm" },
	};
	struct pp_convert_opts opts = {
		.input_name = "fuzz",
		.labels = labels,
		.nr_labels = sizeof(labels) / sizeof(labels[0]),
		.sym = { .kallsyms = kallsyms, .symfs = scratch, .debug_dir = scratch,
			 .jit_dir = scratch },
		.wall_clock_at_end = 1700000000ULL * 1000000000ULL,
	};
	struct perfdata_reader *r = NULL;
	struct pp_convert *c = NULL;
	size_t out = 0;
	int fd = fuzz_fd(data, size);

	if (fd < 0)
		abort();
	/* One input in four converts without symbolization (--no-symbolize). */
	opts.no_symbolize = size && data[size - 1] % 4 == 0;
	if (perfdata_reader_open(fd, "fuzz", &r) || pp_convert_new(&opts, r, &c) ||
	    pp_convert_read(c))
		goto out;
	for (size_t i = 0; i < pp_convert_nr_profiles(c); i++) {
		struct pprof_builder *b = NULL;

		(void)pp_convert_profile_name(c, i);
		if (pp_convert_build(c, i, &b))
			break;
		pprof_serialize(b, discard, &out);
		pprof_builder_free(b);
	}
	(void)pp_convert_warning(c);
out:
	pp_convert_free(c);
	perfdata_reader_free(r);
	close(fd);
	return 0;
}
