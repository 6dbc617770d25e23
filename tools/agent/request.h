/* SPDX-License-Identifier: MIT */
/*
 * request.h - one push request body being built, for Pyroscope or Parca.
 *
 * A request holds series; a series is a set of labels and one gzipped pprof
 * profile (its "raw_profile"). The profile's bytes are streamed in with
 * push_request_write() as the converter produces them and land straight in
 * the body: the length prefixes in front of them are reserved at
 * push_request_begin_series() and patched at push_request_end_series(),
 * which moves the profile once (memmove) to close the reserved gap. There is
 * never a second copy of a profile.
 *
 * The bodies, by the field numbers of the upstream schemas:
 *
 * Pyroscope (grafana/pyroscope api/push/v1/push.proto, types/v1/types.proto),
 * Connect unary POST /push.v1.PusherService/Push, application/proto:
 *   PushRequest      { repeated RawProfileSeries series = 1; }
 *   RawProfileSeries { repeated LabelPair labels = 1; repeated RawSample samples = 2; }
 *   LabelPair        { string name = 1; string value = 2; }
 *   RawSample        { bytes raw_profile = 1; string ID = 2; }
 * Each series has one sample, whose ID is a random UUID (version 4) string.
 *
 * Parca (parca-dev/parca proto/parca/profilestore/v1alpha1/profilestore.proto),
 * gRPC-Web POST /parca.profilestore.v1alpha1.ProfileStoreService/WriteRaw,
 * application/grpc-web+proto, the message behind a 5-byte frame prefix
 * (flags 0x00, then the length as 4 bytes big-endian):
 *   WriteRawRequest  { string tenant = 1 (deprecated, unset);
 *                      repeated RawProfileSeries series = 2; bool normalized = 3; }
 *   RawProfileSeries { LabelSet labels = 1; repeated RawSample samples = 2; }
 *   LabelSet         { repeated Label labels = 1; }
 *   Label            { string name = 1; string value = 2; }
 *   RawSample        { bytes raw_profile = 1; ExecutableInfo executable_info = 2 (unset); }
 * normalized stays false (unset): bpfrec's pprof holds the sampled virtual
 * addresses with their mappings, and the server normalizes them itself.
 *
 * Fields are written in the order the encoder finds convenient (a sample's
 * ID before its raw_profile): protobuf decoders take fields in any order.
 *
 * Errors: 0 or -errno. -ENOMEM leaves the request as it was before the
 * failing call's series began once push_request_abort_series() is called;
 * -EINVAL for calls out of order (a write outside a series, finish inside
 * one) or bad labels (empty or repeated names).
 */
#ifndef TOOLS_AGENT_REQUEST_H
#define TOOLS_AGENT_REQUEST_H

#include <stddef.h>

enum agent_api { AGENT_API_PYROSCOPE = 0, AGENT_API_PARCA = 1 };

struct agent_label {
	const char *name;
	const char *value;
};

struct push_request;

int push_request_new(enum agent_api api, struct push_request **req);

/* Open a series with these labels (copied). Only one series is open at a time. */
int push_request_begin_series(struct push_request *req, const struct agent_label *labels,
			      size_t n);
/* Append to the open series' raw_profile; a bpfrec_write_fn (req is the ctx). */
int push_request_write(void *req, const void *buf, size_t len);
/* Close the open series: patch its length prefixes. */
int push_request_end_series(struct push_request *req);
/* Drop the open series, half-written or not; nothing of it stays in the body. */
int push_request_abort_series(struct push_request *req);

/* Finished series. */
size_t push_request_nr_series(const struct push_request *req);
/* Body bytes so far, the open series included. */
size_t push_request_size(const struct push_request *req);

/*
 * The finished body, as sent (for Parca with its gRPC-Web frame prefix).
 * *body stays valid until the request is changed or freed. -EINVAL while a
 * series is open; -E2BIG for a Parca message over 4 GiB (its frame length).
 */
int push_request_finish(struct push_request *req, const void **body, size_t *len);

/*
 * For a 413: two new requests with the finished series of req, in order,
 * split where each gets about half of the bytes (each at least one series).
 * -E2BIG when req has fewer than two series; -EINVAL while one is open.
 */
int push_request_split(const struct push_request *req, struct push_request **a,
		       struct push_request **b);

void push_request_free(struct push_request *req);

/* The URL path appended to the server URL, starting with '/'. */
const char *agent_api_path(enum agent_api api);
const char *agent_api_content_type(enum agent_api api);
/* "pyroscope" or "parca". */
const char *agent_api_name(enum agent_api api);

#endif /* TOOLS_AGENT_REQUEST_H */
