// SPDX-License-Identifier: MIT
/* outfile.c - write to a temporary name, rename when complete (see outfile.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outfile.h"

int pp_outfile_write(const char *path, int (*fill)(void *ctx, int fd), void *ctx,
		     const char **step)
{
	const char *slash = strrchr(path, '/');
	char *tmp;
	int fd, err;

	*step = NULL;
	if (slash)
		err = asprintf(&tmp, "%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1);
	else
		err = asprintf(&tmp, ".%s.XXXXXX", path);
	if (err < 0) {
		*step = "cannot create";
		return -ENOMEM;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
		*step = "cannot create";
		free(tmp);
		return err;
	}
	err = fill(ctx, fd);
	if (!err && close(fd)) {
		err = -errno;
		*step = "writing";
	} else if (err) {
		close(fd);
	}
	if (!err && rename(tmp, path)) {
		err = -errno;
		*step = "cannot rename to";
	}
	if (err)
		unlink(tmp);
	free(tmp);
	return err;
}
