#!/bin/bash
# Bad input: missing, empty, truncated (file and pipe), random bytes, a
# corrupt record. Each must fail with exit 1 and one line on stderr naming
# the input (and the offset, when there is one); no profile may be written,
# no temporary file left, and an older profile of the same name survives.
. "$TOP/tests/integration/lib.sh"
need_tool perf linux-perf

perf record -q -e cpu-clock -g -o "$T/good.data" -- "$FIX/pp_shares" 0.3 2>/dev/null ||
	fail "perf record failed"
perf record -q -e cpu-clock -g -o - -- "$FIX/pp_shares" 0.3 >"$T/good.pipe" 2>/dev/null ||
	fail "perf record -o - failed"
mkdir "$T/out"

# expect_failure NAME PATTERN [bpfrec args...]: stdin may be redirected by the caller.
expect_failure() {
	local name=$1 pattern=$2 rc=0
	shift 2
	echo "old profile" >"$T/out/p.pb.gz"
	"$BPFREC" pprof -o "$T/out/p.pb.gz" "$@" 2>"$T/err" >"$T/stdout" || rc=$?
	echo "$name: exit $rc: $(cat "$T/err")"
	[ "$rc" = 1 ] || fail "$name: exit $rc, expected 1"
	[ "$(wc -l <"$T/err")" = 1 ] || { cat "$T/err" >&2; fail "$name: not a one-line error"; }
	grep -qE -- "$pattern" "$T/err" || fail "$name: error does not match /$pattern/"
	[ "$(cat "$T/out/p.pb.gz")" = "old profile" ] || fail "$name: the existing profile was replaced"
	[ "$(ls -A "$T/out")" = "p.pb.gz" ] || fail "$name: left files behind: $(ls -A "$T/out")"
	[ ! -s "$T/stdout" ] || fail "$name: wrote to stdout"
}

expect_failure "missing file" "$T/nope.data" -i "$T/nope.data"
: >"$T/empty.data"
expect_failure "empty file" "empty.data" -i "$T/empty.data"

size=$(stat -c %s "$T/good.data")
head -c $((size / 2)) "$T/good.data" >"$T/trunc.data"
expect_failure "truncated file" "trunc.data.*(offset|0x[0-9a-f]+)" -i "$T/trunc.data"

head -c 65536 /dev/urandom >"$T/random.data"
expect_failure "random bytes" "random.data" -i "$T/random.data"
{ printf 'PERFILE2'; head -c 4096 /dev/urandom; } >"$T/magic.data"
expect_failure "random bytes after the magic" "magic.data" -i "$T/magic.data"

# A record of size 0 in the middle of the data section (file mode): find the
# data section from the header (offset 40) and zero a record header there.
data_off=$(od -An -t u8 -j 40 -N 8 "$T/good.data" | tr -d ' ')
cp "$T/good.data" "$T/corrupt.data"
# Walk 20 records in, then clobber that record's size.
off=$data_off
for _ in $(seq 20); do
	rsize=$(od -An -t u2 -j $((off + 6)) -N 2 "$T/corrupt.data" | tr -d ' ')
	off=$((off + rsize))
done
printf '\0\0' | dd of="$T/corrupt.data" bs=1 seek=$((off + 6)) conv=notrunc 2>/dev/null
expect_failure "record of size 0" "corrupt.data.*(offset|0x[0-9a-f]+)" -i "$T/corrupt.data"

psize=$(stat -c %s "$T/good.pipe")
# Records are multiples of 8 bytes: a cut at 8k+3 always lands inside one
# (a cut on a boundary would leave a shorter, valid stream).
cut=$((psize * 2 / 3))
head -c $((cut - cut % 8 + 3)) "$T/good.pipe" >"$T/trunc.pipe"
expect_failure "truncated pipe" "stdin.*(offset|0x[0-9a-f]+)" -i - <"$T/trunc.pipe"
head -c 5000 /dev/urandom >"$T/random.pipe"
expect_failure "random pipe" "stdin" -i - <"$T/random.pipe"

# Output problems are errors too, before anything is written.
rc=0
"$BPFREC" pprof -i "$T/good.data" -o "$T/no/such/dir/p.pb.gz" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q 'no/such/dir' "$T/err" ||
	fail "unwritable output: exit $rc: $(cat "$T/err")"

# A write that fails midway (a full file system) leaves the old profile and no
# temporary file; needs root to mount a small tmpfs.
if [ "$(id -u)" = 0 ]; then
	mkdir "$T/full"
	mount -t tmpfs -o size=64k tmpfs "$T/full" || fail "cannot mount a tmpfs"
	trap 'umount "$T/full" 2>/dev/null || true; rm -rf "$T"' EXIT
	echo "old profile" >"$T/full/p.pb.gz"
	cat /dev/zero >"$T/full/filler" 2>/dev/null || true
	rc=0
	"$BPFREC" pprof -i "$T/good.data" -o "$T/full/p.pb.gz" 2>"$T/err" || rc=$?
	echo "full file system: exit $rc: $(cat "$T/err")"
	[ "$rc" = 1 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q 'p.pb.gz' "$T/err" ||
		fail "full file system: exit $rc: $(cat "$T/err")"
	[ "$(cat "$T/full/p.pb.gz")" = "old profile" ] || fail "full file system: the old profile was replaced"
	[ "$(ls -A "$T/full" | sort | tr '\n' ' ')" = "filler p.pb.gz " ] ||
		fail "full file system: left files behind: $(ls -A "$T/full")"
	umount "$T/full"
	trap 'rm -rf "$T"' EXIT
fi

# And the good inputs do convert (the failures above are about the damage).
"$BPFREC" pprof -q -i "$T/good.data" -o "$T/out/good.pb.gz" || fail "good file failed"
"$BPFREC" pprof -q -i - -o "$T/out/goodpipe.pb.gz" <"$T/good.pipe" || fail "good pipe failed"
[ -s "$T/out/good.pb.gz" ] && [ -s "$T/out/goodpipe.pb.gz" ] || fail "good inputs wrote nothing"
# 0600, like perf.data: a profile shows what the programs did.
[ "$(stat -c %a "$T/out/good.pb.gz")" = 600 ] || fail "profile mode $(stat -c %a "$T/out/good.pb.gz")"
echo "ok"
