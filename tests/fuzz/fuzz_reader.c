// SPDX-License-Identifier: MIT
/*
 * fuzz_reader.c - libFuzzer harness for perfdata/reader.c: open any bytes as
 * perf.data (file or pipe mode), stream every record and use every query
 * the reader offers on what it absorbed (events, features, build-ids), and
 * describe every feature as `dump` does (perfdata/describe.c).
 */
#include <stdlib.h>

#include "perfdata/describe.h"
#include "perfdata/reader.h"
#include "fuzz.h"

static int touch_build_id(const struct perfdata_build_id *b, void *ctx)
{
	size_t *n = ctx;

	*n += b->size + strlen(b->filename);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct perf_event_header *h;
	struct perfdata_reader *r = NULL;
	size_t sum = 0;
	int fd = fuzz_fd(data, size);

	if (fd < 0)
		abort();
	if (!perfdata_reader_open(fd, "fuzz", &r)) {
		while (perfdata_reader_next(r, &h) > 0) {
			struct perfdata_sample_id sid;
			struct perfdata_sample s;

			sum += perfdata_reader_offset(r);
			if (h->type == PERF_RECORD_SAMPLE)
				perfdata_reader_parse_sample(r, h, &s, NULL);
			else
				perfdata_reader_parse_sample_id(r, h, &sid);
		}
		for (size_t i = 0; i < perfdata_reader_nr_events(r); i++) {
			const struct perfdata_event *ev = perfdata_reader_event(r, i);

			if (ev->name)
				sum += strlen(ev->name);
		}
		for (unsigned int f = 0; f < PERFDATA_FEAT_BITS; f++) {
			const char *s = perfdata_reader_feature_string(r, f);
			char text[256];		/* smaller than some descriptions: they are cut */
			int len;
			size_t n;

			if (s)
				sum += strlen(s);
			perfdata_reader_feature(r, f, &n);
			sum += n;
			len = perfdata_describe_feature(r, f, text, sizeof(text));
			if (len >= 0)
				sum += strnlen(text, sizeof(text)) + (size_t)len;
		}
		perfdata_reader_for_each_build_id(r, touch_build_id, &sum);
	}
	if (r)
		sum += strlen(perfdata_reader_error(r));
	perfdata_reader_free(r);
	close(fd);
	return sum == (size_t)-1;	/* keep sum alive */
}
