#!/bin/bash
# bpfrec record -g on the main fixture: known shares, an intact call chain,
# the right pid/comm, the fixture's build-id, and the same sample count in
# perf script, in our own summary line and in hotspot's parser.
. "$(dirname "$0")/lib.sh"
need_root

cd "$T"
"$BPFREC" record -v -F 999 -g -- "$FIX/rec_work" 2>"$T/rec.err" || fail "bpfrec record exited $?"
grep -v '^libbpf:' "$T/rec.err"
# Walks that may stop short for want of tables (none on a real CPU; on an
# emulated one, table builds take seconds): a chain cut there is not a
# broken one (cfi_short_pct, from the -v counters).
short=$(cfi_short_pct "$T/rec.err")
[ -f perf.data ] || fail "no perf.data"
[ "$(stat -c %a perf.data)" = 600 ] || fail "perf.data mode is $(stat -c %a perf.data), want 600"

run_clean "$T/self.txt" perf report -i perf.data --stdio --no-children
a=$(self_share "$T/self.txt" leaf_a)
b=$(self_share "$T/self.txt" leaf_b)
c=$(self_share "$T/self.txt" leaf_c)
echo "self: leaf_a=$a leaf_b=$b leaf_c=$c"
assert_leaf "leaf_a among the leaves" "$T/self.txt" leaf_a 52 68
assert_leaf "leaf_b among the leaves" "$T/self.txt" leaf_b 24 36
assert_leaf "leaf_c among the leaves" "$T/self.txt" leaf_c 6 14
assert_grep 'Total Lost Samples: 0' "$T/self.txt"
assert_grep "of event 'cpu-clock'" "$T/self.txt"

# With children: work and main hold everything that ran the fixture's own
# code, as each sample's chain in perf script says (by period, as perf
# report weighs). Outside them: exec, ld.so's start-up, page faults, exit:
# about 20 samples of a quiet machine's second, a quarter of the samples on
# an emulated CPU over a 9p root filesystem. That part is the machine's,
# but it must stay a minority: the fixture's code must hold most samples.
run_clean "$T/children.txt" perf report -i perf.data --stdio --children --comm rec_work -g none
w=$(children_of "$T/children.txt" work)
m=$(children_of "$T/children.txt" main)
echo "children: work=$w main=$m"
run_clean "$T/start.txt" perf script -i perf.data -F comm,period,ip,sym --comm rec_work
read -r n own share <<<"$(awk 'BEGIN { RS = "" }
	{ split($0, line, "\n"); split(line[1], h, " "); p = h[2]; n++; all += p
	  if (/ (leaf_a|leaf_b|leaf_c|work)(\n|$)/) { own++; ownp += p } }
	END { printf "%d %d %.2f\n", n, own, all ? 100 * ownp / all : 0 }' "$T/start.txt")"
echo "samples in the fixture's code: $own of $n, $share % of the period"
at_least "the fixture's code's share" "$share" 50
floor=$(awk -v s="$share" -v c="$short" 'BEGIN { printf "%.2f\n", s - 0.5 - c }')
assert_range work "${w:-0}" "$floor" 100.01
assert_range main "${m:-0}" "$floor" 100.01

# The chain leaf -> work -> main, leaf first, in every leaf sample.
run_clean "$T/script.txt" perf script -i perf.data -F comm,pid,tid,ip,sym
awk -v short="$short" '
	/^[^ \t]/ { if (n) check(); n = 0; head = $0; if ($1 == "rec_work") all++; next }
	NF >= 2 { ip[n] = $1; fr[n++] = $2 }
	END { if (n) check(); printf "leaf samples %d of %d in user space (%d in the kernel), broken chains %d (%.1f %% of walks may stop short)\n", leaves, all - kern, kern, bad, short
	      exit !(leaves > 0.9 * (all - kern) && bad <= short * leaves / 100) }
	function check() {
		# A sample in the kernel (the machine s interrupts, exit) is not a leaf.
		if (ip[0] ~ /^ffff/) { kern++; return }
		if (fr[0] !~ /^leaf_[abc]$/) return
		leaves++
		if (fr[1] != "work" || fr[2] != "main") { bad++; if (bad < 5) print "broken: " head " " fr[0] " " fr[1] " " fr[2] }
	}' "$T/script.txt" || fail "call chains leaf_* -> work -> main are not intact"

# One process, one thread, named rec_work.
run_clean "$T/ids.txt" perf script -i perf.data -F comm,pid,tid -G
grep -w rec_work "$T/ids.txt" | awk '{ print $2 }' | sort -u >"$T/pids"
[ "$(wc -l <"$T/pids")" = 1 ] || fail "rec_work samples carry several pid/tid pairs: $(tr '\n' ' ' <"$T/pids")"
awk '$1 == "rec_work" { split($2, p, "/"); if (p[1] != p[2]) exit 1 }' "$T/ids.txt" ||
	fail "single-threaded rec_work has tid != pid"

# Sample counts agree: perf script, our summary, hotspot's parser.
n_script=$(perf script -i perf.data -F event 2>/dev/null | grep -c cpu-clock)
n_ours=$(sed -n 's/.*(\([0-9]*\) samples, .*/\1/p' "$T/rec.err")
echo "samples: perf script $n_script, bpfrec $n_ours"
[ "$n_script" = "$n_ours" ] || fail "perf script sees $n_script samples, bpfrec said $n_ours"
assert_samples samples "$n_script" "$(fixture_cpu "$T/rec.err" rec_work)" 999
parser=/usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser
[ -x "$parser" ] || fail "$parser is not installed: run 'sh tools/deps.sh test' (Debian package hotspot)"
timeout 60 "$parser" --input perf.data --print-stats >"$T/hotspot.txt" 2>&1 ||
	{ cat "$T/hotspot.txt"; fail "hotspot-perfparser failed"; }
n_hotspot=$(sed -n 's/^samples: //p' "$T/hotspot.txt")
[ "$n_hotspot" = "$n_script" ] || fail "hotspot counts $n_hotspot samples, perf script $n_script"
assert_grep '^samples time violations: 0' "$T/hotspot.txt"

# The fixture's build-id is in the file.
want=$(readelf -n "$FIX/rec_work" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
run_clean "$T/bids.txt" perf buildid-list -i perf.data
assert_grep "^$want .*rec_work\$" "$T/bids.txt" "build-id $want of rec_work missing"
