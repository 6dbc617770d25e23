#!/bin/sh
# Install the Debian packages bpfrec needs to build and test. Idempotent:
# does nothing (and needs no network) when everything is present.
# Usage: tools/deps.sh [build|test|bench]   (test adds the readers the tests
# use; bench adds the allocation profilers `make bench` compares against)
set -eu

mode=${1:-build}
build_pkgs="make gcc clang llvm bpftool libbpf-dev libelf-dev libdw-dev zlib1g-dev
libtraceevent-dev libzstd-dev libcurl4-openssl-dev pkg-config"
# The VM runner (tests/vm/run.sh) boots Debian's kernels: qemu, a static
# busybox for its initramfs, kmod's modprobe/depmod on the unpacked modules,
# cpio, xz for compressed modules and kernels.
vm_pkgs="qemu-system-x86 busybox-static kmod cpio xz-utils"

test_pkgs="libcriterion-dev linux-perf golang-go hotspot binutils dwz libc6-dbg libsqlite3-0 python3.11
libcap2-bin bzip2 libclang-rt-14-dev bsdutils libjemalloc2 chromium python3-websocket $vm_pkgs"

# heaptrack and memleak-bpfcc (bpfcc-tools) for scenario 8; memleak compiles
# against kernel headers, and a kernel without its own headers package gets
# Debian's (tools/bench/alloc.sh).
bench_pkgs="heaptrack bpfcc-tools linux-headers-amd64"

case $mode in
build) pkgs=$build_pkgs ;;
test) pkgs="$build_pkgs $test_pkgs" ;;
bench) pkgs="$build_pkgs $test_pkgs $bench_pkgs" ;;
*) echo "deps: unknown mode '$mode'; use build, test or bench" >&2; exit 2 ;;
esac

missing=""
for p in $pkgs; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages:$missing; run as root or: apt-get install -y$missing" >&2
	exit 1
fi
echo "deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null
