#!/bin/bash
# Run-queue waits: a file with record --sched's "sched-delay" event (written
# by perfdata-synth --sched, as perfdata/events.h defines it) converts to a
# profile of runq_delay/nanoseconds with each wait's reason as the string
# label "reason", next to the cpu-clock profile. go tool pprof shows, per
# function and per reason (-tagfocus, -tags), exactly the nanoseconds the
# synthesized waits add up to; perf script (every wait with its BPF string)
# and perf report (per symbol) read the same file without a warning and
# agree on the sums. A pipe converts to the same profile.
. "$TOP/tests/integration/lib.sh"
need_tool perf linux-perf
need_tool go golang-go
export HOME=$T PPROF_TMPDIR=$T

need_synth
# sched:REASON:NS:COUNT:FRAMES (leaf first). leaf_a waits mostly after
# preemption, leaf_b after wake-ups; the waits through leaf_c stop in the
# kernel's schedule(), for both reasons.
stacks=("sched:preempted:1500000:40:u:leaf_a,u:work,u:main" "sched:woken:250000:30:u:leaf_a,u:work,u:main"
	"sched:woken:3000000:7:u:leaf_b,u:work,u:main" "sched:preempted:777:11:k:schedule,u:leaf_c,u:work,u:main"
	"sched:woken:123456:5:k:schedule,u:leaf_c,u:work,u:main" "20:u:leaf_a,u:work,u:main")
"$SYNTH" -o "$T/sched.data" --elf "$FIX/pp_shares" --sched "${stacks[@]}" ||
	fail "perfdata-synth --sched failed"

# The truth, from what was synthesized: ns per (leaf function, reason).
printf '%s\n' "${stacks[@]}" | awk -F: '$1 == "sched" { leaf = $6; sub(/,.*/, "", leaf)
	t[leaf " " $2] += $3 * $4; n += $4 }
	END { for (k in t) print k, t[k]; print "total waits", n }' | sort >"$T/truth.txt"
echo "synthesized: function reason ns"
cat "$T/truth.txt"
truth() { awk -v k="$1 $2" '$1 " " $2 == k { v = $3 } END { print v + 0 }' "$T/truth.txt"; }
# ns per function (any reason) or per reason (any function) in the truth
truth_fn() { awk -v f="$1" '$1 == f && $2 != "waits" { s += $3 } END { print s + 0 }' "$T/truth.txt"; }
truth_reason() { awk -v r="$1" '$2 == r { s += $3 } END { print s + 0 }' "$T/truth.txt"; }

# What perf reads: every wait with its leaf, period and BPF string.
run_clean "$T/script.txt" perf script -i "$T/sched.data"
awk '$1 == "pp_shares" { ev = $6; period = $5; leaf = ""; next }
     ev == "sched-delay:" && leaf == "" && $1 ~ /^[0-9a-f]+$/ { leaf = $2; sub(/\+0x.*/, "", leaf); next }
     ev == "sched-delay:" && /BPF string:/ { r = $0; sub(/.*BPF string: "/, "", r); sub(/[ "].*/, "", r)
	print leaf, r, period; ev = "" }' "$T/script.txt" >"$T/waits.txt"
[ "$(wc -l <"$T/waits.txt")" = "$(truth total waits)" ] ||
	fail "perf script shows $(wc -l <"$T/waits.txt") waits with a reason, $(truth total waits) were written"
awk '{ s[$1 " " $2] += $3 } END { for (k in s) print k, s[k] }' "$T/waits.txt" | sort >"$T/script-sums.txt"
diff <(grep -v '^total ' "$T/truth.txt") "$T/script-sums.txt" >&2 ||
	fail "perf script's ns per (function, reason) differ from what was synthesized"

run_clean "$T/report.txt" perf report -i "$T/sched.data" --stdio --no-children -g none --sort sym -F period,sym
awk '/^# Samples: .* of event/ { ev = $NF; gsub(/\047/, "", ev) }
     ev == "sched-delay" && $1 ~ /^[0-9]+$/ && $2 ~ /^\[[.k]\]$/ { print $3, $1 }' "$T/report.txt" |
	sort >"$T/report-sums.txt"
awk '{ s[$1] += $3 } END { for (f in s) print f, s[f] }' "$T/waits.txt" | sort >"$T/script-fn.txt"
diff "$T/script-fn.txt" "$T/report-sums.txt" >&2 ||
	fail "perf report's sched-delay periods per symbol differ from perf script's"

mkdir "$T/out"
"$BPFREC" pprof -q -i "$T/sched.data" -o "$T/out/prof.pb.gz" || fail "bpfrec pprof failed"
[ "$(cd "$T/out" && ls | sort | tr '\n' ' ')" = "prof.cpu-clock.pb.gz prof.sched-delay.pb.gz " ] ||
	fail "expected a cpu-clock and a sched-delay profile, got: $(ls "$T/out")"
P=$T/out/prof.sched-delay.pb.gz

run_clean "$T/raw.txt" go tool pprof -raw "$P"
assert_grep '^samples/count runq_delay/nanoseconds$' "$T/raw.txt" "the sched-delay sample types"
assert_grep '^PeriodType: runq_delay nanoseconds$' "$T/raw.txt"
assert_grep 'reason:\[preempted\]' "$T/raw.txt" "a reason label on the samples"

run_clean "$T/top.txt" go tool pprof -top -unit=ns -nodefraction=0 "$P"
assert_grep '^Type: runq_delay$' "$T/top.txt"
for r in preempted woken; do
	run_clean "$T/top-$r.txt" go tool pprof -tagfocus="reason=^$r\$" -top -unit=ns -nodefraction=0 "$P"
done
echo "go tool pprof: function all preempted woken (ns)"
for fn in leaf_a leaf_b schedule; do
	got="$(flat_value "$T/top.txt" $fn ns) $(flat_value "$T/top-preempted.txt" $fn ns) $(flat_value "$T/top-woken.txt" $fn ns)"
	want="$(truth_fn $fn) $(truth $fn preempted) $(truth $fn woken)"
	echo "$fn $got"
	[ "$got" = "$want" ] || fail "$fn: go tool pprof shows $got ns, the waits add up to $want"
done
[ "$(flat_value "$T/top.txt" leaf_c ns)" = 0 ] || fail "leaf_c called schedule(): no wait of its own"

# Per reason over all functions: -tags.
run_clean "$T/tags.txt" go tool pprof -tags -unit=ns "$P"
for r in preempted woken; do
	got=$(awk -v r="$r" '$NF == r { v = $1; sub(/ns$/, "", v); printf "%.0f", v }' "$T/tags.txt")
	echo "reason $r: $got ns"
	[ "$got" = "$(truth_reason $r)" ] || fail "-tags: $r is $got ns, the waits add up to $(truth_reason $r)"
done

# The CPU samples keep their own profile, without a reason.
run_clean "$T/cpu.txt" go tool pprof -raw "$T/out/prof.cpu-clock.pb.gz"
assert_grep '^samples/count cpu/nanoseconds$' "$T/cpu.txt"
assert_no_grep 'reason:' "$T/cpu.txt" "a reason label on CPU samples"

# A pipe (what record -o - writes) gives the same waits.
"$SYNTH" -o - --pipe --elf "$FIX/pp_shares" --sched "${stacks[@]}" |
	"$BPFREC" pprof -q -i - -o "$T/pipe.pb.gz" --event sched-delay || fail "bpfrec pprof -i - failed"
run_clean "$T/pipe-tags.txt" go tool pprof -tags -unit=ns "$T/pipe.pb.gz"
diff "$T/tags.txt" "$T/pipe-tags.txt" >&2 || fail "the pipe's reasons differ from the file's"
echo "ok"
