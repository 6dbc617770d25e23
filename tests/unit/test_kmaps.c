// SPDX-License-Identifier: MIT
/*
 * test_kmaps.c - kernel_text_read() and kernel_maps_write() from fake
 * kallsyms (with __schedule's range for the tracers), modules and notes files (records compared byte for byte with
 * images built here), hidden kernel addresses, and the real /proc/kallsyms
 * when it is readable.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdata/writer.h"
#include "recorder/kmaps.h"
#include "tests/unit/test_roundtrip.h"

#define FMT(buf, ...) cr_assert_lt(snprintf(buf, sizeof(buf), __VA_ARGS__), (int)sizeof(buf))

static char dir[64];
static struct perfdata_writer *w;
static int out_fd = -1;
static off_t mark;

static struct trip_rec recs[32];

static void setup(void)
{
	struct perf_event_attr attr = trip_cpu_clock();
	struct perfdata_writer_opts wo = { .pipe = true };
	uint64_t id = 1;

	FMT(dir, "/tmp/bpfrec-kmaps.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	out_fd = trip_memfd("kmaps");
	w = trip_writer(out_fd, &wo, "cpu-clock", &attr, &id, 1);
	mark = trip_mark(w, out_fd);
}

static void teardown(void)
{
	char cmd[128];

	perfdata_writer_free(w);
	close(out_fd);
	FMT(cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(kmaps, .init = setup, .fini = teardown);

/* The records written since the last call (header and feature records skipped). */
static size_t take(void)
{
	size_t n = trip_take(w, out_fd, &mark, recs, sizeof(recs) / sizeof(recs[0]));

	cr_assert_leq(n, sizeof(recs) / sizeof(recs[0]));
	return n;
}

static const char *path_of(const char *name, char *buf, size_t size)
{
	cr_assert_lt(snprintf(buf, size, "%s/%s", dir, name), (int)size);
	return buf;
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	cr_assert_eq(fwrite(data, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
}

/* The MMAP perf synthesizes for kernel maps, with an all-zero trailer. */
static size_t kernel_mmap_image(uint8_t *buf, uint64_t start, uint64_t len, uint64_t pgoff,
				const char *filename)
{
	size_t name = (strlen(filename) + 1 + 7) / 8 * 8;
	size_t size = 8 + 8 + 24 + name + TRIP_CPU_CLOCK_TRAILER;
	struct perf_event_header h = { PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, (uint16_t)size };
	uint32_t pid = 0xffffffff, tid = 0;

	memset(buf, 0, size);
	memcpy(buf, &h, 8);
	memcpy(buf + 8, &pid, 4);
	memcpy(buf + 12, &tid, 4);
	memcpy(buf + 16, &start, 8);
	memcpy(buf + 24, &len, 8);
	memcpy(buf + 32, &pgoff, 8);
	memcpy(buf + 40, filename, strlen(filename));
	return size;
}

static void assert_record_is(const struct trip_rec *r, const uint8_t *want, size_t size)
{
	cr_assert_eq(r->size, size, "size %u, want %zu", r->size, size);
	for (size_t i = 0; i < size; i++)
		cr_assert_eq(r->raw[i], want[i], "byte %zu: %#x, want %#x", i, r->raw[i], want[i]);
}

static const uint8_t kernel_id[20] = {
	0x4a, 0x5a, 0x9b, 0x0a, 0xff, 0xb6, 0x6c, 0x43, 0x7a, 0xbc,
	0xd4, 0x55, 0xd2, 0x73, 0x8a, 0xf8, 0x79, 0x98, 0x5f, 0xa9,
};

/* /sys/kernel/notes as the kernel lays it out: a Linux note, then the GNU build-id. */
static void write_notes(const char *path)
{
	uint8_t notes[128] = { 0 };
	uint32_t hdr[3];
	size_t off = 0;

	hdr[0] = 6, hdr[1] = 4, hdr[2] = 0x101;
	memcpy(notes + off, hdr, 12);
	memcpy(notes + off + 12, "Linux", 6);
	off += 12 + 8 + 4;
	hdr[0] = 4, hdr[1] = 20, hdr[2] = 3;	/* NT_GNU_BUILD_ID */
	memcpy(notes + off, hdr, 12);
	memcpy(notes + off + 12, "GNU", 4);
	memcpy(notes + off + 16, kernel_id, sizeof(kernel_id));
	off += 12 + 4 + 20;
	write_file(path, notes, off);
}

static const char kallsyms[] =
	"0000000000000000 A fixed_percpu_data\n"
	"ffffffff81000000 T startup_64\n"
	"ffffffff81000000 T _text\n"
	"garbage\n"
	"ffffffff81000070 T secondary_startup_64\n"
	"ffffffff8220bb08 T _etext\n"
	"ffffffffc0a01000 t xfs_fake_text	[xfs]\n";

static const char modules[] =
	"bpfrec_fake_a 16384 0 - Live 0xffffffffc0a00000\n"
	"bpfrec_fake_b 8192 1 bpfrec_fake_a, Live 0xffffffffc0b00000 (OE)\n"
	"bpfrec_hidden 4096 0 - Live 0x0000000000000000\n"
	"not a module line\n";

Test(kmaps, kernel_and_modules_byte_exact)
{
	struct kernel_text kt;
	char ks[PATH_MAX], mods[PATH_MAX], notes[PATH_MAX];
	uint8_t want[256];
	size_t size;
	const struct trip_rec *b;
	int32_t pid;

	write_file(path_of("kallsyms", ks, sizeof(ks)), kallsyms, sizeof(kallsyms) - 1);
	write_file(path_of("modules", mods, sizeof(mods)), modules, sizeof(modules) - 1);
	write_notes(path_of("notes", notes, sizeof(notes)));
	cr_assert_eq(kernel_text_read(ks, &kt), 0);
	cr_assert_eq(kernel_maps_write(w, &kt, mods, notes), 0);
	cr_assert_eq(take(), 4);

	size = kernel_mmap_image(want, 0xffffffff81000000ull, 0x120bb08, 0xffffffff81000000ull,
				 "[kernel.kallsyms]_text");
	cr_assert_eq(size, 88);
	assert_record_is(&recs[0], want, size);
	/* Modules not installed under /lib/modules are named "[name]", as perf does. */
	size = kernel_mmap_image(want, 0xffffffffc0a00000ull, 16384, 0, "[bpfrec_fake_a]");
	assert_record_is(&recs[1], want, size);
	size = kernel_mmap_image(want, 0xffffffffc0b00000ull, 8192, 0, "[bpfrec_fake_b]");
	assert_record_is(&recs[2], want, size);

	/* The kernel's build-id (pipe mode: a HEADER_BUILD_ID record). */
	b = &recs[3];
	cr_assert_eq(b->type, 67);
	cr_assert_eq(b->misc, PERF_RECORD_MISC_KERNEL | (1 << 15));
	memcpy(&pid, b->raw + 8, 4);
	cr_assert_eq(pid, -1);
	cr_assert_arr_eq(b->raw + 12, kernel_id, 20);
	cr_assert_eq(b->raw[32], 20);
	cr_assert_str_eq((const char *)b->raw + 36, "[kernel.kallsyms]");
}

Test(kmaps, no_modules_no_notes)
{
	struct kernel_text kt;
	char ks[PATH_MAX], mods[PATH_MAX], notes[PATH_MAX];
	uint8_t want[256];
	size_t size;

	write_file(path_of("kallsyms", ks, sizeof(ks)), kallsyms, sizeof(kallsyms) - 1);
	path_of("no-modules", mods, sizeof(mods));
	path_of("no-notes", notes, sizeof(notes));
	cr_assert_eq(kernel_text_read(ks, &kt), 0);
	cr_assert_eq(kernel_maps_write(w, &kt, mods, notes), 0);
	cr_assert_eq(take(), 1);
	size = kernel_mmap_image(want, 0xffffffff81000000ull, 0x120bb08, 0xffffffff81000000ull,
				 "[kernel.kallsyms]_text");
	assert_record_is(&recs[0], want, size);
}

Test(kmaps, hidden_addresses_are_eperm)
{
	struct kernel_text kt;
	static const char hidden[] =
		"0000000000000000 T startup_64\n"
		"0000000000000000 T _text\n"
		"0000000000000000 T _etext\n";
	char ks[PATH_MAX], mods[PATH_MAX];

	write_file(path_of("kallsyms", ks, sizeof(ks)), hidden, sizeof(hidden) - 1);
	write_file(path_of("modules", mods, sizeof(mods)), modules, sizeof(modules) - 1);
	cr_assert_eq(kernel_text_read(ks, &kt), -EPERM);
	cr_assert_eq(take(), 0);
}

Test(kmaps, missing_symbols)
{
	struct kernel_text kt;
	static const char no_etext[] = "ffffffff81000000 T _text\nffffffff81000070 T foo\n";
	static const char backwards[] = "ffffffff82000000 T _text\nffffffff81000000 T _etext\n";
	char ks[PATH_MAX];

	write_file(path_of("kallsyms", ks, sizeof(ks)), no_etext, sizeof(no_etext) - 1);
	cr_assert_eq(kernel_text_read(ks, &kt), -ENOENT);
	write_file(ks, backwards, sizeof(backwards) - 1);
	cr_assert_eq(kernel_text_read(ks, &kt), -EINVAL);
	path_of("nothing-here", ks, sizeof(ks));
	cr_assert_eq(kernel_text_read(ks, &kt), -ENOENT);
	cr_assert_eq(take(), 0);
}

/* __schedule, read in the same pass: it ends where the next symbol starts. */
Test(kmaps, schedule_range_in_the_same_read)
{
	static const char with[] =
		"ffffffff81000000 T _text\n"
		"ffffffff821fa000 T __pfx___schedule\n"
		"ffffffff821fa6c0 t __schedule\n"
		"ffffffff821fb610 T __pfx_schedule\n"
		"ffffffff821fb620 T schedule\n"
		"ffffffff8220bb08 T _etext\n";
	static const char last[] = "ffffffff81000000 T _text\nffffffff8220bb08 T _etext\n"
				   "ffffffff821fa6c0 t __schedule\n";
	static const char data[] = "ffffffff81000000 T _text\nffffffff8220bb08 T _etext\n"
				   "ffffffff821fa6c0 d __schedule\nffffffff821fb610 T x\n";
	static const char hidden[] = "0000000000000000 T _text\n0000000000000000 t __schedule\n"
				     "0000000000000000 T schedule\n0000000000000000 T _etext\n";
	char ks[PATH_MAX];
	struct kernel_text kt;

	write_file(path_of("kallsyms", ks, sizeof(ks)), with, sizeof(with) - 1);
	cr_assert_eq(kernel_text_read(ks, &kt), 0);
	cr_assert_eq(kt.sched_start, 0xffffffff821fa6c0ull);
	cr_assert_eq(kt.sched_end, 0xffffffff821fb610ull);
	cr_assert_eq(kt.end, 0xffffffff8220bb08ull, "_etext after __schedule is still found");
	/* Without its end, as data or hidden: no range, and the kernel map as before. */
	write_file(ks, last, sizeof(last) - 1);
	cr_assert_eq(kernel_text_read(ks, &kt), 0);
	cr_assert_eq(kt.sched_start | kt.sched_end, 0);
	write_file(ks, data, sizeof(data) - 1);
	cr_assert_eq(kernel_text_read(ks, &kt), 0);
	cr_assert_eq(kt.sched_start | kt.sched_end, 0);
	write_file(ks, hidden, sizeof(hidden) - 1);
	cr_assert_eq(kernel_text_read(ks, &kt), -EPERM);
	cr_assert_eq(kt.sched_start | kt.sched_end, 0);
	write_file(ks, kallsyms, sizeof(kallsyms) - 1);
	cr_assert_eq(kernel_text_read(ks, &kt), 0);
	cr_assert_eq(kt.sched_start | kt.sched_end, 0, "no __schedule at all");
	cr_assert_eq(take(), 0);
}

/* The running kernel, when this process may see its addresses. */
Test(kmaps, real_kallsyms)
{
	struct kernel_text kt;
	uint64_t text = 0, etext = 0, start, len, pgoff;
	char line[512], name[256], type;
	uint64_t addr;
	int err;
	FILE *f = fopen("/proc/kallsyms", "r");

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f) && (!text || !etext)) {
		if (sscanf(line, "%lx %c %255s", &addr, &type, name) != 3)
			continue;
		if (!strcmp(name, "_text"))
			text = addr;
		else if (!strcmp(name, "_etext"))
			etext = addr;
	}
	fclose(f);

	err = kernel_text_read(NULL, &kt);
	if (!text) {
		cr_assert_eq(err, -EPERM, "hidden addresses must be -EPERM, got %d", err);
		return;
	}
	cr_assert_eq(err, 0);
	cr_assert_eq(kernel_maps_write(w, &kt, NULL, NULL), 0);
	cr_assert_geq(take(), 1);
	cr_assert_eq(recs[0].type, PERF_RECORD_MMAP);
	cr_assert_eq(recs[0].misc, PERF_RECORD_MISC_KERNEL);
	memcpy(&start, recs[0].raw + 16, 8);
	memcpy(&len, recs[0].raw + 24, 8);
	memcpy(&pgoff, recs[0].raw + 32, 8);
	cr_assert_eq(start, text);
	cr_assert_eq(pgoff, text);
	cr_assert_eq(len, etext - text);
	cr_assert_str_eq((const char *)recs[0].raw + 40, "[kernel.kallsyms]_text");
}
