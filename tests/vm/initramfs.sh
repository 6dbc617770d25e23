#!/bin/sh
# Build the VM's initramfs (an uncompressed newc cpio) for the kernel
# unpacked in KDIR (tests/vm/kernel.sh): a static busybox, tests/vm/init and
# tests/vm/stage2, and the modules a Debian kernel needs to mount its root
# (the host's / over virtio 9p, an overlay on it), decompressed and listed in
# load order in /modules/order.
#   tests/vm/initramfs.sh KDIR OUT
# Built on every run (well under a second): nothing in it can go stale.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
kdir=${1:?usage: initramfs.sh KDIR OUT} out=${2:?usage: initramfs.sh KDIR OUT}
kver=$(basename "$kdir")
die() { echo "vm: $*" >&2; exit 1; }
PATH=$PATH:/usr/sbin:/sbin

bb=$(command -v busybox) || die "busybox missing: install busybox-static (sh tools/deps.sh test)"
# A dynamic busybox would need the host's libc inside the initramfs.
readelf -l "$bb" 2>/dev/null | grep -q 'Requesting program interpreter' &&
	die "$bb is not static: install busybox-static (sh tools/deps.sh test)"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/modules"
cp "$bb" "$root/bin/busybox"
cp "$here/init" "$root/init"
cp "$here/stage2" "$root/stage2"
chmod 755 "$root/init" "$root/stage2"

# What is modular among these, with its dependencies first (modprobe reads
# modules.dep). Which exist differs: netfs is new in 5.17-ish, fscache gone
# from 6.12, virtio_pci built in on 6.12; a missing one is simply not needed.
# virtio_rng: the guest's entropy, so nothing waits for it at boot.
for m in virtio_pci virtio_rng netfs fscache 9pnet 9pnet_virtio 9p overlay; do
	modprobe -d "$kdir" -S "$kver" --show-depends "$m" 2>/dev/null || true
done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' | while read -r ko; do
	name=$(basename "$ko")
	case $ko in
	*.ko) cp "$ko" "$root/modules/$name" ;;
	*.ko.xz) xz -dc "$ko" >"$root/modules/${name%.xz}" 2>/dev/null ||
		"$bb" unxz -c "$ko" >"$root/modules/${name%.xz}" ;;
	*.ko.zst) zstd -qdc "$ko" >"$root/modules/${name%.zst}" ;;
	*.ko.gz) gzip -dc "$ko" >"$root/modules/${name%.gz}" ;;
	*) die "unknown module file $ko" ;;
	esac
	echo "${name%.ko*}.ko" >>"$root/modules/order"
done
touch "$root/modules/order"
grep -qx '9p.ko' "$root/modules/order" || grep -q '/9p\.ko' "$kdir/lib/modules/$kver/modules.builtin" ||
	die "kernel $kver has no 9p file system: it cannot mount the host's root"

(cd "$root" && find . | cpio -o -H newc --quiet) >"$out"
