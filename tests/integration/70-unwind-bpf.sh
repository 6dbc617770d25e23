#!/bin/bash
# The BPF user-stack walker (bpf/unwind.bpf.h, not yet used by the recorder)
# on a real Debian binary without frame pointers: python3 spinning in
# Python code. Tables are built from the files it maps; the walks made at
# each cpu-clock sample must end at the thread's root (_start), counted per
# stop reason, and be as deep as a python3 stack is.
. "$(dirname "$0")/lib.sh"
need_root

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
trap 'kill $pid 2>/dev/null; rm -rf "$T"' EXIT
read -r line <"$T/ready"
[ "$line" = ready ] || fail "python3 did not start"

run_clean "$T/out.txt" "$BUILD/tests/tools/unwind-check" "$pid" 2
cat "$T/out.txt"
walks=$(awk '$1 == "walks" { print $2 }' "$T/out.txt")
root=$(awk '$1 == "root" { print $2 }' "$T/out.txt")
[ "${walks:-0}" -gt 0 ] || fail "no walks: the program never ran on python3"
# Spinning in the interpreter never leaves code that has CFI, so every walk
# should reach _start; allow a few to stop elsewhere, never silently.
assert_range "root share" "$(awk -v r="${root:-0}" -v w="$walks" 'BEGIN { print 100 * r / w }')" 95 100
# main, Py_BytesMain ... the eval loop, sorted, the lambda: far more than 8 frames.
assert_grep '^last [0-9]+ frames ([89]|[1-9][0-9]+) stop root$' "$T/out.txt" \
	"the last walk is not a full python3 stack"
