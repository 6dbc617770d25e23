// SPDX-License-Identifier: MIT
/*
 * sysinfo.c - the facts about the running system that perf puts in a
 * file's header: uname, CPU description and id, CPU counts, memory, and the
 * CPU topology. Everything is best effort: a fact that cannot be read is
 * left empty (or the topology NULL) rather than failing the recording.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "features.h"

static int read_line(const char *path, char *out, size_t size)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -1;
	if (!fgets(out, (int)size, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	n = strlen(out);
	while (n && (out[n - 1] == '\n' || out[n - 1] == ' '))
		out[--n] = '\0';
	return 0;
}

/* "model name : Intel(R) ..." with runs of blanks squeezed, as perf does. */
static void read_cpudesc(char *out, size_t size)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "re");

	out[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');
		size_t o = 0;

		if (strncmp(line, "model name", 10) || !v)
			continue;
		for (v++; *v == ' ' || *v == '\t'; v++)
			;
		for (; *v && *v != '\n' && o + 1 < size; v++) {
			if ((*v == ' ' || *v == '\t') && o && out[o - 1] == ' ')
				continue;
			out[o++] = *v == '\t' ? ' ' : *v;
		}
		out[o] = '\0';
		break;
	}
	fclose(f);
}

/* perf's x86 cpuid string: "vendor,family,model,stepping". */
static void read_cpuid(char *out, size_t size)
{
	out[0] = '\0';
#if defined(__x86_64__) || defined(__i386__)
	unsigned int a, b, c, d, family, model, step;
	char vendor[13];

	if (!__get_cpuid(0, &a, &b, &c, &d))
		return;
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = '\0';
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return;
	family = (a >> 8) & 0xf;
	model = (a >> 4) & 0xf;
	step = a & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	if (family >= 0x6)
		model += ((a >> 16) & 0xf) << 4;
	snprintf(out, size, "%s,%u,%u,%u", vendor, family, model, step);
#else
	(void)size;
#endif
}

static uint64_t read_total_mem_kb(void)
{
	char line[256];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Highest CPU number in a list like "0-3,5" plus one; 0 on failure. */
static uint32_t cpu_list_max(const char *list)
{
	uint32_t max = 0;
	const char *p = list;

	while (*p) {
		char *end;
		unsigned long v = strtoul(p, &end, 10);

		if (end == p)
			break;
		if (v + 1 > max)
			max = (uint32_t)v + 1;
		p = end;
		while (*p == '-' || *p == ',')
			p++;
	}
	return max;
}

/* Add s to a deduplicated list; 0 or -1 on allocation failure. */
static int add_unique(char ***list, uint32_t *nr, const char *s)
{
	char **l;

	for (uint32_t i = 0; i < *nr; i++)
		if (!strcmp((*list)[i], s))
			return 0;
	l = realloc(*list, (*nr + 1) * sizeof(*l));
	if (!l)
		return -1;
	*list = l;
	l[*nr] = strdup(s);
	if (!l[*nr])
		return -1;
	(*nr)++;
	return 0;
}

static void topology_free(struct perfdata_topology *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->nr_core_sib; i++)
		free(t->core_sib[i]);
	for (uint32_t i = 0; i < t->nr_thread_sib; i++)
		free(t->thread_sib[i]);
	for (uint32_t i = 0; i < t->nr_die_sib; i++)
		free(t->die_sib[i]);
	free(t->core_sib);
	free(t->thread_sib);
	free(t->die_sib);
	free(t->core_id);
	free(t->socket_id);
	free(t->die_id);
	free(t);
}

static int32_t read_id(const char *dir, const char *name)
{
	char path[512], v[64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (read_line(path, v, sizeof(v)))
		return -1;
	return (int32_t)strtol(v, NULL, 10);
}

/* The first of two sysfs names that exists (newer kernels renamed some). */
static int read_either(const char *dir, const char *a, const char *b, char *out, size_t size)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, a);
	if (!read_line(path, out, size))
		return 0;
	snprintf(path, sizeof(path), "%s/%s", dir, b);
	return read_line(path, out, size);
}

static struct perfdata_topology *read_topology(const char *sys, uint32_t nr_cpus)
{
	struct perfdata_topology *t;
	char dir[384], v[1024];

	if (!nr_cpus || nr_cpus > PERFDATA_MAX_TOPO_CPUS)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->nr_cpus = nr_cpus;
	t->core_id = calloc(nr_cpus, sizeof(int32_t));
	t->socket_id = calloc(nr_cpus, sizeof(int32_t));
	t->die_id = calloc(nr_cpus, sizeof(int32_t));
	if (!t->core_id || !t->socket_id || !t->die_id)
		goto fail;
	for (uint32_t cpu = 0; cpu < nr_cpus; cpu++) {
		snprintf(dir, sizeof(dir), "%s/devices/system/cpu/cpu%u/topology", sys, cpu);
		t->core_id[cpu] = read_id(dir, "core_id");
		t->socket_id[cpu] = read_id(dir, "physical_package_id");
		t->die_id[cpu] = read_id(dir, "die_id");
		/* An offline CPU has no topology directory: perf writes -1 ids and no lists. */
		if (t->core_id[cpu] == -1)
			continue;
		if (!read_either(dir, "package_cpus_list", "core_siblings_list", v, sizeof(v)) &&
		    add_unique(&t->core_sib, &t->nr_core_sib, v))
			goto fail;
		if (!read_either(dir, "core_cpus_list", "thread_siblings_list", v, sizeof(v)) &&
		    add_unique(&t->thread_sib, &t->nr_thread_sib, v))
			goto fail;
		if (!read_either(dir, "die_cpus_list", "die_cpus_list", v, sizeof(v)) &&
		    add_unique(&t->die_sib, &t->nr_die_sib, v))
			goto fail;
	}
	if (!t->nr_core_sib || !t->nr_thread_sib)
		goto fail;
	return t;
fail:
	topology_free(t);
	return NULL;
}

int perfdata_sysinfo_read(struct perfdata_sysinfo *si, const char *sysfs_root)
{
	const char *sys = sysfs_root ? sysfs_root : "/sys";
	struct utsname u;
	char path[384], v[1024];
	long online;

	memset(si, 0, sizeof(*si));
	if (!uname(&u)) {
		snprintf(si->hostname, sizeof(si->hostname), "%s", u.nodename);
		snprintf(si->osrelease, sizeof(si->osrelease), "%s", u.release);
		snprintf(si->arch, sizeof(si->arch), "%s", u.machine);
	}
	read_cpudesc(si->cpudesc, sizeof(si->cpudesc));
	read_cpuid(si->cpuid, sizeof(si->cpuid));
	online = sysconf(_SC_NPROCESSORS_ONLN);
	si->nr_cpus_online = online > 0 ? (uint32_t)online : 1;
	snprintf(path, sizeof(path), "%s/devices/system/cpu/present", sys);
	si->nr_cpus_avail = read_line(path, v, sizeof(v)) ? 0 : cpu_list_max(v);
	if (si->nr_cpus_avail < si->nr_cpus_online)
		si->nr_cpus_avail = si->nr_cpus_online;
	si->total_mem_kb = read_total_mem_kb();
	si->topo = read_topology(sys, si->nr_cpus_avail);
	return 0;
}

void perfdata_sysinfo_free(struct perfdata_sysinfo *si)
{
	topology_free(si->topo);
	si->topo = NULL;
}
