#!/bin/bash
# bpfrec record --off-cpu: a second event, offcpu-time, whose periods are
# the nanoseconds threads waited. The fixture sleeps 20 x 50 ms in
# sleep_wait, blocks on a pipe in pipe_wait (fed every 50 ms) and spins in
# spin_work; it prints how long it really spent in each wait. perf report,
# perf script, bpfrec pprof and the pipe mode must all agree with it.
. "$(dirname "$0")/lib.sh"
need_root
need_kernel_for --off-cpu

cd "$T"
calc() { awk "BEGIN { printf \"%.3f\n\", $1 }"; }
# Frame pointers (the fixture has them): this test is about the off-CPU
# event and its accounting. With -g (cfi), an interval that begins in the
# first milliseconds, before the process's unwind tables are in, may lose
# its caller (counted; test 78 checks cfi's off-CPU stacks against that).
# -v: the recorder's own count of the intervals, checked at the end.
stolen=$(steal_ns)
"$BPFREC" record -v -F 999 --call-graph fp --off-cpu -- "$FIX/rec_offcpu" 20 50 2>"$T/rec.err" ||
	{ rc=$?; grep -v '^libbpf' "$T/rec.err"; fail "bpfrec record exited $rc"; }
stolen_ms=$(( ($(steal_ns) - stolen) / 1000000 ))
grep -v '^libbpf' "$T/rec.err"
want_sleep=$(sed -n 's/^rec_offcpu: sleep_wait \([0-9.]*\) ms.*/\1/p' "$T/rec.err")
want_pipe=$(sed -n 's/^rec_offcpu: sleep_wait .*pipe_wait \([0-9.]*\) ms$/\1/p' "$T/rec.err")
[ -n "$want_sleep" ] && [ -n "$want_pipe" ] || fail "the fixture did not report its waits"
# 20 sleeps of 50 ms: at least 1 s; how much later they end is the machine's.
at_least "fixture sleep_wait ms" "$want_sleep" 1000

# perf report: both events; the waits' children totals match the fixture.
run_clean "$T/report.txt" perf report -i perf.data --stdio --children --sort sym -g none
assert_grep "of event 'cpu-clock'" "$T/report.txt"
assert_grep "of event 'offcpu-time'" "$T/report.txt"
[ "$(grep -c 'Total Lost Samples: 0' "$T/report.txt")" -ge 1 ] || fail "samples were lost"
# ms of SYMBOL's children in EVENT: children% x the event count (ns).
children_ms() { # EVENT SYMBOL
	awk -v ev="$1" -v s="$2" '
		/of event / { cur = ($0 ~ "of event ." ev ".$") }
		cur && /Event count/ { total = $NF }
		cur && $NF == s && $1 ~ /%$/ { sub(/%/, "", $1); pct = $1 }
		END { printf "%.3f\n", pct * total / 100 / 1e6 }' "$T/report.txt"
}
sleep_ms=$(children_ms offcpu-time sleep_wait)
pipe_ms=$(children_ms offcpu-time pipe_wait)
echo "offcpu-time: sleep_wait $sleep_ms ms (fixture $want_sleep), pipe_wait $pipe_ms ms (fixture $want_pipe); $stolen_ms ms stolen"
# The fixture's clock also counts what the hypervisor stole (steal_ns) and
# the thread's own CPU time in the wait (large where a loaded host holds the
# vCPU while the guest thinks the thread runs).
cpu_sleep=$(sed -n 's/^rec_offcpu: on CPU in sleep_wait \([0-9.]*\) ms.*/\1/p' "$T/rec.err")
cpu_pipe=$(sed -n 's/^rec_offcpu: on CPU in .*in pipe_wait \([0-9.]*\) ms$/\1/p' "$T/rec.err")
echo "fixture on CPU: sleep_wait ${cpu_sleep:-?} ms, pipe_wait ${cpu_pipe:-?} ms"
assert_range "offcpu sleep_wait ms" "$sleep_ms" "$(calc "($want_sleep - ${cpu_sleep:-0} - $stolen_ms) * 0.9")" "$(calc "$want_sleep * 1.1")"
assert_range "offcpu pipe_wait ms" "$pipe_ms" "$(calc "($want_pipe - ${cpu_pipe:-0} - $stolen_ms) * 0.9")" "$(calc "$want_pipe * 1.1")"
# On CPU it is the spinner, not the waiters.
run_clean "$T/self.txt" perf report -i perf.data --stdio --no-children --sort sym -g none
# Of the user-space cpu-clock samples: the kernel's part is the machine's.
spin=$(awk '/of event / { cur = /cpu-clock/ }
	cur && $1 ~ /%$/ && / \[\.\] / { p = $1; sub(/%/, "", p); u += p; if ($NF == "spin_work") t += p }
	END { printf "%.2f\n", u ? 100 * t / u : 0 }' "$T/self.txt")
echo "cpu-clock: spin_work ${spin:-0}% of user samples"
assert_range "cpu-clock spin_work % of user samples" "${spin:-0}" 80 100

# perf script (its default output, which shows the state as "BPF output"):
# both event names; every sleep_wait interval is one sample
# whose chain starts in the scheduler, says why (nanosleep), ends in the
# fixture's thread and carries the state "S (sleeping)"; a preemption in the
# wait functions' own code carries "R (preempted)".
run_clean "$T/script.txt" perf script -i perf.data
grep -q ' cpu-clock: *$' "$T/script.txt" || fail "no cpu-clock samples in perf script"
# Each of the 20 reads waits, but for one that found its byte there already.
ready=$(sed -n 's/^rec_offcpu: pipe reads that did not wait: //p' "$T/rec.err")
awk -v min_pipes=$((20 - ${ready:-0})) '
	/^[^ \t]/ { flush(); head = $0; n = 0; state = ""; next }
	/BPF string:|BPF output: 0000:/ { state = state $0; next }
	NF >= 2 && $1 ~ /^[0-9a-f]+$/ { sub(/\+0x[0-9a-f]+$/, "", $2); fr[n++] = $2; next }
	END { flush()
		printf "offcpu samples %d, sleep_wait %d (bad %d), pipe_wait %d (bad %d), preempted inside a wait %d\n", all, sleeps, badsleep, pipes, badpipe, preempted
		exit !(all > 40 && sleeps >= 20 && sleeps <= 26 && !badsleep && pipes >= min_pipes && !badpipe) }
	function flush(  i, has_sleep, has_pipe, has_nsleep, has_pread, bad_state) {
		if (head !~ / offcpu-time: *$/) return
		all++
		for (i = 0; i < n; i++) {
			has_sleep += fr[i] == "sleep_wait"; has_pipe += fr[i] == "pipe_wait"
			has_nsleep += fr[i] == "do_nanosleep"; has_pread += fr[i] ~ /pipe_read$/
		}
		# The thread may also be preempted while it runs its own code around
		# the wait: such an interval must say so ("R (preempted)").
		if ((has_sleep && !has_nsleep) || (has_pipe && !has_pread)) {
			if (state !~ /R \(pre/) { badsleep++; print "wait function left without waiting, not preempted: " head " state " state }
			return }
		# Inside the syscall the thread sleeps ("S"), or a preemptible
		# kernel preempts it on the way into or out of the wait ("R
		# (preempted)"; under load a whole timer wait can pass that way).
		if (state ~ /R \(pre/) preempted += has_sleep || has_pipe
		else if (state !~ /S \(slee/) bad_state = 1
		if (has_sleep) { sleeps++
			# The root of the thread: start_thread, or clone3 below it where the
			# walk follows CFI (-g: the child side of clone3 is the outermost frame).
			if (fr[0] !~ /^__?schedule/ || !(fr[n-1] == "start_thread" ||
			    (fr[n-1] ~ /^clone3?$/ && fr[n-2] == "start_thread")) || bad_state) {
				badsleep++; if (badsleep < 3) print "bad sleep_wait sample: " head " " fr[0] " ... " fr[n-1] " state " state } }
		if (has_pipe) { pipes++
			if (fr[0] !~ /^__?schedule/ || bad_state) {
				badpipe++; if (badpipe < 3) print "bad pipe_wait sample: " head " " fr[0] " state " state } }
	}' "$T/script.txt" || fail "off-CPU samples in perf script are not what the fixture did"

# pprof: one profile per event; off_cpu/nanoseconds totals as perf report.
run_clean "$T/pprof.txt" "$BPFREC" pprof -q -i perf.data -o "$T/p.pb.gz"
[ -s "$T/p.offcpu-time.pb.gz" ] && [ -s "$T/p.cpu-clock.pb.gz" ] || fail "bpfrec pprof did not write one profile per event"
HOME=$T go tool pprof -top -unit=ms -sample_index=off_cpu "$T/p.offcpu-time.pb.gz" >"$T/top.txt" 2>&1 ||
	{ cat "$T/top.txt"; fail "go tool pprof failed"; }
assert_grep '^Type: off_cpu' "$T/top.txt"
pp_sleep=$(awk '$NF == "sleep_wait" { sub(/ms/, "", $4); print $4 }' "$T/top.txt")
pp_total=$(sed -n 's/.* of \([0-9.]*\)ms total.*/\1/p' "$T/top.txt")
perf_total=$(awk '/of event .offcpu-time./ { f = 1 } f && /Event count/ { print $NF / 1e6; exit }' "$T/report.txt")
echo "pprof: sleep_wait ${pp_sleep:-?} ms, total ${pp_total:-?} ms (perf report $perf_total ms)"
assert_range "pprof sleep_wait ms" "${pp_sleep:-0}" "$(calc "$sleep_ms - 1")" "$(calc "$sleep_ms + 1")"
assert_range "pprof total ms" "${pp_total:-0}" "$(calc "$perf_total * 0.999")" "$(calc "$perf_total * 1.001")"

# Pipe mode carries both events too.
stolen=$(steal_ns)
"$BPFREC" record -q -g --off-cpu -o - -- "$FIX/rec_offcpu" 10 20 2>"$T/pipe.err" |
	perf script -i - -F comm,event,period,sym >"$T/pipe.txt" 2>"$T/perf.err"
stolen_ms=$(( ($(steal_ns) - stolen) / 1000000 ))
if [ -s "$T/perf.err" ]; then cat "$T/perf.err"; fail "perf script -i - warned"; fi
grep -q ' cpu-clock: *$' "$T/pipe.txt" || fail "no cpu-clock samples through the pipe"
p_sleep=$(awk '/^[^ \t]/ { off = / offcpu-time: *$/; p = $(NF-1); next } off && $2 == "sleep_wait" { t += p } END { printf "%.3f\n", t / 1e6 }' "$T/pipe.txt")
p_want=$(sed -n 's/^rec_offcpu: sleep_wait \([0-9.]*\) ms.*/\1/p' "$T/pipe.err")
p_cpu=$(sed -n 's/^rec_offcpu: on CPU in sleep_wait \([0-9.]*\) ms.*/\1/p' "$T/pipe.err")
echo "pipe: sleep_wait $p_sleep ms (fixture $p_want, ${p_cpu:-?} ms of it on CPU); $stolen_ms ms stolen"
assert_range "pipe sleep_wait ms" "$p_sleep" "$(calc "($p_want - ${p_cpu:-0} - $stolen_ms) * 0.9")" "$(calc "$p_want * 1.1")"

# Every switch-out of the fixture's threads ends in the file or counted lost:
# the BPF program's own count (-v, the first recording) against its
# samples. A switch-in that the kernel does not report (some kernels leave
# out switches away from some tasks) must not make the thread's next
# switch-out overwrite the interval, however short it was.
line=$(grep '^bpfrec record: off-CPU: BPF saw' "$T/rec.err") || fail "no off-CPU count at -v"
read -r blocked written lost open unpaired <<<"$(echo "$line" |
	sed 's/.* saw \([0-9]*\) blocked intervals: \([0-9]*\) written, \([0-9]*\) lost, \([0-9]*\) open.*; \([0-9]*\) closed.*/\1 \2 \3 \4 \5/')"
in_file=$(grep -c ' offcpu-time: *$' "$T/script.txt" || true)
echo "off-CPU: BPF saw $blocked intervals, $in_file in the file, $lost lost, $open open, $unpaired switch-ins unreported"
[ "$written" = "$in_file" ] || fail "the recorder wrote $written off-CPU samples, the file has $in_file"
[ "$open" = 0 ] && [ "$blocked" = "$((written + lost))" ] ||
	fail "$blocked switch-outs, $written intervals written and $lost lost: $open went missing"
