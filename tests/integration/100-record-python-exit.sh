#!/bin/bash
# Python frames of a process that exits the moment its work ends (no
# linger), on Debian's python3: the recorder names frames from the
# process's memory as it reads their records, so records read after the
# exit, or after the interpreter freed its code objects as it ended, must
# still be named (recorder/pyframes.h):
#   - --alloc (twice; 5.17+, before said and left out): tests/fixtures/py_wait.py sleeps PY_WAIT_PAUSE first (the
#     recorder is past the new process's first rounds, reading at its own
#     pace), then allocates its bytes objects in make_blob for some tens of
#     ms and exits. Every alloc sample of those objects (the BPF string
#     says their size: the fixture's KiB plus the object's header) names
#     make_blob with run_allocs, main and <module> below it;
#   - -F 999: tests/fixtures/py_tree.py's leaves, run for 0.3 s of CPU and
#     exiting, name their callers run_round, main and <module> in every
#     CPU sample but at most the -v count of unnamed frames;
#   - in each file, the Python frames perf script prints, and the [python]
#     ones among them, are exactly what -v counts (frames a chain too long
#     for the file lost are not).
# perf reads every file without a warning.
. "$(dirname "$0")/lib.sh"
need_root
need_kernel_for -g
# --alloc needs 5.17: before, the CPU part runs (the bounded walk).
alloc_refused=$(kernel_refuses -g --alloc) && echo "SKIP --alloc: $alloc_refused"
PY=$(debian_python3)
PY_WAIT=$TOP/tests/fixtures/py_wait.py
PY_TREE=$TOP/tests/fixtures/py_tree.py
cd "$T"

# unnamed FILE.err: the -v count of Python frames written as [python].
unnamed() {
	sed -n 's/.*Python frames: .* frames (\([0-9]*\) unnamed.*/\1/p' "$1"
}
# same_counts LABEL FILE.err FILE.script (with dsos): perf's Python frame
# lines (in a Python symbol file, bpfrec-python-PID-SEQ) and [python]
# ones among them are -v's counts.
same_counts() {
	local v p vf pf
	v=$(unnamed "$2")
	vf=$(sed -n 's/.*Python frames: .*, \([0-9]*\) frames (.*/\1/p' "$2")
	p=$(grep -c ' \[python\]' "$3" || true)
	pf=$(grep -c '/bpfrec-python-[0-9]*-[0-9]*)$' "$3" || true)
	echo "$1: Python frames: -v $vf, perf script $pf; [python]: -v $v, perf script $p"
	[ -n "$v" ] && [ -n "$vf" ] || fail "$1: -v says no Python frame count"
	[ "$v" = "$p" ] || fail "$1: -v counts $v unnamed Python frames, the file holds $p"
	[ "$vf" = "$pf" ] || fail "$1: -v counts $vf Python frames, the file holds $pf"
}

# --alloc, 20000 bytes objects of 64 KiB, no linger; twice: where the
# exit falls among the recorder's reads varies from run to run.
KIB=64
check_alloc() { # RUN
	local out=alloc$1
	PY_WAIT_PAUSE=0.3 PY_WAIT_LINGER=0 "$BPFREC" record -v -g --alloc -o $out.data -- \
		"$PY" "$PY_WAIT" alloc 20000 $KIB >$out.out 2>$out.err ||
		{ cat $out.err >&2; fail "$out: bpfrec record --alloc exited $?"; }
	assert_grep "^make_blob: calls 20000 bytes $((20000 * KIB * 1024))$" $out.out \
		"$out: the fixture did not run"
	# All frames: perf would stop at kernel.perf_event_max_stack.
	run_clean $out.script perf script -i $out.data --max-stack 1024
	same_counts $out $out.err $out.script
	# Each sample's BPF string follows it, a paragraph apart.
	awk -v lo=$((KIB * 1024)) -v hi=$((KIB * 1024 + 256)) -v label=$out 'BEGIN { RS = "" }
		/BPF string: / {
			split($0, l, "\""); split(l[2], f, " ")
			if (s != "" && f[1] ~ /^(malloc|calloc)$/ && f[2] + 0 >= lo && f[2] + 0 < hi) {
				n++
				if (index(s, " make_blob (py_wait.py)") && index(s, " run_allocs (py_wait.py)") &&
				    index(s, " main (py_wait.py)") && index(s, " <module> (py_wait.py)")) ok++
				else if (bad == "") bad = s
			}
			s = ""
			next
		}
		{ s = $0 ~ / alloc: *\n/ ? $0 : "" }
		END {
			# 1.25 GiB at one sample per 512 KiB on average: some 2500.
			printf "%s: samples of the bytes objects: %d, naming make_blob, run_allocs, main, <module>: %d\n", label, n, ok
			if (bad != "") print "first one not:\n" bad
			exit !(n >= 1000 && ok == n)
		}' $out.script || fail "$out: alloc samples of make_blob's objects without their Python frames"
}
if [ -z "$alloc_refused" ]; then
	check_alloc 1
	check_alloc 2
fi

# CPU samples, 0.3 s of py_tree's leaves, then exit.
"$BPFREC" record -v -g -F 999 -o cpu.data -- "$PY" "$PY_TREE" tree 0.3 >cpu.out 2>cpu.err ||
	{ cat cpu.err >&2; fail "bpfrec record -F 999 exited $?"; }
assert_grep "^hot_alpha: cpu " cpu.out "the fixture did not run"
run_clean cpu.script perf script -i cpu.data --max-stack 1024 -F event,ip,sym,dso
same_counts cpu cpu.err cpu.script
awk -v unnamed="$(unnamed cpu.err)" 'BEGIN { RS = "" }
	/ (hot_alpha|hot_beta|cold_gamma) \(py_tree\.py\)/ {
		n++
		if (index($0, " run_round (py_tree.py)") && index($0, " main (py_tree.py)") &&
		    index($0, " <module> (py_tree.py)")) ok++
	}
	END {
		printf "cpu: samples in a leaf: %d, naming run_round, main, <module>: %d\n", n, ok
		exit !(n >= 100 && n - ok <= unnamed)
	}' cpu.script || fail "CPU samples in py_tree's leaves without their Python callers"
