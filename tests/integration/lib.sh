# Sourced by every integration test (bash). The runner sets BUILD and TOP.
# Conventions: exit 0 = pass, 77 = skipped (say why on the last line), else fail.
set -euo pipefail
: "${BUILD:?run through tests/run.sh}" "${TOP:?run through tests/run.sh}"
BPFREC=$BUILD/bpfrec
FIX=$BUILD/fixtures
T=$(mktemp -d /tmp/bpfrec-test.XXXXXX)
trap 'rm -rf "$T"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "$*"; exit 77; }
need_root() { [ "$(id -u)" = 0 ] || skip "needs root (BPF)"; }
# need_kernel_for RECORD-OPTION...: skip, saying which Linux version is needed,
# where bpfrec refuses these options on this kernel (recorder/kfeatures.h;
# the table in Documentation/bpfrec-record.md). The options are checked
# before the command is, so a command that does not exist costs nothing.
need_kernel_for() {
	local msg
	msg=$(kernel_refuses "$@") && skip "$msg"
	return 0
}
# wait_until PID CMD...: run CMD every 0.1 s until it succeeds, while PID
# lives, 300 s at most (a hang, not a slow machine: under an emulated CPU
# loading the programs alone takes 10-20 s). True when CMD succeeded.
wait_until() {
	local pid=$1 end=$((SECONDS + 300))
	shift
	# Counted in wall time: under an emulated CPU CMD itself may take a second.
	while [ $SECONDS -lt $end ]; do
		"$@" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	"$@"
}
# kernel_refuses RECORD-OPTION...: true, printing bpfrec's one-line
# refusal, where this kernel cannot record these options.
kernel_refuses() {
	local msg
	msg=$("$BPFREC" record "$@" -o "$T/.kernel-probe.data" -- /nonexistent/bpfrec-probe 2>&1)
	printf '%s\n' "$msg" | grep -m1 'needs Linux'
}
# need_tool CMD PACKAGE: a missing tool is a failure (tools/deps.sh installs it).
need_tool() {
	command -v "$1" >/dev/null ||
		fail "$1 is not installed: run 'sh tools/deps.sh test' (Debian package $2)"
}

# need_synth: SYNTH, the synthetic perf.data writer (tests/tools/perfdata-synth);
# not built is a failure.
need_synth() {
	SYNTH=$BUILD/tests/tools/perfdata-synth
	[ -x "$SYNTH" ] || fail "$SYNTH is not built: run 'make fixtures'"
}

# run_clean OUT CMD...: run a reader; its stdout goes to OUT; anything on
# stderr (a perf warning about our file) fails the test.
run_clean() {
	local out=$1; shift
	if ! "$@" >"$out" 2>"$T/stderr"; then
		cat "$T/stderr" >&2
		fail "command failed: $*"
	fi
	if [ -s "$T/stderr" ]; then
		cat "$T/stderr" >&2
		fail "warnings on stderr from: $*"
	fi
}

# assert_grep PATTERN FILE [what]
assert_grep() {
	grep -qE -- "$1" "$2" || { echo "--- $2:" >&2; head -n 60 "$2" >&2; fail "${3:-expected /$1/ in $2}"; }
}
assert_no_grep() {
	if grep -qE -- "$1" "$2"; then grep -nE -- "$1" "$2" | head >&2; fail "${3:-unexpected /$1/ in $2}"; fi
}
# assert_range NAME VALUE MIN MAX (numbers may be decimals)
assert_range() {
	awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v >= lo && v <= hi) }' ||
		fail "$1 = $2, expected between $3 and $4"
}

# Self share (percent) of a symbol in `perf report --stdio --no-children` output.
self_share() { # FILE SYMBOL
	awk -v s="$2" '$NF == s && $1 ~ /%$/ { sub(/%/, "", $1); t += $1 } END { printf "%.2f\n", t + 0 }' "$1"
}
# Flat share (percent) of a function in `go tool pprof -top` output (the name is the 6th field).
flat_share() { # FILE FUNCTION
	awk -v s="$2" '$6 == s && $2 ~ /%$/ { sub(/%/, "", $2); t += $2 } END { printf "%.2f\n", t + 0 }' "$1"
}
# flat_value FILE FUNCTION UNIT: the flat value of FUNCTION in `go tool
# pprof -top -unit=UNIT` output (B, ns...), the unit dropped; 0 when it is
# not listed (pprof leaves out functions without a value).
flat_value() {
	awk -v s="$2" -v u="$3" '$6 == s { v = $1; sub(u "$", "", v) } END { print v == "" ? 0 : v }' "$1"
}
# cum_value FILE FUNCTION UNIT: the same for the cum value (`-top -cum`).
cum_value() {
	awk -v s="$2" -v u="$3" '$6 == s { v = $4; sub(u "$", "", v) } END { print v == "" ? 0 : v }' "$1"
}
# raw_samples FILE: the samples in `go tool pprof -raw` output (of a count
# profile: the first value of each sample, summed).
raw_samples() {
	awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+:$/ { t += $1 } END { print t + 0 }' "$1"
}
# leaf_share FILE GETTER LEAF: LEAF's share (percent) among leaf_a, leaf_b
# and leaf_c, each read from FILE with GETTER (self_share, flat_share). The fixtures fix the leaves' ratio (6:3:1); the share of
# everything else (start-up, the machine's interrupts and softirqs in the
# process's time: 40 % on a loaded VM, for perf as for us) is not theirs.
leaf_share() {
	awk -v v="$($2 "$1" "$3")" -v a="$($2 "$1" leaf_a)" -v b="$($2 "$1" leaf_b)" -v c="$($2 "$1" leaf_c)" \
		'BEGIN { t = a + b + c; printf "%.2f\n", t ? 100 * v / t : 0 }'
}
# report_samples REPORT [EVENT]: the sample count in the first "# Samples:"
# line of a `perf report --stdio` REPORT (of EVENT's, when given). perf
# prints large counts in thousands or millions, truncated ("8K" for 8,000
# to 8,999): those give the lower bound, the count they stand for at least.
report_samples() {
	awk -v ev="${2-}" '/^# Samples: / && (ev == "" || index($0, "\047" ev "\047")) {
		n = $3; m = 1
		if (n ~ /K$/) m = 1000; else if (n ~ /M$/) m = 1000000; else if (n ~ /G$/) m = 1000000000
		sub(/[KMG]$/, "", n)
		if (n !~ /^[0-9]+$/) exit 1
		print n * m; exit
	}' "$1"
}
# assert_sampled NAME SHARE N MIN MAX: a share (percent) measured from N
# samples within [MIN, MAX], widened to four standard deviations of a
# binomial share (plus 2 points) where N is small: a slow timer gives few
# samples (400 on a loaded machine), and the range is about sampling, not
# the machine.
assert_sampled() {
	local name=$1 share=$2 n=$3 lo=$4 hi=$5
	read -r lo hi < <(awk -v lo="$lo" -v hi="$hi" -v n="$n" 'BEGIN {
		m = (lo + hi) / 2; q = m / 100; w = n ? 400 * sqrt(q * (1 - q) / n) + 2 : 100
		if (m - w < lo) lo = m - w; if (m + w > hi) hi = m + w; print lo, hi }')
	assert_range "$name ($n samples)" "$share" "$lo" "$hi"
}
# assert_leaf NAME REPORT LEAF MIN MAX: LEAF's share among the fixture's
# leaves in a `perf report --stdio --no-children` REPORT (leaf_share with
# self_share) within [MIN, MAX] as assert_sampled takes it, from the
# leaves' samples: the report's "# Samples:" times their share of them.
assert_leaf() {
	local name=$1 file=$2 leaf=$3 lo=$4 hi=$5 n
	n=$(awk -v t="$(report_samples "$file")" \
		-v a="$(self_share "$file" leaf_a)" -v b="$(self_share "$file" leaf_b)" \
		-v c="$(self_share "$file" leaf_c)" 'BEGIN { printf "%d\n", t * (a + b + c) / 100 }')
	assert_sampled "$name, leaves" "$(leaf_share "$file" self_share "$leaf")" "$n" "$lo" "$hi"
}
# user_share FILE SYMBOL: SYMBOL's self share (percent) among the user-space
# entries ([.]) of `perf report --stdio --no-children`: the kernel's part of
# a spinning process is the machine's interrupts, not the fixture's work.
user_share() {
	awk -v s="$2" '$1 ~ /%$/ && / \[\.\] / { p = $1; sub(/%/, "", p); u += p; if ($NF == s) t += p }
		END { printf "%.2f\n", u ? 100 * t / u : 0 }' "$1"
}
# Children share (percent) of a symbol in `perf report --stdio --children -g none` output,
# summed over every object that has a symbol of that name (python3's _start and
# ld.so's _start are two lines to perf, one function to go tool pprof -top);
# empty when no line names it.
children_of() { # FILE SYMBOL
	awk -v s="$2" '$NF == s && $1 ~ /%$/ { sub(/%/, "", $1); t += $1; n++ }
		END { if (n) printf "%.2f\n", t }' "$1"
}

# fixture_cpu FILE NAME: the CPU seconds fixture NAME reported in FILE
# ("NAME: cpu SECONDS s", tests/fixtures/cpu_budget.h); empty if it did not.
fixture_cpu() { sed -n "s/^$2: cpu \([0-9.]*\) s\$/\1/p" "$1" | tail -n 1; }

# fixture_tid FILE NAME: the thread id fixture thread NAME reported in FILE
# ("NAME: tid N", as py_tree.py and py_wait.py print it); empty if it did not.
fixture_tid() { sed -n "s/^$2: tid \([0-9]*\)\$/\1/p" "$1"; }

# own_frames SCRIPT EVENT OUT PYFILE NAME_A NAME_B [LABEL]: in SCRIPT (perf script
# -F tid[,event],ip,sym), the fixture's threads NAME_A and NAME_B (their tids
# as it printed them in OUT, fixture_tid) each run their own function of the
# same name in PYFILE: a stack of thread A holds " NAME_A (PYFILE)" as perf
# prints a Python frame, B's its own. EVENT: only its samples ("" with no
# event field: all). True when each thread has samples, >= 90% in its own
# function (of its samples in the eval loop, _PyEval_EvalFrameDefault), none
# in the other's (of all); prints the counts (after "LABEL: ").
own_frames() {
	local a b
	a=$(fixture_tid "$3" "$5")
	b=$(fixture_tid "$3" "$6")
	[ -n "$a" ] && [ -n "$b" ] || { echo "the fixture did not say the tids of $5 and $6"; return 1; }
	awk -v ev="$2" -v a="$a" -v fa=" $5 ($4)" -v b="$b" -v fb=" $6 ($4)" -v label="${7:-}" '
		BEGIN { RS = "" }
		{ split($0, l, "\n"); split(l[1], f, " ") }
		(ev == "" || f[2] == ev ":") && (f[1] == a || f[1] == b) {
			ha = index($0, fa) > 0; hb = index($0, fb) > 0
			bad += f[1] == a ? hb : ha
			# The share counts samples in the eval loop: a thread starting
			# or exiting runs no Python (on the VMs 9p root, pthread_exit
			# loading libgcc_s took a quarter of a thread), and a walk that
			# found no frames still shows the loop, so it still fails.
			if (!index($0, " _PyEval_EvalFrameDefault")) { out++; next }
			if (f[1] == a) { na++; sa += ha } else { nb++; sb += hb } }
		END { printf "%s%s samples in the eval loop: thread %s %d of %d in%s, thread %s %d of %d in%s, %d crossed (of all), %d outside the loop\n",
			     label == "" ? "" : label ": ", ev == "" ? "all" : ev, a, sa, na, fa, b, sb, nb, fb,
			     bad, out
		      exit !(bad == 0 && na > 0 && nb > 0 && sa >= 0.9 * na && sb >= 0.9 * nb) }' "$1"
}

# steal_ns: the machine's steal time so far, all CPUs, in ns (/proc/stat):
# time the hypervisor gave this machine's CPUs to something else while a
# thread here counted as running on one. A fixture's clocks include it, a
# recorder cannot see it; an expectation taken from those clocks has to
# leave out what was stolen over the recording (0 on bare metal).
steal_ns() { awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" { printf "%.0f\n", $9 * 1e9 / hz }' /proc/stat; }

# timer_hz HZ: the cpu-clock sample rate this machine delivers when HZ is
# asked, measured by perf record on pp_shares in this test (once per HZ).
# Some virtual machines fire a guest's timers far less often than asked
# (about 330 Hz whatever the request, seen in CI); perf loses the same
# samples there as we do, so the machine's rate, not HZ, is what a
# recorder can be held to.
timer_hz() {
	local hz=$1 cache="$T/.timer-hz.$1" n cpu
	if [ ! -s "$cache" ]; then
		perf record -q -e cpu-clock -F "$hz" -o "$T/.timer.data" -- "$FIX/pp_shares" 0.3 \
			>/dev/null 2>"$T/.timer.err" || { cat "$T/.timer.err" >&2; fail "perf record (timer calibration) failed"; }
		n=$(perf script -i "$T/.timer.data" -F event 2>/dev/null | grep -c cpu-clock || true)
		cpu=$(fixture_cpu "$T/.timer.err" pp_shares)
		[ -n "$cpu" ] || fail "timer calibration: pp_shares did not report its CPU time"
		awk -v n="$n" -v c="$cpu" -v hz="$hz" 'BEGIN { r = n / c; printf "%d\n", r < hz ? r : hz }' >"$cache"
		rm -f "$T/.timer.data"
	fi
	cat "$cache"
}

# assert_samples WHAT COUNT CPU_SECONDS HZ: a cpu-clock sample count against
# the CPU time the fixture measured itself: never above HZ (+15 %), and at
# least a quarter of what this machine's timer delivered to perf for HZ in this
# test (timer_hz). A loaded VM's rate moves from second to second (perf got
# 1,619 Hz of 4,000 in one calibration and 1,352 in the recording right
# after; 482 of 999, then 239), hence a quarter; a recorder sampling at a
# tenth of the rate, or losing most samples, still fails, and losses are
# counted exactly elsewhere (test 60). Running under perf record at the same
# time is no reference either: two samplers on one task move each other's
# samples.
assert_samples() {
	[ -n "$3" ] || fail "$1: the fixture did not report its CPU time"
	local rate
	rate=$(timer_hz "$4")
	assert_range "$1 (fixture used $3 s of CPU, at $4 Hz; perf got $rate Hz here)" "$2" \
		"$(awk -v c="$3" -v f="$rate" 'BEGIN { printf "%d", c * f * 0.25 }')" \
		"$(awk -v c="$3" -v f="$4" 'BEGIN { printf "%d", c * f * 1.15 + 5 }')"
}

# kill9_recording FILE MINBYTES OPTS...: `bpfrec record -q OPTS -o FILE` in
# the background, killed with SIGKILL a second after FILE passed MINBYTES.
# perf report and perf script must then read FILE without a warning,
# rec_sleepspin's late_spin (left running by the caller) must be in it, and
# its samples must cover the recording up to about a second before the kill:
# the last sample's time against the monotonic clock at the kill, at most
# 1.1 s (a sample waits up to 1 s for its process's tables, rounds come
# every 0.1 s) plus two of the recorder's rounds as this run measured them
# (the file is written at each round's end: the longest step between two
# writes seen before the kill, tens of ms here, a second and more on an
# emulated CPU), plus 0.5 s. How long a loaded machine took to start the
# recording is not what this checks.
# size_over FILE BYTES: FILE is there and larger than BYTES.
size_over() { [ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -gt "$2" ]; }
kill9_recording() {
	local data=$1 min=$2 start killed killed_mono rec first last covered ran gap
	shift 2
	start=$(date +%s.%N)
	"$BPFREC" record -q "$@" -o "$data" & rec=$!
	wait_until $rec size_over "$data" "$min" || fail "$data never passed $min bytes"
	# A second of recording at least, until two more writes of the file were
	# seen (an emulated CPU on a busy host may take over a second a round;
	# 60 s without them is a recorder that stopped writing), their times kept.
	local t0 t now writes= seen=0 last
	t0=$(date +%s.%N)
	last=$(stat -c %.6Y "$data")
	while :; do
		now=$(stat -c %.6Y "$data")
		writes="$writes $now"
		[ "$now" != "$last" ] && seen=$((seen + 1)) && last=$now
		t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
		awk -v t="$t" -v s="$seen" 'BEGIN { exit !((t >= 1 && s >= 2) || t >= 60) }' && break
		sleep 0.02
	done
	[ "$seen" -ge 2 ] || fail "$data was written $seen times in 60 s of recording"
	kill -9 $rec
	wait $rec 2>/dev/null || true
	killed=$(date +%s.%N)
	# Sample times are CLOCK_MONOTONIC; /proc/timer_list says where it is now.
	killed_mono=$(awk '/^now at/ { printf "%.6f\n", $3 / 1e9; exit }' /proc/timer_list)
	# The longest step between two writes seen.
	local step
	step=$(echo "$writes" | tr ' ' '\n' | awk 'NF { if (n && $1 != p) { d = $1 - p; if (d > m) m = d } p = $1; n++ }
		END { print m + 0 }')
	run_clean "$T/kill9.report" perf report -i "$data" --stdio --no-children -g none --sort comm,sym
	assert_grep 'rec_sleepspin +\[\.\] late_spin$' "$T/kill9.report" "late_spin missing after kill -9"
	run_clean "$T/kill9.times" perf script -i "$data" -F time
	first=$(head -n 1 "$T/kill9.times" | tr -d ' :') last=$(tail -n 1 "$T/kill9.times" | tr -d ' :')
	covered=$(awk -v a="$first" -v b="$last" 'BEGIN { print b - a }')
	ran=$(awk -v a="$start" -v b="$killed" 'BEGIN { print b - a }')
	gap=$(awk -v k="$killed_mono" -v l="$last" 'BEGIN { print k - l }')
	echo "killed: recorded for ${ran}s, the file covers ${covered}s, its last sample ${gap}s before the kill; rounds written up to ${step}s apart"
	assert_range "seconds between the last sample and the kill" "$gap" 0 \
		"$(awk -v s="$step" 'BEGIN { print 1.6 + 2 * s }')"
}

# sample_span FILE: seconds from the first sample to the last (perf's header).
sample_span() {
	perf report -i "$1" --header-only 2>/dev/null |
		awk '/^# time of first sample :/ { a = $NF } /^# time of last sample :/ { b = $NF } END { print b - a }'
}

at_least() { # NAME VALUE MIN
	awk -v v="$2" -v lo="$3" 'BEGIN { exit !(v >= lo) }' || fail "$1 = $2, expected at least $3"
}
# abs_diff A B: |A - B|
abs_diff() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; print d < 0 ? -d : d }'; }

# Call chains in `perf script -F comm,ip,sym --no-inline` output (tools/stacks.awk).
# root_share SCRIPT COMM: "ROOT_PCT SAMPLES MEAN_DEPTH": percent of COMM's
# samples whose user stack ends at the thread's root, their count, their
# mean number of user frames.
root_share() { awk -v comm="$2" -v what=reach -f "$TOP/tools/stacks.awk" "$1"; }
# call_edges SCRIPT COMM: "CALLER<TAB>CALLEE<TAB>SAMPLES" per user call edge.
call_edges() { awk -v comm="$2" -v what=edges -f "$TOP/tools/stacks.awk" "$1"; }
# folded_stacks SCRIPT COMM: "OUTER;...;INNER<TAB>SAMPLES" per distinct user stack.
folded_stacks() { awk -v comm="$2" -v what=folded -f "$TOP/tools/stacks.awk" "$1"; }
# first_rooted SCRIPT COMM: "ROOTED PROCESSES": of COMM's processes, how
# many had a first sample (after their exec) whose user stack ends at the
# root; SCRIPT from `perf script -F comm,pid,ip,sym --no-inline`. The
# processes that missed are named on stderr.
first_rooted() { awk -v comm="$2" -v what=first -f "$TOP/tools/stacks.awk" "$1"; }
# edge_overlap A B: the percent of A's edge weight (call_edges output) on
# edges that B holds too.
edge_overlap() {
	awk -F '\t' 'FNR == NR { have[$1, $2] = 1; next }
		{ t += $3; if (($1, $2) in have) both += $3 }
		END { printf "%.1f\n", t ? 100 * both / t : 0 }' "$2" "$1"
}
# stack_overlap FOLDED EDGES: the percent of the samples in FOLDED
# (folded_stacks output) all of whose call edges are in EDGES (call_edges
# output of another recording).
stack_overlap() {
	awk -F '\t' 'FNR == NR { have[$1, $2] = 1; next }
		{ t += $2; k = split($1, f, ";"); ok = 1
		  for (i = 1; i < k && ok; i++) ok = (f[i], f[i + 1]) in have
		  both += ok ? $2 : 0 }
		END { printf "%.1f\n", t ? 100 * both / t : 0 }' "$2" "$1"
}
# chain_share SCRIPT: "PCT N WRONG" for nofp_work's leaf_a/leaf_b samples in
# perf script -F ip,sym output: the percent whose chain goes on leaf -> mid
# -> main, their count, and how many name a wrong caller (a cut chain, one
# that ends or turns [unknown], is incomplete, not wrong).
chain_share() {
	awk 'BEGIN { RS = ""; FS = "\n" }
		{ k = 0; for (i = 1; i <= NF; i++) { split($i, f, " "); if (f[2] != "") s[k++] = f[2] }
		  if (s[0] !~ /^leaf_[ab]$/) next; n++
		  x = substr(s[0], 6)
		  if (s[1] == "mid_" x && s[2] == "main") ok++
		  else if ((k > 1 && s[1] != "[unknown]" && s[1] != "mid_" x) ||
			   (k > 2 && s[1] == "mid_" x && s[2] != "[unknown]")) wrong++ }
		END { printf "%.1f %d %d\n", n ? 100 * ok / n : 0, n, wrong }' "$1"
}

# cfi_summary ERRFILE: the figures of the one "cfi unwinding" line that
# `bpfrec record -v --call-graph cfi` wrote on stderr (ERRFILE), as
# "STACKS ROOT FP_STACKS FP_FRAMES TABLES MB OVER BUDGET NO_TABLES_YET"
# (BUDGET as printed, "32MB", "64KB"); fails when the line is missing,
# repeated or not of its documented form.
cfi_summary() {
	local re='^bpfrec record: cfi unwinding: ([0-9]+) stacks, ([0-9]+) ended at the root, ([0-9]+) before their process had tables, ([0-9]+) used frame pointers \(([0-9]+) frames\); ([0-9]+) tables, ([0-9]+\.[0-9]) MB; ([0-9]+) mappings over the ([0-9]+ [KM]B) table budget$'
	[ "$(grep -c 'cfi unwinding' "$1")" = 1 ] ||
		{ cat "$1" >&2; fail "expected one 'cfi unwinding' summary line in $1"; }
	grep -qE "$re" "$1" || { grep 'cfi unwinding' "$1" >&2; fail "the cfi summary line is not of the documented form"; }
	sed -nE "s/$re/\1 \2 \4 \5 \6 \7 \8 \3 \9/p" "$1" |
		awk '{ print $1, $2, $3, $4, $5, $6, $7, $9 $10, $8 }'
}

# cfi_stops ERRFILE REASON: how many walks ended for REASON (root,
# no-table, no-mapping...) by the "cfi stacks ended:" line of -v.
cfi_stops() {
	grep -q '^bpfrec record: cfi stacks ended:' "$1" || fail "no 'cfi stacks ended' line in $1"
	awk -v r="$2" '/^bpfrec record: cfi stacks ended:/ {
		for (i = 5; i < NF; i++) if ($i == r) n = $(i + 1) } END { print n + 0 }' "$1"
}

# late_walks ERRFILE: "WALKS EXPIRED SPENT ROOT BUSY" from the "walked
# again" line of `bpfrec record -v -g` (samples whose walk met code without
# tables yet, walked again in user space once the tables came; EXPIRED of
# them waited too long, SPENT and BUSY more got no copy: their process had
# used its copies, the ring buffer was too full); "0 0 0 0 0" when there
# was none.
late_walks() {
	awk '/^bpfrec record: cfi stacks walked again once their tables came:/ {
		w = $11; x = $12; sub(/^\(/, "", x); s = $16; b = $23
		for (i = 17; i < NF; i++) if ($i == "root") r = $(i + 1) }
	     END { print w + 0, x + 0, s + 0, r + 0, b + 0 }' "$1"
}

# cfi_short ERRFILE: of the samples of a `bpfrec record -v -g`, how many
# may have a user stack that stops short for want of tables, by its own
# counters: walked again without reaching the root, waited too long, no
# copy to walk again (spent, busy), and walks cut at the walker's depth.
# About 0 on a real CPU; on an emulated one, whose table builds take
# seconds, most of a short run's first second.
cfi_short() {
	local late expired spent root busy
	read -r late expired spent root busy < <(late_walks "$1")
	echo $(( late - root + expired + spent + busy + $(cfi_stops "$1" depth) ))
}

# cfi_short_pct ERRFILE: the percent of the walks (cfi_summary) that may
# stop short: those before their process had any table, or those
# cfi_short counts, whichever is more.
cfi_short_pct() {
	cfi_summary "$1" | awk -v c="$(cfi_short "$1")" \
		'{ w = $1 ? 100 * $NF / $1 : 0; c = $1 ? 100 * c / $1 : 0; printf "%.1f\n", (c > w ? c : w) }'
}

# debian_python3: the path of Debian's own python3 (built without frame
# pointers), not a python3 earlier on PATH (pyenv and the like).
debian_python3() {
	[ -x /usr/bin/python3 ] || fail "/usr/bin/python3 missing: Debian's python3 (run 'sh tools/deps.sh test')"
	echo /usr/bin/python3
}
# kept_samples ERR: the samples bpfrec record's summary in ERR (its stderr)
# says it wrote ("[ bpfrec record: Captured and wrote ... (N samples, ...").
kept_samples() { sed -n 's/.*(\([0-9]*\) samples, .*/\1/p' "$1"; }

# record_until_full ERR OPTION...: bpfrec record OPTION... -a -g -F 4999 of
# rec_sleepspin into mnt/full.data, where the caller mounted a tmpfs too small
# for it; its stderr in ERR. It must exit 1 with one error line, ENOSPC on
# that file, and leave a file perf script reads the samples of that it says
# it kept (some).
record_until_full() {
	local err=$1 rc=0 kept
	shift
	timeout 60 "$BPFREC" record "$@" -a -g -F 4999 -o mnt/full.data -- "$FIX/rec_sleepspin" 0 30.5 \
		2>"$err" || rc=$?
	cat "$err"
	[ "$rc" = 1 ] || fail "bpfrec record $* exited $rc on a full disk, expected 1"
	grep -v '^\[ bpfrec record: Captured' "$err" >"$err.lines" || true
	[ "$(wc -l <"$err.lines")" = 1 ] || fail "expected exactly one error line"
	assert_grep "^bpfrec record: cannot write 'mnt/full.data': No space left on device: " "$err.lines"
	run_clean "$err.script" perf script -i mnt/full.data -F pid
	kept=$(kept_samples "$err")
	echo "full disk: perf reads $(wc -l <"$err.script") samples; bpfrec kept $kept"
	[ "$(wc -l <"$err.script")" = "$kept" ] && [ "$kept" -gt 0 ] ||
		fail "bpfrec says it kept $kept samples"
}

# python_builds MINOR...: one "LABEL PATH" line per Python to test: Debian's
# python3 ("debian"), then pyenv's CPython 3.MINOR for each MINOR given; a
# missing one is said (SKIP, on stderr) and left out. For bash tests:
# mapfile -t pythons < <(python_builds 12); each_python FUNC...
python_builds() {
	local minor exe
	echo "debian $(debian_python3)"
	for minor in "$@"; do
		exe=$(pyenv_python "$minor")
		if [ -n "$exe" ]; then
			echo "3.$minor $exe"
		else
			echo "SKIP CPython 3.$minor: no pyenv build under $(pyenv_root)/versions" >&2
		fi
	done
}

# pyenv_root: where pyenv keeps its builds. pyenv_python MINOR: the path of
# its latest CPython 3.MINOR build there, empty when there is none.
pyenv_root() { pyenv root 2>/dev/null || echo "$HOME/.pyenv"; }
pyenv_python() {
	ls -d "$(pyenv_root)"/versions/3."$1".*/bin/python3."$1" 2>/dev/null | tail -n 1
}

# each_python FUNC...: for each entry of the bash array pythons (python_builds),
# in order, every FUNC LABEL PATH.
each_python() {
	local entry f
	for entry in "${pythons[@]}"; do
		for f in "$@"; do
			"$f" "${entry%% *}" "${entry#* }"
		done
	done
}

# Nested Python calls over C code, for python3's call graphs (see its header).
PY_NESTED=$TOP/tests/fixtures/py_nested.py
