#!/bin/bash
# Python frames across --switch-output (recorder/pyframes.h): a rotated
# perf.data is complete when it is retired, and a user may read it at once
# while recording goes on; its Python frames must be named then too, from
# the file and the build-id cache alone, though the process that ran them
# still runs (its symbol file, still open to new functions, is filed as it
# stands before each file is retired).
#   - py_tree.py (tests/fixtures) runs under a recording cut every second,
#     for a few seconds and until the test has read a rotated file
#     (PY_TREE_UNTIL: under an emulated CPU reading it takes longer than the
#     tree's seconds); the second file retired after the tree began (a
#     whole window of it), read while the fixture has not finished
#     (it prints its CPU times at its end), names
#     hot_alpha, hot_beta and cold_gamma in perf report, no sample of a
#     Python symbol file is left without a name in perf script, and the
#     leaves' shares are the fixture's 6:3:1 split of the work (within 3
#     points and sampling error, as test 91 takes them); no warning;
#   - a process that gains functions after its file was first filed (a
#     warm-up, then the tree): a file retired after the tree began names
#     the leaves while it runs, and the first file still names the warm-up
#     from the grown copy;
#   - every rotated file names all its Python frames, the last one the
#     leaves at 6:3:1 too, and the -v summary counts
#     the filings: at least one, and no more than one per rotation and the
#     stop for the one process (a file that gained no function is not
#     written again).
. "$(dirname "$0")/lib.sh"
need_root
need_kernel_for -g
need_tool perf linux-perf
PY_TREE=$TOP/tests/fixtures/py_tree.py
cd "$T"
export HOME=$T/home
mkdir -p "$HOME"
trap 'kill ${rec:-} 2>/dev/null || true; rm -rf "$T"' EXIT

# leaves FILE: "NAMED UNNAMED A B C" from `perf script -F ip,sym,dso`: the
# frames in Python symbol files with a name and without one, and the
# samples whose leaf-most Python frame is hot_alpha, hot_beta, cold_gamma.
leaves() {
	awk 'BEGIN { RS = "" }
		{ n = split($0, l, "\n"); leaf = ""
		  for (i = 1; i <= n; i++) {
			if (l[i] !~ /bpfrec-python-/) continue
			if (l[i] ~ /\[unknown\]/ || l[i] ~ /^ *[0-9a-f]+ +\(/) { unnamed++; continue }
			named++
			if (leaf == "" && match(l[i], /(hot_alpha|hot_beta|cold_gamma) \(py_tree\.py\)/))
				leaf = substr(l[i], RSTART, RLENGTH)
		  }
		  if (leaf ~ /^hot_alpha/) a++; else if (leaf ~ /^hot_beta/) b++; else if (leaf ~ /^cold_gamma/) c++ }
		END { printf "%d %d %d %d %d\n", named, unnamed, a, b, c }' "$1"
}

# check_file LABEL FILE: the file names the leaves, every Python frame, at 6:3:1
# (leaf_n: its leaf samples).
check_file() {
	local label=$1 f=$2 named unnamed a b c n
	run_clean "$T/rep.txt" perf report -i "$f" --stdio --no-children --sort dso,sym -g none
	run_clean "$T/script.txt" perf script -i "$f" -F ip,sym,dso
	read -r named unnamed a b c < <(leaves "$T/script.txt")
	n=$((a + b + c))
	leaf_n=$n
	echo "$label: Python frames $named named, $unnamed unnamed; leaf samples hot_alpha $a" \
		"hot_beta $b cold_gamma $c"
	# A leaf with a handful of samples (the last file is whatever tail the
	# run left: 1 of cold_gamma in one CI run) may not show in perf
	# report's list; perf script named it (no unnamed frame, below).
	local leaf
	for leaf in "hot_alpha $a" "hot_beta $b" "cold_gamma $c"; do
		[ "${leaf#* }" -lt 5 ] || grep -qF "] ${leaf%% *} (py_tree.py)" "$T/rep.txt" ||
			fail "$label: perf report does not name ${leaf%% *} (${leaf#* } leaf samples)"
	done
	assert_no_grep 'bpfrec-python-[0-9]+-[0-9]+ +\[\.\] 0x' "$T/rep.txt" \
		"$label: a sample of a Python symbol file without a name in perf report"
	[ "$unnamed" = 0 ] || fail "$label: $unnamed Python frames without a name in perf script"
	# The work's split: the leaves run the same bytecode 6, 3 and 1 times a round.
	assert_sampled "$label: hot_alpha among the leaves (work 60%)" \
		"$(awk -v v="$a" -v n="$n" 'BEGIN { printf "%.2f\n", n ? 100 * v / n : 0 }')" "$n" 57 63
	assert_sampled "$label: hot_beta among the leaves (work 30%)" \
		"$(awk -v v="$b" -v n="$n" 'BEGIN { printf "%.2f\n", n ? 100 * v / n : 0 }')" "$n" 27 33
	assert_sampled "$label: cold_gamma among the leaves (work 10%)" \
		"$(awk -v v="$c" -v n="$n" 'BEGIN { printf "%.2f\n", n ? 100 * v / n : 0 }')" "$n" 7 13
}

# The fixtures run until the test has read what it reads while they run.
export PY_TREE_UNTIL=$T/read
"$BPFREC" record -v -g -F 999 --switch-output=1s -o w.data -- \
	"$(debian_python3)" "$PY_TREE" tree 4 >tree.out 2>tree.err &
rec=$!
# The second file retired after the tree began: a whole window of it (the
# first files can be all of the interpreter's start under an emulated CPU,
# seconds of it: no leaf in them).
first=
for _ in $(seq 12000); do
	kill -0 "$rec" 2>/dev/null || break
	if [ -z "${at:-}" ] && grep -qs '^tree begins' tree.out; then
		at=$(ls w.data.* 2>/dev/null | wc -l || true)
	fi
	if [ -n "${at:-}" ] && [ "$(ls w.data.* 2>/dev/null | wc -l)" -ge $((at + 2)) ]; then
		first=$(ls w.data.* | sort | sed -n "$((at + 2))p")
		break
	fi
	sleep 0.01
done
at=
[ -n "$first" ] || { cat tree.err >&2; fail "no file retired while the tree ran"; }
grep -q "Python frames need Linux" tree.err && skip "$(grep -m1 'Python frames need' tree.err)"
# Read now, as a user may: the fixture has not printed its times, it still runs.
grep -q ': cpu ' tree.out && fail "the fixture ended before its file was read: nothing tested"
check_file "rotated file $first, the tree's first whole window, read while the fixture runs" "$first"
at_least "leaf samples in the tree's first whole window (a second of it at 999 Hz)" "$leaf_n" 20
grep -q ': cpu ' tree.out && fail "the fixture ended while its file was read: it was not read while it ran"
touch "$T/read"

wait "$rec" || { cat tree.err >&2; fail "bpfrec record exited $?"; }
rec=
assert_no_grep 'warning|cannot' tree.err
# The others: every one without an unnamed Python frame; the last with a
# window of the tree in it (the fixture ends once the file above was read:
# the very last file may hold only its exit, no sample) in full.
nfiles=0 last=
for f in w.data.*; do
	nfiles=$((nfiles + 1))
	run_clean "$T/script.txt" perf script -i "$f" -F ip,sym,dso
	read -r named unnamed a b c < <(leaves "$T/script.txt")
	[ "$unnamed" = 0 ] || fail "rotated file $f: $unnamed of $((named + unnamed)) Python frames without a name"
	[ $((a + b + c)) -lt 20 ] || last=$f
done
[ "$last" = "$first" ] || check_file "last rotated file with the tree in it, $last" "$last"
sum=$(grep 'Python frames:' tree.err | sed 's/^bpfrec record: //')
echo "$nfiles files; $sum"
filings=$(echo "$sum" | sed -n 's/.*symbol files, filed \([0-9]*\) times.*/\1/p')
[ -n "$filings" ] || fail "the -v summary does not say how often the symbol files were filed"
# One process: filed at most at each of the rotations and at the stop, and only when grown.
assert_range "symbol file filings" "$filings" 1 "$nfiles"

# A process that gains functions after its file was first filed: it warms
# up in a function of its own, then runs the tree. A file retired after the
# tree began, read while it runs, names the leaves (the symbol file was
# filed again, grown, under its build-id); the first file, read then, still
# names its warm-up (the new copy holds the old).
mkdir grow
rm -f "$T/read"
"$BPFREC" record -v -g -F 999 --switch-output=1s -o grow/w.data -- \
	"$(debian_python3)" "$TOP/tests/fixtures/py_late.py" "$(dirname "$PY_TREE")" 1.5 4 >grow/out 2>grow/err &
rec=$!
after=
for _ in $(seq 6000); do
	kill -0 "$rec" 2>/dev/null || break
	if [ -z "${at:-}" ] && grep -qs '^tree begins' grow/out; then
		at=$(ls grow/w.data.* 2>/dev/null | wc -l || true)
	fi
	# The second file retired after the tree began: a whole window of it.
	if [ -n "${at:-}" ] && [ "$(ls grow/w.data.* 2>/dev/null | wc -l)" -ge $((at + 2)) ]; then
		after=$(ls grow/w.data.* | sort | sed -n "$((at + 2))p")
		break
	fi
	sleep 0.01
done
[ -n "$after" ] || { cat grow/err >&2; fail "no file retired while the tree ran"; }
grep -q ': cpu ' grow/out && fail "the fixture ended before its files were read: nothing tested"
run_clean "$T/script.txt" perf script -i "$after" -F ip,sym,dso
read -r named unnamed a b c < <(leaves "$T/script.txt")
echo "grown: $after, read while the tree runs: Python frames $named named, $unnamed unnamed;" \
	"leaf samples hot_alpha $a hot_beta $b cold_gamma $c"
[ "$unnamed" = 0 ] || fail "grown: $unnamed Python frames without a name in a file retired after the tree began"
[ "$a" -gt 0 ] || fail "grown: hot_alpha not named in a file retired after the tree began"
# The first file with the warm-up in it, among those retired before the tree
# began (on an emulated CPU the interpreter's start can fill the first ones).
first=
for f in $(ls grow/w.data.* | sort | head -n "$at"); do
	run_clean "$T/script.txt" perf script -i "$f" -F ip,sym,dso
	if grep -qF 'warm_up (py_late.py)' "$T/script.txt"; then
		first=$f
		break
	fi
done
[ -n "$first" ] || fail "grown: none of the $at files retired before the tree began names warm_up"
read -r named unnamed _ < <(leaves "$T/script.txt")
echo "grown: first file with the warm-up $first, read again: Python frames $named named, $unnamed unnamed"
[ "$unnamed" = 0 ] || fail "grown: the first file has $unnamed Python frames without a name after the refiling"
grep -q ': cpu ' grow/out && fail "grown: the fixture ended while its files were read"
touch "$T/read"
wait "$rec" || { cat grow/err >&2; fail "bpfrec record (grown) exited $?"; }
rec=
sum=$(grep 'Python frames:' grow/err | sed 's/^bpfrec record: //')
echo "grown: $sum"
filings=$(echo "$sum" | sed -n 's/.*symbol files, filed \([0-9]*\) times.*/\1/p')
assert_range "grown: symbol file filings (the file grew)" "${filings:-0}" 2 1000
echo "ok"
