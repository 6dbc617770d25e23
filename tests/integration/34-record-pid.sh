#!/bin/bash
# -p and -t on running processes: only the targets are recorded, --duration
# ends the recording, and without it the recording ends when the targets exit.
. "$(dirname "$0")/lib.sh"
need_root

cd "$T"
cleanup() { kill $spin1 $spin2 $threads 2>/dev/null || true; rm -rf "$T"; }
# Spinning far longer than any machine takes to start the recorder: the
# cleanup ends them.
"$FIX/rec_sleepspin" 0 600 & spin1=$!
"$FIX/rec_sleepspin" 0 600 & spin2=$!
# Long enough to outlive the -p part on a loaded machine (killed at the end).
"$FIX/rec_threads" 600 & threads=$!
trap cleanup EXIT

# -p two pids, --duration 2.
start=$(date +%s.%N)
"$BPFREC" record -q -g -p "$spin1,$spin2" --duration 2 -o p.data || fail "bpfrec record -p exited $?"
elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
# The samples span at least the 2 s; how long a machine takes to start
# and stop the recorder is its own (39 s with 5.10's verifier on a loaded
# emulated CPU), but --duration, not the targets' exit ten minutes from now, must
# end it: both targets still run when it returns, and the samples span
# about the 2 s, not the targets' life.
span=$(sample_span p.data)
echo "--duration 2 took $elapsed s, its samples span $span s"
kill -0 "$spin1" 2>/dev/null && kill -0 "$spin2" 2>/dev/null ||
	fail "a target of -p had exited when --duration 2 returned ($elapsed s): the recording waited for it"
assert_range "samples span (s)" "$span" 1.5 20
run_clean "$T/pids.txt" perf script -i p.data -F pid -G
sort -u "$T/pids.txt" | tr -d ' ' >"$T/upids"
[ "$(cat "$T/upids" | tr '\n' ' ')" = "$(printf '%s\n' $spin1 $spin2 | sort -u | tr '\n' ' ')" ] ||
	fail "-p $spin1,$spin2 recorded pids: $(tr '\n' ' ' <"$T/upids")"
run_clean "$T/report.txt" perf report -i p.data --stdio --no-children -g none
assert_range "late_spin among user samples" "$(user_share "$T/report.txt" late_spin)" 80 100

# -t one worker thread of rec_threads.
tid=$(for t in /proc/$threads/task/*; do
	[ "$(cat "$t/comm")" = rec_worker ] && basename "$t" && break
done)
[ -n "$tid" ] || fail "no rec_worker thread in rec_threads"
"$BPFREC" record -v -g -t "$tid" --duration 1 -o t.data 2>"$T/t.err" ||
	{ cat "$T/t.err"; fail "bpfrec record -t exited $?"; }
run_clean "$T/tids.txt" perf script -i t.data -F tid -G
[ "$(sort -u "$T/tids.txt" | tr -d ' ')" = "$tid" ] || {
	grep -E 'BPF saw|Captured' "$T/t.err"
	[ -d "/proc/$threads/task/$tid" ] || echo "thread $tid has exited"
	fail "-t $tid recorded tids: $(sort -u "$T/tids.txt" | tr '\n' ' ')"
}
run_clean "$T/treport.txt" perf report -i t.data --stdio --no-children -g none
assert_grep 'rec_worker +rec_threads +\[\.\] worker_spin$' "$T/treport.txt"

# No --duration: the recording ends when the target exits. The target must
# outlive the recorder's start, which took (elapsed - 2) s above: 3 s more
# than twice that (a loaded machine took 4 s to start).
life=$(awk -v e="$elapsed" 'BEGIN { l = 2 * (e - 2) + 3; printf "%.1f\n", l < 3 ? 3 : l }')
"$FIX/rec_sleepspin" 0 "$life" & short=$!
"$BPFREC" record -q -p "$short" -o e.data & rec=$!
for _ in $(seq "$(awk -v l="$life" 'BEGIN { printf "%d\n", 10 * l + 270 }')"); do
	kill -0 $rec 2>/dev/null || break
	sleep 0.1
done
if kill -0 $rec 2>/dev/null; then kill -INT $rec; fail "-p did not stop after its target exited"; fi
wait $rec || fail "bpfrec record -p exited $? after its target exited"
run_clean "$T/ereport.txt" perf report -i e.data --stdio --no-children
assert_grep 'late_spin$' "$T/ereport.txt"
