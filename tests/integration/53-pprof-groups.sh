#!/bin/bash
# The converter's group callback (bpfrec/pprof.h; the agent's one profile per
# service) on a real recording: two processes of different command names,
# pp_shares and bench_spin, recorded together and converted grouped by
# command name (tests/tools/pprof-groups). Each group's profile has its own
# process's samples and functions only, as many samples as perf report
# counts for that command on the same file, and the groups add up to the
# ungrouped profile of `bpfrec pprof`.
. "$TOP/tests/integration/lib.sh"
need_root
need_tool perf linux-perf
need_tool go golang-go
export HOME=$T PPROF_TMPDIR=$T
GROUPS_TOOL=$BUILD/tests/tools/pprof-groups
[ -x "$GROUPS_TOOL" ] || fail "$GROUPS_TOOL is not built: run 'make fixtures'"

"$BPFREC" record -g -o "$T/two.data" -- \
	sh -c '"$1" & "$2" -t 1 -s 1 >/dev/null & wait' sh "$FIX/pp_shares" "$FIX/bench_spin" \
	2>"$T/rec.err" || { cat "$T/rec.err" >&2; fail "bpfrec record failed"; }

mkdir "$T/groups"
"$GROUPS_TOOL" "$T/two.data" "$T/groups" >"$T/groups.txt" 2>"$T/groups.err" ||
	{ cat "$T/groups.err" >&2; fail "pprof-groups failed"; }
cat "$T/groups.txt"
"$BPFREC" pprof -q -i "$T/two.data" -o "$T/all.pb.gz" || fail "bpfrec pprof failed"
run_clean "$T/perf-comm.txt" perf report -i "$T/two.data" --stdio --sort comm -F sample,comm -g none

# pp_top FILE OUT: `go tool pprof -top` in samples, every node.
pp_top() { run_clean "$2" go tool pprof -top -sample_index=samples -nodefraction=0 -nodecount=100000 "$1"; }
total_of() { awk '/ of [0-9]+ total/ { for (i = 1; i < NF; i++) if ($i == "of") print $(i + 1); exit }' "$1"; }
# flat FILE FUNCTION: the function's flat samples in a top listing (0 when absent).
flat() { awk -v f="$2" '$6 == f { t += $1 } END { print t + 0 }' "$1"; }

pp_top "$T/all.pb.gz" "$T/all.txt"
all=$(total_of "$T/all.txt")
[ -n "$all" ] && [ "$all" -gt 0 ] || fail "no samples in the ungrouped profile"

sum=0
seen=""
while read -r i event group samples; do
	[ "$event" = cpu-clock ] || fail "profile $i is of event $event: the recording has cpu-clock only"
	case " $seen " in *" $group "*) fail "group $group has two cpu-clock profiles" ;; esac
	seen="$seen $group"
	pp_top "$T/groups/$i.pb.gz" "$T/top-$i.txt"
	n=$(total_of "$T/top-$i.txt")
	[ "$n" = "$samples" ] || fail "group $group: the library says $samples samples, go tool pprof $n"
	p=$(awk -v c="$group" '$1 ~ /^[0-9]+$/ && $2 == c { print $1 }' "$T/perf-comm.txt")
	echo "group $group: $n samples, perf report --sort comm ${p:-none}"
	[ "$n" = "${p:-none}" ] || fail "group $group has $n samples, perf report counts ${p:-none} for $group"
	assert_grep "^converted by bpfrec pprof from .*, event cpu-clock, group $group\$" \
		"$T/top-$i.txt" "the group is in the profile's comment"
	sum=$((sum + n))
	case $group in
	pp_shares) shares=$i ;;
	bench_spin) spin=$i ;;
	esac
done <"$T/groups.txt"
echo "groups: $sum samples in all, ungrouped profile: $all"
[ "$sum" = "$all" ] || fail "the groups hold $sum samples, the ungrouped profile $all"
[ -n "${shares:-}" ] && [ -n "${spin:-}" ] || fail "no pp_shares or bench_spin group"

# Each group has its own program's functions, with all of their samples.
assert_grep '^File: pp_shares$' "$T/top-$shares.txt" "pp_shares is its group's main binary"
assert_grep '^File: bench_spin$' "$T/top-$spin.txt" "bench_spin is its group's main binary"
# own_fn GROUP OTHER FUNCTION: FUNCTION's self samples are all in GROUP's
# profile; OTHER's does not list it at all (not even as a caller).
own_fn() {
	local a g
	a=$(flat "$T/all.txt" "$3") g=$(flat "$T/top-$1.txt" "$3")
	[ "$a" -gt 0 ] && [ "$g" = "$a" ] || fail "$3: $g samples in its group's profile, $a in all"
	if grep -qE " $3\$" "$T/top-$2.txt"; then fail "$3 listed in the other group's profile"; fi
}
for f in leaf_a leaf_b; do own_fn "$shares" "$spin" $f; done
for f in spin_leaf spin_recurse; do own_fn "$spin" "$shares" $f; done
assert_grep ' work$' "$T/top-$shares.txt" "work (a caller) in pp_shares's group"
if grep -qE ' work$' "$T/top-$spin.txt"; then fail "work listed in bench_spin's group"; fi
echo ok
