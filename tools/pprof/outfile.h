/* SPDX-License-Identifier: MIT */
/*
 * outfile.h - write an output file so that it is never seen half-written:
 * into a temporary name in the same directory (mode 0600: profiles show
 * what programs do), renamed over the path only once complete. The one
 * write path of the converters' outputs (pprof profiles, flame graphs).
 */
#ifndef TOOLS_PPROF_OUTFILE_H
#define TOOLS_PPROF_OUTFILE_H

/*
 * fill(ctx, fd) writes the content and returns 0 or -errno. Returns 0, the
 * error fill returned (*step = NULL: fill said what went wrong), or -errno
 * with *step naming what failed: "cannot create", "writing" (close) or
 * "cannot rename to". The temporary file is gone unless 0 is returned.
 */
int pp_outfile_write(const char *path, int (*fill)(void *ctx, int fd), void *ctx,
		     const char **step);

#endif /* TOOLS_PPROF_OUTFILE_H */
