#!/bin/bash
# Python symbol files (recorder/pyframes.h) stay few: a process's functions
# go into one open file, whatever the rounds that bring new ones, and a
# function is placed once with rows for all its lines, so its samples never
# split between two symbols. Debian's python3 runs functions it compiles
# one after the other, each in a round of its own (a CPU-bound spin, then a
# sleep longer than a round), and one function whose hot lines are first
# its first ones, then, a round later, more than 128 lines further down.
#   - the run brought new functions in ROUNDS rounds (the fixture says
#     when); the process has one symbol file in the build-id cache: a file
#     takes functions until 16 MiB of addresses are used, and these take a
#     few KiB (the bound is checked from the file's own size);
#   - perf report, from the perf.data and the cache moved to another HOME,
#     names every one of those functions, each under one symbol, and no
#     sample of the symbol file is left without a name; perf script gives
#     the long function's two hot lines; no warning from either.
. "$(dirname "$0")/lib.sh"
need_root
need_kernel_for -g
need_tool perf linux-perf
cd "$T"
export HOME=$T/recorder
mkdir -p "$HOME"
ROUNDS=6
FAR=200		# lines between the long function's two hot loops

cat >gen.py <<'EOF'
import os, sys, time
rounds, far = int(sys.argv[1]), int(sys.argv[2])
print("pid", os.getpid(), flush=True)

def spin(f, secs):
    t = time.thread_time()
    while time.thread_time() - t < secs:
        f(2000)

for i in range(rounds):
    ns = {}
    src = ("def fresh_%d(n):\n    x = 0\n    for k in range(n):\n"
           "        x = (x + k * 7) & 0xffff\n    return x\n") % i
    exec(compile(src, "gen_round.py", "exec"), ns)
    spin(ns["fresh_%d" % i], 0.1)
    print("new function fresh_%d at %.3f" % (i, time.monotonic()), flush=True)
    time.sleep(0.25)

# Its first loop on line 4, the second on line FAR + 7.
src = ("import time\ndef long_tail(secs):\n    t = time.thread_time()\n"
       "    while time.thread_time() - t < secs: pass\n    time.sleep(0.25)\n"
       + "    y = 0\n" * far +
       "    t = time.thread_time()\n    while time.thread_time() - t < secs: pass\n")
ns = {}
exec(compile(src, "gen_long.py", "exec"), ns)
ns["long_tail"](0.2)
print("long_tail second loop line", 7 + far, flush=True)
EOF

"$BPFREC" record -v -g -F 999 -o gen.data -- "$(debian_python3)" gen.py $ROUNDS $FAR >gen.out 2>gen.err ||
	{ cat gen.err >&2; fail "bpfrec record exited $?"; }
pid=$(sed -n 's/^pid //p' gen.out)
far_line=$(sed -n 's/^long_tail second loop line //p' gen.out)
news=$(grep -c '^new function' gen.out)
[ -n "$pid" ] && [ "$news" = $ROUNDS ] || { cat gen.out >&2; fail "the fixture did not run its rounds"; }
echo "$(grep 'Python frames:' gen.err | sed 's/^bpfrec record: //')"

# The process's symbol files, as the cache files them (one directory per recorded path).
files=$(find "$HOME/.debug/proc/version" -mindepth 1 -maxdepth 1 -name "bpfrec-python-$pid-*" | wc -l)
bytes=$(find "$HOME/.debug/proc/version" -path "*/bpfrec-python-$pid-*/elf" -printf '%s\n' | awk '{ t += $1 } END { print t + 0 }')
bound=$(awk -v b="$bytes" 'BEGIN { printf "%d\n", 1 + int(b / (16 * 1048576)) }')
echo "process $pid: $files Python symbol file(s), $bytes bytes, for $((ROUNDS + 1)) rounds of new functions (bound $bound)"
[ "$files" -ge 1 ] || fail "no Python symbol file for process $pid in the build-id cache"
[ "$files" -le "$bound" ] || fail "$files Python symbol files for process $pid, at most $bound expected"
# The recorder's own count (-v) says the same: the recording's only Python process.
said=$(sed -n 's/.*, \([0-9]*\) symbol files, filed [0-9]* times$/\1/p' gen.err)
[ "$said" = "$files" ] || fail "bpfrec record -v says ${said:-no} symbol files, the cache holds $files"

# Another machine: only the perf.data and the cache, under another HOME.
mkdir -p "$T/elsewhere"
mv "$HOME/.debug" "$T/elsewhere/.debug"
export HOME=$T/elsewhere
run_clean rep.txt perf report -i gen.data --stdio --no-children --sort dso,sym -g none --comm python3
for i in $(seq 0 $((ROUNDS - 1))) long_tail; do
	case $i in long_tail) name="long_tail (gen_long.py)" ;; *) name="fresh_$i (gen_round.py)" ;; esac
	n=$(grep -cF "] $name" rep.txt)
	echo "perf report: $name: $n symbol(s)"
	[ "$n" = 1 ] || fail "$name: $n entries in perf report, one expected"
done
# Every sample in a symbol file named: no bare address in one.
assert_no_grep 'bpfrec-python-[0-9]+-[0-9]+ +\[\.\] 0x' rep.txt "a sample of a Python symbol file without a name"

dsos=$(perf buildid-list -i gen.data 2>/dev/null | awk '$2 ~ /bpfrec-python-/ { print $2 }' | paste -sd, -)
run_clean lines.txt perf script -i gen.data -F ip,sym,srcline --dsos "$dsos"
for l in 4 "$far_line"; do
	n=$(grep -A1 'long_tail (gen_long.py)' lines.txt | grep -c "gen_long\.py:$l\$")
	echo "long_tail samples at gen_long.py:$l: $n"
	[ "$n" -gt 0 ] || fail "no long_tail sample at gen_long.py:$l"
done

# -N: no symbol file can be kept, so no Python frame is written: said in one
# warning line (not only under -v), and the native stacks stay.
export HOME=$T/nocache
mkdir -p "$HOME"
"$BPFREC" record -N -g -F 999 -o nocache.data -- "$(debian_python3)" gen.py 1 1 >nocache.out 2>nocache.err ||
	{ cat nocache.err >&2; fail "bpfrec record -N exited $?"; }
pid=$(sed -n 's/^pid //p' nocache.out)
said=$(grep -c "^bpfrec record: warning: Python functions are not named: process $pid runs CPython 3\.[0-9]*, .*(-N, " nocache.err)
echo "-N: $said warning line(s) for process $pid"
[ "$said" = 1 ] || { cat nocache.err >&2; fail "-N: the warning about Python frames was said $said times, once expected"; }
[ ! -e "$HOME/.debug" ] || fail "-N: the build-id cache was written: $(find "$HOME/.debug" | head -3)"
run_clean nocache.script perf script -i nocache.data -F ip,sym
assert_no_grep 'bpfrec-python|\(gen_round\.py\)' nocache.script "-N: a Python frame in the file"
assert_grep ' _PyEval_EvalFrameDefault$' nocache.script "-N: the native frames are missing"
