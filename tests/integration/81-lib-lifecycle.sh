#!/bin/bash
# The recording API's state machine with real BPF (tests/tools/api-lifecycle):
# start twice, poll before start, start after stop and the rest give their
# documented results; live statistics; a failing write callback; a recording
# freed before stop leaves nothing. Its output went to a pipe fd, so it must
# be perf.data's pipe format, and perf must agree with its sample count and
# find lifecycle_spin on top of user space.
. "$TOP/tests/integration/lib.sh"
need_root
need_tool perf linux-perf
export HOME=$T
cd "$T"

"$BUILD/tests/tools/api-lifecycle" 2>err.txt | cat >out.data || { cat err.txt >&2; fail "api-lifecycle failed"; }
cat err.txt
assert_no_grep FAIL err.txt
samples=$(sed -n 's/^api-lifecycle: \([0-9]*\) samples$/\1/p' err.txt)
[ -n "$samples" ] && [ "$samples" -gt 0 ] || fail "api-lifecycle recorded nothing"
[ "$(head -c 8 out.data)" = PERFILE2 ] || fail "not perf.data"
[ "$(od -An -tu8 -j8 -N8 out.data | tr -d ' ')" = 16 ] ||
	fail "a pipe fd did not get the pipe format (header size is not 16)"
run_clean script.txt perf script -i - -G -F tid <out.data
[ "$(wc -l <script.txt)" = "$samples" ] ||
	fail "perf script sees $(wc -l <script.txt) samples, the API said $samples"
run_clean report.txt perf report -i - --stdio --no-children -g none --sort sym <out.data
# On top of the user-space functions, though not a majority: the recorder
# works in this very process (building the unwind tables of its files takes
# a share), and what it costs the kernel (copies, page clearing, wake-ups)
# weighs more or less beside the spin as the machine goes: 13 % against 8 %
# in an emulated VM on 6.1.
top=$(awk '$1 ~ /%$/ && $2 == "[.]" { print $NF; exit }' report.txt)
[ "$top" = lifecycle_spin ] || { head -20 report.txt >&2; fail "on top in user space: $top, not lifecycle_spin"; }
[ ! -e discarded.data ] || fail "discarded.data was left behind"
echo ok
