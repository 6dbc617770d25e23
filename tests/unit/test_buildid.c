// SPDX-License-Identifier: MIT
/*
 * test_buildid.c - build-ids of ELF files (checked against binutils'
 * `readelf -n`), of raw note blobs (well-formed, odd and hostile), and of
 * the running kernel (checked against /sys/kernel/notes scanned here by a
 * different method).
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/buildid.h"
#include "tests/unit/test_fixture.h"

/* The "Build ID:" of `readelf -n path` in lower-case hex, or "" when none. */
static void readelf_build_id(const char *path, char *hex, size_t size)
{
	char cmd[4200], line[512];
	FILE *p;

	hex[0] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	cr_assert(p, "popen readelf");
	while (fgets(line, sizeof(line), p)) {
		char *s = strstr(line, "Build ID: ");

		if (s) {
			s += strlen("Build ID: ");
			s[strcspn(s, " \n")] = '\0';
			snprintf(hex, size, "%s", s);
		}
	}
	pclose(p);
}

static void make_tmpdir(char *dir, size_t size)
{
	snprintf(dir, size, "/tmp/bpfrec-buildid.XXXXXX");
	cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
}

static void rm_rf(const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert(system(cmd) == 0);
}

static void run(const char *cmd)
{
	cr_assert(system(cmd) == 0, "command failed: %s", cmd);
}

static void expect_file_matches_readelf(const char *path)
{
	uint8_t id[BUILDID_MAX];
	char want[128], got[2 * BUILDID_MAX + 1];
	size_t size = 0;
	int err;

	readelf_build_id(path, want, sizeof(want));
	cr_assert(want[0], "readelf finds no build-id in %s", path);
	err = buildid_read_file(path, id, &size);
	cr_assert_eq(err, 0, "buildid_read_file(%s) = %d", path, err);
	cr_assert_eq(size * 2, strlen(want), "%s: size %zu, readelf says %s", path, size, want);
	cr_assert_str_eq(buildid_to_hex(id, size, got), want, "%s", path);
}

Test(buildid, file_matches_readelf)
{
	Dl_info libc;
	char self[4096];

	expect_file_matches_readelf(fixture("sym_target"));
	expect_file_matches_readelf(fixture("sym_inline"));
	self_exe(self, sizeof(self));
	expect_file_matches_readelf(self);
	/* A shared library of the system: libc, wherever it lives. */
	cr_assert(dladdr((void *)printf, &libc) && libc.dli_fname);
	expect_file_matches_readelf(libc.dli_fname);
}

/*
 * Files a command makes: $OUT is the file (in a fresh directory), $IN the
 * sym_target fixture. What buildid_read_file() says of each; a build-id
 * read must be readelf's.
 */
static const struct {
	const char *name, *cmd;
	int err;
	size_t size;
} made[] = {
	{ "md5 build-id: 16 bytes",
	  "echo 'int main(void){return 0;}' | cc -x c - -o \"$OUT\" -Wl,--build-id=md5", 0, 16 },
	{ "no build-id", "objcopy --remove-section=.note.gnu.build-id \"$IN\" \"$OUT\"", -ENOENT,
	  0 },
};

Test(buildid, files_made_by_the_toolchain)
{
	for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
		char dir[64], path[128];
		uint8_t id[BUILDID_MAX];
		size_t size = 0;

		make_tmpdir(dir, sizeof(dir));
		snprintf(path, sizeof(path), "%s/out", dir);
		cr_assert_eq(setenv("OUT", path, 1), 0);
		cr_assert_eq(setenv("IN", fixture("sym_target"), 1), 0);
		run(made[i].cmd);
		cr_assert_eq(buildid_read_file(path, id, &size), made[i].err, "%s", made[i].name);
		if (!made[i].err) {
			cr_assert_eq(size, made[i].size, "%s", made[i].name);
			expect_file_matches_readelf(path);
		}
		rm_rf(dir);
	}
}

Test(buildid, bad_files)
{
	char dir[64], path[128];
	uint8_t id[BUILDID_MAX];
	size_t size = 0;
	FILE *f;

	make_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/text", dir);
	f = fopen(path, "w");
	cr_assert(f);
	fputs("not an ELF file\n", f);
	fclose(f);
	cr_assert_eq(buildid_read_file(path, id, &size), -EINVAL);
	snprintf(path, sizeof(path), "%s/missing", dir);
	cr_assert_eq(buildid_read_file(path, id, &size), -ENOENT);
	rm_rf(dir);
}

/* Append one note (native endian, 4-byte padded) to buf at *len. */
static void put_note(uint8_t *buf, size_t *len, const char *name, uint32_t namesz, uint32_t type,
		     const void *desc, uint32_t descsz)
{
	memcpy(buf + *len, &namesz, 4);
	memcpy(buf + *len + 4, &descsz, 4);
	memcpy(buf + *len + 8, &type, 4);
	*len += 12;
	memset(buf + *len, 0, (namesz + 3) & ~3u);
	memcpy(buf + *len, name, namesz);
	*len += (namesz + 3) & ~3u;
	memset(buf + *len, 0, (descsz + 3) & ~3u);
	memcpy(buf + *len, desc, descsz);
	*len += (descsz + 3) & ~3u;
}

/* Parse a copy in a buffer of exactly len bytes, so ASan sees any overread. */
static int parse_exact(const uint8_t *buf, size_t len, uint8_t id[BUILDID_MAX], size_t *size)
{
	uint8_t *copy = malloc(len ? len : 1);
	int err;

	cr_assert(copy);
	memcpy(copy, buf, len);
	err = buildid_parse_notes(copy, len, id, size);
	free(copy);
	return err;
}

static const uint8_t want_id[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
				     7, 8, 9, 10, 11, 12, 13, 14, 15, 0x10 };

Test(buildid, parse_notes_skips_other_notes)
{
	uint8_t buf[256], id[BUILDID_MAX];
	size_t len = 0, size = 0;

	put_note(buf, &len, "Linux", 6, 0x100, "\x01\x02\x03\x04\x05", 5);
	put_note(buf, &len, "GNU", 4, 1 /* NT_GNU_ABI_TAG */, "\0\0\0\0\3\0\0\0", 8);
	put_note(buf, &len, "Xen", 4, 3, "12345678", 8);
	put_note(buf, &len, "GNU", 4, 3, want_id, 20);
	cr_assert_eq(parse_exact(buf, len, id, &size), 0);
	cr_assert_eq(size, 20);
	cr_assert_arr_eq(id, want_id, 20);
}

Test(buildid, parse_notes_without_build_id)
{
	uint8_t buf[256] = { 0 }, id[BUILDID_MAX];
	size_t len = 0, size = 0;

	cr_assert_eq(parse_exact(buf, 0, id, &size), -ENOENT);
	put_note(buf, &len, "Xen", 4, 3, want_id, 20);
	put_note(buf, &len, "GNU", 4, 1, "\0\0\0\0", 4);
	cr_assert_eq(parse_exact(buf, len, id, &size), -ENOENT);
	/* A few stray bytes after the last note are not a note. */
	cr_assert_eq(parse_exact(buf, len + 3, id, &size), -ENOENT);
}

Test(buildid, parse_notes_rejects_bad_sizes)
{
	uint8_t buf[256], id[BUILDID_MAX], big[24] = { 0 };
	size_t len = 0, size = 0;
	uint32_t huge = 0xffffffffu;

	put_note(buf, &len, "GNU", 4, 3, big, 24);
	cr_assert_eq(parse_exact(buf, len, id, &size), -E2BIG);
	len = 0;
	put_note(buf, &len, "GNU", 4, 3, "", 0);
	cr_assert_eq(parse_exact(buf, len, id, &size), -EINVAL);
	/* namesz and descsz that point far past the end must not wrap around. */
	len = 0;
	put_note(buf, &len, "GNU", 4, 3, want_id, 20);
	memcpy(buf, &huge, 4);
	cr_assert_eq(parse_exact(buf, len, id, &size), -EINVAL);
	len = 0;
	put_note(buf, &len, "GNU", 4, 3, want_id, 20);
	memcpy(buf + 4, &huge, 4);
	cr_assert_eq(parse_exact(buf, len, id, &size), -EINVAL);
}

Test(buildid, parse_notes_every_truncation)
{
	uint8_t buf[256], id[BUILDID_MAX];
	size_t len = 0, size, cut;

	put_note(buf, &len, "Linux", 6, 0x100, "abc", 3);
	put_note(buf, &len, "GNU", 4, 3, want_id, 20);
	for (cut = 0; cut <= len; cut++) {
		int err;

		size = 0;
		err = parse_exact(buf, cut, id, &size);
		if (cut == len) {
			cr_assert_eq(err, 0);
			cr_assert_arr_eq(id, want_id, 20);
		} else {
			cr_assert(err == -EINVAL || err == -ENOENT, "cut %zu: %d", cut, err);
		}
	}
}

/*
 * The kernel's build-id, found in /sys/kernel/notes by pattern: the 16
 * bytes {namesz 4, descsz N, type 3, "GNU\0"} at a 4-byte boundary.
 */
static bool scan_kernel_notes(const uint8_t *buf, size_t len, char *hex)
{
	for (size_t off = 0; off + 16 <= len; off += 4) {
		uint32_t w[3];

		memcpy(w, buf + off, 12);
		if (w[0] == 4 && w[2] == 3 && !memcmp(buf + off + 12, "GNU", 4) && w[1] &&
		    w[1] <= 20 && off + 16 + w[1] <= len) {
			for (uint32_t i = 0; i < w[1]; i++)
				sprintf(hex + 2 * i, "%02x", buf[off + 16 + i]);
			return true;
		}
	}
	return false;
}

Test(buildid, kernel_matches_sys_kernel_notes)
{
	uint8_t raw[4096], id[BUILDID_MAX];
	char want[41], got[41];
	size_t size = 0, len = 0;
	ssize_t n;
	int fd;

	fd = open("/sys/kernel/notes", O_RDONLY);
	if (fd < 0)
		cr_skip_test("no /sys/kernel/notes here");
	while ((n = read(fd, raw + len, sizeof(raw) - len)) > 0)
		len += (size_t)n;
	close(fd);
	cr_assert(scan_kernel_notes(raw, len, want), "no GNU build-id note in /sys/kernel/notes");
	cr_assert_eq(buildid_read_kernel(NULL, id, &size), 0);
	cr_assert_str_eq(buildid_to_hex(id, size, got), want);
}

Test(buildid, kernel_notes_from_a_file)
{
	char dir[64], path[128];
	uint8_t buf[256], id[BUILDID_MAX];
	size_t len = 0, size = 0;
	FILE *f;

	put_note(buf, &len, "Xen", 4, 5, "abcd", 4);
	put_note(buf, &len, "GNU", 4, 3, want_id, 20);
	make_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/notes", dir);
	f = fopen(path, "w");
	cr_assert(f);
	cr_assert_eq(fwrite(buf, 1, len, f), len);
	fclose(f);
	cr_assert_eq(buildid_read_kernel(path, id, &size), 0);
	cr_assert_eq(size, 20);
	cr_assert_arr_eq(id, want_id, 20);
	snprintf(path, sizeof(path), "%s/missing", dir);
	cr_assert_eq(buildid_read_kernel(path, id, &size), -ENOENT);
	rm_rf(dir);
}

Test(buildid, to_hex)
{
	const uint8_t id[] = { 0x00, 0x0f, 0xa0, 0xff, 0x12 };
	char out[11];

	cr_assert_str_eq(buildid_to_hex(id, sizeof(id), out), "000fa0ff12");
	cr_assert_str_eq(buildid_to_hex(id, 0, out), "");
}
