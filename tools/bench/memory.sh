# tools/bench/memory.sh - scenario 10 of tools/bench.sh (bash, sourced after
# lib.sh): the recorder's own memory and the cost of -z, against perf record.
#
# System-wide recordings (-a -g and -a -g -z at MEM_RATE Hz) of MEM_SECS
# seconds while Debian's python3 (tests/fixtures/py_nested.py, no frame
# pointers: bpfrec builds its unwind tables) and a one-thread bench_spin
# run. The load runs beside the recorder, not under it: the recorder's
# command is `sleep MEM_SECS`, so the peak RSS that wait4 reports (the
# largest of the recorder and its waited-for children) is the recorder's
# own, never python3's. bpfrec and perf alternate who goes first; the load
# is started afresh for each recording, a moment before it, so every
# recording sees the same processes start and run. No BPF poller runs (the
# bench's bpftool would be one more process for bpfrec to build tables
# of, and none for perf).
#
# Rows: recorder peak RSS, recorder CPU (rusage: user+sys, sleep's share
# is nil), bytes per sample, samples written and lost.
#
# Needs from the driver: REPS, MEM_SECS, MEM_RATE, HAVE_RECORD, TOP.

# mem_load_start DIR SECS: python3 and bench_spin for SECS seconds in the
# background; their pids into MEM_LOAD[].
mem_load_start() {
	local dir=$1 secs=$2
	mkdir -p "$dir"
	MEM_LOAD=()
	/usr/bin/python3 "$TOP/tests/fixtures/py_nested.py" bench -s "$secs" -r "$dir/py.wl" \
		>/dev/null 2>"$dir/py.err" &
	MEM_LOAD+=($!)
	"$FIX/bench_spin" -t 1 -s "$secs" -r "$dir/spin.wl" >/dev/null 2>"$dir/spin.err" &
	MEM_LOAD+=($!)
}

mem_load_stop() {
	local pid
	for pid in "${MEM_LOAD[@]}"; do
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	MEM_LOAD=()
}

# mem_rows SEC DIR TOOL LABEL: the rows of one recording.
mem_rows() {
	local sec=$1 dir=$2 tool=$3 label=$4 samples
	[ -s "$dir/ru" ] && [ -s "$dir/counts" ] || return 0
	samples=$(kv "$dir/counts" samples)
	val "$sec" "$label: recorder peak RSS (MB)" "$tool" "$(calc "$(kv "$dir/ru" maxrss_kb) / 1024")"
	val "$sec" "$label: recorder CPU (ms)" "$tool" "$(calc "$(kv "$dir/ru" cpu_ns) / 1e6")"
	[ "$samples" -gt 0 ] && val "$sec" "$label: recorder CPU per sample (µs)" "$tool" \
		"$(calc "$(kv "$dir/ru" cpu_ns) / $samples / 1e3")"
	[ "$samples" -gt 0 ] && val "$sec" "$label: bytes per sample" "$tool" \
		"$(calc "$(kv "$dir/counts" bytes) / $samples")"
	val "$sec" "$label: samples written" "$tool" "$samples"
	val "$sec" "$label: samples lost" "$tool" "$(kv "$dir/counts" lost)"
}

# bench_memory DEADLINE: scenario 10.
bench_memory() {
	local sec=10 rep cg key tool order d i cgs="-g -g,-z" py=/usr/bin/python3
	section "$sec" "Recorder memory and -z cost, -a -g at $MEM_RATE Hz beside python3 and a spinner" \
		"bpfrec=bpfrec record" "perf=perf record"
	if [ ! -x "$py" ]; then
		say "scenario $sec: $py missing ('sh tools/deps.sh test'): no memory rows"
		FAILED=1
		return 0
	fi
	say "scenario $sec: recorder memory: $REPS repetitions of $MEM_SECS s, -a at $MEM_RATE Hz, variants $cgs"
	budget_start "$1"
	for rep in $(seq "$REPS"); do
		rep_begin "$rep" || break
		i=0
		for cg in $cgs; do
			i=$((i + 1))
			key=${cg//[^a-z0-9]/_}
			if [ $(((rep + i) % 2)) = 0 ]; then order="perf bpfrec"; else order="bpfrec perf"; fi
			for tool in $order; do
				[ "$tool" = bpfrec ] && [ "$HAVE_RECORD" = 0 ] && continue
				d=$W/s$sec/$key/$tool/$rep
				mkdir -p "$d"
				say "  rep $rep/$REPS: $tool record -a ${cg//,/ } -F $MEM_RATE -- sleep $MEM_SECS"
				recorder_argv "$tool" "-a ${cg//,/ } -F $MEM_RATE" "$d/data"
				# One second more of load than of recording: it runs throughout.
				mem_load_start "$d" $((MEM_SECS + 1))
				sleep 0.2
				# No BPF poller: bpftool, which it runs once a program,
				# maps libLLVM (100 MB), and bpfrec -a would build its
				# table while perf's runs see no such process.
				if NO_BPF_POLL=1 measure "$d" "${REC[@]}" -- sleep "$MEM_SECS"; then
					file_counts "$d/data" "$d"
				else
					show_failure "$d" "$tool record -a ${cg//,/ }"
					FAILED=1
				fi
				mem_load_stop
				rm -f "$d/data" "$d/data.old"
			done
		done
	done
	for cg in $cgs; do
		key=${cg//[^a-z0-9]/_}
		for tool in bpfrec perf; do
			if [ "$tool" = bpfrec ] && [ "$HAVE_RECORD" = 0 ]; then
				text "$sec" "-a ${cg//,/ }: recorder peak RSS (MB)" bpfrec "bpfrec record: not available"
				continue
			fi
			for rep in $(seq "$REPS_DONE"); do
				mem_rows "$sec" "$W/s$sec/$key/$tool/$rep" "$tool" "-a ${cg//,/ }"
			done
		done
	done
	budget_note "$sec" "$REPS"
	note "$sec" "Load, started afresh a moment before each recording and running through it: \`python3 py_nested.py bench -s $((MEM_SECS + 1))\` (Debian's python3, no frame pointers) and \`bench_spin -t 1 -s $((MEM_SECS + 1))\`."
	note "$sec" "Commands: \`bpfrec record -a -g [-z] -F $MEM_RATE -o FILE -- sleep $MEM_SECS\` and \`perf record -e cpu-clock -a -g [-z] -F $MEM_RATE -o FILE -- sleep $MEM_SECS\`. The load is not the recorder's child, so peak RSS (wait4's ru_maxrss) is the recorder's own; recorder CPU is its user+sys (perf's includes its build-id pass at the end)."
}

# memory_targets: issue 21's targets (scenario 10): peak RSS of -a -g and
# -a -g -z no more than perf record's, -z's recorder CPU no more than perf
# -z's with bytes per sample no more than perf -z's.
memory_targets() {
	local cg
	for cg in "-a -g" "-a -g -z"; do
		target "recorder peak RSS of record $cg beside python3 and a spinner no more than perf record's (MB)" \
			"$(cell_median 10 "$cg: recorder peak RSS (MB)" bpfrec)" \
			"$(cell_median 10 "$cg: recorder peak RSS (MB)" perf)" le
	done
	target "recorder CPU of record -a -g -z no more than perf record -z's (ms)" \
		"$(cell_median 10 "-a -g -z: recorder CPU (ms)" bpfrec)" \
		"$(cell_median 10 "-a -g -z: recorder CPU (ms)" perf)" le
	target "bytes per sample of record -a -g -z no more than perf record -z's" \
		"$(cell_median 10 "-a -g -z: bytes per sample" bpfrec)" \
		"$(cell_median 10 "-a -g -z: bytes per sample" perf)" le
}
