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
# One error line, exit 1; perf reads the samples bpfrec says it kept.
record_until_full "$T/err.txt"
pgrep -f "rec_sleepspin 0 30.5" >/dev/null && fail "the launched command still runs"

run_clean "$T/report.txt" perf report -i mnt/full.data --stdio --no-children -g none --sort comm,sym
assert_grep 'rec_sleepspin +\[\.\] late_spin$' "$T/report.txt" "the full file lost its samples"
assert_range "samples kept" "$(kept_samples "$T/err.txt")" 1000 1000000000
