#!/bin/bash
# bpfrec record --call-graph dwarf on code WITHOUT frame pointers: perf,
# hotspot's parser and the pipe unwind our REGS_USER + STACK_USER into whole
# stacks, as well as they unwind perf record --call-graph dwarf of the same
# program on this machine (perf is the yardstick, measured in the test).
. "$(dirname "$0")/lib.sh"
need_root
cd "$T"

# Percent of samples of comm $2 in perf script output $1 whose outermost frame is a thread root.
root_share() {
	awk -v C="$2" 'BEGIN { RS = ""; FS = "\n" }
		{ split($1, h, " "); if (h[1] != C) next; n++
		  if ($NF ~ /[ \t](_start|__libc_start_call_main|__libc_start_main[a-z_]*|start_thread|clone3?)[+ ]/) r++ }
		END { printf "%.1f %d\n", n ? 100 * r / n : 0, n }' "$1"
}
# Percent of leaf_a/leaf_b samples whose chain goes on leaf -> mid -> main (perf script -F ip,sym).
chain_share() {
	awk 'BEGIN { RS = ""; FS = "\n" }
		{ k = 0; for (i = 1; i <= NF; i++) { split($i, f, " "); if (f[2] != "") s[k++] = f[2] }
		  if (s[0] !~ /^leaf_[ab]$/) next; n++
		  x = substr(s[0], 6)
		  if (s[1] == "mid_" x && s[2] == "main") ok++ }
		END { printf "%.1f %d\n", n ? 100 * ok / n : 0, n }' "$1"
}
at_least() { # NAME VALUE MIN
	awk -v v="$2" -v lo="$3" 'BEGIN { exit !(v >= lo) }' || fail "$1 = $2, expected at least $3"
}

# --- The fixture: main -> mid_a -> leaf_a (75%), main -> mid_b -> leaf_b (25%). ---
"$BPFREC" record --call-graph dwarf -- "$FIX/nofp_work" cpu 2>"$T/rec.err" ||
	{ cat "$T/rec.err"; fail "bpfrec record --call-graph dwarf exited $?"; }
cat "$T/rec.err"
perf record -q --call-graph dwarf -o perf-ref.data -- "$FIX/nofp_work" cpu 2>/dev/null ||
	fail "perf record --call-graph dwarf failed"

# The attr is perf's DWARF mode.
"$BPFREC" dump -i perf.data >"$T/dump.txt" || fail "bpfrec dump failed"
assert_grep 'REGS_USER\|STACK_USER' "$T/dump.txt"
assert_grep 'sample_regs_user 0xff0fff' "$T/dump.txt"
assert_grep 'sample_stack_user 8192' "$T/dump.txt"
assert_grep 'exclude_callchain_user' "$T/dump.txt"

run_clean "$T/self.txt" perf report -i perf.data --stdio --no-children --comm nofp_work
a=$(self_share "$T/self.txt" leaf_a)
b=$(self_share "$T/self.txt" leaf_b)
# The split between the two leaves (the rest is exec and exit, whatever the machine's load).
a_of_ab=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f\n", (a + b > 0 ? 100 * a / (a + b) : 0) }')
echo "self: leaf_a=$a leaf_b=$b, leaf_a's part of both $a_of_ab%"
assert_range "leaf_a + leaf_b" "$(awk -v a="$a" -v b="$b" 'BEGIN { print a + b }')" 85 100.01
assert_range "leaf_a / (leaf_a + leaf_b)" "$a_of_ab" 70 80
total=$(sed -n "s/^# Samples: \([0-9]*\).*cpu-clock.*/\1/p" "$T/self.txt")
lost=$(sed -n 's/^# Total Lost Samples: //p' "$T/self.txt")
echo "lost $lost"
[ "${lost:-0}" -le $(( ${total:-0} / 100 )) ] || fail "lost $lost samples at the default rate"

# Children: mid_a holds about leaf_a's share, main nearly everything.
run_clean "$T/children.txt" perf report -i perf.data --stdio --children --comm nofp_work -g none
ma=$(children_of "$T/children.txt" mid_a)
mm=$(children_of "$T/children.txt" main)
echo "children: mid_a=$ma main=$mm"
assert_range mid_a "${ma:-0}" 67 83
assert_range main "${mm:-0}" 90 100.01

# Whole chains leaf -> mid -> main, as often as perf's own recording has them.
run_clean "$T/script.txt" perf script -i perf.data -F ip,sym --comm nofp_work
perf script -i perf-ref.data -F ip,sym --comm nofp_work >"$T/script-ref.txt" 2>/dev/null || fail "perf script of perf's own recording failed"
read -r ours n_ours < <(chain_share "$T/script.txt")
read -r ref n_ref < <(chain_share "$T/script-ref.txt")
echo "whole chains: ours $ours% of $n_ours leaf samples, perf $ref% of $n_ref"
at_least "leaf samples" "$n_ours" 200
at_least "whole chains (ours)" "$ours" 90
at_least "whole chains (ours, perf - 5)" "$ours" "$(awk -v r="$ref" 'BEGIN { print r - 5 }')"

# The pipe: the same stacks through perf script -i -.
"$BPFREC" record -q --call-graph dwarf -o - -- "$FIX/nofp_work" cpu 0.3 2>"$T/pipe.err" >pipe.data ||
	{ cat "$T/pipe.err"; fail "bpfrec record -o - exited $?"; }
run_clean "$T/pipe.txt" perf script -i - -F ip,sym --comm nofp_work <pipe.data
read -r pipe n_pipe < <(chain_share "$T/pipe.txt")
echo "pipe: whole chains $pipe% of $n_pipe"
at_least "leaf samples (pipe)" "$n_pipe" 50
at_least "whole chains (pipe)" "$pipe" 90

# hotspot's parser unwinds too: same count, and the callers only unwinding finds.
parser=/usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser
[ -x "$parser" ] || fail "hotspot-perfparser is missing (tools/deps.sh test installs hotspot)"
timeout 120 "$parser" --input perf.data --print-stats >"$T/hotspot.txt" 2>&1 ||
	{ cat "$T/hotspot.txt"; fail "hotspot-perfparser failed"; }
n_hotspot=$(sed -n 's/^samples: //p' "$T/hotspot.txt")
n_script=$(perf script -i perf.data -F event 2>/dev/null | grep -c cpu-clock)
[ "$n_hotspot" = "$n_script" ] || fail "hotspot counts $n_hotspot samples, perf script $n_script"
timeout 120 "$parser" --input perf.data --output "$T/hotspot.bin" >/dev/null 2>&1 ||
	fail "hotspot-perfparser --output failed"
for f in mid_a mid_b main; do
	# Not `strings | grep -q` under pipefail: grep's early exit kills strings with SIGPIPE.
	grep -qx "$f" <(strings "$T/hotspot.bin") || fail "hotspot's parser did not unwind to $f"
done

# --- Debian's python3 and libc's qsort calling back into us: stacks reach the root. ---
# Half a second of the interpreter's CPU time, not a fixed loop: as many samples on a faster CPU.
py='import time
x = 0
while time.process_time() < 0.5:
    for i in range(100000): x += i * i'
"$BPFREC" record -q --call-graph dwarf -o py.data -- python3 -c "$py" || fail "record python3"
perf record -q --call-graph dwarf -o py-ref.data -- python3 -c "$py" 2>/dev/null ||
	fail "perf record python3"
run_clean "$T/py.txt" perf script -i py.data
perf script -i py-ref.data >"$T/py-ref.txt" 2>/dev/null || fail "perf script of perf's own recording failed"
read -r ours n_ours < <(root_share "$T/py.txt" python3)
read -r ref n_ref < <(root_share "$T/py-ref.txt" python3)
echo "python3: root reached in $ours% of $n_ours samples, perf $ref% of $n_ref"
at_least "python3 samples" "$n_ours" 100
at_least "python3 root share (perf - 5)" "$ours" "$(awk -v r="$ref" 'BEGIN { print r - 5 }')"

"$BPFREC" record -q --call-graph dwarf -o qs.data -- "$FIX/nofp_work" qsort || fail "record qsort"
perf record -q --call-graph dwarf -o qs-ref.data -- "$FIX/nofp_work" qsort 2>/dev/null ||
	fail "perf record qsort"
run_clean "$T/qs.txt" perf script -i qs.data --comm nofp_work
perf script -i qs-ref.data --comm nofp_work >"$T/qs-ref.txt" 2>/dev/null || fail "perf script of perf's own recording failed"
read -r ours n_ours < <(root_share "$T/qs.txt" nofp_work)
read -r ref n_ref < <(root_share "$T/qs-ref.txt" nofp_work)
echo "qsort: root reached in $ours% of $n_ours samples, perf $ref% of $n_ref"
at_least "qsort samples" "$n_ours" 200
at_least "qsort root share (perf - 5)" "$ours" "$(awk -v r="$ref" 'BEGIN { print r - 5 }')"
# The callback's callers: cmp_keys inside qsort inside sort_rounds.
awk 'BEGIN { RS = ""; FS = "\n" } $2 ~ / cmp_keys\+/ && $0 ~ /qsort/ && $0 ~ / sort_rounds\+/ { n++ }
	END { exit !(n > 0) }' "$T/qs.txt" || fail "no sample of cmp_keys <- qsort <- sort_rounds"

# --- Off-CPU: the function that called nanosleep through libc, with its time. ---
"$BPFREC" record -q --call-graph dwarf --off-cpu -o off.data -- "$FIX/nofp_work" sleep 100 \
	>"$T/sleep.out" || fail "record --off-cpu --call-graph dwarf"
slept=$(sed -n 's/^slept //p' "$T/sleep.out")
run_clean "$T/off-report.txt" perf report -i off.data --stdio --children --comm nofp_work
assert_grep "of event 'offcpu-time'" "$T/off-report.txt"
run_clean "$T/off.txt" perf script -i off.data -F event,period,ip,sym --comm nofp_work
in_sleeper=$(awk 'BEGIN { RS = ""; FS = "\n" }
	$1 ~ /offcpu-time/ && $0 ~ / sleeper(\n|$)/ && $0 ~ / main(\n|$)/ { split($1, h, " "); t += h[1] }
	END { printf "%d\n", t }' "$T/off.txt")
echo "off-CPU under sleeper: $in_sleeper ns; the fixture measured $slept ns in nanosleep"
ratio=$(awk -v a="$in_sleeper" -v b="$slept" 'BEGIN { printf "%.3f\n", b ? a / b : 0 }')
assert_range "off-CPU time under sleeper / measured" "$ratio" 0.8 1.01
echo "PASS"
