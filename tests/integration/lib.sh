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
# Children share (percent) of a symbol in `perf report --stdio --children -g none` output.
children_of() { # FILE SYMBOL
	awk -v s="$2" '$NF == s && $1 ~ /%$/ { sub(/%/, "", $1); print $1; exit }' "$1"
}
