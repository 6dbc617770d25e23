#!/bin/bash
# Very short-lived processes, system-wide: children forked and exec'd one
# after another, each spinning a few milliseconds and gone long before the
# recorder's next round. Their maps come from the kernel's own reports
# (side-band MMAP2/exec), not from /proc/PID/maps, so every sample of them
# has a named DSO and their function resolves; only processes with samples
# get records.
. "$(dirname "$0")/lib.sh"
need_root

cd "$T"
"$BPFREC" record -q -a -g -o vs.data -- sh -c \
	"for i in \$(seq 40); do '$FIX/rec_sleepspin' 0 0.005; done" ||
	fail "bpfrec record exited $?"
run_clean "$T/script.txt" perf script -i vs.data -F comm,pid,ip,sym,dso -G --comm rec_sleepspin
# Per pid: samples, samples in [unknown] DSOs, samples in late_spin.
awk '$1 == "rec_sleepspin" { n[$2]++; if ($NF == "([unknown])") u[$2]++; if ($(NF - 1) == "late_spin") ok[$2]++ }
     END { for (p in n) print p, n[p], u[p] + 0, ok[p] + 0 }' "$T/script.txt" >"$T/pids.txt"
sort -n "$T/pids.txt" | head -n 50
sampled=$(wc -l <"$T/pids.txt")
[ "$sampled" -ge 20 ] || fail "only $sampled of 40 rec_sleepspin processes were sampled"
unknown=$(awk '{ u += $3 } END { print u + 0 }' "$T/pids.txt")
[ "$unknown" = 0 ] || fail "$unknown samples of short-lived processes in [unknown] DSOs"
# Each process spins in late_spin at the end of its life: its samples there
# resolve to it. (How much of the life that is depends on the machine: the
# spin is 5 ms, while an emulated CPU takes far longer to start a process.)
with=$(awk '$4 > 0 { n++ } END { print n + 0 }' "$T/pids.txt")
echo "$with of $sampled sampled processes have samples in late_spin"
[ $((2 * with)) -ge "$sampled" ] || fail "only $with of $sampled processes resolved samples to late_spin"

# Records only for processes that had samples: no COMM for a pid without one.
run_clean "$T/events.txt" perf script -i vs.data --show-task-events -F comm,pid,event
awk '/PERF_RECORD_COMM/ && $1 == "rec_sleepspin" { print $2 }' "$T/events.txt" | sort -u >"$T/comm_pids"
awk '{ print $1 }' "$T/pids.txt" | sort -u >"$T/sampled_pids"
extra=$(comm -23 "$T/comm_pids" "$T/sampled_pids" | wc -l)
[ "$extra" = 0 ] || fail "$extra rec_sleepspin processes described without a sample"
echo "$sampled short-lived processes, all samples in named DSOs"
