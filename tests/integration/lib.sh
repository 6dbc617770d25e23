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
# need_tool CMD PACKAGE: a missing tool is a failure (tools/deps.sh installs it).
need_tool() {
	command -v "$1" >/dev/null ||
		fail "$1 is not installed: run 'sh tools/deps.sh test' (Debian package $2)"
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
# Children share (percent) of a symbol in `perf report --stdio --children -g none` output.
children_of() { # FILE SYMBOL
	awk -v s="$2" '$NF == s && $1 ~ /%$/ { sub(/%/, "", $1); print $1; exit }' "$1"
}

# fixture_cpu FILE NAME: the CPU seconds fixture NAME reported in FILE
# ("NAME: cpu SECONDS s", tests/fixtures/cpu_budget.h); empty if it did not.
fixture_cpu() { sed -n "s/^$2: cpu \([0-9.]*\) s\$/\1/p" "$1" | tail -n 1; }

# assert_samples WHAT COUNT CPU_SECONDS HZ: a cpu-clock sample count is the
# CPU time the fixture measured itself at HZ (within 15%), whatever the
# machine's speed.
assert_samples() {
	[ -n "$3" ] || fail "$1: the fixture did not report its CPU time"
	assert_range "$1 (fixture used $3 s of CPU, at $4 Hz)" "$2" \
		"$(awk -v c="$3" -v f="$4" 'BEGIN { printf "%d", c * f * 0.85 }')" \
		"$(awk -v c="$3" -v f="$4" 'BEGIN { printf "%d", c * f * 1.15 + 5 }')"
}

# kill9_recording FILE MINBYTES OPTS...: `bpfrec record -q OPTS -o FILE` in
# the background, killed with SIGKILL a second after FILE passed MINBYTES.
# perf report and perf script must then read FILE without a warning,
# rec_sleepspin's late_spin (left running by the caller) must be in it, and
# its samples must cover the recording up to at most about a second before
# the kill (the last checkpoint).
kill9_recording() {
	local data=$1 min=$2 start killed rec first last covered ran
	shift 2
	start=$(date +%s.%N)
	"$BPFREC" record -q "$@" -o "$data" & rec=$!
	for _ in $(seq 100); do
		[ "$(stat -c %s "$data" 2>/dev/null || echo 0)" -gt "$min" ] && break
		sleep 0.1
	done
	sleep 1
	kill -9 $rec
	wait $rec 2>/dev/null || true
	killed=$(date +%s.%N)
	run_clean "$T/kill9.report" perf report -i "$data" --stdio --no-children -g none --sort comm,sym
	assert_grep 'rec_sleepspin +\[\.\] late_spin$' "$T/kill9.report" "late_spin missing after kill -9"
	run_clean "$T/kill9.times" perf script -i "$data" -F time
	first=$(head -n 1 "$T/kill9.times" | tr -d ' :') last=$(tail -n 1 "$T/kill9.times" | tr -d ' :')
	covered=$(awk -v a="$first" -v b="$last" 'BEGIN { print b - a }')
	ran=$(awk -v a="$start" -v b="$killed" 'BEGIN { print b - a }')
	echo "killed: recorded for ${ran}s, the file covers ${covered}s"
	assert_range "missing seconds" "$(awk -v r="$ran" -v c="$covered" 'BEGIN { print r - c }')" 0 1.6
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

# debian_python3: the path of Debian's own python3 (built without frame
# pointers), not a python3 earlier on PATH (pyenv and the like).
debian_python3() {
	[ -x /usr/bin/python3 ] || fail "/usr/bin/python3 missing: Debian's python3 (run 'sh tools/deps.sh test')"
	echo /usr/bin/python3
}
# Nested Python calls over C code, for python3's call graphs (see its header).
PY_NESTED=$TOP/tests/fixtures/py_nested.py
