#!/bin/sh
# The command line (tools/cli/) is a user of libbpfrec's public API only:
# it may include system headers, <bpfrec/*.h> and its own tools/cli/ headers,
# never a header of the library's modules (perfdata/, recorder/, symbolize/,
# tools/pprof/, tools/lib/, bpf/), however spelled (<bpf/libbpf.h> is
# libbpf's own).
#   tests/cli-headers.sh [DIR]   (default: tools/cli of this tree)
# Prints each offending line as FILE:LINE: TEXT and exits 1 when there is one.
dir=${1:-$(dirname "$0")/../tools/cli}
[ -d "$dir" ] || { echo "cli-headers: no directory $dir" >&2; exit 2; }
bad=$(grep -nE '^[[:space:]]*#[[:space:]]*include' "$dir"/*.c "$dir"/*.h |
	grep -vE '#[[:space:]]*include[[:space:]]*("tools/cli/[a-z_]+\.h"|<bpfrec/[a-z_]+\.h>)' |
	grep -E '#[[:space:]]*include[[:space:]]*("|<(perfdata|recorder|symbolize|tools|gen)/|<[a-z_]+\.skel\.h>)')
if [ -n "$bad" ]; then
	echo "$bad"
	echo "cli-headers: tools/cli includes headers other than <bpfrec/*.h> and its own:" \
	     "add what it needs to the public API" >&2
	exit 1
fi
exit 0
