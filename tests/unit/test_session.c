// SPDX-License-Identifier: MIT
/*
 * test_session.c - the recording session (recorder/session.h) driven by a
 * fake event source (recorder/source.h) instead of BPF, so no root is
 * needed: each consume() hands the session the next step of a script
 * (samples in profile_sample layout, task notices, out-of-order times, a
 * lost count), and the files written are read back with perfdata/reader.h.
 *
 * Every poll sleeps until its round is due (the fake has no fd to wake
 * it) and the flush interval is 1 ms, so each poll writes exactly one
 * step of the script as one round.
 *
 * The fake source may also hold a fake tracer (recorder/tracer.h), opened
 * and attached as a source does, whose records ride in the script.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>

#include <bpfrec/record.h>

#include "bpf/profile.h"
#include "perfdata/attr.h"
#include "perfdata/reader.h"
#include "perfdata/writer.h"
#include "recorder/emit.h"
#include "recorder/session.h"
#include "recorder/session_int.h"
#include "recorder/source.h"
#include "recorder/tracer.h"

#define MAX_RECS	256
#define MAX_STEPS	16

struct fake_rec {
	uint8_t buf[sizeof(struct profile_sample)];
	size_t len;
	bool sample;
};

/* A tracer of the test's own, and what the session did with it. */
struct fake_tracer {
	struct perf_event_attr attr;
	uint64_t id;
	uint64_t lost, lost_written;	/* its BPF's drops, and those the file has */
	int attached, detached, freed, file_ends, last_ends;
};

/* The script and what the session did with the fake. */
struct fake {
	struct fake_rec recs[MAX_RECS];
	size_t nr_recs, next_rec;
	size_t step_end[MAX_STEPS];	/* recs[..step_end[i]) make step i */
	uint64_t step_lost[MAX_STEPS];	/* samples the source "dropped" in step i */
	size_t nr_steps, next_step;
	uint64_t seen, lost;
	int open_err;
	int opened, attached, detached, freed;
	struct fake_tracer *tracer;	/* NULL = none */
};

/* Its records: samples of the profile_sample layout, of a kind no other record has. */
#define FAKE_TRACER_KIND	0x7e
#define FAKE_TRACER_ID		(7ull << 48)

static bool fake_tracer_record_ok(const void *rec, size_t size)
{
	return size >= PROFILE_SAMPLE_SIZE(2) &&
	       ((const struct profile_hdr *)rec)->kind == FAKE_TRACER_KIND;
}

static int fake_tracer_write(void *t, struct perfdata_writer *w, struct task_tracker *tt,
			     void *rec, size_t size)
{
	const struct profile_sample *ps = rec;
	const uint64_t *frames = (const uint64_t *)ps->frames;
	struct emit_sample e = {
		.pid = ps->hdr.pid, .tid = ps->hdr.tid, .cpu = ps->hdr.cpu, .time = ps->hdr.time,
		.period = 1, .id = ((struct fake_tracer *)t)->id,
		.comm = ps->comm, .comm_len = sizeof(ps->comm),
		.chain = { .ip = ps->ip, .user = frames, .nr_user = ps->nr_user },
	};

	(void)size;
	return emit_sample(w, tt, &e, false);
}

static int fake_tracer_add_events(void *t, struct perfdata_writer *w)
{
	struct fake_tracer *ft = t;

	return perfdata_writer_add_event(w, "fake-event", &ft->attr, &ft->id, 1);
}

static int fake_tracer_attach(struct record_session *s, void *t)
{
	(void)s;
	((struct fake_tracer *)t)->attached++;
	return 0;
}

static void fake_tracer_detach(void *t)
{
	((struct fake_tracer *)t)->detached++;
}

static int fake_tracer_write_lost(void *t, struct perfdata_writer *w, uint64_t time)
{
	struct fake_tracer *ft = t;

	return emit_lost(w, ft->id, ft->lost, &ft->lost_written, time);
}

static void add_tracer_rec(struct batch *b, uint64_t time);

/* At stop: one more record, as a sum BPF kept. */
static int fake_tracer_collect(void *t, struct batch *b, uint64_t min_time)
{
	(void)t;
	add_tracer_rec(b, min_time);
	return 0;
}

static int fake_tracer_file_end(struct record_session *s, void *t, bool last)
{
	struct fake_tracer *ft = t;

	cr_assert_not_null(s->w, "a file to end");
	ft->file_ends++;
	ft->last_ends += last;
	return 0;
}

static void fake_tracer_stats(const void *t, struct record_status *st)
{
	st->rec.lost += ((const struct fake_tracer *)t)->lost_written;
}

/* The recording's main counters, as bpfrec_record_get_stats() hands them out. */
static struct bpfrec_record_stats status_of(const struct record_session *s)
{
	struct record_status st;

	record_session_status(s, &st);
	return st.rec;
}

static void fake_tracer_free(void *t)
{
	((struct fake_tracer *)t)->freed++;
}

/* Not in tracers.c's list: the fake source opens it itself (no wanted(), open(), object()). */
static const struct record_tracer_ops fake_tracer_ops = {
	.option = "--fake",
	.what = "the fake tracer",
	.add_events = fake_tracer_add_events,
	.attach = fake_tracer_attach,
	.detach = fake_tracer_detach,
	.record_ok = fake_tracer_record_ok,
	.write = fake_tracer_write,
	.write_lost = fake_tracer_write_lost,
	.collect = fake_tracer_collect,
	.file_end = fake_tracer_file_end,
	.stats = fake_tracer_stats,
	.free = fake_tracer_free,
};

static int fake_open(struct record_session *s, void **src)
{
	struct fake *f = *src;

	f->opened++;
	if (f->tracer) {
		perfdata_bpf_output_attr(&s->attr, &f->tracer->attr);
		f->tracer->id = FAKE_TRACER_ID;
		session_add_tracer(s, &fake_tracer_ops, f->tracer);
	}
	return f->open_err;
}

/* As the sampler does: the tracers with the source's programs. */
static int fake_attach(struct record_session *s, void *src)
{
	((struct fake *)src)->attached++;
	return session_tracers_attach(s);
}

static void fake_detach(struct record_session *s, void *src)
{
	((struct fake *)src)->detached++;
	session_tracers_detach(s);
}

/* One step a call, as a ring buffer read between two rounds. */
static int fake_consume(struct record_session *s, void *src)
{
	struct fake *f = src;
	size_t end;

	if (!f->attached || f->next_step >= f->nr_steps)
		return 0;
	end = f->step_end[f->next_step];
	while (f->next_rec < end) {
		struct fake_rec *r = &f->recs[f->next_rec++];
		int err = record_source_deliver(s, r->buf, r->len);

		f->seen += r->sample;
		if (err)
			return err;
	}
	f->seen += f->step_lost[f->next_step];
	f->lost += f->step_lost[f->next_step];
	f->next_step++;
	return 0;
}

static void fake_counters(const struct record_session *s, const void *src,
			  struct record_source_counters *c)
{
	const struct fake *f = src;

	(void)s;
	c->seen = f->seen;
	c->lost = f->lost;
	c->lost_task = 0;
}

static void fake_free(struct record_session *s, void *src)
{
	((struct fake *)src)->freed++;
	session_tracers_free(s);
}

static const struct record_source_ops fake_ops = {
	.open = fake_open,
	.attach = fake_attach,
	.detach = fake_detach,
	.consume = fake_consume,
	.counters = fake_counters,
	.free = fake_free,
};

static uint64_t base_time(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A user-mode sample of this process with a two-frame user stack, into buf. */
static size_t make_sample(void *buf, uint32_t kind, uint64_t time, uint32_t cpu)
{
	struct profile_sample *ps = buf;

	memset(ps, 0, sizeof(*ps));
	ps->hdr.kind = kind;
	ps->hdr.cpu = cpu;
	ps->hdr.time = time;
	ps->hdr.pid = ps->hdr.tid = (uint32_t)getpid();
	ps->period = 250000;
	ps->ip = ps->user_ip = (uintptr_t)make_sample;
	ps->nr_user = 2;
	ps->frames[0] = (uintptr_t)make_sample;
	ps->frames[1] = (uintptr_t)fake_consume;
	strcpy(ps->comm, "test_session");
	return PROFILE_SAMPLE_SIZE(2);
}

static void add_sample(struct fake *f, uint64_t time, uint32_t cpu)
{
	struct fake_rec *r = &f->recs[f->nr_recs++];

	cr_assert_leq(f->nr_recs, MAX_RECS);
	r->len = make_sample(r->buf, PROFILE_KIND_SAMPLE, time, cpu);
	r->sample = true;
}

/* A record of the fake tracer in the script (not a CPU sample: not seen). */
static void add_tracer_sample(struct fake *f, uint64_t time)
{
	struct fake_rec *r = &f->recs[f->nr_recs++];

	cr_assert_leq(f->nr_recs, MAX_RECS);
	r->len = make_sample(r->buf, FAKE_TRACER_KIND, time, 0);
}

static void add_tracer_rec(struct batch *b, uint64_t time)
{
	struct profile_sample ps;
	size_t len = make_sample(&ps, FAKE_TRACER_KIND, time, 0);
	void *p = batch_add(b, time, len);

	cr_assert_not_null(p);
	memcpy(p, &ps, len);
}

static void add_task(struct fake *f, uint32_t kind, uint64_t time, uint32_t pid)
{
	struct fake_rec *r = &f->recs[f->nr_recs++];
	struct profile_task *t = (struct profile_task *)r->buf;

	memset(r->buf, 0, sizeof(r->buf));
	t->hdr.kind = kind;
	t->hdr.time = time;
	t->hdr.pid = t->hdr.tid = pid;
	t->ppid = t->ptid = (uint32_t)getpid();
	t->group_dead = 1;
	r->len = sizeof(*t);
}

static void end_step(struct fake *f, uint64_t lost)
{
	cr_assert_lt(f->nr_steps, MAX_STEPS);
	f->step_lost[f->nr_steps] = lost;
	f->step_end[f->nr_steps++] = f->nr_recs;
}

static char dir[] = "/tmp/test_session.XXXXXX";
static char path[PATH_MAX];

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perf.data", dir);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

static void base_opts(struct record_opts *o, struct fake *f)
{
	memset(o, 0, sizeof(*o));
	o->output = path;
	o->freq = 4000;
	o->system_wide = true;
	o->callgraph = RECORD_CALLGRAPH_FP;
	o->flush_interval_ms = 1;
	o->wake_fd = -1;
	o->quiet = true;
	o->no_buildid_cache = true;
	o->source = &fake_ops;
	o->source_ctx = f;
}

static struct record_session *started(const struct record_opts *o)
{
	struct record_session *s;

	cr_assert_eq(record_session_new(o, &s), 0);
	cr_assert_eq(record_session_open(s), 0, "%s", record_session_error(s));
	cr_assert_eq(record_session_start(s), 0, "%s", record_session_error(s));
	return s;
}

/* Poll once per step: each writes one round. */
static void poll_steps(struct record_session *s, const struct fake *f)
{
	for (size_t i = 0; i < f->nr_steps; i++)
		cr_assert_eq(record_session_poll(s, 1000), 0, "%s", record_session_error(s));
	cr_assert_eq(f->next_step, f->nr_steps);
}

/* What a file holds, read record by record. */
struct contents {
	int rc;			/* the reader's last result: 0 = read to the end */
	size_t samples, forks, exits, rounds;
	uint64_t lost;		/* LOST_SAMPLES, summed */
	/* The fake tracer's samples (not in the above) and LOST_SAMPLES, and the last's time. */
	size_t tracer_samples;
	uint64_t tracer_lost, tracer_last;
	char second_event[32];	/* the name of the file's second event, if any */
	uint64_t times[MAX_RECS];	/* of the samples, in file order */
	size_t round_of[MAX_RECS];	/* the round each sample is in */
	uint64_t sample_type;
	bool unsorted;		/* a record with a time before the previous one in its round */
};

static void read_file(const char *name, struct contents *c)
{
	struct perfdata_reader *r;
	const struct perf_event_header *h;
	uint64_t last = 0;
	int fd = open(name, O_RDONLY | O_CLOEXEC);

	memset(c, 0, sizeof(*c));
	cr_assert_geq(fd, 0, "%s: %s", name, strerror(errno));
	cr_assert_eq(perfdata_reader_open(fd, name, &r), 0, "%s", r ? perfdata_reader_error(r) : "");
	while ((c->rc = perfdata_reader_next(r, &h)) == 1) {
		struct perfdata_sample_id sid;
		struct perfdata_sample ps;
		uint64_t id, lost;

		switch (h->type) {
		case PERF_RECORD_SAMPLE:
			cr_assert_eq(perfdata_reader_parse_sample(r, h, &ps, NULL), 0);
			cr_assert_lt(c->samples, MAX_RECS);
			cr_assert_eq(ps.pid, (uint32_t)getpid());
			cr_assert_eq(ps.nr_callchain, 3, "USER marker and two frames");
			c->unsorted |= ps.time < last;
			last = ps.time;
			if (ps.id == FAKE_TRACER_ID) {
				c->tracer_samples++;
				c->tracer_last = ps.time;
				break;
			}
			c->round_of[c->samples] = c->rounds;
			c->times[c->samples++] = ps.time;
			break;
		case PERF_RECORD_FORK:
		case PERF_RECORD_EXIT:
			cr_assert_eq(perfdata_reader_parse_sample_id(r, h, &sid), 0);
			c->forks += h->type == PERF_RECORD_FORK;
			c->exits += h->type == PERF_RECORD_EXIT;
			c->unsorted |= sid.time < last;
			last = sid.time;
			break;
		case PERF_RECORD_LOST_SAMPLES:
			cr_assert_eq(perfdata_decode_lost(h, &id, &lost), 0);
			/* Whose: its sample_id trailer says. */
			cr_assert_eq(perfdata_reader_parse_sample_id(r, h, &sid), 0);
			if (sid.id == FAKE_TRACER_ID)
				c->tracer_lost += lost;
			else
				c->lost += lost;
			break;
		case PERFDATA_RECORD_FINISHED_ROUND:
			c->rounds++;
			last = 0;
			break;
		}
	}
	/* A stream names its events as it goes: read them at the end. */
	cr_assert_geq(perfdata_reader_nr_events(r), 1);
	c->sample_type = perfdata_reader_event(r, 0)->attr.sample_type;
	if (perfdata_reader_nr_events(r) > 1)
		snprintf(c->second_event, sizeof(c->second_event), "%s",
			 perfdata_reader_event(r, 1)->name);
	perfdata_reader_free(r);
	close(fd);
}

/* read_file() of a file the reader must get to the end of. */
static void read_whole(const char *name, struct contents *c)
{
	read_file(name, c);
	cr_assert_eq(c->rc, 0, "%s: read to its end", name);
}

TestSuite(session, .init = setup, .fini = teardown);

Test(session, rounds_are_sorted_and_follow_each_other)
{
	static struct fake f;
	uint64_t t0 = base_time();
	static const int first[] = { 5, 3, 4, 1, 2 }, second[] = { 9, 7, 8, 6 };
	struct record_opts o;
	struct record_session *s;
	struct contents c;

	for (size_t i = 0; i < 5; i++)
		add_sample(&f, t0 + first[i] * 1000, (uint32_t)i % 2);
	add_task(&f, PROFILE_KIND_FORK, t0 + 2500, 999999);
	end_step(&f, 0);
	for (size_t i = 0; i < 4; i++)
		add_sample(&f, t0 + second[i] * 1000, 0);
	add_task(&f, PROFILE_KIND_EXIT, t0 + 6500, 999999);
	end_step(&f, 0);
	base_opts(&o, &f);
	s = started(&o);
	poll_steps(s, &f);
	cr_assert_eq(record_session_stop(s), 0, "%s", record_session_error(s));
	record_session_close(s);

	read_whole(path, &c);
	cr_assert_eq(c.samples, 9);
	cr_assert_eq(c.forks, 1);
	cr_assert_eq(c.exits, 1);
	cr_assert_not(c.unsorted, "each round is in time order");
	cr_assert_geq(c.rounds, 2);
	for (size_t i = 0; i < c.samples; i++) {
		cr_assert_eq(c.times[i], t0 + (i + 1) * 1000, "sample %zu", i);
		cr_assert_eq(c.round_of[i], i < 5 ? 0 : 1, "sample %zu in the round of its step", i);
	}
	cr_assert(c.sample_type & PERF_SAMPLE_CPU, "-a: samples name their CPU");
	cr_assert_eq(f.attached, 1);
	cr_assert_eq(f.detached, 2, "stop and close each detach");
	cr_assert_eq(f.freed, 1);
}

Test(session, lost_samples_are_written_and_counted)
{
	static struct fake f;
	uint64_t t0 = base_time();
	struct bpfrec_record_stats st;
	struct record_opts o;
	struct record_session *s;
	struct contents c;

	for (int i = 0; i < 3; i++)
		add_sample(&f, t0 + (uint64_t)i * 10, 0);
	end_step(&f, 5);
	for (int i = 3; i < 5; i++)
		add_sample(&f, t0 + (uint64_t)i * 10, 0);
	end_step(&f, 2);
	end_step(&f, 0);	/* a round with nothing new */
	base_opts(&o, &f);
	s = started(&o);
	poll_steps(s, &f);
	cr_assert_eq(record_session_stop(s), 0, "%s", record_session_error(s));
	st = status_of(s);
	cr_assert_eq(st.seen, 12);
	cr_assert_eq(st.cpu_samples, 5);
	cr_assert_eq(st.cpu_lost, 7);
	cr_assert_eq(st.cpu_samples + st.cpu_lost, st.seen);
	cr_assert_eq(st.samples, 5);
	cr_assert_eq(st.lost, 7);
	cr_assert_not(st.write_failed);
	record_session_close(s);

	read_whole(path, &c);
	cr_assert_eq(c.samples, 5);
	cr_assert_eq(c.lost, 7, "LOST_SAMPLES counts every drop once");
}

Test(session, a_tracer_plugs_in_through_its_ops)
{
	static struct fake f;
	static struct fake_tracer ft = { .lost = 3 };
	uint64_t t0 = base_time();
	struct bpfrec_record_stats st;
	struct record_opts o;
	struct record_session *s;
	struct contents c;

	add_sample(&f, t0 + 1000, 0);
	add_tracer_sample(&f, t0 + 2000);
	add_sample(&f, t0 + 3000, 1);
	end_step(&f, 0);
	add_tracer_sample(&f, t0 + 4000);
	end_step(&f, 0);
	base_opts(&o, &f);
	/*
	 * A tracer's option makes the CPU event's samples carry an id
	 * (record_tracers_wanted()); the fake source opens only its own.
	 */
	o.off_cpu = true;
	f.tracer = &ft;
	s = started(&o);
	cr_assert_eq(ft.attached, 1);
	poll_steps(s, &f);
	cr_assert_eq(record_session_stop(s), 0, "%s", record_session_error(s));
	st = status_of(s);
	cr_assert_eq(st.cpu_samples, 2);
	cr_assert_eq(st.samples, 5, "the CPU's, the tracer's and the one it collected");
	cr_assert_eq(st.lost, 3, "its losses count in the recording's");
	record_session_close(s);
	cr_assert_geq(ft.detached, 1);
	cr_assert_eq(ft.freed, 1);
	cr_assert_eq(ft.file_ends, 1);
	cr_assert_eq(ft.last_ends, 1, "the one file ended the recording");

	read_whole(path, &c);
	cr_assert_str_eq(c.second_event, "fake-event", "its event is in the header");
	cr_assert_eq(c.samples, 2);
	cr_assert_eq(c.tracer_samples, 3, "two in the rounds, one collected at stop");
	cr_assert_eq(c.tracer_last, t0 + 4000, "collected: no earlier than what was written");
	cr_assert_eq(c.tracer_lost, 3, "LOST_SAMPLES of its own event, once");
	cr_assert_eq(c.lost, 0);
	cr_assert_not(c.unsorted);
}

static char switched[8][PATH_MAX];
static size_t nr_switched;

static void on_switch(void *ctx, const char *name)
{
	(void)ctx;
	cr_assert_lt(nr_switched, 8);
	snprintf(switched[nr_switched++], PATH_MAX, "%s", name);
}

Test(session, switch_output_by_size_splits_without_loss_or_duplicates)
{
	static struct fake f;
	uint64_t t0 = base_time();
	struct bpfrec_record_stats st;
	struct record_opts o;
	struct record_session *s;
	size_t total = 0, steps = 4, per_step = 10;
	bool seen[40] = { false };
	struct stat sb;

	for (size_t i = 0; i < steps; i++) {
		for (size_t j = 0; j < per_step; j++)
			add_sample(&f, t0 + (i * per_step + j + 1) * 1000, 0);
		end_step(&f, 0);
	}
	base_opts(&o, &f);
	o.switch_output.mode = ROTATE_SIZE;
	o.switch_output.bytes = 1;	/* every round ends its file */
	o.on_switch = on_switch;
	s = started(&o);
	poll_steps(s, &f);
	cr_assert_eq(nr_switched, steps, "one file per round so far");
	cr_assert_eq(record_session_stop(s), 0, "%s", record_session_error(s));
	st = status_of(s);
	cr_assert_eq(st.nr_files, steps + 1, "the last (empty) file is retired at stop");
	cr_assert_eq(st.samples, steps * per_step);
	record_session_close(s);
	cr_assert_eq(nr_switched, steps + 1);
	cr_assert_neq(stat(path, &sb), 0, "every file got its final name");

	for (size_t i = 0; i < nr_switched; i++) {
		struct contents c;

		read_file(switched[i], &c);
		cr_assert_eq(c.rc, 0, "%s reads to its end", switched[i]);
		cr_assert_eq(c.samples, i < steps ? per_step : 0, "%s", switched[i]);
		for (size_t j = 0; j < c.samples; j++) {
			size_t k = (c.times[j] - t0) / 1000 - 1;

			cr_assert_lt(k, steps * per_step);
			cr_assert_not(seen[k], "sample %zu written twice", k);
			seen[k] = true;
		}
		total += c.samples;
	}
	cr_assert_eq(total, steps * per_step);
}

Test(session, lifecycle_steps_out_of_order)
{
	static struct fake f;
	struct record_opts o;
	struct record_session *s;
	struct contents c;

	base_opts(&o, &f);
	cr_assert_eq(record_session_new(&o, &s), 0);
	cr_assert_eq(record_session_poll(s, 0), -EINVAL, "poll before start");
	cr_assert_str_neq(record_session_error(s), "");
	cr_assert_eq(record_session_stop(s), -EINVAL, "stop without start");
	cr_assert_eq(record_session_poll_fd(s), -1);
	cr_assert_eq(record_session_open(s), 0, "%s", record_session_error(s));
	cr_assert_eq(record_session_open(s), -EALREADY, "open twice");
	cr_assert_eq(record_session_poll(s, 0), -EINVAL, "poll before start");
	cr_assert_eq(record_session_switch_output(s), -EINVAL);
	cr_assert_eq(record_session_stop(s), -EINVAL, "stop without start");
	cr_assert_eq(record_session_next_poll_ms(s), -1);
	cr_assert_eq(record_session_start(s), 0, "%s", record_session_error(s));
	cr_assert_eq(record_session_start(s), -EALREADY, "start twice");
	cr_assert_eq(f.attached, 1, "the second start attached nothing");
	cr_assert_geq(record_session_next_poll_ms(s), 0);
	cr_assert_eq(record_session_poll(s, 0), 0, "%s", record_session_error(s));
	cr_assert_eq(record_session_stop(s), 0, "%s", record_session_error(s));
	cr_assert_eq(record_session_stop(s), 0, "stop twice: nothing to do");
	cr_assert_eq(record_session_state(s), SESSION_STOPPED);
	cr_assert_eq(record_session_poll(s, 0), -EINVAL, "poll after stop");
	cr_assert_eq(record_session_start(s), -EINVAL, "start after stop");
	cr_assert_eq(f.attached, 1);
	record_session_close(s);
	/* A stopped session's file stays, finished. */
	read_whole(path, &c);
	cr_assert_eq(c.samples, 0);
	cr_assert_eq(f.opened, 1);
	cr_assert_eq(f.freed, 1);
}

/* close in each state: what stays on disk, and the source freed once it was opened. */
Test(session, close_in_every_state)
{
	static struct fake f;
	struct record_opts o;
	struct record_session *s;
	struct stat sb;

	base_opts(&o, &f);
	record_session_close(NULL);

	cr_assert_eq(record_session_new(&o, &s), 0);
	record_session_close(s);
	cr_assert_eq(f.freed, 0, "never opened: nothing to free");
	cr_assert_neq(stat(path, &sb), 0);

	cr_assert_eq(record_session_new(&o, &s), 0);
	cr_assert_eq(record_session_open(s), 0, "%s", record_session_error(s));
	cr_assert_eq(stat(path, &sb), 0, "open creates the output");
	record_session_close(s);
	cr_assert_neq(stat(path, &sb), 0, "an unfinished file is unlinked");
	cr_assert_eq(f.freed, 1);

	s = started(&o);
	record_session_close(s);
	cr_assert_neq(stat(path, &sb), 0, "started, not stopped: unlinked");
	cr_assert_eq(f.freed, 2);

	/* Start right after new opens first: the public API's shortcut. */
	cr_assert_eq(record_session_new(&o, &s), 0);
	cr_assert_eq(record_session_start(s), 0, "%s", record_session_error(s));
	cr_assert_eq(record_session_state(s), SESSION_STARTED);
	cr_assert_eq(f.opened, 3);
	cr_assert_eq(record_session_stop(s), 0, "%s", record_session_error(s));
	record_session_close(s);
	cr_assert_eq(f.freed, 3);
	cr_assert_eq(unlink(path), 0, "a stopped session's file stays");

	/* A failed open: the source's error, then only close. */
	f.open_err = -EIO;
	cr_assert_eq(record_session_new(&o, &s), 0);
	cr_assert_eq(record_session_open(s), -EIO);
	cr_assert_eq(record_session_start(s), -EINVAL, "start after a failed open");
	cr_assert_eq(record_session_open(s), -EALREADY);
	record_session_close(s);
	cr_assert_neq(stat(path, &sb), 0, "nothing written before the source opened");
	cr_assert_eq(f.freed, 4);

	/* Bad options: new fails, close still frees. */
	o.ring_buffer_bytes = 5000;
	cr_assert_eq(record_session_new(&o, &s), -EINVAL);
	cr_assert_str_neq(record_session_error(s), "");
	cr_assert_eq(record_session_open(s), -EALREADY);
	record_session_close(s);
}

/* A write callback that takes everything until told to fail. */
struct sink {
	char *buf;
	size_t len;
	bool full;
};

static int sink_write(void *ctx, const void *buf, size_t len)
{
	struct sink *k = ctx;

	if (k->full)
		return -ENOSPC;
	k->buf = realloc(k->buf, k->len + len);
	cr_assert_not_null(k->buf);
	memcpy(k->buf + k->len, buf, len);
	k->len += len;
	return 0;
}

Test(session, write_error_stops_with_a_readable_stream)
{
	static struct fake f;
	uint64_t t0 = base_time();
	struct sink k = { 0 };
	struct bpfrec_record_stats st;
	struct record_opts o;
	struct record_session *s;
	struct contents c;
	FILE *out;

	for (int i = 0; i < 5; i++)
		add_sample(&f, t0 + (uint64_t)i, 0);
	end_step(&f, 0);
	base_opts(&o, &f);
	o.output = NULL;
	o.output_write = sink_write;
	o.output_write_ctx = &k;
	s = started(&o);
	cr_assert_gt(k.len, 0, "start wrote the stream's header");
	k.full = true;
	cr_assert_eq(record_session_poll(s, 1000), -ENOSPC);
	cr_assert_str_neq(record_session_error(s), "");
	st = status_of(s);
	cr_assert(st.write_failed);
	cr_assert_neq(record_session_stop(s), 0, "stop reports the failed write");
	record_session_close(s);

	/* What the sink took is a whole stream: the reader gets to its end. */
	out = fopen(path, "w");
	cr_assert_not_null(out);
	cr_assert_eq(fwrite(k.buf, 1, k.len, out), k.len);
	fclose(out);
	free(k.buf);
	read_whole(path, &c);
	cr_assert_eq(c.samples, 0, "nothing after the failed write");
}

/* A file that cannot grow (EFBIG past RLIMIT_FSIZE): stop leaves it readable. */
Test(session, write_error_leaves_the_file_at_its_checkpoint)
{
	struct bpfrec_record_stats st;
	struct record_session *s;
	uint64_t t0 = base_time();
	struct record_opts o;
	static struct fake f;
	struct contents c;
	struct rlimit rl;
	struct stat sb;
	int err;

	for (int i = 0; i < 5; i++)
		add_sample(&f, t0 + (uint64_t)i, 0);
	end_step(&f, 0);
	for (int i = 5; i < MAX_RECS; i++)
		add_sample(&f, t0 + (uint64_t)i, 0);
	end_step(&f, 0);
	base_opts(&o, &f);
	s = started(&o);
	cr_assert_eq(record_session_poll(s, 1000), 0, "%s", record_session_error(s));
	cr_assert_eq(stat(path, &sb), 0);
	/* The first round fits; the second is past the limit. */
	signal(SIGXFSZ, SIG_IGN);
	rl.rlim_cur = rl.rlim_max = (rlim_t)sb.st_size + 512;
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	err = record_session_poll(s, 1000);
	cr_assert_eq(err, -EFBIG, "%d %s", err, record_session_error(s));
	st = status_of(s);
	cr_assert(st.write_failed);
	cr_assert_eq(st.samples, 5, "the file keeps its last checkpoint");
	cr_assert_neq(record_session_stop(s), 0);
	record_session_close(s);

	read_file(path, &c);
	cr_assert_eq(c.rc, 0, "cut back to a checkpoint: whole records only");
	cr_assert_eq(c.samples, 5);
}
