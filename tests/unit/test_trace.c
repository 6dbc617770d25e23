// SPDX-License-Identifier: MIT
/*
 * Unit tests for perfdata/trace.c: a tracing-data container built by
 * hand, as perf writes it, with tracefs-style format files; fields are
 * read back from hand-made RAW records.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "perfdata/trace.h"

static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";

/* The fields every tracepoint format starts with, as tracefs prints them. */
#define COMMON_FIELDS \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n" \
	"\n"

static const char sched_switch[] =
	"name: sched_switch\n"
	"ID: 316\n"
	"format:\n"
	COMMON_FIELDS
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_comm=%s prev_pid=%d next_comm=%s\", REC->prev_comm, REC->prev_pid, "
	"REC->next_comm\n";

static const char process_exec[] =
	"name: sched_process_exec\n"
	"ID: 320\n"
	"format:\n"
	COMMON_FIELDS
	"\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"filename=%s pid=%d\", __get_str(filename), REC->pid\n";

struct blob {
	uint8_t data[16384];
	size_t len;
};

static void put(struct blob *b, const void *p, size_t n)
{
	cr_assert_lt(b->len + n, sizeof(b->data));
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void put32(struct blob *b, uint32_t v)
{
	put(b, &v, 4);
}

static void put64(struct blob *b, uint64_t v)
{
	put(b, &v, 8);
}

static void put_file(struct blob *b, const char *text)
{
	put64(b, strlen(text));
	put(b, text, strlen(text));
}

static void make_blob(struct blob *b)
{
	static const uint8_t magic[] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	uint8_t endian_long[2] = { 0, 8 };

	b->len = 0;
	put(b, magic, sizeof(magic));
	put(b, "0.6", 4);
	put(b, endian_long, 2);
	put32(b, 4096);
	put(b, "header_page", 12);
	put_file(b, header_page);
	put(b, "header_event", 13);
	put_file(b, "# compressed entry header\n");
	put32(b, 0);		/* no ftrace formats */
	put32(b, 1);		/* one system */
	put(b, "sched", 6);
	put32(b, 2);
	put_file(b, sched_switch);
	put_file(b, process_exec);
	put32(b, 0);		/* kallsyms */
	put32(b, 0);		/* printk */
	put64(b, 0);		/* cmdlines */
}

Test(trace, fields_of_a_fixed_layout_event)
{
	struct blob b;
	struct perfdata_trace *t;
	struct perfdata_trace_value v;
	char err[128] = "", name[64];
	uint8_t raw[64] = { 0 };
	int32_t pid = -5;
	int64_t state = 2;

	make_blob(&b);
	cr_assert_eq(perfdata_trace_new(b.data, b.len, &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(perfdata_trace_event_name(t, 316, name, sizeof(name)), "sched:sched_switch");
	cr_assert(perfdata_trace_has_field(t, 316, "prev_comm"));
	cr_assert(!perfdata_trace_has_field(t, 316, "nope"));
	cr_assert(!perfdata_trace_has_field(t, 999, "prev_comm"));

	raw[0] = 316 & 0xff;
	raw[1] = 316 >> 8;
	memcpy(raw + 8, "worker\0junk", 11);
	memcpy(raw + 24, &pid, 4);
	memcpy(raw + 32, &state, 8);
	memcpy(raw + 40, "0123456789abcdefXX", 16);	/* a full 16-byte comm, no NUL */
	raw[56] = 42;

	cr_assert_eq(perfdata_trace_field(t, 316, "prev_comm", raw, sizeof(raw), &v), 0);
	cr_assert(v.is_str);
	cr_assert_str_eq(v.str, "worker");
	cr_assert_eq(perfdata_trace_field(t, 316, "next_comm", raw, sizeof(raw), &v), 0);
	cr_assert_str_eq(v.str, "0123456789abcdef", "stops at the array's end");
	cr_assert_eq(perfdata_trace_field(t, 316, "prev_pid", raw, sizeof(raw), &v), 0);
	cr_assert(!v.is_str);
	cr_assert_eq(v.num, -5, "signed fields are sign-extended");
	cr_assert_eq(perfdata_trace_field(t, 316, "prev_state", raw, sizeof(raw), &v), 0);
	cr_assert_eq(v.num, 2);
	cr_assert_eq(perfdata_trace_field(t, 316, "next_pid", raw, sizeof(raw), &v), 0);
	cr_assert_eq(v.num, 42);
	cr_assert_eq(perfdata_trace_field(t, 316, "common_type", raw, sizeof(raw), &v), 0);
	cr_assert_eq(v.num, 316, "common fields are found too");
	cr_assert_eq(perfdata_trace_field(t, 316, "nope", raw, sizeof(raw), &v), -ENOENT);
	cr_assert_eq(perfdata_trace_field(t, 999, "prev_pid", raw, sizeof(raw), &v), -ENOENT);
	cr_assert_eq(perfdata_trace_field(t, 316, "next_prio", raw, 60, &v), -EINVAL,
		     "a field past the end of RAW");
	perfdata_trace_free(t);
}

Test(trace, data_loc_strings)
{
	struct blob b;
	struct perfdata_trace *t;
	struct perfdata_trace_value v;
	char err[128] = "";
	uint8_t raw[48] = { 0 };
	uint32_t loc = (12u << 16) | 20;	/* 12 bytes at offset 20 */
	int32_t pid = 1234;

	make_blob(&b);
	cr_assert_eq(perfdata_trace_new(b.data, b.len, &t, err, sizeof(err)), 0, "%s", err);
	memcpy(raw + 8, &loc, 4);
	memcpy(raw + 12, &pid, 4);
	memcpy(raw + 20, "/usr/bin/ls", 12);
	cr_assert_eq(perfdata_trace_field(t, 320, "filename", raw, sizeof(raw), &v), 0);
	cr_assert(v.is_str);
	cr_assert_str_eq(v.str, "/usr/bin/ls");
	cr_assert_eq(perfdata_trace_field(t, 320, "pid", raw, sizeof(raw), &v), 0);
	cr_assert_eq(v.num, 1234);
	cr_assert_eq(perfdata_trace_field(t, 320, "filename", raw, 30, &v), -EINVAL,
		     "string data past the end of RAW");
	perfdata_trace_free(t);
}

Test(trace, bad_containers_are_rejected)
{
	struct blob b;
	struct perfdata_trace *t = NULL;
	char err[128];

	make_blob(&b);
	for (size_t cut = 0; cut < 200; cut += 7) {
		err[0] = 0;
		cr_assert_neq(perfdata_trace_new(b.data, cut, &t, err, sizeof(err)), 0, "cut at %zu", cut);
		cr_assert_neq(err[0], 0, "an error says why");
	}
	b.data[3] = 'X';
	cr_assert_eq(perfdata_trace_new(b.data, b.len, &t, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "no tracing data magic");
}
