#!/bin/bash
# Python frames in the tracers' stacks (-g with --off-cpu, --alloc, --sched),
# on Debian's python3 and on pyenv's CPython 3.12 (missing: a skip, said),
# with tests/fixtures/py_wait.py:
#   - --off-cpu: the off-CPU samples taken in wait_here's sleeps name it,
#     with run_waits, main and <module> below it, and the off-CPU time they
#     carry is what the fixture measured itself, call by call: each call's
#     wall time less its CPU time (its clocks are read around each call, so
#     that difference is the call's time off the CPU). The first calls may
#     run before the recorder found the process's runtime (it looks at a
#     process when it first sees it): those are counted and shown, and all
#     but 10 % of the calls must be named;
#   - --alloc: the alloc samples of make_blob's big bytes objects name it,
#     with its Python callers (5.17+; before, said and left out);
#   - --sched: two busy Python threads on one CPU wait for it in their own
#     function, spin_a or spin_b, never in the other's, also in the sums of
#     short waits written at the end, after the process exited;
#   - --no-python: the off-CPU stacks name no Python function.
# perf reads every file without a warning.
. "$(dirname "$0")/lib.sh"
need_root
need_kernel_for -g --off-cpu --sched
# --alloc needs 5.17: before, the others run (their compat builds' bounded walk).
alloc_refused=$(kernel_refuses -g --alloc) && echo "SKIP --alloc: $alloc_refused"
PY_WAIT=$TOP/tests/fixtures/py_wait.py
cd "$T"

mapfile -t pythons < <(python_builds 12)

# in_order FILE EVENT LEAF CALLER...: of EVENT's samples in `perf script
# -F event,ip,sym` naming LEAF, "OK/TOTAL" with LEAF and then each CALLER
# below it, in that order.
in_order() {
	local file=$1 event=$2 leaf=$3
	shift 3
	awk -v event="$event:" -v leaf=" $leaf (py_wait.py)" -v callers="$*" 'BEGIN { RS = ""; nc = split(callers, c, " ") }
		index($0, event) && index($0, leaf) {
			t++; n = split($0, l, "\n"); want = 0
			for (i = 1; i <= n; i++) {
				if (!want && index(l[i], leaf)) { want = 1; continue }
				if (want && want <= nc && index(l[i], " " c[want] " (py_wait.py)")) want++
			}
			if (want == nc + 1) ok++
		}
		END { printf "%d/%d\n", ok, t }' "$file"
}
# mostly WHAT OK/TOTAL: at least 90 % of at least one.
mostly() {
	awk -v r="$2" 'BEGIN { split(r, a, "/"); exit !(a[2] > 0 && a[1] >= 0.9 * a[2]) }' ||
		fail "$1: $2"
}

check_offcpu() { # LABEL PYTHON
	local label=$1 py=$2 out=$T/off-$1 tid order
	"$BPFREC" record -v -g --off-cpu -o "$out.data" -- "$py" "$PY_WAIT" sleep 50 20 \
		>"$out.out" 2>"$out.err" || { cat "$out.err" >&2; fail "$label: bpfrec record --off-cpu exited $?"; }
	tid=$(fixture_tid "$out.out" wait_here)
	[ -n "$tid" ] && grep -q "^wait_here: calls 50 " "$out.out" || fail "$label: the fixture did not say its numbers"
	run_clean "$out.script" perf script -i "$out.data" --ns -F tid,time,event,period,ip,sym
	order=$(in_order "$out.script" offcpu-time wait_here run_waits main "<module>")
	echo "$label: $order off-CPU samples in wait_here with run_waits, main, <module> below"
	mostly "$label: off-CPU samples in wait_here with their Python callers" "$order"
	# Each sample (stamped when the thread got the CPU back) into the
	# fixture's call it ended in. Per call: perf's off-CPU ns against the
	# call's own wall - cpu, and of those the ns in samples naming
	# wait_here (a thread preempted in run_waits, between a clock's read
	# and the call, is off the CPU in the call's time but not in wait_here).
	awk -v tid="$tid" -v label="$label" '
		FNR == NR { if ($1 == "wait_here:" && $2 == "call") { n++; s[n] = $3; e[n] = $4; c[n] = $5 } next }
		{ split($0, l, "\n"); split(l[1], f, " "); t = f[2]; sub(/:$/, "", t); t = t * 1e9 }
		f[1] == tid && f[4] == "offcpu-time:" {
			for (i = 1; i <= n; i++) if (t >= s[i] && t <= e[i]) {
				all[i] += f[3]
				if (index($0, " wait_here (py_wait.py)")) got[i] += f[3]
				break } }
		END {
			for (i = 1; i <= n; i++) {
				fw += e[i] - s[i] - c[i]
				if (!(i in got)) { miss++; continue }
				named++; w += e[i] - s[i] - c[i]; wall += e[i] - s[i]; g += got[i]; a += all[i]
			}
			printf "%s: off-CPU over the %d calls with samples naming wait_here: perf %.6f s, of it %.6f s in wait_here; fixture %.6f s (wall %.6f s); all %d calls: fixture %.6f s, %d not named\n", label, named, a / 1e9, g / 1e9, w / 1e9, wall / 1e9, n, fw / 1e9, miss
			# Never more than the calls wall time; at least their time
			# off the CPU, less 2 % for the clocks read around each call.
			exit !(n > 0 && named >= 0.9 * n && a <= wall && a >= 0.98 * w && g >= 0.9 * a)
		}' "$out.out" RS="" "$out.script" ||
		fail "$label: the off-CPU time in wait_here is not the fixture's"
}

check_alloc() { # LABEL PYTHON (nothing where this kernel refuses --alloc, said above)
	local label=$1 py=$2 out=$T/alloc-$1 order all
	[ -z "$alloc_refused" ] || return 0
	"$BPFREC" record -v -g --alloc -o "$out.data" -- "$py" "$PY_WAIT" alloc 4000 64 \
		>"$out.out" 2>"$out.err" || { cat "$out.err" >&2; fail "$label: bpfrec record --alloc exited $?"; }
	assert_grep "^make_blob: calls 4000 bytes 262144000$" "$out.out" "$label: the fixture did not run"
	run_clean "$out.script" perf script -i "$out.data" -F event,ip,sym
	all=$(awk 'BEGIN { RS = "" } index($0, "alloc:") { n++ } END { print n + 0 }' "$out.script")
	order=$(in_order "$out.script" alloc make_blob run_allocs main "<module>")
	# 250 MiB at one sample per 512 KiB on average: some 500 of them.
	echo "$label: alloc samples: $all, of them naming make_blob (with run_allocs, main, <module> below): $order"
	mostly "$label: alloc samples in make_blob with their Python callers" "$order"
	awk -v r="$order" -v all="$all" 'BEGIN { split(r, a, "/"); exit !(a[2] >= 0.5 * all) }' ||
		fail "$label: fewer than half the alloc samples name make_blob ($order of $all)"
}

check_sched() { # LABEL PYTHON
	local label=$1 py=$2 out=$T/sched-$1
	# One CPU: the threads take turns, preempted or waiting for the GIL.
	# The run-queue waits too short for a sample of their own are summed
	# in BPF and written when the recording ends: the shell outlives Python
	# by 1.5 s (15 rounds), so they are written after its process was
	# forgotten, and must still be named as they were while it lived.
	taskset -c 0 "$BPFREC" record -q -g --sched -o "$out.data" -- \
		sh -c '"$1" "$2" busy 1 && sleep 1.5' sh "$py" "$PY_WAIT" \
		>"$out.out" 2>"$out.err" || { cat "$out.err" >&2; fail "$label: bpfrec record --sched exited $?"; }
	run_clean "$out.script" perf script -i "$out.data" -F tid,event,ip,sym
	own_frames "$out.script" sched-delay "$out.out" py_wait.py spin_a spin_b "$label" ||
		fail "$label: sched-delay samples without their thread's Python function"
}

each_python check_offcpu check_alloc check_sched

# --no-python: the same off-CPU stacks, no Python frame.
"$BPFREC" record -q -g --no-python --off-cpu -o off.data -- "$(debian_python3)" "$PY_WAIT" sleep 5 20 \
	>/dev/null || fail "bpfrec record --no-python --off-cpu exited $?"
run_clean off.script perf script -i off.data -F event,ip,sym
assert_no_grep "\(py_wait\.py\)|\[python\]" off.script "--no-python still names Python functions"
assert_grep "clock_nanosleep" off.script
