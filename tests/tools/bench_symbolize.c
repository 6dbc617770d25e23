// SPDX-License-Identifier: MIT
/*
 * bench_symbolize - how fast the symbolize library answers, for `make bench`.
 *
 *   bench_symbolize --elf PATH [--kallsyms PATH] [--lookups N] [--loads N]
 *                   [--addr-out FILE]
 *
 * Measures, and prints as key=value lines:
 *   kallsyms_load_ms      median wall time of kallsyms_load() over --loads
 *                         loads (default 5) of /proc/kallsyms (or PATH)
 *   kernel_lookups_per_s  symbolize_kernel() on N addresses spread over the
 *                         core kernel text [_text, _etext) (table loaded)
 *   user_cold_lookups_per_s
 *                         symbolize_user() on N distinct addresses inside the
 *                         functions of the ELF, with a fresh symbolizer: the
 *                         first lookup opens the file and its DWARF, as a
 *                         conversion does once per file
 *   user_warm_lookups_per_s
 *                         the same addresses again on the same symbolizer
 *   user_found_pct        how many of them got a function name
 * N is --lookups (default 20000). Addresses are drawn with a fixed seed, so
 * runs are comparable. --addr-out writes the ELF addresses (file virtual
 * addresses, hex, one a line) so `addr2line -f -i -e ELF` can be timed on
 * the very same input as a reference.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/buildid.h"
#include "symbolize/kallsyms.h"
#include "symbolize/symbolize.h"

#define PIE_BASE 0x555555554000ull

struct bench_opts {
	const char *elf;
	const char *kallsyms;
	const char *addr_out;
	size_t lookups;
	int loads;
};

/* A function of the ELF: [value, value + size). */
struct elf_func {
	uint64_t value, size;
};

struct elf_layout {
	struct sym_mapping map;		/* the executable segment, as loaded at base */
	uint64_t base;
	struct elf_func *funcs;
	size_t nr_funcs;
	uint8_t build_id[BUILDID_MAX];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Deterministic: the same addresses on every run and machine. */
static uint64_t next_random(uint64_t *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return *state >> 11;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The executable PT_LOAD and the sized function symbols inside it. */
static int elf_layout_read(const char *path, struct elf_layout *lay)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t nph, cap = 0;
	uint64_t seg_lo = 0, seg_hi = 0;
	bool have_seg = false;
	int err = -ENOENT;

	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &nph)) {
		err = -EINVAL;
		goto out;
	}
	lay->base = eh.e_type == ET_DYN ? PIE_BASE : 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		lay->map.start = lay->base + (ph.p_vaddr & ~0xfffull);
		lay->map.pgoff = ph.p_offset & ~0xfffull;
		lay->map.len = ((ph.p_vaddr + ph.p_memsz + 0xfff) & ~0xfffull) -
			       (ph.p_vaddr & ~0xfffull);
		seg_lo = ph.p_vaddr;
		seg_hi = ph.p_vaddr + ph.p_memsz;
		have_seg = true;
		break;
	}
	if (!have_seg) {
		err = -ENOEXEC;
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_size || sym.st_value < seg_lo || sym.st_value >= seg_hi)
				continue;
			if (lay->nr_funcs == cap) {
				size_t ncap = cap ? cap * 2 : 256;
				struct elf_func *n = realloc(lay->funcs, ncap * sizeof(*n));
				if (!n) {
					err = -ENOMEM;
					goto out;
				}
				lay->funcs = n;
				cap = ncap;
			}
			lay->funcs[lay->nr_funcs++] = (struct elf_func){ sym.st_value, sym.st_size };
		}
	}
	err = lay->nr_funcs ? 0 : -ENOENT;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	if (!err) {
		lay->map.path = path;
		if (!buildid_read_file(path, lay->build_id, &lay->map.build_id_size))
			lay->map.build_id = lay->build_id;
	}
	return err;
}

static int bench_kallsyms(const struct bench_opts *o)
{
	uint64_t *ms = calloc((size_t)o->loads, sizeof(*ms));
	struct kallsyms *ks = NULL;
	uint64_t text, etext, t0, seed = 1;
	int err;

	if (!ms)
		return -ENOMEM;
	for (int i = 0; i < o->loads; i++) {
		t0 = now_ns();
		err = kallsyms_load(o->kallsyms, &ks, NULL, 0);
		ms[i] = now_ns() - t0;
		if (err) {
			free(ms);
			return err;
		}
		if (i + 1 < o->loads) {
			kallsyms_free(ks);
			ks = NULL;
		}
	}
	qsort(ms, (size_t)o->loads, sizeof(*ms), cmp_u64);
	printf("kallsyms_load_ms=%.2f\n", ms[o->loads / 2] / 1e6);
	free(ms);

	if (kallsyms_find(ks, "_text", &text) || kallsyms_find(ks, "_etext", &etext) ||
	    etext <= text) {
		kallsyms_free(ks);
		fprintf(stderr, "bench_symbolize: no _text/_etext in kallsyms\n");
		return -ENOENT;
	}
	kallsyms_free(ks);

	/* Through the public API, as the converter does. */
	struct symbolizer_opts so = { .kallsyms = o->kallsyms };
	struct symbolizer *s;
	struct sym_result r;
	size_t found = 0;

	err = symbolizer_new(&so, &s);
	if (err)
		return err;
	symbolize_kernel(s, text, &r);	/* loads the table: timed above */
	t0 = now_ns();
	for (size_t i = 0; i < o->lookups; i++)
		found += !symbolize_kernel(s, text + next_random(&seed) % (etext - text), &r);
	uint64_t dt = now_ns() - t0;
	printf("kernel_lookups_per_s=%.0f\nkernel_found_pct=%.1f\n", o->lookups / (dt / 1e9),
	       100.0 * found / o->lookups);
	symbolizer_free(s);
	return 0;
}

static int bench_user(const struct bench_opts *o)
{
	struct elf_layout lay = { 0 };
	uint64_t seed = 7, *addrs;
	struct symbolizer_opts so = { 0 };
	struct symbolizer *s;
	struct sym_result r;
	size_t found = 0;
	int err;

	err = elf_layout_read(o->elf, &lay);
	if (err) {
		fprintf(stderr, "bench_symbolize: %s: no function symbols in an executable segment (%s)\n",
			o->elf, strerror(-err));
		free(lay.funcs);
		return err;
	}
	addrs = calloc(o->lookups, sizeof(*addrs));
	if (!addrs) {
		free(lay.funcs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < o->lookups; i++) {
		const struct elf_func *f = &lay.funcs[next_random(&seed) % lay.nr_funcs];

		addrs[i] = f->value + next_random(&seed) % f->size;
	}
	if (o->addr_out) {
		FILE *f = fopen(o->addr_out, "w");
		if (!f) {
			err = -errno;
			fprintf(stderr, "bench_symbolize: cannot write %s: %s\n", o->addr_out,
				strerror(errno));
			goto out;
		}
		for (size_t i = 0; i < o->lookups; i++)
			fprintf(f, "%llx\n", (unsigned long long)addrs[i]);
		fclose(f);
	}

	err = symbolizer_new(&so, &s);
	if (err)
		goto out;
	uint64_t t0 = now_ns();
	for (size_t i = 0; i < o->lookups; i++)
		found += !symbolize_user(s, &lay.map, lay.base + addrs[i], &r) && r.nr_frames &&
			 r.frames[0].function;
	uint64_t cold = now_ns() - t0;
	t0 = now_ns();
	for (size_t i = 0; i < o->lookups; i++)
		symbolize_user(s, &lay.map, lay.base + addrs[i], &r);
	uint64_t warm = now_ns() - t0;
	symbolizer_free(s);
	printf("user_functions=%zu\nuser_cold_lookups_per_s=%.0f\nuser_warm_lookups_per_s=%.0f\n"
	       "user_found_pct=%.1f\n",
	       lay.nr_funcs, o->lookups / (cold / 1e9), o->lookups / (warm / 1e9),
	       100.0 * found / o->lookups);
out:
	free(addrs);
	free(lay.funcs);
	return err;
}

static int usage(void)
{
	fprintf(stderr, "usage: bench_symbolize --elf PATH [--kallsyms PATH] [--lookups N] "
			"[--loads N] [--addr-out FILE]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct bench_opts o = { .lookups = 20000, .loads = 5 };
	int err;

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			return usage();
		if (!strcmp(argv[i], "--elf"))
			o.elf = v;
		else if (!strcmp(argv[i], "--kallsyms"))
			o.kallsyms = v;
		else if (!strcmp(argv[i], "--addr-out"))
			o.addr_out = v;
		else if (!strcmp(argv[i], "--lookups"))
			o.lookups = strtoull(v, NULL, 10);
		else if (!strcmp(argv[i], "--loads"))
			o.loads = atoi(v);
		else
			return usage();
		i++;
	}
	if (!o.elf || !o.lookups || o.loads < 1)
		return usage();
	/* Mappings carry absolute paths, as the kernel reports them. */
	char *abs = realpath(o.elf, NULL);
	if (!abs) {
		fprintf(stderr, "bench_symbolize: %s: %s\n", o.elf, strerror(errno));
		return 1;
	}
	o.elf = abs;
	err = bench_kallsyms(&o);
	if (!err)
		err = bench_user(&o);
	free(abs);
	if (err) {
		fprintf(stderr, "bench_symbolize: failed: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
