#!/bin/bash
# --off-cpu-thresh: intervals shorter than the threshold are summed in BPF
# per thread and stack and written once at the end. With a threshold above
# the fixture's 50 ms sleeps, sleep_wait's total still matches what the
# fixture measured, but it comes in a handful of samples instead of 20.
. "$(dirname "$0")/lib.sh"
need_root
need_kernel_for --off-cpu

cd "$T"
calc() { awk "BEGIN { printf \"%.3f\\n\", $1 }"; }

# The threshold needs --off-cpu, and microseconds.
if "$BPFREC" record --off-cpu-thresh 100 -- true 2>"$T/err1"; then fail "--off-cpu-thresh without --off-cpu was accepted"; fi
assert_grep 'needs --off-cpu' "$T/err1"
if "$BPFREC" record --off-cpu --off-cpu-thresh 1ms -- true 2>"$T/err2"; then fail "--off-cpu-thresh 1ms was accepted"; fi
assert_grep "off-cpu-thresh '1ms': give microseconds" "$T/err2"

# 5 s: far above the 50 ms sleeps also where a loaded or emulated machine
# wakes the fixture late (each wait past the threshold is a sample of its own).
stolen=$(steal_ns)
"$BPFREC" record -v -g --off-cpu --off-cpu-thresh 5000000 -- "$FIX/rec_offcpu" 20 50 2>"$T/rec.err" ||
	{ rc=$?; cat "$T/rec.err"; fail "bpfrec record exited $rc"; }
grep -v '^libbpf' "$T/rec.err"
want=$(sed -n 's/^rec_offcpu: sleep_wait \([0-9.]*\) ms.*/\1/p' "$T/rec.err")
[ -n "$want" ] || fail "the fixture did not report its waits"

run_clean "$T/script.txt" perf script -i perf.data
awk '
	/^[^ \t]/ { flush(); head = $0; n = 0; next }
	NF >= 2 && $1 ~ /^[0-9a-f]+$/ { sub(/\+0x[0-9a-f]+$/, "", $2); fr[n++] = $2; next }
	END { flush(); printf "%d %d %.3f\n", all, sleeps, ns / 1e6 }
	function flush(  i, p) {
		if (head !~ / offcpu-time: *$/) return
		all++
		for (i = 0; i < n; i++)
			if (fr[i] == "sleep_wait") { sleeps++; p = head; sub(/ +offcpu-time: *$/, "", p); sub(/.* /, "", p); ns += p; break }
	}' "$T/script.txt" >"$T/counts"
read -r all sleeps got <"$T/counts"
stolen_ms=$(( ($(steal_ns) - stolen) / 1000000 ))
echo "offcpu samples $all, of them sleep_wait $sleeps with $got ms (fixture $want ms); $stolen_ms ms stolen"
# The fixture's clock also counts what the hypervisor stole (steal_ns).
assert_range "sleep_wait ms" "$got" "$(calc "($want - $stolen_ms) * 0.9")" "$(calc "$want * 1.1")"
# Summed per thread and stack: far fewer samples than the 20 waits (each
# distinct kernel stack of a wait is a sum of its own; a loaded machine
# preempts the waits in more places: 5 sums seen).
assert_range "sleep_wait samples" "$sleeps" 1 9
# Without a threshold the same run gives 20 sleep samples and ~200 in all (test 50).
# A wait walked before its process's tables were in (the slower the machine,
# the more of them) has a shorter stack, and so a sum of its own: those
# walks (the -v summary's) are allowed on top.
read -r _ _ _ _ _ _ _ _ before < <(cfi_summary "$T/rec.err")
early=$(( before + $(cfi_stops "$T/rec.err" no-mapping) ))
echo "walks before the tables or outside the known mappings: $early"
assert_range "offcpu samples" "$all" 1 $(( 60 + early ))

# perf report reads the late, summed samples in order and with their symbols.
run_clean "$T/report.txt" perf report -i perf.data --stdio --children --sort sym -g none
assert_grep "of event 'offcpu-time'" "$T/report.txt"
assert_grep '\[\.\] sleep_wait$' "$T/report.txt" "sleep_wait is not symbolized in the summed samples"
