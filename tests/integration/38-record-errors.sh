#!/bin/bash
# Every way `bpfrec record` refuses to run: a one-line message that names
# the problem, the documented exit code, and no output file left behind
# (an existing perf.data untouched). Plus the output-file rules: an existing
# file becomes perf.data.old, a planted symlink is never followed, mode 0600.
. "$(dirname "$0")/lib.sh"
need_root

ro=$T/ro
cleanup() { umount "$ro" 2>/dev/null || true; rm -rf "$T"; }
trap cleanup EXIT
cd "$T"

# expect_error CODE PATTERN CMD...: exit code, a single stderr line matching
# PATTERN, and neither perf.data nor perf.data.old changed.
expect_error() {
	local code=$1 pattern=$2 rc=0; shift 2
	echo "old contents" >perf.data
	rm -f perf.data.old
	"$@" >"$T/out" 2>"$T/err" || rc=$?
	echo "\$ ${*#$BPFREC } -> $rc: $(cat "$T/err")"
	[ "$rc" = "$code" ] || fail "exit code $rc, expected $code: $*"
	[ "$(wc -l <"$T/err")" = 1 ] || { cat "$T/err"; fail "expected one line on stderr: $*"; }
	assert_grep "^bpfrec record: .*$pattern" "$T/err"
	[ "$(cat perf.data)" = "old contents" ] || fail "perf.data was touched by: $*"
	[ ! -e perf.data.old ] || fail "perf.data.old appeared after: $*"
	[ ! -s "$T/out" ] || fail "stdout not empty after: $*"
}

# Usage errors: exit 2.
expect_error 2 "unknown option '--bogus'" "$BPFREC" record --bogus -a
expect_error 2 "unknown event 'nosuchevent'.*cpu-clock" "$BPFREC" record -e nosuchevent -a
# A generic event that is not a sampling clock or a hardware counter.
expect_error 2 "unknown event 'page-faults'" "$BPFREC" record -e page-faults -a
expect_error 2 "--call-graph 'dwarf,100'.*multiple of 8" "$BPFREC" record --call-graph dwarf,100 -a
expect_error 2 "--call-graph 'lbr'.*give cfi, fp, or dwarf" "$BPFREC" record --call-graph lbr -a
expect_error 2 "cannot sum intervals with --call-graph dwarf" \
	"$BPFREC" record --off-cpu --off-cpu-thresh 100 --call-graph dwarf -a
expect_error 2 "nothing to record" "$BPFREC" record -g
expect_error 2 "-F 'fast'" "$BPFREC" record -F fast -a
expect_error 2 "exclude each other" "$BPFREC" record -p 1 -- true
expect_error 2 "-C 'x'" "$BPFREC" record -C x -a

# Runtime refusals: exit 1.
sleep 0 & gone=$!; wait $gone
expect_error 1 "no such process: -p $gone" "$BPFREC" record -p "$gone" --duration 1
expect_error 1 "CPU 4095 is not online" "$BPFREC" record -C 4095 -a --duration 1
expect_error 1 "output directory '$T/missing' does not exist" \
	"$BPFREC" record -a --duration 1 -o "$T/missing/x.data"
mkdir "$ro" && mount -t tmpfs -o ro,size=1m none "$ro"
expect_error 1 "output directory '$ro' is not writable \\(Read-only file system\\)" "$BPFREC" record -a --duration 1 -o "$ro/x.data"
if [ -e /sys/bus/event_source/devices/cpu ]; then
	echo "this machine has a hardware PMU: not checking the no-PMU message"
else
	expect_error 1 "event 'cycles' is not available: this machine has no hardware PMU.*-e cpu-clock" \
		"$BPFREC" record -e cycles -a --duration 1
fi
# Not root: run as nobody.
chmod 755 "$T"
expect_error 1 "needs CAP_BPF and CAP_PERFMON: run as root" \
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$BPFREC" record -a --duration 1
# No kernel BTF: hide /sys/kernel/btf in a private mount namespace.
expect_error 1 "kernel has no BTF.*CONFIG_DEBUG_INFO_BTF" \
	unshare -m sh -c 'mount -t tmpfs none /sys/kernel/btf && exec "$0" "$@"' \
	"$BPFREC" record -a --duration 1

# The command: 127 not found, 126 not executable.
expect_error 127 "command not found: 'no-such-command-bpfrec'" "$BPFREC" record -- no-such-command-bpfrec
expect_error 126 "cannot execute '/etc/passwd'" "$BPFREC" record -- /etc/passwd

# The command's own exit code, 128+N when signal N killed it.
rc=0; "$BPFREC" record -q -o c.data -- sh -c 'exit 3' || rc=$?
[ "$rc" = 3 ] || fail "exit 3 of the command came back as $rc"
rc=0; "$BPFREC" record -q -o c.data -- sh -c 'kill -9 $$' || rc=$?
[ "$rc" = 137 ] || fail "SIGKILL of the command came back as $rc, expected 137"

# Output rules. An existing perf.data becomes perf.data.old.
rm -f perf.data perf.data.old
echo "previous run" >perf.data
"$BPFREC" record -q -- "$FIX/rec_work" 0.1 || fail "record failed"
[ "$(cat perf.data.old)" = "previous run" ] || fail "perf.data was not renamed to perf.data.old"
[ "$(stat -c %a perf.data)" = 600 ] || fail "perf.data mode $(stat -c %a perf.data), want 600"
run_clean "$T/r.txt" perf report -i perf.data --stdio
# A symlink planted at the output path is not followed.
rm -f perf.data perf.data.old
echo "victim" >"$T/victim"
ln -s "$T/victim" perf.data
"$BPFREC" record -q -- "$FIX/rec_work" 0.1 || fail "record failed"
[ "$(cat "$T/victim")" = "victim" ] || fail "recording wrote through the planted symlink"
[ -L perf.data.old ] || fail "the symlink was not moved aside to perf.data.old"
[ -f perf.data ] && [ ! -L perf.data ] || fail "perf.data is not a regular file"
[ "$(stat -c %a perf.data)" = 600 ] || fail "perf.data mode $(stat -c %a perf.data), want 600"
run_clean "$T/r.txt" perf report -i perf.data --stdio
assert_grep 'leaf_a' "$T/r.txt"
