#!/bin/bash
# --alloc across --switch-output (what every bpfrec agent window is): the
# recording of alloc_known is cut into files by SIGUSR2, soon and often. Every
# file reads clean in perf script; no sample of any file lacks its
# process's COMM (perf names such a sample ":PID": an allocation record
# that waited behind a later CPU sample used to come before the COMM the
# new file has, and the agent filed it under service "unknown"); and the
# alloc bytes of every function over all the files are the fixture's, to
# the byte (each record in exactly one file).
. "$(dirname "$0")/lib.sh"
need_root
need_kernel_for --alloc
need_tool perf linux-perf

cd "$T"
trap 'kill ${rec:-} 2>/dev/null || true; rm -rf "$T"' EXIT

# by_caller SCRIPT: "FUNC BYTES" per direct caller of the allocator (the
# second frame of each alloc sample), as test 59 sums them.
by_caller() {
	awk '
		/^[^ \t]/ || /^ +[0-9]+ +[0-9]+ / { ev = ""; n = 0
			for (i = 1; i <= NF; i++) if ($i ~ /:$/) { ev = $i; per = $(i - 1) }
			sub(/:$/, "", ev); next }
		/^[ \t]+[0-9a-f]+ / && ev == "alloc" { if (++n == 2) { s = $2; sub(/\+0x.*/, "", s); sum[s] += per } }
		END { for (s in sum) printf "%s %.0f\n", s, sum[s] }' "$1"
}

# record_cut DIR CMD...: record CMD with --alloc=1 into DIR/w.data, cut by
# SIGUSR2 from the moment recording began (the header is written once the
# sampler is attached): eight cuts 0.05 s apart, then each twice as far as
# the one before up to 0.8 s. A fast machine's run (0.3 s) gets several
# files, an emulated one's (ten times longer) not hundreds.
record_cut() {
	local dir=$1 gap=0.05 cuts=0
	shift
	mkdir "$dir"
	"$BPFREC" record -q -F 999 -g --alloc=1 --switch-output=signal -o "$dir/w.data" -- \
		"$@" >/dev/null 2>"$dir/err" &
	rec=$!
	while kill -0 "$rec" 2>/dev/null && [ ! -s "$dir/w.data" ]; do sleep 0.01; done
	while kill -0 "$rec" 2>/dev/null; do
		sleep "$gap"
		kill -USR2 "$rec" 2>/dev/null || true
		cuts=$((cuts + 1))
		[ "$cuts" -lt 8 ] || gap=$(awk -v g="$gap" 'BEGIN { g *= 2; print (g > 0.8 ? 0.8 : g) }')
	done
	wait "$rec" || { cat "$dir/err"; fail "$dir: bpfrec record failed"; }
	rec=
	assert_no_grep 'warning|cannot' "$dir/err"
}

runs=3 most=0
for run in $(seq "$runs"); do
	record_cut "$run" "$FIX/alloc_known" 4
	: >"$run/all.txt"
	nfiles=0 nocomm=0
	for f in "$run"/w.data.*; do
		nfiles=$((nfiles + 1))
		run_clean "$T/one.txt" perf script -i "$f" -F comm,tid,period,event,ip,sym
		n=$(grep -cE '^ *:[0-9]+ ' "$T/one.txt" || true)
		[ "$n" = 0 ] || { grep -E '^ *:[0-9]+ ' "$T/one.txt" | head -3; }
		nocomm=$((nocomm + n))
		cat "$T/one.txt" >>"$run/all.txt"
	done
	echo "run $run: $nfiles files, $nocomm samples without their process's COMM"
	[ "$nocomm" = 0 ] || fail "run $run: $nocomm samples without a COMM for their process"
	[ "$nfiles" -gt "$most" ] && most=$nfiles
	for fn in free_small keep_big calloc_grow; do
		want=$(sed -n "s/^alloc_known: $fn alloc \([0-9]*\) .*/\1/p" "$run/err")
		[ -n "$want" ] || fail "alloc_known did not print the truth of $fn"
		got=$(by_caller "$run/all.txt" | awk -v f="$fn" '$1 == f { print $2; found = 1 } END { if (!found) print 0 }')
		echo "run $run: $fn alloc $got over $nfiles files (fixture $want)"
		[ "$got" = "$want" ] || fail "run $run: $fn alloc $got bytes over the files, the fixture $want"
	done
done
# A run the switches did not cut tests nothing of the above.
[ "$most" -ge 3 ] || fail "at most $most files in a run: the switches did not cut the recording"

# Blocks an exec gave back: alloc_exec keeps 16 blocks of 48 KiB, then execs
# alloc_known under its pid. Their alloc samples are in the file that has the
# old image; no file's inuse samples may count them as held (they were, every
# file after the exec, at the old image's addresses: perf script [unknown],
# and the process filed under its launcher's comm), and every inuse sample of
# the pid is alloc_known's.
record_cut exec "$FIX/alloc_exec" 16 "$FIX/alloc_known" 4
want=$(sed -n 's/^alloc_exec: keep_before_exec alloc \([0-9]*\) blocks \([0-9]*\) size \([0-9]*\)$/\1 \2 \3/p' exec/err)
read -r want_bytes want_blocks size <<<"$want"
[ -n "${size:-}" ] || fail "alloc_exec did not print its truth"
: >exec/all.txt
nfiles=0
for f in exec/w.data.*; do
	nfiles=$((nfiles + 1))
	run_clean "$T/one.txt" perf script -i "$f" -F comm,pid,period,event,ip,sym
	cat "$T/one.txt" >>exec/all.txt
done
got=$(by_caller exec/all.txt | awk '$1 == "keep_before_exec" { print $2; found = 1 } END { if (!found) print 0 }')
# inuse samples of the old blocks (their size), and of the pid under another comm.
read -r held other < <(awk -v size="$size" '
	/^[^ \t]/ { ev = ""; for (i = 1; i <= NF; i++) if ($i ~ /:$/) { ev = $i; per = $(i - 1); comm = $1 }
		     if (ev == "inuse:") { if (per == size) held++; if (comm != "alloc_known") other++ } }
	END { printf "%d %d\n", held, other }' exec/all.txt)
echo "exec: $nfiles files; keep_before_exec alloc $got (fixture $want_bytes in $want_blocks blocks);" \
	"inuse samples of those blocks $held, of the pid under another comm $other"
[ "$got" = "$want_bytes" ] || fail "exec: keep_before_exec alloc $got bytes, the fixture $want_bytes"
[ "$held" = 0 ] || fail "exec: $held inuse samples of blocks the exec gave back"
[ "$other" = 0 ] || fail "exec: $other inuse samples under a comm other than alloc_known"
echo "ok"
