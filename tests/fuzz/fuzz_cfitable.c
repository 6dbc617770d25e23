// SPDX-License-Identifier: MIT
/*
 * fuzz_cfitable.c - libFuzzer harness for the unwind-table builder of
 * symbolize/cfitable.c: the input is an ELF file as a traced process could
 * map it (its .eh_frame, segments and headers are someone else's), given as
 * a memfd. A table that builds must keep the contract the BPF walker
 * relies on: rows strictly increasing, a NONE row last, and every lookup
 * and bias answer inside the table.
 */
#include <stdlib.h>

#include "symbolize/cfitable.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfi_table *t = NULL;
	int fd = fuzz_fd(data, size);

	if (fd < 0)
		return 0;
	if (cfi_table_build_fd(fd, &t) == 0) {
		if (!t->nr || t->nr > UNWIND_TABLE_MAX_ROWS ||
		    unwind_rule_cfa(t->rows[t->nr - 1].rule) != UNWIND_CFA_NONE)
			abort();
		for (size_t i = 1; i < t->nr; i++)
			if (t->rows[i].pc <= t->rows[i - 1].pc)
				abort();
		for (size_t i = 0; i < t->nr; i++) {
			const struct unwind_row *r = cfi_table_lookup(t, t->rows[i].pc);

			if (r != &t->rows[i])
				abort();
		}
		for (size_t i = 0; i < t->nr_segs; i++) {
			uint64_t bias;

			/* A mapping of a segment's file bytes always has a bias. */
			if (t->segs[i].filesz &&
			    cfi_table_bias(t, 0x7f0000000000ull, t->segs[i].filesz,
					   t->segs[i].offset, &bias))
				abort();
		}
	}
	cfi_table_free(t);
	close(fd);
	return 0;
}
