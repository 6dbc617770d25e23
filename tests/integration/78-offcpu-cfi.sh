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
need_kernel_for --off-cpu
need_tool perf linux-perf
cd "$T"

# The samples of SCRIPT (perf script -F event,period,ip,sym --no-inline)
# one per line: "EVENT PERIOD FRAME...", kernel frames as "k:SYM", user
# ones as "u:SYM". A sample starts at each line that is not a call-chain
# line (those start with a tab), not at a blank line: a cpu-clock sample
# without a chain is one line with no blank line after it, and the sample
# after it would be read as its chain. Periods stay as text: awk's %d stops
# at 2^31 ns, and a loaded machine waits longer than that.
samples() {
	awk '/^\t/ { split($0, f, " "); line = line " " (f[1] ~ /^ffff/ ? "k:" : "u:") f[2]; next }
		/[^ ]/ { if (line != "") print line; split($0, h, " "); line = h[2] " " h[1] }
		END { if (line != "") print line }' "$1"
}
# offcpu_under SCRIPT FUNC LIBC_RE OUTER1 OUTER2 KFUNC:
# "NS ALL_NS WHOLE_NS MISSED CUT" of the offcpu-time samples whose kernel
# chain has KFUNC (the waits kernel_waits counts) and whose user chain has
# FUNC right above a libc frame matching LIBC_RE: their total period, the
# total of every offcpu-time sample, the part whose chain goes on FUNC <-
# OUTER1 <- OUTER2, and how many of those waits were not under FUNC and
# how many under FUNC were not whole. (A preemption on the way out of the
# wrapper is under FUNC too, but not one of those waits.)
offcpu_under() {
	samples "$1" | awk -v fn="$2" -v lib="$3" -v o1="$4" -v o2="$5" -v kf="$6" '
		$1 ~ /^offcpu-time/ { all += $2; k = 0; kin = 0
		  for (i = 3; i <= NF; i++) if ($i ~ /^u:/) s[k++] = substr($i, 3)
		  for (i = 3; i <= NF; i++) if ($i ~ /^k:/ && substr($i, 3) ~ kf) kin = 1
		  if (!kin) next
		  for (i = 1; i < k; i++) if (s[i] == fn) break
		  if (i == k || s[i - 1] !~ lib) {
			# Shown, to tell a chain cut short from time spent elsewhere.
			for (j = 0; j < k && s[j] != fn; j++) ;
			if (shown++ < 5)
				printf "not counted under %s: %s ns, %s <- %s <- %s <- %s\n", fn, $2, s[0], s[1], s[2], s[3] > "/dev/stderr"
			missed++
			next }
		  t += $2
		  if (i + 2 < k && s[i + 1] == o1 && s[i + 2] == o2) whole += $2; else cut++ }
		END { printf "%.0f %.0f %.0f %d %d\n", t, all, whole, missed, cut }'
}
# kernel_waits SCRIPT KFUNC: total period of the offcpu-time samples whose
# kernel chain has KFUNC (do_nanosleep, pipe_read): the waits themselves,
# as the kernel saw them, whatever the user stack says.
kernel_waits() {
	samples "$1" | awk -v k="$2" '
		$1 ~ /^offcpu-time/ { for (i = 3; i <= NF; i++) if ($i ~ /^k:/ && substr($i, 3) ~ k) { t += $2; break } }
		END { printf "%.0f\n", t }'
}
# check WAY NAME FUNC LIBC_RE OUTER1 OUTER2 KEY KFUNC: FUNC's off-CPU time
# against the same waits seen from the kernel side of the same file
# (KFUNC), and those against the fixture's line "NAME: KEY NS cpu_ns NS calls N".
check() {
	local way=$1 name=$2 fn=$3 lib=$4 o1=$5 o2=$6 key=$7 kfn=$8 wall cpu calls got all whole kern missed cut
	read -r wall cpu calls < <(sed -n "s/^$name: $key \([0-9]*\) cpu_ns \([0-9]*\) calls \([0-9]*\)\$/\1 \2 \3/p" $way.out)
	[ -n "$wall" ] || { cat $way.out >&2; fail "the fixture did not report $name's wait"; }
	read -r got all whole missed cut < <(offcpu_under $way.txt "$fn" "$lib" "$o1" "$o2" "$kfn")
	kern=$(kernel_waits $way.txt "$kfn")
	echo "$way: off-CPU under $fn: $got ns ($whole ns through $o1 <- $o2) of $all ns; in $kfn: $kern ns; the fixture: $wall ns in $calls calls, $cpu ns of it on a CPU; $stolen ns stolen"
	if [ "$way" = fp ]; then
		# Frame pointers do not get past libc's wrapper.
		[ "$got" -lt $((wall / 2)) ] || fail "--call-graph fp found $fn above libc's wrapper: is it walking CFI?"
		return
	fi
	# The recorder saw the waits the fixture measured: the wall time in
	# the calls less their CPU time, less a per-call cost of entering and
	# leaving the wait that the fixture's clocks include (10 %: about
	# 100 us of a 2 ms call on a loaded VM), less what the hypervisor stole
	# from the machine meanwhile (steal_ns), never more than the wall time.
	assert_range "off-CPU ns in $kfn ($way)" "$kern" \
		"$(awk -v w="$wall" -v c="$cpu" -v s="$stolen" 'BEGIN { printf "%.0f", (w - c - s) * 0.9 }')" \
		"$(awk -v w="$wall" 'BEGIN { printf "%.0f", w * 1.01 }')"
	# And the user stacks put every one of those waits under FUNC, right
	# above libc's wrapper, with the whole chain above it: all but the
	# walks the summary explains ($early), which may stop short: those made
	# before the process had tables, those that reached a mapping whose
	# table was not in yet (stopped at no-mapping: libc's, in the first
	# milliseconds), and those that went on by frame pointers from there.
	echo "$way: $missed of those waits not under $fn, $cut under it cut short; $early walks explained ($before before tables, $nomap at no-mapping, $byfp by frame pointers)"
	[ "$got" -gt 0 ] && [ "$got" -le "$kern" ] || fail "off-CPU ns under $fn ($way): $got, of $kern"
	[ $((missed + cut)) -le "${early:-0}" ] ||
		fail "$((missed + cut)) waits lost $fn or its callers ($way), more than the $early walks the summary explains"
}

for way in default fp; do
	opt=()
	[ $way = fp ] && opt=(--call-graph fp)
	stolen=$(steal_ns)
	"$BPFREC" record -v -F 999 --off-cpu "${opt[@]}" -o $way.data -- "$FIX/nofp_work" block 100 \
		>$way.out 2>$way.err || { cat $way.err >&2; fail "bpfrec record --off-cpu ${opt[*]} failed"; }
	stolen=$(( $(steal_ns) - stolen ))
	cat $way.out
	if [ $way = default ]; then
		grep 'cfi unwinding' $way.err || true
		read -r _ _ byfp _ _ _ _ _ before <<<"$(cfi_summary $way.err)"
		nomap=$(cfi_stops $way.err no-mapping)
		early=$((before + nomap + byfp))
	fi
	run_clean $way.txt perf script -F event,period,ip,sym --no-inline --comm nofp_work -i $way.data
	check $way sleeper sleeper nanosleep feeder start_thread slept_ns '^do_nanosleep$'
	check $way reader reader '(^|_)read$' block main waited_ns 'pipe_read$'
done
echo "ok"
