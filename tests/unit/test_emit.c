// SPDX-License-Identifier: MIT
/*
 * test_emit.c - recorder/emit.c: the frames and the user registers and stack
 * block of a BPF sample, task descriptions (recorder/taskdesc.c) written in
 * order, LOST_SAMPLES, FORK/EXIT and FINISHED_ROUND, and the kernel's
 * records as perf synthesizes them (MMAP, build-id, KSYMBOL).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/types.h>

#include "perfdata/reader.h"
#include "perfdata/records.h"
#include "perfdata/writer.h"
#include "recorder/emit.h"
#include "recorder/taskdesc.h"
#include "tests/unit/test_roundtrip.h"

#include "bpf/profile.h"

/* A record of no frames: only the block. */
static size_t block_parse(const void *p, size_t len, struct emit_ustack *u)
{
	return emit_record_parse(p, len, 0, 0, 0, 0, true, u);
}

Test(emit, ustack_block_is_bounded_by_the_record)
{
	size_t len = sizeof(struct profile_ustack) + 1024;
	struct profile_ustack *in = calloc(1, len);
	struct emit_ustack u;

	cr_assert_not_null(in);
	in->abi = PROFILE_UREGS_ABI_64;
	in->size = 8192;
	in->dyn_size = 1000;
	for (int i = 0; i < PROFILE_NR_UREGS; i++)
		in->regs[i] = 100 + (uint64_t)i;
	cr_assert_eq(block_parse(in, len, &u), sizeof(*in) + 1000);
	cr_assert(u.present);
	cr_assert_eq(u.abi, PROFILE_UREGS_ABI_64);
	cr_assert_eq(u.size, 8192);
	cr_assert_eq(u.dyn_size, 1000);
	cr_assert_eq(u.regs[PROFILE_UREG_IP], 100 + PROFILE_UREG_IP);
	cr_assert_eq(u.stack, (const void *)(in + 1));

	/* Whole chunks follow in the ring buffer: more than dyn_size is fine, less is not. */
	cr_assert_eq(block_parse(in, sizeof(*in) + 999, &u), 0);
	cr_assert_eq(block_parse(in, sizeof(*in) - 8, &u), 0);
	in->dyn_size = 8200;
	cr_assert_eq(block_parse(in, len, &u), 0, "dyn_size above size");
	in->dyn_size = 8;
	in->size = 12;
	cr_assert_eq(block_parse(in, len, &u), 0, "size not a multiple of 8");
	in->size = PROFILE_USTACK_MAX + 8;
	cr_assert_eq(block_parse(in, len, &u), 0, "size above perf's maximum");
	in->size = 8192;
	in->abi = 1;	/* 32-bit: never from our sampler */
	cr_assert_eq(block_parse(in, len, &u), 0);

	/* A kernel thread: abi NONE, nothing after the registers. */
	in->abi = PROFILE_UREGS_ABI_NONE;
	cr_assert_eq(block_parse(in, sizeof(*in), &u), sizeof(*in));
	cr_assert(u.present);
	cr_assert_eq(u.abi, PROFILE_UREGS_ABI_NONE);
	cr_assert_eq(u.size, 0);
	free(in);
}

Test(emit, frames_and_block_are_bounded_by_the_record)
{
	size_t head = PROFILE_SAMPLE_SIZE(3);
	size_t len = head + sizeof(struct profile_ustack) + 64;
	struct profile_sample *ps = calloc(1, len);
	struct profile_ustack *in = (struct profile_ustack *)((char *)ps + head);
	size_t off = PROFILE_SAMPLE_SIZE(0);
	struct emit_ustack u;

	cr_assert_not_null(ps);
	in->abi = PROFILE_UREGS_ABI_64;
	in->size = 64;
	in->dyn_size = 64;
	/* No block: the frames alone, whatever follows them. */
	cr_assert_eq(emit_record_parse(ps, len, off, 2, 1, 0, false, &u), head);
	cr_assert_not(u.present);
	cr_assert_eq(emit_record_parse(ps, head - 1, off, 2, 1, 0, false, &u), 0, "frames cut short");
	cr_assert_eq(emit_record_parse(ps, len, off, PROFILE_MAX_STACK + 1, 0, 0, false, &u), 0);
	cr_assert_eq(emit_record_parse(ps, len, off, 0, PROFILE_MAX_STACK + 1, 0, false, &u), 0);
	/* The block right after the frames. */
	cr_assert_eq(emit_record_parse(ps, len, off, 2, 1, 0, true, &u), len);
	cr_assert(u.present);
	cr_assert_eq(u.stack, (const void *)(in + 1));
	cr_assert_eq(u.dyn_size, 64);
	cr_assert_eq(emit_record_parse(ps, len - 1, off, 2, 1, 0, true, &u), 0, "block cut short");
	cr_assert_not(u.present);
	free(ps);
}

/* Enough records to make the description grow its arrays several times. */
#define NR_DESC 40

Test(emit, a_description_is_written_in_order_with_its_names)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1, .sample_id_all = 1,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
	};
	static const uint8_t id[20] = { 1, 2, 3 };
	struct perfdata_writer_opts wo = { .pipe = true };
	struct task_desc d = { 0 };
	struct perfdata_writer *w;
	struct perfdata_reader *r;
	const struct perf_event_header *h;
	int fd = trip_memfd("desc"), n = 0, bids = 0;
	uint64_t one = 1;

	for (uint32_t i = 0; i < NR_DESC; i++) {
		char name[64];
		struct perfdata_mmap m = { .pid = 7, .tid = 7, .start = 0x1000 * (i + 1),
					   .len = 0x1000, .prot = 5, .filename = name };
		struct perfdata_sample_id sid = { .pid = 7, .tid = 7, .time = i };

		snprintf(name, sizeof(name), "comm%u", i);
		if (i % 2)
			cr_assert_eq(task_desc_add_comm(&d, 7, 7, name, i == 1, i, 0), 0);
		else {
			snprintf(name, sizeof(name), "/lib/file-%u.so", i);
			cr_assert_eq(task_desc_add_mmap2(&d, &m, &sid), 0);
		}
	}
	cr_assert_eq(task_desc_add_build_id(&d, id, 20, "/lib/file-0.so"), 0);
	cr_assert_eq(task_desc_add_build_id(&d, id, 21, "too long"), -EINVAL);
	cr_assert_eq(task_desc_error(&d), 0);

	w = trip_writer(fd, &wo, "cpu-clock", &a, &one, 1);
	cr_assert_eq(emit_desc(w, &d), 0);
	trip_finish(w, fd);

	r = trip_reader(fd, "desc");
	while (perfdata_reader_next(r, &h) == 1) {
		char want[64];

		if (h->type == PERF_RECORD_COMM) {
			struct perfdata_comm c;

			cr_assert_eq(perfdata_decode_comm(h, &c), 0);
			snprintf(want, sizeof(want), "comm%d", n);
			cr_assert_str_eq(c.comm, want);
			cr_assert_eq(c.exec, n == 1);
			n++;
		} else if (h->type == PERF_RECORD_MMAP2) {
			struct perfdata_mmap m;

			cr_assert_eq(perfdata_decode_mmap2(h, &m), 0);
			snprintf(want, sizeof(want), "/lib/file-%d.so", n);
			cr_assert_str_eq(m.filename, want);
			cr_assert_eq(m.start, 0x1000ull * (uint64_t)(n + 1));
			n++;
		} else if (h->type == PERFDATA_RECORD_HEADER_BUILD_ID) {
			cr_assert_eq(n, NR_DESC, "the build-id after the records before it");
			bids++;
		}
	}
	cr_assert_eq(n, NR_DESC);
	cr_assert_eq(bids, 1);
	perfdata_reader_free(r);
	/* Reset keeps nothing of the old records. */
	task_desc_reset(&d);
	cr_assert_eq(d.nr, 0);
	cr_assert_eq(d.names.len, 0);
	task_desc_free(&d);
	close(fd);
}

Test(emit, lost_writes_only_what_the_counter_gained)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1, .sample_id_all = 1,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_IDENTIFIER,
	};
	struct perfdata_writer_opts wo = { .pipe = true };
	struct perfdata_writer *w;
	struct perfdata_reader *r;
	const struct perf_event_header *h;
	int fd = trip_memfd("lost"), records = 0;
	uint64_t id = 42, written = 0, sum = 0;

	w = trip_writer(fd, &wo, "cpu-clock", &a, &id, 1);
	cr_assert_eq(emit_lost(w, id, 0, &written, 1), 0);	/* nothing yet */
	cr_assert_eq(emit_lost(w, id, 5, &written, 2), 1);
	cr_assert_eq(written, 5);
	cr_assert_eq(emit_lost(w, id, 5, &written, 3), 0);	/* no change: no record */
	cr_assert_eq(emit_lost(w, id, 12, &written, 4), 1);
	cr_assert_eq(written, 12);
	trip_finish(w, fd);

	r = trip_reader(fd, "lost");
	while (perfdata_reader_next(r, &h) == 1) {
		uint64_t n, got_id;

		if (h->type != PERF_RECORD_LOST_SAMPLES)
			continue;
		records++;
		cr_assert_eq(perfdata_decode_lost(h, &got_id, &n), 0);
		sum += n;
	}
	perfdata_reader_free(r);
	cr_assert_eq(records, 2, "one LOST_SAMPLES per gain, none for no change");
	cr_assert_eq(sum, 12);
}

/* An event whose trailer has every field a task change or a synthesized record sets. */
static struct perf_event_attr trailer_attr(void)
{
	return (struct perf_event_attr){
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1, .sample_id_all = 1,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER,
	};
}

Test(emit, a_task_change_names_both_tasks_and_stamps_its_trailer)
{
	struct perf_event_attr a = trailer_attr();
	struct perfdata_writer_opts wo = { .pipe = true };
	struct emit_task_change c = {
		.pid = 10, .tid = 11, .ppid = 20, .ptid = 21, .cpu = 3, .time = 5000, .id = 42,
	};
	struct perfdata_writer *w;
	struct perfdata_reader *r;
	const struct perf_event_header *h;
	int fd = trip_memfd("task"), n = 0;
	uint64_t id = 42;

	w = trip_writer(fd, &wo, "cpu-clock", &a, &id, 1);
	cr_assert_eq(emit_fork(w, &c), 0);
	c.time = 6000;
	cr_assert_eq(emit_exit(w, &c), 0);
	cr_assert_eq(emit_round_end(w), 0);
	trip_finish(w, fd);

	r = trip_reader(fd, "task");
	while (perfdata_reader_next(r, &h) == 1) {
		struct perfdata_sample_id sid;
		struct perfdata_task t;

		if (h->type == PERFDATA_RECORD_FINISHED_ROUND) {
			cr_assert_eq(n, 2, "the round ends after what was written in it");
			n++;
			continue;
		}
		if (h->type != PERF_RECORD_FORK && h->type != PERF_RECORD_EXIT)
			continue;
		cr_assert_eq(h->type, n == 0 ? PERF_RECORD_FORK : PERF_RECORD_EXIT);
		cr_assert_eq(perfdata_decode_task(h, &t), 0);
		cr_assert_eq(t.pid, 10);
		cr_assert_eq(t.tid, 11);
		cr_assert_eq(t.ppid, 20);
		cr_assert_eq(t.ptid, 21);
		cr_assert_eq(t.time, n == 0 ? 5000 : 6000);
		cr_assert_eq(perfdata_reader_parse_sample_id(r, h, &sid), 0);
		cr_assert_eq(sid.pid, 10);
		cr_assert_eq(sid.tid, 11);
		cr_assert_eq(sid.time, t.time);
		cr_assert_eq(sid.cpu, 3);
		cr_assert_eq(sid.id, 42);
		n++;
	}
	cr_assert_eq(n, 3, "FORK, EXIT, FINISHED_ROUND");
	perfdata_reader_free(r);
	close(fd);
}

Test(emit, what_perf_synthesizes_has_a_zero_trailer)
{
	struct perf_event_attr a = trailer_attr();
	struct perfdata_writer_opts wo = { .pipe = true };
	static const struct perfdata_sample_id zero;
	static const uint8_t bid[20] = { 9, 8, 7 };
	struct perfdata_writer *w;
	struct perfdata_reader *r;
	const struct perf_event_header *h;
	int fd = trip_memfd("synth"), mmaps = 0, ksyms = 0, bids = 0;
	uint64_t id = 42;

	w = trip_writer(fd, &wo, "cpu-clock", &a, &id, 1);
	cr_assert_eq(emit_kernel_mmap(w, 0xffff0000, 0x1000, 0xffff0000, "[kernel.kallsyms]_text"),
		     0);
	cr_assert_eq(emit_kernel_build_id(w, bid, sizeof(bid), "[kernel.kallsyms]"), 0);
	cr_assert_eq(emit_bpf_ksymbol(w, 0xffffa000, 64, "bpf_prog_1234_on_cpu"), 0);
	trip_finish(w, fd);

	r = trip_reader(fd, "synth");
	while (perfdata_reader_next(r, &h) == 1) {
		struct perfdata_sample_id sid;

		if (h->type == PERF_RECORD_MMAP) {
			struct perfdata_mmap m;

			cr_assert_eq(perfdata_decode_mmap(h, &m), 0);
			cr_assert_eq(h->misc & PERF_RECORD_MISC_CPUMODE_MASK, PERF_RECORD_MISC_KERNEL);
			cr_assert_eq(m.pid, UINT32_MAX, "the kernel is pid -1");
			cr_assert_eq(m.tid, 0);
			cr_assert_eq(m.start, 0xffff0000);
			cr_assert_eq(m.len, 0x1000);
			cr_assert_eq(m.pgoff, 0xffff0000);
			cr_assert_str_eq(m.filename, "[kernel.kallsyms]_text");
			mmaps++;
		} else if (h->type == PERF_RECORD_KSYMBOL) {
			struct perfdata_ksymbol k;

			cr_assert_eq(perfdata_decode_ksymbol(h, &k), 0);
			cr_assert_eq(k.addr, 0xffffa000);
			cr_assert_eq(k.len, 64);
			cr_assert_eq(k.ksym_type, PERF_RECORD_KSYMBOL_TYPE_BPF);
			cr_assert_eq(k.flags, 0);
			cr_assert_str_eq(k.name, "bpf_prog_1234_on_cpu");
			ksyms++;
		} else if (h->type == PERFDATA_RECORD_HEADER_BUILD_ID) {
			struct perfdata_build_id b;
			size_t name_len;

			cr_assert_eq(perfdata_decode_build_id(h, h->size, &b, &name_len), 0);
			cr_assert_eq(b.cpumode, PERF_RECORD_MISC_KERNEL);
			cr_assert_eq(b.size, sizeof(bid));
			cr_assert_arr_eq(b.id, bid, sizeof(bid));
			cr_assert_eq(name_len, strlen("[kernel.kallsyms]"));
			cr_assert_arr_eq(b.filename, "[kernel.kallsyms]", name_len);
			bids++;
			continue;
		} else {
			continue;
		}
		cr_assert_eq(perfdata_reader_parse_sample_id(r, h, &sid), 0);
		cr_assert_arr_eq(&sid, &zero, sizeof(sid), "perf zeroes what it synthesizes");
	}
	cr_assert_eq(mmaps, 1);
	cr_assert_eq(ksyms, 1);
	cr_assert_eq(bids, 1);
	perfdata_reader_free(r);
	close(fd);
}
