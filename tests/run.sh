#!/bin/sh
# Run bpfrec's tests and print one closing line: "N passed, N failed, N skipped".
#   tests/run.sh unit|integration|all BUILD_DIR
# unit: the Criterion binary of every tests/unit/test_*.c in BUILD/tests (and,
# for `all`, BUILD/asan/tests).
# integration: every tests/integration/*.sh; exit 0 = pass, 77 = skipped, else fail.
# ONLY="30 52 75-record-cfi": only the integration tests of these numbers or names
# (the kernel smoke set runs a few in a VM so).
# SHOW="76": print these tests' output when they pass too (the figures they
# measured, for a note or `make test-kernels`' summary).
set -u
mode=${1:-all}
build=$(cd "${2:-build}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
passed=0 failed=0 skipped=0
log=$(mktemp)
tap=$(mktemp)
cd "$top"
# Unit tests find the binaries they inspect here (the plain build's fixtures).
export FIXTURES="$build/fixtures"
fixtures_of() { case $1 in */asan) echo "${1%/asan}/fixtures" ;; *) echo "$1/fixtures" ;; esac; }

run_unit_dir() {
	dir=$1 label=$2
	for t in "$dir"/test_*; do
		# Only tests that still have a source: a renamed test's old binary may linger.
		[ -x "$t" ] && [ -f "tests/unit/$(basename "$t").c" ] || continue
		name="$label/$(basename "$t")"
		: >"$tap"
		# The synthesis line leaves skipped tests out: the TAP report counts them.
		start=$(date +%s)
		FIXTURES=$(fixtures_of "$(dirname "$dir")") "$t" --jobs 1 --tap="$tap" >"$log" 2>&1
		rc=$?
		secs=$(( $(date +%s) - start ))
		s=$(grep -c '^ok .* # SKIP' "$tap")
		skipped=$((skipped + s))
		syn=$(grep 'Synthesis:' "$log" | tail -n 1)
		p=$(echo "$syn" | sed -n 's/.*Passing: \([0-9]*\).*/\1/p')
		f=$(echo "$syn" | sed -n 's/.*Failing: \([0-9]*\).*/\1/p')
		c=$(echo "$syn" | sed -n 's/.*Crashing: \([0-9]*\).*/\1/p')
		if [ -z "$p" ]; then
			p=0 f=1 c=0
		elif [ "$rc" != 0 ] && [ "$((f + c))" = 0 ]; then
			f=1	# sanitizer report at exit, or a crash after the summary
		fi
		passed=$((passed + p)) failed=$((failed + f + c))
		if [ "$((f + c))" != 0 ]; then
			echo "FAIL $name (exit $rc, ${secs}s)"
			sed 's/^/    /' "$log" | tail -n 40
		else
			echo "ok   $name: $p passed, $s skipped (${secs}s)"
			grep '^ok .* # SKIP' "$tap" | sed 's/^ok - /    skip /'
		fi
	done
}

# selected NAME [LIST]: is integration test NAME (30-record-shares) in LIST
# (default $ONLY; an empty $ONLY selects every test)?
selected() {
	list=${2-${ONLY:-}}
	[ -n "$list" ] || { [ $# -lt 2 ] && return 0; return 1; }
	for w in $list; do
		{ [ "$w" = "${1%%-*}" ] || [ "$w" = "$1" ]; } && return 0
	done
	return 1
}

run_integration() {
	for t in "$top"/tests/integration/[0-9]*.sh; do
		[ -f "$t" ] || continue
		name=$(basename "$t" .sh)
		selected "$name" || continue
		start=$(date +%s)
		BUILD="$build" TOP="$top" bash "$t" >"$log" 2>&1
		rc=$?
		secs=$(( $(date +%s) - start ))
		case $rc in
		0) passed=$((passed + 1)); echo "ok   integration/$name (${secs}s)"
		   if selected "$name" "${SHOW:-}"; then sed 's/^/    /' "$log" | tail -n 60; fi ;;
		77) skipped=$((skipped + 1)); echo "skip integration/$name: $(tail -n 1 "$log")" ;;
		*) failed=$((failed + 1)); echo "FAIL integration/$name (exit $rc, ${secs}s)"
		   sed 's/^/    /' "$log" | tail -n 60 ;;
		esac
	done
}

case $mode in
unit) run_unit_dir "$build/tests" unit ;;
integration) run_integration ;;
all)
	run_unit_dir "$build/tests" unit
	run_unit_dir "$build/asan/tests" asan
	run_integration ;;
*) echo "usage: tests/run.sh unit|integration|all BUILD_DIR" >&2; exit 2 ;;
esac
rm -f "$log" "$tap"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
