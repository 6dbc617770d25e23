# tools/bench/recording.sh - scenarios 1-3 of tools/bench.sh (bash, sourced
# after lib.sh): what recording costs.
#
# 1 and 2 record the fixed-work CPU workload (bench_spin: one thread per CPU,
# SPIN_ITERS iterations each) with `perf record` and `bpfrec record` at the
# same rates, alternating which tool goes first, and the workload alone once
# per repetition. The recorder launches the workload, so the recording lasts
# exactly as long as the work; the recorder's own CPU time is its rusage
# (which includes its waited-for child) minus the workload's self-reported
# CPU time. 3 records the context-switch workload (bench_pingpong) off-CPU.
#
# Needs from the driver: REPS, SPIN_ITERS, PONG_ROUNDS, PONG_WORK,
# HAVE_RECORD, HAVE_OFFCPU, NCPU.

# recorder_argv TOOL OPTS DATA: the recorder's command line (into REC[]).
recorder_argv() {
	local tool=$1 opts=$2 data=$3
	# shellcheck disable=SC2206
	case $tool in
	perf) REC=(perf record -e cpu-clock $opts -o "$data") ;;
	bpfrec) REC=("$BPFREC" record $opts -o "$data") ;;
	esac
}

# fmt_spread VALUES...: "median (min–max)" for a note.
fmt_spread() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.3g s (%.3g–%.3g)", m, v[1], v[NR] }'
}

# one_recording DIR TOOL OPTS WORKLOAD...: record WORKLOAD (which must take
# -r REPORT last) into DIR; counts the file and removes it.
one_recording() {
	local dir=$1 tool=$2 opts=$3
	shift 3
	mkdir -p "$dir"
	recorder_argv "$tool" "$opts" "$dir/data"
	if ! measure "$dir" "${REC[@]}" -- "$@" -r "$dir/wl"; then
		show_failure "$dir" "$tool record $opts"
		FAILED=1
		return 1
	fi
	file_counts "$dir/data" "$dir"
	rm -f "$dir/data" "$dir/data.old"
}

# Rows of one recording run (DIR) for TOOL against the unprofiled medians
# of wall time and CPU time (seconds).
emit_recording_rows() {
	local sec=$1 dir=$2 tool=$3 label=$4 base_med=$5 base_cpu_med=$6 what=$7
	local cpu_ns wl_cpu samples lost bytes cost
	[ -s "$dir/wl" ] && [ -s "$dir/ru" ] && [ -s "$dir/counts" ] || return 0
	cpu_ns=$(kv "$dir/ru" cpu_ns) wl_cpu=$(kv "$dir/wl" cpu_ns)
	samples=$(kv "$dir/counts" samples) lost=$(kv "$dir/counts" lost)
	bytes=$(kv "$dir/counts" bytes)
	val "$sec" "$label recorder CPU (ms)" "$tool" "$(calc "($cpu_ns - $wl_cpu) / 1e6")"
	[ "$samples" -gt 0 ] &&
		val "$sec" "$label recorder CPU per sample (µs)" "$tool" \
			"$(calc "($cpu_ns - $wl_cpu) / $samples / 1e3")"
	if [ "$tool" = bpfrec ]; then
		cost=$(bpf_cost "$dir" "$what")
		if [ -n "$cost" ]; then
			val "$sec" "$label BPF program per $what (ns)" "$tool" "${cost%% *}"
		else
			text "$sec" "$label BPF program per $what (ns)" "$tool" "not measured"
		fi
	else
		text "$sec" "$label BPF program per $what (ns)" "$tool" "in kernel, not visible"
	fi
	val "$sec" "$label workload time (s)" "$tool" "$(calc "$(kv "$dir/wl" elapsed_ns) / 1e9")"
	val "$sec" "$label workload slowdown (%)" "$tool" \
		"$(calc "($(kv "$dir/wl" elapsed_ns) / 1e9 / $base_med - 1) * 100")"
	val "$sec" "$label workload CPU time (s)" "$tool" "$(calc "$wl_cpu / 1e9")"
	val "$sec" "$label workload CPU inflation (%)" "$tool" \
		"$(calc "($wl_cpu / 1e9 / $base_cpu_med - 1) * 100")"
	val "$sec" "$label recorder wall beyond the workload (s)" "$tool" \
		"$(calc "($(kv "$dir/ru" wall_ns) - $(kv "$dir/wl" elapsed_ns)) / 1e9")"
	val "$sec" "$label recorder peak RSS (MB)" "$tool" "$(calc "$(kv "$dir/ru" maxrss_kb) / 1024")"
	val "$sec" "$label samples written" "$tool" "$samples"
	val "$sec" "$label samples lost" "$tool" "$lost"
	[ "$samples" -gt 0 ] && val "$sec" "$label bytes per sample" "$tool" "$(calc "$bytes / $samples")"
	return 0
}

# cg_label CALLGRAPH: how a variant shows in row labels ("" for -g; commas
# stand for spaces, so "-g,-z" is -g with compression and shows as " -z").
cg_label() {
	case $1 in
	-g) ;;
	-g,*) echo " ${1#-g,}" | tr ',' ' ' ;;
	--call-graph=dwarf*) echo " ${1#--call-graph=}" | tr ',' ' ' ;;
	*) echo " $1" | tr ',' ' ' ;;
	esac
}

# bench_cpu_recording SEC TITLE MODE RATES DEADLINE [CALLGRAPHS]: scenarios 1
# (MODE "-a") and 2 (MODE ""); CALLGRAPHS are the variants to compare, each
# one word with commas for spaces (default "-g"; scenario 1 adds "-g,-z"
# for compression, scenario 2 --call-graph=dwarf).
bench_cpu_recording() {
	local sec=$1 title=$2 mode=$3 rates=$4 cgs=${6:--g}
	local rep rate tool i order base=() base_cpu=() d cg key
	section "$sec" "$title" "bpfrec=bpfrec record" "perf=perf record"
	say "scenario $sec: $title: ${REPS} repetitions, rates $rates, $NCPU threads x $SPIN_ITERS iterations"
	budget_start "$5"
	for rep in $(seq "$REPS"); do
		rep_begin "$rep" || break
		d=$W/s$sec/base/$rep
		mkdir -p "$d"
		measure "$d" "$FIX/bench_spin" -n "$SPIN_ITERS" -r "$d/wl" || die "bench_spin failed: $(cat "$d/err")"
		base+=("$(calc "$(kv "$d/wl" elapsed_ns) / 1e9")")
		base_cpu+=("$(calc "$(kv "$d/wl" cpu_ns) / 1e9")")
		i=0
		for rate in $rates; do
			for cg in $cgs; do
				i=$((i + 1))
				key=$rate${cg//[^a-z0-9]/_}
				# A B, then B A: drift in the machine's load hits both tools alike.
				if [ $(((rep + i) % 2)) = 0 ]; then order="perf bpfrec"; else order="bpfrec perf"; fi
				for tool in $order; do
					[ "$tool" = bpfrec ] && [ "$HAVE_RECORD" = 0 ] && continue
					say "  rep $rep/$REPS: $tool record ${mode:+$mode }${cg//,/ } -F $rate"
					one_recording "$W/s$sec/$key/$tool/$rep" "$tool" "$mode ${cg//,/ } -F $rate" \
						"$FIX/bench_spin" -n "$SPIN_ITERS"
				done
			done
		done
	done
	local base_med base_cpu_med
	base_med=$(median "${base[@]}") base_cpu_med=$(median "${base_cpu[@]}")
	for rate in $rates; do
		for cg in $cgs; do
			key=$rate${cg//[^a-z0-9]/_}
			for tool in bpfrec perf; do
				if [ "$tool" = bpfrec ] && [ "$HAVE_RECORD" = 0 ]; then
					text "$sec" "$rate Hz$(cg_label "$cg"): recorder CPU (ms)" bpfrec \
						"bpfrec record: not available"
					continue
				fi
				for rep in $(seq "$REPS_DONE"); do
					emit_recording_rows "$sec" "$W/s$sec/$key/$tool/$rep" "$tool" \
						"$rate Hz$(cg_label "$cg"):" "$base_med" "$base_cpu_med" sample
				done
			done
		done
	done
	budget_note "$sec" "$REPS"
	note "$sec" "Workload: \`bench_spin -n $SPIN_ITERS\` ($NCPU threads, fixed work); unprofiled: $(fmt_spread "${base[@]}") wall, $(fmt_spread "${base_cpu[@]}") CPU."
	note "$sec" "Commands: \`perf record -e cpu-clock ${mode:+$mode }CALLGRAPH -F RATE -o FILE -- bench_spin -n $SPIN_ITERS\` and \`bpfrec record ${mode:+$mode }CALLGRAPH -F RATE -o FILE -- bench_spin -n $SPIN_ITERS\`, CALLGRAPH one of: $cgs (rows marked dwarf: --call-graph=dwarf, 8 KiB of user stack per sample)."
	note "$sec" "perf's per-sample kernel cost (interrupt, stack walk, ring buffer) is not visible to user space: the workload's slowdown and CPU inflation are the fair comparison. The sampling interrupt runs on the workload's time (this kernel has no IRQ time accounting), so CPU inflation measures the in-kernel cost of both tools with less noise from other load; the wall-time slowdown adds the recorder's competition for the CPUs. Recorder CPU is user+sys of the recorder process (start-up, draining, writing, and perf's build-id pass at the end)."
}

# bench_offcpu SEC DEADLINE: scenario 3.
bench_offcpu() {
	local sec=$1 rep d base=() base_cpu=() runs=() order tool
	section "$sec" "Off-CPU recording, context-switch-bound workload" \
		"bpfrec=bpfrec record --off-cpu -g" "base=unprofiled"
	say "scenario $sec: off-CPU: $REPS repetitions of bench_pingpong -n $PONG_ROUNDS -w $PONG_WORK"
	budget_start "$2"
	for rep in $(seq "$REPS"); do
		rep_begin "$rep" || break
		if [ $((rep % 2)) = 0 ]; then order="bpfrec base"; else order="base bpfrec"; fi
		for tool in $order; do
			d=$W/s$sec/$tool/$rep
			mkdir -p "$d"
			if [ "$tool" = base ]; then
				measure "$d" "$FIX/bench_pingpong" -n "$PONG_ROUNDS" -w "$PONG_WORK" -r "$d/wl" ||
					die "bench_pingpong failed: $(cat "$d/err")"
				base+=("$(calc "$(kv "$d/wl" elapsed_ns) / 1e9")")
				base_cpu+=("$(calc "$(kv "$d/wl" cpu_ns) / 1e9")")
			elif [ "$HAVE_OFFCPU" = 1 ]; then
				say "  rep $rep/$REPS: bpfrec record --off-cpu -g"
				one_recording "$d" bpfrec "--off-cpu -g" \
					"$FIX/bench_pingpong" -n "$PONG_ROUNDS" -w "$PONG_WORK" && runs+=("$d")
			fi
		done
	done
	local base_med base_cpu_med
	base_med=$(median "${base[@]}") base_cpu_med=$(median "${base_cpu[@]}")
	for rep in $(seq "$REPS_DONE"); do
		d=$W/s$sec/base/$rep
		val "$sec" "workload time (s)" base "$(calc "$(kv "$d/wl" elapsed_ns) / 1e9")"
		val "$sec" "workload CPU time (s)" base "$(calc "$(kv "$d/wl" cpu_ns) / 1e9")"
		val "$sec" "workload context switches per second" base \
			"$(calc "($(kv "$d/wl" vcsw) + $(kv "$d/wl" ivcsw)) / ($(kv "$d/wl" elapsed_ns) / 1e9)")"
	done
	if [ "$HAVE_OFFCPU" = 0 ]; then
		text "$sec" "workload time (s)" bpfrec "not available"
		note "$sec" "\`bpfrec record --help\` does not mention --off-cpu: this build cannot record off-CPU time yet."
	fi
	for d in "${runs[@]}"; do
		local cost
		{ [ -s "$d/wl" ] && [ -s "$d/counts" ]; } || continue
		val "$sec" "workload time (s)" bpfrec "$(calc "$(kv "$d/wl" elapsed_ns) / 1e9")"
		val "$sec" "workload context switches per second" bpfrec \
			"$(calc "($(kv "$d/wl" vcsw) + $(kv "$d/wl" ivcsw)) / ($(kv "$d/wl" elapsed_ns) / 1e9)")"
		val "$sec" "workload slowdown (%)" bpfrec \
			"$(calc "($(kv "$d/wl" elapsed_ns) / 1e9 / $base_med - 1) * 100")"
		val "$sec" "workload CPU time (s)" bpfrec "$(calc "$(kv "$d/wl" cpu_ns) / 1e9")"
		val "$sec" "workload CPU inflation (%)" bpfrec \
			"$(calc "($(kv "$d/wl" cpu_ns) / 1e9 / $base_cpu_med - 1) * 100")"
		val "$sec" "recorder CPU (ms)" bpfrec \
			"$(calc "($(kv "$d/ru" cpu_ns) - $(kv "$d/wl" cpu_ns)) / 1e6")"
		cost=$(bpf_cost "$d" switch)
		val "$sec" "BPF program per context switch (ns)" bpfrec "${cost%% *}"
		cost=$(bpf_cost "$d" sample)
		val "$sec" "BPF program per CPU sample (ns)" bpfrec "${cost%% *}"
		val "$sec" "recorder peak RSS (MB)" bpfrec "$(calc "$(kv "$d/ru" maxrss_kb) / 1024")"
		val "$sec" "off-CPU samples written" bpfrec "$(kv "$d/counts" samples_offcpu_time)"
		val "$sec" "CPU samples written" bpfrec "$(kv "$d/counts" samples_cpu_clock)"
		val "$sec" "samples lost" bpfrec "$(kv "$d/counts" lost)"
		[ "$(kv "$d/counts" samples)" -gt 0 ] && val "$sec" "bytes per sample" bpfrec \
			"$(calc "$(kv "$d/counts" bytes) / $(kv "$d/counts" samples)")"
	done
	budget_note "$sec" "$REPS"
	note "$sec" "Workload: \`bench_pingpong -n $PONG_ROUNDS -w $PONG_WORK\` (two threads, one byte over two pipes, fixed work). Command: \`bpfrec record --off-cpu -g -o FILE -- bench_pingpong ...\`."
	note "$sec" "Reference: the workload unprofiled. perf 6.1 as Debian builds it has no --off-cpu (\"no BUILD_BPF_SKEL=1\"), so there is no perf figure to compare with."
}
