// SPDX-License-Identifier: MIT
/* vdso.c - copy this process's vDSO into a memfd (vdso.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/vdso.h"

/* The size of the [vdso] mapping that starts at base, from /proc/self/maps. */
static int vdso_size(unsigned long base, size_t *size)
{
	char line[512];
	int err = -ENOENT;
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		if (sscanf(line, "%lx-%lx", &start, &end) == 2 && start == base && end > start &&
		    strstr(line, "[vdso]")) {
			*size = end - start;
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

int vdso_open_self(int *out)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	const char *p;
	size_t size, done = 0;
	int fd, err;

	if (!base)
		return -ENOENT;
	err = vdso_size(base, &size);
	if (err)
		return err;
	fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (p = (const char *)base; done < size;) {
		ssize_t n = write(fd, p + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			close(fd);
			return err;
		}
		done += (size_t)n;
	}
	*out = fd;
	return 0;
}
