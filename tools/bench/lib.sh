# tools/bench/lib.sh - measurement helpers for tools/bench.sh (bash, sourced).
#
# The driver sets: BUILD (build dir, absolute), FIX (its fixtures), W (a
# scratch dir for this run), RAW (the raw results file), BPFREC.
#
# Raw results are tab-separated lines; tools/bench/report.awk turns them
# into the Markdown tables:
#   S <sec> <title> <col>...     a section; col is key=Display name, the
#                                first column is bpfrec, ratios are first/other
#   V <sec> <row> <col> <value>  one measurement: a cell holds every
#                                repetition's value (median, min, max)
#   T <sec> <row> <col> <text>   a cell that holds text (not available, ...)
#   N <sec> <text>               a line under the section's table
#
# Every command a run measures goes through bench_rusage (fork, exec, wait4)
# so wall time, CPU time and peak RSS are counted the same way for both
# tools; a poller reads the BPF programs' run time from the measured
# process's own fds (/proc/PID/fdinfo, with kernel.bpf_stats_enabled=1).

RUSAGE=$FIX/bench_rusage

say() { printf '[bench %4ds] %s\n' "$SECONDS" "$*" >&2; }
die() { echo "bench: $*" >&2; exit 1; }

# kv FILE KEY: the value of KEY=... in FILE, empty when missing.
kv() { sed -n "s/^$2=//p" "$1" 2>/dev/null | tail -n 1; }
# calc EXPR: floating-point arithmetic (awk), 6 significant digits.
calc() { awk "BEGIN { printf \"%.6g\", $1 }"; }

section() { local s=$1 t=$2; shift 2; local IFS=$'\t'; printf 'S\t%s\t%s\t%s\n' "$s" "$t" "$*" >>"$RAW"; }
val() { [ -n "$4" ] && printf 'V\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$RAW"; return 0; }
text() { printf 'T\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$RAW"; }
note() { printf 'N\t%s\t%s\n' "$1" "$2" >>"$RAW"; }

# median VALUES...: the median of the numbers given.
median() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) exit 1
		if (NR % 2) printf "%.6g", v[(NR + 1) / 2]; else printf "%.6g", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# bpf_poll PIDFILE DIR: until the process in PIDFILE exits, every second copy
# its BPF programs' counters (fdinfo: prog_id, prog_type, run_time_ns,
# run_cnt) to DIR/bpf.snap and their names (bpftool, once per id) to
# DIR/bpf.names. The last snapshot is at most a second old: it gives costs
# per run, not totals.
bpf_poll() {
	local pidfile=$1 dir=$2 pid="" id _
	for _ in $(seq 200); do
		[ -s "$pidfile" ] && break
		sleep 0.05
	done
	pid=$(cat "$pidfile" 2>/dev/null) || return 0
	: >"$dir/bpf.names"
	while kill -0 "$pid" 2>/dev/null; do
		grep -sE '^(prog_type|prog_id|run_time_ns|run_cnt):' /proc/"$pid"/fdinfo/* >"$dir/bpf.snap.tmp" &&
			mv "$dir/bpf.snap.tmp" "$dir/bpf.snap"
		for id in $(sed -n 's/.*:prog_id:[[:space:]]*//p' "$dir/bpf.snap" 2>/dev/null | sort -u); do
			grep -q "^$id " "$dir/bpf.names" && continue
			bpftool prog show id "$id" 2>/dev/null |
				sed -n "1s/^[0-9]*: *\([a-z_]*\) *name \([^ ]*\).*/$id \1 \2/p" >>"$dir/bpf.names"
		done
		sleep 1
	done
	rm -f "$dir/bpf.snap.tmp"
}

# bpf_cost DIR WHAT: ns per run and run count of the programs of DIR's last
# snapshot, summed over programs of kind WHAT: "sample" (perf_event
# programs: one run per sampling interrupt), "switch" (the program whose
# name mentions switch: one run per context switch), "wakeup" (programs
# whose name mentions wakeup: one run per sched_wakeup or sched_wakeup_new)
# or "uprobe" (kprobe-type programs, which uprobes are: one run per probe
# hit). Prints "NS_PER_RUN RUNS" or nothing.
bpf_cost() {
	[ -s "$1/bpf.snap" ] || return 0
	awk -v what="$2" '
		FILENAME == ARGV[1] { name[$1] = $3; type[$1] = $2; next }
		{
			split($0, kv, ":"); f = kv[1]; k = kv[2]; v = $NF
			if (k == "prog_id") id[f] = v; else if (k == "run_time_ns") rt[f] = v
			else if (k == "run_cnt") rc[f] = v; else if (k == "prog_type") pt[f] = v
		}
		END {
			for (f in id) {
				i = id[f]
				# Link fds name their program too; only program fds have counters.
				if (!(f in rc) || seen[i]++) continue
				is_sample = pt[f] == 7 || type[i] == "perf_event"
				is_switch = name[i] ~ /switch/
				is_wakeup = name[i] ~ /wakeup/
				is_uprobe = pt[f] == 2 || type[i] == "kprobe"
				if ((what == "sample" && is_sample) || (what == "switch" && is_switch) ||
				    (what == "wakeup" && is_wakeup) || (what == "uprobe" && is_uprobe)) {
					ns += rt[f]; n += rc[f]
				}
			}
			if (n > 0) printf "%.0f %d\n", ns / n, n
		}' "$1/bpf.names" "$1/bpf.snap"
}

# measure DIR CMD...: run CMD under bench_rusage (report in DIR/ru), its
# stdout to DIR/out (unless redirected by the caller: pass OUT=...), its
# stderr to DIR/err, with the BPF poller (unless the caller passes
# NO_BPF_POLL=1: its bpftool runs are processes a system-wide recording
# sees). Returns CMD's status.
measure() {
	local dir=$1 st poller=""
	shift
	mkdir -p "$dir"
	rm -f "$dir/pid" "$dir/bpf.snap"
	if [ "${NO_BPF_POLL:-0}" != 1 ]; then
		bpf_poll "$dir/pid" "$dir" &
		poller=$!
	fi
	"$RUSAGE" -o "$dir/ru" -p "$dir/pid" -- "$@" >"${OUT:-$dir/out}" 2>"$dir/err"
	st=$?
	[ -n "$poller" ] && wait "$poller" 2>/dev/null
	return $st
}

# file_counts FILE DIR: samples and lost samples in a perf.data file as the
# stock perf counts them (perf report --stats: per-event SAMPLE and
# LOST_SAMPLES), into DIR/counts: samples, lost, samples_EVENT per event
# (cpu_clock, offcpu_time), bytes, and claimed (the recorder's own count).
file_counts() {
	local f=$1 dir=$2
	perf report --stats -i "$f" 2>"$dir/stats.err" | awk '
		/^Aggregated stats:/ { agg = 1; next }
		/ stats:$/ {
			agg = 0; ev = $1; sub(/:$/, "", ev); gsub(/[^A-Za-z0-9]/, "_", ev)
			next
		}
		ev != "" && /SAMPLE events:/ { s += $3; per[ev] += $3 }
		ev != "" && /LOST_SAMPLES events:/ { l += $3 }
		agg && /^ *LOST events:/ { chunks += $3 }
		END {
			printf "samples=%d\nlost=%d\nlost_records=%d\n", s, l, chunks
			for (e in per) printf "samples_%s=%d\n", e, per[e]
		}' >"$dir/counts"
	echo "bytes=$(stat -c %s "$f" 2>/dev/null || echo 0)" >>"$dir/counts"
	# What the recorder said it wrote ("... (N samples" on its stderr), to
	# catch a file perf cannot read.
	local claimed
	claimed=$(sed -n 's/.*Captured and wrote .*(\([0-9]*\) samples.*/\1/p' "$dir/err" 2>/dev/null | tail -n 1)
	echo "claimed=${claimed:-}" >>"$dir/counts"
	if [ -n "$claimed" ] && [ "$claimed" != "$(kv "$dir/counts" samples)" ]; then
		echo "bench: $f: the recorder reported $claimed samples, perf report --stats counts $(kv "$dir/counts" samples):" >&2
		head -n 3 "$dir/stats.err" | sed 's/^/    /' >&2
	fi
}

# show_failure DIR WHAT: a one-line error plus the end of the run's stderr.
show_failure() {
	echo "bench: $2 failed (status $(kv "$1/ru" status)); its stderr ends with:" >&2
	tail -n 5 "$1/err" | sed 's/^/    /' >&2
}

# rotate REP WORD...: the words, one per line, starting at the (REP mod
# count)th: each repetition runs the tools in another order.
rotate() {
	local rep=$1
	shift
	printf '%s\n' "$@" | awk -v r="$rep" '{ t[NR - 1] = $0 } END { for (i = 0; i < NR; i++) print t[(i + r) % NR] }'
}

# tool_rows SEC ROWS NA_ROW BASE_S BASE_CPU_S TOOL...: for each TOOL, the
# rows of each repetition done, by `ROWS SEC $W/sSEC/TOOL/REP TOOL BASE_S
# BASE_CPU_S`; a TOOL whose have[TOOL] (the caller's associative array) is
# not 1 gets the caller's why[TOOL] as text in row NA_ROW instead.
tool_rows() {
	local sec=$1 rows=$2 na_row=$3 base=$4 base_cpu=$5 tool rep
	shift 5
	for tool in "$@"; do
		if [ "${have[$tool]}" != 1 ]; then
			text "$sec" "$na_row" "$tool" "${why[$tool]}"
			continue
		fi
		for rep in $(seq "$REPS_DONE"); do
			"$rows" "$sec" "$W/s$sec/$tool/$rep" "$tool" "$base" "$base_cpu"
		done
	done
}

# Time budget. Each scenario gets a deadline (seconds since the bench
# started, cumulative over the scenarios); a repetition after the first
# starts only if one more like the previous fits before it. On a machine
# busier than planned, a scenario runs fewer repetitions and says so instead
# of blowing the bench's time budget.
#   budget_start DEADLINE; for rep ...; do rep_begin "$rep" || break; ...; done
#   budget_note SEC PLANNED
budget_start() { SCEN_END=$1 REP_T0=$SECONDS REPS_DONE=0 REPS_CUT=0; }
rep_begin() {
	if [ "$1" -gt 1 ] && [ $((SECONDS + SECONDS - REP_T0)) -gt "$SCEN_END" ]; then
		REPS_CUT=1
		return 1
	fi
	REP_T0=$SECONDS REPS_DONE=$1
	return 0
}
budget_note() {
	[ "$REPS_CUT" = 1 ] || return 0
	note "$1" "Time budget: only $REPS_DONE of $2 repetitions ran (the machine was slower than planned; see the load average above)."
	say "  time budget: $REPS_DONE of $2 repetitions"
}
