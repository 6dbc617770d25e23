#!/usr/bin/env bash
# The perfdata writer against the stock readers: a synthetic recording whose
# samples point into a real ELF (build/fixtures/synth_target) and into real
# kernel functions must read in perf script / report / buildid-list and
# hotspot exactly as the samples were written, with no warning.
source "$(dirname "$0")/lib.sh"
need_synth
ELF=$FIX/synth_target
[ -r /proc/kallsyms ] && [ "$(awk '$3 == "_text" { print $1 }' /proc/kallsyms)" != 0000000000000000 ] ||
	skip "kernel addresses hidden in /proc/kallsyms"

# 60% synth_leaf_a, 30% synth_leaf_b, 10% in ksys_write called from synth_work.
stacks=(
	'600:u:synth_leaf_a,u:synth_work,u:main'
	'300:u:synth_leaf_b,u:synth_work,u:main'
	'100:k:ksys_write,k:do_syscall_64,u:synth_work,u:main'
)
"$SYNTH" -o "$T/f.data" --elf "$ELF" --pid 4242 --lost 7 \
	--snapshot "$T/killed.data" --snapshot-at 450 "${stacks[@]}"

# perf script: names for user and kernel frames, right pid/comm, no warnings.
run_clean "$T/script.txt" perf script -i "$T/f.data"
[ "$(grep -c 'cpu-clock:' "$T/script.txt")" = 1000 ] || fail "expected 1000 samples in perf script"
assert_grep '^synth_target +4242 ' "$T/script.txt" "comm/pid of samples"
assert_grep 'synth_leaf_a\+0x1 \(.*synth_target\)' "$T/script.txt"
assert_grep 'synth_work\+0x5 \(.*synth_target\)' "$T/script.txt"
assert_grep 'ksys_write\+0x1 \(\[kernel\.kallsyms\]\)' "$T/script.txt"
assert_no_grep '\[unknown\]' "$T/script.txt" "every frame resolves"

# perf report: self shares as written, lost samples counted.
run_clean "$T/report.txt" perf report -i "$T/f.data" --stdio --no-children --sort sym
assert_range "synth_leaf_a share" "$(self_share "$T/report.txt" synth_leaf_a)" 59.9 60.1
assert_range "synth_leaf_b share" "$(self_share "$T/report.txt" synth_leaf_b)" 29.9 30.1
assert_range "ksys_write share" "$(self_share "$T/report.txt" ksys_write)" 9.9 10.1
assert_grep '^# Total Lost Samples: 7$' "$T/report.txt"
assert_grep "^# Samples: 1000 +of event 'cpu-clock'" "$T/report.txt"

# Header features.
run_clean "$T/header.txt" perf report -i "$T/f.data" --header-only
for f in '# hostname : ' '# os release : ' '# perf version : [0-9]' '# arch : x86_64' \
	'# nrcpus online : [0-9]' '# nrcpus avail : [0-9]' '# cpudesc : ' '# cpuid : ' \
	'# total memory : [0-9]+ kB' '# cmdline : .*perfdata-synth' '# event : name = cpu-clock' \
	'# CPU_TOPOLOGY info available' '# time of first sample : ' '# clockid: monotonic' \
	'# reference time: '; do
	assert_grep "$f" "$T/header.txt" "header lacks /$f/"
done

# Build-ids: the fixture's (as readelf sees it) and the kernel's.
want=$(readelf -n "$ELF" | sed -n 's/.*Build ID: //p')
run_clean "$T/bids.txt" perf buildid-list -i "$T/f.data"
assert_grep "^$want .*synth_target$" "$T/bids.txt" "fixture build-id"
assert_grep '^[0-9a-f]{40} \[kernel\.kallsyms\]$' "$T/bids.txt" "kernel build-id"

# Pipe mode: the same samples through perf script -i -.
fields=comm,pid,ip,sym,dso
run_clean "$T/file.f" perf script -i "$T/f.data" -F "$fields"
"$SYNTH" -o - --pipe --elf "$ELF" --pid 4242 "${stacks[@]}" > "$T/p.data"
run_clean "$T/pipe.f" perf script -i - -F "$fields" < "$T/p.data"
cmp -s "$T/file.f" "$T/pipe.f" || { diff "$T/file.f" "$T/pipe.f" | head; fail "pipe and file mode differ"; }
run_clean "$T/pbids.txt" perf buildid-list -i - < "$T/p.data"
assert_grep "^$want .*synth_target$" "$T/pbids.txt" "build-id in pipe mode"

# A writer killed after its checkpoint at sample 450: the file reads up to it.
run_clean "$T/killed.txt" perf script -i "$T/killed.data"
[ "$(grep -c 'cpu-clock:' "$T/killed.txt")" = 450 ] || fail "killed file: expected 450 samples"

# hotspot's parser counts the same samples.
PARSER=/usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser
"$PARSER" --input "$T/f.data" --print-stats > "$T/hotspot.txt" 2>&1 || fail "hotspot-perfparser failed"
assert_grep '^samples: 1000$' "$T/hotspot.txt"
assert_grep '^samples time violations: 0$' "$T/hotspot.txt"
echo "writer output reads in perf script/report/buildid-list and hotspot"
