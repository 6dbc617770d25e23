#!/bin/bash
# Allocation profiles: a file with record --alloc's "alloc" and "inuse"
# events (written by perfdata-synth --alloc, as perfdata/events.h defines
# them) converts to one Go-style heap profile next to the cpu-clock one.
# go tool pprof shows, per function, exactly the bytes perf report sums for
# each event and the objects the samples stand for (period / size, with the
# size read from perf script's BPF string), under -sample_index=alloc_space,
# alloc_objects, inuse_space, inuse_objects; inuse_space is the default.
. "$TOP/tests/integration/lib.sh"
need_tool perf linux-perf
need_tool go golang-go
export HOME=$T PPROF_TMPDIR=$T

need_synth
RATE=524288
# leaf_a: malloc(4096), some still in use; leaf_b: calloc(64 KiB), some in
# use; leaf_c: small reallocs (one sample stands for thousands of them).
stacks=("alloc:malloc:4096:300:u:leaf_a,u:work,u:main" "alloc:calloc:65536:40:u:leaf_b,u:work,u:main"
	"alloc:realloc:24:7:u:leaf_c,u:work,u:main" "inuse:calloc:65536:25:u:leaf_b,u:work,u:main"
	"inuse:malloc:4096:2:u:leaf_a,u:work,u:main" "50:u:leaf_a,u:work,u:main")
"$SYNTH" -o "$T/heap.data" --elf "$FIX/pp_shares" --alloc $RATE "${stacks[@]}" ||
	fail "perfdata-synth --alloc failed"

# What perf reads: per event and leaf function, the summed period and the
# objects (period / size from RAW); the summed period per symbol in perf report.
run_clean "$T/script.txt" perf script -i "$T/heap.data"
awk '$1 == "pp_shares" && $6 ~ /:$/ { ev = $6; sub(/:$/, "", ev); period = $5; leaf = ""; next }
     ev != "" && leaf == "" && $1 ~ /^[0-9a-f]+$/ { leaf = $2; sub(/\+0x.*/, "", leaf)
	if (ev == "cpu-clock") { print ev, leaf, period, 0; ev = "" } next }
     /BPF string:/ && ev != "" { size = $0; sub(/.*BPF string: "[^ ]* /, "", size); size += 0
	print ev, leaf, period, period / size; ev = "" }' "$T/script.txt" >"$T/samples.txt"
awk '{ b[$1 " " $2] += $3; o[$1 " " $2] += $4 }
     END { for (k in b) printf "%s %d %.0f\n", k, b[k], o[k] }' "$T/samples.txt" | sort >"$T/perf-sums.txt"
echo "perf script: event function bytes objects"
cat "$T/perf-sums.txt"
[ "$(wc -l <"$T/perf-sums.txt")" = 6 ] || fail "expected 6 (event, function) pairs in perf script"
[ "$(awk '$1 == "alloc" || $1 == "inuse" { n++ } END { print n }' "$T/samples.txt")" = 374 ] ||
	fail "perf script does not show the 374 allocation samples with their size"

run_clean "$T/report.txt" perf report -i "$T/heap.data" --stdio --no-children -g none --sort sym -F period,sym
awk '/^# Samples: .* of event/ { ev = $NF; gsub(/\047/, "", ev) }
     $1 ~ /^[0-9]+$/ && $2 == "[.]" { print ev, $3, $1 }' "$T/report.txt" | sort >"$T/report-sums.txt"
diff <(awk '{ print $1, $2, $3 }' "$T/perf-sums.txt") "$T/report-sums.txt" >&2 ||
	fail "perf report's periods per symbol differ from perf script's"

mkdir "$T/out"
"$BPFREC" pprof -q -i "$T/heap.data" -o "$T/out/prof.pb.gz" || fail "bpfrec pprof failed"
[ "$(cd "$T/out" && ls | sort | tr '\n' ' ')" = "prof.cpu-clock.pb.gz prof.heap.pb.gz " ] ||
	fail "expected a cpu-clock and a heap profile, got: $(ls "$T/out")"
P=$T/out/prof.heap.pb.gz

run_clean "$T/raw.txt" go tool pprof -raw "$P"
assert_grep '^alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes\[dflt\]$' \
	"$T/raw.txt" "the heap sample types, inuse_space the default"
assert_grep '^PeriodType: space bytes$' "$T/raw.txt"
assert_grep "^Period: $RATE\$" "$T/raw.txt" "the sampling interval as the period"
run_clean "$T/default.txt" go tool pprof -top "$P"
assert_grep '^Type: inuse_space$' "$T/default.txt" "inuse_space is what go tool pprof shows first"

for idx in alloc_space alloc_objects inuse_space inuse_objects; do
	run_clean "$T/$idx.txt" go tool pprof -sample_index=$idx -unit=B -top -nodefraction=0 "$P"
done
echo "go tool pprof: function alloc_space alloc_objects inuse_space inuse_objects"
for fn in leaf_a leaf_b leaf_c; do
	read -r ab ao <<<"$(awk -v f=$fn '$1 == "alloc" && $2 == f { print $3, $4 }' "$T/perf-sums.txt")"
	read -r ib io <<<"$(awk -v f=$fn '$1 == "inuse" && $2 == f { print $3, $4 }' "$T/perf-sums.txt")"
	got="$(flat_value "$T/alloc_space.txt" $fn B) $(flat_value "$T/alloc_objects.txt" $fn B)"
	got="$got $(flat_value "$T/inuse_space.txt" $fn B) $(flat_value "$T/inuse_objects.txt" $fn B)"
	echo "$fn $got"
	[ "$got" = "$ab $ao ${ib:-0} ${io:-0}" ] ||
		fail "$fn: go tool pprof shows $got, perf sums to $ab $ao ${ib:-0} ${io:-0}"
done
# The CPU samples stay in their own profile.
run_clean "$T/cpu.txt" go tool pprof -raw "$T/out/prof.cpu-clock.pb.gz"
assert_grep '^samples/count cpu/nanoseconds$' "$T/cpu.txt"

# --event heap: the one heap profile, under the -o name.
"$BPFREC" pprof -q -i "$T/heap.data" -o "$T/one.pb.gz" --event heap || fail "--event heap failed"
run_clean "$T/one.txt" go tool pprof -sample_index=alloc_space -unit=B -top "$T/one.pb.gz"
[ "$(flat_value "$T/one.txt" leaf_a B)" = "$(flat_value "$T/alloc_space.txt" leaf_a B)" ] ||
	fail "--event heap: leaf_a differs"
echo "ok"
