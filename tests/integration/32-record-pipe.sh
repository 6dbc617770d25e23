#!/bin/bash
# Pipe mode: `bpfrec record -o - | perf script -i -` shows the same functions
# and chains as file mode, and a launched command's stdout does not corrupt
# the stream (it goes to stderr).
. "$(dirname "$0")/lib.sh"
need_root

cd "$T"
"$BPFREC" record -g -o - -- sh -c "echo hello-from-the-command; exec '$FIX/rec_work' 0.5" \
	2>"$T/rec.err" | perf script -i - -F comm,pid,ip,sym >"$T/script.txt" 2>"$T/perf.err"
cat "$T/rec.err"
if [ -s "$T/perf.err" ]; then cat "$T/perf.err"; fail "perf script -i - warned"; fi
assert_grep 'hello-from-the-command' "$T/rec.err" "the command's stdout did not reach stderr"
[ -f perf.data ] && fail "pipe mode created perf.data"
for f in leaf_a leaf_b leaf_c work main; do
	assert_grep "^[[:space:]]+[0-9a-f]+ $f\$" "$T/script.txt" "$f missing from the piped profile"
done
# Shares from the stream itself, among the leaves: the fixture fixes their
# ratio (6:3:1); what exec and start-up cost around them is the machine's.
# Each sample counts for the leaf it interrupted: its first user frame (on
# an emulated CPU most samples land in the kernel's interrupt path, over
# the leaf that was running).
awk '/^[^ \t]/ { u = 1; next } u && NF >= 2 && $1 !~ /^ffff/ { u = 0; if ($2 ~ /^leaf_/) { n[$2]++; t++ } }
	END { for (k in n) printf "%s %.1f %d\n", k, 100 * n[k] / t, t }' "$T/script.txt" | sort >"$T/shares"
cat "$T/shares"
leaves=$(awk 'NR == 1 { print $3 }' "$T/shares")
assert_sampled leaf_a "$(awk '$1 == "leaf_a" { print $2 }' "$T/shares")" "${leaves:-0}" 52 68
assert_sampled leaf_b "$(awk '$1 == "leaf_b" { print $2 }' "$T/shares")" "${leaves:-0}" 23 37
n_script=$(awk '/^[^ \t]/ { n++ } END { print n + 0 }' "$T/script.txt")
n_ours=$(sed -n 's/.*(\([0-9]*\) samples, .*/\1/p' "$T/rec.err")
echo "samples: perf script $n_script, bpfrec $n_ours"
[ "$n_script" = "$n_ours" ] || fail "perf script -i - sees $n_script samples, bpfrec said $n_ours"

# perf report reads the pipe too.
"$BPFREC" record -q -g -o - -- "$FIX/rec_work" 0.3 | perf report -i - --stdio --no-children \
	>"$T/report.txt" 2>"$T/perf.err" || fail "perf report -i - failed"
if [ -s "$T/perf.err" ]; then cat "$T/perf.err"; fail "perf report -i - warned"; fi
a=$(self_share "$T/report.txt" leaf_a)
leaves=$(awk -v a="$a" -v b="$(self_share "$T/report.txt" leaf_b)" -v c="$(self_share "$T/report.txt" leaf_c)" \
	'BEGIN { print a + b + c }')
echo "perf report -i -: leaf_a $a% of all, the leaves $leaves%"
at_least "the leaves' share (perf report -i -)" "$leaves" 1
assert_leaf "leaf_a (perf report -i -)" "$T/report.txt" leaf_a 52 68
