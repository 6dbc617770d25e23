#!/bin/bash
# The unwind tables' memory bound (--unwind-tables): when it is reached, the
# mappings left without a table are walked by frame pointers, counted in the
# summary line and named in a warning; the file is as good as any other.
# Debian's python3 (its interpreter's table alone is hundreds of KB) under a
# 64 KB budget, then under the default one; bad values are refused.
. "$(dirname "$0")/lib.sh"
need_root
need_tool perf linux-perf
cd "$T"

PY=$(debian_python3)

for way in tiny default; do
	opt=()
	[ $way = tiny ] && opt=(--unwind-tables=64K)
	"$BPFREC" record -F 999 --call-graph cfi "${opt[@]}" -o $way.data -- "$PY" "$PY_NESTED" cpu 0.3 2>$way.err ||
		{ cat $way.err >&2; fail "bpfrec record --call-graph cfi ${opt[*]} failed"; }
	grep 'cfi unwinding\|warning' $way.err || true
	sum=$(cfi_summary $way.err)
	read -r _ _ fp_stacks fp_frames tables mb over _ <<<"$sum"
	run_clean $way.txt perf script -F comm,ip,sym --no-inline -i $way.data
	run_clean $way.report perf report -i $way.data --stdio --no-children --sort sym -g none
	read -r root n depth < <(root_share $way.txt python3)
	echo "$way: $n samples, root reached in $root%, $depth user frames on average"
	at_least "python3 samples ($way)" "$n" 100
	if [ $way = tiny ]; then
		# python3 maps its interpreter, libc, ld.so and extension modules:
		# some of them must be over a 64 KB budget, and those walks must
		# have used frame pointers.
		at_least "mappings over the budget (64K)" "$over" 1
		at_least "stacks that used frame pointers (64K)" "$fp_stacks" 1
		at_least "frames found by frame pointers (64K)" "$fp_frames" 1
		assert_range "table memory (MB, 64K budget)" "$mb" 0 0.1
		assert_grep '^bpfrec record: warning: .*--unwind-tables' tiny.err
		tiny_root=$root
	else
		[ "$over" = 0 ] || fail "$over mappings over the default budget for one python3"
		assert_no_grep 'warning' default.err
		at_least "tables (default budget)" "$tables" 2
		# The bound costs completeness, which is why it is reported.
		at_least "root share, default budget against 64K (points)" \
			"$(awk -v a="$root" -v b="$tiny_root" 'BEGIN { print a - b }')" 0
	fi
done

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
