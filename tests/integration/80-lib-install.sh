#!/bin/bash
# libbpfrec as an outside program sees it: `make install` into a DESTDIR,
# the shared library exporting only bpfrec_* behind a versioned soname, the
# public headers clean as C99 and C++, and the two examples of
# Documentation/examples built against the installed copy with
# `pkg-config --cflags --libs bpfrec`, run from another directory, their
# recordings checked with perf and go tool pprof. Then `make uninstall`.
. "$TOP/tests/integration/lib.sh"
need_root
need_tool perf linux-perf
need_tool go golang-go
need_tool pkg-config pkg-config
need_tool nm binutils
need_tool readelf binutils
need_tool g++ g++
export HOME=$T PPROF_TMPDIR=$T
D=$T/root

make -s -C "$TOP" BUILD="$BUILD" install DESTDIR="$D" PREFIX=/usr >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log" >&2; fail "make install failed"; }
for f in bin/bpfrec lib/libbpfrec.a lib/libbpfrec.so.0.1 lib/pkgconfig/bpfrec.pc \
	 include/bpfrec/bpfrec.h include/bpfrec/common.h include/bpfrec/record.h \
	 include/bpfrec/pprof.h include/bpfrec/perfdata.h include/bpfrec/sched.h include/bpfrec/flamegraph.h \
	 share/doc/bpfrec/bpfrec-record.md; do
	[ -f "$D/usr/$f" ] || fail "make install did not install usr/$f"
done
[ "$(readlink "$D/usr/lib/libbpfrec.so.0")" = libbpfrec.so.0.1 ] || fail "libbpfrec.so.0 link"
[ "$(readlink "$D/usr/lib/libbpfrec.so")" = libbpfrec.so.0 ] || fail "libbpfrec.so link"
readelf -d "$D/usr/lib/libbpfrec.so.0.1" >"$T/dyn.txt"
assert_grep 'SONAME.*\[libbpfrec\.so\.0\]' "$T/dyn.txt" "no versioned soname"

# Only the public API is exported, and all of it is.
nm -D --defined-only "$D/usr/lib/libbpfrec.so.0.1" | awk '{ print $3 }' | sort >"$T/exports.txt"
assert_no_grep '^[^b]|^b[^p]|^bp[^f]|^bpf[^r]|^bpfr[^e]|^bpfre[^c]|^bpfrec[^_]' "$T/exports.txt" \
	"symbols other than bpfrec_* are exported"
# The name is the identifier right before "(" (a return type may be a bpfrec_ struct).
grep -ho 'BPFREC_API [^(]*(' "$D"/usr/include/bpfrec/*.h | grep -o 'bpfrec_[a-z_]*($' | tr -d '(' | sort -u \
	>"$T/declared.txt"
[ "$(wc -l <"$T/declared.txt")" -gt 30 ] || fail "too few BPFREC_API declarations found"
diff "$T/declared.txt" "$T/exports.txt" >&2 || fail "exports differ from the BPFREC_API declarations"
echo "exports: $(wc -l <"$T/exports.txt") symbols, all bpfrec_*"

# The headers as an outside compiler sees them: no internal header, C99 and C++.
assert_no_grep '#include "' "$D/usr/include/bpfrec/record.h" "internal include in a public header"
for h in bpfrec common record pprof perfdata sched; do
	echo "#include <bpfrec/$h.h>" >"$T/h.c"
	cc -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only -I"$D/usr/include" "$T/h.c" ||
		fail "bpfrec/$h.h is not clean C99"
	g++ -std=c++11 -Wall -Wextra -Werror -fsyntax-only -x c++ -I"$D/usr/include" "$T/h.c" ||
		fail "bpfrec/$h.h does not compile as C++"
done

# The examples, built as a user builds them, against the installed copy only.
export PKG_CONFIG_PATH=$D/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
flags=$(pkg-config --cflags --libs bpfrec) || fail "pkg-config does not know bpfrec"
echo "pkg-config: $flags"
for e in self_profile record_child; do
	cc -O2 -g -Wall -Wextra -Werror -o "$T/$e" "$TOP/Documentation/examples/$e.c" $flags \
		-lpthread || fail "example $e does not build against the installed library"
done
export LD_LIBRARY_PATH=$D/usr/lib
ldd "$T/record_child" >"$T/ldd.txt"
assert_grep "libbpfrec\.so\.0 => $D/usr/lib/libbpfrec\.so\.0" "$T/ldd.txt" \
	"the example does not use the installed library"
mkdir "$T/run" && cd "$T/run"	# anywhere: the BPF programs are inside the library

# (a) A program profiling itself into memory, then to pprof.
./../self_profile 2 self.pb.gz self.data >self.out 2>self.err ||
	{ cat self.out self.err >&2; fail "self_profile failed"; }
cat self.out
[ ! -s self.err ] || { cat self.err >&2; fail "self_profile wrote to stderr"; }
samples=$(sed -n 's/^self_profile: \([0-9]*\) samples (0 lost).*/\1/p' self.out)
[ -n "$samples" ] || fail "self_profile lost samples or did not say how many"
[ "$(head -c 8 self.data)" = PERFILE2 ] || fail "self.data is not perf.data"
run_clean self.script perf script -i - -G -F tid <self.data
[ "$(wc -l <self.script)" = "$samples" ] ||
	fail "perf script sees $(wc -l <self.script) samples, self_profile wrote $samples"
run_clean self.report perf report -i - --stdio --no-children -g none --sort sym <self.data
share=$(self_share self.report busy_loop)
echo "busy_loop: perf report $share% ($(user_share self.report busy_loop)% of user samples)"
assert_range "busy_loop among user samples in perf report" "$(user_share self.report busy_loop)" 50 100
run_clean self.top go tool pprof -top -nodefraction=0 self.pb.gz
assert_grep "^Duration: .*Total samples" self.top
awk '$2 ~ /%$/ && $1 != "flat" { print $6; exit }' self.top >self.first
[ "$(cat self.first)" = busy_loop ] || { cat self.top >&2; fail "busy_loop is not on top in pprof"; }
# The profile counts the same samples as the recording perf just read: the
# same share of all of them (the kernel's part is the machine's, on an
# emulated CPU two thirds of the samples).
pshare=$(flat_share self.top busy_loop)
echo "busy_loop: go tool pprof $pshare% of all samples"
assert_range "busy_loop's share in pprof against perf report's ($share %)" "$pshare" \
	"$(awk -v s="$share" 'BEGIN { print s - 1 }')" "$(awk -v s="$share" 'BEGIN { print s + 1 }')"

# (b) A child recorded into an fd (a regular file: file format).
./../record_child child.data "$FIX/rec_work" 0.5 >child.out 2>child.err ||
	{ cat child.out child.err >&2; fail "record_child failed"; }
cat child.out
samples=$(sed -n 's/^record_child: \([0-9]*\) samples (0 lost, .*/\1/p' child.out)
[ -n "$samples" ] || fail "record_child lost samples or did not say how many"
assert_samples "record_child samples" "$samples" "$(fixture_cpu child.err rec_work)" 4000
run_clean child.script perf script -i child.data -G -F tid
[ "$(wc -l <child.script)" = "$samples" ] || fail "perf script disagrees on the sample count"
run_clean child.report perf report -i child.data --stdio --no-children -g none --sort sym
assert_leaf "leaf_a among the leaves in perf report" child.report leaf_a 52 68
assert_leaf "leaf_b among the leaves in perf report" child.report leaf_b 24 36
"$BUILD/bpfrec" pprof -q -i child.data -o child.pb.gz || fail "bpfrec pprof on child.data failed"
run_clean child.top go tool pprof -top -nodefraction=0 child.pb.gz
[ "$(awk '$2 ~ /%$/ && $1 != "flat" { print $6; exit }' child.top)" = leaf_a ] ||
	{ cat child.top >&2; fail "leaf_a is not on top in pprof"; }
# The child's exit code comes through the stats.
rc=0
./../record_child exit.data sh -c 'exit 3' >/dev/null 2>&1 || rc=$?
[ "$rc" = 3 ] || fail "record_child returned $rc for a command that exited 3"

cd "$T"
make -s -C "$TOP" BUILD="$BUILD" uninstall DESTDIR="$D" PREFIX=/usr >/dev/null ||
	fail "make uninstall failed"
left=$(find "$D" -type f -o -type l | wc -l)
[ "$left" = 0 ] || { find "$D" -type f -o -type l >&2; fail "make uninstall left $left files"; }
echo ok
