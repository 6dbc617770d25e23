#!/bin/bash
# Off-CPU stacks through libc: `nofp_work block` (-O2, no frame pointers)
# waits in two known functions through libc's wrappers, which have no frame
# pointers either: sleeper -> nanosleep (in a thread: feeder ->
# start_thread) and reader -> read of a pipe (main). bpfrec record --off-cpu
# walks their user stacks with CFI by default, so each function appears
# right above its libc call with the time the fixture measured there: the
# wall time inside the call, less the thread's CPU time in it (the part
# spent on a CPU is not off-CPU time), and never more than the wall time.
# --call-graph fp keeps the frame-pointer walk, which loses them.
. "$(dirname "$0")/lib.sh"
need_root
need_tool perf linux-perf
cd "$T"

# offcpu_under SCRIPT FUNC LIBC_RE OUTER1 OUTER2: "NS ALL_NS WHOLE_NS" of the
# offcpu-time samples (perf script -F event,period,ip,sym --no-inline) whose
# user chain has FUNC right above a libc frame matching LIBC_RE: their total
# period, the total of every offcpu-time sample, and the part whose chain
# goes on FUNC <- OUTER1 <- OUTER2.
offcpu_under() {
	awk -v fn="$2" -v lib="$3" -v o1="$4" -v o2="$5" 'BEGIN { RS = ""; FS = "\n" }
		$1 ~ /offcpu-time/ { split($1, h, " "); all += h[1]; k = 0
		  for (i = 2; i <= NF; i++) { split($i, f, " "); if (f[1] !~ /^ffff/) s[k++] = f[2] }
		  for (i = 1; i < k; i++) if (s[i] == fn) break
		  if (i == k || s[i - 1] !~ lib) next
		  t += h[1]
		  if (i + 2 < k && s[i + 1] == o1 && s[i + 2] == o2) whole += h[1] }
		END { printf "%d %d %d\n", t, all, whole }' "$1"
}
# check WAY NAME FUNC LIBC_RE OUTER1 OUTER2 KEY: FUNC's off-CPU time against
# the fixture's line "NAME: KEY NS cpu_ns NS calls N".
check() {
	local way=$1 name=$2 fn=$3 lib=$4 o1=$5 o2=$6 key=$7 wall cpu calls got all whole lo hi
	read -r wall cpu calls < <(sed -n "s/^$name: $key \([0-9]*\) cpu_ns \([0-9]*\) calls \([0-9]*\)\$/\1 \2 \3/p" $way.out)
	[ -n "$wall" ] || { cat $way.out >&2; fail "the fixture did not report $name's wait"; }
	read -r got all whole < <(offcpu_under $way.txt "$fn" "$lib" "$o1" "$o2")
	# Clock reads bracket the call: 1 % for their own cost and rounding.
	# The walks taken before the process had its tables (the first
	# milliseconds; the summary counts them, $early) may each have cost
	# one of the calls its place in the chain: an average call apiece.
	lo=$(awk -v w="$wall" -v c="$cpu" -v e="${early:-0}" -v n="$calls" \
		'BEGIN { printf "%d", (w - c - e * w / n) * 0.99 }')
	hi=$(awk -v w="$wall" 'BEGIN { printf "%d", w * 1.01 }')
	echo "$way: off-CPU under $fn: $got ns ($whole ns through $o1 <- $o2) of $all ns; the fixture: $wall ns in $calls calls, $cpu ns of it on a CPU"
	if [ "$way" = fp ]; then
		# Frame pointers do not get past libc's wrapper.
		[ "$got" -lt $((wall / 2)) ] || fail "--call-graph fp found $fn above libc's wrapper: is it walking CFI?"
		return
	fi
	assert_range "off-CPU ns under $fn ($way)" "$got" "$lo" "$hi"
	assert_range "off-CPU ns under $fn, whole chain ($way)" "$whole" "$lo" "$hi"
}

for way in default fp; do
	opt=()
	[ $way = fp ] && opt=(--call-graph fp)
	"$BPFREC" record -v -F 999 --off-cpu "${opt[@]}" -o $way.data -- "$FIX/nofp_work" block 100 \
		>$way.out 2>$way.err || { cat $way.err >&2; fail "bpfrec record --off-cpu ${opt[*]} failed"; }
	cat $way.out
	if [ $way = default ]; then
		grep 'cfi unwinding' $way.err || true
		read -r _ _ _ _ _ _ _ _ early <<<"$(cfi_summary $way.err)"
	fi
	run_clean $way.txt perf script -F event,period,ip,sym --no-inline --comm nofp_work -i $way.data
	check $way sleeper sleeper nanosleep feeder start_thread slept_ns
	check $way reader reader '(^|_)read$' block main waited_ns
done
echo "ok"
