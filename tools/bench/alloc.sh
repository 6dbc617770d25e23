# tools/bench/alloc.sh - scenario 8 of tools/bench.sh (bash, sourced after
# lib.sh): what allocation profiling costs a malloc-heavy program.
#
# The workload is bench_alloc (tests/fixtures/bench_alloc.c): ALLOC_M
# million malloc/calloc/realloc + free of mixed sizes, timing itself. Each
# repetition runs it alone, then, in rotating order, under:
#   bpfrec    bpfrec record --alloc -o FILE -- workload (default interval)
#   bpfrec_1  bpfrec record --alloc=1 (every allocation)
#   heaptrack heaptrack -o FILE workload (LD_PRELOAD, every call)
#   memleak   memleak-bpfcc -p PID (uprobes on every call, every allocation)
#   memleak_s memleak-bpfcc -p PID -s MEMLEAK_RATE (records one call in N,
#             but every call still runs the probes)
# The slowdown is the workload's own elapsed time against the unprofiled
# median. The recorder's CPU is the tool's processes other than the
# workload: for the tools that launch it, their rusage (with every waited-for
# descendant) minus the workload's self-measured CPU; memleak attaches to a
# pid, so the workload waits (-w) until its probes are in, and its CPU is
# read from /proc/PID/stat over the workload's run (its BCC compile before
# is left out). Uprobe handlers run in the workload's context: their cost
# is in its slowdown, not in the recorder's CPU.
#
# memleak-bpfcc compiles its BPF program with the kernel's headers. Where
# /lib/modules/$(uname -r)/build is missing (kernels without a headers
# package), Debian's linux-headers-amd64 is merged into a scratch dir for
# BCC_KERNEL_SOURCE: uprobe programs only need pt_regs and the BPF helper
# ids, which do not change between kernel versions.
#
# Needs from the driver: REPS, ALLOC_M, MEMLEAK_RATE, HAVE_ALLOC.

# bcc_kernel_source: 0 when memleak-bpfcc can compile (exports
# BCC_KERNEL_SOURCE when it had to make the headers dir).
bcc_kernel_source() {
	local common arch
	[ -d "/lib/modules/$(uname -r)/build" ] && return 0
	[ -n "${BCC_KERNEL_SOURCE:-}" ] && return 0
	common=$(ls -d /usr/src/linux-headers-*-common 2>/dev/null | sort -V | tail -n 1)
	arch=${common%-common}-amd64
	[ -n "$common" ] && [ -d "$arch" ] || return 1
	mkdir -p "$W/kheaders"
	cp -rs "$common/." "$W/kheaders/" && cp -rsf "$arch/." "$W/kheaders/" || return 1
	export BCC_KERNEL_SOURCE=$W/kheaders
}

# alloc_launch DIR TOOL: run the workload under TOOL (bpfrec, bpfrec_1,
# heaptrack), which launches it.
alloc_launch() {
	local dir=$1 tool=$2 rec
	case $tool in
	bpfrec) rec=("$BPFREC" record --alloc -o "$dir/data" --) ;;
	bpfrec_1) rec=("$BPFREC" record --alloc=1 -o "$dir/data" --) ;;
	heaptrack) rec=(heaptrack -o "$dir/data") ;;
	esac
	if ! measure "$dir" "${rec[@]}" "$FIX/bench_alloc" -n "$ALLOC_M" -r "$dir/wl"; then
		show_failure "$dir" "${rec[*]}"
		FAILED=1
		return 1
	fi
	echo "bytes=$(cat "$dir"/data* 2>/dev/null | wc -c)" >"$dir/out.size"
	case $tool in
	bpfrec*) file_counts "$dir/data" "$dir" ;;
	esac
	echo "cpu_ns=$(($(kv "$dir/ru" cpu_ns) - $(kv "$dir/wl" cpu_ns)))" >"$dir/rec"
	echo "maxrss_kb=$(kv "$dir/ru" maxrss_kb)" >>"$dir/rec"
	rm -f "$dir"/data*
}

# ticks PID: utime + stime of PID in clock ticks (/proc/PID/stat fields 14, 15).
ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }

# alloc_memleak DIR RATE: the workload, then memleak-bpfcc -p on it.
alloc_memleak() {
	local dir=$1 rate=$2 wl ml pid n=0 prev=-1 t0 t1 hwm i
	mkdir -p "$dir"
	rm -f "$dir/go" "$dir/pid"
	measure "$dir" "$FIX/bench_alloc" -n "$ALLOC_M" -w "$dir/go" -r "$dir/wl" &
	wl=$!
	for i in $(seq 200); do [ -s "$dir/pid" ] && break; sleep 0.05; done
	pid=$(cat "$dir/pid" 2>/dev/null)
	# An interval longer than the run: the report comes at the end, not in it.
	memleak-bpfcc -p "$pid" -s "$rate" 3600 >"$dir/ml.out" 2>"$dir/ml.err" &
	ml=$!
	# Attached when its uprobes (about 20 on glibc) stop coming.
	for i in $(seq 600); do
		kill -0 "$ml" 2>/dev/null || break
		n=$(bpftool perf list 2>/dev/null | grep -c "^pid $ml ")
		[ "$n" -ge 10 ] && [ "$n" = "$prev" ] && break
		prev=$n
		sleep 0.2
	done
	if ! kill -0 "$ml" 2>/dev/null || [ "$n" -lt 10 ]; then
		echo "bench: memleak-bpfcc -p $pid -s $rate did not attach; its stderr ends with:" >&2
		tail -n 5 "$dir/ml.err" | sed 's/^/    /' >&2
		kill "$ml" 2>/dev/null
		touch "$dir/go"
		wait "$wl"
		FAILED=1
		return 1
	fi
	t0=$(ticks "$ml")
	touch "$dir/go"
	wait "$wl"
	t1=$(ticks "$ml")
	hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$ml/status")
	kill -TERM "$ml"
	wait "$ml" 2>/dev/null
	echo "cpu_ns=$(((t1 - t0) * 1000000000 / $(getconf CLK_TCK)))" >"$dir/rec"
	echo "maxrss_kb=$hwm" >>"$dir/rec"
}

# alloc_rows SEC DIR TOOL BASE_S BASE_CPU_S: the rows of one run.
alloc_rows() {
	local sec=$1 dir=$2 tool=$3 base=$4 base_cpu=$5 el cpu samples cost
	[ -s "$dir/wl" ] && [ -s "$dir/rec" ] || return 0
	el=$(kv "$dir/wl" elapsed_ns) cpu=$(kv "$dir/wl" cpu_ns)
	val "$sec" "workload time (s)" "$tool" "$(calc "$el / 1e9")"
	val "$sec" "workload slowdown (%)" "$tool" "$(calc "($el / 1e9 / $base - 1) * 100")"
	val "$sec" "workload CPU inflation (%)" "$tool" "$(calc "($cpu / 1e9 / $base_cpu - 1) * 100")"
	val "$sec" "recorder CPU (ms)" "$tool" "$(calc "$(kv "$dir/rec" cpu_ns) / 1e6")"
	val "$sec" "recorder peak RSS (MB)" "$tool" "$(calc "$(kv "$dir/rec" maxrss_kb) / 1024")"
	case $tool in
	memleak*) text "$sec" "output (MB)" "$tool" "none (a top-10 text report per interval)" ;;
	*) val "$sec" "output (MB)" "$tool" "$(calc "$(kv "$dir/out.size" bytes) / 1048576")" ;;
	esac
	case $tool in
	bpfrec*)
		samples=$(kv "$dir/counts" samples_alloc)
		val "$sec" "allocation samples written" "$tool" "${samples:-0}"
		val "$sec" "samples lost" "$tool" "$(kv "$dir/counts" lost)"
		cost=$(bpf_cost "$dir" uprobe)
		[ -n "$cost" ] && val "$sec" "BPF programs per probe hit (ns)" "$tool" "${cost%% *}"
		;;
	esac
	return 0
}

# bench_alloc_profilers DEADLINE: scenario 8.
bench_alloc_profilers() {
	local sec=8 rep d tool base=() base_cpu=() base_med base_cpu_med
	local tools="bpfrec bpfrec_1 heaptrack memleak memleak_s"
	local -A have=([bpfrec]=$HAVE_ALLOC [bpfrec_1]=$HAVE_ALLOC [heaptrack]=1 [memleak]=1 [memleak_s]=1)
	local -A why=([bpfrec]="bpfrec record --alloc: not available" [bpfrec_1]="bpfrec record --alloc: not available")
	section "$sec" "Allocation profiling, malloc-heavy workload" "bpfrec=bpfrec --alloc" \
		"bpfrec_1=bpfrec --alloc=1" "heaptrack=heaptrack" "memleak=memleak-bpfcc" \
		"memleak_s=memleak-bpfcc -s $MEMLEAK_RATE"
	if [ "$HAVE_ALLOC" = 0 ]; then
		say "scenario $sec: this bpfrec has no 'record --alloc' (bpfrec record --help does not list it): its columns stay empty"
		note "$sec" "bpfrec record --alloc: not in this build (record --help does not list it)."
	fi
	if ! command -v heaptrack >/dev/null; then
		say "scenario $sec: heaptrack not found; install it with 'sh tools/deps.sh bench'"
		have[heaptrack]=0 why[heaptrack]="not installed" FAILED=1
	fi
	if ! command -v memleak-bpfcc >/dev/null || ! command -v bpftool >/dev/null; then
		say "scenario $sec: memleak-bpfcc or bpftool not found; install them with 'sh tools/deps.sh bench'"
		have[memleak]=0 have[memleak_s]=0 why[memleak]="not installed" FAILED=1
	elif ! bcc_kernel_source; then
		say "scenario $sec: no kernel headers for memleak-bpfcc; install linux-headers-amd64 ('sh tools/deps.sh bench')"
		have[memleak]=0 have[memleak_s]=0 why[memleak]="no kernel headers" FAILED=1
	fi
	why[memleak_s]=${why[memleak]:-}
	say "scenario $sec: allocation profilers: $REPS repetitions of bench_alloc -n $ALLOC_M (million allocations)"
	budget_start "$1"
	for rep in $(seq "$REPS"); do
		rep_begin "$rep" || break
		d=$W/s$sec/base/$rep
		measure "$d" "$FIX/bench_alloc" -n "$ALLOC_M" -r "$d/wl" || die "bench_alloc failed: $(cat "$d/err")"
		base+=("$(calc "$(kv "$d/wl" elapsed_ns) / 1e9")")
		base_cpu+=("$(calc "$(kv "$d/wl" cpu_ns) / 1e9")")
		for tool in $(rotate "$rep" $tools); do
			[ "${have[$tool]}" = 1 ] || continue
			say "  rep $rep/$REPS: $tool"
			case $tool in
			memleak) alloc_memleak "$W/s$sec/$tool/$rep" 1 ;;
			memleak_s) alloc_memleak "$W/s$sec/$tool/$rep" "$MEMLEAK_RATE" ;;
			*) alloc_launch "$W/s$sec/$tool/$rep" "$tool" ;;
			esac
		done
	done
	base_med=$(median "${base[@]}") base_cpu_med=$(median "${base_cpu[@]}")
	tool_rows "$sec" alloc_rows "workload slowdown (%)" "$base_med" "$base_cpu_med" $tools
	budget_note "$sec" "$REPS"
	note "$sec" "Workload: \`bench_alloc -n $ALLOC_M\` ($ALLOC_M million allocations and frees, 16 B-64 KiB); unprofiled: $(fmt_spread "${base[@]}") wall, $(fmt_spread "${base_cpu[@]}") CPU."
	note "$sec" "Commands: \`bpfrec record --alloc[=1] -o FILE -- W\`, \`heaptrack -o FILE W\`, \`memleak-bpfcc -p PID [-s $MEMLEAK_RATE] 3600\` (attached before W starts; its CPU is counted over W's run only)."
	note "$sec" "Recorder CPU leaves out the workload's own CPU; uprobe handlers run in the workload and show in its slowdown. Output: the recording (heaptrack: its compressed file); memleak-bpfcc keeps its data in BPF maps and prints summaries."
}
