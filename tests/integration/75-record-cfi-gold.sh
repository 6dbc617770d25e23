#!/bin/bash
# -g stacks through a library linked by gold (issue 21), as Debian links
# libLLVM-14 and libclang-cpp-14: nofp_gold's main calls cfi_gold_work ->
# cfi_gold_outer -> cfi_gold_mid -> cfi_gold_leaf in libcfi_gold.so (-O2,
# no frame pointers), whose executable segment holds 4.5 MiB of
# relocations before its code, more than the table builder may probe. The
# library's table must cover its code all the same: its leaf samples have
# the whole chain to main as often as perf record --call-graph dwarf finds
# it on the same program here and now, and reach the root as often.
. "$(dirname "$0")/lib.sh"
need_root
need_tool perf linux-perf
cd "$T"

"$BPFREC" record -v -F 999 -g -o g.data -- "$FIX/nofp_gold" 1 2>g.err >/dev/null ||
	{ cat g.err >&2; fail "bpfrec record -g failed"; }
perf record -q -m 16M -F 999 --call-graph dwarf -o perf.data -- "$FIX/nofp_gold" 1 \
	2>perf.err >/dev/null || { cat perf.err >&2; fail "perf record --call-graph dwarf failed"; }
run_clean g.txt perf script -F comm,ip,sym --no-inline -i g.data --comm nofp_gold
perf script -F comm,ip,sym --no-inline -i perf.data --comm nofp_gold >perf.txt 2>/dev/null ||
	fail "perf script -i perf.data failed"

# gold_chain SCRIPT: "PCT N WRONG" for the cfi_gold_leaf samples: the
# percent whose chain goes on mid -> outer -> work -> main, their count, and
# how many name a wrong caller (a chain that ends or turns [unknown] is
# short, not wrong).
gold_chain() {
	awk 'BEGIN { RS = ""; FS = "\n"; split("cfi_gold_leaf cfi_gold_mid cfi_gold_outer cfi_gold_work main", want, " ") }
		{ k = 0; for (i = 2; i <= NF; i++) { split($i, f, " "); if (f[1] !~ /^ffff/ && f[2] != "") s[k++] = f[2] }
		  if (k == 0 || s[0] != want[1]) next; n++
		  good = 1
		  for (i = 1; i < 5; i++) {
			if (i >= k || s[i] == "[unknown]") { good = 0; break }
			if (s[i] != want[i + 1]) { good = 0; bad++; break }
		  }
		  ok += good }
		END { printf "%.1f %d %d\n", n ? 100 * ok / n : 0, n, bad }' "$1"
}

grep 'cfi unwinding' g.err || true
read -r _ _ _ _ tables _ over _ _ <<<"$(cfi_summary g.err)"
warm=$(cfi_short_pct g.err)
echo "-g: $warm% of the walks may stop short for want of tables"
assert_no_grep '^bpfrec record: warning' g.err
[ "$over" = 0 ] || fail "$over mappings over the table budget"
at_least "tables built (nofp_gold, libcfi_gold.so, libc)" "$tables" 3

read -r ref n wrong < <(gold_chain perf.txt)
echo "perf --call-graph dwarf: cfi_gold_leaf -> ... -> main in $ref% of $n leaf samples ($wrong wrong)"
at_least "cfi_gold_leaf samples (perf)" "$n" 100
read -r pct n wrong < <(gold_chain g.txt)
echo "bpfrec -g: cfi_gold_leaf -> ... -> main in $pct% of $n leaf samples ($wrong wrong)"
at_least "cfi_gold_leaf samples (-g)" "$n" 100
[ "$wrong" = 0 ] || fail "$wrong cfi_gold_leaf samples with a wrong caller"
at_least "whole chains through libcfi_gold.so (perf's $ref - 5 - $warm)" "$pct" \
	"$(awk -v r="$ref" -v w="$warm" 'BEGIN { print r - 5 - w }')"

read -r ref n depth < <(root_share perf.txt nofp_gold)
echo "perf --call-graph dwarf: root reached in $ref% of $n samples, $depth user frames on average"
read -r pct n depth < <(root_share g.txt nofp_gold)
echo "bpfrec -g: root reached in $pct% of $n samples, $depth user frames on average"
at_least "root share, -g (perf's $ref - 5 - $warm)" "$pct" \
	"$(awk -v r="$ref" -v w="$warm" 'BEGIN { print r - 5 - w }')"
echo "ok"
