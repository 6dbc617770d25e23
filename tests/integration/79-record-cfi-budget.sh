#!/bin/bash
# The unwind tables' memory bound (--unwind-tables): when it is reached, the
# mappings left without a table are walked by frame pointers, counted in the
# summary line and named in a warning; the file is as good as any other.
# Debian's python3 (its interpreter's table alone is hundreds of KB) under a
# 64 KB budget, then under the default one; a program built with frame
# pointers keeps fp's stacks under a budget too small for its tables; bad
# values are refused.
. "$(dirname "$0")/lib.sh"
need_root
need_tool perf linux-perf
cd "$T"

PY=$(debian_python3)

for way in tiny default; do
	opt=()
	[ $way = tiny ] && opt=(--unwind-tables=64K)
	"$BPFREC" record -v -F 999 --call-graph cfi "${opt[@]}" -o $way.data -- "$PY" "$PY_NESTED" cpu 0.3 2>$way.err ||
		{ cat $way.err >&2; fail "bpfrec record --call-graph cfi ${opt[*]} failed"; }
	grep 'cfi unwinding\|warning' $way.err || true
	sum=$(cfi_summary $way.err)
	read -r _ _ fp_stacks fp_frames tables mb over _ no_proc <<<"$sum"
	run_clean $way.txt perf script -F comm,ip,sym --no-inline -i $way.data
	run_clean $way.report perf report -i $way.data --stdio --no-children --sort sym -g none
	read -r root n depth < <(root_share $way.txt python3)
	echo "$way: $n samples, root reached in $root%, $depth user frames on average"
	# 0.3 s of CPU at 999 Hz, or what this machine's timer delivers (timer_hz,
	# which moves: a quarter of it).
	at_least "python3 samples ($way)" "$n" "$(( $(timer_hz 999) * 3 / 40 ))"
	if [ $way = tiny ]; then
		# python3 maps its interpreter, libc, ld.so and extension modules:
		# python3.11 and libc.so.6 have tens of thousands of rows each, far
		# over 64 KB, so every walk that starts in either has to use frame
		# pointers from its first frame (whatever they find there).
		at_least "mappings over the budget (64K)" "$over" 1
		perf script -F comm,ip,dso -i tiny.data 2>/dev/null >tiny.dso || fail "perf script -F dso failed"
		big=$(awk 'BEGIN { RS = ""; FS = "\n" } $1 ~ /^ *python3/ {
			for (i = 2; i <= NF; i++) if ($i !~ /^[ \t]*ffff/) {
				if ($i ~ /\/(python3[.0-9]*|libc\.so\.6)\)$/) n++
				break } }
			END { print n + 0 }' tiny.dso)
		# Each such walk either went on by frame pointers or, python3 and
		# libc having none, stopped at once for want of a table: counted
		# either way, in the summary or in the stops by reason. Walks taken
		# before the process had its tables, or before its entry had the
		# mapping (a library just mapped: more of both the slower the
		# machine, and the longer late samples hold the kernel's mmap
		# reports back), are counted apart and are not the budget's.
		no_table=$(cfi_stops tiny.err no-table)
		no_mapping=$(cfi_stops tiny.err no-mapping)
		echo "64K: $big samples began in python3.11 or libc; $fp_stacks stacks used frame pointers ($fp_frames frames), $no_table stopped for want of a table, $no_proc were walked before their process had tables, $no_mapping stopped at code outside its known mappings"
		at_least "samples in python3.11 or libc (64K)" "$big" 50
		at_least "stacks counted as cut by the budget (64K), against the $big that began in python3.11 or libc less the $no_proc walked before tables and $no_mapping outside the known mappings" \
			"$(( fp_stacks + no_table ))" "$(awk -v n="$big" -v e="$no_proc" -v m="$no_mapping" 'BEGIN { printf "%d", (n - e - m) * 0.9 }')"
		at_least "stacks counted as cut by the budget (64K)" "$(( fp_stacks + no_table ))" 1
		assert_range "table memory (MB, 64K budget)" "$mb" 0 0.1
		assert_grep '^bpfrec record: warning: .*--unwind-tables' tiny.err
		tiny_root=$root
	else
		[ "$over" = 0 ] || fail "$over mappings over the default budget for one python3"
		assert_no_grep '^bpfrec record: warning' default.err
		at_least "tables (default budget)" "$tables" 2
		# The bound costs completeness, which is why it is reported.
		at_least "root share, default budget against 64K (points)" \
			"$(awk -v a="$root" -v b="$tiny_root" 'BEGIN { print a - b }')" 0
	fi
done

# rec_work is built with frame pointers: under a budget too small for its
# tables the fallback walks them, so its stacks reach the root as often as
# --call-graph fp's do.
for way in fp tiny; do
	opt=(--call-graph fp)
	[ $way = tiny ] && opt=(--call-graph cfi --unwind-tables=4K)
	"$BPFREC" record -v -F 999 "${opt[@]}" -o fp-$way.data -- "$FIX/rec_work" 0.5 2>fp-$way.err ||
		{ cat fp-$way.err >&2; fail "bpfrec record ${opt[*]} -- rec_work failed"; }
	grep 'cfi unwinding' fp-$way.err || true
	run_clean fp-$way.txt perf script -F comm,ip,sym --no-inline -i fp-$way.data
	read -r root n depth < <(root_share fp-$way.txt rec_work)
	echo "rec_work, ${opt[*]}: root reached in $root% of $n samples, $depth user frames on average"
	at_least "rec_work samples (${opt[*]})" "$n" 100
	[ $way = fp ] && fp_root=$root
done
at_least "rec_work root share under 4K of tables (fp's $fp_root - 5)" "$root" \
	"$(awk -v r="$fp_root" 'BEGIN { print r - 5 }')"

# Bad values: one line naming the option, exit 2, no file.
for bad in 12Q -5 abc ""; do
	rc=0
	"$BPFREC" record --call-graph cfi --unwind-tables="$bad" -o bad.data -- true 2>bad.err || rc=$?
	[ "$rc" = 2 ] || { cat bad.err >&2; fail "--unwind-tables=$bad: exit $rc, expected 2 (bad usage)"; }
	[ "$(wc -l <bad.err)" = 1 ] && grep -q -- '--unwind-tables' bad.err && ! grep -q 'unknown option' bad.err ||
		{ cat bad.err >&2; fail "--unwind-tables=$bad: expected one line that names the option and what is wrong"; }
	[ ! -e bad.data ] || fail "--unwind-tables=$bad wrote a file"
done
echo "ok"
