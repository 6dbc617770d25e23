#!/bin/bash
# The off-CPU and run-queue tracers' build for kernels before 5.17 (no
# bpf_loop, and before 5.11 no task storage for tracing programs): per-task
# state in a hash keyed by tid, stacks walked with bounded loops
# (bpf/task_state.bpf.h, recorder/tracer_build.h). It runs here by taking
# those features away from what bpfrec probed (BPFREC_KERNEL_LACKS), under
# the same tests and expectations as the current build; the VM runner runs
# it on a real 5.10 (make test-kernels).
. "$(dirname "$0")/lib.sh"
need_root
export BPFREC_KERNEL_LACKS=task_storage,bpf_loop
cd "$T"

# The compat build is what loads (said at -v), and it records.
"$BPFREC" record -v -g --off-cpu --sched -- "$FIX/rec_offcpu" 2 20 >/dev/null 2>"$T/rec.err" ||
	{ cat "$T/rec.err"; fail "record --off-cpu --sched with the compat build"; }
for what in "the off-CPU tracer" "the run-queue tracer"; do
	grep -q "$what: the build for kernels before 5.17" "$T/rec.err" ||
		{ cat "$T/rec.err"; fail "$what did not load its compat build"; }
done
run_clean "$T/report.txt" perf report -i perf.data --stdio --sort sym -g none
assert_grep "of event 'offcpu-time'" "$T/report.txt"
assert_grep "of event 'sched-delay'" "$T/report.txt"

# The tracers' own tests, each as it runs on the current build.
for t in 50-offcpu-record 51-offcpu-thresh 78-offcpu-cfi 83-sched-pinned 84-sched-sleep-io; do
	rc=0
	bash "$(dirname "$0")/$t.sh" >"$T/$t.out" 2>&1 || rc=$?
	[ "$rc" = 0 ] || { tail -n 20 "$T/$t.out"; fail "$t with the compat build: exit $rc"; }
	echo "$t: $(tail -n 1 "$T/$t.out")"
done

# --alloc where tracing programs may not use a hash that allocates on
# update without a kernel warning (before 6.1): its live map is
# preallocated, and it records the same bytes.
if ! kernel_refuses --alloc >/dev/null; then
	need_tool bpftool bpftool
	mkfifo go
	BPFREC_KERNEL_LACKS=hash_nonprealloc "$BPFREC" record -q --alloc=1 -o alloc.data -- \
		"$FIX/alloc_known" 1 wait <go 2>alloc.err & rec=$!
	exec 3>go
	live() { bpftool map show -j | tr '{' '\n' | grep '"name":"alloc_live"'; }
	wait_until $rec live >/dev/null || { cat alloc.err; fail "the allocation tracer never loaded"; }
	flags=$(live | sed -n 's/.*"flags":\([0-9]*\).*/\1/p' | head -n 1)
	echo "alloc_live flags without hash_nonprealloc: $flags"
	[ -n "$flags" ] && [ $((flags & 1)) = 0 ] || fail "alloc_live is not preallocated (flags $flags)"
	echo >&3
	exec 3>&-
	wait $rec || { cat alloc.err; fail "record --alloc=1 exited $?"; }
	want=$(sed -n 's/^alloc_known: keep_big alloc \([0-9]*\) .*/\1/p' alloc.err)
	# The allocator's caller is each sample's second frame.
	run_clean alloc.txt perf script -i alloc.data -F period,event,ip,sym
	got=$(awk '/^ *[0-9]+ +alloc:/ { per = $1; n = 0; on = 1; next } /^ *[0-9]+ / { on = 0; next }
		on && /^[ \t]+[0-9a-f]+ / && ++n == 2 && $2 == "keep_big" { sum += per }
		END { printf "%.0f\n", sum }' alloc.txt)
	echo "keep_big: $got bytes in perf report, the fixture $want"
	[ -n "$want" ] && [ "$got" = "$want" ] || { cat alloc.txt; fail "keep_big $got bytes, the fixture $want"; }
fi
echo "PASS"
