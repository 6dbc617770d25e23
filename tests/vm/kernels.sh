#!/bin/sh
# `make test-kernels`: the integration suite (tests/run.sh integration BUILD,
# built on the host beforehand) inside a VM on each KERNEL in turn, its
# output as it runs, then one line per kernel:
#   6.1.0-56: 50 passed, 2 failed, 2 skipped
# (or what went wrong: the VM did not boot, the suite timed out), then what
# test 76 measured for --call-graph cfi on Debian's python3 there (root
# reach beside perf's, BPF time a run, bytes a sample; SHOW= to leave out).
#   tests/vm/kernels.sh BUILD KERNEL...
# Exit 1 if any kernel had a failure. Each suite takes about an hour under
# TCG on 2 cores (less with KVM): the timeout is $VM_TIMEOUT (default 5400 s)
# per kernel. Host load slows the guest unevenly, which skews time-based
# shares: run it on an otherwise idle machine.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: kernels.sh BUILD KERNEL...}" && pwd)
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
summary= bad=0
for k in "$@"; do
	kver=$("$top/tests/vm/run.sh" --kver "$k") || { bad=1; summary="$summary$k: cannot fetch the kernel
"; continue; }
	echo "== integration tests on $kver"
	(cd "$top" && "$top/tests/vm/run.sh" --timeout "${VM_TIMEOUT:-5400}" "$k" -- \
		env SHOW="${SHOW-76}" sh tests/run.sh integration "$build") 2>&1 | tee "$log"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		line="no result: $(grep '^vm: ' "$log" | head -n 1)"
		bad=1
	fi
	case $line in *" 0 failed"*) ;; *) bad=1 ;; esac
	summary="$summary${kver%-amd64}: $line
$(grep -E '^    python3: (cfi costs|bpfrec --call-graph cfi: root|perf record --call-graph dwarf: root)' "$log" | sed 's/^    /    /')
"
done
printf '%s' "$summary"
exit $bad
