#!/bin/bash
# Labels and filters on a recording of two processes: --labels pid,tid,comm,cpu
# must let go tool pprof -tagfocus split the profile as perf report --sort
# comm / perf script split the samples; --pid, --tid and --comm must keep
# exactly the samples of that process.
. "$TOP/tests/integration/lib.sh"
need_tool perf linux-perf
need_tool go golang-go
export HOME=$T PPROF_TMPDIR=$T

perf record -q -e cpu-clock -g --sample-cpu -o "$T/perf.data" -- \
	sh -c "'$FIX/pp_shares' 0.5 & '$FIX/pp_syscall' 0.5; wait" 2>"$T/rec.err" ||
	{ cat "$T/rec.err" >&2; fail "perf record failed"; }
run_clean "$T/script.txt" perf script -i "$T/perf.data" -F comm,pid,tid,event
pid=$(awk '$1 == "pp_shares" { sub(/\/.*/, "", $2); print $2; exit }' "$T/script.txt")
[ -n "$pid" ] || fail "no pp_shares samples in the recording"
n_all=$(grep -c cpu-clock "$T/script.txt")
n_pid=$(awk -v p="$pid" '{ split($2, a, "/") } a[1] == p' "$T/script.txt" | wc -l)
n_comm=$(awk '$1 == "pp_syscall"' "$T/script.txt" | wc -l)
echo "samples: all $n_all, pid $pid (pp_shares) $n_pid, comm pp_syscall $n_comm"
[ "$n_pid" -gt 100 ] && [ "$n_comm" -gt 100 ] || fail "too few samples per process"

# "Showing nodes accounting for X, P% of T total" -> P
focus_share() {
	go tool pprof -top -nodefraction=0 "$@" 2>/dev/null |
		awk '/^Showing nodes accounting for/ { for (i = 1; i <= NF; i++) if ($i ~ /%$/) { sub(/%/, "", $i); print $i; exit } }'
}

"$BPFREC" pprof -i "$T/perf.data" -o "$T/l.pb.gz" --labels pid,tid,comm,cpu 2>"$T/conv.err" ||
	{ cat "$T/conv.err" >&2; fail "bpfrec pprof --labels failed"; }
run_clean "$T/tags.txt" go tool pprof -tags "$T/l.pb.gz"
for key in pid tid comm cpu; do
	assert_grep "^ $key: Total" "$T/tags.txt" "a $key label"
done
assert_grep ': pp_shares$' "$T/tags.txt" "comm pp_shares"
assert_grep ': pp_syscall$' "$T/tags.txt" "comm pp_syscall"
assert_grep ": $pid$" "$T/tags.txt" "pid $pid"
# Labels do not change what is counted.
run_clean "$T/raw.txt" go tool pprof -raw "$T/l.pb.gz"
[ "$(raw_samples "$T/raw.txt")" = "$n_all" ] || fail "labelled profile lost samples"

# -tagfocus splits like perf script does.
want=$(awk -v a="$n_pid" -v b="$n_all" 'BEGIN { printf "%.2f", 100 * a / b }')
got=$(focus_share -tagfocus="pid=$pid" "$T/l.pb.gz")
echo "pid=$pid: perf $want%, tagfocus $got%"
assert_range "pid share difference" "$(awk -v a="$want" -v b="${got:-0}" 'BEGIN { d = a - b; print d < 0 ? -d : d }')" 0 0.2
want=$(awk -v a="$n_comm" -v b="$n_all" 'BEGIN { printf "%.2f", 100 * a / b }')
got=$(focus_share -tagfocus=comm=pp_syscall "$T/l.pb.gz")
echo "comm=pp_syscall: perf $want%, tagfocus $got%"
assert_range "comm share difference" "$(awk -v a="$want" -v b="${got:-0}" 'BEGIN { d = a - b; print d < 0 ? -d : d }')" 0 0.2
go tool pprof -top -nodefraction=0 -tagfocus=comm=pp_syscall "$T/l.pb.gz" 2>/dev/null >"$T/focus.txt"
assert_grep ' write_loop$' "$T/focus.txt" "pp_syscall's function under its comm"
assert_no_grep ' leaf_a$' "$T/focus.txt" "pp_shares's function under pp_syscall's comm"
# Per-CPU shares, cpu 0 included (pprof drops numeric labels of 0 without a unit).
run_clean "$T/cpus.txt" perf script -i "$T/perf.data" -F cpu
awk '{ gsub(/[][]/, "", $1); n[$1 + 0]++ } END { for (c in n) print c, n[c] }' "$T/cpus.txt" >"$T/percpu.txt"
[ -s "$T/percpu.txt" ] || fail "perf script shows no CPUs"
while read -r cpu n; do
	want=$(awk -v a="$n" -v b="$n_all" 'BEGIN { printf "%.2f", 100 * a / b }')
	got=$(focus_share -tagfocus="cpu=$cpu" "$T/l.pb.gz")
	echo "cpu=$cpu: perf $want%, tagfocus $got%"
	assert_range "cpu $cpu share difference" "$(awk -v a="$want" -v b="${got:-0}" 'BEGIN { d = a - b; print d < 0 ? -d : d }')" 0 0.2
done <"$T/percpu.txt"

# Filters keep exactly one process's samples.
"$BPFREC" pprof -q -i "$T/perf.data" -o "$T/pid.pb.gz" --pid "$pid" || fail "--pid failed"
run_clean "$T/pid.txt" go tool pprof -raw "$T/pid.pb.gz"
[ "$(raw_samples "$T/pid.txt")" = "$n_pid" ] || fail "--pid $pid kept $(raw_samples "$T/pid.txt") samples, want $n_pid"
assert_no_grep ' write_loop ' "$T/pid.txt" "pp_syscall's frames in a --pid $pid profile"
"$BPFREC" pprof -q -i "$T/perf.data" -o "$T/tid.pb.gz" --tid "$pid" || fail "--tid failed"
run_clean "$T/tid.txt" go tool pprof -raw "$T/tid.pb.gz"
[ "$(raw_samples "$T/tid.txt")" = "$n_pid" ] || fail "--tid $pid kept the wrong samples"
"$BPFREC" pprof -q -i "$T/perf.data" -o "$T/comm.pb.gz" --comm pp_syscall || fail "--comm failed"
run_clean "$T/comm.txt" go tool pprof -raw "$T/comm.pb.gz"
[ "$(raw_samples "$T/comm.txt")" = "$n_comm" ] || fail "--comm kept $(raw_samples "$T/comm.txt") samples, want $n_comm"
assert_no_grep ' leaf_a ' "$T/comm.txt" "pp_shares's frames in a --comm pp_syscall profile"

# Bad values are refused with a one-line hint.
if "$BPFREC" pprof -i "$T/perf.data" -o "$T/x.pb.gz" --labels pid,bogus 2>"$T/bad.err"; then
	fail "--labels bogus accepted"
fi
[ "$(wc -l <"$T/bad.err")" = 1 ] || fail "not a one-line error: $(cat "$T/bad.err")"
assert_grep 'labels' "$T/bad.err"
[ ! -e "$T/x.pb.gz" ] || fail "output written despite the error"
echo "ok"
