#!/bin/bash
# Every file of the fuzz corpus (real recordings and inputs that once
# crashed a parser) goes once through its libFuzzer harness (ASan+UBSan):
# no crash, leak or timeout. `make test` builds the harnesses in BUILD/fuzz.
. "$TOP/tests/integration/lib.sh"

FUZZ=$BUILD/fuzz
harnesses=$(sh "$TOP/tests/fuzz/run.sh" list)
for h in $harnesses; do
	[ -x "$FUZZ/fuzz_$h" ] || fail "$FUZZ/fuzz_$h is missing: make BUILD=$BUILD/fuzz FUZZ=1 fuzz-bins"
done
sh "$TOP/tests/fuzz/run.sh" replay "$FUZZ" >"$T/out" 2>&1 || { cat "$T/out" >&2; fail "a corpus file crashed its harness"; }
cat "$T/out"
for h in $harnesses; do
	want=$(find "$TOP/tests/fuzz/corpus/$h" -type f | wc -l)
	[ "$want" -gt 0 ] || fail "corpus/$h is empty"
	assert_grep "^ok   fuzz_$h \(replay\): $want inputs run$" "$T/out" "fuzz_$h did not run all $want corpus files"
done
