# tools/bench/startup.sh - scenario 5 of tools/bench.sh (bash, sourced after
# lib.sh): start-up and symbolization.
#
# Start-up: the wall and CPU time of recording `true` (per-process and
# system-wide), which is everything a recorder does before the first sample
# can be taken and after the last: for bpfrec loading and attaching the BPF
# programs, for perf opening the events and mmapping the buffers, for both
# writing the header and the features. Symbolization: build/tests/tools/
# bench_symbolize times our kallsyms parse and address lookups; addr2line
# on the same addresses of the same ELF is the reference for user lookups.
#
# Needs from the driver: REPS_STARTUP, HAVE_RECORD, LOOKUPS.

# bench_startup DEADLINE: scenario 5.
bench_startup() {
	local sec=5 rep tool mode d order
	section "$sec" "Start-up and symbolization" "bpfrec=bpfrec" "perf=perf record / addr2line"
	say "scenario 5: start-up and symbolization: $REPS_STARTUP repetitions"
	budget_start "$1"
	for rep in $(seq "$REPS_STARTUP"); do
		rep_begin "$rep" || break
		if [ $((rep % 2)) = 0 ]; then order="perf bpfrec"; else order="bpfrec perf"; fi
		for mode in "-g" "-a -g"; do
			for tool in $order; do
				[ "$tool" = bpfrec ] && [ "$HAVE_RECORD" = 0 ] && continue
				d=$W/s$sec/${mode// /}/$tool/$rep
				mkdir -p "$d"
				recorder_argv "$tool" "$mode" "$d/data"
				if ! measure "$d" "${REC[@]}" -- true; then
					show_failure "$d" "$tool record $mode -- true"
					FAILED=1
					continue
				fi
				rm -f "$d/data"
				val "$sec" "record $mode -- true: wall time (ms)" "$tool" \
					"$(calc "$(kv "$d/ru" wall_ns) / 1e6")"
				val "$sec" "record $mode -- true: CPU time (ms)" "$tool" \
					"$(calc "$(kv "$d/ru" cpu_ns) / 1e6")"
			done
		done
	done
	[ "$HAVE_RECORD" = 0 ] && text "$sec" "record -g -- true: wall time (ms)" bpfrec "bpfrec record: not available"

	# The ELF whose addresses are looked up: bpfrec itself, an -O2 -g build
	# with DWARF and inlined functions, as real targets are.
	local elf=$BUILD/bpfrec addrs=$W/s$sec/addrs.txt
	budget_note "$sec" "$REPS_STARTUP"
	for rep in $(seq "$REPS_DONE"); do
		d=$W/s$sec/sym/$rep
		if ! measure "$d" "$BUILD/tests/tools/bench_symbolize" --elf "$elf" --lookups "$LOOKUPS" \
			--addr-out "$addrs"; then
			show_failure "$d" "bench_symbolize"
			FAILED=1
			break
		fi
		val "$sec" "kallsyms parse (ms)" bpfrec "$(kv "$d/out" kallsyms_load_ms)"
		val "$sec" "kernel address lookups per second (k)" bpfrec \
			"$(calc "$(kv "$d/out" kernel_lookups_per_s) / 1000")"
		val "$sec" "user address lookups per second, first pass (k)" bpfrec \
			"$(calc "$(kv "$d/out" user_cold_lookups_per_s) / 1000")"
		val "$sec" "user address lookups per second, again (k)" bpfrec \
			"$(calc "$(kv "$d/out" user_warm_lookups_per_s) / 1000")"
		val "$sec" "user addresses with a function name (%)" bpfrec "$(kv "$d/out" user_found_pct)"
		d=$W/s$sec/addr2line/$rep
		mkdir -p "$d"
		if ! OUT=$d/names measure "$d" addr2line -a -f -i -e "$elf" <"$addrs"; then
			show_failure "$d" "addr2line"
			continue
		fi
		val "$sec" "user address lookups per second, first pass (k)" perf \
			"$(calc "$LOOKUPS / ($(kv "$d/ru" wall_ns) / 1e9) / 1000")"
		# Per address: its 0x line, then function and file:line per inline
		# level, innermost first; a miss is "??".
		val "$sec" "user addresses with a function name (%)" perf \
			"$(awk '/^0x/ { n++; first = 1; next } first { f += $0 != "??"; first = 0 }
				END { if (n) printf "%.1f", 100 * f / n }' "$d/names")"
	done
	note "$sec" "Start-up: \`bpfrec record [-a] -g -o FILE -- true\` against \`perf record -e cpu-clock [-a] -g -o FILE -- true\`, wall time from fork to exit."
	note "$sec" "Lookups: \`bench_symbolize --elf build/bpfrec --lookups $LOOKUPS\` (symbolize/ through its public API, $LOOKUPS addresses drawn with a fixed seed inside the ELF's functions, function + file + line + inline chain each) against \`addr2line -a -f -i -e build/bpfrec\` on the same addresses, whose time includes process start-up and reading the DWARF once. Kernel lookups have no reference."
}
