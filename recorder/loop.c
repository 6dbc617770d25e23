// SPDX-License-Identifier: MIT
/*
 * loop.c - from the event source to the writer (session_int.h): each
 * record the source delivers is copied into the batch (on_ring_record());
 * each round sorts the batch by time and, per record, lets the task
 * tracker describe the process (COMM/MMAP2) and writes the SAMPLE (or
 * FORK/EXIT, a tracer's record, a side-band report for the tracker), then
 * the samples lost meanwhile as LOST_SAMPLES (so samples + lost == seen),
 * the tracers' own batches and losses, and (at most every
 * ROUND_MARK_MIN_NS) a FINISHED_ROUND, then checkpoints the file.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "perfdata/writer.h"
#include "recorder/emit.h"
#include "recorder/pyframes.h"
#include "recorder/session_int.h"
#include "recorder/sideband.h"
#include "recorder/taskdesc.h"
#include "recorder/tasks.h"
#include "recorder/tracer.h"
#include "recorder/unwind_bpf.h"
#include "symbolize/cfiwalk.h"
#include "tools/lib/clock.h"

#include "bpf/profile.h"

/* What on_ring_record() returns to make the source stop consuming. */
#define BATCH_FULL		RECORD_SOURCE_BATCH_FULL
/*
 * A new process is written (and so described from /proc) this soon after
 * the previous round at the earliest.
 */
#define EARLY_FLUSH_MIN_NS	(5ull * 1000000)
/*
 * FINISHED_ROUND records at least this far apart, however often rounds are
 * written (a new process, Python's frequent reads): perf sorts what came
 * before a round mark together with what comes before the next one, so a
 * record may reach the ring buffer up to one mark-to-mark interval after
 * later ones were written. A sample is stamped when its program starts
 * and sent after its stack walk: microseconds, but a stalled virtual CPU
 * (an overcommitted host, an emulated one) stops in between for
 * milliseconds, and with marks 5 ms apart perf then warned of records out
 * of order (a system-wide recording on 5.10 under emulation).
 */
#define ROUND_MARK_MIN_NS	(100ull * 1000000)
/* The longest one reading of the rings goes on (see on_ring_record()). */
#define CONSUME_MAX_NS		(50ull * 1000000)
/*
 * A late sample (PROFILE_SAMPLE_LATE) waits for its process's tables this
 * long at most after it was taken, and only while what waits with it stays
 * under half the batch's bound (late_hold_bytes()): then it is walked with
 * whatever tables there are. libc's table takes 50-90 ms to build, a
 * compiler's 0.5 s, ten times that under emulation; the bound is the
 * crash-safety promise instead (a recorder killed with SIGKILL leaves a
 * file at most about a second short, Documentation/bpfrec-record.md), as
 * nothing after a waiting sample reaches the file, and the memory held.
 */
#define LATE_HOLD_NS		(1000ull * 1000000)
/* While the recorder stops, how often it looks whether the tables came. */
#define LATE_POLL_NS		(2ull * 1000000)
/* How long a late sample just handed to the worker is waited for, once a round. */
#define LATE_SPIN_NS		(2ull * 1000000)

/*
 * A BPF sample's frames and user-stack block (size >= PROFILE_SAMPLE_SIZE(0)):
 * the bytes it uses, 0 when malformed (emit_record_parse()). block: it may
 * still carry the block its flags announce (not once the worker took it:
 * held_len()).
 */
static size_t sample_parse(const struct profile_sample *ps, size_t size, bool block,
			   struct emit_ustack *u)
{
	if (ps->nr_py > PY_MAX_FRAMES)
		return 0;
	return emit_record_parse(ps, size, PROFILE_SAMPLE_SIZE(0), ps->nr_kernel, ps->nr_user,
				 ps->nr_py * sizeof(struct py_frame),
				 block && PROFILE_SAMPLE_HAS_USTACK(ps->flags), u);
}

/* A sample's Python frames, after its native ones (sample_parse() checked they are there). */
static struct py_frame *sample_py_frames(struct profile_sample *ps)
{
	return (struct py_frame *)((uint64_t *)ps->frames + ps->nr_kernel + ps->nr_user);
}

/* Ring-buffer callback: copy a record into the batch (it is already compact). */
static int on_ring_record(void *ctx, void *data, size_t size)
{
	struct record_session *s = ctx;
	const struct profile_hdr *h = data;
	const struct record_tracer *tr = NULL;
	void *p;

	if (size < sizeof(*h))
		return 0;
	if (h->kind == PROFILE_KIND_SAMPLE) {
		struct emit_ustack u;

		/*
		 * Drop anything malformed rather than read past it; of a stack
		 * copy keep only its valid part (BPF reserves whole chunks).
		 */
		size = size < PROFILE_SAMPLE_SIZE(0) ? 0 : sample_parse(data, size, true, &u);
		if (!size)
			return 0;
	} else if (h->kind == PROFILE_KIND_FORK || h->kind == PROFILE_KIND_EXIT ||
		   h->kind == PROFILE_KIND_EXEC) {
		if (size < sizeof(struct profile_task))
			return 0;
	} else {
		tr = session_tracer_of(s, data, size);
		if (!tr)
			return 0;
	}
	p = batch_add(&s->batch, h->time, size);
	if (!p)
		return s->cb_err = -ENOMEM;
	memcpy(p, data, size);
	/* A tracer's Python frames too are named now, in the batch's copy (as a sample's below). */
	if (tr && s->py && tr->ops->py_frames) {
		struct py_frame *py;
		size_t nr_py = tr->ops->py_frames(p, &py);

		if (nr_py)
			py_frames_prepare(s->py, h->pid, h->time, py, nr_py);
	}
	/*
	 * Its Python frames are named now, in the batch's copy, while the
	 * process most likely lives (a round can be 100 ms away): its write
	 * then only looks at what could not be named yet (pyframes.h).
	 */
	if (h->kind == PROFILE_KIND_SAMPLE && s->py && ((struct profile_sample *)p)->nr_py)
		py_frames_prepare(s->py, h->pid, h->time, sample_py_frames(p),
				  ((struct profile_sample *)p)->nr_py);
	s->last_delivered = h->time;
	if (h->kind == PROFILE_KIND_SAMPLE &&
	    (((const struct profile_sample *)data)->flags & PROFILE_SAMPLE_NEW_PROC))
		s->describe_soon = true;
	/*
	 * libbpf keeps consuming while producers keep producing; a full batch
	 * stops it (this record is already consumed) so it gets written and the
	 * caller gets to check its stop conditions. So does a reading that has
	 * gone on for CONSUME_MAX_NS: at the kernel's highest rates the rings
	 * refill as fast as a starved reader empties them, and --duration,
	 * a signal or the command's exit would wait for a lull that never comes.
	 */
	if (batch_bytes(&s->batch) >= s->batch_max)
		return BATCH_FULL;
	if (!(++s->consumed & 255) && mono_ns() - s->consume_start > CONSUME_MAX_NS)
		return BATCH_FULL;
	return 0;
}

/*
 * Whether a late sample's second walk is better than its in-kernel one of
 * nr_user frames: it ended cleanly (root, signal frame) or found more.
 */
static bool late_walk_better(const struct cfi_walk *w, uint32_t nr_user)
{
	return w->stop == UNWIND_STOP_ROOT || w->stop == UNWIND_STOP_SIGNAL || w->nr > nr_user;
}

/*
 * A late sample's chain: its second walk (s->late_walk, when s->late_ok)
 * where that is better. Nothing of the copy goes into the file.
 */
static void late_chain(struct record_session *s, struct emit_sample *e)
{
	const struct cfi_walk *w = &s->late_walk;

	if (!s->late_ok)
		return;
	if (late_walk_better(w, e->chain.nr_user)) {
		e->chain.user = w->pcs;
		e->chain.nr_user = w->nr;
	}
}

/* The emitter's view of a BPF sample (its user stack block aside). */
static void sample_input(const struct record_session *s, const struct profile_sample *ps,
			 struct emit_sample *e)
{
	const uint64_t *frames = (const uint64_t *)ps->frames;

	*e = (struct emit_sample){
		.pid = ps->hdr.pid, .tid = ps->hdr.tid, .cpu = ps->hdr.cpu,
		.time = ps->hdr.time, .period = ps->period, .id = s->event_id,
		.comm = ps->comm, .comm_len = sizeof(ps->comm),
		.chain = {
			.kernel_mode = ps->flags & PROFILE_SAMPLE_KERNEL,
			.ip = ps->ip,
			.kernel = frames,
			.nr_kernel = ps->nr_kernel,
			.user = frames + ps->nr_kernel,
			.nr_user = ps->nr_user,
		},
	};
}

void session_python_prepare(struct record_session *s, uint32_t pid, uint64_t time,
			    struct py_frame *py, size_t nr_py)
{
	py_frames_prepare(s->py, pid, time, py, nr_py);
}

int session_emit_python(struct record_session *s, struct emit_sample *e, struct py_frame *py,
			size_t nr_py, bool describe_only)
{
	struct perfdata_sample_id sid = {
		.pid = e->pid, .tid = e->tid, .time = e->time, .cpu = e->cpu, .id = e->id,
	};
	uint64_t user[CALLCHAIN_MAX_STACK];
	struct task_desc d = { 0 };
	size_t n;
	int err;

	err = emit_sample(s->w, s->tracker, e, true);
	if (err)
		return err;
	if (nr_py > PY_MAX_FRAMES)
		nr_py = PY_MAX_FRAMES;
	/*
	 * Only what was not named at delivery (on_ring_record(), a tracer's
	 * ring): a new process's first records, known to run Python since
	 * emit_sample().
	 */
	py_frames_prepare(s->py, e->pid, e->time, py, nr_py);
	if (describe_only)
		return 0;
	err = py_frames_describe(s->py, e->pid, s->file_start_ns, &sid, &d);
	if (!err && d.nr)
		err = emit_desc(s->w, &d);
	task_desc_free(&d);
	if (err)
		return err;
	n = py_frames_chain(s->py, e->pid, e->chain.user, e->chain.nr_user, py, nr_py, user,
			    CALLCHAIN_MAX_STACK);
	if (n) {
		e->chain.user = user;
		e->chain.nr_user = n;
	}
	return emit_sample_alone(s->w, e);
}

/* u: its user-stack block (sample_parse()); only a DWARF sample's goes into the file. */
static int write_sample(struct record_session *s, struct profile_sample *ps,
			const struct emit_ustack *u)
{
	struct emit_sample e;
	int err;

	sample_input(s, ps, &e);
	if (ps->flags & PROFILE_SAMPLE_LATE)
		late_chain(s, &e);
	if (ps->flags & PROFILE_SAMPLE_USTACK)
		e.ustack = *u;
	if (ps->nr_py && s->py)
		err = session_emit_python(s, &e, sample_py_frames(ps), ps->nr_py, false);
	else
		err = emit_sample(s->w, s->tracker, &e, false);

	if (!err) {
		pidset_add(&s->pids_seen, ps->hdr.pid);
		s->cpu_written++;
	}
	return err;
}

static int write_task(struct record_session *s, const struct profile_task *t)
{
	struct emit_task_change c = {
		.pid = t->hdr.pid, .tid = t->hdr.tid, .ppid = t->ppid, .ptid = t->ptid,
		.cpu = t->hdr.cpu, .time = t->hdr.time, .id = s->event_id,
	};

	switch (t->hdr.kind) {
	case PROFILE_KIND_FORK:
		task_tracker_fork(s->tracker, t->hdr.pid, t->hdr.tid, t->ppid);
		return emit_fork(s->w, &c);
	case PROFILE_KIND_EXIT:
		/* The last thread takes the whole process with it. */
		task_tracker_exit(s->tracker, t->hdr.pid, t->group_dead ? t->hdr.pid : t->hdr.tid);
		return emit_exit(s->w, &c);
	case PROFILE_KIND_EXEC:
		/* A new image: described afresh (COMM with the exec flag) at its next sample. */
		task_tracker_exec(s->tracker, t->hdr.pid, t->hdr.time);
		return 0;
	}
	return 0;
}

/*
 * After the BPF rings: every mmap before a sample just read is in the
 * side-band buffer by now, so it goes into the same batch.
 */
static int consume_sideband(struct record_session *s)
{
	return s->sideband ? sideband_consume(s->sideband) : 0;
}

/*
 * What /proc refused the task tracker, said once per recording: maps (the
 * process keeps raw user addresses) as a warning, map_files (build-ids come
 * from the mapped paths instead, as in perf) as a note under -v.
 */
static void warn_denied(struct record_session *s)
{
	struct task_tracker_denied d;
	char msg[400];

	if (!s->tracker)
		return;
	task_tracker_denied(s->tracker, &d);
	if (d.maps && !s->warned_maps) {
		s->warned_maps = true;
		privs_message(&s->privs, PRIV_STEP_MAPS, d.maps_err, msg, sizeof(msg));
		session_warn(s, "cannot read /proc/%u/maps: %s; its user-space frames (and those "
			     "of any other such process) stay unresolved", d.maps_pid, msg);
	}
	if (d.map_files && !s->noted_map_files && s->opts.verbose && !s->opts.quiet) {
		s->noted_map_files = true;
		privs_message(&s->privs, PRIV_STEP_MAP_FILES, d.map_files_err, msg, sizeof(msg));
		session_note(s, msg);
	}
}

/* How much may wait behind a late sample: half the batch, so records still flow around it. */
static size_t late_hold_bytes(const struct record_session *s)
{
	return s->batch_max / 2;
}

/* pid's late copies cost and do not help: the source sends fewer (source.h). */
static void late_unhelpful(struct record_session *s, uint32_t pid)
{
	if (s->src_ops->late_unhelpful)
		s->src_ops->late_unhelpful(s, s->src, pid);
}

/*
 * The batch's flag for a late sample whose copy the worker has (bits of
 * profile_sample.flags BPF never sets): its record waits without the copy.
 */
#define SAMPLE_WALK_ASKED	0x10000u
/*
 * Another: the new process of this sample had its maps read ahead
 * (early_turns()): a record that waits round after round behind a late
 * sample is not read ahead again (a process gone cost one failed open of
 * its comm per round).
 */
#define SAMPLE_PREFETCHED	0x20000u

/*
 * Hand a late sample's copy (u, its user-stack block) to the worker, to be
 * walked once the tables queued before it are loaded; its process's
 * mappings are read now and its tables started (task_tracker_prefetch())
 * where nothing did yet (-a tells a process's mappings at its description).
 * true when asked (its record then waits without the copy: held_len()).
 */
static bool late_ask(struct record_session *s, struct profile_sample *ps,
		     const struct emit_ustack *u)
{
	struct cfi_regs regs;
	struct cfi_stack stack;

	if (!s->unwind || (ps->flags & SAMPLE_WALK_ASKED) || !u->present ||
	    u->abi == PROFILE_UREGS_ABI_NONE)
		return false;
	task_tracker_prefetch(s->tracker, ps->hdr.pid, ps->hdr.tid, ps->comm);
	regs = (struct cfi_regs){
		.ip = u->regs[PROFILE_UREG_IP], .sp = u->regs[PROFILE_UREG_SP],
		.bp = u->regs[PROFILE_UREG_BP],
	};
	stack = (struct cfi_stack){ .base = regs.sp, .data = u->stack, .size = u->dyn_size };
	if (unwind_bpf_walk_later(s->unwind, ps->hdr.pid, ps->hdr.tid, ps->hdr.time, &regs,
				  &stack))
		return false;
	ps->flags |= SAMPLE_WALK_ASKED;
	return true;
}

/*
 * A late sample's turn (PROFILE_SAMPLE_LATE): *wait when it must wait for
 * its second walk, with every record after it (the round is written in
 * time order, so it ends here); else s->late_ok says whether s->late_walk
 * holds that walk. A sample waits LATE_HOLD_NS at most, and only while
 * what would wait with it (itself and the rest of its round) stays under
 * late_hold_bytes(); while the recorder stops (the rings are read to the
 * end) it waits here instead.
 */
static void late_turn(struct record_session *s, struct profile_sample *ps,
		      const struct emit_ustack *u, bool *wait)
{
	uint32_t tid = ps->hdr.tid;
	uint64_t time = ps->hdr.time, wait_ns = 0, now;
	int rc;

	*wait = false;
	s->late_ok = false;
	if (!s->unwind)
		return;
	for (;;) {
		rc = unwind_bpf_walk_done(s->unwind, tid, time, wait_ns, &s->late_walk);
		if (rc == 1) {
			s->late_ok = true;
			if (!late_walk_better(&s->late_walk, ps->nr_user))
				late_unhelpful(s, ps->hdr.pid);
			return;
		}
		if (rc == -ENOENT) {
			/*
			 * Its first turn: asked now, after every record before it
			 * (an mmap report's tables are queued ahead of it). With
			 * nothing to build first the worker walks it within
			 * microseconds: wait that long rather than a round. Not
			 * behind a build: the reader's time is the ring buffer's.
			 */
			if (late_ask(s, ps, u)) {
				wait_ns = s->late_spin && unwind_bpf_walk_soon(s->unwind, tid, time) ?
						  LATE_SPIN_NS : 0;
				continue;
			}
			/* Too many walks waiting, or given up on: the in-kernel walk stands. */
			if (!(ps->flags & SAMPLE_WALK_ASKED))
				unwind_bpf_walk_cancel(s->unwind, tid, time);	/* counted */
			return;
		}
		now = mono_ns();
		if (now - time > LATE_HOLD_NS ||
		    batch_bytes(&s->batch) - s->round_done > late_hold_bytes(s)) {
			/*
			 * Its tables are too slow to come (a huge binary, a
			 * busy machine): its process's next copies would wait
			 * as long for nothing, so they cost it as unhelpful ones.
			 */
			unwind_bpf_walk_cancel(s->unwind, tid, time);
			late_unhelpful(s, ps->hdr.pid);
			return;
		}
		if (!s->draining) {
			/* Not done in time: the worker is building; no more waits this round. */
			s->late_spin &= !wait_ns;
			*wait = true;
			return;
		}
		wait_ns = LATE_POLL_NS;
	}
}

/* What of a record waits for the next round: a late sample whose copy the worker has, without it. */
static size_t held_len(const struct profile_hdr *h, size_t len)
{
	const struct profile_sample *ps = (const struct profile_sample *)h;

	if (h->kind == PROFILE_KIND_SAMPLE && (ps->flags & SAMPLE_WALK_ASKED))
		return PROFILE_SAMPLE_SIZE_PY(ps->nr_kernel + ps->nr_user, ps->nr_py);
	return len;
}

/*
 * Records [from, to) of the batch wait behind a late sample: a new
 * process's first sample among them has its maps read now, while it may
 * still run, and an mmap report starts its process's tables now (once:
 * s->early_done is how far that went).
 */
static void early_turns(struct record_session *s, size_t from, size_t to)
{
	uint64_t early = s->early_done;

	for (size_t i = from; i < to; i++) {
		size_t len;
		const struct profile_hdr *h = batch_get(&s->batch, i, &len);

		if (h->kind == PROFILE_KIND_SAMPLE) {
			struct profile_sample *ps = (struct profile_sample *)h;

			if ((ps->flags & (PROFILE_SAMPLE_NEW_PROC | SAMPLE_PREFETCHED)) ==
			    PROFILE_SAMPLE_NEW_PROC) {
				task_tracker_prefetch(s->tracker, h->pid, h->tid, ps->comm);
				ps->flags |= SAMPLE_PREFETCHED;
			}
		}
		if (h->time > s->early_done && sideband_record_ok(h, len)) {
			sideband_apply_early(h, s->tracker);
			if (h->time > early)
				early = h->time;
		}
	}
	s->early_done = early;
}

/*
 * The records from sorted index `from` on wait for the next round (past
 * the horizon, or behind a late sample): they stay in the batch, without
 * the copies the worker has.
 */
static void hold_from(struct record_session *s, size_t from, bool waiting)
{
	if (waiting)
		early_turns(s, from, s->batch.nr);
	for (size_t i = from; i < s->batch.nr; i++) {
		size_t len;
		const struct profile_hdr *h = batch_get(&s->batch, i, &len);

		batch_set_len(&s->batch, i, held_len(h, len));
	}
	batch_keep_from(&s->batch, from);
	s->held_nr = s->batch.nr;
}

/*
 * Whether the round would end at the late sample the last one ended at,
 * as nothing before it can be written: its walk is still pending and it
 * may wait longer. Rounds come every few milliseconds while a sample
 * waits; such a round then only looks at what arrived since (sorting and
 * holding the whole batch each time costs more than the samples' rate
 * under load, and the ring buffer overflows).
 */
static bool round_still_waits(struct record_session *s)
{
	if (!s->wait_set || s->draining || !s->unwind ||
	    batch_bytes(&s->batch) >= late_hold_bytes(s) ||
	    mono_ns() - s->wait_time > LATE_HOLD_NS ||
	    !unwind_bpf_walk_pending(s->unwind, s->wait_tid, s->wait_time))
		return false;
	early_turns(s, s->held_nr, s->batch.nr);
	s->held_nr = s->batch.nr;
	s->last_flush_ns = mono_ns();
	return true;
}

/* Write the batch as one time-sorted round, with the samples lost meanwhile. */
int session_flush_batch(struct record_session *s)
{
	struct record_source_counters c = { 0 };
	bool wrote = false, waiting = false;
	size_t keep = SIZE_MAX;
	/* The newest time written in this round: the tracers' batches stop there too. */
	uint64_t lost, round_end = s->horizon;
	int err = 0;

	if (round_still_waits(s))
		return 0;
	s->wait_set = false;
	s->src_ops->counters(s, s->src, &c);
	lost = c.lost;
	s->seen = c.seen;
	s->lost_task = c.lost_task;
	s->late_spent = c.late_spent;
	s->late_busy = c.late_busy;
	s->py_cut = c.py_cut;
	s->describe_soon = false;
	s->last_flush_ns = mono_ns();
	s->late_spin = true;
	batch_sort(&s->batch);
	s->round_done = 0;
	for (size_t i = 0; i < s->batch.nr && !err; i++) {
		size_t len;
		const struct profile_hdr *h = batch_get(&s->batch, i, &len);
		const struct record_tracer *tr;

		s->round_done += (len + 7) & ~(size_t)7;	/* as the batch stores it */

		/* Past where this round ends: it and all after it wait for the next one. */
		if (h->time > s->horizon) {
			keep = i;
			round_end = h->time - 1;
			break;
		}
		if (h->kind == PROFILE_KIND_SAMPLE) {
			struct profile_sample *ps = (struct profile_sample *)h;
			struct emit_ustack u;

			/* on_ring_record() checked it; len says how much of it is here. */
			sample_parse(ps, len, !(ps->flags & SAMPLE_WALK_ASKED), &u);
			if (ps->flags & PROFILE_SAMPLE_LATE) {
				late_turn(s, ps, &u, &waiting);
				if (waiting) {
					keep = i;
					round_end = h->time ? h->time - 1 : 0;
					s->wait_set = true;
					s->wait_tid = h->tid;
					s->wait_time = h->time;
					break;
				}
			}
			err = write_sample(s, ps, &u);
		} else if (sideband_record_ok(h, len)) {
			const struct task_desc *d;

			err = sideband_apply(h, s->tracker, &d);
			if (!err && d)
				err = emit_desc(s->w, d);
		} else if ((tr = session_tracer_of(s, h, len))) {
			/* The batch's copy, as a sample's above: named in place. */
			err = tr->ops->write(tr->t, s->w, s->tracker, (void *)h, len);
		} else {
			err = write_task(s, (const struct profile_task *)h);
		}
		if (h->time > s->last_time)
			s->last_time = h->time;
		wrote = true;
	}
	if (!err) {
		err = emit_lost(s->w, s->event_id, lost, &s->lost, s->last_time);
		wrote |= err > 0;
		err = err > 0 ? 0 : err;
	}
	/* The tracers' own batches (--alloc) and losses, in this round. */
	if (!err)
		err = session_tracers_round(s, round_end, &wrote);
	/* Tasks that exited before this round have had their last samples. */
	task_tracker_round_end(s->tracker);
	s->round_unmarked |= wrote;
	/* The last rounds (detached, draining) are marked: the file ends with one, as perf's. */
	if (!err && s->round_unmarked &&
	    (s->draining || mono_ns() - s->round_mark_ns >= ROUND_MARK_MIN_NS)) {
		err = emit_round_end(s->w);
		s->round_mark_ns = mono_ns();
		s->round_unmarked = false;
	}
	if (!err)
		err = perfdata_writer_checkpoint(s->w);
	if (!err) {
		s->ckpt_samples = perfdata_writer_nr_samples(s->w);
		s->ckpt_bytes = perfdata_writer_size(s->w);
		s->ckpt_cpu_written = s->cpu_written;
	}
	hold_from(s, keep, waiting);
	/* A sample waits for tables: look again soon. */
	s->describe_soon |= waiting;
	warn_denied(s);
	return err;
}

/* When the next round is due: the flush interval, or soon for a new process. */
uint64_t session_flush_due_ns(const struct record_session *s)
{
	uint64_t early = s->last_flush_ns + EARLY_FLUSH_MIN_NS;

	return s->describe_soon && early < s->next_flush_ns ? early : s->next_flush_ns;
}

int record_source_deliver(void *session, void *data, size_t size)
{
	return on_ring_record(session, data, size);
}

int session_consume(struct record_session *s, bool *batch_full)
{
	uint64_t start = mono_ns();
	int err;

	s->consume_start = start;
	err = s->src_ops->consume(s, s->src);

	/*
	 * Read whole, the rings hold nothing from before `start` any more: the
	 * round can end there. Detached, they hold nothing more at all. A full
	 * batch (also while detached) stopped the reading in the sample ring
	 * (the task notices are read first: sampler.c): the round ends at the
	 * last sample read, and what the side-band and the task ring hold past
	 * it waits for the samples still in their ring (else they would reach
	 * the file a round after later records, out of order). And never past
	 * `start` while attached: the task ring was read once, at the start of
	 * this reading, and a long one (a slow reader under load, producers
	 * refilling the sample ring as it is read) reads samples from well
	 * after the task notices still waiting in theirs.
	 */
	*batch_full = err == BATCH_FULL;
	if (s->draining)
		s->horizon = *batch_full ? s->last_delivered : UINT64_MAX;
	else
		s->horizon = *batch_full && s->last_delivered < start ? s->last_delivered : start;
	if (s->cb_err)
		return session_fail(s, s->cb_err, "cannot keep up: %s", strerror(-s->cb_err));
	if (err < 0 && err != BATCH_FULL)
		return session_fail(s, err, "cannot read the ring buffer: %s", strerror(-err));
	err = consume_sideband(s);
	if (!err)
		err = session_tracers_consume(s);
	if (err)
		return session_fail(s, err, "cannot keep up: %s", strerror(-err));
	return 0;
}
