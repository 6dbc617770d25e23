# tools/bench/sched.sh - scenario 9 of tools/bench.sh (bash, sourced after
# lib.sh and recording.sh): what scheduler metrics cost on a
# context-switch-bound workload, and what reading them back costs.
#
# The workload is scenario 3's ping-pong (bench_pingpong -n PONG_ROUNDS -w
# PONG_WORK). Each repetition runs it alone, then, in rotating order, under:
#   sched   bpfrec record --sched -g -o FILE -- workload
#   offcpu  bpfrec record --off-cpu -g -o FILE -- workload
#   perf    perf sched record -o FILE -- workload
# and post-processes each scheduler recording: `bpfrec sched -i FILE` for
# bpfrec's, `perf sched timehist -s -i FILE` for perf's (both to
# /dev/null). The BPF cost per context switch is the run time per run of
# the recorder's programs whose name mentions "switch" (attached to
# sched_switch, one run per switch on every CPU); per wakeup, of those
# whose name mentions "wakeup" (sched_wakeup and sched_wakeup_new).
#
# Needs from the driver: REPS, PONG_ROUNDS, PONG_WORK, HAVE_SCHED,
# HAVE_SCHED_CMD, HAVE_OFFCPU.

# sched_recording DIR TOOL: record the workload with TOOL into DIR/data,
# count the file, post-process it (DIR/post), remove it.
sched_recording() {
	local dir=$1 tool=$2 rec post=()
	case $tool in
	sched) rec=("$BPFREC" record --sched -g -o "$dir/data")
	       [ "$HAVE_SCHED_CMD" = 1 ] && post=("$BPFREC" sched -i "$dir/data") ;;
	offcpu) rec=("$BPFREC" record --off-cpu -g -o "$dir/data") ;;
	perf) rec=(perf sched record -o "$dir/data")
	      post=(perf sched timehist -s -i "$dir/data") ;;
	esac
	mkdir -p "$dir"
	if ! measure "$dir" "${rec[@]}" -- "$FIX/bench_pingpong" -n "$PONG_ROUNDS" -w "$PONG_WORK" \
		-r "$dir/wl"; then
		show_failure "$dir" "${rec[*]}"
		FAILED=1
		return 1
	fi
	file_counts "$dir/data" "$dir"
	if [ "${#post[@]}" -gt 0 ] && ! OUT=/dev/null measure "$dir/post" "${post[@]}"; then
		show_failure "$dir/post" "${post[*]}"
		FAILED=1
	fi
	rm -f "$dir/data" "$dir/data.old"
}

# sched_rows SEC DIR TOOL BASE_S BASE_CPU_S: the rows of one run.
sched_rows() {
	local sec=$1 dir=$2 tool=$3 base=$4 base_cpu=$5 el cpu cost
	[ -s "$dir/wl" ] && [ -s "$dir/counts" ] || return 0
	el=$(kv "$dir/wl" elapsed_ns) cpu=$(kv "$dir/wl" cpu_ns)
	val "$sec" "workload time (s)" "$tool" "$(calc "$el / 1e9")"
	val "$sec" "workload slowdown (%)" "$tool" "$(calc "($el / 1e9 / $base - 1) * 100")"
	val "$sec" "workload CPU inflation (%)" "$tool" "$(calc "($cpu / 1e9 / $base_cpu - 1) * 100")"
	val "$sec" "workload context switches per second" "$tool" \
		"$(calc "($(kv "$dir/wl" vcsw) + $(kv "$dir/wl" ivcsw)) / ($el / 1e9)")"
	val "$sec" "recorder CPU (ms)" "$tool" "$(calc "($(kv "$dir/ru" cpu_ns) - $cpu) / 1e6")"
	val "$sec" "recorder peak RSS (MB)" "$tool" "$(calc "$(kv "$dir/ru" maxrss_kb) / 1024")"
	if [ "$tool" = perf ]; then
		text "$sec" "BPF program per context switch (ns)" "$tool" "in kernel, not visible"
	else
		cost=$(bpf_cost "$dir" switch)
		val "$sec" "BPF program per context switch (ns)" "$tool" "${cost%% *}"
		cost=$(bpf_cost "$dir" wakeup)
		if [ -n "$cost" ]; then
			val "$sec" "BPF program per wakeup (ns)" "$tool" "${cost%% *}"
		elif [ "$tool" = offcpu ]; then
			text "$sec" "BPF program per wakeup (ns)" "$tool" "no wakeup program"
		fi
	fi
	val "$sec" "recording size (MB)" "$tool" "$(calc "$(kv "$dir/counts" bytes) / 1048576")"
	val "$sec" "samples written (all events)" "$tool" "$(kv "$dir/counts" samples)"
	case $tool in
	sched) val "$sec" "sched-delay samples written" "$tool" "$(kv "$dir/counts" samples_sched_delay)" ;;
	offcpu) val "$sec" "offcpu-time samples written" "$tool" "$(kv "$dir/counts" samples_offcpu_time)" ;;
	esac
	val "$sec" "samples lost" "$tool" "$(kv "$dir/counts" lost)"
	if [ -s "$dir/post/ru" ]; then
		val "$sec" "post-processing wall time (s)" "$tool" "$(calc "$(kv "$dir/post/ru" wall_ns) / 1e9")"
		val "$sec" "post-processing CPU time (s)" "$tool" "$(calc "$(kv "$dir/post/ru" cpu_ns) / 1e9")"
		val "$sec" "post-processing peak RSS (MB)" "$tool" "$(calc "$(kv "$dir/post/ru" maxrss_kb) / 1024")"
	fi
	return 0
}

# bench_sched DEADLINE: scenario 9.
bench_sched() {
	local sec=9 rep d tool base=() base_cpu=() base_med base_cpu_med
	local tools="sched offcpu perf"
	local -A have=([sched]=$HAVE_SCHED [offcpu]=$HAVE_OFFCPU [perf]=1)
	local -A why=([sched]="bpfrec record --sched: not available" [offcpu]="bpfrec record --off-cpu: not available")
	section "$sec" "Scheduler metrics, context-switch-bound workload" "sched=bpfrec --sched -g" \
		"offcpu=bpfrec --off-cpu -g" "perf=perf sched record" "base=unprofiled"
	if [ "$HAVE_SCHED" = 0 ]; then
		say "scenario $sec: this bpfrec has no 'record --sched' (bpfrec record --help does not list it): its column stays empty"
		note "$sec" "bpfrec record --sched: not in this build (record --help does not list it)."
	elif [ "$HAVE_SCHED_CMD" = 0 ]; then
		say "scenario $sec: this bpfrec has no 'bpfrec sched' command: no post-processing time for --sched"
		note "$sec" "bpfrec sched: not in this build (bpfrec sched --help fails): no post-processing figures for --sched."
	fi
	say "scenario $sec: scheduler metrics: $REPS repetitions of bench_pingpong -n $PONG_ROUNDS -w $PONG_WORK"
	budget_start "$1"
	for rep in $(seq "$REPS"); do
		rep_begin "$rep" || break
		d=$W/s$sec/base/$rep
		measure "$d" "$FIX/bench_pingpong" -n "$PONG_ROUNDS" -w "$PONG_WORK" -r "$d/wl" ||
			die "bench_pingpong failed: $(cat "$d/err")"
		base+=("$(calc "$(kv "$d/wl" elapsed_ns) / 1e9")")
		base_cpu+=("$(calc "$(kv "$d/wl" cpu_ns) / 1e9")")
		for tool in $(rotate "$rep" $tools); do
			[ "${have[$tool]}" = 1 ] || continue
			say "  rep $rep/$REPS: $tool"
			sched_recording "$W/s$sec/$tool/$rep" "$tool"
		done
	done
	base_med=$(median "${base[@]}") base_cpu_med=$(median "${base_cpu[@]}")
	for rep in $(seq "$REPS_DONE"); do
		d=$W/s$sec/base/$rep
		val "$sec" "workload time (s)" base "$(calc "$(kv "$d/wl" elapsed_ns) / 1e9")"
		val "$sec" "workload context switches per second" base \
			"$(calc "($(kv "$d/wl" vcsw) + $(kv "$d/wl" ivcsw)) / ($(kv "$d/wl" elapsed_ns) / 1e9)")"
	done
	tool_rows "$sec" sched_rows "workload time (s)" "$base_med" "$base_cpu_med" $tools
	budget_note "$sec" "$REPS"
	note "$sec" "Workload: \`bench_pingpong -n $PONG_ROUNDS -w $PONG_WORK\` (scenario 3's: two threads, one byte over two pipes); unprofiled: $(fmt_spread "${base[@]}") wall, $(fmt_spread "${base_cpu[@]}") CPU."
	note "$sec" "Commands: \`bpfrec record --sched -g -o FILE -- W\` (default --sched-thresh), \`bpfrec record --off-cpu -g -o FILE -- W\`, \`perf sched record -o FILE -- W\`; post-processing: \`bpfrec sched -i FILE\` and \`perf sched timehist -s -i FILE\`, output to /dev/null."
	note "$sec" "perf sched record records every CPU (its -a) with one sample per sched_switch, sched_wakeup, migration... of every task; bpfrec records the workload's tasks: its switch and wakeup programs run on every event of every CPU and return early for other tasks, which the per-run costs include. bpfrec's files also hold the CPU samples of -g (cpu-clock at the default rate)."
}
