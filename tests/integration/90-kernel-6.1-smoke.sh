#!/usr/bin/env bash
# The recorder on Debian 12's own kernel (6.1), not only on this machine's:
# tests/vm/smoke.sh (one short recording of each mode, read back with perf,
# bpfrec sched and go tool pprof) inside a VM booted on the newest Debian 6.1
# kernel (tests/vm/run.sh; under TCG where there is no usable KVM, so the set
# is small). The BPF verifier of an older kernel rejects what a newer one
# accepts: this is where that shows first. `make test-kernels` runs the
# whole suite on 6.1, 6.12 and 5.10.
source "$(dirname "$0")/lib.sh"
# make test-kernels runs the whole suite in a VM: no VM inside it.
[ -z "${BPFREC_VM_KVER:-}" ] || skip "inside a VM already ($BPFREC_VM_KVER)"
need_root
need_tool qemu-system-x86_64 qemu-system-x86

rc=0
"$TOP/tests/vm/run.sh" --timeout "${VM_SMOKE_TIMEOUT:-1500}" 6.1 -- \
	bash "$TOP/tests/vm/smoke.sh" >"$T/vm.log" 2>&1 || rc=$?
cat "$T/vm.log"
case $rc in
0) grep -q '^smoke on 6\.1\..*: [1-9][0-9]* passed, 0 failed$' "$T/vm.log" ||
	fail "the smoke set did not report its checks from a 6.1 kernel" ;;
124|125) fail "the 6.1 VM did not run the smoke set (tests/vm/run.sh exit $rc)" ;;
*) fail "the smoke set failed on 6.1" ;;
esac
