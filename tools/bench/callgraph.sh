# tools/bench/callgraph.sh - scenario 7 of tools/bench.sh (bash, sourced
# after lib.sh): what each way of recording call graphs costs and gives.
#
# Two fixed-work workloads: Debian's python3 running nested Python calls
# over C code (tests/fixtures/py_nested.py), built without frame pointers
# like most of a distribution, and bench_spin on one thread (built with
# frame pointers: every mode can walk it). Each is recorded at CG_RATE Hz
# by bpfrec record --call-graph fp, cfi (with the Python frames it adds to
# python3's stacks, and with --no-python) and dwarf, perf record -g and perf
# record --call-graph dwarf, in rotating order, next to an unprofiled run.
# For each recording: the share of samples whose user stack reaches the
# thread's root and their mean user depth (perf script --no-inline through
# tools/stacks.awk: the same reader for every file), bytes per sample, the
# BPF program's cost per sample (bpfrec), the recorder's CPU time, and how
# long perf script takes to read the file (DWARF files are unwound there).
#
# Needs from the driver: REPS, CG_SECS, CG_RATE, HAVE_RECORD, HAVE_CFI, TOP.

# cg_argv WAY DATA: the recorder's command line for WAY (into REC[]).
cg_argv() {
	case $1 in
	# -C 0 where the workload runs: every run of the BPF program is then a
	# sample (on other CPUs it would mostly return early for other tasks).
	fp | cfi | dwarf) REC=("$BPFREC" record -C 0 -F "$CG_RATE" --call-graph "$1" -o "$2") ;;
	# cfi without the Python frames it adds by default: what they cost.
	cfi_nopy) REC=("$BPFREC" record -C 0 -F "$CG_RATE" --call-graph cfi --no-python -o "$2") ;;
	perf_g) REC=(perf record -e cpu-clock -F "$CG_RATE" -g -o "$2") ;;
	perf_dwarf) REC=(perf record -e cpu-clock -F "$CG_RATE" --call-graph dwarf -o "$2") ;;
	esac
}

# cg_one DIR WAY COMM WORKLOAD...: record WORKLOAD (which takes -r REPORT
# last) into DIR, count the file and read its stacks (DIR/reach: root %,
# samples, mean depth), then remove it.
cg_one() {
	local dir=$1 way=$2 comm=$3
	shift 3
	mkdir -p "$dir"
	cg_argv "$way" "$dir/data"
	if ! measure "$dir" "${REC[@]}" -- "$@" -r "$dir/wl"; then
		show_failure "$dir" "${REC[*]}"
		FAILED=1
		return 1
	fi
	file_counts "$dir/data" "$dir"
	if ! OUT=$dir/script.txt measure "$dir/script" perf script --no-inline -F comm,ip,sym -i "$dir/data"; then
		show_failure "$dir/script" "perf script of ${REC[*]}"
		FAILED=1
	fi
	awk -v comm="$comm" -v what=reach -f "$TOP/tools/stacks.awk" "$dir/script.txt" >"$dir/reach"
	rm -f "$dir/data" "$dir/data.old" "$dir/script.txt"
}

# cg_rows SEC LABEL DIR WAY BASE_ELAPSED_S: the rows of one recording.
cg_rows() {
	local sec=$1 label=$2 dir=$3 way=$4 base=$5 root n depth samples cpu_ns wl_cpu cost
	[ -s "$dir/wl" ] && [ -s "$dir/counts" ] && [ -s "$dir/reach" ] || return 0
	read -r root n depth <"$dir/reach"
	samples=$(kv "$dir/counts" samples)
	cpu_ns=$(kv "$dir/ru" cpu_ns) wl_cpu=$(kv "$dir/wl" cpu_ns)
	val "$sec" "$label: root reached (% of samples)" "$way" "$root"
	val "$sec" "$label: mean user depth (frames)" "$way" "$depth"
	[ "$samples" -gt 0 ] && val "$sec" "$label: bytes per sample" "$way" \
		"$(calc "$(kv "$dir/counts" bytes) / $samples")"
	case $way in
	perf_*) text "$sec" "$label: BPF program per sample (ns)" "$way" "in kernel, not visible" ;;
	*) cost=$(bpf_cost "$dir" sample)
	   if [ -n "$cost" ]; then val "$sec" "$label: BPF program per sample (ns)" "$way" "${cost%% *}"
	   else text "$sec" "$label: BPF program per sample (ns)" "$way" "not measured"; fi ;;
	esac
	val "$sec" "$label: recorder CPU (ms)" "$way" "$(calc "($cpu_ns - $wl_cpu) / 1e6")"
	[ "$samples" -gt 0 ] && val "$sec" "$label: recorder CPU per sample (µs)" "$way" \
		"$(calc "($cpu_ns - $wl_cpu) / $samples / 1e3")"
	val "$sec" "$label: workload slowdown (%)" "$way" \
		"$(calc "($(kv "$dir/wl" elapsed_ns) / 1e9 / $base - 1) * 100")"
	[ -s "$dir/script/ru" ] && val "$sec" "$label: perf script reading the file (s)" "$way" \
		"$(calc "$(kv "$dir/script/ru" wall_ns) / 1e9")"
	val "$sec" "$label: samples written" "$way" "$samples"
	val "$sec" "$label: samples lost" "$way" "$(kv "$dir/counts" lost)"
}

# bench_callgraph DEADLINE: scenario 7.
bench_callgraph() {
	local sec=7 rep d way w order ways="cfi cfi_nopy fp dwarf perf_g perf_dwarf" py=/usr/bin/python3
	local -A base=() iters=() comm=() label=()
	section "$sec" "Call-graph modes, per process at $CG_RATE Hz" "cfi=bpfrec cfi" "cfi_nopy=bpfrec cfi --no-python" "fp=bpfrec fp" \
		"dwarf=bpfrec dwarf" "perf_g=perf -g" "perf_dwarf=perf dwarf"
	[ -x "$py" ] || { say "scenario $sec: $py missing ('sh tools/deps.sh test'): no python3 rows"; FAILED=1; }
	local pywork=$TOP/tests/fixtures/py_nested.py
	# Fixed work for CG_SECS unprofiled, sized once.
	command -v taskset >/dev/null || die "taskset not found (util-linux)"
	taskset -c 0 "$FIX/bench_spin" -t 1 -s 1 -r "$W/cg.calib" >/dev/null || die "bench_spin does not run"
	iters[spin]=$(awk -v n="$(kv "$W/cg.calib" iters)" -v s="$CG_SECS" 'BEGIN { printf "%.0f", n * s }')
	comm[spin]=bench_spin label[spin]="bench_spin, 1 thread"
	# A compile: short-lived processes, walked mostly before their tables.
	if command -v gcc >/dev/null; then
		mkdir -p "$W/cg.compile"
		iters[compile]=$(awk -v s="$CG_SECS" 'BEGIN { printf "%d", s < 1 ? 1 : s }')
		comm[compile]=cc1 label[compile]="compile (cc1)"
	else
		say "scenario $sec: gcc missing ('sh tools/deps.sh test'): no compile rows"; FAILED=1
	fi
	if [ -x "$py" ]; then
		taskset -c 0 "$py" "$pywork" bench -s 1 -r "$W/cg.calib" || die "$py $pywork does not run"
		iters[py]=$(awk -v n="$(kv "$W/cg.calib" iters)" -v s="$CG_SECS" 'BEGIN { printf "%.0f", n * s }')
		comm[py]=python3 label[py]="python3"
	fi
	say "scenario $sec: call-graph modes: $REPS repetitions at $CG_RATE Hz; python3 ${iters[py]:-} rounds, bench_spin ${iters[spin]} iterations"
	# workload W: its command line, -r REPORT to come; on CPU 0 (see cg_argv).
	wl_argv() {
		case $1 in
		spin) WL=(taskset -c 0 "$FIX/bench_spin" -t 1 -n "${iters[spin]}") ;;
		py) WL=(taskset -c 0 "$py" "$pywork" bench -n "${iters[py]}") ;;
		compile) WL=(taskset -c 0 env RUSAGE="$RUSAGE" sh "$TOP/tools/bench/compile.sh"
			"$TOP/tests/fixtures" "$W/cg.compile" "${iters[compile]}") ;;
		esac
	}
	budget_start "$1"
	for rep in $(seq "$REPS"); do
		rep_begin "$rep" || break
		# Rotate who goes first: drift in the machine's load hits every way alike.
		order=$(echo $ways | tr ' ' '\n' | awk -v r="$rep" '{ w[NR - 1] = $0 } END { for (i = 0; i < NR; i++) print w[(i + r) % NR] }')
		for w in spin py compile; do
			[ -n "${iters[$w]:-}" ] || continue
			wl_argv $w
			d=$W/s$sec/$w/base/$rep
			measure "$d" "${WL[@]}" -r "$d/wl" || die "${WL[*]} failed: $(cat "$d/err")"
			base[$w]="${base[$w]:-} $(calc "$(kv "$d/wl" elapsed_ns) / 1e9")"
			for way in $order; do
				case $way in
				fp | dwarf) [ "$HAVE_RECORD" = 1 ] || continue ;;
				cfi | cfi_nopy) [ "$HAVE_CFI" = 1 ] || continue ;;
				esac
				say "  rep $rep/$REPS: ${label[$w]}: $way"
				cg_one "$W/s$sec/$w/$way/$rep" "$way" "${comm[$w]}" "${WL[@]}"
			done
		done
	done
	for w in spin py compile; do
		[ -n "${iters[$w]:-}" ] || continue
		local base_med
		# shellcheck disable=SC2086
		base_med=$(median ${base[$w]})
		for way in $ways; do
			if { [ "${way%_nopy}" = cfi ] && [ "$HAVE_CFI" = 0 ]; } ||
				{ [ "${way#perf}" = "$way" ] && [ "$HAVE_RECORD" = 0 ]; }; then
				text "$sec" "${label[$w]}: root reached (% of samples)" "$way" "not available"
				continue
			fi
			for rep in $(seq "$REPS_DONE"); do
				cg_rows "$sec" "${label[$w]}" "$W/s$sec/$w/$way/$rep" "$way" "$base_med"
			done
		done
	done
	budget_note "$sec" "$REPS"
	[ "$HAVE_CFI" = 1 ] ||
		note "$sec" "\`bpfrec record --help\` does not offer --call-graph cfi: this build cannot unwind in BPF yet."
	note "$sec" "Workloads (fixed work, about $CG_SECS s unprofiled): \`python3 py_nested.py bench -n ${iters[py]:-?}\` (Debian's /usr/bin/python3, no frame pointers: nested Python calls over sorted() with a key and str.join; tests/fixtures/py_nested.py) and \`bench_spin -t 1 -n ${iters[spin]}\` (built with frame pointers, a 16-frame chain), and a compile: \`gcc -O2 -g -c\` of six fixture sources, ${iters[compile]:-?} times (tools/bench/compile.sh; its rows are cc1's samples: processes of tens to hundreds of ms, most of them walked before their tables exist, which -g makes up for by walking a copy of their stack again once the tables are built)."
	note "$sec" "Commands: \`bpfrec record -C 0 -F $CG_RATE --call-graph fp|cfi|dwarf\`, \`perf record -e cpu-clock -F $CG_RATE -g\` and \`perf record -e cpu-clock -F $CG_RATE --call-graph dwarf\` (8 KiB of user stack a sample), each \`-- taskset -c 0 WORKLOAD\` (bpfrec samples only CPU 0, where the workload runs, so its BPF program runs once a sample). Root reached and depth: \`perf script --no-inline -F comm,ip,sym\` read by tools/stacks.awk, the workload's own samples (a root is _start, _dl_start_user, __libc_start_call_main, start_thread or clone3, or the nameless _start of a stripped program); perf unwinds the dwarf files there, which is the \"perf script reading the file\" row."
	note "$sec" "The ratio columns divide cfi's median by each other way's. Issue 11's targets for cfi: bytes per sample within 1.2× of fp and BPF program per sample within 2× of fp (on bench_spin, where fp walks the same stacks), root reached as often as perf dwarf."
}
