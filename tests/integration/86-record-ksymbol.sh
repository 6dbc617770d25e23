#!/bin/bash
# KSYMBOL records: each file names the JIT-compiled BPF functions loaded
# when it starts, bpfrec's own among them, as perf record does, so that perf
# shows a sample in one as bpf_prog_<tag>_<name> instead of [unknown]. Every
# name is the one /proc/kallsyms gives that address. System-wide, with a
# busy fixture and a loop of execs (bpfrec's task trackers run in each fork,
# exec and exit, so some samples land in them); then --switch-output, whose
# every file needs the records again.
. "$(dirname "$0")/lib.sh"
need_root

cd "$T"
"$BPFREC" record -q -a -g --duration 2 -o a.data 2>"$T/rec.err" &
rec=$!
# The header is written once the programs are loaded and attached.
wait_until $rec size_over a.data 0 || { cat "$T/rec.err" >&2; fail "recording never started"; }
# kallsyms while recording: at the start, and again after the workload.
grep '\[bpf\]$' /proc/kallsyms >"$T/kallsyms.txt" || true
"$FIX/rec_work" 0.5 2>/dev/null &
work=$!
for _ in $(seq 1000); do
	/bin/true
	kill -0 $rec 2>/dev/null || break
done
wait $work || true
grep '\[bpf\]$' /proc/kallsyms >>"$T/kallsyms.txt" || true
rc=0; wait $rec || rc=$?
cat "$T/rec.err"
[ "$rc" = 0 ] || fail "bpfrec record -a exited $rc"

# The records as perf reads them: "... PERF_RECORD_KSYMBOL addr A len L type 1 flags 0x0 name N".
run_clean "$T/events.txt" perf script -i a.data --show-bpf-events
sed -n 's/.*PERF_RECORD_KSYMBOL addr \([0-9a-f]*\) len \([0-9]*\) type \([0-9]*\) flags \([0-9a-fx]*\) name \(.*\)$/\1 \2 \3 \4 \5/p' \
	"$T/events.txt" >"$T/ksyms.txt"
nr=$(wc -l <"$T/ksyms.txt")
echo "KSYMBOL records: $nr"
[ "$nr" -gt 0 ] || { head -n 20 "$T/events.txt" >&2; fail "no KSYMBOL record in the file"; }
awk '$3 != 1 || $4 != "0x0" { print "not a BPF function being registered: " $0; bad++ } END { exit bad > 0 }' \
	"$T/ksyms.txt" || fail "KSYMBOL records of another type or with flags"
grep -vE '^[0-9a-f]{16} [0-9]+ 1 0x0 bpf_prog_[0-9a-f]{16}(_[A-Za-z0-9_.]+)?$' "$T/ksyms.txt" >"$T/odd.txt" || true
[ ! -s "$T/odd.txt" ] || { cat "$T/odd.txt" >&2; fail "KSYMBOL names not of the form bpf_prog_<16 hex digits>_<name>"; }
# bpfrec's own programs (bpf/profile.bpf.c): the sampler (on_sample, or
# on_sample_cfi with -g's unwinder) and the task trackers.
for p in 'on_sample[a-z_]*' on_fork on_exec on_exit; do
	assert_grep " bpf_prog_[0-9a-f]{16}_$p\$" "$T/ksyms.txt" "bpfrec's program $p is not named"
done

# Each name is what kallsyms listed for its address. A program of someone
# else's may have gone before kallsyms was read: its address is then in
# neither list, and only counted.
awk 'FNR == NR { named[$1 " " $3] = 1; at[$1] = 1; next }
	{ if (($1 " " $5) in named) ok++; else if ($1 in at) { bad++; print "kallsyms names " $1 " otherwise than " $5 } else gone++ }
	END { printf "KSYMBOL names as in kallsyms: %d, programs gone since: %d, misnamed: %d\n", ok, gone, bad
	      exit !(bad == 0 && ok > 0) }' "$T/kallsyms.txt" "$T/ksyms.txt" ||
	fail "KSYMBOL names differ from /proc/kallsyms"

# bpfrec dump shows them: range, type and name.
"$BPFREC" dump -i a.data >"$T/dump.txt" || fail "bpfrec dump failed"
assert_grep '^0x[0-9a-f]+ +KSYMBOL +size +[0-9]+ .* \[0x[0-9a-f]+, \+0x[0-9a-f]+\) type 1 \(bpf\) flags 0 bpf_prog_[0-9a-f]{16}_on_fork ' \
	"$T/dump.txt" "bpfrec dump does not show the KSYMBOL records"

# Samples in those functions are named after them, in a map of the same
# name; no kernel frame inside one is [unknown]. Addresses compare as
# 16-digit hex strings: the ends are computed here (awk has no 64-bit ints).
while read -r addr len _ _ name; do
	printf '%s %016x %s\n' "$addr" $((0x$addr + len)) "$name"
done <"$T/ksyms.txt" >"$T/ranges.txt"
run_clean "$T/script.txt" perf script -i a.data -F ip,sym,dso
awk 'FNR == NR { lo[++n] = $1; hi[n] = $2; name[n] = $3; next }
	length($1) == 16 && $1 >= "ffff800000000000" {
		for (i = 1; i <= n; i++) {
			if ($1 < lo[i] || $1 >= hi[i]) continue
			inbpf++
			if ($2 != name[i] || $NF != "(" name[i] ")") { bad++; if (bad < 5) print "in " name[i] ": " $0 }
			break
		}
	}
	END { printf "kernel frames in BPF functions: %d, misnamed: %d\n", inbpf, bad; exit bad > 0 }' \
	"$T/ranges.txt" "$T/script.txt" || fail "samples in BPF functions are not named after them"
run_clean "$T/report.txt" perf report -i a.data --stdio --no-children -g none --sort dso,sym
if grep -qE '^ +[0-9.]+% +bpf_prog_' "$T/report.txt"; then
	assert_grep '^ +[0-9.]+% +(bpf_prog_[0-9a-f]{16}[A-Za-z0-9_.]*) +\[k\] bpf_prog_[0-9a-f]{16}' \
		"$T/report.txt" "perf report shows a BPF function's dso without its symbol"
fi

# --switch-output: every file starts with the records again.
"$BPFREC" record -q -g --switch-output=1s -o sw.data -- "$FIX/rec_work" 2 2>"$T/sw.err" ||
	{ cat "$T/sw.err" >&2; fail "bpfrec record --switch-output exited $?"; }
files=0
for f in sw.data.*; do
	[ -f "$f" ] || continue
	files=$((files + 1))
	"$BPFREC" dump -i "$f" >"$T/sw.dump" || fail "bpfrec dump $f failed"
	assert_grep ' KSYMBOL .* bpf_prog_[0-9a-f]{16}_on_fork ' "$T/sw.dump" "$f has no KSYMBOL for on_fork"
	run_clean "$T/sw.txt" perf script -i "$f" --show-bpf-events
	assert_grep 'PERF_RECORD_KSYMBOL .* name bpf_prog_[0-9a-f]{16}_on_exec$' "$T/sw.txt" \
		"perf finds no KSYMBOL for on_exec in $f"
done
echo "--switch-output files: $files"
[ "$files" -ge 2 ] || fail "--switch-output=1s over 2 s of CPU left $files files"
