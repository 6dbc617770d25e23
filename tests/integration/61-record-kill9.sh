#!/bin/bash
# Crash safety: bpfrec killed with SIGKILL in the middle of a recording
# leaves a file that perf report and perf script read without a warning, up
# to its last checkpoint (at most about a second missing), and that bpfrec
# pprof converts for go tool pprof.
. "$(dirname "$0")/lib.sh"
need_root

cd "$T"
"$FIX/rec_sleepspin" 0 20 & spin=$!
trap 'kill $spin 2>/dev/null || true; rm -rf "$T"' EXIT
start=$(date +%s.%N)
"$BPFREC" record -q -a -g -o k.data & rec=$!
# Let it record for a while: the file grows as rounds are written.
for _ in $(seq 100); do
	[ "$(stat -c %s k.data 2>/dev/null || echo 0)" -gt 300000 ] && break
	sleep 0.1
done
sleep 1
kill -9 $rec
wait $rec 2>/dev/null || true
killed=$(date +%s.%N)

run_clean "$T/report.txt" perf report -i k.data --stdio --no-children -g none --sort comm,sym
assert_grep 'rec_sleepspin +\[\.\] late_spin$' "$T/report.txt" "late_spin missing after kill -9"
run_clean "$T/times.txt" perf script -i k.data -F time
# Samples cover the recording up to at most about a second before the kill.
first=$(head -n 1 "$T/times.txt" | tr -d ' :')
last=$(tail -n 1 "$T/times.txt" | tr -d ' :')
covered=$(awk -v a="$first" -v b="$last" 'BEGIN { print b - a }')
ran=$(awk -v a="$start" -v b="$killed" 'BEGIN { print b - a }')
echo "recorded for ${ran}s, the file covers ${covered}s"
assert_range "missing seconds" "$(awk -v r="$ran" -v c="$covered" 'BEGIN { print r - c }')" 0 1.6

"$BPFREC" pprof -i k.data -o k.pb.gz 2>"$T/pprof.err" || { cat "$T/pprof.err"; fail "bpfrec pprof failed"; }
go tool pprof -top -sample_index=samples k.pb.gz >"$T/top.txt" 2>"$T/go.err" ||
	{ cat "$T/go.err"; fail "go tool pprof cannot read the conversion"; }
assert_grep ' late_spin$' "$T/top.txt" "late_spin missing from the pprof conversion"
