// SPDX-License-Identifier: MIT
/* vdso.c - copy this process's vDSO into a memfd (vdso.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/procmaps.h"
#include "symbolize/util.h"
#include "symbolize/vdso.h"
#include "tools/lib/fdio.h"

/*
 * The size of the [vdso] mapping that starts at base, from /proc/self/maps
 * (self, not our pid: in another pid namespace's /proc that is someone else).
 */
static int vdso_size(unsigned long base, size_t *size)
{
	struct procmaps m;
	char *text;
	size_t len;
	int err = read_whole_file("/proc/self/maps", &text, &len);

	if (err)
		return err;
	err = procmaps_parse(text, len, &m);
	free(text);
	if (err)
		return err;
	err = -ENOENT;
	for (size_t i = 0; i < m.nr; i++) {
		if (m.entries[i].start == base && !strcmp(m.entries[i].path, "[vdso]")) {
			*size = m.entries[i].end - m.entries[i].start;
			err = 0;
			break;
		}
	}
	procmaps_release(&m);
	return err;
}

int vdso_open_self(int *out)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	size_t size;
	int fd, err;

	if (!base)
		return -ENOENT;
	err = vdso_size(base, &size);
	if (err)
		return err;
	fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = fd_write_all(fd, (const void *)base, size);
	if (err) {
		close(fd);
		return err;
	}
	*out = fd;
	return 0;
}
