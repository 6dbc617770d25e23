#!/bin/bash
# bpfrec record --sched, switch-out reasons against fixtures that count
# their own: a thread that sleeps N times (voluntary sleeps = N, its waits
# for a CPU within the time it was off CPU), and a thread that waits in D
# state (O_DIRECT reads in the build directory, vforks: I/O waits). Then
# the same through the pipe, and --sched with --off-cpu and -p.
. "$(dirname "$0")/lib.sh"
need_root
need_kernel_for --sched --off-cpu
need_tool python3 python3

cd "$T"
# thread_json FILE TID: the thread's object from bpfrec sched --json.
thread_json() {
	python3 -c 'import json, sys
for t in json.load(open(sys.argv[1]))["threads"]:
    if t["tid"] == int(sys.argv[2]): print(json.dumps(t))' "$1" "$2"
}
field() { python3 -c 'import json, sys; t = json.loads(sys.argv[1]); print(eval(sys.argv[2], {}, t))' "$1" "$2"; }

# 1. The sleeper: every nap is one voluntary switch and one wakeup.
"$BPFREC" record --sched -o sleep.data -- "$FIX/sched_sleeper" 200 >"$T/sleeper.txt" 2>"$T/rec.err" ||
	{ rc=$?; cat "$T/rec.err"; fail "bpfrec record exited $rc"; }
cat "$T/sleeper.txt"
read -r tid sleeps vol cpu wall < <(sed -n 's/^sleeper tid=\([0-9]*\) sleeps=\([0-9]*\) vol=\([0-9]*\) cpu_ns=\([0-9]*\) wall_ns=\([0-9]*\)$/\1 \2 \3 \4 \5/p' "$T/sleeper.txt")
[ -n "${tid:-}" ] || fail "the sleeper did not report"
run_clean "$T/sleep.json" "$BPFREC" sched -i sleep.data --json
t=$(thread_json "$T/sleep.json" "$tid")
[ -n "$t" ] || fail "thread $tid is missing from bpfrec sched"
echo "sleeper: $t"
slept=$(field "$t" 'switches["sleep"]')
waits=$(field "$t" runq_count)
runq=$(field "$t" runq_total_ns)
echo "sleeper: bpfrec $slept sleeps, $waits waits, $runq ns in the run queue; fixture $sleeps naps, $vol voluntary switches, $((wall - cpu)) ns off CPU"
assert_range "voluntary sleeps" "$slept" "$((vol - 5))" "$((vol + 5))"
assert_range "run-queue waits" "$waits" "$((sleeps - 5))" "$((sleeps + 10))"
# Waiting for a CPU is part of being off it.
assert_range "run-queue total ns" "$runq" 0 "$((wall - cpu))"

# 2. D state: each O_DIRECT read that slept and each vfork is an I/O wait.
"$BPFREC" record --sched -o io.data -- "$FIX/sched_io" "$BUILD" 200 >"$T/io.txt" 2>"$T/rec.err" ||
	{ rc=$?; cat "$T/rec.err"; fail "bpfrec record exited $rc"; }
cat "$T/io.txt"
read -r tid dio_vol vforks < <(sed -n 's/^io tid=\([0-9]*\) dio_reads=[0-9]* dio_vol=\([0-9]*\) vforks=\([0-9]*\)$/\1 \2 \3/p' "$T/io.txt")
[ -n "${tid:-}" ] || fail "the I/O fixture did not report"
[ "$dio_vol" -gt 0 ] || echo "note: O_DIRECT reads in $BUILD did not sleep (not a block device): only vforks count"
run_clean "$T/io.json" "$BPFREC" sched -i io.data --json
t=$(thread_json "$T/io.json" "$tid")
io=$(field "$t" 'switches["io"]')
echo "io: bpfrec $io I/O waits; fixture $dio_vol O_DIRECT sleeps + $vforks vforks"
assert_range "I/O waits" "$io" "$(( (dio_vol * 9) / 10 + vforks))" "$((dio_vol + vforks + 20))"

# 3. Pipe mode: perf reads it without a warning; bpfrec sched reads it from stdin.
"$BPFREC" record -q --sched -o - -- "$FIX/sched_sleeper" 50 >"$T/pipe.data" 2>"$T/pipe.err" ||
	{ cat "$T/pipe.err"; fail "bpfrec record -o - failed"; }
run_clean "$T/pipe-script.txt" perf script -i "$T/pipe.data"
assert_grep ' sched-delay: *$|sched-delay' "$T/pipe-script.txt"
run_clean "$T/pipe-report.txt" perf report -i "$T/pipe.data" --stdio
tid=$(sed -n 's/^sleeper tid=\([0-9]*\) .*/\1/p' "$T/pipe.err")
[ -n "$tid" ] || fail "the sleeper did not report through the pipe"
"$BPFREC" sched -i - --json <"$T/pipe.data" >"$T/pipe.json" 2>"$T/pipe-sched.err" ||
	{ cat "$T/pipe-sched.err"; fail "bpfrec sched -i - failed"; }
t=$(thread_json "$T/pipe.json" "$tid")
assert_range "pipe: voluntary sleeps" "$(field "$t" 'switches["sleep"]')" 45 55

# 4. With --off-cpu and -p: both events, the metrics of the target only.
# The target outlives the recording, which lasts 2 s from when its programs
# are in, however long loading them takes (on an emulated CPU, a while).
"$FIX/sched_sleeper" 1000000 >"$T/target.txt" &
pid=$!
"$BPFREC" record -q --sched --off-cpu -p "$pid" --duration 2 -o both.data 2>"$T/both.err" ||
	{ cat "$T/both.err"; kill "$pid"; fail "bpfrec record -p failed"; }
kill "$pid"
wait "$pid" 2>/dev/null || true
run_clean "$T/both-report.txt" perf report -i both.data --stdio --sort sym -g none
assert_grep "of event 'offcpu-time'" "$T/both-report.txt"
assert_grep "of event 'sched-delay'" "$T/both-report.txt"
run_clean "$T/both.json" "$BPFREC" sched -i both.data --json
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
pids = {p["pid"] for p in d["processes"]}
sys.exit(0 if pids == {int(sys.argv[2])} else "processes %s, expected only %s" % (pids, sys.argv[2]))' \
	"$T/both.json" "$pid" || fail "-p $pid recorded other processes' metrics"

# A file without --sched: a clear error, not an empty table.
"$BPFREC" record -q -o plain.data -- "$FIX/sched_sleeper" 5 >/dev/null 2>&1
if "$BPFREC" sched -i plain.data >/dev/null 2>"$T/plain.err"; then fail "bpfrec sched accepted a file without metrics"; fi
assert_grep 'no scheduler metrics: record it with `bpfrec record --sched`' "$T/plain.err"
