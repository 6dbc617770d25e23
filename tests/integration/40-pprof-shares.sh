#!/bin/bash
# bpfrec pprof on a stock `perf record -g` file: go tool pprof must show the
# same functions, shares, stacks and sample count as perf report / perf
# script on the same file, and name the main binary with its build-id.
# Then files as bpfrec's own writer makes them (tests/tools/perfdata-synth):
# exact counts in file and pipe mode, lost samples, a killed recorder's file;
# and recordings by `bpfrec record` itself, file and pipe. The profile's
# Time must be when the program ran (CLOCK_DATA, else the file's mtime).
. "$TOP/tests/integration/lib.sh"
need_tool perf linux-perf
need_tool go golang-go
export HOME=$T PPROF_TMPDIR=$T
started=$(date +%s)

perf record -q -e cpu-clock -g -o "$T/perf.data" -- "$FIX/pp_shares" 2>"$T/rec.err" ||
	{ cat "$T/rec.err" >&2; fail "perf record failed"; }
ended=$(date +%s)
run_clean "$T/report.txt" perf report -i "$T/perf.data" --stdio --no-children --sort sym
run_clean "$T/script.txt" perf script -i "$T/perf.data" -F event,ip
run_clean "$T/buildids.txt" perf buildid-list -i "$T/perf.data"

"$BPFREC" pprof -i "$T/perf.data" -o "$T/cpu.pb.gz" 2>"$T/conv.err" ||
	{ cat "$T/conv.err" >&2; fail "bpfrec pprof failed"; }
[ -s "$T/cpu.pb.gz" ] || fail "no profile written"
run_clean "$T/top.txt" go tool pprof -top -nodefraction=0 -nodecount=1000 "$T/cpu.pb.gz"
run_clean "$T/traces.txt" go tool pprof -traces "$T/cpu.pb.gz"
run_clean "$T/raw.txt" go tool pprof -raw "$T/cpu.pb.gz"

for f in leaf_a leaf_b leaf_c; do
	perf_share=$(self_share "$T/report.txt" "$f")
	pprof_share=$(flat_share "$T/top.txt" "$f")
	echo "$f: perf report $perf_share%, go tool pprof $pprof_share%"
	diff=$(awk -v a="$perf_share" -v b="$pprof_share" 'BEGIN { d = a - b; print d < 0 ? -d : d }')
	assert_range "$f share difference (points)" "$diff" 0 1.5
done
# And the shares are the fixture's (6:3:1), not just equal to each other.
assert_range "leaf_a among the leaves" "$(leaf_share "$T/top.txt" flat_share leaf_a)" 52 68
assert_range "leaf_b among the leaves" "$(leaf_share "$T/top.txt" flat_share leaf_b)" 24 36
assert_range "leaf_c among the leaves" "$(leaf_share "$T/top.txt" flat_share leaf_c)" 6 14

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

# Time: the first sample's wall-clock time (here from the file's mtime):
# within the recording, however long a slow machine took for it.
profile_time() { date -d "$(awk '/^Time:/ { print $2, $3, $4; exit }' "$1")" +%s; }
assert_range "profile time - recording start (s)" $(($(profile_time "$T/raw.txt") - started)) -5 $((ended - started + 5))

# ---- files written by bpfrec's perfdata writer ----
need_synth
stacks=("600:u:leaf_a,u:work,u:main" "300:u:leaf_b,u:work,u:main"
	"100:k:ksys_write,k:do_syscall_64,u:leaf_c,u:work,u:main")
"$SYNTH" -o "$T/synth.data" --elf "$FIX/pp_shares" --lost 7 "${stacks[@]}" || fail "perfdata-synth failed"
"$SYNTH" -o - --pipe --elf "$FIX/pp_shares" "${stacks[@]}" >"$T/synth.pipe" || fail "perfdata-synth --pipe failed"
"$BPFREC" pprof -i "$T/synth.data" -o "$T/synth.pb.gz" 2>"$T/synth.err" ||
	{ cat "$T/synth.err" >&2; fail "converting the writer's file failed"; }
assert_grep 'lost 7 samples' "$T/synth.err" "the lost samples in the summary"
"$BPFREC" pprof -q -i - -o "$T/synthp.pb.gz" <"$T/synth.pipe" || fail "converting the writer's pipe failed"
for f in synth synthp; do
	run_clean "$T/$f.top" go tool pprof -top -nodefraction=0 "$T/$f.pb.gz"
	run_clean "$T/$f.raw" go tool pprof -raw "$T/$f.pb.gz"
	[ "$(awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+:$/ { t += $1 } END { print t + 0 }' "$T/$f.raw")" = 1000 ] ||
		fail "$f: not 1000 samples"
	for want in "leaf_a 60.00%" "leaf_b 30.00%" "ksys_write 10.00%"; do
		set -- $want
		[ "$(awk -v s="$1" '$6 == s { print $2 }' "$T/$f.top")" = "$2" ] ||
			{ cat "$T/$f.top" >&2; fail "$f: $1 is not $2"; }
	done
	# leaf_c only calls into the kernel: all of its time is cum, none flat.
	awk '$6 == "leaf_c" && $1 == "0" && $5 == "10.00%" { ok = 1 } END { exit !ok }' "$T/$f.top" ||
		fail "$f: leaf_c is not a 10% caller of the kernel frames"
	assert_grep "pp_shares $bid " "$T/$f.raw" "$f: the build-id the writer recorded"
done

# A recorder killed after its checkpoint: the file holds what was checkpointed.
"$SYNTH" -o "$T/full.data" --elf "$FIX/pp_shares" --snapshot "$T/killed.data" --snapshot-at 500 \
	"${stacks[@]}" || fail "perfdata-synth --snapshot failed"
run_clean "$T/killed.script" perf script -i "$T/killed.data" -F event,ip
n_killed=$(grep -c cpu-clock "$T/killed.script")
"$BPFREC" pprof -q -i "$T/killed.data" -o "$T/killed.pb.gz" || fail "converting a killed recorder's file failed"
run_clean "$T/killed.raw" go tool pprof -raw "$T/killed.pb.gz"
n_prof=$(raw_samples "$T/killed.raw")
echo "killed recorder: perf script $n_killed samples, profile $n_prof"
[ "$n_killed" -gt 0 ] && [ "$n_killed" -lt 1000 ] && [ "$n_prof" = "$n_killed" ] ||
	fail "killed recorder's file: profile $n_prof, perf $n_killed"

# ---- recordings by bpfrec record ----
need_root
started=$(date +%s)
"$BPFREC" record -q -g -o "$T/b.data" -- "$FIX/pp_shares" >/dev/null 2>"$T/brec.err" ||
	{ cat "$T/brec.err" >&2; fail "bpfrec record failed"; }
ended=$(date +%s)
run_clean "$T/b.report" perf report -i "$T/b.data" --stdio --no-children --sort sym
run_clean "$T/b.script" perf script -i "$T/b.data" -F event
"$BPFREC" pprof -q -i "$T/b.data" -o "$T/b.pb.gz" || fail "converting bpfrec's recording failed"
run_clean "$T/b.top" go tool pprof -top -nodefraction=0 "$T/b.pb.gz"
run_clean "$T/b.raw" go tool pprof -raw "$T/b.pb.gz"
for f in leaf_a leaf_b leaf_c; do
	a=$(self_share "$T/b.report" "$f") b=$(flat_share "$T/b.top" "$f")
	echo "bpfrec record, $f: perf report $a%, go tool pprof ${b:-0}%"
	assert_range "$f share difference" "$(awk -v a="$a" -v b="${b:-0}" 'BEGIN { d = a - b; print d < 0 ? -d : d }')" 0 1.5
done
assert_range "leaf_a among the leaves (bpfrec record)" "$(leaf_share "$T/b.top" flat_share leaf_a)" 52 68
n_perf=$(grep -c cpu-clock "$T/b.script")
n_prof=$(raw_samples "$T/b.raw")
echo "bpfrec record: perf script $n_perf samples, profile $n_prof"
assert_samples "bpfrec record samples" "$n_perf" "$(fixture_cpu "$T/brec.err" pp_shares)" 4000
[ "$n_perf" = "$n_prof" ] || fail "bpfrec record: profile $n_prof, perf $n_perf"
assert_grep "^File: pp_shares$" "$T/b.top" "pp_shares is the main binary"
assert_grep "pp_shares $bid " "$T/b.raw" "the build-id bpfrec recorded"
# bpfrec writes CLOCK_DATA: the profile's time is the first sample's.
assert_range "profile time - recording start (s, CLOCK_DATA)" $(($(profile_time "$T/b.raw") - started)) -5 $((ended - started + 5))

"$BPFREC" record -q -g -o - -- "$FIX/pp_shares" 0.5 2>"$T/bpipe.err" |
	"$BPFREC" pprof -q -i - -o "$T/bp.pb.gz" || { cat "$T/bpipe.err" >&2; fail "bpfrec record -o - | bpfrec pprof -i - failed"; }
run_clean "$T/bp.top" go tool pprof -top -nodefraction=0 "$T/bp.pb.gz"
assert_range "leaf_a among the leaves (bpfrec record, pipe)" "$(leaf_share "$T/bp.top" flat_share leaf_a)" 50 70
assert_range "leaf_c among the leaves (bpfrec record, pipe)" "$(leaf_share "$T/bp.top" flat_share leaf_c)" 5 15
echo "ok"
