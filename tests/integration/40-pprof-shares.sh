#!/bin/bash
# bpfrec pprof on a stock `perf record -g` file: go tool pprof must show the
# same functions, shares, stacks and sample count as perf report / perf
# script on the same file, and name the main binary with its build-id.
. "$TOP/tests/integration/lib.sh"
command -v perf >/dev/null || skip "needs perf (linux-perf)"
command -v go >/dev/null || skip "needs go tool pprof (golang-go)"
export HOME=$T PPROF_TMPDIR=$T

perf record -q -e cpu-clock -g -o "$T/perf.data" -- "$FIX/pp_shares" 2>"$T/rec.err" ||
	{ cat "$T/rec.err" >&2; fail "perf record failed"; }
run_clean "$T/report.txt" perf report -i "$T/perf.data" --stdio --no-children --sort sym
run_clean "$T/script.txt" perf script -i "$T/perf.data" -F event,ip
run_clean "$T/buildids.txt" perf buildid-list -i "$T/perf.data"

"$BPFREC" pprof -i "$T/perf.data" -o "$T/cpu.pb.gz" 2>"$T/conv.err" ||
	{ cat "$T/conv.err" >&2; fail "bpfrec pprof failed"; }
[ -s "$T/cpu.pb.gz" ] || fail "no profile written"
run_clean "$T/top.txt" go tool pprof -top -nodefraction=0 -nodecount=1000 "$T/cpu.pb.gz"
run_clean "$T/traces.txt" go tool pprof -traces "$T/cpu.pb.gz"
run_clean "$T/raw.txt" go tool pprof -raw "$T/cpu.pb.gz"

# flat% of a function in `go tool pprof -top` (the name is the 6th field).
flat_share() {
	awk -v s="$2" '$6 == s && $2 ~ /%$/ { sub(/%/, "", $2); t += $2 } END { printf "%.2f\n", t + 0 }' "$1"
}

for f in leaf_a leaf_b leaf_c; do
	perf_share=$(self_share "$T/report.txt" "$f")
	pprof_share=$(flat_share "$T/top.txt" "$f")
	echo "$f: perf report $perf_share%, go tool pprof $pprof_share%"
	diff=$(awk -v a="$perf_share" -v b="$pprof_share" 'BEGIN { d = a - b; print d < 0 ? -d : d }')
	assert_range "$f share difference (points)" "$diff" 0 1.5
done
# And the shares are the fixture's (6:3:1), not just equal to each other.
assert_range "leaf_a share" "$(flat_share "$T/top.txt" leaf_a)" 52 68
assert_range "leaf_b share" "$(flat_share "$T/top.txt" leaf_b)" 24 36
assert_range "leaf_c share" "$(flat_share "$T/top.txt" leaf_c)" 6 14

# Stacks: every leaf is called by work, called by main.
for f in leaf_a leaf_b leaf_c; do
	awk -v leaf="$f" '
		/^-----/ { if (n >= 3 && s[1] == leaf && s[2] == "work" && s[3] == "main") ok = 1; n = 0; next }
		NF { if ($1 ~ /^[0-9.]+[a-z]*s$/) { n = 0; s[++n] = $2 } else s[++n] = $1 }
		END { if (n >= 3 && s[1] == leaf && s[2] == "work" && s[3] == "main") ok = 1; exit !ok }' "$T/traces.txt" || { head -40 "$T/traces.txt" >&2; fail "no $f <- work <- main trace"; }
done

# Every sample is in the profile: the sum of samples/count equals perf script's count.
nsamples=$(grep -c cpu-clock "$T/script.txt")
nprof=$(awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+:$/ { t += $1 } END { print t + 0 }' "$T/raw.txt")
echo "samples: perf script $nsamples, profile $nprof"
[ "$nsamples" -gt 1000 ] || fail "only $nsamples samples recorded"
[ "$nsamples" = "$nprof" ] || fail "profile has $nprof samples, perf script $nsamples"

# Sample types, period type and the main binary with its recorded build-id.
assert_grep '^samples/count cpu/nanoseconds' "$T/raw.txt" "sample types"
assert_grep '^PeriodType: cpu nanoseconds' "$T/raw.txt" "period type"
assert_grep '^Duration: ' "$T/top.txt" "duration"
bid=$(awk '$2 ~ /pp_shares$/ { print $1 }' "$T/buildids.txt")
[ -n "$bid" ] || fail "perf buildid-list has no pp_shares"
assert_grep "^File: pp_shares$" "$T/top.txt" "pp_shares is the main binary"
assert_grep "^Build ID: $bid$" "$T/top.txt" "the main binary's build-id"
# The kernel is a mapping of its own.
assert_grep '\[kernel\.kallsyms\]' "$T/raw.txt" "kernel mapping"
echo "ok"
