#!/bin/bash
# bpfrec record --sched on three CPU-bound threads pinned to one CPU: each
# waits in the run queue while the other two run. The fixture measures, per
# thread, its CPU time and its wall time while spinning (it never sleeps
# then, so wall - CPU is its run-queue latency). bpfrec sched's on-CPU time
# and run-queue total per thread must match within 10 %; its switch-outs
# must be mostly "preempted"; perf report must charge the sched-delay
# event's waits to the fixture's spinning function; no perf tool may warn
# about the metrics records (Documentation/bpfrec-sched.md says why none does).
. "$(dirname "$0")/lib.sh"
need_root
need_kernel_for --sched
need_tool python3 python3

cd "$T"
"$BPFREC" record --sched -o perf.data -- "$FIX/sched_pinned" >"$T/fixture.txt" 2>"$T/rec.err" ||
	{ rc=$?; cat "$T/rec.err"; fail "bpfrec record exited $rc"; }
cat "$T/fixture.txt" "$T/rec.err"
[ "$(grep -c '^pinned tid=' "$T/fixture.txt")" = 3 ] || fail "the fixture did not report its 3 threads"
# The short summary at the end of the recording.
assert_grep '^bpfrec record: sched: [0-9]+ threads, .* run-queue waits' "$T/rec.err"

# bpfrec sched: the table, the histograms and JSON, without a word on stderr.
run_clean "$T/table.txt" "$BPFREC" sched -i perf.data
assert_grep '^Per process:' "$T/table.txt"
assert_grep '^Per thread:' "$T/table.txt"
assert_grep ' sched_pinned ' "$T/table.txt"
run_clean "$T/hist.txt" "$BPFREC" sched -i perf.data --hist --threads
assert_grep 'usecs +: count +\|distribution' "$T/hist.txt"
run_clean "$T/sched.json" "$BPFREC" sched -i perf.data --json
python3 -m json.tool "$T/sched.json" >/dev/null || fail "bpfrec sched --json is not valid JSON"

# Per thread: bpfrec's numbers next to the fixture's own.
python3 - "$T/sched.json" "$T/fixture.txt" <<'PY' || fail "bpfrec sched disagrees with what the fixture measured"
import json, re, sys
doc = json.load(open(sys.argv[1]))
fields = {"pid", "tid", "comm", "oncpu_ns", "runq_count", "runq_total_ns", "runq_p50_ns",
          "runq_p99_ns", "runq_max_ns", "switches", "runq_hist_log2_us"}
threads = {t["tid"]: t for t in doc["threads"]}
for t in doc["threads"]:
    missing = fields - set(t)
    if missing:
        sys.exit("thread %s lacks %s" % (t.get("tid"), sorted(missing)))
for p in doc["processes"]:
    missing = (fields - {"tid"}) - set(p)
    if missing:
        sys.exit("process %s lacks %s" % (p.get("pid"), sorted(missing)))
ok = True
for line in open(sys.argv[2]):
    m = re.match(r"pinned tid=(\d+) cpu_ns=(\d+) wall_ns=(\d+)", line)
    if not m:
        continue
    tid, cpu, wall = int(m[1]), int(m[2]), int(m[3])
    t = threads.get(tid)
    if not t:
        sys.exit("thread %d is missing from bpfrec sched" % tid)
    runq = wall - cpu
    sw = t["switches"]
    total = sum(sw.values())
    print("tid %d: on-CPU %.1f ms (fixture %.1f), runq %.1f ms in %d waits (fixture %.1f), "
          "switches %s" % (tid, t["oncpu_ns"] / 1e6, cpu / 1e6, t["runq_total_ns"] / 1e6,
                           t["runq_count"], runq / 1e6, sw))
    if abs(t["oncpu_ns"] - cpu) > 0.1 * cpu:
        print("  on-CPU time off by more than 10 %"); ok = False
    if abs(t["runq_total_ns"] - runq) > 0.1 * runq:
        print("  run-queue total off by more than 10 %"); ok = False
    # Besides preemptions a thread switches out to exit and may sleep once
    # or twice (start, join); how many preemptions a 0.5 s spin takes is the
    # machine's slice (about 10 on an idle one, 4 with a loaded host's).
    others = total - sw["preempted"]
    if others > 2 + 0.1 * total or sw["preempted"] < 3:
        print("  switch-outs are not mostly preemptions"); ok = False
    if sum(t["runq_hist_log2_us"]) != t["runq_count"]:
        print("  the histogram does not count every wait"); ok = False
    if not (t["runq_p50_ns"] <= t["runq_p99_ns"] <= t["runq_max_ns"]):
        print("  p50 <= p99 <= max does not hold"); ok = False
sys.exit(0 if ok else 1)
PY

# perf: the sched-delay event, its waits charged to the spinning function,
# "preempted" as their reason; nothing on stderr from any tool.
run_clean "$T/report.txt" perf report -i perf.data --stdio --children --sort sym -g none
assert_grep "of event 'sched-delay'" "$T/report.txt"
spin=$(awk '/of event / { cur = /sched-delay/ } cur && $NF == "pinned_spin" && $1 ~ /%$/ { sub(/%/, "", $1); print $1; exit }' "$T/report.txt")
echo "sched-delay: pinned_spin children ${spin:-0}%"
assert_range "sched-delay waits in pinned_spin %" "${spin:-0}" 80 100
run_clean "$T/script.txt" perf script -i perf.data
assert_grep ' sched-delay: *$' "$T/script.txt"
assert_grep 'BPF string: "preempted' "$T/script.txt"
run_clean "$T/header.txt" perf report -i perf.data --header-only
assert_grep 'sched-delay' "$T/header.txt"
run_clean "$T/buildids.txt" perf buildid-list -i perf.data
# perf counts the records it skipped: the metrics are there, and ignored.
run_clean "$T/stats.txt" perf report -i perf.data --stats
assert_grep 'EVENT_TYPE events: +[1-9]' "$T/stats.txt"
