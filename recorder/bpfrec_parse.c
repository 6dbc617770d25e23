// SPDX-License-Identifier: MIT
/*
 * bpfrec_parse.c - the option-value parsers of bpfrec/record.h, over the
 * recorder's own (cpulist.h, rotate.h), so a program and the recorder read
 * "0,2-3" or "100M" the same way.
 */
#include <errno.h>

#include <bpfrec/record.h>

#include "recorder/cpulist.h"
#include "recorder/rotate.h"

int bpfrec_cpulist_parse(const char *s, int **cpus, size_t *nr)
{
	if (!s || !cpus || !nr)
		return -EINVAL;
	return cpulist_parse(s, cpus, nr);
}

int bpfrec_size_parse(const char *s, uint64_t *bytes)
{
	struct rotate_spec spec;

	if (!s || !bytes || rotate_parse(s, &spec) || spec.mode != ROTATE_SIZE)
		return -EINVAL;
	*bytes = spec.bytes;
	return 0;
}

int bpfrec_switch_output_parse(const char *arg, enum bpfrec_switch *mode, uint64_t *bytes,
			       uint64_t *ns)
{
	static const enum bpfrec_switch modes[] = {
		[ROTATE_NONE] = BPFREC_SWITCH_NONE,
		[ROTATE_SIGNAL] = BPFREC_SWITCH_MANUAL,
		[ROTATE_SIZE] = BPFREC_SWITCH_SIZE,
		[ROTATE_TIME] = BPFREC_SWITCH_TIME,
	};
	struct rotate_spec spec;

	if (!mode || !bytes || !ns || rotate_parse(arg, &spec))
		return -EINVAL;
	*mode = modes[spec.mode];
	*bytes = spec.bytes;
	*ns = spec.ns;
	return 0;
}
