#!/bin/bash
# --switch-output: by size and by time the recording is split into files
# named as perf names them (FILE.YYYYmmddHHMMSScc), each complete on its own
# (kernel map, COMM and MMAP2 of the processes in it: their functions
# resolve in every file), together holding every sample written;
# --switch-max-files keeps the newest N; SIGUSR2 switches on demand.
. "$(dirname "$0")/lib.sh"
need_root

cd "$T"
# The spinner runs on one CPU, the first this test may use; the size test
# records only that CPU, so its data rate is the same on 2 CPUs or 64.
cpu=$(awk '/^Cpus_allowed_list:/ { split($2, a, /[-,]/); print a[1] }' /proc/self/status)
# Long enough for the whole test however slow the machine: the trap ends it.
taskset -c "$cpu" "$FIX/rec_sleepspin" 0 600 & spin=$!
trap 'kill $spin 2>/dev/null || true; rm -rf "$T"' EXIT

# check_files GLOB: every file reads cleanly and resolves late_spin and kernel symbols.
check_files() {
	local f total=0 n kernel=0
	for f in $1; do
		[[ $f =~ \.[0-9]{16}$ ]] || fail "$f is not named FILE.YYYYmmddHHMMSScc"
		run_clean "$T/r.txt" perf report -i "$f" --stdio --no-children -g none --sort comm,dso,sym
		# Nothing of the spinner unresolved in any file; late_spin in every
		# file of some size (the last file holds what came after the last
		# switch: on a loaded machine a handful of samples, possibly none of
		# the spinner's); kernel symbols in one file at least (a small file
		# of a user-space spinner may have no kernel sample: 169 of 169 in
		# late_spin under 6.1 in a VM).
		assert_no_grep 'rec_sleepspin +\[unknown\] +\[\.\]' "$T/r.txt" "$f: rec_sleepspin samples in no file"
		n=$(report_samples "$T/r.txt")
		if [ "${n:-0}" -ge 50 ]; then
			assert_grep 'rec_sleepspin +rec_sleepspin +\[\.\] late_spin$' "$T/r.txt" "$f: late_spin unresolved"
		fi
		grep -qE '\[kernel\.kallsyms\] +\[k\] [a-z_]' "$T/r.txt" && kernel=1
		run_clean "$T/s.txt" perf script -i "$f" -F pid
		n=$(wc -l <"$T/s.txt")
		total=$((total + n))
	done
	[ "$kernel" = 1 ] || fail "$1: no kernel symbols in any file"
	echo "$total"
}

# By size: 1 MB files from a -g recording of the spinner's CPU at 4999 Hz;
# where this machine's timer delivers fewer samples (timer_hz), files as
# much smaller, so that 3.5 s still fill several.
rate=$(timer_hz 4999)
kb=$((1024 * rate / 4999))
[ "$kb" -ge 64 ] || kb=64
size=$((kb << 10))
echo "perf gets $rate Hz of 4999 here: files of ${kb}K"
"$BPFREC" record -C "$cpu" -a -g -F 4999 --switch-output=${kb}K --duration 3.5 -o size.data 2>"$T/size.err" ||
	fail "--switch-output=${kb}K exited $?"
cat "$T/size.err"
ls -l size.data* >&2
[ -e size.data ] && fail "the last file was not renamed"
n=$(ls size.data.* | wc -l)
# How many files depends on the data rate; what must hold is that more than
# the size was recorded (one busy CPU with call chains), so there was a
# switch, and a file is switched only once it has passed the size.
total_bytes=$(cat size.data.* | wc -c)
echo "files by size: $n, $total_bytes bytes"
assert_range "bytes recorded" "$total_bytes" "$size" 1000000000000
assert_range "files by size" "$n" 2 1000000
for f in $(ls size.data.* | head -n $((n - 1))); do
	assert_range "size of $f (not the last)" "$(stat -c %s "$f")" "$size" $((3 * size))
done
[ "$(grep -c '^\[ bpfrec record: Dump size\.data\.[0-9]\{16\} \]$' "$T/size.err")" = "$n" ] ||
	fail "not every file was announced"
for f in size.data.*; do
	# A file ends at the first round past 1 MB.
	assert_range "size of $f" "$(stat -c %s "$f")" 1 $((3 * size))
done
written=$(sed -n 's/.*(\([0-9]*\) samples, .*/\1/p' "$T/size.err")
total=$(check_files 'size.data.*' | tail -n 1)
[ "$total" = "$written" ] || fail "the files hold $total samples, bpfrec wrote $written"
# Names grow with time, so ls order is recording order.
first_last=$(ls size.data.* | head -n 1)
perf script -i "$first_last" -F time 2>/dev/null | tail -n 1 | tr -d ' :' >"$T/t1"
perf script -i "$(ls size.data.* | sed -n 2p)" -F time 2>/dev/null | awk 'NR == 1' | tr -d ' :' >"$T/t2"
awk -v a="$(cat "$T/t1")" -v b="$(cat "$T/t2")" 'BEGIN { exit !(a <= b) }' ||
	fail "the second file starts before the first ends"

# By time, keeping the newest 2.
"$BPFREC" record -q -a -g --switch-output=1s --switch-max-files 2 --duration 3.6 -o time.data ||
	fail "--switch-output=1s exited $?"
ls -l time.data* >&2
[ "$(ls time.data.* | wc -l)" = 2 ] || fail "--switch-max-files 2 kept $(ls time.data.* | wc -l) files"
check_files 'time.data.*' >/dev/null

# On SIGUSR2.
"$BPFREC" record -q -a --switch-output -o sig.data & rec=$!
for _ in $(seq 100); do [ -s sig.data ] && break; sleep 0.1; done
sleep 0.5; kill -USR2 $rec; sleep 0.5; kill -INT $rec
wait $rec || fail "bpfrec exited $? after SIGUSR2"
[ "$(ls sig.data.* | wc -l)" = 2 ] || fail "SIGUSR2 did not switch files"
check_files 'sig.data.*' >/dev/null

# Rotation needs a file.
rc=0; "$BPFREC" record -a --switch-output=1M -o - --duration 0.1 >/dev/null 2>"$T/pipe.err" || rc=$?
[ "$rc" = 2 ] || fail "--switch-output with -o - exited $rc"
assert_grep 'needs an output file' "$T/pipe.err"
