#!/bin/bash
# -a: a process started after recording began is resolved by name, idle
# (pid 0) is recorded as perf does, and SIGINT ends the recording with a
# complete file and exit code 0.
. "$(dirname "$0")/lib.sh"
need_root

cd "$T"
"$BPFREC" record -g -a -o a.data 2>"$T/rec.err" &
rec=$!
# The header is written once the sampler is attached: recording has begun.
for _ in $(seq 200); do
	[ "$(stat -c %s a.data 2>/dev/null || echo 0)" -gt 0 ] && break
	kill -0 $rec 2>/dev/null || break
	sleep 0.1
done
[ "$(stat -c %s a.data 2>/dev/null || echo 0)" -gt 0 ] || { cat "$T/rec.err"; fail "recording never started"; }
# perf record -a over the same window says how much idle there was to see
# (on some VMs idle CPUs are not sampled at all, by perf either).
perf record -q -a -o ref.data 2>"$T/ref.err" &
ref=$!
for _ in $(seq 100); do [ -s ref.data ] && break; sleep 0.1; done
"$FIX/rec_work" 0.5 &
work=$!
wait $work
sleep 0.5
kill -INT $ref $rec
wait $ref || true
rc=0; wait $rec || rc=$?
cat "$T/rec.err"
[ "$rc" = 0 ] || fail "bpfrec record -a exited $rc after SIGINT"

run_clean "$T/report.txt" perf report -i a.data --stdio --no-children --comm rec_work -g none
# perf sorts records one round mark (FINISHED_ROUND) behind: marks at
# least 0.1 s apart (recorder/loop.c) leave a record that late, its
# virtual CPU stalled between its stamp and its send, still in order. At
# most one mark per 0.1 s of the file's span, and the end's.
marks=$(perf report -D -i a.data 2>/dev/null | grep -c 'PERF_RECORD_FINISHED_ROUND' || true)
span=$(perf script -i a.data -F time 2>/dev/null | awk 'NR == 1 { a = $1 } { b = $1 } END { printf "%.3f", b - a }')
echo "round marks: $marks over $span s"
at_least "round marks" "$marks" 1
assert_range "round marks" "$marks" 1 "$(awk -v s="$span" 'BEGIN { printf "%d", s / 0.1 + 2 }')"
assert_grep 'rec_work +\[\.\] leaf_a$' "$T/report.txt" "leaf_a of the late process not resolved"
assert_grep 'rec_work +\[\.\] leaf_b$' "$T/report.txt" "leaf_b of the late process not resolved"
run_clean "$T/ids.txt" perf script -i a.data -F comm,pid -G
grep -qE "^ *rec_work +$work *\$" "$T/ids.txt" || { head "$T/ids.txt"; fail "no samples of rec_work pid $work"; }
# Idle (pid 0) is recorded whenever perf saw idle in the same window.
idle=$(awk '$NF == 0 { n++ } END { print n + 0 }' "$T/ids.txt")
ref_idle=$(perf script -i ref.data -F pid 2>/dev/null | awk '$1 == 0 { n++ } END { print n + 0 }')
echo "idle samples: bpfrec $idle, perf record $ref_idle"
if [ "$ref_idle" -ge 40 ]; then
	[ "$idle" -ge $((ref_idle / 4)) ] || fail "-a recorded $idle idle (pid 0) samples, perf $ref_idle"
fi
# Other processes and kernel threads are in the file too.
awk '$1 != "rec_work" && $NF != 0 { n++ } END { exit !(n > 0) }' "$T/ids.txt" ||
	fail "-a recorded nothing but rec_work"
# Share of leaf_a among rec_work's leaves (other processes dilute the total;
# start-up and exit cost what the machine makes them cost, the fixture fixes
# the leaves' ratio at 6:3:1).
# The range is widened to the sampling error of the leaves' count
# (assert_sampled): an emulated CPU gives a few hundred.
run_clean "$T/script.txt" perf script -i a.data --comm rec_work -F ip,sym
read -r total leaves share < <(awk '/^[ \t]*$/ { first = 1; next }
	first { first = 0; n[$2]++; t++; if ($2 ~ /^leaf_[abc]$/) l++ }
	BEGIN { first = 1 }
	END { printf "%d %d %.2f\n", t, l, l ? 100 * n["leaf_a"] / l : 0 }' "$T/script.txt")
echo "rec_work samples $total, $leaves in leaves, leaf_a $share% of them"
[ "$total" -gt 100 ] || fail "only $total samples of rec_work"
assert_sampled "leaf_a share of rec_work's leaves" "$share" "$leaves" 50 70
