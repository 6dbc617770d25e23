#!/bin/bash
# bpfrec flamegraph's views of the other events, read in headless chromium
# (tests/tools/fg_browser.py): one view per event and sample type, each in
# its unit, with the values perf reads from the same file:
#  - record --alloc's alloc and inuse events (perfdata-synth --alloc): the
#    heap view's bytes and objects per function, exactly perf script's sums;
#  - record --sched's sched-delay (perfdata-synth --sched): run-queue ns per
#    function, exactly perf report's periods;
#  - record --off-cpu of rec_offcpu: sleep_wait's and pipe_wait's waits as
#    perf report gives them and as the fixture measured them, and the page's
#    tid filter keeps each wait on its own thread.
. "$TOP/tests/integration/lib.sh"
need_tool perf linux-perf
need_tool chromium chromium
PY=$(debian_python3)
need_synth
OUT=$BUILD/test-output/88-flamegraph-events
rm -rf "$OUT" && mkdir -p "$OUT"
page() { # JSON HTML ARGS...: the browser's report on HTML
	local json=$1 html=$2
	shift 2
	"$PY" "$TOP/tests/tools/fg_browser.py" "$html" "$OUT" "$@" >"$json" ||
		{ cat "$json" >&2; fail "the browser run on $html failed"; }
	[ "$(jq_ "$json" "len(d['requests']) + len(d['errors'])")" = 0 ] ||
		fail "requests or errors in the page: $(jq_ "$json" "d['requests'] + d['errors']")"
}
jq_() { "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {"d": d}))' "$1" "$2"; }

# ---- alloc and inuse: bytes and objects ----
RATE=524288
"$SYNTH" -o "$T/heap.data" --elf "$FIX/pp_shares" --alloc $RATE \
	"alloc:malloc:4096:300:u:leaf_a,u:work,u:main" "alloc:calloc:65536:40:u:leaf_b,u:work,u:main" \
	"alloc:realloc:24:7:u:leaf_c,u:work,u:main" "inuse:calloc:65536:25:u:leaf_b,u:work,u:main" \
	"inuse:malloc:4096:2:u:leaf_a,u:work,u:main" "50:u:leaf_a,u:work,u:main" ||
	fail "perfdata-synth --alloc failed"
run_clean "$T/script.txt" perf script -i "$T/heap.data"
# per event and leaf: summed period (bytes) and objects (period / size from RAW), as test 57
awk '$1 == "pp_shares" && $6 ~ /:$/ { ev = $6; sub(/:$/, "", ev); period = $5; leaf = ""; next }
     ev != "" && leaf == "" && $1 ~ /^[0-9a-f]+$/ { leaf = $2; sub(/\+0x.*/, "", leaf)
	if (ev == "cpu-clock") { ev = "" } next }
     /BPF string:/ && ev != "" { size = $0; sub(/.*BPF string: "[^ ]* /, "", size); size += 0
	b[ev " " leaf] += period; o[ev " " leaf] += period / size; ev = "" }
     END { for (k in b) printf "%s %d %.0f\n", k, b[k], o[k] }' "$T/script.txt" | sort >"$T/perf-sums.txt"
cat "$T/perf-sums.txt"
"$BPFREC" flamegraph -q -i "$T/heap.data" -o "$T/heap.html" || fail "bpfrec flamegraph (heap) failed"
page "$T/heap.json" "$T/heap.html" --names leaf_a,leaf_b,leaf_c --all-views
for label in "heap: alloc_space (bytes)" "heap: alloc_objects (count)" "heap: inuse_space (bytes)" \
	"heap: inuse_objects (count)" "cpu-clock: samples (count)"; do
	[ "$(jq_ "$T/heap.json" "'$label' in d['views']")" = True ] || fail "no view '$label'"
done
echo "page: function alloc_space alloc_objects inuse_space inuse_objects"
for fn in leaf_a leaf_b leaf_c; do
	read -r ab ao <<<"$(awk -v f=$fn '$1 == "alloc" && $2 == f { print $3, $4 }' "$T/perf-sums.txt")"
	read -r ib io <<<"$(awk -v f=$fn '$1 == "inuse" && $2 == f { print $3, $4 }' "$T/perf-sums.txt")"
	got=""
	for t in alloc_space alloc_objects inuse_space inuse_objects; do
		unit=bytes; case $t in *objects) unit=count ;; esac
		got="$got $(jq_ "$T/heap.json" "int(d['views']['heap: $t ($unit)']['values']['$fn'])")"
	done
	echo "$fn$got (perf: $ab $ao ${ib:-0} ${io:-0})"
	[ "$got" = " $ab $ao ${ib:-0} ${io:-0}" ] || fail "$fn: the page shows$got, perf sums to $ab $ao ${ib:-0} ${io:-0}"
done
[ "$(jq_ "$T/heap.json" "int(d['views']['cpu-clock: samples (count)']['values']['leaf_a'])")" = 50 ] ||
	fail "the cpu-clock view does not have leaf_a's 50 samples"

# ---- sched-delay: run-queue nanoseconds ----
"$SYNTH" -o "$T/sched.data" --elf "$FIX/pp_shares" --sched \
	"sched:preempted:1500000:40:u:leaf_a,u:work,u:main" "sched:woken:250000:30:u:leaf_a,u:work,u:main" \
	"sched:woken:3000000:7:u:leaf_b,u:work,u:main" "sched:preempted:777:11:k:schedule,u:leaf_c,u:work,u:main" \
	"sched:woken:123456:5:k:schedule,u:leaf_c,u:work,u:main" "20:u:leaf_a,u:work,u:main" ||
	fail "perfdata-synth --sched failed"
run_clean "$T/sreport.txt" perf report -i "$T/sched.data" --stdio --no-children -g none --sort sym -F period,sym
awk '/^# Samples: .* of event/ { ev = $NF; gsub(/\047/, "", ev) }
     ev == "sched-delay" && $1 ~ /^[0-9]+$/ && $2 ~ /^\[/ { print $3, $1 }' "$T/sreport.txt" >"$T/sched-sums.txt"
cat "$T/sched-sums.txt"
"$BPFREC" flamegraph -q -i "$T/sched.data" -o "$T/sched.html" || fail "bpfrec flamegraph (sched) failed"
page "$T/sched.json" "$T/sched.html" --names leaf_a,leaf_b,leaf_c,schedule --all-views
V="sched-delay: runq_delay (nanoseconds)"
for fn in leaf_a leaf_b schedule; do
	want=$(awk -v f=$fn '$1 == f { print $2 }' "$T/sched-sums.txt")
	got=$(jq_ "$T/sched.json" "int(d['views']['$V']['values']['$fn'])")
	echo "sched-delay $fn: page $got ns, perf report $want ns"
	[ "$got" = "$want" ] || fail "sched-delay $fn: page $got ns, perf report $want ns"
done
# leaf_c's waits are all in the kernel's schedule above it.
[ "$(jq_ "$T/sched.json" "int(d['views']['$V']['values']['leaf_c'])")" = "$(awk '$1 == "schedule" { print $2 }' "$T/sched-sums.txt")" ] ||
	fail "leaf_c's total is not its schedule frames'"

# ---- off-CPU: a real recording ----
need_root
need_kernel_for --off-cpu
"$BPFREC" record -q -F 999 --call-graph fp --off-cpu -o "$T/off.data" -- "$FIX/rec_offcpu" 20 50 2>"$T/rec.err" ||
	{ grep -v '^libbpf' "$T/rec.err"; fail "bpfrec record --off-cpu failed"; }
want_sleep=$(sed -n 's/^rec_offcpu: sleep_wait \([0-9.]*\) ms.*/\1/p' "$T/rec.err")
run_clean "$T/oreport.txt" perf report -i "$T/off.data" --stdio --children --sort sym -g none
children_ms() { # EVENT SYMBOL: ms of SYMBOL's children in EVENT (test 50)
	awk -v ev="$1" -v s="$2" '
		/of event / { cur = ($0 ~ "of event ." ev ".$") }
		cur && /Event count/ { total = $NF }
		cur && $NF == s && $1 ~ /%$/ { sub(/%/, "", $1); pct = $1 }
		END { printf "%.3f\n", pct * total / 100 / 1e6 }' "$T/oreport.txt"
}
"$BPFREC" flamegraph -q -i "$T/off.data" -o "$T/off.html" || fail "bpfrec flamegraph (off-CPU) failed"
# The per-thread figures are the off-CPU view's (the page opens on the
# first event's, cpu-clock, where the waits have a sample only by chance).
V="offcpu-time: off_cpu (nanoseconds)"
page "$T/off.json" "$T/off.html" --names sleep_wait,pipe_wait,spin_work --all-views --each-tid \
	--view-label "$V"
for fn in sleep_wait pipe_wait; do
	got=$(jq_ "$T/off.json" "round(d['views']['$V']['values']['$fn'] / 1e6, 3)")
	want=$(children_ms offcpu-time $fn)
	echo "offcpu-time $fn: page $got ms, perf report $want ms"
	# perf report rounds shares to 0.01 %
	assert_range "$fn: page / perf report" "$(awk -v a="$got" -v b="$want" 'BEGIN { print b ? a / b : 0 }')" 0.99 1.01
done
echo "fixture: sleep_wait $want_sleep ms"
at_least "page sleep_wait ms" "$(jq_ "$T/off.json" "d['views']['$V']['values']['sleep_wait'] / 1e6")" 1000
# Filters: with the tid filter on the thread that slept, sleep_wait has all
# of its time and pipe_wait none (the page's views are recomputed per filter).
"$PY" - "$T/off.json" <<'PY' || fail "the tid filter does not keep each wait on its own thread"
import json, sys
d = json.load(open(sys.argv[1]))
per = d["per_tid"]
tot = d["values"]
sl = [t for t, v in per.items() if v["sleep_wait"] > 0]
pi = [t for t, v in per.items() if v["pipe_wait"] > 0]
print("tid filter: sleep_wait on", sl, "pipe_wait on", pi, "of", len(per), "threads")
assert len(sl) == 1 and len(pi) == 1 and sl != pi
assert per[sl[0]]["sleep_wait"] == tot["sleep_wait"] and per[sl[0]]["pipe_wait"] == 0
PY
echo "ok"
