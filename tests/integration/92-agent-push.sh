#!/bin/bash
# bpfrec agent against a loopback receiver speaking Pyroscope's Push and
# Parca's WriteRaw (tests/tools/profile_receiver.py: it decodes each request
# by the upstream schemas' field numbers and gunzips every raw_profile).
# For each API, the agent records pp_shares (6:3:1 among its leaves) in
# half-second windows: several windows arrive, each series carries the
# labels a server files it under, go tool pprof reads every profile without
# a warning, the windows' samples add up to the agent's own count, and the
# merged windows give the fixture's shares, as one long `bpfrec record` of
# the same program does. The Pyroscope run bounds the symbol tables kept
# across windows to 1 MB (--symbols-max; the kernel's table alone is more):
# they are renewed between windows, counted, and the names stay the same;
# the Parca run, with the default bound, never renews them.
. "$TOP/tests/integration/lib.sh"
. "$TOP/tests/integration/agent_lib.sh"
need_agent_tools
trap 'kill ${RPID:-} 2>/dev/null || true; rm -rf "$T"' EXIT

# The reference: one recording of the whole run.
"$BPFREC" record -q -F 999 -g -o "$T/long.data" -- "$FIX/pp_shares" 2 2>"$T/long.err" ||
	{ cat "$T/long.err" >&2; fail "bpfrec record failed"; }
"$BPFREC" pprof -q -i "$T/long.data" -o "$T/long.pb.gz" || fail "bpfrec pprof failed"
run_clean "$T/long.top" go tool pprof -top -nodefraction=0 "$T/long.pb.gz"

host=$(hostname)
for api in pyroscope parca; do
	symmax=()
	[ "$api" = pyroscope ] && symmax=(--symbols-max 1M)
	start_receiver "$T/recv-$api"
	"$BPFREC" agent --server "http://127.0.0.1:$RPORT" --api "$api" --every 0.5s -F 999 -g \
		--label env=test --spool "$T/spool-$api" "${symmax[@]}" -- "$FIX/pp_shares" 2 \
		>"$T/$api.out" 2>"$T/$api.err" || { cat "$T/$api.err" >&2; fail "$api: bpfrec agent failed"; }
	stop_receiver
	cat "$T/$api.err"
	jl=$T/recv-$api/requests.jsonl
	[ -s "$jl" ] || fail "$api: the receiver got nothing"

	# Several windows, every one pushed at once, nothing spooled or dropped.
	windows=$(agent_count "$T/$api.err" windows)
	pushed=$(agent_count "$T/$api.err" pushed)
	requests=$(agent_count "$T/$api.err" requests)
	assert_range "$api: windows" "$windows" 3 100000
	[ "$pushed" = "$requests" ] || fail "$api: $requests requests, $pushed pushed"
	assert_grep ' 0 spooled, 0 rejected, 0 too large, 0 lacking a spool' "$T/$api.err" "$api: nothing kept or dropped"
	renewed=$(agent_count "$T/$api.err" renewed)
	echo "$api: symbol tables renewed $renewed times in $windows windows (${symmax[*]:-default bound})"
	if [ "$api" = pyroscope ]; then
		assert_range "$api: symbol tables renewed over 1M" "$renewed" 1 $((windows - 1))
	else
		[ "$renewed" = 0 ] || fail "$api: symbol tables renewed $renewed times under the default bound"
	fi
	nreq=$(python3 -c 'import json,sys; print(len({json.loads(l)["request"] for l in open(sys.argv[1])}))' "$jl")
	[ "$nreq" = "$pushed" ] || fail "$api: the receiver decoded $nreq requests, the agent pushed $pushed"
	python3 -c 'import json,sys; assert all(json.loads(l)["api"] == sys.argv[2] for l in open(sys.argv[1]))' "$jl" "$api" ||
		fail "$api: a request arrived as another API"

	# The labels a server files the profiles under, on every series.
	python3 - "$jl" "$host" "$api" <<'EOF' || fail "$api: labels"
import json, sys
jl, host, api = sys.argv[1:]
n = 0
for line in open(jl):
    r = json.loads(line)
    l = r["labels"]
    want = {"__name__": "process_cpu", "hostname": host, "env": "test"}
    if api == "pyroscope":
        want["__delta__"] = "false"
    for k, v in want.items():
        if l.get(k) != v:
            sys.exit(f"series {r['n']}: label {k}={l.get(k)!r}, want {v!r}: {l}")
    if not l.get("service_name"):
        sys.exit(f"series {r['n']}: no service_name: {l}")
    n += 1
print(f"{api}: {n} series, labels as expected")
EOF
	# pp_shares is a service of its own (its systemd unit, cgroup or comm).
	svc=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if "pp_shares" in r["file"] or r["labels"]["service_name"] == "pp_shares": print(r["labels"]["service_name"]); break' "$jl")
	[ -n "$svc" ] || fail "$api: no series for pp_shares"
	echo "$api: pp_shares's service_name is $svc"

	# Every window's profile reads clean; merged they are the whole run.
	files=()
	for f in "$T/recv-$api"/*.pb.gz; do
		run_clean "$T/one.raw" go tool pprof -raw "$f"
		files+=("$f")
	done
	# -symbolize=none: the names are the agent's own (go tool pprof would
	# otherwise name the fixture's addresses itself from the local binary).
	run_clean "$T/$api.top" go tool pprof -symbolize=none -top -nodefraction=0 "${files[@]}"
	run_clean "$T/$api.raw" go tool pprof -raw "${files[@]}"
	got=$(raw_samples "$T/$api.raw")
	said=$(agent_count "$T/$api.err" samples)
	echo "$api: ${#files[@]} profiles in $nreq requests, $got samples received, agent counted $said"
	[ "$got" = "$said" ] || fail "$api: received $got samples, the agent encoded $said"
	assert_samples "$api: samples" "$got" "$(fixture_cpu "$T/$api.err" pp_shares)" 999
	for f in leaf_a leaf_b leaf_c; do
		w=$(leaf_share "$T/$api.top" flat_share "$f")
		l=$(leaf_share "$T/long.top" flat_share "$f")
		echo "$api: $f among the leaves: windows $w%, one recording $l%"
		assert_range "$api: $f, windows against one recording (points)" "$(abs_diff "$w" "$l")" 0 5
	done
	assert_range "$api: leaf_a among the leaves" "$(leaf_share "$T/$api.top" flat_share leaf_a)" 52 68
	assert_range "$api: leaf_c among the leaves" "$(leaf_share "$T/$api.top" flat_share leaf_c)" 5 15
done
echo "ok"
