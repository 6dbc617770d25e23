#!/bin/sh
# make demo: record the bundled workload (tests/fixtures/rec_work: main ->
# work -> leaf_a 60%, leaf_b 30%, leaf_c 10%) with `bpfrec record -g`, then
# show `perf report --stdio` of it.
# Usage: tools/demo.sh [BUILD_DIR]   (after `make all fixtures`)
set -eu

build=${1:-build}
bpfrec=$build/bpfrec
work=$build/fixtures/rec_work
out=$build/demo.perf.data

if [ ! -x "$bpfrec" ] || [ ! -x "$work" ]; then
	echo "demo: $bpfrec or $work is missing: run 'make all fixtures' first" >&2
	exit 1
fi
as_root=""
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		as_root=sudo
	else
		echo "demo: recording needs root (BPF): run 'make demo' as root" >&2
		exit 1
	fi
fi
if ! command -v perf >/dev/null 2>&1; then
	echo "demo: perf is missing: apt-get install linux-perf (or run 'make demo')" >&2
	exit 1
fi

echo "\$ bpfrec record -F 999 -g -o $out -- $work"
$as_root "$bpfrec" record -F 999 -g -o "$out" -- "$work"
echo
echo "\$ perf report -i $out --stdio --no-children"
$as_root perf report -i "$out" --stdio --no-children
