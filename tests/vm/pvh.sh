#!/bin/sh
# Extract the uncompressed kernel (an ELF) from a bzImage, for qemu to boot
# it directly through its PVH entry point: under TCG, decompressing a
# Debian kernel (xz) takes longer than the rest of the boot.
#   tests/vm/pvh.sh VMLINUZ OUT
# Exit 1, writing nothing, when the kernel has no PVH entry (then boot the
# bzImage). What the kernel's scripts/extract-vmlinux does: find the first
# compressed stream that decompresses to an ELF.
set -eu
in=${1:?usage: pvh.sh VMLINUZ OUT} out=${2:?usage: pvh.sh VMLINUZ OUT}
try() { # MAGIC(grep -P) DECOMPRESSOR...
	magic=$1; shift
	for off in $(LC_ALL=C grep -obUaP "$magic" "$in" | cut -d: -f1 | head -n 3); do
		tail -c +$((off + 1)) "$in" | "$@" >"$out.tmp" 2>/dev/null || true
		[ "$(head -c 4 "$out.tmp" | od -An -c | tr -d ' ')" = 177ELF ] && return 0
	done
	return 1
}
try '\xfd7zXZ\x00' xz -dc --single-stream || try '\x28\xb5\x2f\xfd' zstd -qdc ||
	try '\x1f\x8b\x08' gzip -dc || { rm -f "$out.tmp"; exit 1; }
# XEN_ELFNOTE_PHYS32_ENTRY (18): the PVH entry point qemu looks for.
if ! readelf -n "$out.tmp" | grep -q 'Xen.*(0x00000012)'; then
	rm -f "$out.tmp"
	exit 1
fi
mv "$out.tmp" "$out"
