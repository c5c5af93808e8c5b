#!/bin/bash
# The guest's init (PID 1). The root file system is the host's / over 9p,
# read-only; this script makes the writable places a test needs, runs the
# command that vmtest/boot.sh left in its run directory, reports the exit
# status on the console as "XDPLAB-VMTEST-EXIT=<n>" and powers off.
#
# Its settings arrive as the kernel command line's xdplab_run=<dir> (the
# kernel hands unknown key=value parameters to init as environment); the
# directory holds guest.env, written by boot.sh.
set -Eeuo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin${XDPLAB_PATH_TAIL:+:$XDPLAB_PATH_TAIL}
export HOME=/tmp TERM=${TERM:-linux}

off() {
	sync
	/bin/busybox poweroff -f 2>/dev/null
	echo o >/proc/sysrq-trigger 2>/dev/null
	sleep 10
}

report() {
	printf '\nXDPLAB-VMTEST-EXIT=%d\n' "$1"
	off
}

# Anything that goes wrong in here must still end with a report and a power
# off: PID 1 exiting would only panic the kernel.
trap 'echo "vmtest-init: error: line $LINENO: $BASH_COMMAND failed" >&2; report 125' ERR

# Under TCG every exec of a dynamically linked program costs a lot; the
# static busybox does the mounting.
bb=/bin/busybox
# The root is the host's /, so its /proc, /sys, /dev, ... directories hold
# the host's files as seen over 9p: mount over each, whatever they look like.
$bb mount -t proc proc /proc
mnt() { # mnt TYPE DIR [OPTIONS]
	[ -d "$2" ] || $bb mkdir -p "$2" 2>/dev/null || true
	local _ dir rest
	while read -r _ _ _ _ dir rest; do
		[ "$dir" != "$2" ] || return 0
	done </proc/self/mountinfo
	$bb mount -t "$1" -o "${3:-defaults}" "$1" "$2"
}

mnt sysfs /sys
mnt devtmpfs /dev
mnt devpts /dev/pts gid=5,mode=620,ptmxmode=666
mnt tmpfs /dev/shm mode=1777
mnt tmpfs /tmp mode=1777
mnt tmpfs /run mode=755
mnt tmpfs /var/tmp mode=1777
$bb mkdir -p /run/netns /run/lock /run/xdplab
mnt bpf /sys/fs/bpf mode=700
mnt debugfs /sys/kernel/debug
[ ! -d /sys/kernel/tracing ] || mnt tracefs /sys/kernel/tracing
[ ! -d /sys/fs/cgroup ] || $bb mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null || true
# Progress marks in the kernel log, with its timestamps, for slow boots.
mark() { echo "xdplab-init: $*" >/dev/kmsg 2>/dev/null || true; }
mark "file systems mounted"

: "${xdplab_run:?no xdplab_run= on the kernel command line}"
# A cache below /tmp, /run or /var/tmp is hidden by the mounts above; the
# host shares it as "cache" too.
if [ ! -r "$xdplab_run/guest.env" ] && [ -n "${xdplab_cache:-}" ]; then
	$bb mkdir -p "$xdplab_cache"
	$bb mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 \
		cache "$xdplab_cache"
fi
# shellcheck source=/dev/null
. "$xdplab_run/guest.env"

# Kernels whose drivers are modules (Debian's): modprobe from the unpacked
# package, for explicit loads and for the kernel's own request_module().
if [ -n "${XDPLAB_MODDIR:-}" ]; then
	printf '#!/bin/sh\nexec /sbin/modprobe -d %s "$@"\n' "$XDPLAB_MODDIR" >/run/xdplab/modprobe
	chmod +x /run/xdplab/modprobe
	echo /run/xdplab/modprobe >/proc/sys/kernel/modprobe
	for m in ${XDPLAB_MODULES:-}; do
		/run/xdplab/modprobe -q "$m" || echo "vmtest-init: module $m not loaded" >&2
	done
	mark "modules loaded"
fi

$bb hostname xdplab-vm
$bb ip link set lo up
# The GEM board (ARCH=arm64): the GEM whose MAC boot.sh gave to QEMU faces
# the host's tap. Bring it up, address it, wait (bounded) for the link, and
# tell the command which interface it is.
if [ -n "${XDPLAB_GEM_MAC:-}" ]; then
	for d in /sys/class/net/*; do
		[ "$(cat "$d/address" 2>/dev/null)" = "$XDPLAB_GEM_MAC" ] || continue
		export XDPLAB_GEM_IF=${d##*/}
	done
	if [ -n "${XDPLAB_GEM_IF:-}" ]; then
		# QEMU's GEM stops receiving for good once it finds its RX ring
		# full: it only looks again when RX is re-enabled, which macb
		# does on RXUBR for Zynq and at91 only. A TCG guest falls behind
		# a TCP window easily, so give it the largest ring.
		ethtool -G "$XDPLAB_GEM_IF" rx 8192 ||
			echo "vmtest-init: could not grow $XDPLAB_GEM_IF's RX ring" >&2
		$bb ip link set "$XDPLAB_GEM_IF" up
		$bb ip addr add "$XDPLAB_GEM_ADDR" dev "$XDPLAB_GEM_IF"
		for _ in $($bb seq 100); do
			[ "$(cat "/sys/class/net/$XDPLAB_GEM_IF/carrier" 2>/dev/null)" != 1 ] || break
			$bb sleep 0.1
		done
		mark "GEM $XDPLAB_GEM_IF up, carrier $(cat "/sys/class/net/$XDPLAB_GEM_IF/carrier" 2>/dev/null)"
	else
		echo "vmtest-init: no interface with the GEM's MAC $XDPLAB_GEM_MAC" >&2
	fi
fi
ulimit -l unlimited 2>/dev/null || true
# A checkout below one of the tmpfs mounts above (CI clones into /tmp, say)
# is hidden now; the host shares the working directory as "work" too.
if [ ! -d "$XDPLAB_CWD" ]; then
	$bb mkdir -p "$XDPLAB_CWD"
	$bb mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 \
		work "$XDPLAB_CWD"
fi
cd "$XDPLAB_CWD"

read -r _ mem _ </proc/meminfo
read -r release </proc/sys/kernel/osrelease
echo "XDPLAB-VMTEST-START kernel $release ($($bb nproc) CPUs, $((mem / 1024)) MiB)"
trap - ERR
set +e
if [ "${XDPLAB_INTERACTIVE:-0}" = 1 ]; then
	tty=/dev/$(awk 'NR == 1 {print $1}' /proc/consoles)
	stty -F "$tty" rows "${XDPLAB_ROWS:-24}" cols "${XDPLAB_COLS:-80}" sane 2>/dev/null
	echo "vmtest: guest shell in $XDPLAB_CWD; 'exit' or Ctrl-D powers off (QEMU: Ctrl-A x)"
	setsid --ctty --wait bash -i <"$tty" >"$tty" 2>&1
	rc=$?
else
	bash -c "$XDPLAB_CMD" </dev/null
	rc=$?
fi

# kmemleak (DEBUG=1) reports only objects at least 5 s old and only when it
# scans: scan twice, 6 s apart, and show what it found. The kernel logs
# "N new suspected memory leaks", which fails the run on the host.
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo "vmtest-init: kmemleak scan"
	echo scan >/sys/kernel/debug/kmemleak
	sleep 6
	echo scan >/sys/kernel/debug/kmemleak
	head -c 20000 /sys/kernel/debug/kmemleak
fi
mark "command exited $rc"
report "$rc"
