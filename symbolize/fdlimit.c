// SPDX-License-Identifier: MIT
/* fdlimit.c - see fdlimit.h. */
#include <errno.h>
#include <sys/resource.h>

#include "symbolize/fdlimit.h"

int fd_limit_raise(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	if (rl.rlim_cur >= rl.rlim_max)
		return 0;
	rl.rlim_cur = rl.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &rl) ? -errno : 0;
}
