#!/bin/bash
# Several events in one file: one profile per event, <stem>.<event>.pb.gz,
# each with its own sample types and exactly its event's samples and
# periods; --event picks one into -o; an unknown --event is an error.
. "$TOP/tests/integration/lib.sh"
need_tool perf linux-perf
need_tool go golang-go
export HOME=$T PPROF_TMPDIR=$T

perf record -q -e cpu-clock -e 'page-faults/period=1/' -g -o "$T/perf.data" -- "$FIX/pp_shares" 0.5 \
	2>"$T/rec.err" || { cat "$T/rec.err" >&2; fail "perf record failed"; }
run_clean "$T/script.txt" perf script -i "$T/perf.data" -F event,period
n_cpu=$(awk '$2 ~ /^cpu-clock/ { n++ } END { print n + 0 }' "$T/script.txt")
n_pf=$(awk '$2 ~ /^page-faults/ { n++ } END { print n + 0 }' "$T/script.txt")
p_pf=$(awk '$2 ~ /^page-faults/ { t += $1 } END { print t + 0 }' "$T/script.txt")
p_cpu=$(awk '$2 ~ /^cpu-clock/ { t += $1 } END { print t + 0 }' "$T/script.txt")
echo "perf script: cpu-clock $n_cpu samples ($p_cpu ns), page-faults $n_pf samples ($p_pf faults)"
at_least "cpu-clock samples" "$n_cpu" 1
# A program's start-up faults in its pages: some tens of them on any machine.
[ "$n_pf" -gt 10 ] || fail "only $n_pf page-fault samples"

mkdir "$T/out"
"$BPFREC" pprof -q -i "$T/perf.data" -o "$T/out/prof.pb.gz" || fail "bpfrec pprof failed"
[ "$(cd "$T/out" && ls | sort | tr '\n' ' ')" = "prof.cpu-clock.pb.gz prof.page-faults.pb.gz " ] ||
	fail "expected one profile per event, got: $(ls "$T/out")"

# Sums of each sample type column in go tool pprof -raw.
raw_sums() {
	awk '/^Samples:/ { on = 1; getline; next } /^Locations/ { on = 0 }
	     on && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+:$/ { a += $1; sub(/:/, "", $2); b += $2 }
	     END { print a + 0, b + 0 }' "$1"
}
run_clean "$T/cpu.txt" go tool pprof -raw "$T/out/prof.cpu-clock.pb.gz"
run_clean "$T/pf.txt" go tool pprof -raw "$T/out/prof.page-faults.pb.gz"
assert_grep '^samples/count cpu/nanoseconds$' "$T/cpu.txt" "cpu-clock sample types"
assert_grep '^PeriodType: cpu nanoseconds$' "$T/cpu.txt"
assert_grep '^samples/count page-faults/count$' "$T/pf.txt" "page-faults sample types"
assert_grep '^PeriodType: page-faults count$' "$T/pf.txt"
read -r c1 c2 <<<"$(raw_sums "$T/cpu.txt")"
read -r f1 f2 <<<"$(raw_sums "$T/pf.txt")"
echo "profiles: cpu-clock $c1 samples ($c2 ns), page-faults $f1 samples ($f2 faults)"
[ "$c1" = "$n_cpu" ] && [ "$c2" = "$p_cpu" ] || fail "cpu-clock profile: $c1/$c2, perf $n_cpu/$p_cpu"
[ "$f1" = "$n_pf" ] && [ "$f2" = "$p_pf" ] || fail "page-faults profile: $f1/$f2, perf $n_pf/$p_pf"

# --event: one profile, under the -o name.
"$BPFREC" pprof -q -i "$T/perf.data" -o "$T/one.pb.gz" --event page-faults || fail "--event failed"
run_clean "$T/one.txt" go tool pprof -raw "$T/one.pb.gz"
assert_grep '^samples/count page-faults/count$' "$T/one.txt"
[ "$(raw_sums "$T/one.txt")" = "$n_pf $p_pf" ] || fail "--event page-faults: wrong samples"
[ ! -e "$T/one.page-faults.pb.gz" ] || fail "--event wrote a per-event name"

rc=0
"$BPFREC" pprof -i "$T/perf.data" -o "$T/none.pb.gz" --event cycles 2>"$T/err" || rc=$?
[ "$rc" = 1 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q "no event 'cycles'" "$T/err" ||
	fail "unknown event: exit $rc: $(cat "$T/err")"
[ ! -e "$T/none.pb.gz" ] || fail "profile written for an unknown event"
echo "ok"
