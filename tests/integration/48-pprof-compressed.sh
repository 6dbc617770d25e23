#!/bin/bash
# perf record -z: records travel zstd-compressed inside COMPRESSED records
# (file and pipe). The profile must hold every sample with perf report's
# shares; a corrupt compressed record is a one-line error, not a short profile.
. "$TOP/tests/integration/lib.sh"
need_tool perf linux-perf
need_tool go golang-go
export HOME=$T PPROF_TMPDIR=$T

perf record -q -z -e cpu-clock -g -o "$T/z.data" -- "$FIX/pp_shares" 0.5 2>"$T/rec.err" ||
	fail "perf record -z failed (linux-perf from tools/deps.sh has zstd): $(tail -n 1 "$T/rec.err")"
grep -q '^# compressed : Zstd' <(perf report -i "$T/z.data" --stdio --header-only 2>/dev/null) ||
	fail "this perf does not compress (no zstd support): install Debian's linux-perf"
run_clean "$T/report.txt" perf report -i "$T/z.data" --stdio --no-children --sort sym
run_clean "$T/script.txt" perf script -i "$T/z.data" -F event,ip
"$BPFREC" pprof -i "$T/z.data" -o "$T/z.pb.gz" 2>"$T/conv.err" ||
	{ cat "$T/conv.err" >&2; fail "bpfrec pprof failed on a compressed file"; }
run_clean "$T/top.txt" go tool pprof -top -nodefraction=0 "$T/z.pb.gz"
run_clean "$T/raw.txt" go tool pprof -raw "$T/z.pb.gz"

n_perf=$(grep -c cpu-clock "$T/script.txt") n_prof=$(raw_samples "$T/raw.txt")
echo "samples: perf script $n_perf, profile $n_prof"
[ "$n_perf" = "$n_prof" ] || fail "profile has $n_prof samples, perf $n_perf"
for f in leaf_a leaf_b leaf_c; do
	a=$(self_share "$T/report.txt" "$f")
	b=$(flat_share "$T/top.txt" "$f")
	echo "$f: perf report $a%, go tool pprof ${b:-0}%"
	assert_range "$f share difference" "$(awk -v a="$a" -v b="${b:-0}" 'BEGIN { d = a - b; print d < 0 ? -d : d }')" 0 1.5
done

# Pipe mode.
perf record -q -z -e cpu-clock -g -o - -- "$FIX/pp_shares" 0.3 2>/dev/null >"$T/zp.data"
run_clean "$T/pscript.txt" sh -c "perf script -i - -F event,ip < '$T/zp.data'"
"$BPFREC" pprof -q -i - -o "$T/zp.pb.gz" <"$T/zp.data" || fail "compressed pipe failed"
run_clean "$T/praw.txt" go tool pprof -raw "$T/zp.pb.gz"
[ "$(grep -c cpu-clock "$T/pscript.txt")" = "$(raw_samples "$T/praw.txt")" ] ||
	fail "compressed pipe: sample counts differ"

# Damage the first compressed record's payload: an error naming the offset.
data_off=$(od -An -t u8 -j 40 -N 8 "$T/z.data" | tr -d ' ')
off=$data_off
for _ in $(seq 1000); do
	type=$(od -An -t u4 -j "$off" -N 4 "$T/z.data" | tr -d ' ')
	size=$(od -An -t u2 -j $((off + 6)) -N 2 "$T/z.data" | tr -d ' ')
	[ "$type" = 81 ] && break
	off=$((off + size))
done
[ "$type" = 81 ] || fail "no COMPRESSED record found"
cp "$T/z.data" "$T/bad.data"
head -c 64 /dev/zero | dd of="$T/bad.data" bs=1 seek=$((off + 8)) conv=notrunc 2>/dev/null
rc=0
"$BPFREC" pprof -i "$T/bad.data" -o "$T/bad.pb.gz" 2>"$T/err" || rc=$?
echo "corrupt: exit $rc: $(cat "$T/err")"
[ "$rc" = 1 ] && [ "$(wc -l <"$T/err")" = 1 ] || fail "corrupt compressed data: exit $rc"
grep -qE "compressed record at offset 0x[0-9a-f]+" "$T/err" || fail "error does not name the offset"
[ ! -e "$T/bad.pb.gz" ] || fail "a profile was written from corrupt data"
echo "ok"
