#!/bin/bash
# Each libFuzzer harness fuzzes its parser for FUZZ_TEST_TIME seconds (20 by
# default) from the corpus: no crash, leak, timeout or runaway memory. New
# inputs go to a scratch directory; `make fuzz` runs longer.
. "$TOP/tests/integration/lib.sh"

FUZZ=$BUILD/fuzz
harnesses=$(sh "$TOP/tests/fuzz/run.sh" list)
secs=${FUZZ_TEST_TIME:-20}
for h in $harnesses; do
	[ -x "$FUZZ/fuzz_$h" ] || fail "$FUZZ/fuzz_$h is missing: make BUILD=$BUILD/fuzz FUZZ=1 fuzz-bins"
	# A copy, so this run's scratch inputs and logs stay in $T.
	cp "$FUZZ/fuzz_$h" "$T/"
done
sh "$TOP/tests/fuzz/run.sh" fuzz "$T" "$secs" >"$T/out" 2>&1 || {
	cat "$T/out" >&2
	for l in "$T"/fuzz_*.log; do tail -n 30 "$l" >&2; done
	mkdir -p "$FUZZ/crashes"
	cp "$T"/crashes/* "$FUZZ/crashes/" 2>/dev/null
	ls -l "$FUZZ/crashes" >&2
	fail "fuzzing found a crash; its input is kept in $FUZZ/crashes (add it to the corpus once fixed)"
}
cat "$T/out"
for h in $harnesses; do
	n=$(sed -n "s/^ok   fuzz_$h (fuzz): \([0-9]*\) inputs run$/\1/p" "$T/out")
	[ -n "$n" ] && [ "$n" -gt 0 ] || fail "fuzz_$h ran no inputs"
done
