#!/bin/bash
# bpfrec record --call-graph cfi: user stacks walked in BPF with tables
# built from .eh_frame, written as an ordinary callchain. On nofp_work
# (-O2, no frame pointers: main -> mid_a -> leaf_a, main -> mid_b -> leaf_b)
# the leaf samples have their whole caller chain and never a wrong one,
# with --call-graph cfi and with -g (which means cfi); --call-graph fp still
# walks frame pointers, which this fixture does not have. The file has
# perf's plain callchain layout (no user registers or stack), perf reads it
# without a warning, and the summary line counts the walks as perf script
# sees them.
. "$(dirname "$0")/lib.sh"
need_root
need_tool perf linux-perf
cd "$T"

for way in cfi g fp; do
	case $way in
	cfi) opt=(--call-graph cfi) ;;
	g) opt=(-g) ;;
	fp) opt=(--call-graph fp) ;;
	esac
	"$BPFREC" record -v -F 999 "${opt[@]}" -o $way.data -- "$FIX/nofp_work" cpu 2>$way.err >/dev/null ||
		{ cat $way.err >&2; fail "bpfrec record ${opt[*]} failed"; }
	"$BPFREC" dump -i $way.data >$way.dump || fail "bpfrec dump $way.data failed"
	# An ordinary callchain, as fp writes it: nothing for perf to unwind.
	assert_no_grep 'REGS_USER|STACK_USER|sample_stack_user|sample_regs_user' $way.dump
	assert_grep 'CALLCHAIN' $way.dump
	run_clean $way.txt perf script -F comm,ip,sym --no-inline -i $way.data --comm nofp_work
	read -r chains n wrong < <(chain_share $way.txt)
	read -r root nall depth < <(root_share $way.txt nofp_work)
	echo "${opt[*]}: leaf -> mid -> main in $chains% of $n leaf samples ($wrong with a wrong caller); root reached in $root% of $nall samples, $depth user frames on average"
	at_least "leaf samples (${opt[*]})" "$n" 100
	if [ $way = fp ]; then
		# Frame pointers, not CFI: no table, no summary, and callers lost.
		assert_no_grep 'cfi unwinding' fp.err
		[ "$(awk -v c="$chains" 'BEGIN { print (c < 50) }')" = 1 ] ||
			fail "--call-graph fp found whole chains in $chains% of a program without frame pointers: is it walking CFI?"
		continue
	fi
	grep 'cfi unwinding' $way.err || true
	sum=$(cfi_summary $way.err)
	read -r stacks at_root _ _ tables _ over _ before <<<"$sum"
	# A walk may stop short, but never name a wrong caller; and it is
	# complete in nearly every sample but those walked before the process
	# had its tables (built at its first sample: the longer the machine
	# takes, the more of them; test 76 compares the same with perf).
	warmup=$(awk -v b="$before" -v s="$stacks" 'BEGIN { printf "%.1f\n", s ? 100 * b / s : 0 }')
	echo "${opt[*]}: $warmup% of the walks came before the process had tables"
	[ "$wrong" = 0 ] || fail "$wrong leaf samples with a wrong caller (${opt[*]})"
	at_least "whole leaf -> mid -> main chains (${opt[*]}, 90 - $warmup)" "$chains" \
		"$(awk -v w="$warmup" 'BEGIN { print 90 - w }')"
	assert_no_grep '^bpfrec record: warning' $way.err
	[ "$over" = 0 ] || fail "$over mappings over the table budget for one small program"
	at_least "tables built (${opt[*]})" "$tables" 2	# nofp_work and libc at least
	# The walks are the file's samples: as many, and ending at the root as
	# often as perf script finds (the kernel-only samples of exit aside; a
	# walk before the tables that frame pointers carried to a root-named
	# function is a root to perf script, not to the walker). A walk cut for
	# want of tables was walked again once they came: its second walk is
	# the one in the file, and the summary's "walked again" line counts it.
	read -r late _ _ late_root _ < <(late_walks $way.err)
	echo "${opt[*]}: $late samples walked again, $late_root of them to the root"
	assert_range "stacks walked / samples in the file (${opt[*]})" \
		"$(awk -v s="$stacks" -v n="$nall" 'BEGIN { print n ? s / n : 0 }')" 0.9 1.1
	# A walk that stopped for want of libc's table at libc's
	# __libc_start_call_main is a root to perf script, not to the summary:
	# the samples whose stack may have stopped short are allowed
	# (cfi_short_pct).
	short=$(cfi_short_pct $way.err)
	assert_range "root share, summary against perf script (points, ${opt[*]})" \
		"$(abs_diff "$(awk -v r="$at_root" -v l="$late_root" -v s="$stacks" 'BEGIN { print s ? 100 * (r + l) / s : 0 }')" "$root")" \
		0 "$(awk -v w="$short" 'BEGIN { print 5 + w }')"
done

# -q: no summary line.
"$BPFREC" record -q --call-graph cfi -o q.data -- "$FIX/nofp_work" cpu 0.1 2>q.err >/dev/null ||
	{ cat q.err >&2; fail "bpfrec record -q --call-graph cfi failed"; }
assert_no_grep 'cfi unwinding' q.err
echo "ok"
