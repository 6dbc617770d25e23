#!/bin/bash
# Whole stacks on the programs people run: Debian's own python3 (built
# without frame pointers) running nested Python calls, and libc's qsort
# calling back into a -O2 program without frame pointers. The share of
# samples whose user stack ends at the thread's root, for bpfrec
# --call-graph cfi (unwound in BPF), bpfrec --call-graph dwarf (unwound by
# perf) and perf record --call-graph dwarf, all of the same workload here
# and now: ours within 5 points of perf's, or better.
. "$(dirname "$0")/lib.sh"
need_root
need_tool perf linux-perf
cd "$T"

PY=$(debian_python3)

# record WAY OUT CMD...: one recording of CMD, WAY = cfi, dwarf or perf.
record() {
	local way=$1 out=$2
	shift 2
	case $way in
	cfi) "$BPFREC" record -v -F 999 --call-graph cfi -o "$out" -- "$@" 2>"$out.err" >/dev/null ;;
	dwarf) "$BPFREC" record -q -F 999 --call-graph dwarf -o "$out" -- "$@" 2>"$out.err" >/dev/null ;;
	perf) perf record -q -m 16M -F 999 --call-graph dwarf -o "$out" -- "$@" 2>"$out.err" >/dev/null ;;
	esac || { cat "$out.err" >&2; fail "$way recording of $* failed"; }
}
# script WAY DATA OUT: perf script's user chains; a warning on our files fails.
script() {
	if [ "$1" = perf ]; then
		perf script --no-inline -F comm,ip,sym -i "$2" >"$3" 2>/dev/null || fail "perf script -i $2 failed"
	else
		run_clean "$3" perf script --no-inline -F comm,ip,sym -i "$2"
	fi
}
# compare NAME COMM CMD...: the three recordings of CMD and their root shares.
compare() {
	local name=$1 comm=$2 way pct n depth ref
	shift 2
	for way in cfi dwarf perf; do
		record $way "$name-$way.data" "$@"
		script $way "$name-$way.data" "$name-$way.txt"
	done
	grep 'cfi unwinding' "$name-cfi.data.err" || true
	# Stacks walked before the process had its tables (the recorder builds
	# them at its first sample; python3's take 100 ms and more, longer on a
	# loaded machine) end early by design: their share of the walks is
	# allowed below perf's, and only that.
	warmup=$(cfi_summary "$name-cfi.data.err" | awk '{ printf "%.1f\n", $1 ? 100 * $NF / $1 : 0 }')
	echo "$name: $warmup% of the cfi walks came before the process had tables"
	# Those and later ones were walked again once the tables came; what
	# that could not complete (cfi_short: on an emulated CPU python3's
	# table takes longer than a sample may wait) is allowed instead, when
	# it is more.
	warmup=$(cfi_short_pct "$name-cfi.data.err")
	echo "$name: $warmup% of the cfi walks may stop short for want of tables"
	# What a cfi sample costs on this kernel: BPF time a run, file bytes a sample.
	awk -v name="$name" -v bytes="$(stat -c %s "$name-cfi.data")" '
		/BPF programs ran/ { for (i = 1; i < NF; i++) if ($i == "us" && $(i + 1) == "a") us = $(i - 1); sub(/^\(/, "", us) }
		/Captured and wrote/ { for (i = 1; i < NF; i++) if ($i == "samples,") n = $(i - 1); sub(/^\(/, "", n) }
		END { if (n) printf "%s: cfi costs %s us of BPF a run, %.0f bytes of file a sample\n", name, us, bytes / n }' \
		"$name-cfi.data.err"
	read -r ref n depth < <(root_share "$name-perf.txt" "$comm")
	echo "$name: perf record --call-graph dwarf: root reached in $ref% of $n samples, $depth user frames on average"
	at_least "$name samples (perf)" "$n" 30
	for way in cfi dwarf; do
		read -r pct n depth < <(root_share "$name-$way.txt" "$comm")
		echo "$name: bpfrec --call-graph $way: root reached in $pct% of $n samples, $depth user frames on average"
		echo "$pct $n" >"$name-$way.share"
	done
	for way in cfi dwarf; do
		read -r pct n <"$name-$way.share"
		# Enough samples for a share to mean something; how many a loaded
		# host's timer gives is its own (33 for dwarf where cfi got 231 in one
		# loaded run: the count is printed above for that to be followed up).
		at_least "$name samples ($way)" "$n" 30
		if [ $way = cfi ]; then
			at_least "$name root share, --call-graph cfi (perf's $ref - 5 - $warmup)" "$pct" \
				"$(awk -v r="$ref" -v w="$warmup" 'BEGIN { print r - 5 - w }')"
		else
			at_least "$name root share, --call-graph dwarf (perf's $ref - 5)" "$pct" \
				"$(awk -v r="$ref" 'BEGIN { print r - 5 }')"
		fi
	done
}

# Half a second of the interpreter's CPU time (py_nested.py's budget).
compare python3 python3 "$PY" "$PY_NESTED" cpu 0.5

# libc's qsort calling back into nofp_work: main -> sort_rounds -> qsort -> cmp_keys.
compare qsort nofp_work "$FIX/nofp_work" qsort
# The callback's callers: of the samples in cmp_keys, the share whose chain
# goes on through libc to sort_rounds and main, as often as perf finds it.
through_qsort() {
	awk 'BEGIN { RS = ""; FS = "\n" }
		{ k = 0; for (i = 2; i <= NF; i++) { split($i, f, " "); if (f[1] !~ /^ffff/) s[k++] = f[2] }
		  if (s[0] != "cmp_keys") next; n++
		  for (i = 1; i < k && s[i] != "sort_rounds"; i++) if (s[i] !~ /qsort|msort/) break
		  if (i > 1 && i < k - 1 && s[i] == "sort_rounds" && s[i + 1] == "main") ok++ }
		END { printf "%.1f %d\n", n ? 100 * ok / n : 0, n }' "$1"
}
read -r ref n < <(through_qsort qsort-perf.txt)
echo "qsort: cmp_keys <- libc's qsort <- sort_rounds <- main in $ref% of $n cmp_keys samples (perf)"
# As above, cfi's walks before the process had tables (a larger share on
# a slow CPU, where building them takes longer) may stop short.
qwarm=$(cfi_short_pct qsort-cfi.data.err)
for way in cfi dwarf; do
	read -r pct n < <(through_qsort qsort-$way.txt)
	echo "qsort: cmp_keys <- libc's qsort <- sort_rounds <- main in $pct% of $n cmp_keys samples ($way)"
	at_least "cmp_keys samples ($way)" "$n" 20
	slack=5
	[ $way = cfi ] && slack=$(awk -v w="$qwarm" 'BEGIN { print 5 + w }')
	at_least "cmp_keys chains through qsort, $way (perf's $ref - $slack)" "$pct" \
		"$(awk -v r="$ref" -v s="$slack" 'BEGIN { print r - s }')"
done
echo "ok"
