// SPDX-License-Identifier: MIT
/*
 * test_agent.c - bpfrec/agent.h's contract where it needs no BPF:
 * bpfrec_agent_new() refuses what it cannot do (no server, a URL that is
 * not http, bad labels, recording options that are the agent's own, a
 * window or request limit too small) with -EINVAL and one line saying
 * why; options structs of other sizes (older: defaults for what they lack;
 * newer: accepted only with zeros past what this library knows, for the
 * agent's options and the recording's it points to); statistics before
 * run() are zero and fill only what the caller's struct holds; NULL
 * handles are safe.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <bpfrec/agent.h>

static enum bpfrec_agent_outcome send_nothing(void *ctx, const struct bpfrec_agent_request *req,
					      char *msg, size_t msglen)
{
	(void)ctx, (void)req, (void)msg, (void)msglen;
	return BPFREC_AGENT_PUSHED;
}

static void on_switch_nothing(void *ctx, const char *path)
{
	(void)ctx, (void)path;
}

/*
 * new(o): its result; a refusal must say so in one line naming what, a
 * success must leave "no error".
 */
static int try_new(const struct bpfrec_agent_opts *o, const char *want_words)
{
	struct bpfrec_agent *a = NULL;
	int err = bpfrec_agent_new(o, &a);
	const char *msg;

	cr_assert_not_null(a, "new() returned %d without a handle", err);
	msg = bpfrec_agent_error(a);
	if (err) {
		cr_assert(msg[0] && !strchr(msg, '\n'), "error not one line: '%s'", msg);
		if (want_words)
			cr_assert(strstr(msg, want_words), "error '%s' does not say '%s'", msg,
				  want_words);
	} else {
		cr_assert_str_eq(msg, "no error");
	}
	bpfrec_agent_free(a);
	return err;
}

/* ---- what new() refuses ---- */

Test(agent_new, a_server_or_send_is_needed)
{
	BPFREC_OPTS(bpfrec_agent_opts, o);

	cr_assert_eq(try_new(&o, "server"), -EINVAL);
	o.server_url = "";
	cr_assert_eq(try_new(&o, "server"), -EINVAL);
	cr_assert_eq(try_new(NULL, "server"), -EINVAL);
	o.server_url = NULL;
	o.send = send_nothing;
	cr_assert_eq(try_new(&o, NULL), 0);
	o.send = NULL;
	o.server_url = "http://127.0.0.1:4040";
	cr_assert_eq(try_new(&o, NULL), 0);
	o.server_url = "https://pyroscope.example/prefix";
	cr_assert_eq(try_new(&o, NULL), 0);
}

Test(agent_new, only_http_urls)
{
	static const char *const bad[] = {
		"127.0.0.1:4040", "ftp://host/", "grpc://host:7070", "HTTP:/host", "http:/host",
		"file:///tmp/x",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		BPFREC_OPTS(bpfrec_agent_opts, o, .server_url = bad[i]);

		cr_assert_eq(try_new(&o, bad[i]), -EINVAL, "'%s' accepted", bad[i]);
	}
}

Test(agent_new, unknown_api)
{
	BPFREC_OPTS(bpfrec_agent_opts, o, .server_url = "http://h:1",
		    .api = (enum bpfrec_agent_api)7);

	cr_assert_eq(try_new(&o, "API"), -EINVAL);
	o.api = BPFREC_AGENT_PARCA;
	cr_assert_eq(try_new(&o, NULL), 0);
}

Test(agent_new, labels_are_key_equals_value)
{
	static const struct {
		const char *label, *words;
	} bad[] = {
		{ "env", "env" },			/* no '=' */
		{ "=prod", "=prod" },			/* empty key */
		{ "1env=prod", "digit" },		/* starts with a digit */
		{ "e nv=prod", "e nv=prod" },		/* bad characters */
		{ "env-x=prod", "env-x=prod" },
		{ "en\"v=prod", "en\"v=prod" },
		{ "__name__=x", "reserved" },		/* the servers' own */
		{ "__delta__=true", "reserved" },
	};
	static const char *const good[] = {
		"env=prod", "_x=1", "a.b=", "service_name=db", "hostname=h1", "k=v=w", "Z9_.=x y",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *labels[] = { "ok=1", bad[i].label };
		BPFREC_OPTS(bpfrec_agent_opts, o, .server_url = "http://h:1", .labels = labels,
			    .nr_labels = 2);

		cr_assert_eq(try_new(&o, bad[i].words), -EINVAL, "'%s' accepted", bad[i].label);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		BPFREC_OPTS(bpfrec_agent_opts, o, .server_url = "http://h:1", .labels = &good[i],
			    .nr_labels = 1);

		cr_assert_eq(try_new(&o, NULL), 0, "'%s' refused", good[i]);
	}
}

/* A name twice would make the server refuse every request (repeated label). */
Test(agent_new, a_label_name_once)
{
	const char *labels[] = { "env=prod", "dc=eu", "env=test" };
	BPFREC_OPTS(bpfrec_agent_opts, o, .server_url = "http://h:1", .labels = labels,
		    .nr_labels = 3);

	cr_assert_eq(try_new(&o, "twice"), -EINVAL);
	o.nr_labels = 2;
	cr_assert_eq(try_new(&o, NULL), 0);
}

Test(agent_new, the_output_and_switch_options_are_the_agents)
{
	static int fd = 3;
	struct {
		const char *what;
		struct bpfrec_record_opts r;
	} cases[] = {
		{ "output_path", { .output_path = "x.data" } },
		{ "output fd", { .output = BPFREC_OUTPUT_FD, .output_fd = fd } },
		{ "switch_output", { .switch_output = BPFREC_SWITCH_MANUAL } },
		{ "switch_ns", { .switch_ns = 1000000000 } },
		{ "on_switch", { .on_switch = on_switch_nothing } },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		BPFREC_OPTS(bpfrec_agent_opts, o, .server_url = "http://h:1", .record = &cases[i].r);

		cases[i].r.sz = sizeof(cases[i].r);
		cases[i].r.system_wide = true;
		cr_assert_eq(try_new(&o, "agent's own"), -EINVAL, "%s accepted", cases[i].what);
	}
	{
		BPFREC_OPTS(bpfrec_record_opts, r, .system_wide = true, .freq = 99,
			    .callgraph = BPFREC_CALLGRAPH_CFI, .off_cpu = true);
		BPFREC_OPTS(bpfrec_agent_opts, o, .server_url = "http://h:1", .record = &r);

		cr_assert_eq(try_new(&o, NULL), 0);
	}
}

Test(agent_new, windows_from_100ms_requests_from_4k)
{
	/* window_ns, max_request_bytes (0: the default), what new() says */
	static const struct {
		uint64_t window_ns, max_request_bytes;
		int err;
		const char *words;
	} cases[] = {
		{ 99999999, 0, -EINVAL, "100 ms" },
		{ 1, 0, -EINVAL, "100 ms" },
		{ 100000000, 0, 0, NULL },
		{ 0, 4095, -EINVAL, "4K" },
		{ 0, 1, -EINVAL, "4K" },
		{ 0, 4096, 0, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		BPFREC_OPTS(bpfrec_agent_opts, o, .server_url = "http://h:1");

		o.window_ns = cases[i].window_ns;
		o.max_request_bytes = cases[i].max_request_bytes;
		cr_assert_eq(try_new(&o, cases[i].words), cases[i].err,
			     "window %lu ns, requests of %lu bytes", (unsigned long)cases[i].window_ns,
			     (unsigned long)cases[i].max_request_bytes);
	}
}

/* ---- options structs of other sizes ---- */

/* A caller built against a newer header: a field after ours. */
struct newer_agent_opts {
	struct bpfrec_agent_opts known;
	uint64_t future_field;
};

Test(agent_opts, a_newer_caller_is_accepted_only_with_zero_unknown_fields)
{
	struct newer_agent_opts o = { .known = { .sz = sizeof(o), .server_url = "http://h:1" } };

	cr_assert_eq(try_new(&o.known, NULL), 0);
	o.future_field = 1;
	cr_assert_eq(try_new(&o.known, "does not know"), -EINVAL);
	o.future_field = 0;
	/* The first byte past the last field this library knows, in its trailing padding too. */
	((unsigned char *)&o)[offsetof(struct bpfrec_agent_opts, bpfrec_agent_opts__last_field) +
			      sizeof(o.known.bpfrec_agent_opts__last_field)] = 1;
	cr_assert_eq(try_new(&o.known, "does not know"), -EINVAL);
}

/* The recording's options from a newer caller: the same rule, through the agent. */
struct newer_record_opts {
	struct bpfrec_record_opts known;
	uint64_t future_field;
};

Test(agent_opts, newer_recording_options_the_same)
{
	struct newer_record_opts r = { .known = { .sz = sizeof(r), .system_wide = true } };
	BPFREC_OPTS(bpfrec_agent_opts, o, .server_url = "http://h:1", .record = &r.known);

	cr_assert_eq(try_new(&o, NULL), 0);
	r.future_field = 1;
	cr_assert_eq(try_new(&o, "does not know"), -EINVAL);
}

/*
 * An older caller's struct ends early: what it lacks is defaulted, and its
 * memory past sz (here garbage that would fail every check) is not read.
 */
Test(agent_opts, an_older_caller_gets_defaults_for_what_it_lacks)
{
	const char *bad_label[] = { "no equals sign" };
	BPFREC_OPTS(bpfrec_agent_opts, o, .server_url = "http://h:1", .window_ns = 1,
		    .labels = bad_label, .nr_labels = 1, .max_request_bytes = 1);

	o.sz = offsetof(struct bpfrec_agent_opts, window_ns);
	cr_assert_eq(try_new(&o, NULL), 0);
	o.sz = offsetof(struct bpfrec_agent_opts, max_request_bytes);
	cr_assert_eq(try_new(&o, "100 ms"), -EINVAL);
	o.sz = sizeof(size_t);
	cr_assert_eq(try_new(&o, "server"), -EINVAL);
	o.sz = sizeof(size_t) - 1;
	cr_assert_eq(try_new(&o, NULL), -EINVAL);
}

Test(agent_opts, older_recording_options_are_not_read_past_their_sz)
{
	BPFREC_OPTS(bpfrec_record_opts, r, .system_wide = true, .output_path = "garbage",
		    .on_switch = on_switch_nothing);
	BPFREC_OPTS(bpfrec_agent_opts, o, .server_url = "http://h:1", .record = &r);

	cr_assert_eq(try_new(&o, "agent's own"), -EINVAL);
	/* Everything up to (not including) the output fields: those are garbage here. */
	r.sz = offsetof(struct bpfrec_record_opts, output);
	cr_assert_eq(try_new(&o, NULL), 0);
}

/* ---- statistics and NULL ---- */

Test(agent_stats, zero_before_run_and_only_what_the_caller_has)
{
	BPFREC_OPTS(bpfrec_agent_opts, o, .send = send_nothing);
	struct bpfrec_agent_stats st;
	struct bpfrec_agent *a = NULL;
	const unsigned char *p = (const unsigned char *)&st;

	cr_assert_eq(bpfrec_agent_new(&o, &a), 0, "%s", bpfrec_agent_error(a));
	memset(&st, 0xab, sizeof(st));
	st.sz = sizeof(st);
	cr_assert_eq(bpfrec_agent_get_stats(a, &st), 0);
	cr_assert_eq(st.sz, sizeof(st));
	for (size_t i = sizeof(st.sz); i < sizeof(st); i++)
		cr_assert_eq(p[i], 0, "byte %zu of the stats is %#x before run()", i, p[i]);

	memset(&st, 0xab, sizeof(st));
	st.sz = offsetof(struct bpfrec_agent_stats, requests);
	cr_assert_eq(bpfrec_agent_get_stats(a, &st), 0);
	cr_assert_eq(st.sz, offsetof(struct bpfrec_agent_stats, requests), "sz changed");
	cr_assert_eq(st.windows, 0);
	cr_assert_eq(st.samples, 0);
	for (size_t i = offsetof(struct bpfrec_agent_stats, requests); i < sizeof(st); i++)
		cr_assert_eq(p[i], 0xab, "wrote byte %zu, past the caller's sz", i);

	st.sz = sizeof(size_t) - 1;
	cr_assert_eq(bpfrec_agent_get_stats(a, &st), -EINVAL);
	st.sz = sizeof(st);
	cr_assert_eq(bpfrec_agent_get_stats(NULL, &st), -EINVAL);
	cr_assert_eq(bpfrec_agent_get_stats(a, NULL), -EINVAL);
	bpfrec_agent_free(a);
}

/* A larger (newer) stats struct: ours, then zeros. */
Test(agent_stats, a_newer_callers_struct_gets_zeros_beyond)
{
	struct {
		struct bpfrec_agent_stats known;
		uint64_t future[2];
	} st;
	BPFREC_OPTS(bpfrec_agent_opts, o, .send = send_nothing);
	struct bpfrec_agent *a = NULL;

	cr_assert_eq(bpfrec_agent_new(&o, &a), 0, "%s", bpfrec_agent_error(a));
	memset(&st, 0xab, sizeof(st));
	st.known.sz = sizeof(st);
	cr_assert_eq(bpfrec_agent_get_stats(a, &st.known), 0);
	cr_assert_eq(st.known.sz, sizeof(st));
	cr_assert_eq(st.future[0], 0);
	cr_assert_eq(st.future[1], 0);
	bpfrec_agent_free(a);
}

Test(agent_null, free_stop_and_error_take_null)
{
	bpfrec_agent_free(NULL);
	bpfrec_agent_stop(NULL);
	cr_assert_str_eq(bpfrec_agent_error(NULL), "no error");
	cr_assert_eq(bpfrec_agent_failure_code(NULL), 1);
	cr_assert_eq(bpfrec_agent_run(NULL), -EINVAL);
}

/* stop() on a handle that never ran (an eventfd nobody reads yet), twice, then free. */
Test(agent_null, stop_on_a_new_handle_is_safe)
{
	BPFREC_OPTS(bpfrec_agent_opts, o, .send = send_nothing);
	struct bpfrec_agent *a = NULL;

	cr_assert_eq(bpfrec_agent_new(&o, &a), 0, "%s", bpfrec_agent_error(a));
	bpfrec_agent_stop(a);
	bpfrec_agent_stop(a);
	bpfrec_agent_free(a);
}
