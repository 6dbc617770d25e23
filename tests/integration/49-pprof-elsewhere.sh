#!/bin/bash
# Converting where the recorded binary is not at its path (another machine):
# without help its frames stay addresses; --symfs (a copy of the machine's
# files), perf's build-id cache (~/.debug, what `perf archive` carries) and
# --debug-dir (a stripped binary plus its separate debug file) each bring
# the names back; --no-symbolize keeps runtime addresses, mappings and
# build-ids from which a backend (here addr2line) finds the same functions.
# Also --kallsyms with a copy.
. "$TOP/tests/integration/lib.sh"
need_tool perf linux-perf
need_tool go golang-go
need_tool objcopy binutils
export PPROF_TMPDIR=$T

mkdir -p "$T/bin" "$T/home" "$T/empty"
cp "$FIX/pp_shares" "$T/bin/pp_shares"
# perf record puts every binary with samples into $HOME/.debug (the build-id cache).
HOME=$T/home perf record -q -e cpu-clock -g -o "$T/perf.data" -- "$T/bin/pp_shares" 0.3 \
	2>"$T/rec.err" || { cat "$T/rec.err" >&2; fail "perf record failed"; }
bid=$(HOME=$T/home perf buildid-list -i "$T/perf.data" 2>/dev/null | awk '$2 ~ /pp_shares$/ { print $1 }')
[ -n "$bid" ] || fail "no build-id recorded for pp_shares"
# The binary leaves its path: it now lives under a "root file system" copy.
mkdir -p "$T/root$T/bin"
mv "$T/bin/pp_shares" "$T/root$T/bin/pp_shares"

convert() { # OUT HOME [bpfrec options...]
	local out=$1 home=$2
	shift 2
	HOME=$home "$BPFREC" pprof -q -i "$T/perf.data" -o "$T/$out.pb.gz" "$@" 2>"$T/$out.err" ||
		{ cat "$T/$out.err" >&2; fail "bpfrec pprof $* failed"; }
	# -symbolize=none: show what the profile holds, not what pprof can add.
	HOME=$T/empty go tool pprof -symbolize=none -top -nodefraction=0 "$T/$out.pb.gz" \
		>"$T/$out.top" 2>"$T/$out.top.err" || { cat "$T/$out.top.err" >&2; fail "go tool pprof failed"; }
}
has_leaves() { grep -qE ' leaf_a$' "$1" && grep -qE ' leaf_b$' "$1" && grep -qE ' leaf_c$' "$1"; }

convert none "$T/empty"
has_leaves "$T/none.top" && fail "names found although the binary is gone"
assert_grep ' 0x[0-9a-f]+$' "$T/none.top" "unnamed frames kept as addresses"

convert symfs "$T/empty" --symfs "$T/root"
has_leaves "$T/symfs.top" || { cat "$T/symfs.top" >&2; fail "--symfs did not find the binary"; }

convert cache "$T/home"
has_leaves "$T/cache.top" || { cat "$T/cache.top" >&2; fail "the build-id cache was not used"; }

# A stripped binary with its debug info in <debug-dir>/.build-id/xx/rest.debug.
mkdir -p "$T/stripped$T/bin" "$T/debug/.build-id/${bid:0:2}"
objcopy --only-keep-debug "$T/root$T/bin/pp_shares" "$T/debug/.build-id/${bid:0:2}/${bid:2}.debug"
objcopy --strip-all "$T/root$T/bin/pp_shares" "$T/stripped$T/bin/pp_shares"
convert strip "$T/empty" --symfs "$T/stripped"
has_leaves "$T/strip.top" && fail "a stripped binary alone gave names"
convert debug "$T/empty" --symfs "$T/stripped" --debug-dir "$T/debug"
has_leaves "$T/debug.top" || { cat "$T/debug.top" >&2; fail "--debug-dir did not find the debug file"; }
HOME=$T/empty go tool pprof -symbolize=none -raw "$T/debug.pb.gz" >"$T/debug.raw" 2>/dev/null
assert_grep ' leaf_a [^ ]*pp_shares\.c:[0-9]+ ' "$T/debug.raw" "file and line from the debug file"

# --no-symbolize: addresses and build-ids only, for a backend with the binaries.
convert raw "$T/empty" --no-symbolize
has_leaves "$T/raw.top" && fail "--no-symbolize wrote names"
HOME=$T/empty go tool pprof -symbolize=none -raw "$T/raw.pb.gz" >"$T/raw.raw" 2>/dev/null
assert_grep "pp_shares $bid" "$T/raw.raw" "the mapping keeps its build-id"
assert_no_grep '\[FN\]' "$T/raw.raw" "has_functions set without names"
# Be that backend: leaf address -> file offset (address - start + offset, in
# pp_shares's mapping) -> addr2line, weighted by each sample's count.
# Mapping lines: "ID: START/LIMIT/OFFSET FILE BUILD-ID"
read -r mid start off <<<"$(awk '/^Mappings/ { on = 1; next } on && $3 ~ /pp_shares$/ {
	sub(/:/, "", $1); split($2, r, "/"); print $1, r[1], r[3] }' "$T/raw.raw")"
[ -n "$mid" ] || fail "no pp_shares mapping"
# "COUNT ADDRESS" for every sample whose leaf location is in that mapping
awk -v mid="M=$mid" 'FNR == NR {
		if ($0 ~ /^Locations/) loc = 1
		else if ($0 ~ /^Mappings/) loc = 0
		else if (loc && $1 ~ /^[0-9]+:$/) { id = $1; sub(/:/, "", id); addr[id] = $2; m[id] = $3 }
		next
	}
	/^Samples:/ { on = 1; getline; next }
	/^Locations/ { on = 0 }
	on && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+:$/ && m[$3] == mid { print $1, addr[$3] }' \
	"$T/raw.raw" "$T/raw.raw" >"$T/leafaddr.txt"
while read -r count addr; do
	printf '%s 0x%x\n' "$count" $((addr - start + off))
done <"$T/leafaddr.txt" >"$T/leaves.txt"
[ -s "$T/leaves.txt" ] || fail "no leaf addresses in pp_shares's mapping"
cut -d' ' -f2 "$T/leaves.txt" | addr2line -f -e "$T/root$T/bin/pp_shares" | awk 'NR % 2' >"$T/names.txt"
paste -d' ' "$T/leaves.txt" "$T/names.txt" |
	awk '{ n[$3] += $1; t += $1 } END { for (f in n) printf "%s %.2f\n", f, 100 * n[f] / t }' >"$T/backend.txt"
cat "$T/backend.txt"
# The leaves' samples: few on an emulated CPU, so the ranges widen by their spread.
n=$(awk '{ t += $1 } END { print t + 0 }' "$T/leaves.txt")
assert_sampled "leaf_a share (addr2line on --no-symbolize)" "$(awk '$1 == "leaf_a" { print $2 }' "$T/backend.txt")" "$n" 52 68
assert_sampled "leaf_c share (addr2line on --no-symbolize)" "$(awk '$1 == "leaf_c" { print $2 }' "$T/backend.txt")" "$n" 6 14

# --kallsyms with a copy of this machine's kallsyms names the kernel as /proc/kallsyms does.
if awk '$3 == "_text" { exit ($1 ~ /^0+$/) }' /proc/kallsyms; then
	cp /proc/kallsyms "$T/kallsyms"
	perf record -q -e cpu-clock -g -o "$T/k.data" -- "$FIX/pp_syscall" 0.1 2>/dev/null
	HOME=$T/empty "$BPFREC" pprof -q -i "$T/k.data" -o "$T/k1.pb.gz" || fail "conversion failed"
	HOME=$T/empty "$BPFREC" pprof -q -i "$T/k.data" -o "$T/k2.pb.gz" --kallsyms "$T/kallsyms" ||
		fail "--kallsyms conversion failed"
	HOME=$T/empty go tool pprof -top -nodefraction=0 "$T/k1.pb.gz" 2>/dev/null | sed 1,3d >"$T/k1.top"
	HOME=$T/empty go tool pprof -top -nodefraction=0 "$T/k2.pb.gz" 2>/dev/null | sed 1,3d >"$T/k2.top"
	assert_grep ' ksys_write$' "$T/k2.top" "kernel names from --kallsyms"
	diff -u "$T/k1.top" "$T/k2.top" >&2 || fail "--kallsyms copy and /proc/kallsyms differ"
fi
echo "ok"
