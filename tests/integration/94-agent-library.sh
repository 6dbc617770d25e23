#!/bin/bash
# bpfrec/agent.h from a program of its own, and the agent's other events.
#
# 1. tests/tools/agent-lib records pp_shares (-p, stopped by another thread)
#    and then a short command, with a send callback instead of HTTP that
#    refuses its first two calls: every request is pushed, spooled or
#    counted dropped (requests = pushed - replayed + spooled + dropped), the
#    spool is replayed, the program's own counts match the library's, and
#    the bodies the callback took are Pyroscope PushRequests (decoded by
#    the field numbers in tests/tools/profile_receiver.py) whose profiles
#    go tool pprof reads without a warning, their samples the agent's count.
# 2. bpfrec agent -g --off-cpu, then -g --alloc=1, against the loopback
#    receiver, recording rec_offcpu (sleeps, blocks on a pipe), then
#    alloc_known (allocates known bytes): series arrive as process_cpu, off_cpu and
#    memory, each read clean by go tool pprof with its sample types; over
#    the windows, sleep_wait's off-CPU time is what the fixture measured and
#    every function's alloc_space is the fixture's bytes, exactly, and the
#    last window's inuse_space what it still held.
# Where the kernel refuses --alloc (before 5.17), the rest runs: said.
. "$TOP/tests/integration/lib.sh"
. "$TOP/tests/integration/agent_lib.sh"
need_agent_tools
need_kernel_for --off-cpu
alloc_refused=$(kernel_refuses -g --alloc) && echo "SKIP --alloc: $alloc_refused"
AGENT_LIB=$BUILD/tests/tools/agent-lib
[ -x "$AGENT_LIB" ] || fail "$AGENT_LIB not built (make fixtures)"
trap 'kill ${RPID:-} ${TPID:-} 2>/dev/null || true; rm -rf "$T"' EXIT

stat_of() { awk -v k="$2" '$1 == k { print $2; f = 1 } END { if (!f) print "missing" }' "$1"; }
# decode_bodies DIR OUT: every DIR/*.push as a PushRequest; each series'
# raw_profile to OUT/NNNN.pb.gz; checks the labels; prints the series count.
decode_bodies() {
	mkdir -p "$2"
	python3 - "$TOP/tests/tools" "$1" "$2" "$(hostname)" <<'EOF'
import glob, os, sys
sys.path.insert(0, sys.argv[1])
import profile_receiver as pr
bodies, out, host = sys.argv[2:]
n = 0
for path in sorted(glob.glob(os.path.join(bodies, "*.push"))):
    for labels, samples in pr.decode("pyroscope", open(path, "rb").read()):
        want = {"__name__": "process_cpu", "hostname": host, "__delta__": "false"}
        for k, v in want.items():
            if labels.get(k) != v:
                sys.exit(f"{path}: label {k}={labels.get(k)!r}, want {v!r}: {labels}")
        if not labels.get("service_name"):
            sys.exit(f"{path}: no service_name: {labels}")
        if len(samples) != 1:
            sys.exit(f"{path}: {len(samples)} raw samples in a series, want 1")
        n += 1
        with open(os.path.join(out, "%04d.pb.gz" % n), "wb") as f:
            f.write(samples[0][0])
print(n)
EOF
}
# check_counts LABEL STATS: the identities every run keeps.
check_counts() {
	local s=$2 requests pushed replayed spooled dropped
	requests=$(stat_of "$s" requests)
	pushed=$(stat_of "$s" pushed)
	replayed=$(stat_of "$s" replayed)
	spooled=$(stat_of "$s" spooled)
	dropped=$(( $(stat_of "$s" dropped_rejected) + $(stat_of "$s" dropped_too_large) +
		    $(stat_of "$s" dropped_no_spool) + $(stat_of "$s" spool_full) ))
	echo "$1: $requests requests = $((pushed - replayed)) pushed at once + $spooled spooled + $dropped dropped;" \
		"$replayed replayed, $(stat_of "$s" spool_entries) left in the spool, $(stat_of "$s" spool_evicted) evicted"
	[ "$requests" = $((pushed - replayed + spooled + dropped)) ] ||
		fail "$1: $requests requests, but $pushed pushed - $replayed replayed + $spooled spooled + $dropped dropped"
	[ "$spooled" = $((replayed + $(stat_of "$s" spool_entries) + $(stat_of "$s" spool_evicted))) ] ||
		fail "$1: $spooled spooled, not replayed + left + evicted"
	[ "$dropped" = 0 ] || fail "$1: $dropped requests dropped"
	# send refuses its first two calls; a run may end before the second.
	assert_range "$1: failed attempts" "$(stat_of "$s" attempts_failed)" 1 2
	[ "$(stat_of "$s" windows_dropped)" = 0 ] || fail "$1: windows dropped"
	[ "$(stat_of "$s" samples)" = "$(stat_of "$s" record_samples)" ] ||
		fail "$1: $(stat_of "$s" samples) samples encoded, $(stat_of "$s" record_samples) recorded"
}

# ---- 1a. -p, stopped from another thread once the spool is replayed ----
"$FIX/pp_shares" 30 2>"$T/target.err" &
TPID=$!
"$AGENT_LIB" "$T/bodies" "$T/spool" -g -F 999 -p "$TPID" 4 >"$T/pid.stats" 2>"$T/pid.err" ||
	{ cat "$T/pid.err" "$T/pid.stats" >&2; fail "agent-lib -p failed"; }
kill "$TPID" 2>/dev/null || true
wait "$TPID" 2>/dev/null || true
TPID=
cat "$T/pid.err"
check_counts "-p" "$T/pid.stats"
assert_range "-p: windows" "$(stat_of "$T/pid.stats" windows)" 3 100000
[ "$(stat_of "$T/pid.stats" attempts_failed)" = 2 ] || fail "-p: $(stat_of "$T/pid.stats" attempts_failed) failed attempts, send refused 2"
assert_range "-p: replayed from the spool" "$(stat_of "$T/pid.stats" replayed)" 2 100000
[ "$(stat_of "$T/pid.stats" spool_entries)" = 0 ] || fail "-p: the spool was not emptied"
# What send took, decoded: one series per profile the agent encoded.
series=$(decode_bodies "$T/bodies" "$T/prof") || fail "-p: the bodies do not decode"
echo "-p: $(ls "$T/bodies" | wc -l) bodies taken, $series series decoded"
[ "$series" = "$(stat_of "$T/pid.stats" profiles)" ] ||
	fail "-p: $series series in the bodies, the agent encoded $(stat_of "$T/pid.stats" profiles) profiles"
got=0
for f in "$T/prof"/*.pb.gz; do
	run_clean "$T/one.raw" go tool pprof -raw "$f"
	got=$((got + $(raw_samples "$T/one.raw")))
done
echo "-p: $got samples in the profiles, the agent encoded $(stat_of "$T/pid.stats" samples)"
[ "$got" = "$(stat_of "$T/pid.stats" samples)" ] || fail "-p: $got samples in the bodies, the agent encoded $(stat_of "$T/pid.stats" samples)"
[ "$got" -gt 0 ] || fail "-p: no samples"

# ---- 1b. a command, until it ends: what is left in the spool is counted ----
rm -rf "$T/bodies" "$T/spool"
"$AGENT_LIB" "$T/bodies" "$T/spool" -- "$FIX/pp_shares" 1 >"$T/cmd.stats" 2>"$T/cmd.err" ||
	{ cat "$T/cmd.err" "$T/cmd.stats" >&2; fail "agent-lib -- pp_shares failed"; }
cat "$T/cmd.err"
check_counts "command" "$T/cmd.stats"
[ "$(spool_entries "$T/spool")" = "$(stat_of "$T/cmd.stats" spool_entries)" ] ||
	fail "command: $(spool_entries "$T/spool") entries in the spool, the agent counts $(stat_of "$T/cmd.stats" spool_entries)"

# ---- 2. bpfrec agent -g --off-cpu, then --alloc=1: off_cpu and memory series ----
start_receiver "$T/recv"
# Windows short enough for each fixture to span several: nothing may fall
# between them. One run per fixture, each the command, so that it exits in
# the last window: a process that exits while the agent goes on can leave
# samples in a window that lacks its mappings (see the recorder's task
# tracker), which go tool pprof reads as a profile without a main binary.
nrun=0
runs=("--off-cpu -- $FIX/rec_offcpu 20 50")
[ -n "$alloc_refused" ] || runs+=("--alloc=1 -- $FIX/alloc_known 2")
for run in "${runs[@]}"; do
	# shellcheck disable=SC2086
	"$BPFREC" agent --server "http://127.0.0.1:$RPORT" --every 0.4s -F 999 -g \
		--label hostname=test-host --spool "$T/spool2" $run >"$T/ev.out" 2>>"$T/ev.err" ||
		{ cat "$T/ev.err" >&2; fail "bpfrec agent $run failed"; }
	[ "$(agent_count "$T/ev.err" pushed)" = "$(agent_count "$T/ev.err" requests)" ] || fail "$run: not every request pushed"
	# A window the worker is too slow to convert is dropped and counted:
	# --alloc=1's 40k samples a window on an emulated CPU. Off-CPU's few
	# samples never are; the allocation totals below allow for it.
	case $run in
	--alloc*) ;;
	*) [ "$(agent_count "$T/ev.err" dropped)" = 0 ] || fail "$run: windows dropped" ;;
	esac
	mv "$T/ev.err" "$T/ev.err.$((++nrun))"
done
cat "$T"/ev.err.* >"$T/ev.err"
stop_receiver
cat "$T/ev.err"
# The one warning allowed: a window dropped by a worker behind, counted (above).
grep -v 'warning: the uploads are [0-9]* windows behind: the oldest window was dropped' "$T/ev.err" >"$T/ev.warn" || true
assert_no_grep 'warning' "$T/ev.warn"
jl=$T/recv/requests.jsonl
# name service file, one line per series; --label hostname replaced the host's name
# (a second hostname label would have had the receiver refuse the request).
python3 -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["labels"].get("hostname") != "test-host":
        sys.exit("series %d: hostname %r, --label gave test-host" % (r["n"], r["labels"].get("hostname")))
    print(r["labels"]["__name__"], r["labels"]["service_name"], r["file"])' "$jl" >"$T/series.txt" ||
	fail "the series' labels"
for name in process_cpu off_cpu memory; do
	echo "$name: $(awk -v n=$name '$1 == n' "$T/series.txt" | wc -l) series"
done
awk '$1 == "off_cpu" && $2 == "rec_offcpu"' "$T/series.txt" | grep -q . || fail "no off_cpu series for rec_offcpu"
awk '$1 == "process_cpu" && $2 == "rec_offcpu"' "$T/series.txt" | grep -q . || fail "no process_cpu series for rec_offcpu"
if [ -z "$alloc_refused" ]; then
	awk '$1 == "memory" && $2 == "alloc_known"' "$T/series.txt" | grep -q . || fail "no memory series for alloc_known"
	awk '$1 == "process_cpu" && $2 == "alloc_known"' "$T/series.txt" | grep -q . || fail "no process_cpu series for alloc_known"
fi
bad=$(awk '$1 != "process_cpu" && $1 != "off_cpu" && $1 != "memory"' "$T/series.txt")
[ -z "$bad" ] || fail "series of another type: $bad"
# The fixtures' off_cpu and memory profiles read clean, with their type's
# sample types. A window holding only samples of a process at its exit
# (its /proc gone, its mappings described in an earlier window) has no
# mapping to place them in, which go tool pprof reads as a profile without
# a main binary: a known gap of the windows, counted and shown here.
others=0
while read -r name svc file; do
	case $name-$svc in
	off_cpu-rec_offcpu|memory-alloc_known) run_clean "$T/one.raw" go tool pprof -raw "$T/recv/$file" ;;
	*) if ! go tool pprof -raw "$T/recv/$file" >"$T/one.raw" 2>"$T/one.err" || [ -s "$T/one.err" ]; then
		others=$((others + 1))
		echo "known gap: $file: $(head -c 200 "$T/one.err")"
	   fi
	   continue ;;
	esac
	case $name in
	process_cpu) want='samples/count cpu/nanoseconds' ;;
	off_cpu) want='samples/count off_cpu/nanoseconds' ;;
	memory) want='alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes[dflt]' ;;
	esac
	[ "$(sed -n '/^Samples:/{n;p;q}' "$T/one.raw")" = "$want" ] ||
		fail "$file ($name, $svc): sample types '$(sed -n '/^Samples:/{n;p;q}' "$T/one.raw")', want '$want'"
done <"$T/series.txt"
echo "other series go tool pprof warned on (known gap): $others of $(wc -l <"$T/series.txt")"
files_of() { awk -v n="$1" -v s="$2" -v d="$T/recv" '$1 == n && $2 == s { print d "/" $3 }' "$T/series.txt"; }

# Off-CPU over the windows: sleep_wait's waits as the fixture measured them
# (less its own CPU time in there and what the hypervisor stole, as test 50).
want_sleep=$(sed -n 's/^rec_offcpu: sleep_wait \([0-9.]*\) ms.*/\1/p' "$T/ev.err")
cpu_sleep=$(sed -n 's/^rec_offcpu: on CPU in sleep_wait \([0-9.]*\) ms.*/\1/p' "$T/ev.err")
[ -n "$want_sleep" ] || fail "rec_offcpu did not report its waits"
mapfile -t off < <(files_of off_cpu rec_offcpu)
run_clean "$T/off.top" go tool pprof -top -cum -nodefraction=0 -unit=ms "${off[@]}"
got=$(cum_value "$T/off.top" sleep_wait ms)
echo "off_cpu over ${#off[@]} windows: sleep_wait $got ms (fixture $want_sleep ms, ${cpu_sleep:-0} ms of it on CPU)"
assert_range "off_cpu sleep_wait ms" "$got" "$(awk -v w="$want_sleep" -v c="${cpu_sleep:-0}" 'BEGIN { print (w - c) * 0.9 }')" \
	"$(awk -v w="$want_sleep" 'BEGIN { print w * 1.1 }')"

[ -z "$alloc_refused" ] || { echo "ok (without --alloc: $alloc_refused)"; exit 0; }
# Allocations over the windows, every one recorded (--alloc=1): exact, unless
# the recording counted samples lost (an emulated CPU's ring buffer overflows).
alloc_lost=$(agent_count "$T/ev.err.2" lost)
alloc_dropped=$(agent_count "$T/ev.err.2" dropped)
echo "alloc run: $alloc_lost samples lost, $alloc_dropped windows dropped"
mapfile -t mem < <(files_of memory alloc_known)
# No series of service "unknown": an allocation whose record came after a
# later CPU sample of its process, or after the process exited, in the
# window after a switch, still finds its process described there.
mapfile -t mem_unknown < <(files_of memory unknown)
echo "memory series: ${#mem[@]} of alloc_known, ${#mem_unknown[@]} of no known service"
[ "${#mem_unknown[@]}" = 0 ] || fail "memory series without a known service: ${mem_unknown[*]}"
run_clean "$T/alloc.top" go tool pprof -sample_index=alloc_space -unit=B -top -cum -nodefraction=0 "${mem[@]}"
# inuse is what is held at each window's end, a snapshot, not a delta: the last window's.
run_clean "$T/inuse.top" go tool pprof -sample_index=inuse_space -unit=B -top -cum -nodefraction=0 "${mem[-1]}"
for f in free_small keep_big calloc_grow; do
	want=$(sed -n "s/^alloc_known: $f alloc \([0-9]*\) inuse \([0-9]*\).*/\1 \2/p" "$T/ev.err")
	[ -n "$want" ] || fail "alloc_known did not print the truth of $f"
	got="$(cum_value "$T/alloc.top" $f B) $(cum_value "$T/inuse.top" $f B)"
	echo "memory over ${#mem[@]} windows: $f alloc_space, the last window's inuse_space: $got (fixture $want)"
	if [ "$alloc_lost" = 0 ] && [ "$alloc_dropped" = 0 ]; then
		[ "$got" = "$want" ] || fail "memory: $f $got, the fixture $want"
	else
		# A slow machine's ring buffer overflowed, or its worker dropped a
		# window (counted): never more than the truth.
		awk -v g="${got%% *}" -v w="${want%% *}" 'BEGIN { exit !(g <= w && g > 0) }' ||
			fail "memory: $f $got, the fixture $want ($alloc_lost samples lost, $alloc_dropped windows dropped)"
	fi
done
echo "ok"
