#!/usr/bin/env bash
# Install, with apt-get, every Debian package xdplab uses. Idempotent: a
# group whose packages are all present costs one dpkg query and nothing else.
#
#   scripts/deps.sh [base|vm|vm-arm64|vm-riscv64|vm-arm|kselftest|bench|all]...  (default: base)
#
# base     - build the BPF objects, loaders and selftests; run the host tests
# vm       - build Linux 6.12 from Debian's source and boot it under QEMU
# vm-arm64 - the emulated GEM board (make vmtest ARCH=arm64): vm, plus the
#            arm64 package lists (dpkg --add-architecture arm64), from which
#            vmtest/rootfs.sh downloads the guest's userland and sysroot
# vm-riscv64 - the sifive_u GEM board of make vmtest-rbof: vm, the build
#            dependencies of the patched QEMU (as vm-arm64), riscv64's libc
#            for the guest's static test program, and OpenSBI, the firmware
#            QEMU boots first
# vm-arm   - the 32-bit Zynq-7000 GEM of make vmtest-zynq: vm, the armhf
#            cross compiler and its libc (the kernel and the guest's static
#            /init) and Debian's qemu-system-arm (xilinx-zynq-a9), as it is
# kselftest - make kselftest: vm, plus what the kernel's XDP/net selftests
#            call in the guest (the host's / is its root): iptables and nft
#            (udpgro*.sh DNAT, xdp_synproxy, xdp_flowtable), tcpdump and
#            arping (test_xdp_redirect_multi.sh); on the GEM board, socat
#            (the host's xdp_features tester service, vmtest/gem-tester.sh)
# bench - plots for the benchmarks
set -euo pipefail

base=(make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config iputils-ping
      libxdp-dev xdp-tools iproute2 iperf3 ethtool valgrind procps
      python3 kmod)
vm=(linux-source-6.12 qemu-system-x86 qemu-system-arm bc bison flex
    libssl-dev libelf-dev dwarves cpio xz-utils rsync busybox-static
    gcc-aarch64-linux-gnu gcc-riscv64-linux-gnu git kmod)
# libc6-dev-arm64-cross: the cross compiler's own libc headers. apt here
# installs no recommends, so gcc-aarch64-linux-gnu comes without them and
# `make arm64` stops at the first #include <errno.h> (bits/wordsize.h).
# The rest builds the board's patched qemu-system-aarch64 from Debian's
# source (vmtest/qemu-gem.sh): dpkg-source, meson/ninja and the libraries
# of a TCG-only build with FDT, virtio-9p and plugins. socat serves the
# board's control service (vmtest/gem-control.sh: HRESP, link changes over
# QMP); device-tree-compiler's fdtput gives GEM0 a PHY (VMTEST_GEM_PHY=1).
vm_arm64=(gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu libc6-dev-arm64-cross
          qemu-system-arm cpio
          dpkg-dev patch meson ninja-build libglib2.0-dev libpixman-1-dev libfdt-dev
          libcap-ng-dev libattr1-dev
          socat device-tree-compiler)
# Debian's qemu-system-misc is the unpatched qemu-system-riscv64
# (VMTEST_GEM_QEMU=system); qemu-system-arm brings the version the patched
# build is made from.
vm_riscv64=(gcc-riscv64-linux-gnu libc6-dev-riscv64-cross opensbi qemu-system-misc
            qemu-system-arm dpkg-dev patch meson ninja-build libglib2.0-dev libpixman-1-dev
            libfdt-dev libcap-ng-dev libattr1-dev)
# libc6-dev-armhf-cross: as for arm64, apt installs no recommends here, and
# the static /init (vmtest/gem-zynq-init.c) needs the cross libc.
vm_arm=(gcc-arm-linux-gnueabihf binutils-arm-linux-gnueabihf libc6-dev-armhf-cross
        qemu-system-arm cpio)
kselftest=(iptables nftables tcpdump iputils-arping socat)
bench=(gnuplot-nox)

want=() foreign=()
[ $# -eq 0 ] && set -- base
for group in "$@"; do
	case "$group" in
	base)  want+=("${base[@]}") ;;
	vm)    want+=("${vm[@]}") ;;
	vm-arm64) want+=("${vm[@]}" "${vm_arm64[@]}"); foreign+=(arm64) ;;
	vm-riscv64) want+=("${vm[@]}" "${vm_riscv64[@]}") ;;
	vm-arm) want+=("${vm[@]}" "${vm_arm[@]}") ;;
	kselftest) want+=("${vm[@]}" "${kselftest[@]}") ;;
	bench) want+=("${bench[@]}") ;;
	all)   want+=("${base[@]}" "${vm[@]}" "${vm_arm64[@]}" "${vm_riscv64[@]}" "${vm_arm[@]}" "${kselftest[@]}" "${bench[@]}"); foreign+=(arm64) ;;
	*) echo "deps: unknown group '$group' (base, vm, vm-arm64, vm-riscv64, vm-arm, kselftest, bench, all)" >&2; exit 2 ;;
	esac
done

# A foreign architecture (arm64 for the GEM board's userland) needs dpkg to
# know it and apt to have fetched its package lists once.
for a in ${foreign[@]+"${foreign[@]}"}; do
	dpkg --print-foreign-architectures | grep -qx "$a" &&
		compgen -G "/var/lib/apt/lists/*_binary-${a}_Packages*" >/dev/null && continue
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: dpkg has no $a package lists" >&2
		echo "deps: hint: run 'sudo $0 $*' (dpkg --add-architecture $a; apt-get update)" >&2
		exit 1
	fi
	echo "deps: adding the $a architecture and its package lists"
	dpkg --add-architecture "$a"
	apt-get update -qq
done

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages: ${missing[*]}" >&2
	echo "deps: hint: run 'sudo $0 $*' (apt-get needs root)" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Refresh the lists only when an install fails on a stale or absent list.
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
	{ apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
