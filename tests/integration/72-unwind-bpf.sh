#!/bin/bash
# The BPF user-stack walker (bpf/unwind.bpf.h, not yet used by the recorder)
# on a real Debian binary without frame pointers: python3 spinning in
# Python code. Tables are built from the files it maps; the walks made at
# each cpu-clock sample must end at the thread's root (_start), counted per
# stop reason, and be as deep as a python3 stack is. Then a frame-pointer
# program left without tables: every frame after the first comes from the
# frame-pointer fallback, and the counters say so.
. "$(dirname "$0")/lib.sh"
need_root

# counter NAME FILE: the walker's counter NAME ("stat NAME N") in FILE;
# "walks N" is the sum of its stop-reason lines.
counter() { awk -v n="$1" '$1 == "stat" && $2 == n { print $3 }' "$2"; }

PY=/usr/bin/python3.11
[ -x "$PY" ] || fail "$PY missing: run tools/deps.sh test"
mkfifo "$T/ready"
"$PY" -c '
import sys
def f(n):
    if n: return f(n - 1)
    open(sys.argv[1], "w").write("ready\n")
    while True: sorted(range(1000), key=lambda x: -x)
f(8)' "$T/ready" &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$T"' EXIT
read -r line <"$T/ready"
[ "$line" = ready ] || fail "python3 did not start"

# The walker this kernel's recorder uses, then the bounded-loop one of
# kernels without bpf_loop (before 5.17), on the same process. --fp: the
# frame-pointer baseline runs in the first run (its cost is printed, not asserted).
check_python_walks() { # FILE
	walks=$(awk '$1 == "walks" { print $2 }' "$1")
	root=$(awk '$1 == "root" { print $2 }' "$1")
	[ "${walks:-0}" -gt 0 ] || fail "no walks: the program never ran on python3"
	# Spinning in the interpreter never leaves code that has CFI, so every walk
	# should reach _start; allow a few to stop elsewhere, never silently.
	assert_range "root share" "$(awk -v r="${root:-0}" -v w="$walks" 'BEGIN { print 100 * r / w }')" 95 100
	# main, Py_BytesMain ... the eval loop, sorted, the lambda: far more than 8 frames.
	assert_grep '^last [0-9]+ frames ([89]|[1-9][0-9]+) stop root fp 0$' "$1" \
		"the last walk is not a full python3 stack"
	# The counters agree: "walks" is the sum of the stop reasons (unwind_stops),
	# "stat walks" the walker's own count (unwind_stats);
	# python3 has an entry with a table for every file, so no frame needs rbp.
	[ "$(counter walks "$1")" = "$walks" ] || fail "stat walks != the sum of the stop reasons"
	[ "$(counter no-proc "$1")" = 0 ] || fail "python3 counted as a process without tables"
	[ "$(counter fp-frames "$1")" = 0 ] || fail "frame-pointer frames on python3, whose files all have tables"
	[ "$(counter fp-walks "$1")" = 0 ] || fail "frame-pointer walks on python3"
	assert_range "python3 frames per walk" "$(counter frames "$1")" $((9 * walks)) $((128 * walks))
}
run_clean "$T/out.txt" "$BUILD/tests/tools/unwind-check" --fp "$pid" 2
run_clean "$T/bounded.txt" "$BUILD/tests/tools/unwind-check" --bounded "$pid" 2
kill $pid
cat "$T/out.txt"
check_python_walks "$T/out.txt"
assert_grep '^fp_ns_per_sample [0-9]+$' "$T/out.txt" "the frame-pointer baseline did not run"
echo "--- bounded:"
cat "$T/bounded.txt"
check_python_walks "$T/bounded.txt"

# bench_spin (frame pointers, no tables loaded): its worker sits at the
# bottom of a 16-frame chain (spin_main -> spin_outer -> spin_recurse x12 ->
# spin_inner -> spin_leaf), all of it found by frame pointer.
# Long enough for a slow machine: the trap ends it.
"$FIX/bench_spin" -t 1 -s 120 -r "$T/spin.txt" &
spin=$!
trap 'kill $spin 2>/dev/null || true; rm -rf "$T"' EXIT
for _ in $(seq 100); do
	[ "$(ls "/proc/$spin/task" 2>/dev/null | wc -l)" -ge 2 ] && break
	sleep 0.05
done
[ "$(ls "/proc/$spin/task" | wc -l)" -ge 2 ] || fail "bench_spin did not start its thread"
run_clean "$T/fp.txt" "$BUILD/tests/tools/unwind-check" --no-tables "$spin" 1
cat "$T/fp.txt"
walks=$(awk '$1 == "walks" { print $2 }' "$T/fp.txt")
[ "${walks:-0}" -gt 0 ] || fail "no walks: the program never ran on bench_spin"
[ "$(counter walks "$T/fp.txt")" = "$walks" ] || fail "stat walks != the sum of the stop reasons"
[ "$(counter no-proc "$T/fp.txt")" = "$walks" ] || fail "walks of a process without tables not counted as no-proc"
# Nearly every walk finds frames by frame pointer; a sample in the few
# instructions where rbp is not a frame pointer yet (thread start) finds none.
assert_range "walks without tables that found frames by frame pointer (%)" \
	"$(awk -v f="$(counter fp-walks "$T/fp.txt")" -v w="$walks" 'BEGIN { print 100 * f / w }')" 90 100
# Each walk: its first frame from the registers, then by frame pointer
# alone, up through the 16-frame chain (a sample before a function's
# "push %rbp" skips its caller: one frame fewer).
fp=$(counter fp-frames "$T/fp.txt")
assert_range "frames by frame pointer per walk" "$(awk -v f="$fp" -v w="$walks" 'BEGIN { print f / w }')" 14 127
[ "$(( $(counter frames "$T/fp.txt") - walks ))" = "$fp" ] ||
	fail "frames other than the first are not all frame-pointer frames"
# Without tables a walk ends where the frame-pointer chain does: rbp 0,
# which _start leaves for the outermost frame, is the root. bench_spin's
# thread ends in clone3, whose frame holds no 0: there the walk stops at
# the frame without a mapping. Each walk ends one way or the other.
root=$(awk '$1 == "root" { print $2 }' "$T/fp.txt")
nomap=$(awk '$1 == "no-mapping" { print $2 }' "$T/fp.txt")
[ $(( ${root:-0} + ${nomap:-0} )) = "$walks" ] ||
	fail "walks without tables did not end at the chain's end (root ${root:-0}, no-mapping ${nomap:-0} of $walks)"
[ "${root:-0}" -gt 0 ] || fail "no walk of the main thread ended at the root (rbp 0)"
kill $spin 2>/dev/null || true

# A stack deeper than one piece of the bounded walker (UNWIND_BOUNDED_FRAMES
# + 1 = 49 frames, bpf/unwind.bpf.h): unw_deep at the bottom of 100 calls
# (-O2, no frame pointers): 105 frames from spin to _start (descend x 100,
# the last one's call of spin a tail call; main; libc's two; _start), at
# least 103 wherever a sample lands. Before 5.17
# the walker goes on in further pieces; every walk ends at the root, as
# deep as the chain is, by the tables alone.
mkfifo "$T/deep-ready"
"$FIX/unw_deep" 100 120 "$T/deep-ready" >/dev/null &
deep=$!
trap 'kill $deep 2>/dev/null || true; rm -rf "$T"' EXIT
read -r line <"$T/deep-ready"
[ "$line" = ready ] || fail "unw_deep did not reach its depth"
for way in bounded default; do
	flag=
	[ $way = bounded ] && flag=--bounded
	run_clean "$T/deep-$way.txt" "$BUILD/tests/tools/unwind-check" $flag "$deep" 1
	echo "unw_deep, $way walker:"
	cat "$T/deep-$way.txt"
	walks=$(awk '$1 == "walks" { print $2 }' "$T/deep-$way.txt")
	root=$(awk '$1 == "root" { print $2 }' "$T/deep-$way.txt")
	[ "${walks:-0}" -gt 0 ] || fail "no walks of unw_deep ($way)"
	assert_range "unw_deep walks ending at the root, $way (%)" \
		"$(awk -v r="${root:-0}" -v w="$walks" 'BEGIN { print 100 * r / w }')" 95 100
	assert_range "unw_deep frames per walk, $way" "$(counter frames "$T/deep-$way.txt")" \
		$((103 * walks)) $((127 * walks))
	[ "$(counter fp-frames "$T/deep-$way.txt")" = 0 ] || fail "frame-pointer frames in unw_deep ($way)"
done
