#!/bin/bash
# A program in another root, recorded, exited, its files deleted: the
# recording must still name its functions. Two roots: a chroot (maps prints
# our path of its files) and a container (its own mount namespace after
# pivot_root: maps prints the container's path, which on the host is another
# file or none). bpfrec record copies the files with samples into the
# build-id cache in $HOME/.debug, reading them through the process's own
# root; perf report and bpfrec pprof then find them there. The shares are
# the fixture's (leaf_a : leaf_b : leaf_c = 6 : 3 : 1). With -N nothing is
# copied and the names are gone: the cache is what names them (stock perf
# record names none here either).
. "$(dirname "$0")/lib.sh"
need_root
for tool in perf go chroot unshare pivot_root ldd; do
	command -v "$tool" >/dev/null || fail "needs $tool"
done
export PPROF_TMPDIR=$T

# make_tree DIR: pp_shares as DIR/bin/pp_shares, with the libraries it loads.
make_tree() {
	mkdir -p "$1/bin"
	cp "$FIX/pp_shares" "$1/bin/"
	for lib in $(ldd "$FIX/pp_shares" | grep -o '/[^ ]*'); do
		mkdir -p "$1$(dirname "$lib")"
		cp "$lib" "$1$lib"
	done
}

# check_names NAME DATA: perf report and bpfrec pprof name leaf_a/b/c with the fixture's shares.
check_names() {
	local name=$1 data=$2 n
	run_clean "$T/$name.report" perf report -i "$data" --stdio --no-children --sort sym -g none
	"$BPFREC" pprof -q -i "$data" -o "$T/$name.pb.gz" || fail "$name: bpfrec pprof failed"
	[ "$(stat -c %a "$T/$name.pb.gz")" = 600 ] || fail "$name: profile is not mode 0600"
	run_clean "$T/$name.top" go tool pprof -top -nodefraction=0 "$T/$name.pb.gz"
	for f in leaf_a leaf_b leaf_c; do
		echo "$name: $f perf report $(self_share "$T/$name.report" $f)%," \
			"go tool pprof $(flat_share "$T/$name.top" $f)%"
	done
	assert_leaf "$name: leaf_a among the leaves (perf)" "$T/$name.report" leaf_a 52 68
	assert_leaf "$name: leaf_b among the leaves (perf)" "$T/$name.report" leaf_b 24 36
	assert_leaf "$name: leaf_c among the leaves (perf)" "$T/$name.report" leaf_c 6 14
	# pprof's profile holds the same samples as perf's report: the same
	# range, widened as few samples need (assert_sampled; 6.1 under TCG once
	# gave 43 leaf samples, leaf_a 74 % of them).
	n=$(awk -v t="$(report_samples "$T/$name.report")" \
		-v a="$(self_share "$T/$name.report" leaf_a)" -v b="$(self_share "$T/$name.report" leaf_b)" \
		-v c="$(self_share "$T/$name.report" leaf_c)" 'BEGIN { printf "%d\n", t * (a + b + c) / 100 }')
	assert_sampled "$name: leaf_a among the leaves (pprof)" "$(leaf_share "$T/$name.top" flat_share leaf_a)" "$n" 52 68
	assert_sampled "$name: leaf_b among the leaves (pprof)" "$(leaf_share "$T/$name.top" flat_share leaf_b)" "$n" 24 36
	assert_sampled "$name: leaf_c among the leaves (pprof)" "$(leaf_share "$T/$name.top" flat_share leaf_c)" "$n" 6 14
}

# record NAME ROOT_DIR [record options] -- command: in a fresh HOME, verbose.
record() {
	local name=$1
	shift
	export HOME=$T/home-$name
	mkdir -p "$HOME"
	"$BPFREC" record -v -g -o "$T/$name.data" "$@" 2>"$T/$name.err" ||
		{ cat "$T/$name.err" >&2; fail "$name: bpfrec record exited $?"; }
	grep 'build-id cache' "$T/$name.err" || true
}

# The path the recording gives pp_shares, and its build-id.
recorded_file() {
	perf buildid-list -i "$1" 2>/dev/null | awk '$2 ~ /\/bin\/pp_shares$/ { print $1, $2; exit }'
}

# ---- chroot ----
make_tree "$T/chroot"
record chroot -- chroot "$T/chroot" /bin/pp_shares
read -r bid path <<<"$(recorded_file "$T/chroot.data")"
echo "chroot: pp_shares recorded as $path, build-id $bid"
# As the kernel reports it (relative to the process's root, as perf record
# writes it) or as our /proc/PID/maps shows it (the host's path): both name it.
[ "$path" = /bin/pp_shares ] || [ "$path" = "$T/chroot/bin/pp_shares" ] ||
	fail "chroot: pp_shares recorded as '$path'"
cmp -s "$HOME/.debug$path/$bid/elf" "$FIX/pp_shares" || fail "chroot: no copy of pp_shares in the cache"
[ "$(readlink "$HOME/.debug/.build-id/${bid:0:2}/${bid:2}")" = "../..$path/$bid" ] ||
	fail "chroot: the .build-id link is not perf's"
assert_grep "build-id cache .* [1-9][0-9]* files copied" "$T/chroot.err" "chroot: nothing copied"
rm -rf "$T/chroot"
check_names chroot "$T/chroot.data"

# ---- a container: its own mount namespace and root ----
make_tree "$T/ctr"
mkdir "$T/ctr/old"
record ctr -- unshare -m --propagation private sh -c \
	'mount --bind "$1" "$1" && cd "$1" && pivot_root . old && exec /bin/pp_shares' sh "$T/ctr"
read -r bid path <<<"$(recorded_file "$T/ctr.data")"
echo "container: pp_shares recorded as $path, build-id $bid"
[ "$path" = /bin/pp_shares ] || fail "container: pp_shares recorded as '$path'"
cmp -s "$HOME/.debug/bin/pp_shares/$bid/elf" "$FIX/pp_shares" ||
	fail "container: no copy of pp_shares in the cache"
rm -rf "$T/ctr"
check_names ctr "$T/ctr.data"

# ---- -N: no copies, and then no names ----
make_tree "$T/chroot"
record nocache -N -- chroot "$T/chroot" /bin/pp_shares
[ ! -e "$HOME/.debug" ] || fail "-N: the build-id cache was written: $(find "$HOME/.debug" | head -5)"
rm -rf "$T/chroot"
perf report -i "$T/nocache.data" --stdio --no-children --sort sym -g none >"$T/nocache.report" 2>/dev/null
assert_no_grep 'leaf_a' "$T/nocache.report" "-N: leaf_a named without a cache (is the test meaningful?)"
echo "ok"
