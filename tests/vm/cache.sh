# Sourced by the VM scripts: the cache directory and its lock.
# VM_CACHE: $BPFREC_VM_CACHE, by default /var/tmp/bpfrec-vm (kept across
# sessions, unlike /tmp). It must belong to us or to root and not be writable
# by others: it holds kernels we boot and run as root.
# vm_lock: hold the cache's lock until the calling script exits, so runs in
# parallel fetch and unpack one kernel once.
VM_CACHE=${BPFREC_VM_CACHE:-/var/tmp/bpfrec-vm}
# depmod and modprobe are in sbin, not on a user's PATH on Debian.
PATH=$PATH:/usr/sbin:/sbin
mkdir -p "$VM_CACHE/kernels" || { echo "vm: cannot create the cache $VM_CACHE" >&2; exit 1; }
if [ -n "$(find "$VM_CACHE" -maxdepth 0 \( -perm -0002 -o \! \( -user "$(id -u)" -o -user 0 \) \))" ]; then
	echo "vm: the cache $VM_CACHE is writable by others or not ours; remove it or set BPFREC_VM_CACHE" >&2
	exit 1
fi
vm_lock() {
	exec 9>"$VM_CACHE/lock"
	flock 9
}
