// SPDX-License-Identifier: MIT
/*
 * pprof-groups - convert a perf.data with the public API's group callback
 * (bpfrec/pprof.h), grouping processes by command name, as the agent
 * groups them by service: one profile per (event, group).
 *
 *   pprof-groups IN.data OUTDIR
 *
 * Writes OUTDIR/N.pb.gz for profile N and prints one line per profile on
 * stdout: "N EVENT GROUP SAMPLES" (a process without a name is grouped as
 * "-"). Errors go to stderr with exit 1.
 */
#include <stdio.h>
#include <stdlib.h>

#include <bpfrec/pprof.h>

static const char *group_by_comm(void *ctx, uint32_t pid, const char *comm)
{
	(void)ctx;
	(void)pid;
	return comm[0] ? comm : "-";	/* copied by the converter */
}

int main(int argc, char **argv)
{
	BPFREC_OPTS(bpfrec_pprof_opts, o, .group = group_by_comm);
	struct bpfrec_pprof *c = NULL;
	char path[4096];
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: pprof-groups IN.data OUTDIR\n");
		return 2;
	}
	err = bpfrec_pprof_new(&o, &c);
	if (!err)
		err = bpfrec_pprof_read_path(c, argv[1]);
	for (size_t i = 0; !err && i < bpfrec_pprof_nr_profiles(c); i++) {
		snprintf(path, sizeof(path), "%s/%zu.pb.gz", argv[2], i);
		err = bpfrec_pprof_write_path(c, i, path, NULL);
		if (!err)
			printf("%zu %s %s %llu\n", i, bpfrec_pprof_profile_event(c, i),
			       bpfrec_pprof_profile_group(c, i),
			       (unsigned long long)bpfrec_pprof_profile_samples(c, i));
	}
	if (err)
		fprintf(stderr, "pprof-groups: %s\n", c ? bpfrec_pprof_error(c) : "out of memory");
	bpfrec_pprof_free(c);
	return err ? 1 : 0;
}
