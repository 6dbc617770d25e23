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
