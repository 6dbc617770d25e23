#!/bin/bash
# A process that execs another program: one pid, both comms, each image's
# functions resolved under its own comm.
. "$(dirname "$0")/lib.sh"
need_root

cd "$T"
"$BPFREC" record -q -g -o x.data -- "$FIX/rec_exec" || fail "bpfrec record exited $?"
run_clean "$T/report.txt" perf report -i x.data --stdio --no-children --sort comm,dso,sym -g none
assert_grep 'rec_exec +rec_exec +\[\.\] before_exec$' "$T/report.txt" "before_exec not under comm rec_exec"
assert_grep 'rec_work +rec_work +\[\.\] leaf_a$' "$T/report.txt" "leaf_a not under comm rec_work"
assert_no_grep 'rec_exec +rec_work ' "$T/report.txt" "rec_work code attributed to comm rec_exec"
run_clean "$T/ids.txt" perf script -i x.data -F comm,pid -G
awk '$1 == "rec_exec" || $1 == "rec_work" { print $2 }' "$T/ids.txt" | sort -u >"$T/pids"
[ "$(wc -l <"$T/pids")" = 1 ] || fail "exec changed the pid: $(tr '\n' ' ' <"$T/pids")"
for c in rec_exec rec_work; do
	n=$(awk -v c=$c '$1 == c { n++ } END { print n + 0 }' "$T/ids.txt")
	echo "$c: $n samples"
	assert_range "$c samples" "$n" 100 100000
done
# Each exec is a COMM with the exec flag, as the kernel's own records would say.
run_clean "$T/tasks.txt" perf script -i x.data --show-task-events
assert_grep 'PERF_RECORD_COMM exec: rec_exec:' "$T/tasks.txt" "no exec COMM for rec_exec"
assert_grep 'PERF_RECORD_COMM exec: rec_work:' "$T/tasks.txt" "no exec COMM for rec_work"
