/* SPDX-License-Identifier: MIT */
/*
 * vdso.h - the vDSO of this process as a file (internal).
 *
 * [vdso] mappings have no file on disk. perf takes the image from its own
 * process (the same kernel gives the same vDSO) and so do we: the image is
 * copied into a memfd that libdw can read like any ELF file. Callers check
 * its build-id against the recorded one before trusting it.
 */
#ifndef SYMBOLIZE_VDSO_H
#define SYMBOLIZE_VDSO_H

/* A read-only fd holding this process's vDSO image: 0 and *fd, or -errno. */
int vdso_open_self(int *fd);

#endif /* SYMBOLIZE_VDSO_H */
