#!/bin/sh
# /init of the small initramfs that vmtest/debian-kernel.sh builds for
# kernels whose virtio and 9p drivers are modules (Debian's 6.1). Runs under
# busybox: loads the modules listed in /modules.list (dependencies first),
# mounts the host's / over 9p read-only and hands over to vmtest/init.sh,
# whose path arrives as xdplab_init= on the kernel command line.
export PATH=/bin

fail() {
	echo "vmtest-initramfs: error: $*"
	printf '\nXDPLAB-VMTEST-EXIT=125\n'
	poweroff -f
	sleep 10
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

while read -r m; do
	insmod "/lib/modules/$m" || fail "insmod $m failed"
done </modules.list

# The 9p device appears when virtio_pci has probed; give it a moment.
i=0
until mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=512000,cache=loose root /newroot 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 50 ] || fail "cannot mount the 9p root (mount_tag root)"
	sleep 0.1
done

[ -n "$xdplab_init" ] || fail "no xdplab_init= on the kernel command line"
umount /proc /sys /dev
exec switch_root /newroot "$xdplab_init"
