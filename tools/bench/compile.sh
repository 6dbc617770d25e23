#!/bin/sh
# tools/bench/compile.sh - the "compile" workload of scenario 7: gcc -O2 -g
# -c of the fixtures' C sources, one after the other, ROUNDS times: gcc,
# cc1 and as processes of tens to hundreds of ms, Debian's own (no frame
# pointers; as stripped). Writes what the workloads of tools/bench report:
#   compile.sh FIXTURES_SRC OUT_DIR ROUNDS -r REPORT
# REPORT gets elapsed_ns and cpu_ns (bench_rusage's, children included).
set -u
src=$1 out=$2 rounds=$3
[ "$4" = -r ] || { echo "compile.sh: usage: SRC OUT ROUNDS -r REPORT" >&2; exit 2; }
report=$5
rusage=$(dirname "$0")/../../build/fixtures/bench_rusage
[ -n "${RUSAGE:-}" ] && rusage=$RUSAGE
"$rusage" -o "$out/compile.ru" -- sh -c '
	src=$1 out=$2 rounds=$3
	for r in $(seq "$rounds"); do
		for f in cfi_tree nofp_work rec_work unw_chain sched_io pp_shares; do
			gcc -O2 -g -I"$src" -c "$src/$f.c" -o "$out/$f.o" || exit 1
		done
	done' sh "$src" "$out" "$rounds" || exit 1
{
	echo "elapsed_ns=$(sed -n 's/^wall_ns=//p' "$out/compile.ru")"
	echo "cpu_ns=$(sed -n 's/^cpu_ns=//p' "$out/compile.ru")"
} >"$report"
