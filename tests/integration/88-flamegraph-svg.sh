#!/bin/bash
# bpfrec flamegraph --format svg: a static SVG that parses as XML, one <g>
# per frame with its share in its <title>, shares equal to perf report's
# (a `perf record -g` file, and the same through a pipe); --icicle puts
# the root on top; narrow frames fold into one per parent that says how
# many it holds; --diff colours by the change of share (files made by
# bpfrec's writer with exact counts); bad input is a one-line error and
# leaves no file.
. "$TOP/tests/integration/lib.sh"
need_tool perf linux-perf
PY=$(debian_python3)
need_synth

# frames FILE.svg: "name<TAB>share<TAB>x<TAB>y<TAB>fill<TAB>title" per <g>, checking the XML.
frames() {
	"$PY" - "$1" <<'PY'
import re, sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == ns + "svg", root.tag
for g in root.iter(ns + "g"):
    t = g.find(ns + "title").text
    r = g.find(ns + "rect")
    m = re.match(r"^(.*?)(?: \[[^]]*\])?: .*?, ([0-9.]+)%", t)
    assert m, "no share in title: " + t
    print("\t".join([m.group(1), m.group(2), r.get("x"), r.get("y"), r.get("fill"), t]))
PY
}
share_of() { awk -F'\t' -v n="$2" '$1 == n { s += $2 } END { printf "%.2f\n", s }' "$1"; }

perf record -q -e cpu-clock -g -o "$T/perf.data" -- "$FIX/pp_shares" 2>"$T/rec.err" ||
	{ cat "$T/rec.err" >&2; fail "perf record failed"; }
run_clean "$T/report.txt" perf report -i "$T/perf.data" --stdio --children --sort sym -g none
"$BPFREC" flamegraph -q -i "$T/perf.data" --format svg -o "$T/flame.svg" || fail "bpfrec flamegraph --format svg failed"
frames "$T/flame.svg" >"$T/frames.tsv" || fail "the SVG does not parse, or a frame has no share"
n=$(wc -l <"$T/frames.tsv")
echo "SVG: $n frames"
assert_range "frames" "$n" 5 100000
assert_no_grep '<script|href=' "$T/flame.svg" "a script or link in the SVG"
for f in leaf_a leaf_b leaf_c work main; do
	a=$(share_of "$T/frames.tsv" "$f") b=$(children_of "$T/report.txt" "$f")
	echo "$f: SVG $a %, perf report children $b %"
	assert_range "$f: SVG - perf report (points)" "$(awk -v a="$a" -v b="$b" 'BEGIN { print a - b }')" -1.5 1.5
done
# Flame (root at the bottom) by default, icicle on request.
y_of() { awk -F'\t' -v n="$2" '$1 == n { print $4; exit }' "$1"; }
[ "$(y_of "$T/frames.tsv" all)" -gt "$(y_of "$T/frames.tsv" leaf_a)" ] || fail "the root is not below leaf_a"
"$BPFREC" flamegraph -q -i "$T/perf.data" --icicle -o "$T/icicle.svg" || fail "--icicle failed"
frames "$T/icicle.svg" >"$T/icicle.tsv"
[ "$(y_of "$T/icicle.tsv" all)" -lt "$(y_of "$T/icicle.tsv" leaf_a)" ] || fail "--icicle: the root is not above leaf_a"

# Pipe mode.
perf record -q -e cpu-clock -g -o - -- "$FIX/pp_shares" 0.5 2>"$T/prec.err" |
	"$BPFREC" flamegraph -q -i - -o "$T/pipe.svg" || { cat "$T/prec.err" >&2; fail "perf record -o - | bpfrec flamegraph -i - failed"; }
frames "$T/pipe.svg" >"$T/pipe.tsv"
a=$(share_of "$T/pipe.tsv" leaf_a) b=$(share_of "$T/pipe.tsv" leaf_b) c=$(share_of "$T/pipe.tsv" leaf_c)
echo "pipe: leaf_a $a %, leaf_b $b %, leaf_c $c %"
assert_range "pipe: leaf_a among the leaves" "$(awk -v a="$a" -v b="$b" -v c="$c" 'BEGIN { print 100 * a / (a + b + c) }')" 50 70

# Exact counts from bpfrec's writer: folding and the differential graph.
"$SYNTH" -o "$T/new.data" --elf "$FIX/pp_shares" "600:u:leaf_a,u:work,u:main" \
	"300:u:leaf_b,u:work,u:main" "5:u:leaf_c,u:work,u:main" || fail "perfdata-synth failed"
"$SYNTH" -o "$T/base.data" --elf "$FIX/pp_shares" "300:u:leaf_a,u:work,u:main" \
	"300:u:leaf_b,u:work,u:main" "400:u:leaf_c,u:work,u:main" || fail "perfdata-synth failed"
"$BPFREC" flamegraph -q -i "$T/new.data" --min-width 1 -o "$T/fold.svg" || fail "--min-width failed"
frames "$T/fold.svg" >"$T/fold.tsv"
assert_grep '^\[1 frames folded\]	0\.55	' "$T/fold.tsv" "leaf_c (5 of 905 samples) folded at 1 %"
assert_no_grep '^leaf_c	' "$T/fold.tsv" "leaf_c drawn although narrower than 1 %"
assert_grep '1 frames narrower than 1% folded' "$T/fold.svg" "the graph says what it folded"
"$BPFREC" flamegraph -q -i "$T/new.data" -o "$T/nofold.svg" || fail "bpfrec flamegraph failed"
assert_grep '^leaf_c	0\.55	' <(frames "$T/nofold.svg") "leaf_c at 0.55 % without --min-width"

"$BPFREC" flamegraph -q -i "$T/new.data" --diff "$T/base.data" -o "$T/diff.svg" || fail "--diff failed"
frames "$T/diff.svg" >"$T/diff.tsv"
cut -f1,5,6 "$T/diff.tsv" | grep leaf_
# leaf_a: 66.30 % now, 30 % before: red; leaf_c: 0.55 % against 40 %: blue; work: unchanged.
awk -F'\t' '$1 == "leaf_a" && $5 ~ /^hsl\(0,85%/ && $6 ~ /change \+36\.30 points/ { ok = 1 } END { exit !ok }' "$T/diff.tsv" ||
	fail "leaf_a is not red with +36.30 points"
awk -F'\t' '$1 == "leaf_c" && $5 ~ /^hsl\(220,85%/ && $6 ~ /change -39\.45 points/ { ok = 1 } END { exit !ok }' "$T/diff.tsv" ||
	fail "leaf_c is not blue with -39.45 points"
awk -F'\t' '$1 == "work" && $6 ~ /change \+0\.00 points/ { ok = 1 } END { exit !ok }' "$T/diff.tsv" ||
	fail "work's share changed"

# Bad input: one line naming the problem, non-zero, nothing written.
if "$BPFREC" flamegraph -i "$T/missing.data" -o "$T/bad.html" 2>"$T/bad.err"; then fail "a missing input succeeded"; fi
cat "$T/bad.err"
[ "$(wc -l <"$T/bad.err")" = 1 ] || fail "not one line of error"
assert_grep 'cannot open .*missing.data' "$T/bad.err" "the error names the file"
head -c 3000 "$T/perf.data" >"$T/cut.data"
if "$BPFREC" flamegraph -i "$T/cut.data" -o "$T/cut.html" 2>"$T/cut.err"; then fail "a truncated input succeeded"; fi
cat "$T/cut.err"
[ ! -e "$T/bad.html" ] && [ ! -e "$T/cut.html" ] || fail "an output was left behind"
[ -z "$(find "$T" -name '.*.html.*')" ] || fail "a temporary file was left behind"
if "$BPFREC" flamegraph -i - --diff - 2>"$T/usage.err"; then fail "two pipes accepted"; fi
assert_grep "see 'bpfrec flamegraph --help'" "$T/usage.err" "usage error"
echo "ok"
