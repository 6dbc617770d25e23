# Sourced by the agent's tests (92, 93, 94) after lib.sh: what they need,
# the loopback receiver (tests/tools/profile_receiver.py) and the agent's
# summary line.

# need_agent_tools: root, go (go tool pprof reads the profiles) and python3
# (the receiver); HOME and pprof's temporary files in the test's directory.
need_agent_tools() {
	need_root
	need_tool go golang-go
	need_tool python3 python3.11
	export HOME=$T PPROF_TMPDIR=$T
}

# start_receiver DIR: a receiver writing into DIR; sets RPORT (pushes),
# CPORT (control) and RPID. Stopped by stop_receiver or at the test's end.
start_receiver() {
	# The caller's EXIT trap kills ${RPID:-} too.
	mkdir -p "$1"
	python3 "$TOP/tests/tools/profile_receiver.py" "$1" >"$1.ports" 2>"$1.log" &
	RPID=$!
	wait_until "$RPID" lines_at_least "$1.ports" 2 ||
		{ cat "$1.log" >&2; fail "the receiver did not start"; }
	RPORT=$(sed -n 1p "$1.ports")
	CPORT=$(sed -n 2p "$1.ports")
}
# Conditions for wait_until (evaluated at each try).
lines_at_least() { [ "$(wc -l <"$1")" -ge "$2" ]; }
spool_at_least() { [ "$(spool_entries "$1")" -ge "$2" ]; }
stat_at_least() { [ "$(receiver_stat "$1")" -ge "$2" ]; }
spool_entries() { find "$1" -name '*.push' 2>/dev/null | wc -l; }
stop_receiver() {
	kill "$RPID" 2>/dev/null || true
	wait "$RPID" 2>/dev/null || true
}
# receiver_mode MODE: ok, down, status:N, grpc:N, hang, max-body:N.
receiver_mode() {
	python3 -c 'import sys, urllib.request
urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:%s/__control" % sys.argv[1],
                       data=sys.argv[2].encode(), method="POST"), timeout=10).read()' "$CPORT" "$1" ||
		fail "the receiver did not take mode $1"
}
# receiver_stat NAME: one of the receiver's counts (GET /__stats).
receiver_stat() {
	python3 -c 'import json, sys, urllib.request
print(json.load(urllib.request.urlopen("http://127.0.0.1:%s/__stats" % sys.argv[1], timeout=10)).get(sys.argv[2], 0))' "$CPORT" "$1"
}
# agent_count FILE WHAT: a number from the agent's summary line
# "[ bpfrec agent: W windows (D dropped), P profiles, S samples (L lost);
#   R requests: N pushed (K KB, Y from the spool), Z spooled, ... ]".
agent_count() {
	awk -v what="$2" '/^\[ bpfrec agent: / {
		for (i = 2; i <= NF; i++) {
			w = $(i + 1); gsub(/[^a-z]/, "", w)
			v = $i; gsub(/[^0-9]/, "", v)
			if ($i ~ /^\(?[0-9]+$/ && w == what && v != "") { print v; exit }
		}
	}' "$1"
}
