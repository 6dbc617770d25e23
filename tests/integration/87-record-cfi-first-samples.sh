#!/bin/bash
# Whole stacks from a process's first sample (--call-graph cfi): the
# short-lived processes builds and scripts are made of, walked before their
# unwind tables exist, still get whole stacks in the file. Their samples come
# with a copy of the user stack, wait for the tables and are walked again
# (PROFILE_SAMPLE_LATE). Three workloads, each recorded by bpfrec -g and by
# perf record --call-graph dwarf here and now, compared on the share of
# samples whose user stack ends at the thread's root (tools/stacks.awk):
#   - a compile of a few C files: gcc -> cc1 -> as, tens to hundreds of ms
#     each (cc1 and as: Debian's, no frame pointers, as stripped);
#   - a short run of Debian's python3 (no frame pointers);
#   - forty gzip runs of a few ms each, system-wide (as tests 65 and 73).
# Ours at least perf's; the first sample of the launched python3 (after
# its exec) reaches the root, and of cc1's and as's processes at least as
# many as perf's.
. "$(dirname "$0")/lib.sh"
need_root
need_tool perf linux-perf
need_tool gcc gcc
need_tool gzip gzip
cd "$T"

PY=$(debian_python3)

# The compile: the fixtures' own sources, the project's flags.
cat >compile.sh <<EOF
#!/bin/sh
for f in cfi_tree nofp_work rec_work unw_chain sched_io pp_shares; do
	gcc -O2 -g -c "$TOP/tests/fixtures/\$f.c" -I"$TOP/tests/fixtures" -o "$T/\$f.o" || exit 1
done
EOF
# Forty processes of a few ms each: gzip of 40 KB.
head -c 30000 /dev/urandom | base64 >gz.in
cat >gzip.sh <<EOF
#!/bin/sh
for i in \$(seq 40); do gzip -c "$T/gz.in" >/dev/null || exit 1; done
EOF
chmod +x compile.sh gzip.sh

# record WAY NAME [-a] CMD...: WAY = cfi (bpfrec -g -v) or perf (dwarf).
record() {
	local way=$1 name=$2 a=
	shift 2
	[ "$1" = -a ] && { a=-a; shift; }
	case $way in
	cfi) "$BPFREC" record -v $a -F 999 -g -o "$name-cfi.data" -- "$@" 2>"$name-cfi.err" >/dev/null ;;
	perf) perf record -q $a -m 16M -F 999 --call-graph dwarf -o "$name-perf.data" -- "$@" \
		2>"$name-perf.err" >/dev/null ;;
	esac || { tail -n 5 "$name-$way.err" >&2; fail "$way recording of $name failed"; }
	if [ $way = perf ]; then
		perf script --no-inline -F comm,pid,ip,sym -i "$name-perf.data" >"$name-perf.txt" 2>/dev/null ||
			fail "perf script of perf's $name recording failed"
	else
		run_clean "$name-cfi.txt" perf script --no-inline -F comm,pid,ip,sym -i "$name-cfi.data"
		grep '^bpfrec record: cfi' "$name-cfi.err"
	fi
}

# reach NAME COMM: ours at least perf's, for COMM's samples. Near 100 % a
# few samples either way are chance (python3 reads its own path into a
# 16 KiB frame at start-up: a sample there is cut short in both files, if
# one lands there, and as has under 100 samples): the margin is five of ours.
# The walks cut at the walker's 127 frames (the -v summary's "depth") are
# allowed too, and so are the samples -v counts as not walked again: they waited longer than a sample may (an emulated CPU
# builds cc1's table in seconds), or got no copy (the ring buffer was too
# full, or their process's copies were spent: each wait given up costs it
# 256). On a real CPU all are about 0.
reach() {
	local name=$1 comm=$2 ref n depth pct
	read -r ref n depth < <(root_share "$name-perf.txt" "$comm")
	echo "$name: $comm: perf --call-graph dwarf: root in $ref% of $n samples, $depth user frames on average"
	at_least "$name: $comm samples (perf)" "$n" 10
	read -r pct n depth < <(root_share "$name-cfi.txt" "$comm")
	echo "$name: $comm: bpfrec -g: root in $pct% of $n samples, $depth user frames on average"
	at_least "$name: $comm samples (bpfrec)" "$n" 10
	read -r _ expired spent _ busy < <(late_walks "$name-cfi.err")
	cut=$(( $(cfi_stops "$name-cfi.err" depth) + expired + spent + busy ))
	at_least "$name: $comm root share, bpfrec -g (perf's is $ref, less five samples and $cut cut at the walker's depth, waited too long or without a copy)" \
		"$pct" "$(awk -v r="$ref" -v n="$n" -v c="$cut" 'BEGIN { print r - 100 * (5 + c) / n }')"
}

# first NAME COMM all|perf: the processes of COMM whose first sample reached
# the root: all of them (the command the recording launched), or at least
# as many as perf's (the compile's children: on an emulated CPU a first
# sample may wait longer than a sample may, -v counts it).
first() {
	local ok n
	read -r ok n < <(first_rooted "$1-cfi.txt" "$2")
	read -r pok pn < <(first_rooted "$1-perf.txt" "$2" 2>/dev/null)
	echo "$1: $2: first samples at the root: $ok of $n processes (perf: $pok of $pn)"
	at_least "$1: $2 processes sampled" "$n" 1
	if [ "$3" = all ]; then
		[ "$ok" = "$n" ] || fail "$1: the first samples of $((n - ok)) of $n $2 processes were cut short"
	else
		# Each first sample -v counts as not walked again may be one of them.
		read -r _ expired spent _ busy < <(late_walks "$1-cfi.err")
		at_least "$1: $2 processes whose first sample reached the root (perf: $pok of $pn; $((expired + spent + busy)) samples not walked again)" \
			"$(awk -v o="$ok" -v n="$n" -v x="$((expired + spent + busy))" 'BEGIN { print n ? (o + (x < n - o ? x : n - o)) / n : 0 }')" \
			"$(awk -v o="$pok" -v n="$pn" 'BEGIN { print n ? o / n : 0 }')"
	fi
}

# The recorder did walk samples again, and says so.
late() {
	local w x s r
	read -r w x s r _ < <(late_walks "$1-cfi.err")
	echo "$1: $w samples walked again once their tables came ($x after waiting too long), $r of them to the root"
	at_least "$1: samples walked again" "$w" 1
}

for way in cfi perf; do record $way compile ./compile.sh; done
reach compile cc1
reach compile as
first compile cc1 perf
first compile as perf
late compile

# Half a second at most of the interpreter: most of it is its start.
for way in cfi perf; do record $way python3 "$PY" "$PY_NESTED" cpu 0.3; done
reach python3 python3
first python3 python3 all
late python3

for way in cfi perf; do record $way gzip -a ./gzip.sh; done
reach gzip gzip
late gzip
echo ok
