#!/bin/bash
# Disk full: on a 2 MB tmpfs the recording stops with one line naming the
# file and the error, exits 1 (also with a launched command), stops the
# command, and leaves a file perf reads without a warning, up to its last
# complete round.
. "$(dirname "$0")/lib.sh"
need_root

mkdir "$T/mnt"
mount -t tmpfs -o size=2m none "$T/mnt" || skip "cannot mount a tmpfs"
trap 'umount "$T/mnt" 2>/dev/null || true; rm -rf "$T"' EXIT
cd "$T"

# -g -a at 4999 Hz writes ~2 MB/s: the disk fills in about a second.
rc=0
timeout 60 "$BPFREC" record -a -g -F 4999 -o mnt/full.data -- "$FIX/rec_sleepspin" 0 30.5 \
	2>"$T/err.txt" || rc=$?
cat "$T/err.txt"
[ "$rc" = 1 ] || fail "bpfrec exited $rc on a full disk, expected 1"
grep -v '^\[ bpfrec record: Captured' "$T/err.txt" >"$T/errors.txt" || true
[ "$(wc -l <"$T/errors.txt")" = 1 ] || fail "expected exactly one error line"
assert_grep "^bpfrec record: cannot write 'mnt/full.data': No space left on device: " "$T/errors.txt"
pgrep -f "rec_sleepspin 0 30.5" >/dev/null && fail "the launched command still runs"

run_clean "$T/report.txt" perf report -i mnt/full.data --stdio --no-children -g none --sort comm,sym
assert_grep 'rec_sleepspin +\[\.\] late_spin$' "$T/report.txt" "the full file lost its samples"
run_clean "$T/script.txt" perf script -i mnt/full.data -F pid
samples=$(sed -n 's/.*(\([0-9]*\) samples, .*/\1/p' "$T/err.txt")
echo "perf reads $(wc -l <"$T/script.txt") samples; bpfrec wrote $samples before the error"
assert_range "samples kept" "$samples" 1000 1000000000
[ "$(wc -l <"$T/script.txt")" = "$samples" ] || fail "bpfrec says it kept $samples samples"
