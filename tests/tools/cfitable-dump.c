// SPDX-License-Identifier: MIT
/*
 * cfitable-dump - build the unwind table of ELF files (symbolize/cfitable.h)
 * and print its size, for measuring it and for looking at its rows.
 *
 *   cfitable-dump [--rows] ELF...
 *
 * One line per file: path, rows, bytes, the rows libdw gave before merging,
 * bytes of code without CFI (probed; truncated=1 when the probe budget ran
 * out), bytes of executable segments that are no code by the section
 * headers (not probed), PLT / unsupported / rbp-lost rows, libdw's FDE
 * caches dropped, and the build time in ms (informative: nothing asserts
 * on it). --rows adds one
 * line per row: "pc cfa-kind cfa-off rbp-kind rbp-off".
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "symbolize/cfitable.h"

static const char *const cfa_names[] = { "none", "rsp", "rbp", "plt", "unsupported", "root",
					 "signal", "?" };
static const char *const rbp_names[] = { "same", "cfa", "lost", "?" };

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	bool rows = false;
	int status = 0;

	for (int i = 1; i < argc; i++) {
		struct cfi_table *t;
		double t0;
		int err;

		if (!strcmp(argv[i], "--rows")) {
			rows = true;
			continue;
		}
		t0 = now_ms();
		err = cfi_table_build(argv[i], &t);
		if (err) {
			fprintf(stderr, "cfitable-dump: %s: %s\n", argv[i], strerror(-err));
			status = 1;
			continue;
		}
		printf("%s rows=%zu bytes=%zu cfi_rows=%llu gap_bytes=%llu truncated=%d "
		       "noncode_bytes=%llu plt=%llu unsupported=%llu rbp_lost=%llu renewals=%llu "
		       "build_ms=%.1f\n",
		       argv[i], t->nr, t->nr * sizeof(t->rows[0]),
		       (unsigned long long)t->stats.cfi_rows, (unsigned long long)t->stats.gap_bytes,
		       t->stats.gap_truncated, (unsigned long long)t->stats.noncode_bytes,
		       (unsigned long long)t->stats.plt_rows,
		       (unsigned long long)t->stats.unsupported_rows,
		       (unsigned long long)t->stats.rbp_lost_rows,
		       (unsigned long long)t->stats.cfi_renewals, now_ms() - t0);
		for (size_t r = 0; rows && r < t->nr; r++) {
			__u32 rule = t->rows[r].rule;

			printf("%#x %s %u %s %d\n", t->rows[r].pc, cfa_names[unwind_rule_cfa(rule)],
			       unwind_rule_cfa_off(rule), rbp_names[unwind_rule_rbp(rule)],
			       unwind_rule_rbp_off(rule));
		}
		cfi_table_free(t);
	}
	return status;
}
