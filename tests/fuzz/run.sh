#!/bin/sh
# Run the libFuzzer harnesses of tests/fuzz/ (built by `make fuzz-bins`).
#   tests/fuzz/run.sh replay FUZZ_BUILD            every corpus file once, through its harness
#   tests/fuzz/run.sh fuzz FUZZ_BUILD SECONDS [H]  fuzz each harness (or only H) for SECONDS
#   tests/fuzz/run.sh list                         the harnesses' names, the one list of them
# New inputs found while fuzzing go to FUZZ_BUILD/scratch/<harness> (never the
# tree); a crash leaves its input in FUZZ_BUILD/crashes/ and fails the run.
# Exit 0 when no harness crashed, leaked, timed out or ran out of memory.
set -u
harnesses="reader decode tracing pprof cfitable pyruntime pycode"
mode=${1:?usage: tests/fuzz/run.sh replay|fuzz|list FUZZ_BUILD [SECONDS [HARNESS]]}
if [ "$mode" = list ]; then
	echo $harnesses
	exit 0
fi
build=${2:?FUZZ_BUILD}
secs=${3:-300}
only=${4:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
# One input may take at most 30 s (generous: the machine may be busy) and 2 GiB;
# a parser that needs more is a bug.
limits="-timeout=30 -rss_limit_mb=2048 -malloc_limit_mb=1024"
failed=0

for h in $harnesses; do
	[ -z "$only" ] || [ "$only" = "$h" ] || continue
	bin=$build/fuzz_$h
	corpus=$top/tests/fuzz/corpus/$h
	if [ ! -x "$bin" ]; then
		echo "FAIL fuzz_$h: $bin is missing; build it with 'make fuzz-bins'"
		failed=1
		continue
	fi
	log=$build/fuzz_$h.log
	case $mode in
	replay)
		# Each file as a reproducer: libFuzzer runs it once and exits non-zero on a crash.
		set -- "$corpus"/*
		"$bin" $limits "$@" >"$log" 2>&1
		rc=$?
		runs=$(grep -c '^Executed ' "$log")
		;;
	fuzz)
		mkdir -p "$build/scratch/$h" "$build/crashes"
		"$bin" $limits -max_total_time="$secs" -print_final_stats=1 \
			-artifact_prefix="$build/crashes/$h-" "$build/scratch/$h" "$corpus" >"$log" 2>&1
		rc=$?
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		;;
	*)
		echo "usage: tests/fuzz/run.sh replay|fuzz|list FUZZ_BUILD [SECONDS [HARNESS]]" >&2
		exit 2 ;;
	esac
	if [ "$rc" != 0 ]; then
		echo "FAIL fuzz_$h ($mode, exit $rc): see $log"
		grep -E 'ERROR|SUMMARY|Test unit written|runtime error' "$log" | head -n 20 | sed 's/^/    /'
		failed=1
	else
		echo "ok   fuzz_$h ($mode): ${runs:-0} inputs run"
	fi
done
exit $failed
