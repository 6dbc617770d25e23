#!/usr/bin/env bash
# Python frames as the recorder writes them (symbolize/pysyms.h): a Python
# symbol file in the build-id cache and its MMAP2, nothing on disk under the
# recorded name. A synthetic recording (tests/tools/perfdata-synth, p:
# frames) of the fixture's call tree, <module> -> run_round -> {hot_alpha
# 60 %, hot_beta 30 %, cold_gamma 10 %} under a native main, must read in
# stock perf report / script / archive, bpfrec pprof and flamegraph, and
# hotspot's parser with every Python frame named, its file:line right and
# no warning, also "on another machine": the cache moved to another HOME is
# all there is.
source "$(dirname "$0")/lib.sh"
need_synth
need_tool perf linux-perf
need_tool go golang-go
need_tool bzip2 bzip2   # perf archive
[ -r /proc/kallsyms ] && [ "$(awk '$3 == "_text" { print $1 }' /proc/kallsyms)" != 0000000000000000 ] ||
	skip "kernel addresses hidden in /proc/kallsyms"
export HOME=$T/recorder PPROF_TMPDIR=$T
mkdir -p "$HOME"

app=/srv/app/app.py util=/srv/app/lib/util.py
stacks=(
	"600:p:hot_alpha@$app:12,p:run_round@$app:30,p:<module>@$app:40,u:main"
	"300:p:hot_beta@$app:17,p:run_round@$app:31,p:<module>@$app:40,u:main"
	"100:p:cold_gamma@$util:5,p:run_round@$app:32,p:<module>@$app:40,u:main"
)
"$SYNTH" -o "$T/py.data" --elf "$FIX/synth_target" --pid 4242 --cache "$HOME/.debug" "${stacks[@]}"

# What the file records: the symbol file by build-id under a name that cannot exist.
run_clean "$T/bids.txt" perf buildid-list -i "$T/py.data"
assert_grep '^[0-9a-f]{40} /proc/version/bpfrec-python-4242-0$' "$T/bids.txt" "symbol file build-id"
bid=$(awk '$2 == "/proc/version/bpfrec-python-4242-0" { print $1 }' "$T/bids.txt")
[ ! -e /proc/version/bpfrec-python-4242-0 ] || fail "the recorded path exists"

# Another machine: only the perf.data and the cache, under another HOME.
mkdir -p "$T/elsewhere"
mv "$HOME/.debug" "$T/elsewhere/.debug"
export HOME=$T/elsewhere
[ -f "$HOME/.debug/.build-id/${bid:0:2}/${bid:2}/elf" ] || fail "no cache entry for $bid"

# Self share of a symbol with spaces in its name, in perf report --stdio -g none.
py_share() { # FILE NAME
	awk -v s="[.] $2" '$1 ~ /%$/ { l = $0; sub(/^ *[0-9.]+% +/, "", l); sub(/ +$/, "", l)
		if (l == s) { sub(/%/, "", $1); t += $1 } } END { printf "%.2f\n", t + 0 }' "$1"
}
run_clean "$T/report.txt" perf report -i "$T/py.data" --stdio --no-children --sort sym -g none
for f in 'hot_alpha (app.py):60' 'hot_beta (app.py):30' 'cold_gamma (util.py):10'; do
	share=$(py_share "$T/report.txt" "${f%:*}")
	echo "perf report: ${f%:*} $share% (written ${f##*:}%)"
	assert_range "${f%:*} self share" "$share" "${f##*:}" "${f##*:}"
done
run_clean "$T/children.txt" perf report -i "$T/py.data" --stdio --children --sort sym -g none
awk '/\[\.\] <module> \(app\.py\)$/ && $1 == "100.00%" { ok++ } /\[\.\] run_round \(app\.py\)$/ && $1 == "100.00%" { ok++ }
	END { exit ok != 2 }' "$T/children.txt" || { cat "$T/children.txt" >&2; fail "callers <module> and run_round not in every sample"; }
run_clean "$T/dso.txt" perf report -i "$T/py.data" --stdio --no-children --sort dso -g none
assert_grep '^ +100\.00% +bpfrec-python-4242-0$' "$T/dso.txt" "every leaf in the symbol file"

# file:line: perf script per frame, and perf report by srcline.
run_clean "$T/script.txt" perf script -i "$T/py.data" -F ip,sym,srcline --full-source-path
for l in "$app:12:600" "$app:17:300" "$util:5:100" "$app:30:600" "$app:31:300" "$app:32:100" "$app:40:1000"; do
	n=$(grep -cxE " +${l%:*}" "$T/script.txt" || true)
	echo "perf script: ${l%:*} in $n samples (written ${l##*:})"
	[ "$n" = "${l##*:}" ] || fail "${l%:*}: $n frames, expected ${l##*:}"
done
assert_no_grep '\[unknown\]|\?\?:' "$T/script.txt" "every frame resolves"
run_clean "$T/srcline.txt" perf report -i "$T/py.data" --stdio --no-children --sort srcline -g none
assert_grep '^ +60\.00% +app\.py:12$' "$T/srcline.txt"
assert_grep '^ +30\.00% +app\.py:17$' "$T/srcline.txt"
assert_grep '^ +10\.00% +util\.py:5$' "$T/srcline.txt"

# bpfrec pprof: names, shares and file:line. go tool pprof's default
# demangling blanks names in <...>, so stacks are read with -symbolize=none.
"$BPFREC" pprof -q -i "$T/py.data" -o "$T/py.pb.gz" || fail "bpfrec pprof failed"
run_clean "$T/top.txt" go tool pprof -top -nodefraction=0 "$T/py.pb.gz"
run_clean "$T/raw.txt" go tool pprof -raw "$T/py.pb.gz"
run_clean "$T/traces.txt" go tool pprof -traces -symbolize=none "$T/py.pb.gz"
for f in 'hot_alpha (app.py):60' 'hot_beta (app.py):30' 'cold_gamma (util.py):10'; do
	share=$(awk -v s="${f%:*}" '$2 ~ /%$/ { l = $0; sub(/^ +/, "", l)
		for (i = 0; i < 5; i++) sub(/^[^ ]+ +/, "", l)
		if (l == s) { sub(/%/, "", $2); print $2 } }' "$T/top.txt")
	echo "bpfrec pprof: ${f%:*} ${share:-0}%"
	assert_range "${f%:*} pprof share" "${share:-0}" "${f##*:}" "${f##*:}"
done
assert_grep " hot_alpha \(app\.py\) $app:12 " "$T/raw.txt" "pprof line of hot_alpha"
assert_grep " cold_gamma \(util\.py\) $util:5 " "$T/raw.txt" "pprof line of cold_gamma"
assert_grep " run_round \(app\.py\) $app:31 " "$T/raw.txt" "pprof line of a caller"
assert_grep '/proc/version/bpfrec-python-4242-0 [0-9a-f]{40} \[FN\]\[FL\]\[LN\]' "$T/raw.txt" \
	"the symbol file's mapping has functions, files and lines"
awk '/^-----/ { if (n >= 4 && s[1] == "hot_beta (app.py)" && s[2] == "run_round (app.py)" &&
		s[3] == "<module> (app.py)" && s[4] == "main") ok = 1; n = 0; next }
	NF { l = $0; sub(/^ +/, "", l); if (l ~ /^[0-9.]+m?s /) sub(/^[^ ]+ +/, "", l); s[++n] = l }
	END { exit !ok }' "$T/traces.txt" || { head -30 "$T/traces.txt" >&2; fail "no hot_beta <- run_round <- <module> <- main trace"; }

# bpfrec flamegraph: the same names and shares.
"$BPFREC" flamegraph -i "$T/py.data" -o "$T/flame.svg" 2>/dev/null || fail "bpfrec flamegraph failed"
for f in 'hot_alpha (app.py) [bpfrec-python-4242-0]: 600.000 ms, 60.00%' \
	'cold_gamma (util.py) [bpfrec-python-4242-0]: 100.000 ms, 10.00%' \
	'&lt;module&gt; (app.py) [bpfrec-python-4242-0]: 1.000 s, 100.00%'; do
	grep -qF "$f" "$T/flame.svg" || fail "flame graph lacks '$f'"
done

# Pipe mode (build-ids as HEADER_BUILD_ID records): the same frames.
"$SYNTH" -o - --pipe --elf "$FIX/synth_target" --pid 4242 --cache "$T/pipe-cache" "${stacks[@]}" \
	> "$T/pipe.data"
run_clean "$T/pipe.txt" perf script -i - -F ip,sym,srcline --full-source-path < "$T/pipe.data"
cmp -s "$T/script.txt" "$T/pipe.txt" || { diff "$T/script.txt" "$T/pipe.txt" | head >&2; fail "pipe and file mode differ"; }

# perf archive takes the symbol file along; unpacked into a third HOME, perf reads it.
perf archive "$T/py.data" > "$T/archive.txt" 2>&1 || { cat "$T/archive.txt" >&2; fail "perf archive failed"; }
tar tjf "$T/py.data.tar.bz2" | grep -qx "proc/version/bpfrec-python-4242-0/$bid/elf" ||
	fail "perf archive left the symbol file out"
mkdir -p "$T/third/.debug"
tar xjf "$T/py.data.tar.bz2" -C "$T/third/.debug"
export HOME=$T/third
run_clean "$T/third.txt" perf report -i "$T/py.data" --stdio --no-children --sort sym -g none
export HOME=$T/elsewhere
assert_range "hot_alpha share from perf archive" "$(py_share "$T/third.txt" 'hot_alpha (app.py)')" 60 60

# hotspot's parser: all samples, and every Python function named.
PARSER=/usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser
[ -x "$PARSER" ] || fail "hotspot is not installed: run 'sh tools/deps.sh test' (Debian package hotspot)"
"$PARSER" --input "$T/py.data" --print-stats > "$T/hotspot.txt" 2>&1 || fail "hotspot-perfparser failed"
assert_grep '^samples: 1000$' "$T/hotspot.txt"
"$PARSER" --input "$T/py.data" --output "$T/hotspot.bin" 2>/dev/null || fail "hotspot-perfparser failed"
# Its output is a binary stream: symbol and file names are byte strings
# there (each after its length), messages UTF-16 text.
{ strings -n 6 "$T/hotspot.bin"; strings -n 6 -el "$T/hotspot.bin"; } > "$T/hotspot.str"
for f in 'hot_alpha (app.py)' 'hot_beta (app.py)' 'cold_gamma (util.py)' 'run_round (app.py)' \
	'<module> (app.py)'; do
	grep -qF "$f" "$T/hotspot.str" || fail "hotspot does not name $f"
done
grep -qE '^.?/srv/app/lib/util\.py.?$' "$T/hotspot.str" || fail "hotspot has no file $util"
assert_no_grep 'Could not find ELF file for /proc/version' "$T/hotspot.str" "hotspot finds the symbol file"
echo "Python frames read in perf report/script, bpfrec pprof and hotspot from the cache alone"
