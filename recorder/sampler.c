// SPDX-License-Identifier: MIT
/*
 * sampler.c - the BPF sampler as the session's event source (contract in
 * sampler.h and source.h): perf events, bpf/profile.bpf.c, its ring
 * buffers and counters, and the BPF helpers that share its maps.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "recorder/loadlog.h"
#include "recorder/percpu.h"
#include "recorder/privs.h"
#include "recorder/progstats.h"
#include "recorder/sampler.h"
#include "recorder/ringbuf.h"
#include "recorder/session_int.h"
#include "recorder/sideband.h"
#include "recorder/sysctl.h"
#include "recorder/tracer.h"
#include "recorder/tracer_build.h"
#include "recorder/pyframes.h"
#include "recorder/unwind_bpf.h"
#include "symbolize/procmaps.h"
#include "symbolize/safeopen.h"

#include "bpf/profile.h"
#include "profile.skel.h"

/*
 * The smallest ring buffer by default: RSS of the recorder holds it (its
 * data pages are mapped from the start).
 */
#define DEFAULT_RING_BYTES	(4u << 20)
/*
 * Samples alone at under 4000 Hz: perf record's 512 KiB a CPU, 1 MiB at
 * least (2 MiB with cfi: a quarter of it for late samples' 8 KiB stack
 * copies, 64 of them between two readings). At 999 Hz a CPU's 100 ms
 * flush interval of 128-frame samples is 100 KiB: the recorder is woken
 * at half full, seconds of room.
 */
#define SAMPLES_RING_BYTES	(1u << 20)
#define SAMPLES_RING_BYTES_CFI	(2u << 20)
#define SAMPLES_RING_PER_CPU	(512u << 10)
#define SAMPLES_FULL_RATE	4000
/*
 * -g: the user stack a sample sends when its walk met code without tables
 * yet (PROFILE_SAMPLE_LATE): perf's --call-graph dwarf default. Only
 * samples of starting processes carry one (PROFILE_LATE_COPIES a process
 * at most), but they come in bursts, and wait in the recorder.
 */
#define SAMPLER_LATE_STACK_BYTES	(8u << 10)
#define SYSFS_BTF		"/sys/kernel/btf/vmlinux"

struct sampler {
	struct profile *skel;
	struct bpf_program *on_sample;	/* the sample program loaded: with or without cfi */
	int *pfds;		/* one per CPU; -1 once owned by a link */
	size_t nr_pfds;
	struct bpf_link **links;	/* per CPU */
	struct bpf_link *task_links[3];
	struct ringbufs *rb;
	uint64_t unwind_bytes;	/* the unwind tables' bound; 0 = no cfi walks */
	struct progstats *progstats;	/* the programs' run time */
};

/* An option this kernel cannot record is refused before anything is written. */
static int check_kernel_features(struct record_session *s)
{
	struct kfeatures_want want = {
		.dwarf = s->opts.callgraph == RECORD_CALLGRAPH_DWARF,
		.off_cpu = s->opts.off_cpu,
		.sched = s->opts.sched,
		.alloc = s->opts.alloc_interval != 0,
	};
	char msg[256];
	int err;

	err = kfeatures_check(&s->kfeatures, &want, msg, sizeof(msg));
	if (err)
		return session_fail(s, err, "%s", msg);
	return 0;
}

/* Without these nothing works: say so before anything else. */
static int sampler_check(struct record_session *s, void *src)
{
	(void)src;
	if (privs_missing(&s->privs, PRIV_STEP_BPF))
		return session_priv_fail(s, PRIV_STEP_BPF, -EPERM, NULL);
	if (access(SYSFS_BTF, R_OK) < 0)
		return session_fail(s, -ENOTSUP,
				    "the kernel has no BTF (%s is missing): bpfrec needs a kernel "
				    "built with CONFIG_DEBUG_INFO_BTF=y", SYSFS_BTF);
	return check_kernel_features(s);
}

/*
 * The kernel's text range for the kernel map, and __schedule for the
 * tracers' chains, in the recording's one reading of /proc/kallsyms:
 * hidden addresses (kptr_restrict) would leave every kernel frame
 * unresolved and make perf report warn about the file, so they end the
 * recording before it starts.
 */
static int read_kernel_text(struct record_session *s)
{
	int err = kernel_text_read(NULL, &s->ktext);

	if (err == -EPERM)
		return session_priv_fail(s, PRIV_STEP_KALLSYMS, err, NULL);
	if (err)
		return session_fail(s, err, "cannot find the kernel's _text and _etext in "
				    "/proc/kallsyms: %s", strerror(-err));
	return 0;
}

/* One event per CPU, disabled: attaching enables it. The rate is the session's. */
static int open_events(struct record_session *s, struct sampler *sm)
{
	struct perf_event_attr a = { 0 };

	a.type = s->event_type;
	a.config = s->event_config;
	a.size = sizeof(a);
	if (s->opts.period) {
		a.sample_period = s->opts.period;
	} else {
		a.freq = 1;
		a.sample_freq = s->opts.freq;
	}
	a.disabled = 1;

	sm->pfds = malloc(s->nr_cpus * sizeof(*sm->pfds));
	sm->links = calloc(s->nr_cpus, sizeof(*sm->links));
	if (!sm->pfds || !sm->links)
		return session_fail(s, -ENOMEM, "out of memory");
	sm->nr_pfds = s->nr_cpus;
	for (size_t i = 0; i < s->nr_cpus; i++)
		sm->pfds[i] = -1;
	for (size_t i = 0; i < s->nr_cpus; i++) {
		int fd = (int)syscall(SYS_perf_event_open, &a, -1, s->cpus[i], -1,
				      PERF_FLAG_FD_CLOEXEC);
		int err = -errno;

		if (fd >= 0) {
			sm->pfds[i] = fd;
			continue;
		}
		if (a.type == PERF_TYPE_HARDWARE && (err == -ENOENT || err == -EOPNOTSUPP))
			return session_fail(s, err,
					    "event '%s' is not available: this machine has no "
					    "hardware PMU (a VM?); use -e cpu-clock",
					    s->event_name);
		if (err == -EINVAL && a.freq)
			return session_fail(s, err, "cannot sample '%s' at %" PRIu64 " Hz: lower "
					    "-F", s->event_name, s->opts.freq);
		if (privs_is_denial(err)) {
			/* Read now: it decides between CAP_PERFMON and CAP_SYS_ADMIN. */
			s->privs.perf_event_paranoid =
				(int)sysctl_read("kernel.perf_event_paranoid", -9);
			return session_priv_fail(s, PRIV_STEP_EVENTS, err, NULL);
		}
		return session_fail(s, err, "cannot open event '%s' on CPU %d: %s", s->event_name,
				    s->cpus[i], strerror(-err));
	}
	if (ioctl(sm->pfds[0], PERF_EVENT_IOC_ID, &s->event_id) < 0 || !s->event_id)
		s->event_id = 1;
	return 0;
}

/* The ring buffer's size: the caller's, or about 1 MiB per CPU (more for stack copies). */
static size_t ring_bytes(const struct record_session *s)
{
	size_t ring = s->opts.ring_buffer_bytes;
	size_t per_cpu = 1u << 20, least = DEFAULT_RING_BYTES;

	if (ring)
		return ring;
	/*
	 * Several flush intervals of -g samples at -F 4000: a CPU's 100 ms
	 * of 128-frame samples is 400 KiB, and the recorder is woken at half
	 * full. A DWARF sample carries its stack copy too: 2 MiB more per
	 * 2 KiB of it (8 KiB: 9 MiB a CPU, a quarter second at -F 4000).
	 * Samples alone at a lower rate need proportionally less (the ring is
	 * resident: at 999 Hz on 2 CPUs 4 MiB was the largest part of the
	 * recorder's memory); tracers' events come at their own rates.
	 */
	if (s->opts.callgraph == RECORD_CALLGRAPH_DWARF) {
		per_cpu += (size_t)(s->opts.stack_user_size + 2047) / 2048 * (2u << 20);
	} else if (!s->opts.period && s->opts.freq && s->opts.freq < SAMPLES_FULL_RATE &&
		   !record_tracers_wanted(&s->opts)) {
		per_cpu = (size_t)((uint64_t)per_cpu * s->opts.freq / SAMPLES_FULL_RATE);
		if (per_cpu < SAMPLES_RING_PER_CPU)
			per_cpu = SAMPLES_RING_PER_CPU;
		least = s->opts.callgraph == RECORD_CALLGRAPH_CFI ? SAMPLES_RING_BYTES_CFI :
								     SAMPLES_RING_BYTES;
	}
	ring = least;
	while (ring < s->nr_cpus * per_cpu && ring < RECORD_RING_MAX_BYTES)
		ring *= 2;
	return ring;
}

/*
 * The verifier's log of the program it rejected, as the kernel wrote it,
 * at debug level: the log callback shows it at -v only.
 */
static void log_verifier_log(const struct record_session *s, const struct load_log *log)
{
	char line[128];

	if (!s->opts.verbose || s->opts.quiet || !s->opts.log)
		return;
	snprintf(line, sizeof(line), "-- the BPF verifier's log of program '%s' --", log->prog);
	s->opts.log(s->opts.log_ctx, RECORD_LOG_DEBUG, line);
	s->opts.log(s->opts.log_ctx, RECORD_LOG_DEBUG, log->text);
	s->opts.log(s->opts.log_ctx, RECORD_LOG_DEBUG, "-- end of the verifier's log --");
}

/*
 * A BPF load failed with err: the verifier's rejection of a program (it
 * left a log), a refusal (privs.h), each said in one line naming option
 * when one asked for the programs. 0 when it is neither: the caller says
 * what failed.
 */
static int bpf_load_failed(struct record_session *s, int err, const struct load_log *log,
			   const char *option)
{
	char msg[400];

	switch (privs_bpf_cause(&s->privs, err, log->text != NULL)) {
	case PRIVS_BPF_VERIFIER:
		log_verifier_log(s, log);
		privs_verifier_message(&s->privs, log->prog, msg, sizeof(msg));
		if (option)
			return session_fail(s, err, "%s: %s", option, msg);
		return session_fail(s, err, "%s", msg);
	case PRIVS_BPF_OTHER:
		return 0;
	default:
		return session_priv_fail(s, PRIV_STEP_BPF, err, option);
	}
}

/*
 * After loading a tracer that rides on the sampler (tracer.h):
 * its failure as the message naming the option that asked for it, else
 * its programs counted with the sampler's. The load's log is freed.
 */
static int tracer_loaded(struct record_session *s, struct sampler *sm, int err,
			 struct load_log *log, const struct bpf_object *obj, const char *what,
			 const char *option, bool compat)
{
	int ret = err ? bpf_load_failed(s, err, log, option) : 0;
	char msg[200];

	load_log_free(log);
	if (ret)
		return ret;
	if (err)
		return session_fail(s, err, "cannot load %s: %s (run with -v for libbpf's "
				    "messages, or drop %s)", what, strerror(-err), option);
	if (progstats_add_object(sm->progstats, obj))
		return session_fail(s, -ENOMEM, "out of memory");
	if (compat) {
		snprintf(msg, sizeof(msg), "%s: the build for kernels before 5.17 (state by tid, "
			 "bounded loops)", what);
		session_note(s, msg);
	}
	return 0;
}

/* The tracers the options ask for (tracer.h), on the sampler's maps, in their order. */
static int load_tracers(struct record_session *s, struct sampler *sm, size_t ring)
{
	struct profile *skel = sm->skel;
	const struct record_tracer_ops *ops;
	struct record_tracer_env env = {
		.events_fd = bpf_map__fd(skel->maps.events),
		.ring_bytes = ring,
		.target_tgids_fd = bpf_map__fd(skel->maps.target_tgids),
		.target_tids_fd = bpf_map__fd(skel->maps.target_tids),
		.filter_mode = skel->rodata->filter_mode,
		.stack_user_size = skel->rodata->stack_user_size,
		/* unwind_bytes is set exactly when the tracers walk with the tables too. */
		.unwind_cfi = sm->unwind_bytes != 0,
		.unwind_rows_fd = bpf_map__fd(skel->maps.unwind_rows),
		.unwind_procs_fd = bpf_map__fd(skel->maps.unwind_procs),
		.unwind_stops_fd = bpf_map__fd(skel->maps.unwind_stops),
		.unwind_stats_fd = bpf_map__fd(skel->maps.unwind_stats),
		/* The tracers' records get Python frames when the sampler's samples do. */
		.py_procs_fd = s->py ? bpf_map__fd(skel->maps.py_procs) : -1,
	};

	for (size_t i = 0; (ops = record_tracer_registered(i)); i++) {
		struct load_log log = { 0 };
		void *t = NULL;
		int err;

		if (!ops->wanted(&s->opts))
			continue;
		env.load_log = &log;
		session_tracker_hooks(s, &env.next_hooks, &env.next_hooks_ctx);
		err = ops->open(s, &env, &t);
		if (!err)
			session_add_tracer(s, ops, t);
		err = tracer_loaded(s, sm, err, &log, t ? ops->object(t) : NULL, ops->what,
				    ops->option, ops->compat_build && tracer_build_compat(&s->kfeatures));
		if (err)
			return err;
	}
	return 0;
}

/* A process skipped for its CPython version: one line under -v. */
static void python_note(void *ctx, const char *msg)
{
	const struct record_session *s = ctx;

	if (s->opts.verbose && !s->opts.quiet)
		session_note(s, msg);
}

/* Python functions left unnamed for want of a build-id cache: a warning. */
static void python_warn(void *ctx, const char *msg)
{
	session_warn(ctx, "%s", msg);
}

static int load_bpf(struct record_session *s, struct sampler *sm)
{
	size_t ring = ring_bytes(s);
	struct load_log log = { 0 };
	struct profile *skel;
	int nr_cpus, err, ret = 0;
	bool want_python;

	/* The per-CPU counters (percpu.h) have one value per possible CPU. */
	nr_cpus = libbpf_num_possible_cpus();
	if (nr_cpus <= 0)
		return session_fail(s, nr_cpus ? nr_cpus : -EINVAL,
				    "cannot count the possible CPUs");

	skel = profile__open();
	if (!skel)
		return session_fail(s, -errno ? -errno : -EINVAL, "cannot open the BPF sampler: %s",
				    strerror(errno));
	sm->skel = skel;
	if (s->opts.nr_pids || (s->opts.command && !s->opts.system_wide))
		skel->rodata->filter_mode = PROFILE_FILTER_TGID;
	else if (s->opts.nr_tids)
		skel->rodata->filter_mode = PROFILE_FILTER_TID;
	else
		skel->rodata->filter_mode = PROFILE_FILTER_ALL;
	skel->rodata->capture_stacks = s->opts.callgraph != RECORD_CALLGRAPH_NONE;
	if (s->opts.callgraph == RECORD_CALLGRAPH_DWARF) {
		skel->rodata->stack_user_size = s->opts.stack_user_size;
		skel->rodata->ustack_fixed = !s->kfeatures.ringbuf_dynptr;
	}
	/*
	 * A walk cut for want of tables comes with a copy to walk again
	 * (loop.c), while the ring buffer is under a quarter full: not at all
	 * in one too small for a few copies.
	 */
	if (s->opts.callgraph == RECORD_CALLGRAPH_CFI && ring >= 64 * SAMPLER_LATE_STACK_BYTES) {
		skel->rodata->late_stack_size = SAMPLER_LATE_STACK_BYTES;
		skel->rodata->late_ring_room = ring / 4;
		skel->rodata->ustack_fixed = !s->kfeatures.ringbuf_dynptr;
	}
	/*
	 * One of the sample programs: the others would only cost load time,
	 * or not load at all (bpf_loop is 5.17+).
	 */
	if (s->opts.callgraph != RECORD_CALLGRAPH_CFI)
		sm->on_sample = skel->progs.on_sample;
	else if (s->kfeatures.bpf_loop)
		sm->on_sample = skel->progs.on_sample_cfi;
	else
		sm->on_sample = skel->progs.on_sample_cfi_bounded;
	/*
	 * The Python walk runs on bpf_loop() from 5.17, before as bounded
	 * loops in the bounded program (python.bpf.h): the same frames.
	 */
	want_python = s->opts.callgraph == RECORD_CALLGRAPH_CFI && !s->opts.no_python;
	skel->rodata->python_frames = want_python;
	if (want_python && !s->kfeatures.bpf_loop)
		python_note(s, "Python frames: walked with bounded loops (no bpf_loop before "
			    "Linux 5.17)");
	if (!skel->rodata->python_frames)
		bpf_map__set_max_entries(skel->maps.py_procs, 1);
	bpf_program__set_autoload(skel->progs.on_sample, sm->on_sample == skel->progs.on_sample);
	bpf_program__set_autoload(skel->progs.on_sample_cfi,
				  sm->on_sample == skel->progs.on_sample_cfi);
	bpf_program__set_autoload(skel->progs.on_sample_cfi_bounded,
				  sm->on_sample == skel->progs.on_sample_cfi_bounded);
	/* The tracers walk their user stacks with the tables too, unless fp or dwarf is asked for. */
	if (s->opts.callgraph == RECORD_CALLGRAPH_CFI ||
	    (record_tracers_wanted(&s->opts) && s->opts.callgraph == RECORD_CALLGRAPH_NONE))
		sm->unwind_bytes = s->opts.unwind_table_bytes ? s->opts.unwind_table_bytes :
								UNWIND_BPF_DEFAULT_BYTES;
	err = unwind_bpf_size_maps(skel->maps.unwind_rows, skel->maps.unwind_procs,
				   sm->unwind_bytes, !s->kfeatures.hash_nonprealloc);
	if (err)
		return session_fail(s, err, "cannot size the unwind tables: %s", strerror(-err));
	skel->rodata->wakeup_bytes = ring / 2;
	if (2 * ring > s->batch_max)
		s->batch_max = 2 * ring;
	err = bpf_map__set_max_entries(skel->maps.events, (uint32_t)ring);
	if (err)
		return session_fail(s, err, "cannot size the ring buffer: %s", strerror(-err));
	load_log_attach(&log, skel->obj);
	err = profile__load(skel);
	if (err) {
		load_log_failed(&log, skel->obj);
		ret = bpf_load_failed(s, err, &log, NULL);
	}
	load_log_free(&log);
	/*
	 * The load parsed the kernel's BTF (libbpf reads the 5-6 MB file,
	 * then copies it: twice that at once) and freed it, and glibc keeps
	 * the pages. The ring buffers, mapped next, are resident from their
	 * mmap: give the heap back before, or both count in the recorder's
	 * peak RSS (the largest part of it, with or without -z).
	 */
	malloc_trim(0);
	if (ret)
		return ret;
	if (err == -ENOMEM && sm->unwind_bytes)
		return session_fail(s, err, "cannot allocate %" PRIu64 " MB of unwind tables: "
				    "lower --unwind-tables", sm->unwind_bytes >> 20);
	if (err)
		return session_fail(s, err, "cannot load the BPF sampler: %s (run with -v for "
				    "libbpf's messages)", strerror(-err));
	if (progstats_new(&sm->progstats) || progstats_add_object(sm->progstats, skel->obj))
		return session_fail(s, -ENOMEM, "out of memory");
	if (sm->unwind_bytes) {
		struct unwind_bpf_opts uo = {
			.rows_fd = bpf_map__fd(skel->maps.unwind_rows),
			.procs_fd = bpf_map__fd(skel->maps.unwind_procs),
			.stops_fd = bpf_map__fd(skel->maps.unwind_stops),
			.stats_fd = bpf_map__fd(skel->maps.unwind_stats),
			.bytes = sm->unwind_bytes,
			.max_procs = bpf_map__max_entries(skel->maps.unwind_procs),
		};

		err = unwind_bpf_new(&uo, &s->unwind);
		if (err)
			return session_fail(s, err, "cannot set up the unwind tables: %s",
					    strerror(-err));
	}
	if (skel->rodata->python_frames) {
		struct py_frames_opts po = {
			.sz = sizeof(po), .procs_fd = bpf_map__fd(skel->maps.py_procs),
			.note = python_note, .note_ctx = s, .warn = python_warn,
		};

		err = py_frames_new(&po, &s->py);
		if (err)
			return session_fail(s, err, "cannot set up Python frames: %s", strerror(-err));
	}

	for (size_t i = 0; i < s->opts.nr_pids; i++) {
		uint32_t key = (uint32_t)s->pids[i];
		uint8_t one = 1;

		bpf_map__update_elem(skel->maps.target_tgids, &key, sizeof(key), &one, 1, BPF_ANY);
	}
	for (size_t i = 0; i < s->opts.nr_tids; i++) {
		uint32_t key = (uint32_t)s->tids[i];
		uint8_t one = 1;

		bpf_map__update_elem(skel->maps.target_tids, &key, sizeof(key), &one, 1, BPF_ANY);
	}
	err = load_tracers(s, sm, ring);
	if (err)
		return err;

	/*
	 * Task notices come in a ring of their own; the batch puts them in
	 * time order. It is read first: a batch that fills up stops the
	 * reading, and then the samples wait in their ring, not the notices
	 * (the round ends at the last sample read: loop.c).
	 */
	err = ringbufs_new(&sm->rb);
	if (!err)
		err = ringbufs_add(sm->rb, bpf_map__fd(skel->maps.task_events),
				   record_source_deliver, s);
	if (err)
		return session_fail(s, err, "cannot map the task ring buffer: %s", strerror(-err));
	err = ringbufs_add(sm->rb, bpf_map__fd(skel->maps.events), record_source_deliver, s);
	if (err)
		return session_fail(s, err, "cannot map the ring buffer: %s", strerror(-err));
	return 0;
}

static void sampler_free(struct record_session *s, void *src)
{
	struct sampler *sm = src;

	/* What the session was lent: the tracker that used them is gone by now. */
	sideband_free(s->sideband);
	s->sideband = NULL;
	session_tracers_free(s);
	unwind_bpf_free(s->unwind);
	s->unwind = NULL;
	py_frames_free(s->py);
	s->py = NULL;
	if (!sm)
		return;
	for (size_t i = 0; sm->links && i < sm->nr_pfds; i++)
		bpf_link__destroy(sm->links[i]);
	for (int i = 0; i < 3; i++)
		bpf_link__destroy(sm->task_links[i]);
	for (size_t i = 0; sm->pfds && i < sm->nr_pfds; i++)
		if (sm->pfds[i] >= 0)
			close(sm->pfds[i]);
	ringbufs_free(sm->rb);
	profile__destroy(sm->skel);
	progstats_free(sm->progstats);
	free(sm->pfds);
	free(sm->links);
	free(sm);
}

/*
 * Build ahead the unwind tables the targets need first: those of the files
 * -p processes map, and for a launched command its own executable and the
 * C library (the one we run with: the same file in
 * nearly every case, and a table is only used by a process mapping that
 * very file, by build-id). Built at the first sample instead, they would
 * cost the command's first 100-200 ms of stacks (python3's table takes
 * that long). A file that cannot be read is no error: its table is built
 * later, or never.
 */
static void warm_unwind_tables(struct record_session *s)
{
	const char *paths[2] = { s->opts.command ? s->cmd_path : NULL, NULL };
	Dl_info libc;

	if (!s->unwind)
		return;
	if (dladdr((void *)(uintptr_t)fopen, &libc) && libc.dli_fname && libc.dli_fname[0] == '/')
		paths[1] = libc.dli_fname;
	for (size_t i = 0; i < 2; i++) {
		int fd;

		if (!paths[i] || safeopen(-1, paths[i], NULL, &fd, NULL))
			continue;
		unwind_bpf_warm(s->unwind, fd);
		close(fd);
	}
	/* -p: what the running targets map, read now, before sampling starts. */
	for (size_t i = 0; i < s->opts.nr_pids; i++) {
		struct procmaps pm;

		if (procmaps_read(NULL, (uint32_t)s->pids[i], 0, &pm) == 0) {
			for (size_t j = 0; j < pm.nr; j++) {
				const struct procmaps_entry *e = &pm.entries[j];
				int fd;

				if (e->path[0] != '/' || safeopen_mapped(NULL, (uint32_t)s->pids[i],
						e->start, e->end, e->path, e->maj, e->min, e->ino, &fd, NULL))
					continue;
				unwind_bpf_warm(s->unwind, fd);
				close(fd);
			}
		}
		procmaps_release(&pm);
	}
}

static int sampler_open(struct record_session *s, void **src)
{
	struct sampler *sm = calloc(1, sizeof(*sm));
	int err;

	if (!sm)
		return session_fail(s, -ENOMEM, "out of memory");
	*src = sm;
	err = read_kernel_text(s);
	if (!err)
		err = open_events(s, sm);
	if (!err)
		err = load_bpf(s, sm);
	if (err)
		return err;
	/*
	 * The kernel's mmap and exec reports: without them a process that
	 * exits before its maps are read keeps raw addresses, so go on.
	 */
	err = sideband_new(s->cpus, s->nr_cpus, &s->batch,
			   s->opts.callgraph == RECORD_CALLGRAPH_DWARF, &s->sideband);
	if (err)
		session_warn(s, "cannot open the mmap side-band events (%s): processes that exit "
			     "quickly may keep unresolved addresses", strerror(-err));
	warm_unwind_tables(s);
	return 0;
}

static int sampler_add_target(struct record_session *s, void *src, pid_t pid)
{
	struct sampler *sm = src;
	uint32_t key = (uint32_t)pid;
	uint8_t one = 1;
	int err;

	err = bpf_map__update_elem(sm->skel->maps.target_tgids, &key, sizeof(key), &one, 1,
				   BPF_ANY);
	if (err)
		return session_fail(s, err, "cannot add pid %d to the targets: %s", (int)key,
				    strerror(-err));
	return 0;
}

static int sampler_attach(struct record_session *s, void *src)
{
	struct sampler *sm = src;
	struct bpf_program *task_progs[3] = {
		sm->skel->progs.on_fork, sm->skel->progs.on_exit, sm->skel->progs.on_exec,
	};
	int err;

	/* Task events first, so nothing forked after the first sample escapes. */
	for (int i = 0; i < 3; i++) {
		sm->task_links[i] = bpf_program__attach(task_progs[i]);
		if (!sm->task_links[i] && privs_is_denial(-errno))
			return session_priv_fail(s, PRIV_STEP_BPF, -errno, NULL);
		if (!sm->task_links[i])
			return session_fail(s, -errno, "cannot attach %s: %s",
					    bpf_program__name(task_progs[i]), strerror(errno));
	}
	/* The tracers (tracer.h) before sampling starts. */
	err = session_tracers_attach(s);
	if (err)
		return err;
	for (size_t i = 0; i < sm->nr_pfds; i++) {
		struct bpf_link *l;

		l = bpf_program__attach_perf_event_opts(sm->on_sample, sm->pfds[i],
							NULL);
		if (!l && privs_is_denial(-errno))
			return session_priv_fail(s, PRIV_STEP_BPF, -errno, NULL);
		if (!l)
			return session_fail(s, -errno, "cannot attach to the event on CPU %d: %s",
					    s->cpus[i], strerror(errno));
		sm->links[i] = l;
		sm->pfds[i] = -1;	/* the link closes it */
	}
	return 0;
}

static void sampler_detach(struct record_session *s, void *src)
{
	struct sampler *sm = src;

	for (size_t i = 0; sm && sm->links && i < sm->nr_pfds; i++) {
		bpf_link__destroy(sm->links[i]);
		sm->links[i] = NULL;
	}
	for (int i = 0; sm && i < 3; i++) {
		bpf_link__destroy(sm->task_links[i]);
		sm->task_links[i] = NULL;
	}
	session_tracers_detach(s);
}

static int sampler_poll_fd(const struct record_session *s, const void *src)
{
	const struct sampler *sm = src;

	(void)s;
	return sm && sm->rb ? ringbufs_epoll_fd(sm->rb) : -1;
}

static int sampler_consume(struct record_session *s, void *src)
{
	struct sampler *sm = src;

	(void)s;
	return ringbufs_consume(sm->rb);
}

/* A sampler counter (enum profile_stat); 0 when it cannot be read. */
static uint64_t read_stat(const struct sampler *sm, uint32_t key)
{
	return percpu_count(sm->skel->maps.stats, key);
}

static void sampler_counters(const struct record_session *s, const void *src,
			     struct record_source_counters *c)
{
	const struct sampler *sm = src;

	(void)s;
	if (!sm || !sm->skel)
		return;
	c->seen = read_stat(sm, PROFILE_STAT_SAMPLES);
	c->lost = read_stat(sm, PROFILE_STAT_LOST);
	c->lost_task = read_stat(sm, PROFILE_STAT_LOST_TASK);
	c->late_spent = read_stat(sm, PROFILE_STAT_LATE_SPENT);
	c->late_busy = read_stat(sm, PROFILE_STAT_LATE_BUSY);
	c->py_cut = read_stat(sm, PROFILE_STAT_PY_CUT);
	if (sm->progstats) {
		struct progstats_sum prog;

		progstats_read(sm->progstats, &prog);
		c->bpf_counted = prog.counted;
		c->bpf_run_ns = prog.run_ns;
		c->bpf_runs = prog.runs;
	}
}

/* PROFILE_LATE_UNHELPFUL fewer copies for pid (a race with BPF's decrement loses one at most). */
static void sampler_late_unhelpful(struct record_session *s, void *src, uint32_t pid)
{
	const struct sampler *sm = src;
	uint32_t left;
	int fd;

	(void)s;
	if (!sm || !sm->skel)
		return;
	fd = bpf_map__fd(sm->skel->maps.late_copies);
	if (bpf_map_lookup_elem(fd, &pid, &left))
		return;
	left = left > PROFILE_LATE_UNHELPFUL ? left - PROFILE_LATE_UNHELPFUL : 0;
	bpf_map_update_elem(fd, &pid, &left, BPF_EXIST);
}

const struct record_source_ops record_source_bpf = {
	.check = sampler_check,
	.open = sampler_open,
	.add_target = sampler_add_target,
	.attach = sampler_attach,
	.detach = sampler_detach,
	.poll_fd = sampler_poll_fd,
	.consume = sampler_consume,
	.counters = sampler_counters,
	.free = sampler_free,
	.late_unhelpful = sampler_late_unhelpful,
};
