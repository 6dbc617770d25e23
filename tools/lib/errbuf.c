// SPDX-License-Identifier: MIT
/* errbuf.c - a handle's error message (errbuf.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include <bpfrec/common.h>

#include "tools/lib/errbuf.h"

int errbuf_set(char *buf, size_t size, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return err;
}

int errbuf_opts_refused(char *buf, size_t size, const char *type, size_t sz)
{
	return errbuf_set(buf, size, -EINVAL, "%s: sz %zu is too small, or the program sets "
			  "fields this libbpfrec (%s) does not know: declare it with "
			  "BPFREC_OPTS()", type, sz, bpfrec_version());
}
