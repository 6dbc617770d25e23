#!/bin/bash
# bpfrec flamegraph's page in a real browser: Debian's headless chromium,
# driven over the DevTools protocol (tests/tools/fg_browser.py) with the
# network off. On a `perf record -g` of pp_shares (leaves 6:3:1 under work
# under main), the drawn widths of leaf_a, leaf_b, leaf_c and work must be
# perf report's children shares of the same file; clicking work zooms on
# it; a search highlights the matches and gives their share; the tooltip
# names function, module, value and share; the page makes no request and
# throws nothing. The screenshot stays in $BUILD/test-output/.
. "$TOP/tests/integration/lib.sh"
need_tool perf linux-perf
need_tool chromium chromium
PY=$(debian_python3)
"$PY" -c 'import websocket' 2>/dev/null ||
	fail "python3-websocket is not installed: run 'sh tools/deps.sh test'"
OUT=$BUILD/test-output/88-flamegraph-html
rm -rf "$OUT" && mkdir -p "$OUT"

perf record -q -e cpu-clock -g -o "$T/perf.data" -- "$FIX/pp_shares" 2>"$T/rec.err" ||
	{ cat "$T/rec.err" >&2; fail "perf record failed"; }
run_clean "$T/report.txt" perf report -i "$T/perf.data" --stdio --children --sort sym -g none
"$BPFREC" flamegraph -i "$T/perf.data" -o "$T/flame.html" 2>"$T/fg.err" ||
	{ cat "$T/fg.err" >&2; fail "bpfrec flamegraph failed"; }
cat "$T/fg.err"
assert_grep 'cpu-clock' "$T/fg.err" "the summary names the event"

# Self-contained: no external script, style, font or image.
assert_no_grep '<(script|link|img)[^>]* (src|href)=' "$T/flame.html" "an external resource"
assert_no_grep 'https?://[a-z]' "$T/flame.html" "a network address in the page"

"$PY" "$TOP/tests/tools/fg_browser.py" "$T/flame.html" "$OUT" --names leaf_a,leaf_b,leaf_c,work \
	--zoom work --search 'leaf_(a|b)' --hover leaf_a >"$T/page.json" ||
	{ cat "$T/page.json" >&2; fail "the browser run failed"; }
cp "$T/page.json" "$OUT/"
j() { "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {"d": d}))' "$T/page.json" "$1"; }

near() { # NAME A B POINTS
	local d
	d=$(awk -v a="$2" -v b="$3" 'BEGIN { d = a - b; print d < 0 ? -d : d }')
	assert_range "$1 (page $2 %, perf report $3 %): difference in points" "$d" 0 "$4"
}
for f in leaf_a leaf_b leaf_c work; do
	perf_share=$(children_of "$T/report.txt" "$f")
	page=$(j "round(d['widths']['$f'], 2)")
	echo "$f: page width $page %, perf report children $perf_share %"
	near "$f" "$page" "$perf_share" 1.5
done
# The fixture's own ratio, not just agreement with perf.
a=$(j "d['widths']['leaf_a']") b=$(j "d['widths']['leaf_b']") c=$(j "d['widths']['leaf_c']")
assert_range "leaf_a among the leaves" "$(awk -v a="$a" -v b="$b" -v c="$c" 'BEGIN { print 100 * a / (a + b + c) }')" 52 68

# Zoom: work fills the chart, the leaves keep their shares of work.
[ "$(j "d['zoom']['zoomed_on'] == d['zoom']['clicked']")" = True ] ||
	fail "clicking work (frame $(j "d['zoom']['clicked']")) zoomed on frame $(j "d['zoom']['zoomed_on']")" \
		"after $(j "d['zoom']['attempts']") clicks; under the pointer: frame $(j "d['zoom']['under_pointer']")," \
		"the click landed on: $(j "d['zoom']['click_landed_on']"), at $(j "d['zoom']['at']") in a viewport of $(j "d['zoom']['viewport']")"
assert_range "work's width once zoomed" "$(j "d['zoom']['widths']['work']")" 99.9 100.1
za=$(j "d['zoom']['widths']['leaf_a']")
near "leaf_a zoomed" "$za" "$(awk -v a="$a" -v w="$(j "d['widths']['work']")" 'BEGIN { print 100 * a / w }')" 0.5
echo "zoomed on work: leaf_a $za % of it (clicks it took: $(j "d['zoom']['attempts']"))"
[ "$(j "d['after_reset_zoom']")" = 0 ] || fail "Reset zoom did not go back to the root"

# Search: both leaves highlighted, and their share is perf's.
echo "search: $(j "d['search']['text']")"
assert_range "highlighted frames" "$(j "d['search']['highlighted']")" 2 100
near "matched share" "$(j "d['search']['share']")" \
	"$(awk -v a="$(children_of "$T/report.txt" leaf_a)" -v b="$(children_of "$T/report.txt" leaf_b)" 'BEGIN { print a + b }')" 1.5

# Tooltip: function, module, value with unit, share.
tip=$(j "d['tip']")
echo "tooltip: $(echo "$tip" | tr '\n' '|')"
[ "$(j "d['tip_visible']")" = block ] || fail "no tooltip shown"
for want in leaf_a pp_shares ' ms, ' '% of all'; do
	case $tip in *"$want"*) ;; *) fail "the tooltip lacks '$want': $tip" ;; esac
done

[ "$(j "len(d['requests'])")" = 0 ] || fail "the page made requests: $(j "d['requests']")"
[ "$(j "len(d['errors'])")" = 0 ] || fail "the page threw: $(j "d['errors']")"
[ -s "$OUT/flame.png" ] || fail "no screenshot"
echo "requests: 0; screenshot: $OUT/flame.png"
echo "ok"
