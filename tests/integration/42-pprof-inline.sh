#!/bin/bash
# Inline frames: code of inlined_leaf inlined into outer_fn must become one
# Location with two Lines, innermost first (go tool pprof -raw), and the
# time perf report gives outer_fn's symbol must be inlined_leaf's flat time.
. "$TOP/tests/integration/lib.sh"
need_tool perf linux-perf
need_tool go golang-go
export HOME=$T PPROF_TMPDIR=$T

perf record -q -e cpu-clock -g -o "$T/perf.data" -- "$FIX/pp_inline" 2>"$T/rec.err" ||
	{ cat "$T/rec.err" >&2; fail "perf record failed"; }
run_clean "$T/report.txt" perf report -i "$T/perf.data" --stdio --no-children --sort sym
"$BPFREC" pprof -i "$T/perf.data" -o "$T/inl.pb.gz" 2>"$T/conv.err" ||
	{ cat "$T/conv.err" >&2; fail "bpfrec pprof failed"; }
run_clean "$T/raw.txt" go tool pprof -raw "$T/inl.pb.gz"
run_clean "$T/top.txt" go tool pprof -top -nodefraction=0 "$T/inl.pb.gz"
run_clean "$T/traces.txt" go tool pprof -traces "$T/inl.pb.gz"

# -raw prints a location as "ID: 0xADDR M=N func file:line s=0", its next
# Lines indented on the following lines. Count locations whose first Line is
# inlined_leaf and whose second is outer_fn, both in pp_inline.c.
n=$(awk '
	/^ +[0-9]+: 0x/ { first = ($4 == "inlined_leaf" && $5 ~ /pp_inline\.c:[0-9]+$/); expect = first; next }
	expect && /^ +outer_fn / && $2 ~ /pp_inline\.c:[0-9]+$/ { n++ }
	{ expect = 0 }
	END { print n + 0 }' "$T/raw.txt")
echo "locations with inlined_leaf inside outer_fn: $n"
[ "$n" -ge 1 ] || { grep -A2 inlined_leaf "$T/raw.txt" | head >&2; fail "no two-Line inline location"; }
# No location names inlined_leaf as an outermost function of its own.
if awk '/^ +[0-9]+: 0x/ { if (prev) exit 0; prev = ($4 == "inlined_leaf") ; next } { prev = 0 } END { exit !prev }' "$T/raw.txt"; then
	fail "an inlined_leaf location without its outer_fn line"
fi
assert_grep '\[FN\]\[FL\]\[LN\]\[IN\]' "$T/raw.txt" "mapping flags: functions, files, lines, inline frames"

# Shares: perf gives the time to the symbol (outer_fn), pprof to the inline
# function; the same samples.
a=$(self_share "$T/report.txt" outer_fn)
b=$(awk '$6 == "inlined_leaf" { sub(/%/, "", $2); print $2 }' "$T/top.txt")
echo "perf report outer_fn $a% ($(user_share "$T/report.txt" outer_fn)% of user samples), go tool pprof inlined_leaf $b%"
# Of user time (the kernel's part is the machine's interrupts), nearly all.
assert_range "outer_fn among user samples" "$(user_share "$T/report.txt" outer_fn)" 90 100
assert_range "share difference" "$(awk -v a="$a" -v b="${b:-0}" 'BEGIN { d = a - b; print d < 0 ? -d : d }')" 0 1.5
# And the stack reads inlined_leaf <- outer_fn <- main.
grep -qE '^ +outer_fn$' <(grep -A1 -E '^ +[0-9.]+[mu]?s +inlined_leaf \(inline\)$' "$T/traces.txt") ||
	fail "traces do not show inlined_leaf called from outer_fn"
echo "ok"
