#!/bin/bash
# The bpfrec command (tools/cli/) is a user of libbpfrec's public API and of
# nothing else: its sources include only <bpfrec/*.h> and their own headers
# (tests/cli-headers.sh), and its objects link against the shared library,
# which exports the public API only.
. "$TOP/tests/integration/lib.sh"
need_tool cc gcc

sh "$TOP/tests/cli-headers.sh" >"$T/check.txt" 2>&1 ||
	{ cat "$T/check.txt" >&2; fail "tools/cli includes a header of the library's modules"; }

# The check itself can fail: a copy of tools/cli with one internal include
# (quoted, then as a system header) is refused, naming the file and line.
for inc in '"perfdata/reader.h"' '<recorder/cpulist.h>' '"symbolize/kallsyms.h"'; do
	rm -rf "$T/cli" && cp -r "$TOP/tools/cli" "$T/cli"
	sed -i "0,/^#include/s||#include $inc\n#include|" "$T/cli/dump.c"
	if sh "$TOP/tests/cli-headers.sh" "$T/cli" >"$T/bad.txt" 2>&1; then
		fail "cli-headers.sh accepted #include $inc"
	fi
	assert_grep "dump\.c:[0-9]+:#include $inc" "$T/bad.txt" "cli-headers.sh did not name the line"
done

# Linked against libbpfrec.so, whose hidden symbols are out of reach, the
# command's objects resolve: they call nothing but the exported API (and
# libbpf's print hook, which the library leaves to its users).
objs=$(ls "$BUILD"/obj/tools/cli/*.o)
[ "$(echo "$objs" | wc -l)" = "$(ls "$TOP"/tools/cli/*.c | wc -l)" ] ||
	fail "not every tools/cli object is in $BUILD/obj: run make"
cc -o "$T/bpfrec-shared" $objs -L"$BUILD" -lbpfrec -lbpf 2>"$T/link.txt" ||
	{ cat "$T/link.txt" >&2; fail "the CLI needs symbols libbpfrec.so does not export"; }
LD_LIBRARY_PATH=$BUILD "$T/bpfrec-shared" dump --help >"$T/help.txt" ||
	fail "the CLI linked against libbpfrec.so does not run"
assert_grep '^usage: bpfrec dump' "$T/help.txt"
echo ok
