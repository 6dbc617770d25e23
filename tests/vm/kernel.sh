#!/bin/sh
# Fetch a Debian kernel for the VM and print the directory it is unpacked in
# (DIR/boot/vmlinuz-KVER, DIR/lib/modules/KVER with depmod run, and where
# the kernel can boot so, DIR/boot/vmlinux-KVER: tests/vm/pvh.sh); the last
# component of DIR is KVER.
#   tests/vm/kernel.sh KERNEL
# KERNEL: a series, 6.1 | 6.12 | 5.10 (the newest linux-image-*-amd64-unsigned
# of it), or one exact kernel: its KVER (6.1.0-37-amd64, 6.12.30+deb12, with
# or without -amd64) or its package version (6.1.140-1).
# Nothing is installed on the machine: the package comes with `apt-get
# download`, through a private apt state (sources made by apt-sources.sh from
# the machine's own, private lists and cache) and is unpacked with dpkg-deb
# into the cache, $BPFREC_VM_CACHE (/var/tmp/bpfrec-vm). The lists are
# refreshed once a day; without network, what was cached is used.
# Exit 1 with one line on stderr when no such kernel can be had.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cache.sh"
k=${1:?usage: kernel.sh KERNEL}
die() { echo "vm: $*" >&2; exit 1; }

# Which Debian release carries which series. Bookworm has Debian 12's own
# 6.1 and the newer 6.12 (+deb12); bullseye (Debian 11) has 5.10.
case $k in
5.10|5.10.*) series=5.10 codename=bullseye ;;
6.1|6.1.*) series=6.1 codename=bookworm ;;
6.12|6.12.*) series=6.12 codename=bookworm ;;
*) die "kernel '$k': not one of Debian's 6.1, 6.12, 5.10 (a series, a KVER or a package version)" ;;
esac
re_series=$(echo "$series" | sed 's/\./\\./g')
# linux-image-6.1.0-56-amd64-unsigned, linux-image-6.12.117+deb12-amd64-unsigned
pkg_re="^linux-image-$re_series\.[0-9]+(-[0-9]+|\+deb[0-9]+)-amd64-unsigned\$"

# An exact KVER already unpacked needs no apt at all (works offline).
# A KVER is 6.1.0-56 or 6.12.117+deb12 (the ABI name), a package version
# 6.1.158-1 or 6.12.57-1~deb12u1.
kver=
if echo "$k" | grep -qE '^[0-9]+\.[0-9]+\.(0-[0-9]+|[0-9]+\+deb[0-9]+)(-amd64)?$'; then
	kver=${k%-amd64}-amd64
fi
if [ -n "$kver" ] && [ -f "$VM_CACHE/kernels/$kver/.ok" ]; then
	echo "$VM_CACHE/kernels/$kver"
	exit 0
fi

apt_dir=$VM_CACHE/apt/$codename
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
# Root's apt would download as _apt, which cannot write our private dirs.
# The package caches are kept (Docker images turn them off): without them
# every search parses the lists again, seconds each run.
set -- -o Dir::Etc::sourcelist="$apt_dir/sources.list" -o Dir::Etc::sourceparts=- \
	-o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache" \
	-o Dir::Cache::pkgcache=pkgcache.bin -o Dir::Cache::srcpkgcache=srcpkgcache.bin \
	-o APT::Sandbox::User="$(id -un)" -q
command -v apt-get >/dev/null || die "apt-get missing: the VM kernels come from Debian's archive"

vm_lock
# Refresh the lists when a day old; a failed refresh with lists at hand is
# only a warning (offline, the cached kernels still boot).
if [ -z "$(find "$apt_dir/lists/stamp" -mmin -1440 2>/dev/null)" ]; then
	sh "$here/apt-sources.sh" "$codename" > "$apt_dir/sources.list" || exit 1
	if apt-get "$@" update >"$apt_dir/update.log" 2>&1; then
		touch "$apt_dir/lists/stamp"
	elif ls "$apt_dir/lists/"*Packages* >/dev/null 2>&1; then
		echo "vm: apt-get update for $codename failed (see $apt_dir/update.log); using the old lists" >&2
	else
		die "apt-get update for $codename failed: $(grep -E '^(E|W):' "$apt_dir/update.log" | head -n 1)"
	fi
fi

pkgs=$(apt-cache "$@" search --names-only "$pkg_re" | cut -d' ' -f1 | sort -V)
[ -n "$pkgs" ] || die "no linux-image-$series*-amd64-unsigned package in Debian $codename"
if [ -n "$kver" ]; then
	pkg=linux-image-${kver%-amd64}-amd64-unsigned
	echo "$pkgs" | grep -qxF "$pkg" || die "package $pkg not found in Debian $codename"
elif [ "$k" = "$series" ]; then
	pkg=$(echo "$pkgs" | tail -n 1)
else	# a package version: the package whose candidate is that version
	pkg=
	for p in $pkgs; do
		[ "$(apt-cache "$@" show "$p" | sed -n 's/^Version: //p' | head -n 1)" = "$k" ] && pkg=$p
	done
	[ -n "$pkg" ] || die "no linux-image-$series*-amd64-unsigned package of version $k in Debian $codename"
fi
kver=${pkg#linux-image-}
kver=${kver%-unsigned}
dir=$VM_CACHE/kernels/$kver
if [ ! -f "$dir/.ok" ]; then
	echo "vm: fetching $pkg" >&2
	tmp=$(mktemp -d "$VM_CACHE/kernels/.new.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && apt-get "$@" download "$pkg" >download.log 2>&1) ||
		die "apt-get download $pkg failed: $(grep -E '^(E|W):' "$tmp/download.log" | head -n 1)"
	mkdir "$tmp/root"
	dpkg-deb -x "$tmp"/*.deb "$tmp/root"
	# A merged-/usr package (trixie on) has usr/lib/modules; depmod -b and
	# modprobe -d look for lib/modules.
	[ -d "$tmp/root/lib/modules" ] || ln -s usr/lib "$tmp/root/lib"
	[ -f "$tmp/root/boot/vmlinuz-$kver" ] || die "$pkg has no boot/vmlinuz-$kver"
	depmod -b "$tmp/root" "$kver"
	sh "$here/pvh.sh" "$tmp/root/boot/vmlinuz-$kver" "$tmp/root/boot/vmlinux-$kver" || true
	touch "$tmp/root/.ok"
	rm -rf "$dir"
	mv "$tmp/root" "$dir"
fi
echo "$dir"
