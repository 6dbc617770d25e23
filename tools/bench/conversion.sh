# tools/bench/conversion.sh - scenario 4 of tools/bench.sh (bash, sourced
# after lib.sh): reading a recording back.
#
# Inputs (CONV_INPUTS, "label:kind:size ..."):
#   rec:SECONDS    made by `perf record -e cpu-clock -c CONV_PERIOD -g -a`
#                  over the CPU workload: the reference recorder's own file,
#                  shaped like real use; its sample count depends on how
#                  fast this machine is (the table gives it).
#   synth:SAMPLES  written by `perfdata-synth --generate SAMPLES:CONV_STACKS`
#                  (tests/tools/perfdata-synth.c) with our perfdata writer:
#                  exactly SAMPLES cpu-clock samples over exactly CONV_STACKS
#                  distinct call chains, on any machine. The frames are the
#                  10,000 functions of tests/fixtures/synth_wide.c, mapped
#                  as a process maps them, so perf and bpfrec resolve every
#                  frame to a real symbol; the call paths are generated (a
#                  tree, weights 1/rank), not run. Two of them with the same
#                  stacks and 10x the samples show whether memory follows
#                  distinct stacks or samples.
# Each repetition runs `bpfrec pprof`, `bpfrec flamegraph` (the HTML page
# and --format svg), `perf report --stdio` and `perf script` (output to
# /dev/null) on the same file, in rotating order. After
# each flamegraph run, tests/tools/fg_browser.py --timings opens the page in
# headless chromium and times its first draw, a search and a click-zoom; on
# the 1M input also the page with nothing folded (--min-width 0), the worst
# case the page can be given.
# Brendan Gregg's FlameGraph scripts, the usual flame graph pipeline after
# perf script, are not packaged in Debian: perf report --stdio is the
# reference that reads the same file.
#
# Needs from the driver: REPS_CONV, CONV_INPUTS, CONV_STACKS, CONV_PERIOD,
# HAVE_PPROF, NCPU, TOP.

# make_conv_input LABEL KIND SIZE: $W/conv/LABEL/in.data; prints its sample count.
make_conv_input() {
	local label=$1 kind=$2 size=$3 d=$W/conv/$1
	mkdir -p "$d"
	if [ "$kind" = synth ]; then
		say "scenario 4: writing the $label input (perfdata-synth --generate $size:$CONV_STACKS)"
		if ! measure "$d/rec" "$BUILD/tests/tools/perfdata-synth" -o "$d/in.data" \
			--elf "$FIX/synth_wide" --generate "$size:$CONV_STACKS:synth_wide_"; then
			show_failure "$d/rec" "perfdata-synth (conversion input)"
			return 1
		fi
	else
		say "scenario 4: recording the $label input (perf record -c $CONV_PERIOD -a -g, ${size}s)"
		if ! measure "$d/rec" perf record -e cpu-clock -c "$CONV_PERIOD" -a -g -o "$d/in.data" -- \
			"$FIX/bench_spin" -s "$size" -r "$d/rec/wl"; then
			show_failure "$d/rec" "perf record (conversion input)"
			return 1
		fi
	fi
	file_counts "$d/in.data" "$d"
	kv "$d/counts" samples
}

# conv_page_timings SEC LABEL PAGE DIR [ROW_PREFIX]: the page's responsiveness in
# headless chromium (fg_browser.py --timings) as rows of the flame column.
conv_page_timings() {
	local sec=$1 label=$2 page=$3 d=$4 what=${5:-page} k
	if ! "$TOP/tests/tools/fg_browser.py" "$page" "$d" --timings >"$d/browser.json" 2>"$d/browser.err"; then
		echo "bench: fg_browser.py --timings on the $label page failed:" >&2
		tail -n 3 "$d/browser.err" | sed 's/^/    /' >&2
		FAILED=1
		return 0
	fi
	for k in first_draw:"load to first draw" search:"search, until painted" zoom:"click-zoom, until painted"; do
		val "$sec" "$label: $what ${k#*:} (ms)" flame \
			"$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["timings"].get(sys.argv[2] + "_ms", ""))' \
				"$d/browser.json" "${k%%:*}")"
	done
}

# conv_unfolded_page SEC LABEL IN DIR: `flamegraph --min-width 0` (nothing
# folded) and that page's timings: size, frames and page rows "unfolded page".
conv_unfolded_page() {
	local sec=$1 label=$2 in=$3 d=$4
	mkdir -p "$d"
	if ! "$BPFREC" flamegraph --min-width 0 -i "$in" -o "$d/out.html" 2>"$d/err"; then
		echo "bench: bpfrec flamegraph --min-width 0 failed: $(tail -n 1 "$d/err")" >&2
		FAILED=1
		return 0
	fi
	val "$sec" "$label: unfolded page (--min-width 0): size (MB)" flame \
		"$(calc "$(stat -c %s "$d/out.html") / 1048576")"
	val "$sec" "$label: unfolded page (--min-width 0): frames" flame \
		"$(sed -n 's/.*; \([0-9]*\) frames, .*/\1/p' "$d/err")"
	conv_page_timings "$sec" "$label" "$d/out.html" "$d" "unfolded page"
	rm -f "$d/out.html"
}

# conv_argv TOOL IN OUT: the reader's command line (into CONV[]).
conv_argv() {
	case $1 in
	pprof) CONV=("$BPFREC" pprof -i "$2" -o "$3") ;;
	flame) CONV=("$BPFREC" flamegraph -i "$2" -o "$3") ;;
	svg) CONV=("$BPFREC" flamegraph --format svg -i "$2" -o "$3") ;;
	report) CONV=(perf report --stdio -i "$2") ;;
	script) CONV=(perf script -i "$2") ;;
	esac
}

# bench_conversion DEADLINE: scenario 4.
bench_conversion() {
	local sec=4 spec label kind size samples rep tool d out have_flame=0 what
	"$BPFREC" flamegraph --help >/dev/null 2>&1 && have_flame=1
	section "$sec" "Conversion: reading a recording back" "pprof=bpfrec pprof" \
		"flame=bpfrec flamegraph" "svg=bpfrec flamegraph --format svg" \
		"report=perf report --stdio" "script=perf script"
	for spec in $CONV_INPUTS; do
		label=${spec%%:*} kind=${spec#*:} size=${kind#*:} kind=${kind%%:*}
		samples=$(make_conv_input "$label" "$kind" "$size") || { FAILED=1; continue; }
		local in=$W/conv/$label/in.data mb
		mb=$(awk -v b="$(stat -c %s "$in")" 'BEGIN { printf "%.1f", b / 1048576 }')
		if [ "$kind" = synth ]; then
			what="\`perfdata-synth --generate $size:$CONV_STACKS\`: $CONV_STACKS distinct stacks, 7-15 frames deep, over the functions of synth_wide"
		else
			what="\`perf record -e cpu-clock -c $CONV_PERIOD -a -g -- bench_spin -s $size\`"
		fi
		note "$sec" "Input \"$label\": $samples samples, $mb MB ($what)."
		budget_start "$1"
		for rep in $(seq "$REPS_CONV"); do
			rep_begin "$rep" || break
			# Rotate who goes first: the page cache and the load move with time.
			for tool in $(rotate "$rep" pprof flame svg report script); do
				[ "$tool" = pprof ] && [ "$HAVE_PPROF" = 0 ] && continue
				[ "$tool" = flame ] || [ "$tool" = svg ] && [ "$have_flame" = 0 ] && continue
				d=$W/conv/$label/$tool/$rep
				mkdir -p "$d"
				case $tool in
				flame) out=$d/out.html ;;
				svg) out=$d/out.svg ;;
				*) out=$d/out.pb.gz ;;
				esac
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
				case $tool in
				pprof) gzip -t "$out" 2>/dev/null ||
					{ echo "bench: bpfrec pprof wrote no valid gzip" >&2; FAILED=1; } ;;
				flame|svg) tail -c 16 "$out" | grep -q '</html>\|</svg>' ||
					{ echo "bench: bpfrec flamegraph wrote no whole $tool file" >&2; FAILED=1; }
					val "$sec" "$label: output size (MB)" "$tool" "$(calc "$(stat -c %s "$out") / 1048576")"
					# "...; N frames, M folded, B bytes" on its stderr
					val "$sec" "$label: frames in the graph" "$tool" \
						"$(sed -n 's/.*; \([0-9]*\) frames, .*/\1/p' "$d/err")"
					val "$sec" "$label: frames folded" "$tool" \
						"$(sed -n 's/.* frames, \([0-9]*\) folded.*/\1/p' "$d/err")" ;;
				esac
				if [ "$tool" = flame ]; then
					conv_page_timings "$sec" "$label" "$out" "$d"
					# The page's worst case: every one of the large input's frames, nothing folded.
					[ "$kind" = synth ] && [ "$size" -ge 1000000 ] && conv_unfolded_page "$sec" "$label" "$in" "$d/unfolded"
				fi
				rm -f "$out"
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
		[ "$HAVE_PPROF" = 0 ] && text "$sec" "$label: wall time (s)" pprof "bpfrec pprof: not available"
		[ "$have_flame" = 0 ] && text "$sec" "$label: wall time (s)" flame "bpfrec flamegraph: not available"
		budget_note "$sec" "$REPS_CONV"
		rm -f "$in"
	done
	note "$sec" "Commands: \`bpfrec pprof -i FILE -o OUT.pb.gz\`, \`bpfrec flamegraph -i FILE -o OUT.html\` (and \`--format svg -o OUT.svg\`), \`perf report --stdio -i FILE > /dev/null\`, \`perf script -i FILE > /dev/null\`. Samples per second = samples in the file / wall time. Frames in the graph: what the file draws (after merging identical paths and folding); frames folded: those narrower than 0.01 % of the whole, folded into one [folded] frame per parent. Page rows: \`tests/tools/fg_browser.py PAGE DIR --timings\` in headless chromium (1400x900), milliseconds of the page's clock from navigation to the first paint after load, and from typing a search or clicking the widest frame three levels down to the next paint; median of 3 tries within one run. Memory follows distinct stacks when peak RSS barely grows from synth-100k to synth-1M (same stacks, 10x the samples)."
}
