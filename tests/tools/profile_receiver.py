#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A loopback stand-in for Pyroscope and Parca, for bpfrec agent's tests.

    profile_receiver.py OUTDIR

Listens on 127.0.0.1 (a free port) and prints that port on its first
stdout line, the control port on the second. It takes both push APIs:

  POST /push.v1.PusherService/Push          (Pyroscope, Connect, application/proto)
  POST /parca.profilestore.v1alpha1.ProfileStoreService/WriteRaw
                                            (Parca, gRPC-Web, application/grpc-web+proto)

decodes each body by the upstream field numbers (below), gunzips every
raw_profile, and for each series writes the raw_profile (still gzipped, as
received) to OUTDIR/NNNN-<label values>.pb.gz and one JSON line to
OUTDIR/requests.jsonl:
  {"api": ..., "request": R, "n": NNNN, "labels": {...}, "bytes": <gunzipped size>,
   "gz_bytes": ..., "file": ..., "id": <Pyroscope sample ID>}
It answers as the real servers do: Pyroscope 200 with an empty PushResponse,
or a status with a Connect JSON error {"code", "message"}; Parca HTTP 200 with
the status in a gRPC-Web trailer frame (grpc-status, grpc-message).

Fault modes, switched at run time by POST /__control (on the control port,
or on the main port while it is up) with the mode as the body (plain text, or
JSON {"mode": "..."}):
  ok            answer normally
  down          stop listening and drop open connections (reopened on any other mode)
  status:N      answer HTTP N to every push (429 with Retry-After: 1)
  grpc:N        Parca: HTTP 200 with grpc-status N in the trailer (Pyroscope: the Connect code)
  hang          accept and read the request, never answer (until the mode changes)
  max-body:N    like ok, but 413 for a body over N bytes
GET /__stats on the control port: counts so far, as JSON.

Field numbers (write side in tools/agent/request.h):
  Pyroscope api/push/v1/push.proto, types/v1/types.proto:
    PushRequest{series=1} RawProfileSeries{labels=1, samples=2}
    LabelPair{name=1, value=2} RawSample{raw_profile=1, ID=2}
  Parca proto/parca/profilestore/v1alpha1/profilestore.proto (after the 5-byte frame):
    WriteRawRequest{tenant=1, series=2, normalized=3} RawProfileSeries{labels=1 (LabelSet), samples=2}
    LabelSet{labels=1} Label{name=1, value=2} RawSample{raw_profile=1, executable_info=2}
"""
import gzip
import http.server
import json
import os
import re
import socket
import socketserver
import struct
import sys
import threading

PYROSCOPE_PATH = "/push.v1.PusherService/Push"
PARCA_PATH = "/parca.profilestore.v1alpha1.ProfileStoreService/WriteRaw"
GRPC_CODES = ["ok", "canceled", "unknown", "invalid_argument", "deadline_exceeded", "not_found",
              "already_exists", "permission_denied", "resource_exhausted", "failed_precondition",
              "aborted", "out_of_range", "unimplemented", "internal", "unavailable", "data_loss",
              "unauthenticated"]
HTTP_TO_CODE = {400: "invalid_argument", 401: "unauthenticated", 403: "permission_denied",
                404: "not_found", 413: "resource_exhausted", 429: "resource_exhausted",
                500: "internal", 503: "unavailable", 504: "deadline_exceeded"}


class BadRequest(Exception):
    pass


# --- protobuf, by field number -------------------------------------------------------------
def varint(buf, i):
    v = shift = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise BadRequest("truncated varint")
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, i


def fields(buf):
    """Yield (number, value) of a message: int for varints, bytes for LEN fields."""
    i = 0
    while i < len(buf):
        tag, i = varint(buf, i)
        num, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = varint(buf, i)
        elif wt == 2:
            n, i = varint(buf, i)
            if i + n > len(buf):
                raise BadRequest("field %d overruns its message" % num)
            v, i = bytes(buf[i:i + n]), i + n
        elif wt in (1, 5):
            n = 8 if wt == 1 else 4
            v, i = bytes(buf[i:i + n]), i + n
        else:
            raise BadRequest("wire type %d" % wt)
        yield num, v


def label(buf):
    d = dict(fields(buf))
    return d.get(1, b"").decode(), d.get(2, b"").decode()


def decode(api, body):
    """[(labels dict, [(raw_profile, id)])] of a request body."""
    series_field = 2 if api == "parca" else 1
    out = []
    for num, v in fields(body):
        if num != series_field:
            continue
        labels, samples = {}, []
        for snum, sv in fields(v):
            if snum == 1 and api == "parca":
                pairs = [label(lv) for lnum, lv in fields(sv) if lnum == 1]
            elif snum == 1:
                pairs = [label(sv)]
            elif snum == 2:
                d = dict(fields(sv))
                samples.append((d.get(1, b""), d.get(2, b"").decode() if api != "parca" else ""))
                continue
            else:
                continue
            for k, val in pairs:
                if not k or k in labels:
                    raise BadRequest("empty or repeated label name %r" % k)
                labels[k] = val
        out.append((labels, samples))
    return out


# --- the server ----------------------------------------------------------------------------
class State:
    def __init__(self, outdir):
        self.outdir = outdir
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.mode = "ok"
        self.requests = self.series = self.rejected = self.faulted = 0
        self.conns = set()
        self.server = None
        self.port = 0


def serve(state):
    state.server = Server(("127.0.0.1", state.port), Handler)
    state.server.state = state
    state.port = state.server.server_address[1]
    threading.Thread(target=state.server.serve_forever, daemon=True).start()


def set_mode(state, mode):
    with state.lock:
        old, state.mode = state.mode, mode
        state.changed.notify_all()
        conns = list(state.conns) if mode == "down" else []
    if mode == "down" and old != "down":
        state.server.shutdown()
        state.server.server_close()
        for c in conns:  # kept-alive connections too: "down" means unreachable
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
    elif old == "down" and mode != "down":
        serve(state)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the agent's libcurl handle expects

    def log_message(self, fmt, *args):
        pass

    def setup(self):
        super().setup()
        with self.server.state.lock:
            if self.server is self.server.state.server:  # not the control port's
                self.server.state.conns.add(self.connection)

    def finish(self):
        with self.server.state.lock:
            self.server.state.conns.discard(self.connection)
        super().finish()

    def answer(self, status, body=b"", ctype="text/plain", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def grpc_web(self, code, message=""):
        msg = re.sub(r"[^ -~]|%", lambda m: "%%%02X" % ord(m.group()), message)
        trailer = ("grpc-status:%d\r\ngrpc-message:%s\r\n" % (code, msg)).encode()
        frames = b"\x00\x00\x00\x00\x00" if code == 0 else b""
        frames += b"\x80" + struct.pack(">I", len(trailer)) + trailer
        self.answer(200, frames, "application/grpc-web+proto")

    def error(self, api, status, code, message, headers=()):
        """An error as the API's server says it."""
        if api == "parca" and status == 200:
            self.grpc_web(GRPC_CODES.index(code), message)
        elif api == "parca":
            self.answer(status, message.encode() + b"\n", headers=headers)
        else:
            js = json.dumps({"code": code, "message": message}).encode()
            self.answer(status, js, "application/json", headers)

    def do_GET(self):
        st = self.server.state
        if self.path == "/__stats":
            with st.lock:
                js = json.dumps({"mode": st.mode, "requests": st.requests, "series": st.series,
                                 "rejected": st.rejected, "faulted": st.faulted}).encode()
            return self.answer(200, js, "application/json")
        self.answer(404, b"404 page not found\n")

    def do_POST(self):
        st = self.server.state
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path == "/__control":
            text = body.decode().strip()
            mode = json.loads(text)["mode"] if text.startswith("{") else text
            if not re.fullmatch(r"ok|down|hang|(status|grpc|max-body):\d+", mode):
                return self.answer(400, b"unknown mode\n")
            if self.server is st.server:  # it cannot shut itself down from inside: later
                self.answer(200, b"ok\n")
                threading.Thread(target=set_mode, args=(st, mode)).start()
            else:  # the control port: in force when answered
                set_mode(st, mode)
                self.answer(200, b"ok\n")
            return
        api = {PYROSCOPE_PATH: "pyroscope", PARCA_PATH: "parca"}.get(self.path)
        if not api:
            return self.answer(404, b"404 page not found\n")
        with st.lock:
            mode = st.mode
        if mode == "hang":
            with st.lock:
                st.faulted += 1
                while st.mode == "hang":
                    st.changed.wait()
            self.close_connection = True
            return
        if mode.startswith("status:"):
            n = int(mode[7:])
            with st.lock:
                st.faulted += 1
            hdrs = [("Retry-After", "1")] if n == 429 else []
            return self.error(api, n, HTTP_TO_CODE.get(n, "unknown"), "fault mode " + mode, hdrs)
        if mode.startswith("grpc:"):
            n = int(mode[5:])
            with st.lock:
                st.faulted += 1
            if api == "parca":
                return self.grpc_web(n, "fault mode " + mode)
            return self.error(api, 503 if n == 14 else 429 if n == 8 else 400, GRPC_CODES[n],
                              "fault mode " + mode)
        if mode.startswith("max-body:") and len(body) > int(mode[9:]):
            with st.lock:
                st.faulted += 1
            return self.answer(413, b"request body too large\n")
        want = "application/grpc-web+proto" if api == "parca" else "application/proto"
        if self.headers.get("Content-Type", "") != want:
            return self.answer(415, b"unsupported content type\n")
        try:
            self.store(api, body)
        except (BadRequest, OSError, EOFError, UnicodeDecodeError) as e:
            with st.lock:
                st.rejected += 1
            return self.error(api, 200 if api == "parca" else 400, "invalid_argument", str(e))
        if api == "parca":
            self.grpc_web(0)
        else:
            self.answer(200, b"", "application/proto")

    def store(self, api, body):
        st = self.server.state
        if api == "parca":
            if len(body) < 5 or body[0] != 0 or struct.unpack(">I", body[1:5])[0] != len(body) - 5:
                raise BadRequest("bad gRPC-Web frame")
            body = body[5:]
        series = decode(api, body)
        unzipped = [[gzip.decompress(raw) for raw, _ in s] for _, s in series]
        with st.lock:
            st.requests += 1
            req = st.requests
            with open(os.path.join(st.outdir, "requests.jsonl"), "a") as log:
                for (labels, samples), raws in zip(series, unzipped):
                    for (raw, sid), data in zip(samples, raws):
                        st.series += 1
                        tag = "-".join(re.sub(r"[^A-Za-z0-9._]", "_", v) for v in labels.values())
                        name = "%04d-%s.pb.gz" % (st.series, tag[:100])
                        with open(os.path.join(st.outdir, name), "wb") as f:
                            f.write(raw)
                        log.write(json.dumps({"api": api, "request": req, "n": st.series,
                                              "labels": labels, "bytes": len(data),
                                              "gz_bytes": len(raw), "file": name,
                                              "id": sid}) + "\n")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: profile_receiver.py OUTDIR")
    state = State(sys.argv[1])
    os.makedirs(state.outdir, exist_ok=True)
    serve(state)
    control = Server(("127.0.0.1", 0), Handler)
    control.state = state
    print(state.port, flush=True)
    print(control.server_address[1], flush=True)
    try:
        control.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
