# tools/bench/conversion.sh - scenario 4 of tools/bench.sh (bash, sourced
# after lib.sh): reading a recording back.
#
# The inputs are made once by `perf record -e cpu-clock -c CONV_PERIOD -g -a`
# over the CPU workload (the reference recorder's own files, so neither
# reader gets a file shaped for it), sized by how long they record: the
# table gives the sample counts actually in them. Each repetition then runs
# `bpfrec pprof`, `bpfrec flamegraph` (the HTML page), `perf report --stdio`
# and `perf script` (output to /dev/null) on the same file, in rotating
# order. Brendan Gregg's FlameGraph scripts, the usual flame graph pipeline
# after perf script, are not packaged in Debian: perf report --stdio is the
# reference that reads the same file.
#
# Needs from the driver: REPS_CONV, CONV_SIZES ("label:seconds ..."),
# CONV_PERIOD, HAVE_PPROF, NCPU.

# make_conv_input LABEL SECONDS: $W/conv/LABEL.data; prints its sample count.
make_conv_input() {
	local label=$1 secs=$2 d=$W/conv/$1
	mkdir -p "$d"
	say "scenario 4: recording the $label input (perf record -c $CONV_PERIOD -a -g, ${secs}s)"
	if ! measure "$d/rec" perf record -e cpu-clock -c "$CONV_PERIOD" -a -g -o "$d/in.data" -- \
		"$FIX/bench_spin" -s "$secs" -r "$d/rec/wl"; then
		show_failure "$d/rec" "perf record (conversion input)"
		return 1
	fi
	file_counts "$d/in.data" "$d"
	kv "$d/counts" samples
}

# conv_argv TOOL IN OUT: the reader's command line (into CONV[]).
conv_argv() {
	case $1 in
	pprof) CONV=("$BPFREC" pprof -i "$2" -o "$3") ;;
	flame) CONV=("$BPFREC" flamegraph -i "$2" -o "$3") ;;
	report) CONV=(perf report --stdio -i "$2") ;;
	script) CONV=(perf script -i "$2") ;;
	esac
}

# bench_conversion DEADLINE: scenario 4.
bench_conversion() {
	local sec=4 size label secs samples rep tool order d out have_flame=0
	"$BPFREC" flamegraph --help >/dev/null 2>&1 && have_flame=1
	section "$sec" "Conversion: reading a recording back" "pprof=bpfrec pprof" \
		"flame=bpfrec flamegraph" "report=perf report --stdio" "script=perf script"
	for size in $CONV_SIZES; do
		label=${size%%:*} secs=${size#*:}
		samples=$(make_conv_input "$label" "$secs") || { FAILED=1; continue; }
		local in=$W/conv/$label/in.data
		note "$sec" "Input \"$label\": $samples samples, $(awk -v b="$(stat -c %s "$in")" 'BEGIN { printf "%.1f", b / 1048576 }') MB (\`perf record -e cpu-clock -c $CONV_PERIOD -a -g -- bench_spin -s $secs\`)."
		budget_start "$1"
		for rep in $(seq "$REPS_CONV"); do
			rep_begin "$rep" || break
			# Rotate who goes first: the page cache and the load move with time.
			case $((rep % 3)) in
			1) order="pprof flame report script" ;;
			2) order="report script flame pprof" ;;
			0) order="script pprof report flame" ;;
			esac
			for tool in $order; do
				[ "$tool" = pprof ] && [ "$HAVE_PPROF" = 0 ] && continue
				[ "$tool" = flame ] && [ "$have_flame" = 0 ] && continue
				d=$W/conv/$label/$tool/$rep
				mkdir -p "$d"
				out=$d/out.pb.gz
				[ "$tool" = flame ] && out=$d/out.html
				conv_argv "$tool" "$in" "$out"
				say "  $label rep $rep/$REPS_CONV: ${CONV[*]##*/}"
				if ! OUT=/dev/null measure "$d" "${CONV[@]}"; then
					show_failure "$d" "${CONV[*]}"
					FAILED=1
					continue
				fi
				if grep -qi 'warn' "$d/err"; then
					echo "bench: warnings from ${CONV[*]}:" >&2
					grep -i -A1 'warn' "$d/err" | head -n 4 | sed 's/^/    /' >&2
				fi
				[ "$tool" = pprof ] && { gzip -t "$d/out.pb.gz" 2>/dev/null ||
					{ echo "bench: bpfrec pprof wrote no valid gzip" >&2; FAILED=1; }; rm -f "$d/out.pb.gz"; }
				[ "$tool" = flame ] && { tail -c 16 "$d/out.html" | grep -q '</html>' ||
					{ echo "bench: bpfrec flamegraph wrote no whole page" >&2; FAILED=1; }
					val "$sec" "$label: output size (MB)" flame "$(calc "$(stat -c %s "$d/out.html") / 1048576")"
					rm -f "$d/out.html"; }
				val "$sec" "$label: wall time (s)" "$tool" "$(calc "$(kv "$d/ru" wall_ns) / 1e9")"
				val "$sec" "$label: CPU time (s)" "$tool" "$(calc "$(kv "$d/ru" cpu_ns) / 1e9")"
				val "$sec" "$label: samples per second (k)" "$tool" \
					"$(calc "$samples / ($(kv "$d/ru" wall_ns) / 1e9) / 1000")"
				val "$sec" "$label: peak RSS (MB)" "$tool" "$(calc "$(kv "$d/ru" maxrss_kb) / 1024")"
				# What the converter's memory grows with: pprof says how many
				# distinct locations it kept ("N locations" on stderr).
				[ "$tool" = pprof ] && val "$sec" "$label: distinct locations (pprof)" pprof \
					"$(sed -n 's/.* \([0-9][0-9]*\) locations.*/\1/p' "$d/err" | tail -n 1)"
			done
		done
		budget_note "$sec" "$REPS_CONV"
		[ "$HAVE_PPROF" = 0 ] && text "$sec" "$label: wall time (s)" pprof "bpfrec pprof: not available"
		[ "$have_flame" = 0 ] && text "$sec" "$label: wall time (s)" flame "bpfrec flamegraph: not available"
		rm -f "$in"
	done
	note "$sec" "Commands: \`bpfrec pprof -i FILE -o OUT.pb.gz\`, \`bpfrec flamegraph -i FILE -o OUT.html\`, \`perf report --stdio -i FILE > /dev/null\`, \`perf script -i FILE > /dev/null\`. Samples per second = samples in the file / wall time. Flat memory means peak RSS barely grows from the small input to the large one."
}
