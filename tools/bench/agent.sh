# tools/bench/agent.sh - scenario 11 of tools/bench.sh (bash, sourced after
# lib.sh and longrun.sh): what does `bpfrec agent` cost the host it
# profiles, against the budgets other continuous profilers publish?
#
# For each rate in AGENT_RATES: `bpfrec agent -a -g -F RATE --every 15s
# --duration AGENT_SECS` pushing (Pyroscope API) to the loopback receiver
# tests/tools/profile_receiver.py, with scenario 6's churn beside it (one
# spinning thread, a short-lived process every LONG_CHURN s). Every
# AGENT_STEP seconds the agent's VmRSS and the run time of its BPF programs
# (/proc/PID/fdinfo, kernel.bpf_stats_enabled=1, read with awk: bpftool maps
# libLLVM, which a system-wide agent would build unwind tables for) are
# read; bench_rusage gives its user+sys time and peak RSS (ru_maxrss, the
# VmHWM of a process without children).
#
# Figures against the anchors' published budgets (a second column, so the
# ratio column reads as the share of the budget used):
#   agent + BPF CPU, % of one CPU   the OpenTelemetry eBPF profiler's upper
#                                   limit in its testing: 1 % CPU
#   peak RSS                        the same profiler's: 250 MB
#   steady RSS (median VmRSS over   parca-agent's steady state, about 100 MB
#   the second half)
# A budget missed is a finding, said in its verdict row, not a failure of
# the bench (as in targets.sh). What fails the bench: the agent failing, or
# a window not pushed: the agent's summary line must count no dropped
# window and every request pushed (none spooled, rejected, too large or
# lacking a spool), at least AGENT_SECS / 15 windows, and the receiver's
# /__stats must count as many requests as the agent pushed and none
# rejected.
#
# Needs from the driver: AGENT_SECS, AGENT_RATES, NCPU, HAVE_AGENT, TOP;
# from longrun.sh: LONG_CHURN, churn_start, churn_stop.

AGENT_STEP=10
AGENT_EVERY=15
AGENT_BUDGET_CPU=1	# % CPU, OpenTelemetry eBPF profiler
AGENT_BUDGET_PEAK_MB=250	# MB, OpenTelemetry eBPF profiler
AGENT_BUDGET_STEADY_MB=100	# MB, parca-agent's steady state

# agent_bpf_ns PID: the summed run_time_ns of the BPF programs PID holds
# (each program once: link fds name a program too but carry no counters).
agent_bpf_ns() {
	awk '/^prog_id:/ { id[FILENAME] = $2 } /^run_time_ns:/ { rt[FILENAME] = $2 }
		END { for (f in rt) if (!seen[id[f]]++) ns += rt[f]; printf "%.0f\n", ns }' \
		/proc/"$1"/fdinfo/* 2>/dev/null
}

# agent_stats_line FILE: the agent's summary line ("[ bpfrec agent: ... ]")
# as key=value lines.
agent_stats_line() {
	# Two passes: sed -E counts at most \9, and a line once substituted
	# no longer matches the other pattern.
	sed -nE 's/.*\[ bpfrec agent: ([0-9]+) windows \(([0-9]+) dropped\), ([0-9]+) profiles, ([0-9]+) samples \(([0-9]+) lost\); ([0-9]+) requests: ([0-9]+) pushed \(([0-9.]+) KB, ([0-9]+) replayed from the spool\), ([0-9]+) spooled, ([0-9]+) rejected, ([0-9]+) too large, ([0-9]+) lacking a spool.*/windows=\1\nwindows_dropped=\2\nprofiles=\3\nsamples=\4\nlost=\5\nrequests=\6\npushed=\7\npushed_kb=\8\nreplayed=\9/p' "$1"
	sed -nE 's/.*\[ bpfrec agent: .*, ([0-9]+) spooled, ([0-9]+) rejected, ([0-9]+) too large, ([0-9]+) lacking a spool.*/spooled=\1\nrejected=\2\ntoo_large=\3\nno_spool=\4/p' "$1"
}

# agent_one RATE DIR: one run. DIR gets ru, err (the agent's stderr), out,
# series ("SECONDS RSS_KB BPF_NS" lines, SECONDS since the agent started),
# summary (agent_stats_line), recv.stats (the receiver's /__stats as
# key=value lines), churn.
agent_one() {
	local rate=$1 d=$2 port="" ctl="" recv_pid pid="" _ job t0 now rss
	mkdir -p "$d/recv"
	python3 "$TOP/tests/tools/profile_receiver.py" "$d/recv" >"$d/ports" 2>"$d/recv.err" &
	recv_pid=$!
	for _ in $(seq 100); do
		[ "$(wc -l <"$d/ports")" -ge 2 ] && break
		sleep 0.1
	done
	port=$(sed -n 1p "$d/ports") ctl=$(sed -n 2p "$d/ports")
	if [ -z "$ctl" ]; then
		echo "bench: the loopback receiver did not start:" >&2
		sed 's/^/    /' "$d/recv.err" >&2
		kill "$recv_pid" 2>/dev/null
		return 1
	fi
	NO_BPF_POLL=1 measure "$d" "$BPFREC" agent --server "http://127.0.0.1:$port" -a -g -F "$rate" \
		--every "${AGENT_EVERY}s" --duration "$AGENT_SECS" --spool "$d/spool" &
	job=$!
	for _ in $(seq 200); do
		[ -s "$d/pid" ] && break
		sleep 0.05
	done
	t0=$EPOCHREALTIME
	pid=$(cat "$d/pid" 2>/dev/null) || { wait "$job"; kill "$recv_pid"; return 1; }
	churn_start "$pid" "$AGENT_SECS" "$d/churn"
	: >"$d/series"
	while kill -0 "$pid" 2>/dev/null; do
		sleep "$AGENT_STEP"
		rss=$(awk '/^VmRSS:/ { print $2 }' /proc/"$pid"/status 2>/dev/null)
		[ -n "$rss" ] || break
		now=$(calc "$EPOCHREALTIME - $t0")
		echo "$now $rss $(agent_bpf_ns "$pid")" >>"$d/series"
		say "  -F $rate: ${now%.*}s RSS $((rss / 1024)) MB"
	done
	wait "$job"
	local st=$? recv_st=0
	churn_stop
	# A receiver gone before the agent is the bench's fault, not the
	# agent's: said apart (the agent would spool and retry meanwhile).
	kill -0 "$recv_pid" 2>/dev/null || { wait "$recv_pid"; recv_st=$?; }
	echo "status=$recv_st" >"$d/recv.exit"
	python3 -c 'import json, sys, urllib.request
for k, v in json.load(urllib.request.urlopen(sys.argv[1], timeout=5)).items(): print("%s=%s" % (k, v))' \
		"http://127.0.0.1:$ctl/__stats" >"$d/recv.stats" 2>>"$d/recv.err"
	kill "$recv_pid" 2>/dev/null
	wait "$recv_pid" 2>/dev/null
	rm -rf "$d/recv"
	if [ "$st" != 0 ]; then
		show_failure "$d" "bpfrec agent -F $rate"
		return 1
	fi
	agent_stats_line "$d/err" >"$d/summary"
}

# agent_verdict SEC ROW OK TEXT: a verdict row, "yes" or "NO: TEXT".
agent_verdict() {
	if [ "$3" = 1 ]; then text "$1" "$2" bpfrec "yes"; else text "$1" "$2" bpfrec "NO: $4"; fi
}

bench_agent() {
	local sec=11 rate d p wall_s cpu_s bpf_s pct peak steady
	section "$sec" "Continuous profiling: bpfrec agent -a -g over ${AGENT_SECS} s with churn, against published budgets" \
		"bpfrec=bpfrec agent" "budget=published budget"
	if [ "$HAVE_AGENT" = 0 ]; then
		text "$sec" "agent CPU (% of one CPU)" bpfrec "bpfrec agent: not available"
		return 0
	fi
	for rate in $AGENT_RATES; do
		say "scenario 11: bpfrec agent -a -g -F $rate --every ${AGENT_EVERY}s for ${AGENT_SECS}s, pushing to a loopback receiver"
		d=$W/s$sec/$rate
		agent_one "$rate" "$d" || { FAILED=1; continue; }
		p="$rate Hz:"
		wall_s=$(calc "$(kv "$d/ru" wall_ns) / 1e9")
		cpu_s=$(calc "$(kv "$d/ru" cpu_ns) / 1e9")
		# BPF time up to the last reading taken while the programs were
		# loaded (the largest: a reading during the agent's exit finds
		# their fds closed), scaled to the whole run by its rate.
		bpf_s=$(awk '$3 > ns { ns = $3; t = $1 } END { printf "%.6g\n", (t > 0 ? ns / 1e9 / t : 0) }' \
			"$d/series")
		bpf_s=$(calc "$bpf_s * $wall_s")
		pct=$(calc "($cpu_s + $bpf_s) / $wall_s * 100")
		val "$sec" "$p agent user+sys (% of one CPU)" bpfrec "$(calc "$cpu_s / $wall_s * 100")"
		val "$sec" "$p its BPF programs (% of one CPU)" bpfrec "$(calc "$bpf_s / $wall_s * 100")"
		val "$sec" "$p agent + BPF (% of one CPU)" bpfrec "$pct"
		val "$sec" "$p agent + BPF (% of one CPU)" budget "$AGENT_BUDGET_CPU"
		val "$sec" "$p agent + BPF (% of all $NCPU CPUs)" bpfrec "$(calc "$pct / $NCPU")"
		agent_verdict "$sec" "$p within the OpenTelemetry profiler's 1 % CPU (verdict)" \
			"$(awk -v a="$pct" -v b="$AGENT_BUDGET_CPU" 'BEGIN { print (a <= b) }')" "$(round3 "$pct") % of one CPU"
		peak=$(calc "$(kv "$d/ru" maxrss_kb) / 1024")
		steady=$(awk -v half="$((AGENT_SECS / 2))" '$1 >= half { print $2 / 1024 }' "$d/series" |
			{ mapfile -t v; [ "${#v[@]}" -gt 0 ] && median "${v[@]}"; })
		val "$sec" "$p peak RSS, VmHWM (MB)" bpfrec "$peak"
		val "$sec" "$p peak RSS, VmHWM (MB)" budget "$AGENT_BUDGET_PEAK_MB"
		agent_verdict "$sec" "$p within the OpenTelemetry profiler's 250 MB (verdict)" \
			"$(awk -v a="$peak" -v b="$AGENT_BUDGET_PEAK_MB" 'BEGIN { print (a <= b) }')" "$(round3 "$peak") MB"
		val "$sec" "$p steady RSS, median VmRSS of the second half (MB)" bpfrec "$steady"
		val "$sec" "$p steady RSS, median VmRSS of the second half (MB)" budget "$AGENT_BUDGET_STEADY_MB"
		agent_verdict "$sec" "$p within parca-agent's ~100 MB steady state (verdict)" \
			"$([ -n "$steady" ] && awk -v a="$steady" -v b="$AGENT_BUDGET_STEADY_MB" 'BEGIN { print (a <= b) }')" \
			"$(round3 "$steady") MB"
		val "$sec" "$p RSS growth, first reading to last (MB)" bpfrec \
			"$(awk 'NR == 1 { f = $2 } { l = $2 } END { if (NR) printf "%.2f", (l - f) / 1024 }' "$d/series")"
		val "$sec" "$p windows" bpfrec "$(kv "$d/summary" windows)"
		val "$sec" "$p samples" bpfrec "$(kv "$d/summary" samples)"
		val "$sec" "$p samples lost" bpfrec "$(kv "$d/summary" lost)"
		val "$sec" "$p profiles pushed" bpfrec "$(kv "$d/summary" profiles)"
		val "$sec" "$p requests pushed" bpfrec "$(kv "$d/summary" pushed)"
		val "$sec" "$p bytes pushed (KB)" bpfrec "$(kv "$d/summary" pushed_kb)"
		val "$sec" "$p receiver: requests" bpfrec "$(kv "$d/recv.stats" requests)"
		val "$sec" "$p receiver: profiles (series)" bpfrec "$(kv "$d/recv.stats" series)"
		val "$sec" "$p short-lived processes started" bpfrec \
			"$(awk '{ n += $1 } END { print n + 0 }' "$d/churn")"
		# Every window pushed: the agent's own count and the receiver's agree.
		local s=$d/summary r=$d/recv.stats why=""
		[ "$(kv "$d/recv.exit" status)" != 0 ] &&
			why="the loopback receiver exited during the run (status $(kv "$d/recv.exit" status)): not the agent's doing, run it again"
		[ -z "$why" ] && ! [ -s "$s" ] && why="no summary line from the agent"
		[ -z "$why" ] && [ "$(kv "$s" windows_dropped)" != 0 ] && why="$(kv "$s" windows_dropped) windows dropped"
		[ -z "$why" ] && [ "$(kv "$s" windows)" -lt "$((AGENT_SECS / AGENT_EVERY))" ] &&
			why="$(kv "$s" windows) windows, $((AGENT_SECS / AGENT_EVERY)) expected"
		[ -z "$why" ] && [ "$(kv "$s" pushed)" != "$(kv "$s" requests)" ] &&
			why="$(kv "$s" pushed) of $(kv "$s" requests) requests pushed ($(kv "$s" spooled) spooled, $(kv "$s" rejected) rejected, $(kv "$s" too_large) too large, $(kv "$s" no_spool) lacking a spool)"
		[ -z "$why" ] && [ "$(kv "$r" requests)" != "$(kv "$s" pushed)" ] &&
			why="the receiver counted $(kv "$r" requests) requests, the agent $(kv "$s" pushed)"
		[ -z "$why" ] && [ "$(kv "$r" rejected)" != 0 ] && why="the receiver rejected $(kv "$r" rejected)"
		if [ -n "$why" ]; then
			say "scenario 11: -F $rate: not every window was pushed: $why: FAILED"
			FAILED=1
			agent_verdict "$sec" "$p every window pushed (verdict)" 0 "$why"
		else
			agent_verdict "$sec" "$p every window pushed (verdict)" 1
		fi
	done
	note "$sec" "Command: \`bpfrec agent --server http://127.0.0.1:PORT -a -g -F RATE --every ${AGENT_EVERY}s --duration $AGENT_SECS --spool DIR\` pushing (Pyroscope's API) to the loopback receiver \`tests/tools/profile_receiver.py\` (a Python process on the same machine, decoding and storing every profile), while one thread spins and a new short-lived process starts every ${LONG_CHURN} s. CPU: the agent's user+sys (wait4) plus its BPF programs' run time (fdinfo run_time_ns, read every ${AGENT_STEP} s and scaled to the run), over wall time, as % of one CPU. Peak RSS: ru_maxrss (VmHWM). Steady RSS: the median of the VmRSS readings (every ${AGENT_STEP} s) over the second half."
	note "$sec" "Budgets, as their projects publish them: the OpenTelemetry eBPF profiler's README, \"1% CPU and 250MB memory are our upper limits in testing\"; parca-agent's steady state of about 100 MB. A budget missed is a finding; a window not pushed fails the bench."
}
