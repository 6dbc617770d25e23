#!/bin/bash
# bpfrec record -z: records travel zstd-compressed in COMPRESSED records, as
# perf record -z writes them. perf report, perf script, bpfrec pprof and
# bpfrec dump read the file and its pipe-mode stream with every sample the
# summary line counts and no warning; the header shows the compression; a
# killed recorder, a full disk and size rotation all leave files perf reads.
. "$(dirname "$0")/lib.sh"
need_root
cd "$T"

# 1. File mode, against an uncompressed recording of the same fixture.
"$BPFREC" record -z -F 999 -g -o z.data -- "$FIX/rec_work" 2>"$T/z.err" ||
	{ cat "$T/z.err"; fail "bpfrec record -z exited non-zero"; }
"$BPFREC" record -F 999 -g -o plain.data -- "$FIX/rec_work" 2>"$T/plain.err" ||
	{ cat "$T/plain.err"; fail "bpfrec record exited non-zero"; }
cat "$T/z.err" "$T/plain.err"
n_z=$(kept_samples "$T/z.err") n_plain=$(kept_samples "$T/plain.err")
run_clean "$T/header.txt" perf report -i z.data --header-only
assert_grep '^# compressed : Zstd, level = 1, ratio = [0-9]+' "$T/header.txt" "no compression header"
run_clean "$T/report.txt" perf report -i z.data --stdio --no-children -g none
assert_grep 'Total Lost Samples: 0' "$T/report.txt"
a=$(self_share "$T/report.txt" leaf_a) b=$(self_share "$T/report.txt" leaf_b)
echo "-z: leaf_a $a%, leaf_b $b%"
assert_leaf "leaf_a among the leaves" "$T/report.txt" leaf_a 52 68
assert_leaf "leaf_b among the leaves" "$T/report.txt" leaf_b 24 36
run_clean "$T/script.txt" perf script -i z.data -F event,sym
n_script=$(grep -c 'cpu-clock' "$T/script.txt")
echo "samples: summary $n_z, perf script $n_script"
[ "$n_script" = "$n_z" ] || fail "perf script reads $n_script samples, bpfrec wrote $n_z"
# Bytes per sample: the compressed file is several times smaller.
bps_z=$(( $(stat -c %s z.data) / n_z )) bps_plain=$(( $(stat -c %s plain.data) / n_plain ))
echo "bytes per sample: -z $bps_z, plain $bps_plain"
[ $((bps_z * 3)) -lt "$bps_plain" ] || fail "-z saves less than 3x: $bps_z vs $bps_plain bytes per sample"

# bpfrec dump and bpfrec pprof read it too, with every sample.
"$BPFREC" dump -i z.data >"$T/dump.txt" 2>"$T/dump.err" || { cat "$T/dump.err"; fail "dump failed"; }
assert_grep '^# feature COMPRESSED: zstd level 1 ' "$T/dump.txt"
assert_grep '^0x[0-9a-f]+\+SAMPLE ' "$T/dump.txt" "dump does not show the decompressed samples"
[ "$(grep -c '^0x[0-9a-f]*+SAMPLE ' "$T/dump.txt")" = "$n_z" ] || fail "dump counts other samples"
"$BPFREC" pprof -q -i z.data -o z.pb.gz || fail "bpfrec pprof failed on a -z file"
HOME=$T go tool pprof -raw z.pb.gz >"$T/raw.txt" 2>"$T/go.err" || { cat "$T/go.err"; fail "go tool pprof"; }
n_prof=$(awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+:$/ { t += $1 } END { print t + 0 }' "$T/raw.txt")
[ "$n_prof" = "$n_z" ] || fail "pprof holds $n_prof samples, bpfrec wrote $n_z"

# 2. Pipe mode, read live by perf script and by bpfrec pprof.
"$BPFREC" record -z -F 999 -g -o - -- "$FIX/rec_work" 2>"$T/pipe.err" >zp.data ||
	{ cat "$T/pipe.err"; fail "bpfrec record -z -o - failed"; }
n_pipe=$(kept_samples "$T/pipe.err")
run_clean "$T/pscript.txt" sh -c "perf script -i - -F event < zp.data"
[ "$(grep -c cpu-clock "$T/pscript.txt")" = "$n_pipe" ] || fail "pipe: perf script count differs"
"$BPFREC" record -q -z -F 999 -g -o - -- "$FIX/rec_work" 2>/dev/null | perf script -i - -F sym \
	>"$T/live.txt" 2>"$T/live.err" || fail "live pipe into perf script failed"
[ ! -s "$T/live.err" ] || { cat "$T/live.err"; fail "perf script warned on the live -z pipe"; }
assert_grep 'leaf_a' "$T/live.txt"
"$BPFREC" pprof -q -i - -o zp.pb.gz <zp.data || fail "bpfrec pprof failed on a -z pipe"

# 3. Killed with SIGKILL: readable up to the last checkpoint, about a second.
"$FIX/rec_sleepspin" 0 600 & spin=$!	# the trap ends it
trap 'kill $spin 2>/dev/null || true; umount "$T/mnt" 2>/dev/null || true; rm -rf "$T"' EXIT
kill9_recording k.data 30000 -z -a -g
kill $spin 2>/dev/null || true
"$BPFREC" pprof -q -i k.data -o k.pb.gz || fail "bpfrec pprof failed on a killed -z file"

# 4. Disk full: one line, exit 1, a readable file with the samples it claims.
mkdir "$T/mnt"
mount -t tmpfs -o size=256k none "$T/mnt" || fail "cannot mount a tmpfs"
record_until_full "$T/full.err" -z
umount "$T/mnt"

# 5. Rotation by size counts compressed bytes on disk: 16K files, and the
# recording runs until two are retired (however many samples a second this
# machine gives), then stops on SIGINT.
"$FIX/rec_sleepspin" 0 600 & spin=$!
"$BPFREC" record -q -z -a -g -F 4999 --switch-output=16K -o rot.data &
rec=$!
for _ in $(seq 1200); do
	[ "$(ls rot.data.* 2>/dev/null | wc -l)" -ge 2 ] && break
	kill -0 $rec 2>/dev/null || break
	sleep 0.25
done
kill -INT $rec 2>/dev/null
wait $rec || fail "-z --switch-output exited $?"
kill $spin 2>/dev/null; wait $spin 2>/dev/null || true
ls rot.data.* >"$T/rot.list" || fail "no rotated files"
nfiles=$(wc -l <"$T/rot.list")
echo "rotation: $nfiles files, of $(du -b rot.data.* | awk '{ printf "%s%d", (NR > 1 ? ", " : ""), $1 }') bytes"
[ "$nfiles" -ge 2 ] || fail "-z with --switch-output=16K wrote $nfiles file(s)"
# Retired for their size: each but the last (cut by SIGINT) has 16K of compressed records.
sed '$d' "$T/rot.list" | while read -r f; do
	[ "$(stat -c %s "$f")" -ge 16384 ] || fail "$f: $(stat -c %s "$f") bytes, retired before 16K"
done
total=0
while read -r f; do
	run_clean "$T/r.txt" perf script -i "$f" -F pid
	total=$((total + $(wc -l <"$T/r.txt")))
	grep -q '^# compressed : Zstd' <(perf report -i "$f" --header-only 2>/dev/null) ||
		fail "$f lacks the compression header"
done <"$T/rot.list"
echo "rotation: $total samples in $nfiles files"
[ "$total" -gt 0 ] || fail "rotated -z files hold no samples"
