#!/bin/bash
# Kernel frames: a write(2) loop spends most of its time in the kernel; its
# kernel frames must carry kallsyms names (ksys_write, vfs_write...), with
# the same shares as perf report, under a [kernel.kallsyms] mapping that
# carries the kernel's build-id.
. "$TOP/tests/integration/lib.sh"
need_tool perf linux-perf
need_tool go golang-go
[ "$(awk '$3 == "ksys_write" { print $1; exit }' /proc/kallsyms)" != "" ] || skip "no ksys_write in kallsyms"
awk '$3 == "ksys_write" { exit ($1 ~ /^0+$/) }' /proc/kallsyms || skip "kallsyms addresses are hidden (kptr_restrict)"
export HOME=$T PPROF_TMPDIR=$T

perf record -q -e cpu-clock -g -o "$T/perf.data" -- "$FIX/pp_syscall" 2>"$T/rec.err" ||
	{ cat "$T/rec.err" >&2; fail "perf record failed"; }
run_clean "$T/report.txt" perf report -i "$T/perf.data" --stdio --no-children --sort sym
run_clean "$T/buildids.txt" perf buildid-list -i "$T/perf.data"
"$BPFREC" pprof -i "$T/perf.data" -o "$T/k.pb.gz" 2>"$T/conv.err" ||
	{ cat "$T/conv.err" >&2; fail "bpfrec pprof failed"; }
run_clean "$T/top.txt" go tool pprof -top -nodefraction=0 -nodecount=1000 "$T/k.pb.gz"
run_clean "$T/raw.txt" go tool pprof -raw "$T/k.pb.gz"
run_clean "$T/traces.txt" go tool pprof -traces "$T/k.pb.gz"

assert_grep ' (ksys_write|__x64_sys_write|vfs_write)$' "$T/top.txt" "named kernel write path"
# The syscall entry is on most kernel stacks of this program: its cum share
# is what perf report --children says on this kernel.
cum=$(awk '$6 == "entry_SYSCALL_64_after_hwframe" || $6 == "entry_SYSCALL_64" { sub(/%/, "", $5); if ($5 > m) m = $5 } END { print m + 0 }' "$T/top.txt")
run_clean "$T/children.txt" perf report -i "$T/perf.data" --stdio --children --sort sym -g none
pcum=$(awk '($NF == "entry_SYSCALL_64_after_hwframe" || $NF == "entry_SYSCALL_64") && $1 ~ /%$/ { sub(/%/, "", $1); if ($1 > m) m = $1 } END { print m + 0 }' "$T/children.txt")
echo "syscall entry: cum $cum% in pprof, children $pcum% in perf report"
assert_range "syscall entry share (perf report)" "$pcum" 1 100
assert_range "syscall entry cum difference (points)" "$(awk -v a="$cum" -v b="$pcum" 'BEGIN { d = a - b; print d < 0 ? -d : d }')" 0 1.5
# Kernel frames sit above the user frames that made the call (libc has no
# frame pointers, so write_loop itself is skipped: its caller main is not).
awk '/^-----/ { k = 0; next } / ksys_write$/ { k = 1 } k && / main$/ { ok = 1 } END { exit !ok }' "$T/traces.txt" ||
	fail "no trace from ksys_write down to main"

# Every kernel symbol perf names with >= 1% self time has the same share in pprof.
grep -E '\[k\]' "$T/report.txt" | awk '$1+0 >= 1 { sub(/%/, "", $1); print $NF, $1 }' >"$T/kshares.txt"
[ -s "$T/kshares.txt" ] || fail "perf report shows no kernel symbols"
while read -r sym share; do
	p=$(flat_share "$T/top.txt" "$sym")
	echo "$sym: perf $share%, pprof $p%"
	assert_range "$sym share difference" "$(awk -v a="$share" -v b="$p" 'BEGIN { d = a - b; print d < 0 ? -d : d }')" 0 1.5
done <"$T/kshares.txt"

# Every kernel address perf script names carries the same name in the
# profile: addresses that several kallsyms lines share included (perf shows
# the last of them, e.g. __x86_indirect_thunk_rax, not _array). One
# exception: a return address at a function's first byte (the call was the
# last instruction before it) is named by the profile after the caller, at
# address - 1, where perf names the function that starts there.
run_clean "$T/kscript.txt" perf script -i "$T/perf.data" -F ip,sym,symoff
awk 'BEGIN { first = 1 } /^[ \t]*$/ { first = 1; next }
	{ sym = $2; off = $2; sub(/\+0x[0-9a-f]+$/, "", sym); sub(/^.*\+/, "", off)
	  if (length($1) == 16 && $1 ~ /^ffff/) print $1, sym, first ? "leaf" : off == "0x0" ? "start" : "caller"
	  first = 0 }' "$T/kscript.txt" | sort -u >"$T/perf_names.txt"
awk '/^Locations/ { on = 1; next } on && $2 ~ /^0xffff/ && $3 ~ /^M=/ { sub(/^0x/, "", $2); print $2, $4 }' \
	"$T/raw.txt" | sort -u >"$T/pprof_names.txt"
awk 'NR == FNR { has[$1 " " $2] = 1; seen[$1] = 1; next }
	{ n++; if ($3 == "leaf") leaves++ }
	!($1 in seen) { miss++; if (miss < 5) print "not in the profile: " $0; next }
	!(($1 " " $2) in has) && $3 != "start" { bad++; if (bad < 5) print $1 ": perf " $2 " (" $3 "), not in the profile" }
	END { printf "kernel addresses compared with perf script: %d (%d sampled), missing %d, named differently %d\n", n, leaves, miss, bad
	      exit !(leaves > 0 && miss + bad == 0) }' "$T/pprof_names.txt" "$T/perf_names.txt" ||
	fail "kernel frames are named differently from perf"
# How many of them are in functions whose start kallsyms gives several
# names (shown, not asserted: which kernel functions run depends on the kernel).
awk 'NR == FNR { c[$1]++; a[$3] = $1; next } ($2 in a) && c[a[$2]] > 1 { n++ }
	END { print "of them in functions with aliases: " n + 0 }' /proc/kallsyms "$T/perf_names.txt"

# The kernel mapping and its build-id.
kbid=$(awk '$2 == "[kernel.kallsyms]" { print $1 }' "$T/buildids.txt")
[ -n "$kbid" ] || fail "perf buildid-list has no kernel build-id"
assert_grep "\[kernel\.kallsyms\] $kbid" "$T/raw.txt" "kernel mapping with its build-id"
echo "ok"
