#!/usr/bin/env bash
# The arm64 guest's userland, made from Debian 12 arm64 packages without
# installing them: `apt-get download` + `dpkg -x` into a directory in the
# cache. The same directory is the sysroot the project is cross-built
# against (the -dev packages below) and, packed as a cpio archive, the
# guest's initramfs. Prints the directory; rootfs.cpio is inside it.
#
#   vmtest/rootfs.sh [arm64]
#
# Needs the arm64 package lists (dpkg --add-architecture arm64 and an
# apt-get update): `scripts/deps.sh vm-arm64` does that.
#
# Why an initramfs and not a Debian root over 9p: the board's virtio-mmio
# 9p works (the checkout is shared that way), but a read-only shared root
# cannot take the mount point of a checkout that lives anywhere on the host,
# and the userland needed is 60 MB: unpacked into RAM it boots in seconds
# and no guest can change the cached copy.
set -euo pipefail
. "$(dirname "$0")/common.sh"

arch=$(norm_arch "${1:-arm64}")
[ "$arch" = arm64 ] || die "vmtest/rootfs.sh: only arm64 has a packaged userland here"
darch=arm64

# What the guest runs (shell, busybox for the small tools, ip, ping,
# ethtool, iperf3), the libraries they and the cross-built xdplab need, and
# the -dev packages to link against. Checked below: every NEEDED library of
# the programs in $must must be in the tree.
pkgs=(bash libtinfo6 busybox-static libc6 libgcc-s1
	iproute2 libbpf1 libelf1 zlib1g libzstd1 libmnl0 libcap2 libbsd0 libmd0
	libdb5.3 libxtables12 libselinux1 libpcre2-8-0 libatm1
	iputils-ping libidn2-0 libunistring2
	iperf3 libiperf0 libssl3 libsctp1
	ethtool
	libbpf-dev libelf-dev zlib1g-dev)
must=(bin/bash bin/busybox bin/ip bin/ping sbin/ethtool usr/bin/iperf3)

cache=$(cache_dir)
key=$( (printf '%s\n' "${pkgs[@]}"; cat "$0") | hash_stream | cut -c1-12)
dir=$cache/$darch/rootfs-$key
if [ -f "$dir/rootfs.cpio" ]; then
	echo "$dir"
	exit 0
fi

make_rootfs() {
	[ ! -f "$dir/rootfs.cpio" ] || return 0
	local tmp=$dir.tmp t0=$SECONDS p n missing=()
	command -v "$(cross_compile arm64)readelf" >/dev/null ||
		die "no $(cross_compile arm64)readelf" "run 'scripts/deps.sh vm-arm64'"
	dpkg --print-foreign-architectures | grep -qx "$darch" ||
		die "dpkg does not know the $darch architecture" "run 'scripts/deps.sh vm-arm64' as root (adds it and updates the package lists)"
	rm -rf "$tmp"
	mkdir -p "$tmp/debs" "$tmp/root"
	log "downloading ${#pkgs[@]} Debian $darch packages into $tmp/debs"
	# apt's sandbox user cannot write into root's cache: download as root,
	# quietly (it says so on every file).
	(cd "$tmp/debs" && apt-get download -q=2 -o APT::Sandbox::User=root \
		"${pkgs[@]/%/:$darch}" >/dev/null) ||
		die "apt-get download of the $darch packages failed" \
			"run 'scripts/deps.sh vm-arm64' (arm64 package lists), check the network"
	for p in "$tmp"/debs/*.deb; do
		dpkg-deb -x "$p" "$tmp/root"
	done
	for p in "${must[@]}"; do
		[ -e "$tmp/root/$p" ] || missing+=("$p")
		while read -r n; do
			[ -n "$(find "$tmp/root/lib" "$tmp/root/usr/lib" -name "$n" -print -quit)" ] ||
				missing+=("$n (for $p)")
		done < <("$(cross_compile arm64)readelf" -d "$tmp/root/$p" 2>/dev/null |
			sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')
	done
	[ ${#missing[@]} -eq 0 ] || die "the $darch userland lacks: ${missing[*]}" \
		"add the package holding it to pkgs in vmtest/rootfs.sh"
	# Debian 12 is merged-/usr but dpkg -x does not make the links.
	for p in bin sbin lib; do
		if [ -d "$tmp/root/$p" ] && [ ! -L "$tmp/root/$p" ]; then
			mkdir -p "$tmp/root/usr/$p"
			cp -a "$tmp/root/$p/." "$tmp/root/usr/$p/"
			rm -rf "${tmp:?}/root/$p"
		fi
		ln -sfn "usr/$p" "$tmp/root/$p"
	done
	# /bin/sh (dash on Debian, not included): bash. Not busybox: its ash
	# (static, "standalone shell") runs its own ip and ping applets
	# before anything in PATH.
	ln -sfn bash "$tmp/root/usr/bin/sh"
	# Absolute links (libz.so -> /lib/...) would point into the host when
	# linking against this tree: make them relative.
	while IFS= read -r p; do
		n=$(readlink "$p")
		ln -sfn "$(realpath -m --relative-to="$(dirname "$p")" "$tmp/root$n")" "$p"
	done < <(find "$tmp/root/usr" -type l -lname '/*')
	mkdir -p "$tmp/root"/{proc,sys,dev,tmp,run,var/tmp,root,etc}
	echo "root:x:0:0:root:/root:/bin/bash" >"$tmp/root/etc/passwd"
	echo "root:x:0:" >"$tmp/root/etc/group"
	# /init: busybox stands in for coreutils, grep, awk, ..., from a
	# directory of its own at the end of PATH (init.sh appends
	# XDPLAB_PATH_TAIL), so Debian's ip and ping win over its applets; then
	# vmtest/init.sh, which boot.sh adds to each run's initramfs.
	printf '%s\n' '#!/bin/busybox sh' '/bin/busybox mkdir -p /busybox' \
		'/bin/busybox --install -s /busybox' 'export XDPLAB_PATH_TAIL=/busybox' \
		'exec /xdplab/init.sh' >"$tmp/root/init"
	chmod 755 "$tmp/root/init"
	# The guest's cpio: no documentation, no headers, no static libraries.
	(cd "$tmp/root" && find . \( -path ./usr/share/doc -o -path ./usr/share/man -o \
		-path ./usr/share/locale -o -path ./usr/include \) -prune -o ! -name '*.a' -print |
		cpio -o -H newc --quiet) >"$tmp/rootfs.cpio"
	rm -rf "$tmp/debs"
	rm -rf "$dir"
	mv "$tmp" "$dir"
	# Older userlands (another package list) are not used any more.
	find "$cache/$darch" -mindepth 1 -maxdepth 1 -name 'rootfs-*' ! -name "rootfs-$key" -exec rm -rf {} +
	log "$darch userland ready in $((SECONDS - t0)) s: $dir ($(du -sh "$dir/rootfs.cpio" | cut -f1) cpio)"
}
mkdir -p "$cache/$darch"
with_lock "$cache/$darch/rootfs.lock" make_rootfs
echo "$dir"
