#!/bin/bash
# PID reuse and exec, system-wide: the tracker forgets a process when it
# exits or execs, so a pid taken over by a different program, or a process
# that becomes another program, gets a fresh COMM and fresh MMAP2s: each
# program's samples resolve to its own functions under its own comm.
#
# Reuse is forced through the initial pid namespace's ns_last_pid (a new pid
# namespace would only reuse the namespace-local pid; the recorder sees
# global pids). Something else on the machine may take the pid first: then
# it retries, and skips if it never gets it.
. "$(dirname "$0")/lib.sh"
need_root
[ -w /proc/sys/kernel/ns_last_pid ] || skip "no writable /proc/sys/kernel/ns_last_pid (CONFIG_CHECKPOINT_RESTORE)"

cd "$T"
cat >reuse.sh <<SH
for try in \$(seq 20); do
	'$FIX/rec_sleepspin' 0 0.3 & first=\$!
	wait \$first
	echo \$((first - 1)) >/proc/sys/kernel/ns_last_pid
	'$FIX/rec_work' 0.15 & second=\$!
	if [ \$second = \$first ]; then wait \$second; echo "\$first" >reused; exit 0; fi
	kill \$second; wait \$second
done
exit 0
SH
"$BPFREC" record -q -a -g -o reuse.data -- sh reuse.sh || fail "bpfrec record exited $?"
[ -s reused ] || skip "pid reuse could not be forced in 20 tries (a busy machine)"
pid=$(cat reused)
echo "pid $pid ran rec_sleepspin, then rec_work"
run_clean "$T/script.txt" perf script -i reuse.data -F comm,pid,ip,sym -G
# User-space samples only: what the kernel did in the process (exec, page
# faults, the machine's interrupts) is not the program's description.
user_syms() { awk -v p="$2" '$2 == p && $3 !~ /^ffff/ { print $1, $NF }' "$1" | sort | uniq -c | sort -rn; }
user_syms "$T/script.txt" "$pid" >"$T/pid.txt"
cat "$T/pid.txt"
n() { awk -v c="$1" -v s="$2" '$2 == c && $3 == s { t += $1 } END { print t + 0 }' "$T/pid.txt"; }
# share COMM SYM: percent of COMM's user samples in SYM (each spin is timed
# by the wall clock, so how many samples it gets is the machine's; where
# they resolve is ours). Start-up and exit (the dynamic loader, libc) take
# what the machine makes them take: 20x longer in an emulated VM, a fifth
# of a 0.3 s spin there. So the spin must lead COMM's user samples, not
# reach a share that encodes this machine's speed.
share() { awk -v c="$1" -v s="$2" '$2 == c { a += $1; if ($3 == s) t += $1 } END { print a ? 100 * t / a : 0 }' "$T/pid.txt"; }
top_sym() { awk -v c="$1" '$2 == c { print $3; exit }' "$T/pid.txt"; }
assert_leads() { # COMM SYM
	[ "$(top_sym "$1")" = "$2" ] || fail "$2 is not $1's most sampled user function: $(top_sym "$1")"
	assert_range "$1's user samples in $2 (%)" "$(share "$1" "$2")" 50 100
}
at_least "rec_sleepspin samples in late_spin" "$(n rec_sleepspin late_spin)" 5
at_least "rec_work samples in leaf_a" "$(n rec_work leaf_a)" 5
assert_leads rec_sleepspin late_spin
assert_range "rec_work's user samples in leaf_a (%)" "$(share rec_work leaf_a)" 30 100
# No sample of one program in the other's code or under the other's comm.
assert_no_grep 'rec_work late_spin|rec_sleepspin leaf_' "$T/pid.txt" "the reused pid kept the old program's description"
assert_no_grep 'rec_work \[unknown\]' "$T/pid.txt" "the reused pid's new program was not described"

# Exec, system-wide: one pid, both images, each under its own comm.
"$BPFREC" record -q -a -g -o exec.data -- "$FIX/rec_exec" || fail "bpfrec record exited $?"
run_clean "$T/exec.txt" perf script -i exec.data -F comm,pid,ip,sym -G
epid=$(awk '$1 == "rec_exec" { print $2; exit }' "$T/exec.txt")
[ -n "$epid" ] || fail "rec_exec was not sampled"
user_syms "$T/exec.txt" "$epid" >"$T/pid.txt"
cat "$T/pid.txt"
at_least "rec_exec samples in before_exec" "$(n rec_exec before_exec)" 5
at_least "rec_work samples in leaf_a" "$(n rec_work leaf_a)" 5
assert_leads rec_exec before_exec
assert_range "rec_work's user samples in leaf_a (%)" "$(share rec_work leaf_a)" 30 100
assert_no_grep 'rec_work before_exec|rec_exec leaf_' "$T/pid.txt" "exec kept the old image's description"
