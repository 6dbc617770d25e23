#!/bin/bash
# bpfrec record --alloc: the alloc and inuse events against fixtures that
# print what they asked the allocator for (built without frame pointers:
# stacks come from the caller at the allocator's entry and the unwind
# tables). A launched command runs on the in-process fast path
# (libbpfrec-alloc.so preloaded), -p on the C library's uprobes. Every
# allocation at --alloc=1 (exact totals per function, for a command, a -p
# target, a command's child, jemalloc, a library dlopen()ed late and
# threads), and at the default interval within 10 % of the truth (the
# fixture scaled so that 10 % is several standard deviations of the
# sampling error it prints).
. "$(dirname "$0")/lib.sh"
need_root
need_kernel_for --alloc
need_tool perf linux-perf
need_tool bpftool bpftool
need_tool go golang-go

cd "$T"
cleanup() { [ -n "${target:-}" ] && kill "$target" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT

# by_caller FILE EVENT: "FUNC BYTES" per direct caller of the allocator (the
# second frame of each EVENT sample), summed over the samples' periods,
# from `perf script -F tid,period,event,ip,sym`.
by_caller() {
	awk -v want="$2" '
		/^[^ \t]/ || /^ +[0-9]+ +[0-9]+ / { ev = ""; n = 0
			for (i = 1; i <= NF; i++) if ($i ~ /:$/) { ev = $i; per = $(i - 1) }
			sub(/:$/, "", ev); next }
		/^[ \t]+[0-9a-f]+ / && ev == want { if (++n == 2) { s = $2; sub(/\+0x.*/, "", s); sum[s] += per } }
		END { for (s in sum) printf "%s %.0f\n", s, sum[s] }' "$1"
}
# caller_bytes FILE EVENT FUNC
caller_bytes() { by_caller "$1" "$2" | awk -v f="$3" '$1 == f { print $2; found = 1 } END { if (!found) print 0 }'; }
# truth FILE FIXTURE FUNC FIELD: a number the fixture printed
truth() { sed -n "s/^$2: $3 .*$4 \([0-9]*\).*/\1/p" "$1" | tail -n 1; }
script_of() { run_clean "$2" perf script -i "$1" -F tid,period,event,ip,sym; }
# exact LABEL ERR SCRIPT FIXTURE FUNC [inuse]: FUNC's alloc (and inuse) bytes
# in perf script are the fixture's truth, to the byte.
exact() {
	local ev want got
	for ev in alloc ${6:-}; do
		want=$(truth "$2" "$4" "$5" $ev)
		[ -n "$want" ] || fail "$4 did not print the $ev truth of $5"
		got=$(caller_bytes "$3" $ev "$5")
		echo "$1: $5 $ev $got (fixture $want)"
		[ "$got" = "$want" ] || fail "$1: $5 $ev $got bytes in perf script, the fixture $want"
	done
}

# --- every allocation (--alloc=1): exact --------------------------------------
"$BPFREC" record -v --alloc=1 -o one.data -- "$FIX/alloc_known" 1 2>one.err ||
	{ rc=$?; cat one.err; fail "bpfrec record --alloc=1 exited $rc"; }
grep -v '^libbpf' one.err
assert_no_grep 'warning|cannot' one.err
script_of one.data one.txt
for f in free_small keep_big calloc_grow; do
	exact "rate 1" one.err one.txt alloc_known $f inuse
done
# With --sched too: each event keeps its own samples (sched-delay's ids once
# equalled alloc's, and perf counted every alloc sample as a sched-delay).
"$BPFREC" record --sched --alloc=1 -o both.data -- "$FIX/alloc_known" 1 2>both.err ||
	{ rc=$?; cat both.err; fail "bpfrec record --sched --alloc=1 exited $rc"; }
script_of both.data both.txt
for f in free_small keep_big calloc_grow; do
	exact "with --sched" both.err both.txt alloc_known $f inuse
done
# With -g, a new process's first CPU samples wait for its unwind tables;
# the alloc records after them wait too (written first, perf script warned
# of tens of "out of order events", which fails script_of).
"$BPFREC" record --alloc=1 -g -o g.data -- "$FIX/alloc_known" 1 2>g.err ||
	{ rc=$?; cat g.err; fail "bpfrec record --alloc=1 -g exited $rc"; }
script_of g.data g.txt
for f in free_small keep_big calloc_grow; do
	exact "with -g" g.err g.txt alloc_known $f inuse
done
# A launched command takes the in-process fast path: its stacks start at
# libbpfrec-alloc.so's entry points and no C library is probed.
# top_frames FILE: the first frame of each alloc sample in `perf script -F event,ip,sym,dso`.
top_frames() { awk '/alloc: *$/ { getline; print }' "$1"; }
run_clean one.dso perf script -i one.data -F event,ip,sym,dso
top_frames one.dso >one.top
assert_grep 'malloc \(.*libbpfrec-alloc\.so\)' one.top "the command's allocations did not go through libbpfrec-alloc.so"
assert_no_grep 'libc[.-]' one.top
assert_grep 'allocations: .* 0 allocator files probed' one.err
# The RAW text names the entry and the size.
run_clean one.raw perf script -i one.data
assert_grep 'BPF string: "malloc 4096"' one.raw
assert_grep 'BPF string: "calloc 32768 *"' one.raw
assert_grep 'BPF string: "realloc 65536 *"' one.raw

# perf report on the alloc event agrees: keep_big's children are its bytes.
run_clean one.rep perf report -i one.data --stdio --children --sort sym -g none
assert_grep "of event 'alloc'" one.rep
assert_grep "of event 'inuse'" one.rep
[ "$(grep -c 'Total Lost Samples: 0' one.rep)" -ge 1 ] || fail "samples were lost"
# BYTES of SYMBOL's children in EVENT: children% x the event count.
children_bytes() { # FILE EVENT SYMBOL
	awk -v ev="$2" -v s="$3" '
		/of event / { cur = ($0 ~ "of event ." ev ".$") }
		cur && /Event count/ { total = $NF }
		cur && $NF == s && $1 ~ /%$/ { sub(/%/, "", $1); pct = $1 }
		END { printf "%.0f\n", pct * total / 100 }' "$1"
}
for f in free_small keep_big calloc_grow; do
	want=$(truth one.err alloc_known $f alloc)
	got=$(children_bytes one.rep alloc $f)
	echo "rate 1, perf report: $f children $got bytes (fixture $want)"
	assert_range "perf report $f" "$got" "$(awk -v w="$want" 'BEGIN { print w * 0.99 }')" \
		"$(awk -v w="$want" 'BEGIN { print w * 1.01 }')"
done

# --- the default interval (512 KiB): within 10 % ------------------------------
scale=32
"$BPFREC" record -v --alloc -o def.data -- "$FIX/alloc_known" $scale 2>def.err ||
	{ rc=$?; cat def.err; fail "bpfrec record --alloc exited $rc"; }
grep -v '^libbpf' def.err
assert_no_grep 'warning|cannot' def.err
script_of def.data def.txt
# The relative standard error of a Poisson-sampled total of N blocks of S
# bytes at interval R: sqrt((1 - p) / (N p)), p = 1 - exp(-S / R).
sigma() { awk -v n="$1" -v s="$2" 'BEGIN { p = 1 - exp(-s / 524288); printf "%.4f\n", sqrt((1 - p) / (n * p)) }'; }
for f in free_small keep_big calloc_grow; do
	want=$(truth def.err alloc_known $f alloc)
	got=$(caller_bytes def.txt alloc $f)
	blocks=$(truth def.err alloc_known $f blocks)
	size=$(truth def.err alloc_known $f size)
	[ "$size" = 0 ] && size=32768	# calloc_grow: the smaller of its two sizes bounds the error
	echo "default: $f alloc $got (fixture $want, sampling sigma $(sigma "$blocks" "$size"))"
	assert_range "default $f" "$got" "$(awk -v w="$want" 'BEGIN { print w * 0.9 }')" \
		"$(awk -v w="$want" 'BEGIN { print w * 1.1 }')"
done
want=$(truth def.err alloc_known keep_big inuse)
got=$(caller_bytes def.txt inuse keep_big)
echo "default: keep_big inuse $got (fixture $want)"
assert_range "default keep_big inuse" "$got" "$(awk -v w="$want" 'BEGIN { print w * 0.9 }')" \
	"$(awk -v w="$want" 'BEGIN { print w * 1.1 }')"
for f in free_small calloc_grow; do
	got=$(caller_bytes def.txt inuse $f)
	echo "default: $f inuse $got (fixture 0)"
	[ "$got" = 0 ] || fail "$f freed everything but inuse shows $got bytes"
done

# bpfrec pprof of the same recording: one heap profile, and go tool pprof
# shows each function's bytes (cumulative: the allocator is the leaf) within
# 10 % of the fixture's truth, alloc_space and inuse_space alike.
"$BPFREC" pprof -q -i def.data -o def.pb.gz || fail "bpfrec pprof failed on the --alloc recording"
[ -s def.heap.pb.gz ] || fail "bpfrec pprof wrote no heap profile: $(ls)"
run_clean def.dflt go tool pprof -top def.heap.pb.gz
assert_grep '^Type: inuse_space$' def.dflt "inuse_space is the heap profile's default"
for idx in alloc_space inuse_space; do
	run_clean def.$idx go tool pprof -sample_index=$idx -unit=B -top -cum -nodefraction=0 def.heap.pb.gz
done
for f in free_small keep_big calloc_grow; do
	for idx in alloc_space inuse_space; do
		want=$(truth def.err alloc_known $f ${idx%_space})
		got=$(cum_value def.$idx $f B)
		echo "default, go tool pprof $idx: $f $got (fixture $want)"
		if [ "$want" = 0 ]; then
			[ "$got" = 0 ] || fail "go tool pprof $idx: $f shows $got bytes, the fixture holds none"
		else
			assert_range "pprof $idx $f" "$got" "$(awk -v w="$want" 'BEGIN { print w * 0.9 }')" \
				"$(awk -v w="$want" 'BEGIN { print w * 1.1 }')"
		fi
	done
done

# --- -p: a running process, probed and filtered by pid --------------------------
mkfifo go
"$FIX/alloc_known" 1 wait <go 2>p.err & target=$!
tpid=$target
exec 3>go
"$BPFREC" record -v --alloc=1 -p "$target" -o p.data 2>prec.err & rec=$!
# Ready when the recorder's uprobes are in (then the fixture may start).
uprobes_in() { bpftool perf list 2>/dev/null | grep -q "pid $rec .*uprobe"; }
wait_until "$rec" uprobes_in || fail "the -p recorder never attached its uprobes"
echo go >&3
exec 3>&-
wait "$target" || fail "alloc_known exited $?"
target=
wait "$rec" || { cat prec.err; fail "bpfrec record -p exited $?"; }
script_of p.data p.txt
run_clean p.pids perf script -i p.data -F pid
[ "$(tr -d ' ' <p.pids | sort -u)" = "$tpid" ] ||
	fail "-p $tpid recorded other processes: $(tr -d ' ' <p.pids | sort -u | tr '\n' ' ')"
for f in free_small keep_big calloc_grow; do
	exact "-p, rate 1" p.err p.txt alloc_known $f
done
# -p: no preloading into a running process, the C library's uprobes.
run_clean p.dso perf script -i p.data -F event,ip,sym,dso
top_frames p.dso >p.top
assert_grep 'malloc \(.*libc[.-]' p.top "-p did not probe the C library's malloc"
assert_no_grep 'libbpfrec-alloc' p.top

# --- jemalloc (LD_PRELOAD): its own malloc and free are probed ---------------------
# The library maps after the command starts: the fixture waits until the
# recorder has probed it, as a long-running program would have been.
JEMALLOC=$(ls /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 2>/dev/null || true)
[ -n "$JEMALLOC" ] || fail "libjemalloc.so.2 is not installed: run 'sh tools/deps.sh test' (Debian package libjemalloc2)"
mkfifo jego
"$BPFREC" record --alloc=1 -o je.data -- env LD_PRELOAD="$JEMALLOC" "$FIX/alloc_known" 1 wait \
	<jego 2>je.err & rec=$!
exec 3>jego
# All of them: an entry and a return probe at each allocating function the
# library defines, an entry probe at free (and munmap), one per address.
want_probes=$(nm -D --defined-only "$JEMALLOC" | awk '
	{ n = $3; sub(/@.*/, "", n) }
	n ~ /^(malloc|calloc|realloc|posix_memalign|aligned_alloc|memalign|mmap|free|munmap)$/ &&
	!seen[$1]++ { probes += (n == "free" || n == "munmap") ? 1 : 2 }
	END { print probes + 0 }')
# The recorder attaches through the file it opened (by its path, or as
# /proc/self/fd/N where the path cannot be trusted: overlayfs, a container);
# the C library is not probed beside the preloaded library, so every probe
# but the preloaded library's two markers is jemalloc's.
je_probes() { bpftool perf list 2>/dev/null | grep -E "pid $rec .*u(ret)?probe " | grep -vc 'libbpfrec-alloc' || true; }
je_all_in() { [ "$(je_probes)" -ge "$want_probes" ]; }
wait_until "$rec" je_all_in ||
	fail "libjemalloc got $(je_probes) of its $want_probes probes"
echo "jemalloc: $want_probes probes in"
echo go >&3
exec 3>&-
wait "$rec" || { cat je.err; fail "bpfrec record with jemalloc exited $?"; }
run_clean je.txt perf script -i je.data -F tid,period,event,ip,sym,dso
assert_grep 'malloc \(.*libjemalloc' je.txt "no allocation went through jemalloc's malloc"
for f in free_small keep_big calloc_grow; do
	exact "jemalloc, rate 1" je.err je.txt alloc_known $f inuse
done

# --- children: a shell forks and execs the fixture, which inherits the
# preloaded library (`; true` keeps the shell from exec'ing it in place).
"$BPFREC" record --alloc=1 -o sh.data -- sh -c '"$0" 1; true' "$FIX/alloc_known" 2>sh.err ||
	{ rc=$?; cat sh.err; fail "bpfrec record sh -c alloc_known exited $rc"; }
script_of sh.data sh.txt
for f in free_small keep_big calloc_grow; do
	exact "child, rate 1" sh.err sh.txt alloc_known $f inuse
done
run_clean sh.dso perf script -i sh.data -F event,ip,sym,dso
top_frames sh.dso >sh.top
assert_grep 'malloc \(.*libbpfrec-alloc\.so\)' sh.top "the child's allocations did not go through libbpfrec-alloc.so"
assert_no_grep 'libc[.-]' sh.top

# --- a library dlopen()ed late, and threads --------------------------------------
"$BPFREC" record --alloc=1 -o d.data -- "$FIX/alloc_dlopen" 2>d.err ||
	{ rc=$?; cat d.err; fail "bpfrec record alloc_dlopen exited $rc"; }
run_clean d.txt perf script -i d.data -F tid,period,event,ip,sym,dso
for f in early_alloc late_alloc; do
	exact "dlopen, rate 1" d.err d.txt alloc_dlopen $f
done
assert_grep 'late_alloc \(.*liballoc_late\.so\)' d.txt "late_alloc not resolved in liballoc_late.so"

"$BPFREC" record --alloc=1 -o t.data -- "$FIX/alloc_threads" 2>t.err ||
	{ rc=$?; cat t.err; fail "bpfrec record alloc_threads exited $rc"; }
script_of t.data t.txt
exact "threads, rate 1" t.err t.txt alloc_threads thread_alloc inuse
tids=$(awk '/alloc: *$/ { print $1 }' t.txt | sort -u | wc -l)
echo "threads: alloc samples from $tids threads"
[ "$tids" -ge 4 ] || fail "threads: alloc samples from $tids threads, want the fixture's 4 or more"
