#!/bin/bash
# Overload: every sample the BPF program takes is either in the file or
# counted lost, and perf counts the same losses. At -F 4999 -g on two busy
# CPUs the default ring buffer loses nothing; at the kernel's maximum rate
# whatever is lost is accounted for exactly: written + lost = seen, and
# perf's "Total Lost Samples" is the recorder's lost count. The recordings
# cover at most two CPUs (-C), so the load is the same on a machine with 2
# CPUs or with 64.
. "$(dirname "$0")/lib.sh"
need_root

cd "$T"
# Busy on every CPU (other work on the machine may share them: no shares
# asserted), with a deep-ish stack, until the test stops them after the
# -F 4999 recording. Not for a fixed time: on an emulated CPU loading the
# programs alone took longer than the 20 s they once spun (5.10 under TCG:
# the recording then held bpfrec and idle, no spinner); 600 s bounds a
# test killed before its trap ran.
spinners=()
for _ in $(seq "$(nproc)"); do "$FIX/rec_sleepspin" 0 600 & spinners+=($!); done
trap 'kill "${spinners[@]}" 2>/dev/null || true; rm -rf "$T"' EXIT

# counts ERRFILE: "seen written lost" from the -v line.
counts() {
	sed -n 's/^bpfrec record: BPF saw \([0-9]*\) samples: \([0-9]*\) written, \([0-9]*\) lost$/\1 \2 \3/p' "$1"
}

# check NAME FILE ERRFILE: written + lost = seen; perf agrees on both.
check() {
	local name=$1 data=$2 err=$3 seen written lost
	read -r seen written lost < <(counts "$err") || fail "$name: no seen/written/lost line"
	echo "$name: seen $seen, written $written, lost $lost"
	[ $((written + lost)) = "$seen" ] || fail "$name: written $written + lost $lost != seen $seen"
	# perf warns about the losses themselves, and must say nothing else.
	perf report -i "$data" --stdio --no-children -g none >"$T/$name.txt" 2>"$T/$name.perf" ||
		fail "$name: perf report failed"
	perf script -i "$data" -F pid >"$T/$name.pids" 2>>"$T/$name.perf" ||
		fail "$name: perf script failed"
	if grep -v -e '^Warning:$' -e "^Processed $seen samples and lost [0-9.]*%!\$" -e '^$' \
		"$T/$name.perf"; then
		fail "$name: perf warned about more than the lost samples"
	fi
	[ "$lost" != 0 ] || [ ! -s "$T/$name.perf" ] || fail "$name: perf warned without losses"
	assert_grep "^# Total Lost Samples: $lost\$" "$T/$name.txt" "$name: perf counts other losses"
	# bpfrec dump, through the public reader, counts the same losses.
	"$BPFREC" dump -i "$data" >"$T/$name.dump" || fail "$name: bpfrec dump failed"
	if [ "$lost" != 0 ]; then
		assert_grep "^# lost: 0 \(LOST\) $lost \(LOST_SAMPLES\)\$" "$T/$name.dump" \
			"$name: bpfrec dump counts other losses"
	else
		assert_no_grep '^# lost:' "$T/$name.dump" "$name: bpfrec dump counts losses"
	fi
	[ "$(wc -l <"$T/$name.pids")" = "$written" ] ||
		fail "$name: perf script reads $(wc -l <"$T/$name.pids") samples, not $written"
}

# The first two CPUs this test may run on (a cpuset may exclude some).
cpus=$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status | tr ',' '\n' |
	awk -F- '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) if (n++ < 2) print c }')
ncpus=$(echo "$cpus" | wc -l)
cpus=$(echo "$cpus" | paste -sd,)
echo "recording CPUs $cpus"
"$BPFREC" record -v -F 4999 -C "$cpus" -a -g --duration 3 -o f4999.data 2>"$T/f4999.err" ||
	fail "-F 4999 exited $?"
check f4999 f4999.data "$T/f4999.err"
read -r seen _ lost < <(counts "$T/f4999.err")
# Busy CPUs give 4999 samples a second each (or what this machine's timer
# delivers of it) over the time the samples span
# (--duration counts from a start a loaded machine may delay).
span=$(sample_span f4999.data)
echo "f4999: samples span $span s on $ncpus CPUs"
assert_range "samples span (s)" "$span" 2 30
rate=$(timer_hz 4999)
echo "perf gets $rate Hz of 4999 on this machine"
assert_range "samples at 4999 Hz" "$seen" "$(awk -v s="$span" -v n="$ncpus" -v r="$rate" 'BEGIN { printf "%d", r * s * n / 3 }')" \
	"$(awk -v s="$span" -v n="$ncpus" 'BEGIN { printf "%d", 4999 * s * n * 1.1 + 100 }')"
[ "$lost" = 0 ] || fail "the default ring buffer lost $lost samples at -F 4999 -a -g"
echo "f4999: the spinners' late_spin $(self_share "$T/f4999.txt" late_spin)% of the samples"
assert_grep "rec_sleepspin +\\[\\.\\] late_spin$" "$T/f4999.txt" "the spinners are not in the profile"

# The spinners stop here. At the kernel's maximum rate the samples come
# from idle CPUs as well (-a), and on CPUs that something else keeps busy
# a 100 kHz timer starves the recorder that must read them: a test run
# then took minutes. (Each reading of the rings now ends after 50 ms, so
# --duration is seen: 17 s to stop on an idle 2-CPU host, was 62 s.)
kill "${spinners[@]}" 2>/dev/null || true
wait "${spinners[@]}" 2>/dev/null || true
max=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
"$BPFREC" record -v -F max -C "$cpus" -a -g --duration 2 -o fmax.data 2>"$T/fmax.err" ||
	fail "-F max exited $?"
check fmax fmax.data "$T/fmax.err"

# A ring buffer too small for the rate loses samples, and says how many.
"$BPFREC" record -v -m 16K -F max -C "$cpus" -a -g --duration 1 -o small.data 2>"$T/small.err" ||
	fail "-m 16K exited $?"
check small small.data "$T/small.err"
read -r _ _ lost < <(counts "$T/small.err")
assert_range "lost with -m 16K at $max Hz" "$lost" 1 1000000000
assert_grep "warning: $lost samples were lost \(ring buffer full\): raise -m or lower -F" "$T/small.err"
