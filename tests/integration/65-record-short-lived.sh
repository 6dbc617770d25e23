#!/bin/bash
# Short-lived processes: a program that runs 50 ms and is sampled gets its
# COMM and its maps (its functions resolve), because its first sample wakes
# the recorder at once and /proc/PID/maps is read while it still runs.
# System-wide, so nothing but the sampler decides what gets described.
. "$(dirname "$0")/lib.sh"
need_root

cd "$T"
"$BPFREC" record -q -a -g -o sl.data -- sh -c \
	"for i in 1 2 3 4 5 6; do '$FIX/rec_sleepspin' 0 0.05; sleep 0.1; done" ||
	fail "bpfrec record exited $?"
run_clean "$T/script.txt" perf script -i sl.data -F comm,pid,ip,sym --comm rec_sleepspin -G
# Per pid: samples, and how many of them resolved to late_spin.
awk '$1 == "rec_sleepspin" { n[$2]++; if ($NF == "late_spin") ok[$2]++ }
     END { for (p in n) print p, n[p], ok[p] + 0 }' "$T/script.txt" >"$T/pids.txt"
cat "$T/pids.txt"
[ "$(wc -l <"$T/pids.txt")" -ge 5 ] || fail "expected 6 sampled rec_sleepspin processes"
while read -r pid n ok; do
	# 50 ms at 4000 Hz: ~200 samples, nearly all in late_spin.
	[ "$n" -ge 20 ] || continue
	assert_range "pid $pid: resolved share" "$(awk -v a="$ok" -v b="$n" 'BEGIN { print 100 * a / b }')" 80 100
done <"$T/pids.txt"
echo "every short-lived process was described"
