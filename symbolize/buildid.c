// SPDX-License-Identifier: MIT
/*
 * buildid.c - read GNU build-ids (see buildid.h).
 *
 * ELF files go through libelf/libdwelf, which look at the PT_NOTE segments
 * (or the SHT_NOTE sections of files without program headers) and nothing
 * else: the recorder calls this for every mapped file, so it must stay cheap.
 * Raw note blobs (/sys/kernel/notes) are parsed here with every length
 * checked against the buffer before it is used.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <libelf.h>

#include "symbolize/buildid.h"
#include "symbolize/safeopen.h"
#include "symbolize/util.h"

#define NOTE_ALIGN(x) (((x) + 3) & ~(size_t)3)

static int copy_id(const void *src, size_t len, uint8_t id[BUILDID_MAX], size_t *size)
{
	if (len == 0)
		return -EINVAL;
	if (len > BUILDID_MAX)
		return -E2BIG;
	memcpy(id, src, len);
	*size = len;
	return 0;
}

int buildid_read_file(const char *path, uint8_t id[BUILDID_MAX], size_t *size)
{
	int fd, err;

	err = safeopen(-1, path, NULL, &fd, NULL);
	if (err)
		return err;
	err = buildid_read_fd(fd, id, size);
	close(fd);
	return err;
}

int buildid_read_fd(int fd, uint8_t id[BUILDID_MAX], size_t *size)
{
	const void *bid;
	ssize_t len;
	Elf *elf;
	int err;

	err = elf_open_fd(fd, &elf);
	if (err)
		return err;
	len = dwelf_elf_gnu_build_id(elf, &bid);
	if (len < 0)
		err = -EINVAL;	/* malformed notes */
	else if (len == 0)
		err = -ENOENT;
	else
		err = copy_id(bid, (size_t)len, id, size);
	elf_end(elf);
	return err;
}

int buildid_parse_notes(const void *notes, size_t len, uint8_t id[BUILDID_MAX], size_t *size)
{
	const unsigned char *p = notes;
	size_t off = 0;

	/* Fewer than 12 bytes left cannot hold a note header: trailing padding. */
	while (len - off >= 12) {
		uint32_t namesz, descsz, type;
		size_t name_off, desc_off;

		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		name_off = off + 12;
		/* Sizes are u32: padding them cannot overflow a 64-bit size_t. */
		if (NOTE_ALIGN((size_t)namesz) > len - name_off)
			return -EINVAL;
		desc_off = name_off + NOTE_ALIGN((size_t)namesz);
		if (descsz > len - desc_off)
			return -EINVAL;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(p + name_off, "GNU", 4))
			return copy_id(p + desc_off, descsz, id, size);
		/* The last note may lack the padding after its descriptor. */
		off = desc_off + NOTE_ALIGN((size_t)descsz);
		if (off > len)
			break;
	}
	return -ENOENT;
}

int buildid_read_kernel(const char *notes_path, uint8_t id[BUILDID_MAX], size_t *size)
{
	unsigned char buf[4096];
	size_t len = 0;
	ssize_t n;
	int fd;

	if (!notes_path)
		notes_path = "/sys/kernel/notes";
	fd = open(notes_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* sysfs binary files may hand out fewer bytes than asked: read to EOF. */
	while (len < sizeof(buf)) {
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return (int)n;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	return buildid_parse_notes(buf, len, id, size);
}

char *buildid_to_hex(const uint8_t *id, size_t size, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < size; i++) {
		out[2 * i] = digits[id[i] >> 4];
		out[2 * i + 1] = digits[id[i] & 15];
	}
	out[2 * size] = '\0';
	return out;
}
