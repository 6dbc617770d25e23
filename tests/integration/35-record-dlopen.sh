#!/bin/bash
# A library dlopen()ed after recording began: its functions resolve in its
# own DSO, and the code from before the dlopen still resolves. The shares
# are the fixture's own (rec_dlopen prints them): after the dlopen it
# alternates plugin_spin and after_dlopen, the same loop, within
# milliseconds and for 2 : 1 of the iterations, so their split in the
# profile is the split of the work it counted, whatever rate the machine's
# timer delivers; before the dlopen it spins alone, and its samples are the
# ones taken between the times it printed. (Comparing the two phases with
# each other held on no emulated CPU: under TCG the timer delivered
# 650-2,300 of 4,000 Hz, at a different rate before the dlopen than after,
# and before_dlopen had 5 times plugin_spin's samples for the same CPU time.
# The fixture's CPU times are printed, not held to: an emulated CPU's
# clocks run on while the host runs something else, which no sample sees.)
. "$(dirname "$0")/lib.sh"
need_root

cd "$T"
"$BPFREC" record -q -g -o d.data -- "$FIX/rec_dlopen" 2>"$T/fixture.err" ||
	{ cat "$T/fixture.err" >&2; fail "bpfrec record exited $?"; }
cat "$T/fixture.err"
run_clean "$T/report.txt" perf report -i d.data --stdio --no-children --comm rec_dlopen -g none
assert_grep 'librec_plugin\.so +\[\.\] plugin_spin$' "$T/report.txt" "plugin_spin not resolved in librec_plugin.so"
assert_grep 'rec_dlopen +\[\.\] after_dlopen$' "$T/report.txt" "after_dlopen not resolved"
assert_grep 'rec_dlopen +\[\.\] before_dlopen$' "$T/report.txt" "before_dlopen not resolved"

# After the dlopen: plugin_spin's share of the two functions' samples is
# its share of their work, within what sampling allows for that many
# samples (assert_sampled: four standard deviations of a binomial share).
work() { sed -n "s/^$2: \([0-9]*\) iterations, cpu \([0-9.]*\) s\$/\1 \2/p" "$1"; }
read -r pn pc < <(work "$T/fixture.err" plugin_spin) || true
read -r an ac < <(work "$T/fixture.err" after_dlopen) || true
[ -n "${pn:-}" ] && [ -n "${an:-}" ] || fail "rec_dlopen did not report its work"
p=$(self_share "$T/report.txt" plugin_spin) a=$(self_share "$T/report.txt" after_dlopen)
n=$(awk -v t="$(report_samples "$T/report.txt")" -v p="$p" -v a="$a" 'BEGIN { printf "%d\n", t * (p + a) / 100 }')
share=$(awk -v p="$p" -v a="$a" 'BEGIN { printf "%.2f\n", p + a ? 100 * p / (p + a) : 0 }')
want=$(awk -v p="$pn" -v a="$an" 'BEGIN { printf "%.2f\n", 100 * p / (p + a) }')
cpu=$(awk -v p="$pc" -v a="$ac" 'BEGIN { printf "%.2f\n", p + a ? 100 * p / (p + a) : 0 }')
echo "after the dlopen: plugin_spin $share% of $n samples in it and after_dlopen;" \
	"$want% of their work, $cpu% of their CPU time ($pc s, $ac s)"
# Fewer samples than this make any share pass (the range below widens with them).
[ "$n" -ge 50 ] || fail "only $n samples in plugin_spin and after_dlopen for $pc + $ac s of CPU"
assert_sampled "plugin_spin's share against after_dlopen" "$share" "$n" "$want" "$want"

# Before the dlopen: the user samples taken while before_dlopen spun are
# its own (a sample in the process's own code resolved before the library
# came, and after it came: the recorder kept its earlier mappings).
read -r t0 t1 < <(sed -n 's/^before_dlopen: from \([0-9.]*\) to \([0-9.]*\)$/\1 \2/p' "$T/fixture.err")
[ -n "${t1:-}" ] || fail "rec_dlopen did not report when before_dlopen spun"
run_clean "$T/leaves.txt" perf script -i d.data --comm rec_dlopen -G -F time,ip,sym
read -r in own < <(awk -v a="$t0" -v b="$t1" '{ t = $1; sub(/:$/, "", t) }
	t >= a && t <= b && $2 !~ /^ffff/ { n++; if ($3 == "before_dlopen") k++ }
	END { print n + 0, k + 0 }' "$T/leaves.txt")
echo "before the dlopen: $own of $in user samples in before_dlopen"
[ "$in" -ge 20 ] || fail "only $in user samples while before_dlopen spun"
# The spin's only other user code is the libc wrapper of getrusage: a few samples.
[ $((in - own)) -le $((in / 50 + 3)) ] ||
	fail "$((in - own)) of the $in user samples taken while before_dlopen spun are elsewhere"

# The plugin's frames chain back into the program: plugin_spin's caller is
# main in most of its samples (a stack taken before the plugin's tables
# were built may stop at it).
run_clean "$T/script.txt" perf script -i d.data --comm rec_dlopen -F ip,sym
awk 'BEGIN { depth = 0 } /^[ \t]*$/ { depth = 0; next }
	{ depth++; if (depth == 1) { leaf = $2; if (leaf == "plugin_spin") n++ }
	  else if (depth == 2 && leaf == "plugin_spin" && $2 == "main") ok++ }
	END { printf "plugin_spin <- main chains: %d of %d plugin_spin samples\n", ok, n
	      exit !(ok > 0 && ok >= n / 2) }' "$T/script.txt" ||
	fail "plugin_spin samples do not chain to main"
