#!/bin/sh
# tools/bench.sh - bpfrec against perf record / perf report on this machine,
# side by side in one run. `make bench` builds, then runs:
#
#   sh tools/bench.sh BUILD_DIR
#
# Scenarios (Documentation/performance.md explains every figure):
#   1 recording cost, -a -g, at several rates, on a fixed-work CPU workload
#   2 per-process recording (-g -- workload)
#   3 off-CPU recording of a context-switch-bound workload
#   4 conversion: bpfrec pprof and flamegraph against perf report --stdio
#     and perf script, on a recording and on generated 100k and 1M-sample
#     inputs with 100k distinct stacks; the flame graph page's speed in
#     headless chromium
#   5 start-up (record -- true) and symbolization speed
#   6 long run: RSS of a 10-minute -a -g -F 999 recording (make bench-long)
#   7 call-graph modes: fp, cfi, dwarf and perf's -g and dwarf on python3
#     and a fixed-work spinner (root reach, depth, bytes and BPF cost)
#   8 allocation profiling: bpfrec record --alloc against heaptrack and
#     memleak-bpfcc on a malloc-heavy workload (slowdown, recorder CPU, size)
#   9 scheduler metrics: bpfrec record --sched against --off-cpu and perf
#     sched record + perf sched timehist -s on scenario 3's workload (BPF
#     cost per switch and per wakeup, recorder CPU, size, post-processing)
#  10 recorder memory: peak RSS of -a -g and -a -g -z against perf record's
#     beside python3 and a spinner, and -z's recorder CPU and bytes per
#     sample against perf -z's (make bench-memory: this one alone)
#  11 continuous profiling: bpfrec agent -a -g at 19 and 99 Hz pushing to a
#     loopback receiver with churn: its CPU % and peak / steady RSS against
#     the OpenTelemetry profiler's and parca-agent's published budgets, and
#     every window pushed (short in make bench; make bench-long: 10 minutes)
#
# Each repetition runs the tools in alternating order (A B, then B A) next
# to an unprofiled run of the same workload. The tables (median, min, max
# of each figure and the ratio bpfrec / reference) go to stdout and to
# bench/results.md, with the machine and the exact commands.
#
# Environment:
#   BENCH_QUICK=1   short runs, fewer repetitions (about 3 minutes)
#   BENCH_ONLY="1 4"  only these scenarios (default 1-5, 7-11; make bench-long: 6 11)
#   BENCH_REPS=N    repetitions of scenarios 1-3 and 7-10 (default 3, quick 2; 7: 2 and 1)
#   BENCH_LONG_SECS, BENCH_LONG_REF=1  length of scenario 6 (default 600 s);
#                   also run perf record through it as a reference
#   BENCH_AGENT_SECS  length of each of scenario 11's runs (default 60 s, quick
#                   30 s; make bench-long and make bench-agent: 600 s)
#   BENCH_AGENT_RATES  scenario 11's sampling rates (default "19 99"): one rate
#                   to compare two builds back to back in half the time
#   BENCH_KEEP=1    keep the scratch dir (every run's rusage, stderr, BPF stats)
# Needs root (BPF, system-wide sampling). Exits non-zero when a tool that
# should work failed; a bpfrec command that is not built yet is reported
# as "not available" instead.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-build}" 2>/dev/null && pwd) ||
	{ echo "bench: build dir '${1:-build}' not found; run 'make bench' (it builds first)" >&2; exit 1; }
FIX=$BUILD/fixtures
BPFREC=$BUILD/bpfrec

. "$TOP/tools/bench/lib.sh"
. "$TOP/tools/bench/recording.sh"
. "$TOP/tools/bench/conversion.sh"
. "$TOP/tools/bench/startup.sh"
. "$TOP/tools/bench/longrun.sh"
. "$TOP/tools/bench/callgraph.sh"
. "$TOP/tools/bench/alloc.sh"
. "$TOP/tools/bench/sched.sh"
. "$TOP/tools/bench/memory.sh"
. "$TOP/tools/bench/agent.sh"
. "$TOP/tools/bench/targets.sh"

[ "$(id -u)" = 0 ] || die "needs root (BPF programs and system-wide sampling); run it as root"
command -v perf >/dev/null || die "perf not found; install it with 'sh tools/deps.sh test'"
command -v addr2line >/dev/null || die "addr2line not found; install binutils ('sh tools/deps.sh test')"
for f in "$BPFREC" "$FIX/bench_spin" "$FIX/bench_pingpong" "$FIX/bench_rusage" "$FIX/bench_alloc" \
	"$BUILD/tests/tools/bench_symbolize" "$BUILD/tests/tools/perfdata-synth" "$FIX/synth_wide"; do
	[ -x "$f" ] || die "$f is missing; run 'make all fixtures' first (make bench does)"
done

# ---- configuration ---------------------------------------------------------
NCPU=$(nproc)
QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then
	REPS=${BENCH_REPS:-2}
	SYS_RATES="999" SYS_SECS=2 PROC_RATES="999" PROC_SECS=2 PONG_SECS=2
	CONV_INPUTS="100k:rec:1" REPS_CONV=2 REPS_STARTUP=2 LOOKUPS=20000
	# 2 s: the BPF poller reads the counters once a second.
	CG_SECS=2 CG_REPS=${BENCH_REPS:-1}
	ALLOC_M=0.5
	MEM_SECS=3
	# Deadlines of scenarios 1-5 and 7-10, seconds from the start (see
	# budget_start); 6 has its own length.
	DEADLINES=(55 105 120 140 152 - 240 340 380 440 -)
else
	REPS=${BENCH_REPS:-3}
	SYS_RATES="99 999 4999" SYS_SECS=10 PROC_RATES="999" PROC_SECS=5 PONG_SECS=3
	# Scenario 4: a real recording, and generated inputs of exactly 100k and
	# 1M samples over the same CONV_STACKS distinct stacks (conversion.sh).
	CONV_INPUTS="100k:rec:1 synth-100k:synth:100000 synth-1M:synth:1000000"
	REPS_CONV=2 REPS_STARTUP=3 LOOKUPS=20000
	CG_SECS=3 CG_REPS=${BENCH_REPS:-2}
	ALLOC_M=2
	MEM_SECS=10
	# Scenario 4 reads 1M samples with perf report (over a minute each).
	DEADLINES=(410 515 540 1090 1120 - 1300 1700 1780 1960 -)
fi
# cpu-clock every 20 us on every CPU: 50k samples/s per CPU, within the
# default kernel.perf_event_max_sample_rate (100000).
CONV_PERIOD=20000
CONV_STACKS=100000
PONG_WORK=6000
# Scenario 7 samples at perf record's default rate, where DWARF files stay readable.
CG_RATE=999
# Scenario 8: memleak-bpfcc's sampled variant records one allocation in this many.
MEMLEAK_RATE=100
# Scenario 10: perf record's default rate.
MEM_RATE=999
# Scenario 11: each rate runs once for AGENT_SECS (its own length, as 6).
AGENT_RATES=${BENCH_AGENT_RATES:-19 99}
AGENT_SECS=${BENCH_AGENT_SECS:-$([ "$QUICK" = 1 ] && echo 30 || echo 60)}
ONLY=${BENCH_ONLY:-1 2 3 4 5 7 8 9 10 11}
for s in $ONLY; do
	case $s in [1-9] | 10 | 11) ;; *) die "BENCH_ONLY: no scenario '$s'; give numbers from 1 to 11, e.g. BENCH_ONLY=\"1 4\"" ;; esac
done
LONG_SECS=${BENCH_LONG_SECS:-600} LONG_STEP=10
LONG_TOOLS="bpfrec"
[ "${BENCH_LONG_REF:-0}" = 1 ] && LONG_TOOLS="bpfrec perf"
FAILED=0

# What this build of bpfrec can do: later branches bring the rest.
HAVE_RECORD=0 HAVE_OFFCPU=0 HAVE_PPROF=0 HAVE_CFI=0 HAVE_ALLOC=0 HAVE_SCHED=0 HAVE_SCHED_CMD=0 HAVE_AGENT=0
rec_help=$("$BPFREC" record --help 2>&1) && HAVE_RECORD=1
[ "$HAVE_RECORD" = 1 ] && grep -q -- '--off-cpu' <<<"$rec_help" && HAVE_OFFCPU=1
[ "$HAVE_RECORD" = 1 ] && grep -q -- '--alloc' <<<"$rec_help" && HAVE_ALLOC=1
[ "$HAVE_RECORD" = 1 ] && grep -qw -- 'cfi' <<<"$rec_help" && HAVE_CFI=1
[ "$HAVE_RECORD" = 1 ] && grep -qE -- '--sched( |$)' <<<"$rec_help" && HAVE_SCHED=1
"$BPFREC" sched --help >/dev/null 2>&1 && HAVE_SCHED_CMD=1
"$BPFREC" pprof --help >/dev/null 2>&1 && HAVE_PPROF=1
"$BPFREC" agent --help >/dev/null 2>&1 && HAVE_AGENT=1

# ---- scratch space, and the sysctls we touch, restored on exit -----------
W=$(mktemp -d "${TMPDIR:-/tmp}/bpfrec-bench.XXXXXX") || die "cannot make a scratch dir"
RAW=$W/raw.tsv
: >"$RAW"
old_bpf_stats=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo "")
old_max_rate=$(sysctl -n kernel.perf_event_max_sample_rate)
cleanup() {
	[ -n "$old_bpf_stats" ] && sysctl -q -w kernel.bpf_stats_enabled="$old_bpf_stats" 2>/dev/null
	# A recording at high rates can make the kernel lower the limit; give it back.
	sysctl -q -w kernel.perf_event_max_sample_rate="$old_max_rate" 2>/dev/null
	jobs -p | xargs -r kill 2>/dev/null
	if [ "${BENCH_KEEP:-0}" = 1 ]; then say "kept $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[ -n "$old_bpf_stats" ] && sysctl -q -w kernel.bpf_stats_enabled=1 ||
	say "kernel.bpf_stats_enabled not available: no BPF program costs"
for rate in $SYS_RATES $PROC_RATES; do
	[ "$rate" -le "$old_max_rate" ] ||
		die "kernel.perf_event_max_sample_rate is $old_max_rate, below $rate Hz; raise it: sysctl -w kernel.perf_event_max_sample_rate=100000"
done

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
say "bpfrec record: $([ "$HAVE_RECORD" = 1 ] && echo yes || echo 'not available'), --off-cpu: $([ "$HAVE_OFFCPU" = 1 ] && echo yes || echo no), --call-graph cfi: $([ "$HAVE_CFI" = 1 ] && echo yes || echo no), --alloc: $([ "$HAVE_ALLOC" = 1 ] && echo yes || echo no), --sched: $([ "$HAVE_SCHED" = 1 ] && echo yes || echo no), sched: $([ "$HAVE_SCHED_CMD" = 1 ] && echo yes || echo no), pprof: $([ "$HAVE_PPROF" = 1 ] && echo yes || echo 'not available'), agent: $([ "$HAVE_AGENT" = 1 ] && echo yes || echo 'not available'); scratch $W"

# ---- fixed work, sized once for this machine -------------------------------
# calibrate_spin SECONDS: iterations per thread that take SECONDS unprofiled.
calibrate_spin() {
	"$FIX/bench_spin" -s 1 -r "$W/calib" >/dev/null || die "bench_spin does not run"
	awk -v n="$(kv "$W/calib" iters)" -v s="$1" 'BEGIN { printf "%.0f", n * s }'
}
calibrate_pong() {
	"$FIX/bench_pingpong" -s 1 -w "$PONG_WORK" -r "$W/calib" >/dev/null || die "bench_pingpong does not run"
	awk -v n="$(kv "$W/calib" rounds)" -v s="$1" 'BEGIN { printf "%.0f", n * s }'
}

deadline() { echo "${DEADLINES[$1 - 1]}"; }
for s in $ONLY; do
	case $s in
	1) SPIN_ITERS=$(calibrate_spin "$SYS_SECS")
	   bench_cpu_recording 1 "Recording cost, system-wide (-a -g), plain and -z" "-a" "$SYS_RATES" "$(deadline 1)" "-g -g,-z" ;;
	2) SPIN_ITERS=$(calibrate_spin "$PROC_SECS")
	   bench_cpu_recording 2 "Recording cost, per process (-g or --call-graph dwarf -- workload)" "" \
		"$PROC_RATES" "$(deadline 2)" "-g --call-graph=dwarf" ;;
	3) PONG_ROUNDS=$(calibrate_pong "$PONG_SECS")
	   bench_offcpu 3 "$(deadline 3)" ;;
	4) bench_conversion "$(deadline 4)" ;;
	5) bench_startup "$(deadline 5)" ;;
	6) bench_longrun ;;
	7) REPS=$CG_REPS bench_callgraph "$(deadline 7)" ;;
	8) bench_alloc_profilers "$(deadline 8)" ;;
	9) PONG_ROUNDS=$(calibrate_pong "$PONG_SECS")
	   bench_sched "$(deadline 9)" ;;
	10) bench_memory "$(deadline 10)" ;;
	11) bench_agent ;;
	*) die "BENCH_ONLY: no scenario '$s' (1-11)" ;;
	esac
done

# ---- the report --------------------------------------------------------------
mkdir -p "$TOP/bench"
out=$TOP/bench/results.md
{
	echo "## bpfrec benchmark ($([ "$QUICK" = 1 ] && echo 'BENCH_QUICK=1 ')scenarios: $ONLY)"
	echo
	echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); bench wall time: ${SECONDS} s"
	echo "- Machine: $NCPU CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)), $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo) RAM, kernel $(uname -r), $(perf version 2>/dev/null), event cpu-clock (no hardware PMU needed)"
	echo "- bpfrec: $(git -C "$TOP" describe --always --dirty 2>/dev/null || echo unknown); load average at start $load_start, at end $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "- Cells: median (min–max) over the repetitions ($REPS for scenarios 1-3 and 8-10, $REPS_CONV for 4, $REPS_STARTUP for 5, $CG_REPS for 7); the last columns divide bpfrec's median by the reference's (below 1: bpfrec smaller; for per-second rates, higher is better)."
	echo
	awk -F '\t' -f "$TOP/tools/bench/report.awk" "$RAW"
	[[ " $ONLY " == *" 1 "* || " $ONLY " == *" 4 "* || " $ONLY " == *" 7 "* || " $ONLY " == *" 8 "* ||
	   " $ONLY " == *" 9 "* || " $ONLY " == *" 10 "* ]] && print_targets
	echo "<details><summary>raw values</summary>"
	echo
	echo '```'
	grep -v '^N' "$RAW"
	echo '```'
	echo "</details>"
} >"$out"
cat "$out"
say "wrote bench/results.md"
[ "$FAILED" = 0 ] || die "some runs failed (see above); their cells are missing"
