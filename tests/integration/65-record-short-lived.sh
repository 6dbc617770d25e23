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
run_clean "$T/script.txt" perf script -i sl.data -F comm,pid,ip,sym,dso --comm rec_sleepspin -G
# Per pid: user-space samples, how many resolved to a function of a known
# file, and how many to late_spin (the kernel's part of a 50 ms process,
# exec and exit and the machine's interrupts, is not what the recorder
# describes). The spin is 50 ms of wall time: on a loaded machine ld.so's
# start-up is a larger part of the process, and it must resolve as well.
awk '$1 == "rec_sleepspin" && $3 !~ /^ffff/ { n[$2]++
		if ($NF != "([unknown])" && $(NF - 1) != "[unknown]") ok[$2]++
		if ($(NF - 1) == "late_spin") spin[$2]++ }
     END { for (p in n) print p, n[p], ok[p] + 0, spin[p] + 0 }' "$T/script.txt" >"$T/pids.txt"
cat "$T/pids.txt"
[ "$(wc -l <"$T/pids.txt")" -ge 5 ] || fail "expected 6 sampled rec_sleepspin processes"
while read -r pid n ok spin; do
	# 50 ms at 4000 Hz: ~200 samples (a machine whose timer delivers less
	# gives fewer: those with too few say nothing).
	[ "$n" -ge 20 ] || continue
	assert_range "pid $pid: resolved share" "$(awk -v a="$ok" -v b="$n" 'BEGIN { print 100 * a / b }')" 80 100
	at_least "pid $pid: samples in late_spin" "$spin" 1
done <"$T/pids.txt"
echo "every short-lived process was described"
