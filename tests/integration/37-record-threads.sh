#!/bin/bash
# Several threads: every worker tid is recorded under the one pid, with its
# thread name, and its function resolved.
. "$(dirname "$0")/lib.sh"
need_root

cd "$T"
"$BPFREC" record -q -g -o th.data -- "$FIX/rec_threads" || fail "bpfrec record exited $?"
run_clean "$T/ids.txt" perf script -i th.data -F comm,pid,tid,ip,sym
# Header lines look like "rec_worker  1234/1236"; the leaf frame follows.
awk '/^[^ \t]/ { split($2, p, "/"); comm = $1; pid = p[1]; tid = p[2]; leaf = 1; next }
	leaf && NF { leaf = 0; print pid, tid, $2, comm }' "$T/ids.txt" >"$T/leaves"
awk '$3 == "worker_spin" { print $2 }' "$T/leaves" | sort | uniq -c | sort -rn >"$T/tids"
cat "$T/tids"
[ "$(awk '$1 >= 50' "$T/tids" | wc -l)" -ge 3 ] || fail "fewer than 3 worker tids with resolved worker_spin samples"
[ "$(awk '$3 == "worker_spin" { print $1 }' "$T/leaves" | sort -u | wc -l)" = 1 ] ||
	fail "worker threads under several pids"
awk '$3 == "worker_spin" && $1 == $2 { bad++ } END { exit bad > 0 }' "$T/leaves" ||
	fail "worker_spin samples carry tid == pid"
# Named threads keep their name: most worker samples are under comm rec_worker.
awk '$3 == "worker_spin" { t++; if ($4 == "rec_worker") n++ }
	END { printf "worker_spin under comm rec_worker: %d of %d\n", n, t; exit !(n >= 0.9 * t) }' \
	"$T/leaves" || fail "thread names (comm rec_worker) not recorded"
run_clean "$T/report.txt" perf report -i th.data --stdio --no-children --comm rec_worker -g none
assert_range "worker_spin among user samples" "$(user_share "$T/report.txt" worker_spin)" 95 100
