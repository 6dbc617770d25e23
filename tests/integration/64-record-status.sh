#!/bin/bash
# The live status line: on a terminal (script(1) gives bpfrec a pty) it shows
# elapsed time, samples/s, lost, size and pids, redrawn in place; it never
# appears when stderr is redirected, with -q, or in pipe mode's stdout.
. "$(dirname "$0")/lib.sh"
need_root
need_tool script bsdutils

cd "$T"
status_re='bpfrec record: [0-9]+\.[0-9]s  [0-9]+ samples/s  [0-9]+ lost  [0-9.]+ MB  [0-9]+ pids'

script -qec "'$BPFREC' record -a --duration 1.6 -o tty.data" /dev/null >"$T/tty.out" ||
	fail "bpfrec under script exited $?"
tr '\r' '\n' <"$T/tty.out" >"$T/tty.txt"
assert_grep "$status_re" "$T/tty.txt" "no status line on a terminal"
[ "$(grep -cE "$status_re" "$T/tty.txt")" -ge 2 ] || fail "the status line was not updated"
# Erased before the summary, which starts a clean line.
assert_grep $'\033\\[K\\[ bpfrec record: Captured' "$T/tty.out" "the summary is not on a clean line"
run_clean "$T/r.txt" perf report -i tty.data --stdio

# Redirected stderr: the summary only.
"$BPFREC" record -a --duration 1.1 -o redir.data 2>"$T/redir.err" || fail "exited $?"
assert_no_grep 'samples/s' "$T/redir.err" "status line in a redirected stderr"
assert_grep '^\[ bpfrec record: Captured' "$T/redir.err"

# -q on a terminal: nothing at all.
script -qec "'$BPFREC' record -q -a --duration 1.1 -o quiet.data" /dev/null >"$T/quiet.out" ||
	fail "-q under script exited $?"
[ -s "$T/quiet.out" ] && { od -c "$T/quiet.out" | head; fail "-q printed something"; }

# Pipe mode on a terminal: the status goes to the terminal, stdout stays perf.data.
script -qec "'$BPFREC' record -a --duration 1.6 -o - >pipe.data" /dev/null >"$T/pipe.out" ||
	fail "pipe mode under script exited $?"
grep -qE "$status_re" <(tr '\r' '\n' <"$T/pipe.out") || fail "no status line in pipe mode"
grep -qa 'samples/s' pipe.data && fail "the status line got into the pipe-mode stream"
run_clean "$T/p.txt" perf script -i - -F comm <pipe.data
[ -s "$T/p.txt" ] || fail "the pipe-mode stream holds no samples"

# -v's summary: what the BPF programs cost. Root holds the kernel's counting
# on, so it is counted; the sampler runs once per sample BPF saw (plus task
# notices), and the programs cannot have run longer than every CPU for the
# whole recording, measured here around it.
t0=$(date +%s%N)
"$BPFREC" record -v -o verbose.data "$FIX/rec_work" 0.5 2>"$T/v.err" >/dev/null || fail "-v exited $?"
wall_ns=$(( $(date +%s%N) - t0 ))
line=$(grep '^bpfrec record: BPF programs ran' "$T/v.err") ||
	{ cat "$T/v.err" >&2; fail "no BPF program time in -v's summary"; }
echo "$line"
ms=$(echo "$line" | sed -n 's/.* ran \([0-9.]*\) ms in \([0-9]*\) runs.*/\1/p')
runs=$(echo "$line" | sed -n 's/.* ran \([0-9.]*\) ms in \([0-9]*\) runs.*/\2/p')
seen=$(sed -n 's/^bpfrec record: BPF saw \([0-9]*\) samples.*/\1/p' "$T/v.err")
[ -n "$ms" ] && [ -n "$runs" ] && [ -n "$seen" ] || fail "cannot read the -v summary"
[ "$seen" -gt 0 ] || fail "BPF saw no samples of rec_work"
[ "$runs" -ge "$seen" ] || fail "BPF programs ran $runs times for $seen samples"
awk -v ms="$ms" 'BEGIN { exit !(ms > 0) }' || fail "BPF program time is $ms ms"
limit_ms=$(( wall_ns * $(nproc) / 1000000 ))
awk -v ms="$ms" -v lim="$limit_ms" 'BEGIN { exit !(ms < lim) }' ||
	fail "BPF programs ran $ms ms, more than $(nproc) CPUs for the recording's $limit_ms ms"
