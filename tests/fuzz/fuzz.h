/* SPDX-License-Identifier: MIT */
/*
 * fuzz.h - shared by the libFuzzer harnesses of tests/fuzz/.
 *
 * The reader takes a file descriptor, so an input becomes one: a pipe when
 * it is a pipe-mode stream that fits the pipe's buffer (the read(2) path of
 * the reader, as with `perf record -o - | bpfrec pprof -i -`), else a memfd
 * (the pread(2) path of a regular file). Either way nothing touches the disk.
 */
#ifndef TESTS_FUZZ_FUZZ_H
#define TESTS_FUZZ_FUZZ_H

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perfdata/perfdata.h"

/* libFuzzer's entry points, which each harness defines (the second only where it needs to). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A pipe-mode header: magic then size 16. */
static inline int fuzz_is_pipe_stream(const uint8_t *data, size_t size)
{
	uint64_t hdr_size;

	if (size < 16)
		return 0;
	memcpy(&hdr_size, data + 8, 8);
	return hdr_size == PERFDATA_PIPE_HEADER_SIZE;
}

static inline int fuzz_write_all(int fd, const uint8_t *data, size_t size)
{
	while (size) {
		ssize_t n = write(fd, data, size);

		if (n <= 0)
			return -1;
		data += n;
		size -= (size_t)n;
	}
	return 0;
}

/* An fd whose contents are data: a pipe (write end closed) or a memfd at offset 0. */
static inline int fuzz_fd(const uint8_t *data, size_t size)
{
	int fd;

	if (fuzz_is_pipe_stream(data, size)) {
		int p[2];

		if (pipe2(p, O_CLOEXEC) == 0) {
			if (fcntl(p[1], F_SETPIPE_SZ, 1 << 20) >= (int)size &&
			    !fuzz_write_all(p[1], data, size)) {
				close(p[1]);
				return p[0];
			}
			close(p[0]);
			close(p[1]);
		}
	}
	fd = memfd_create("fuzz", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fuzz_write_all(fd, data, size) || lseek(fd, 0, SEEK_SET)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * libtraceevent (not ours, not instrumented) leaks a few bytes when
 * tep_parse_event() rejects a malformed format; LeakSanitizer would stop
 * every tracing run on that. Our own leaks still fail the run.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so\n";
}

/* A small quarantine: recycling the default 256 MiB one stalls busy machines. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "quarantine_size_mb=32";
}

#endif /* TESTS_FUZZ_FUZZ_H */
