#!/usr/bin/env bash
# The smoke set of Debian 12's kernel (tests/integration/90-kernel-6.1-smoke.sh
# runs it in the 6.1 VM; it runs on any kernel): one short recording of each
# way bpfrec records, each read back with the stock tools, so a BPF object
# that an older verifier refuses, or that records nothing there, fails
# `make test`. Short workloads: under TCG every one is 10-20x slower.
# Expectations come from the same run (the fixture's own report, perf's
# reading of the file), never from this machine's speed.
#   BUILD=... TOP=... bash tests/vm/smoke.sh      one line per check, then
#   "smoke: N passed, N failed"; exit 1 when one failed.
set -uo pipefail
: "${BUILD:?}" "${TOP:?}"
BPFREC=$BUILD/bpfrec FIX=$BUILD/fixtures
T=$(mktemp -d /tmp/bpfrec-smoke.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1: $2"; [ -s "$T/err" ] && sed 's/^/    /' "$T/err" | tail -n 15; }

# clean OUT CMD...: a reader's stdout in OUT; a failure or anything on stderr is a failure.
clean() {
	local out=$1; shift
	"$@" >"$out" 2>"$T/err" && [ ! -s "$T/err" ]
}
# Samples in a perf script -F comm,ip,sym dump whose first frames are $2 $3 $4 (leaf first).
chains() { # FILE LEAF CALLER CALLER2
	awk -v a="$2" -v b="$3" -v c="$4" '
		/^[^ \t]/ { if (n) check(); n = 0; next }
		NF >= 2 { sub(/\+0x[0-9a-f]+$/, "", $2); fr[n++] = $2 }
		END { if (n) check(); print good + 0 }
		function check() { if (fr[0] == a && fr[1] == b && fr[2] == c) good++ }' "$1"
}

# The fixture's CPU budgets, in seconds, tried in turn while a check finds
# too little: an emulated CPU on a loaded host delivers cpu-clock at a tenth
# of the rate asked or less (perf record itself got 137 samples for 1 s), and
# the program's own start (ld.so, 10-20x slower) takes a larger part of few
# samples. What a check looks for is never relaxed, only the run lengthened.
BUDGETS="0.5 1 2 4"

# -g (cfi, unwound in BPF) of -O2 code without frame pointers.
for s in 1 2 4; do
	n=-1
	"$BPFREC" record -q -g -F 999 -o cfi.data -- "$FIX/nofp_work" cpu "$s" >/dev/null 2>"$T/err" &&
		clean report.txt perf report -i cfi.data --stdio --no-children &&
		clean script.txt perf script -i cfi.data -F comm,ip,sym || break
	n=$(chains script.txt leaf_a mid_a main)
	[ "$n" -gt 0 ] && break
done
if [ "$n" -gt 0 ]; then ok "record -g: $n samples leaf_a <- mid_a <- main (cpu $s s)"
elif [ "$n" = 0 ]; then bad "record -g" "no sample has the chain leaf_a <- mid_a <- main, up to cpu $s s"
else bad "record -g" "recording or reading failed"; fi

# -g of Debian's python3 (no frame pointers): stacks from the eval loop to _start.
if "$BPFREC" record -v -g -F 999 -o py.data -- /usr/bin/python3 "$TOP/tests/fixtures/py_nested.py" cpu 0.5 \
	>/dev/null 2>py.err && clean pyscript.txt perf script -i py.data -F comm,ip,sym; then
	n=$(awk '/^[^ \t]/ { if (ev && st) good++; ev = st = 0; next }
		$2 ~ /^_PyEval_EvalFrameDefault/ { ev = 1 } $2 ~ /^_start/ { st = 1 }
		END { if (ev && st) good++; print good + 0 }' pyscript.txt)
	if [ "$n" -gt 0 ]; then ok "record -g python3: $n stacks from the eval loop to _start"
	else bad "record -g python3" "no stack from _PyEval_EvalFrameDefault reaches _start"; fi
	# What cfi costs and reaches on this kernel (figures, not checks: the
	# emulated CPU's speed is not the kernel's).
	# (A here-string, not <(...): the guest has no /dev/fd.)
	read -r pct nr _ <<<"$(awk -v comm=python3 -v what=reach -f "$TOP/tools/stacks.awk" pyscript.txt)"
	awk -v k="$(uname -r)" -v pct="$pct" -v nr="$nr" -v bytes="$(stat -c %s py.data)" '
		/BPF programs ran/ { for (i = 1; i < NF; i++) if ($i == "ran") ms = $(i + 1) }
		/BPF saw [0-9]+ samples/ { for (i = 1; i < NF; i++) if ($i == "saw") n = $(i + 1) }
		END { printf "     python3 -g on %s: root reached in %s%% of %s samples; %.0f ns of BPF and %.0f bytes of file a sample\n",
			k, pct, nr, n ? ms * 1e6 / n : 0, n ? bytes / n : 0 }' py.err
else
	bad "record -g python3" "recording or reading failed"
fi

# --call-graph fp, no -g, -a with -z and --duration: read without warnings.
for mode in "--call-graph fp" "" "-a -z --duration"; do
	found=
	for s in 0.2 $BUDGETS; do
		opts=$mode
		# System-wide for as long as the fixture spins, and a second more.
		[ "$mode" = "-a -z --duration" ] && opts="$mode $(awk -v s="$s" 'BEGIN { print s + 1 }')"
		# shellcheck disable=SC2086
		"$BPFREC" record -q $opts -F 999 -o m.data -- "$FIX/nofp_work" cpu "$s" >/dev/null 2>"$T/err" &&
			clean m.txt perf report -i m.data --stdio --no-children || break
		grep -q 'leaf_a' m.txt && { found=$s; break; }
	done
	if [ -n "$found" ]; then
		ok "record ${mode:-without -g}: leaf_a in perf report (cpu $found s)"
	else
		bad "record ${mode:-without -g}" "no leaf_a up to cpu $s s, or perf failed or warned"
	fi
done

# A mode this kernel cannot record must be refused in one line, before anything is written.
refused() { # NAME OPTIONS...
	local name=$1; shift
	rm -f r.data	# an earlier check's recording is not this one's
	if "$BPFREC" record -q "$@" -o r.data -- "$FIX/nofp_work" cpu 0.2 >/dev/null 2>"$T/err"; then
		return 1
	fi
	if grep -q 'needs Linux' "$T/err" && [ "$(wc -l <"$T/err")" = 1 ] && [ ! -e r.data ]; then
		ok "$name refused on $(uname -r): $(cat "$T/err")"
		return 0
	fi
	bad "$name" "failed without a one-line refusal"
	return 0
}

# --call-graph dwarf: perf unwinds the copied stacks.
if ! refused "--call-graph dwarf" --call-graph dwarf; then
	n=0
	for s in 0.2 $BUDGETS; do
		[ "$s" = 0.2 ] || "$BPFREC" record -q --call-graph dwarf -o r.data -- "$FIX/nofp_work" cpu "$s" \
			>/dev/null 2>"$T/err" || break
		clean dw.txt perf script -i r.data -F comm,ip,sym || break
		n=$(chains dw.txt leaf_a mid_a main)
		[ "$n" -gt 0 ] && break
	done
	if [ "$n" -gt 0 ]; then
		ok "record --call-graph dwarf: perf unwinds leaf_a <- mid_a <- main ($n samples, cpu $s s)"
	else
		bad "record --call-graph dwarf" "perf script found no leaf_a <- mid_a <- main up to cpu $s s"
	fi
fi

# --off-cpu: the fixture's sleeps, as offcpu-time samples in sleep_wait.
if "$BPFREC" record -q -g --off-cpu -F 99 -o off.data -- "$FIX/rec_offcpu" 4 20 >/dev/null 2>"$T/err"; then
	if clean off.txt perf script -i off.data -F event,ip,sym && grep -q 'sleep_wait' off.txt; then
		ok "record -g --off-cpu: sleep_wait waits in the file"
	else
		bad "record --off-cpu" "no sleep_wait in perf script"
	fi
else
	refused "--off-cpu" --off-cpu || bad "record --off-cpu" "recording failed"
fi

# --sched: per-thread metrics that bpfrec sched reads back.
if "$BPFREC" record -q -g --sched -o sc.data -- "$FIX/sched_sleeper" 20 >/dev/null 2>"$T/err"; then
	if clean sc.txt "$BPFREC" sched -i sc.data && grep -q 'sched_sleeper' sc.txt; then
		ok "record -g --sched: bpfrec sched shows sched_sleeper"
	else
		bad "record --sched" "bpfrec sched does not show sched_sleeper"
	fi
else
	refused "--sched" --sched || bad "record --sched" "recording failed"
fi

# --alloc (one sample per 512 KiB): keep_big holds 32 MiB, so it is sampled.
if "$BPFREC" record -q --alloc -o al.data -- "$FIX/alloc_known" 1 >/dev/null 2>"$T/err"; then
	if clean al.txt perf script -i al.data -F event,ip,sym && grep -q 'keep_big' al.txt; then
		ok "record --alloc: keep_big's allocations in the file"
	else
		bad "record --alloc" "no keep_big in perf script"
	fi
else
	refused "--alloc" --alloc || bad "record --alloc" "recording failed"
fi

# bpfrec pprof of the -g recording: go tool pprof reads it.
if clean pp.txt "$BPFREC" pprof -q -i cfi.data -o cpu.pb.gz && clean top.txt go tool pprof -top cpu.pb.gz &&
	grep -q leaf_a top.txt; then
	ok "bpfrec pprof: go tool pprof -top shows leaf_a"
else
	bad "bpfrec pprof" "go tool pprof -top has no leaf_a"
fi

echo "smoke on $(uname -r): $passed passed, $failed failed"
[ "$failed" = 0 ]
