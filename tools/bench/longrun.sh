# tools/bench/longrun.sh - scenario 6 of tools/bench.sh (bash, sourced after
# lib.sh), run by `make bench-long`: does a long system-wide recording keep
# its memory flat?
#
# `record -a -g -F 999 -- sleep LONG_SECS` while one thread spins and a loop
# starts a short-lived process (bench_spin, a few ms of work) every 0.1 s,
# so the recorder keeps meeting new pids, new mappings and exits. The
# recorder's VmRSS is read from /proc every LONG_STEP seconds. With
# BENCH_LONG_REF=1 perf record does the same run afterwards, as a reference.
#
# Verdict: over the second half of the run (start-up buffers have reached
# their size by then) the RSS readings get a least-squares line; its rise
# across that half, divided by the short-lived processes started meanwhile,
# must stay under LONG_MAX_BYTES_PER_PROC, unless the rise is within
# LONG_NOISE_KB (the allocator grows its heap in steps of ~128 KiB). A
# recorder that keeps something per exited process fails the bench. Any
# length works; a short run needs more processes to show a leak above the
# noise: BENCH_LONG_SECS=120 BENCH_LONG_CHURN=0.01 is the quick check
# (BENCH_LONG_CHURN: the pause between short-lived processes, 0.1 s).
#
# Needs from the driver: LONG_SECS, LONG_STEP, LONG_TOOLS, HAVE_RECORD.

LONG_CHURN=${BENCH_LONG_CHURN:-0.1}
LONG_MAX_BYTES_PER_PROC=32
LONG_NOISE_KB=256

# churn_start PID SECS COUNTFILE: while PID lives, one thread spins (for
# SECS at most) and a short-lived process (bench_spin, a few ms of work)
# starts every LONG_CHURN seconds; COUNTFILE gets one line per batch of
# processes started (sum the lines for the count). Scenario 11 (agent.sh)
# runs the same churn. churn_stop ends both and waits for them.
churn_start() {
	local pid=$1
	"$FIX/bench_spin" -t 1 -s "$2" -r /dev/null &
	CHURN_SPIN_JOB=$!
	: >"$3"
	(
		while kill -0 "$pid" 2>/dev/null; do
			"$FIX/bench_spin" -t 1 -n 300 -r /dev/null
			sleep "$LONG_CHURN"
			echo 2 >>"$3"	# bench_spin and sleep (echo is a builtin)
		done
	) &
	CHURN_LOOP_JOB=$!
}
churn_stop() {
	kill "$CHURN_SPIN_JOB" 2>/dev/null
	wait "$CHURN_SPIN_JOB" "$CHURN_LOOP_JOB" 2>/dev/null
}

# longrun_one TOOL DIR: one long recording; the series goes to DIR/series
# as "SECONDS RSS_KB FILE_BYTES PROCESSES" lines (PROCESSES: short-lived
# processes started so far).
longrun_one() {
	local tool=$1 d=$2 pid="" t=0 _ rec_job
	mkdir -p "$d"
	recorder_argv "$tool" "-a -g -F 999" "$d/data"
	measure "$d" "${REC[@]}" -- sleep "$LONG_SECS" &
	rec_job=$!
	for _ in $(seq 200); do
		[ -s "$d/pid" ] && break
		sleep 0.05
	done
	pid=$(cat "$d/pid" 2>/dev/null) || { wait "$rec_job"; return 1; }
	churn_start "$pid" "$LONG_SECS" "$d/churn"
	: >"$d/series"
	while kill -0 "$pid" 2>/dev/null; do
		sleep "$LONG_STEP"
		t=$((t + LONG_STEP))
		local rss
		rss=$(awk '/^VmRSS:/ { print $2 }' /proc/"$pid"/status 2>/dev/null) || break
		[ -n "$rss" ] || break
		echo "$t $rss $(stat -c %s "$d/data" 2>/dev/null || echo 0) $(awk '{ n += $1 } END { print n + 0 }' "$d/churn")" >>"$d/series"
		say "  $tool: ${t}s RSS $((rss / 1024)) MB"
	done
	wait "$rec_job"
	local st=$?
	churn_stop
	if [ "$st" != 0 ]; then
		show_failure "$d" "$tool record (long run)"
		return 1
	fi
	file_counts "$d/data" "$d"
	rm -f "$d/data" "$d/data.old"
}

# longrun_growth SERIES: "KB PROCESSES BYTES_PER_PROCESS" for the second
# half of the series: the fitted RSS rise and the processes started.
longrun_growth() {
	awk -v half="$((LONG_SECS / 2))" '
		$1 >= half { n++; x[n] = $1; y[n] = $2; p[n] = $4 }
		END {
			if (n < 3) { print "0 0 0"; exit }
			for (i = 1; i <= n; i++) { sx += x[i]; sy += y[i] }
			mx = sx / n; my = sy / n
			for (i = 1; i <= n; i++) { sxy += (x[i] - mx) * (y[i] - my); sxx += (x[i] - mx) ^ 2 }
			kb = sxy / sxx * (x[n] - x[1]); procs = p[n] - p[1]
			printf "%.0f %d %.1f\n", kb, procs, procs ? kb * 1024 / procs : 0
		}' "$1"
}

bench_longrun() {
	local sec=6 tool d t rss
	local cols=("bpfrec=bpfrec record")
	[[ " $LONG_TOOLS " == *" perf "* ]] && cols+=("perf=perf record")
	section "$sec" "Long run: recorder memory over ${LONG_SECS} s, -a -g -F 999" "${cols[@]}"
	for tool in $LONG_TOOLS; do
		[ "$tool" = bpfrec ] && [ "$HAVE_RECORD" = 0 ] && {
			text "$sec" "RSS at ${LONG_STEP} s (MB)" bpfrec "bpfrec record: not available"
			continue
		}
		say "scenario 6: $tool record -a -g -F 999 for ${LONG_SECS}s, RSS every ${LONG_STEP}s"
		d=$W/s$sec/$tool
		longrun_one "$tool" "$d" || { FAILED=1; continue; }
		while read -r t rss _; do
			val "$sec" "RSS at ${t} s (MB)" "$tool" "$(calc "$rss / 1024")"
		done <"$d/series"
		val "$sec" "RSS growth, first reading to last (MB)" "$tool" \
			"$(awk 'NR == 1 { f = $2 } { l = $2 } END { printf "%.2f", (l - f) / 1024 }' "$d/series")"
		local kb procs per
		read -r kb procs per < <(longrun_growth "$d/series")
		val "$sec" "second half: fitted RSS rise (KB)" "$tool" "$kb"
		val "$sec" "second half: short-lived processes" "$tool" "$procs"
		val "$sec" "second half: RSS rise per process (bytes)" "$tool" "$per"
		if [ "$tool" = bpfrec ]; then
			if [ "$procs" -gt 0 ] && [ "$kb" -gt "$LONG_NOISE_KB" ] &&
				awk -v p="$per" -v m="$LONG_MAX_BYTES_PER_PROC" 'BEGIN { exit !(p > m) }'; then
				text "$sec" "memory flat (verdict)" "$tool" "NO: ${per} bytes per process"
				say "scenario 6: bpfrec's RSS rose ${kb} KB over the second half (${per} bytes per short-lived process, limit ${LONG_MAX_BYTES_PER_PROC}): FAILED"
				FAILED=1
			else
				text "$sec" "memory flat (verdict)" "$tool" "yes"
			fi
		fi
		val "$sec" "peak RSS (MB)" "$tool" "$(calc "$(kv "$d/ru" maxrss_kb) / 1024")"
		val "$sec" "recorder CPU (s)" "$tool" "$(calc "$(kv "$d/ru" cpu_ns) / 1e9")"
		val "$sec" "file (MB)" "$tool" "$(calc "$(kv "$d/counts" bytes) / 1048576")"
		val "$sec" "samples written" "$tool" "$(kv "$d/counts" samples)"
		val "$sec" "samples lost" "$tool" "$(kv "$d/counts" lost)"
	done
	note "$sec" "Command: \`bpfrec record -a -g -F 999 -o FILE -- sleep $LONG_SECS\` (and \`perf record -e cpu-clock ...\` with BENCH_LONG_REF=1) while one thread spins and a new short-lived process starts every ${LONG_CHURN} s. RSS is VmRSS from /proc/PID/status every ${LONG_STEP} s. Verdict: the least-squares RSS rise over the second half must stay within ${LONG_NOISE_KB} KB or ${LONG_MAX_BYTES_PER_PROC} bytes per short-lived process started meanwhile."
}
