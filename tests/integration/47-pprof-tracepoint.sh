#!/bin/bash
# Tracepoint fields as labels: --labels trace:prev_comm,trace:next_pid on a
# sched:sched_switch recording must give the same per-value counts as the
# fields perf script decodes from the same file, in file and pipe mode.
. "$TOP/tests/integration/lib.sh"
need_tool perf linux-perf
need_tool go golang-go
export HOME=$T PPROF_TMPDIR=$T

# pp_ping and pp_pong each block in read(2) at every round trip.
# perf's own recording: a loaded machine made it lose a chunk with perf's
# default buffer (perf script then warns about perf's file, not ours).
perf record -q -m 16M -e sched:sched_switch -g -o "$T/perf.data" -- "$FIX/pp_pingpong" 2>"$T/rec.err" ||
	skip "perf cannot record sched:sched_switch here: $(tail -n 1 "$T/rec.err")"
run_clean "$T/script.txt" perf script -i "$T/perf.data" -F trace:trace
"$BPFREC" pprof -i "$T/perf.data" -o "$T/tp.pb.gz" --labels trace:prev_comm,trace:next_pid,comm \
	2>"$T/conv.err" || { cat "$T/conv.err" >&2; fail "bpfrec pprof failed"; }
assert_no_grep 'warning' "$T/conv.err"
go tool pprof -tags "$T/tp.pb.gz" >"$T/tags.txt" 2>/dev/null || fail "go tool pprof -tags failed"
assert_grep '^ prev_comm: Total' "$T/tags.txt" "a prev_comm label"
assert_grep '^ next_pid: Total' "$T/tags.txt" "a next_pid label"

# Count per label value in -tags: "  N (P%): VALUE" under " KEY: Total".
tag_count() { # KEY VALUE
	awk -v k="$1" -v v="$2" '
		/^ [^ ].*: Total/ { cur = $1; sub(/:$/, "", cur); next }
		cur == k && $NF == v { print $1 + 0; found = 1; exit }
		END { if (!found) print 0 }' "$T/tags.txt"
}
n_total=$(grep -c 'prev_comm=' "$T/script.txt")
for comm in pp_ping pp_pong; do
	want=$(grep -c "prev_comm=$comm " "$T/script.txt")
	got=$(tag_count prev_comm "$comm")
	echo "prev_comm=$comm: perf script $want, profile $got (of $n_total)"
	[ "$want" -gt 100 ] || fail "too few switches away from $comm"
	[ "$want" = "$got" ] || fail "prev_comm=$comm: $got in the profile, $want in perf script"
done
# The busiest next_pid, numerically.
read -r want npid <<<"$(grep -o 'next_pid=[0-9]*' "$T/script.txt" | sort | uniq -c | sort -rn | head -n 1 | sed 's/next_pid=//')"
got=$(tag_count next_pid "$npid")
echo "next_pid=$npid: perf script $want, profile $got"
[ "$want" = "$got" ] || fail "next_pid=$npid: $got in the profile, $want in perf script"

# Pipe mode: the tracing data travels as a HEADER_TRACING_DATA record; the
# reader keeps it, so the labels are there and split as perf script splits them.
perf record -q -m 16M -e sched:sched_switch -g -o - -- "$FIX/pp_pingpong" 1000 2>/dev/null >"$T/pipe.data"
"$BPFREC" pprof -i - -o "$T/pipe.pb.gz" --labels trace:prev_comm <"$T/pipe.data" 2>"$T/pipe.err" ||
	{ cat "$T/pipe.err" >&2; fail "pipe conversion failed"; }
assert_no_grep 'warning' "$T/pipe.err" "pipe-mode tracing data is used"
run_clean "$T/pscript.txt" perf script -i - -F trace:trace <"$T/pipe.data"
go tool pprof -tags "$T/pipe.pb.gz" >"$T/tags.txt" 2>/dev/null
assert_grep '^ prev_comm: Total' "$T/tags.txt" "prev_comm labels in pipe mode"
want=$(grep -c "prev_comm=pp_ping " "$T/pscript.txt")
got=$(tag_count prev_comm pp_ping)
[ "$want" = "$got" ] || fail "pipe: prev_comm=pp_ping $got in the profile, $want in perf script"
echo "ok"
