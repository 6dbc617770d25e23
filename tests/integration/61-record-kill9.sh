#!/bin/bash
# Crash safety: bpfrec killed with SIGKILL in the middle of a recording
# leaves a file that perf report and perf script read without a warning, up
# to its last checkpoint (at most about a second missing), and that bpfrec
# pprof converts for go tool pprof.
. "$(dirname "$0")/lib.sh"
need_root

cd "$T"
"$FIX/rec_sleepspin" 0 600 & spin=$!	# the trap ends it
trap 'kill $spin 2>/dev/null || true; rm -rf "$T"' EXIT
# The file grows as rounds are written: let it record for a while.
kill9_recording k.data 300000 -a -g

"$BPFREC" pprof -i k.data -o k.pb.gz 2>"$T/pprof.err" || { cat "$T/pprof.err"; fail "bpfrec pprof failed"; }
go tool pprof -top -sample_index=samples k.pb.gz >"$T/top.txt" 2>"$T/go.err" ||
	{ cat "$T/go.err"; fail "go tool pprof cannot read the conversion"; }
assert_grep ' late_spin$' "$T/top.txt" "late_spin missing from the pprof conversion"
