#!/usr/bin/env bash
# Run a command as root inside a VM booted on one of Debian's kernels, with
# this machine's files as the guest's root (the virtme-ng / libbpf "vmtest"
# approach).
#   tests/vm/run.sh [--mem 4G] [--cpus 2] [--timeout SECS] [--console FILE] KERNEL -- CMD [ARGS...]
#   tests/vm/run.sh --btf KERNEL OUT     that kernel's /sys/kernel/btf/vmlinux into OUT
#                                        (for make VMLINUX_BTF=OUT)
#   tests/vm/run.sh --kver KERNEL        fetch KERNEL, print its KVER, boot nothing
# KERNEL: 6.1 | 6.12 | 5.10 (the newest Debian package of the series) or one
# exact kernel (a KVER or a package version; tests/vm/kernel.sh). The kernel
# is fetched once into /var/tmp/bpfrec-vm ($BPFREC_VM_CACHE), never installed.
#
# The guest: the host's / read-only (9p) under a tmpfs overlay, so it can
# write anywhere but what it writes vanishes at power-off; its own /tmp,
# /run, /dev/shm (a checkout under the host's /tmp stays visible there).
# proc, sysfs, devtmpfs, devpts, debugfs, tracefs, bpffs and cgroup2 are
# mounted, lo is up, the kernel's modules are at /lib/modules/KVER.
# CMD runs in the caller's current directory with PATH, the locale and the
# variables in VM_PASS (below) or named in $BPFREC_VM_ENV, plus
# BPFREC_VM_KVER (the guest's uname -r: a test can tell it is in the VM).
# CMD's stdout and stderr come back on ours (a writable share, not the
# console: no kernel messages in them); files the host must read go to
# stdout or to a directory the caller reads after, never the guest's /tmp.
#
# Exit status: CMD's; 124 when --timeout (default 3600 s) ran out; 125 when
# the VM could not run it (one line on stderr, then the end of the console).
# KVM is used where it is real (VMX/SVM, /dev/kvm usable, not the PVM nested
# hypervisor, which cannot boot stock kernels), else TCG;
# BPFREC_VM_ACCEL=tcg|kvm forces one; BPFREC_VM_TCG=multi|single picks TCG's
# threading (multi: a host thread per vCPU). --console FILE keeps the guest's console
# (the kernel's messages, the init's steps with their uptime) in FILE.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# What the tests need from the caller's environment; the rest of it
# (HOME, SSH, terminal...) belongs to the host, not to the guest's root.
VM_PASS="PATH LANG LC_ALL LC_CTYPE TZ BUILD TOP CI ONLY CC CLANG CFLAGS FUZZ_TEST_TIME
VMLINUX_BTF GOFLAGS GOCACHE GOPATH"

mem=4G cpus=2 timeout_s=3600 mode=run console=
die() { echo "vm: $*" >&2; exit 125; }
usage() { { echo usage:; sed -n '5,8s/^#//p' "$0"; } >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--mem) mem=${2:?}; shift 2 ;;
	--cpus) cpus=${2:?}; shift 2 ;;
	--timeout) timeout_s=${2:?}; shift 2 ;;
	--console) console=${2:?}; shift 2 ;;
	--btf) mode=btf; shift ;;
	--kver) mode=kver; shift ;;
	-h|--help) usage ;;
	-*) echo "vm: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage
kernel=$1; shift

case $mode in
kver)
	kdir=$(sh "$here/kernel.sh" "$kernel") || exit 125
	basename "$kdir"
	exit 0 ;;
btf)
	[ $# = 1 ] || usage
	out=$1
	# Through stdout: the share carries it byte for byte.
	"$0" --mem "$mem" --cpus "$cpus" --timeout "$timeout_s" "$kernel" -- \
		cat /sys/kernel/btf/vmlinux >"$out.tmp" || { rc=$?; rm -f "$out.tmp"; exit $rc; }
	# BTF's magic, 0xeB9F, little-endian.
	[ "$(od -An -tx1 -N2 "$out.tmp" | tr -d ' ')" = 9feb ] ||
		{ rm -f "$out.tmp"; die "kernel $kernel: /sys/kernel/btf/vmlinux is not BTF"; }
	mv "$out.tmp" "$out"
	exit 0 ;;
esac
[ "${1:-}" = -- ] || usage
shift
[ $# -ge 1 ] || usage

qemu=$(command -v qemu-system-x86_64) ||
	die "qemu-system-x86_64 missing: install qemu-system-x86 (sh tools/deps.sh test)"
kdir=$(sh "$here/kernel.sh" "$kernel") || exit 125
kver=$(basename "$kdir")

# The run's directory: the control share (config, cmd in; out, err, status
# back) and the initramfs.
ctl=$(mktemp -d "${TMPDIR:-/tmp}/bpfrec-vm.XXXXXX")
qpid=
cleanup() {
	[ -z "$qpid" ] || kill "$qpid" 2>/dev/null || true
	[ -z "$console" ] || cp "$ctl/console" "$console" 2>/dev/null || true
	rm -rf "$ctl"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
sh "$here/initramfs.sh" "$kdir" "$ctl/initramfs.cpio" || exit 125

# sh single quotes: 'it'\''s'
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
{
	echo "VM_KVER=$(q "$kver")"
	echo "VM_MODDIR=$(q "$kdir/lib/modules/$kver")"
} >"$ctl/config"
# Directories under /tmp the command reaches by the caller's paths.
for d in "$PWD" "${TOP:-}" "${BUILD:-}"; do
	case $d in /tmp/?*) d=${d#/tmp/}; echo "/tmp/${d%%/*}" ;; esac
done | sort -u >"$ctl/keep"
{
	for v in $VM_PASS ${BPFREC_VM_ENV:-}; do
		[ -n "${!v+set}" ] && echo "export $v=$(q "${!v}")"
	done
	echo "cd $(q "$PWD") || exit 125"
	printf 'exec'
	for a in "$@"; do printf ' %s' "$(q "$a")"; done
	echo
} >"$ctl/cmd"
# One stream when the caller's stdout and stderr are one (a terminal,
# 2>&1): the guest keeps their order.
[ /proc/self/fd/1 -ef /proc/self/fd/2 ] && : >"$ctl/merge"
: >"$ctl/out"
: >"$ctl/err"

accel=${BPFREC_VM_ACCEL:-}
if [ -z "$accel" ]; then
	accel=tcg
	if [ -r /dev/kvm ] && [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo &&
	   [ ! -e /sys/module/kvm_pvm ]; then
		accel=kvm
	fi
fi
case $accel in
kvm) accel_args=(-enable-kvm -cpu host) ;;
tcg) accel_args=(-accel "tcg,thread=${BPFREC_VM_TCG:-multi}" -cpu max) ;;
*) die "BPFREC_VM_ACCEL=$accel: use tcg or kvm" ;;
esac

# The uncompressed kernel where there is one (tests/vm/pvh.sh): no
# decompression under emulation.
image=$kdir/boot/vmlinux-$kver
[ -f "$image" ] || image=$kdir/boot/vmlinuz-$kver
# quiet: the console (a file here) carries only what goes wrong;
# panic=-1 with -no-reboot: a panic ends qemu at once. tsc=reliable: under
# TCG the vCPUs' TSCs look unsynchronized to the boot check (they are one
# host clock), and the fallback, the HPET, makes every clock read a trap:
# no vDSO clock_gettime, slow timestamps in BPF.
# q35: its PCI interrupts need no ACPI link setup, seconds under TCG.
timeout -k 10 "$timeout_s" "$qemu" -M q35 -nodefaults -no-user-config -display none -no-reboot \
	"${accel_args[@]}" -m "$mem" -smp "$cpus" \
	-kernel "$image" -initrd "$ctl/initramfs.cpio" \
	-append "console=ttyS0 panic=-1 quiet loglevel=4 tsc=reliable" \
	-serial "file:$ctl/console" -monitor none \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs "local,path=$ctl,mount_tag=vmctl,security_model=none,multidevs=remap" \
	-device virtio-rng-pci \
	</dev/null >"$ctl/qemu.log" 2>&1 &
qpid=$!
# Stream the command's output while it runs; tail exits once qemu has and
# it has read everything.
tail -q -n +1 -f --pid=$qpid "$ctl/out" &
t1=$!
tail -q -n +1 -f --pid=$qpid "$ctl/err" >&2 &
t2=$!
rc=0
wait $qpid || rc=$?
qpid=
wait $t1 $t2 || true

if [ $rc = 124 ] || [ $rc = 137 ]; then
	echo "vm: timed out after ${timeout_s}s on $kver" >&2
	exit 124
fi
if [ ! -s "$ctl/status" ]; then
	echo "vm: the VM on $kver stopped before the command ended (qemu exit $rc); its console:" >&2
	# From just before the first sign of a kernel crash, else its end.
	n=$(grep -nE 'BUG:|Oops|Kernel panic|general protection|invalid opcode|int3:|Call Trace' \
		"$ctl/console" | head -n 1 | cut -d: -f1 || true)
	if [ -n "$n" ]; then
		sed -n "$((n > 10 ? n - 10 : 1)),$((n + 60))p" "$ctl/console"
	else
		tail -n 30 "$ctl/console"
	fi >&2
	[ ! -s "$ctl/qemu.log" ] || tail -n 5 "$ctl/qemu.log" >&2
	exit 125
fi
exit "$(cat "$ctl/status")"
